//! The conversion functions of `sis8300drv_threads` (`-A`), as the original wrote
//! them ([`original`]) and as they can be written ([`improved`]), with one
//! dispatcher ([`convert`]) over both.
//!
//! | `-A` | function | per sample |
//! |---|---|---|
//! | 0 | `func_readout` | (readout only) |
//! | 1 | `func_decsca` | `out[j] = raw[j·f + o] · F + O` (f32) |
//! | 2 | `func_dec` | `out[j] = raw[j·f + o]` (f32) |
//! | 3 | `func_sca` | `out[j] = raw[j] · F + O` (f32) |
//! | 4 | `func_no_decsca` | `out[j] = raw[j]` (f32) |
//! | 5 | `func_umn2double` | Q1.15 unsigned → f64 |
//! | 6 | `func_smn2double` | Q3.13 signed → f64 |
//! | 7 | `func_umn2float` | Q1.15 unsigned → f32 |
//! | 8 | `func_smn2float` | Q3.13 signed → f32 |
//! | 99 | all of the above in the original's order | |
//! | 100 | `func_writepatt` | fill the buffer with `i % 127` per byte, write it |

pub mod improved;
pub mod original;
pub mod qmn;
pub mod scale;
pub mod stream;

pub use qmn::{Q1_15_UNSIGNED, Q3_13_SIGNED, Qmn};
pub use scale::ScaleParams;

/// One of the original's functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Function {
    /// 0: readout only.
    Readout,
    /// 1: decimation and scaling.
    DecSca,
    /// 2: decimation.
    Dec,
    /// 3: scaling.
    Sca,
    /// 4: cast to float.
    NoDecSca,
    /// 5: Q1.15 unsigned to double.
    UMn2Double,
    /// 6: Q3.13 signed to double.
    SMn2Double,
    /// 7: Q1.15 unsigned to float.
    UMn2Float,
    /// 8: Q3.13 signed to float.
    SMn2Float,
    /// 100: write a pattern to the board.
    WritePattern,
}

impl Function {
    /// Every conversion (1–8), in `-A` order.
    pub const CONVERSIONS: [Function; 8] = [
        Function::DecSca,
        Function::Dec,
        Function::Sca,
        Function::NoDecSca,
        Function::UMn2Double,
        Function::SMn2Double,
        Function::UMn2Float,
        Function::SMn2Float,
    ];

    /// What `-A code` runs, in order (99: readout then every conversion in the
    /// original's order), or `None` for an unknown code.
    pub fn for_code(code: u32) -> Option<Vec<Function>> {
        use Function::*;
        Some(match code {
            0 => vec![Readout],
            1..=8 => vec![Readout, Self::CONVERSIONS[code as usize - 1]],
            99 => vec![
                Readout, DecSca, Dec, Sca, NoDecSca, SMn2Double, UMn2Double, SMn2Float, UMn2Float,
            ],
            100 => vec![WritePattern],
            _ => return None,
        })
    }

    /// The `-A` code.
    pub fn code(&self) -> u32 {
        match self {
            Function::Readout => 0,
            Function::DecSca => 1,
            Function::Dec => 2,
            Function::Sca => 3,
            Function::NoDecSca => 4,
            Function::UMn2Double => 5,
            Function::SMn2Double => 6,
            Function::UMn2Float => 7,
            Function::SMn2Float => 8,
            Function::WritePattern => 100,
        }
    }

    /// The original's C function name, as its rows print it.
    pub fn c_name(&self) -> &'static str {
        match self {
            Function::Readout => "func_readout",
            Function::DecSca => "func_decsca",
            Function::Dec => "func_dec",
            Function::Sca => "func_sca",
            Function::NoDecSca => "func_no_decsca",
            Function::UMn2Double => "func_umn2double",
            Function::SMn2Double => "func_smn2double",
            Function::UMn2Float => "func_umn2float",
            Function::SMn2Float => "func_smn2float",
            Function::WritePattern => "func_writepatt",
        }
    }

    /// Parses a C name (`func_dec`) or a short name (`dec`).
    pub fn parse(s: &str) -> Option<Function> {
        let s = s.strip_prefix("func_").unwrap_or(s);
        [Function::Readout, Function::WritePattern]
            .into_iter()
            .chain(Self::CONVERSIONS)
            .find(|f| f.c_name().strip_prefix("func_") == Some(s))
    }

    /// Output samples per pass over `n` input samples.
    pub fn output_samples(&self, n: usize, p: &ScaleParams) -> usize {
        match self {
            Function::DecSca | Function::Dec => n.saturating_sub(p.offset) / p.factor.max(1),
            Function::Readout | Function::WritePattern => n,
            _ => n,
        }
    }

    /// Whether the output is `f64` (5 and 6).
    pub fn outputs_f64(&self) -> bool {
        matches!(self, Function::UMn2Double | Function::SMn2Double)
    }
}

/// Which implementation of the functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kernels {
    /// As the original: divisions, volatile scalar stores.
    Original,
    /// Multiplies by 2^−n, vectorised, fused.
    Improved,
}

xferbench_params::choices!(Kernels {
    Original => "original": "the original's: a division per Q-format sample, volatile scalar stores",
    Improved => "improved": "multiply by 2^-n, fused decimation and scaling, vectorised",
});

/// `kernels`: which implementation of the conversion functions.
pub const KERNELS: crate::ParamDef = crate::ParamDef::choice(
    "kernels",
    <Kernels as xferbench_params::Choices>::CHOICES,
    "original",
    "the conversion kernels",
);

/// The output buffers of a board's conversions: `f32` for functions 1–4, 7, 8 and
/// `f64` for 5 and 6 (the original used one `float` buffer for all; see
/// [`original`]).
#[derive(Debug, Default)]
pub struct Outputs {
    /// Float output.
    pub f32: Vec<f32>,
    /// Double output.
    pub f64: Vec<f64>,
}

impl Outputs {
    /// Buffers for `samples` input samples and the functions in `funcs`.
    pub fn for_functions(samples: usize, funcs: &[Function]) -> Outputs {
        let conv = |f: &Function| *f != Function::Readout && *f != Function::WritePattern;
        Outputs {
            f32: if funcs.iter().any(|f| conv(f) && !f.outputs_f64()) {
                vec![0.0; samples]
            } else {
                Vec::new()
            },
            f64: if funcs.iter().any(Function::outputs_f64) {
                vec![0.0; samples]
            } else {
                Vec::new()
            },
        }
    }
}

/// One pass of conversion `func` over `raw` into `out`; returns the output samples.
/// Readout and the write pattern are not conversions and return 0.
pub fn convert(
    kernels: Kernels,
    func: Function,
    raw: &[u16],
    p: &ScaleParams,
    out: &mut Outputs,
) -> usize {
    use Function::*;
    match (kernels, func) {
        (_, Readout | WritePattern) => 0,
        (Kernels::Original, DecSca) => original::decsca(raw, &mut out.f32, p),
        (Kernels::Original, Dec) => original::dec(raw, &mut out.f32, p),
        (Kernels::Original, Sca) => original::sca(raw, &mut out.f32, p),
        (Kernels::Original, NoDecSca) => original::no_decsca(raw, &mut out.f32),
        (Kernels::Original, UMn2Double) => original::mn2double(raw, &mut out.f64, Q1_15_UNSIGNED),
        (Kernels::Original, SMn2Double) => original::mn2double(raw, &mut out.f64, Q3_13_SIGNED),
        (Kernels::Original, UMn2Float) => original::mn2float(raw, &mut out.f32, Q1_15_UNSIGNED),
        (Kernels::Original, SMn2Float) => original::mn2float(raw, &mut out.f32, Q3_13_SIGNED),
        (Kernels::Improved, DecSca) => improved::decsca(raw, &mut out.f32, p),
        (Kernels::Improved, Dec) => improved::dec(raw, &mut out.f32, p),
        (Kernels::Improved, Sca) => improved::sca(raw, &mut out.f32, p),
        (Kernels::Improved, NoDecSca) => improved::no_decsca(raw, &mut out.f32),
        (Kernels::Improved, UMn2Double) => improved::mn2double(raw, &mut out.f64, Q1_15_UNSIGNED),
        (Kernels::Improved, SMn2Double) => improved::mn2double(raw, &mut out.f64, Q3_13_SIGNED),
        (Kernels::Improved, UMn2Float) => improved::mn2float(raw, &mut out.f32, Q1_15_UNSIGNED),
        (Kernels::Improved, SMn2Float) => improved::mn2float(raw, &mut out.f32, Q3_13_SIGNED),
    }
}

#[cfg(test)]
mod tests;
