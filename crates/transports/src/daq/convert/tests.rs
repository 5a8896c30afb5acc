//! Improved == original: exhaustively over every u16 for each function, and over
//! random scale and decimation parameters with proptest. Every function is
//! bit-exact (the improved arithmetic is the original's or differs only by an exact
//! power-of-two scaling), so the comparisons are of bit patterns, not within an ULP.

use super::*;
use proptest::prelude::*;

fn every_u16() -> Vec<u16> {
    (0..=u16::MAX).collect()
}

fn run(k: Kernels, f: Function, raw: &[u16], p: &ScaleParams) -> (usize, Vec<u64>) {
    let mut out = Outputs::for_functions(raw.len(), &[f]);
    let n = convert(k, f, raw, p, &mut out);
    let bits = if f.outputs_f64() {
        out.f64[..n].iter().map(|x| x.to_bits()).collect()
    } else {
        out.f32[..n]
            .iter()
            .map(|x| u64::from(x.to_bits()))
            .collect()
    };
    (n, bits)
}

#[test]
fn improved_equals_original_bit_for_bit_on_every_u16() {
    let raw = every_u16();
    let p = ScaleParams::default();
    for f in Function::CONVERSIONS {
        let (n0, a) = run(Kernels::Original, f, &raw, &p);
        let (n1, b) = run(Kernels::Improved, f, &raw, &p);
        assert_eq!((n0, n1), (65_536, 65_536), "{f:?}");
        let first = a.iter().zip(&b).position(|(x, y)| x != y);
        assert_eq!(first, None, "{f:?} differs at input {first:?}");
    }
}

#[test]
fn the_q_formats_match_their_definitions() {
    let raw = [0u16, 1, 0x7FFF, 0x8000, 0xFFFF];
    let mut out = Outputs::for_functions(5, &[Function::SMn2Double]);
    convert(
        Kernels::Original,
        Function::UMn2Double,
        &raw,
        &ScaleParams::default(),
        &mut out,
    );
    assert_eq!(
        out.f64,
        [
            0.0,
            1.0 / 32768.0,
            32767.0 / 32768.0,
            1.0,
            65535.0 / 32768.0
        ]
    );
    convert(
        Kernels::Original,
        Function::SMn2Double,
        &raw,
        &ScaleParams::default(),
        &mut out,
    );
    assert_eq!(
        out.f64,
        [0.0, 1.0 / 8192.0, 32767.0 / 8192.0, -4.0, -1.0 / 8192.0]
    );
}

#[test]
fn decimation_counts_and_picks_the_originals_samples() {
    let raw: Vec<u16> = (0..100).collect();
    let p = ScaleParams {
        offset: 3,
        factor: 10,
        ..ScaleParams::default()
    };
    for k in [Kernels::Original, Kernels::Improved] {
        let mut out = Outputs::for_functions(100, &[Function::Dec]);
        assert_eq!(convert(k, Function::Dec, &raw, &p, &mut out), 9);
        assert_eq!(
            &out.f32[..9],
            &[3.0, 13.0, 23.0, 33.0, 43.0, 53.0, 63.0, 73.0, 83.0]
        );
    }
    assert_eq!(Function::Dec.output_samples(100, &p), 9);
}

#[test]
fn codes_and_names_round_trip() {
    for code in [0, 1, 2, 3, 4, 5, 6, 7, 8, 100] {
        let f = *Function::for_code(code).unwrap().last().unwrap();
        assert_eq!(f.code(), code);
        assert_eq!(Function::parse(f.c_name()), Some(f));
    }
    assert_eq!(Function::for_code(99).unwrap().len(), 9);
    assert!(Function::for_code(9).is_none());
}

#[test]
fn the_write_patterns_agree() {
    let mut a = vec![0u16; 1000];
    let mut b = vec![1u16; 1000];
    original::write_pattern(&mut a);
    improved::write_pattern(&mut b);
    assert_eq!(a, b);
    assert_eq!(a[0].to_ne_bytes(), [0, 1]);
    assert_eq!(a[63].to_ne_bytes(), [126, 0]);
}

proptest! {
    #[test]
    fn scaling_and_decimation_are_bit_exact_for_any_parameters(
        raw in proptest::collection::vec(any::<u16>(), 0..600),
        offset in 0usize..20,
        factor in 1usize..12,
        scale_factor in -1e6f64..1e6,
        scale_offset in -1e6f64..1e6,
    ) {
        let p = ScaleParams { offset, factor, scale_offset, scale_factor };
        for f in [Function::DecSca, Function::Dec, Function::Sca] {
            let a = run(Kernels::Original, f, &raw, &p);
            let b = run(Kernels::Improved, f, &raw, &p);
            prop_assert_eq!(a, b);
        }
    }
}
