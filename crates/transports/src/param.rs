//! Transport parameters: named string values with documented defaults.

use std::collections::BTreeMap;

/// One parameter a transport (or workload) accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamSpec {
    /// Name as used in `-p NAME=VALUE`.
    pub name: &'static str,
    /// Default value, as the user would write it (`"os"` means "leave the OS default").
    pub default: &'static str,
    /// What values are accepted, for help and error messages.
    pub accepts: &'static str,
    /// One line of help.
    pub help: &'static str,
}

/// Parameter values by name, as strings.
pub type Params = BTreeMap<String, String>;

/// A parameter value that a transport rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    /// The value does not parse.
    #[error("invalid value {value:?} for parameter `{name}`: expected {accepts}")]
    Invalid {
        /// Parameter name.
        name: String,
        /// The value given.
        value: String,
        /// What is accepted.
        accepts: String,
    },
    /// The transport has no such parameter.
    #[error("unknown parameter `{name}` for {owner}; it accepts: {known}")]
    Unknown {
        /// Parameter name.
        name: String,
        /// Transport or workload name.
        owner: String,
        /// Comma-separated list of accepted names.
        known: String,
    },
}

/// Checks that every key of `params` is declared in `specs`.
pub fn check_known(owner: &str, specs: &[ParamSpec], params: &Params) -> Result<(), ParamError> {
    for name in params.keys() {
        if !specs.iter().any(|s| s.name == name) {
            let known = if specs.is_empty() {
                "(no parameters)".to_string()
            } else {
                specs.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
            };
            return Err(ParamError::Unknown {
                name: name.clone(),
                owner: owner.to_string(),
                known,
            });
        }
    }
    Ok(())
}

/// Looks up `name`, falling back to the spec's default, and parses it with `parse`.
/// The value `"os"` yields `None` (leave the operating system's default).
pub fn get_opt_bytes(
    specs: &[ParamSpec],
    params: &Params,
    name: &str,
) -> Result<Option<usize>, ParamError> {
    let spec = specs
        .iter()
        .find(|s| s.name == name)
        .expect("parameter is declared");
    let value = params.get(name).map(String::as_str).unwrap_or(spec.default);
    if value == "os" {
        return Ok(None);
    }
    parse_byte_size(value)
        .map(Some)
        .ok_or_else(|| ParamError::Invalid {
            name: name.to_string(),
            value: value.to_string(),
            accepts: spec.accepts.to_string(),
        })
}

/// Looks up a boolean parameter (`true`/`false`/`1`/`0`/`on`/`off`).
pub fn get_bool(specs: &[ParamSpec], params: &Params, name: &str) -> Result<bool, ParamError> {
    let spec = specs
        .iter()
        .find(|s| s.name == name)
        .expect("parameter is declared");
    let value = params.get(name).map(String::as_str).unwrap_or(spec.default);
    match value {
        "true" | "1" | "on" | "yes" => Ok(true),
        "false" | "0" | "off" | "no" => Ok(false),
        _ => Err(ParamError::Invalid {
            name: name.to_string(),
            value: value.to_string(),
            accepts: spec.accepts.to_string(),
        }),
    }
}

/// Parses a byte count: `64`, `4KiB`, `1MiB`, `1GiB`, `1TiB`; the short forms `K`, `M`,
/// `G`, `T` are binary as in iperf3 and fio (`2K` = 2048), while `kB`/`KB`, `MB`, `GB`,
/// `TB` are decimal.
pub fn parse_byte_size(s: &str) -> Option<usize> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (digits, unit) = s.split_at(split);
    let n: usize = digits.parse().ok()?;
    let mult: usize = match unit.trim() {
        "" | "B" | "b" => 1,
        "K" | "k" | "KiB" => 1 << 10,
        "KB" | "kB" => 1_000,
        "M" | "m" | "MiB" => 1 << 20,
        "MB" => 1_000_000,
        "G" | "g" | "GiB" => 1 << 30,
        "GB" => 1_000_000_000,
        // Above every maximum, but read so that the message can say so.
        "T" | "t" | "TiB" => 1 << 40,
        "TB" => 1_000_000_000_000,
        _ => return None,
    };
    n.checked_mul(mult)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_sizes_parse_binary_and_decimal_units() {
        assert_eq!(parse_byte_size("64"), Some(64));
        assert_eq!(parse_byte_size("4KiB"), Some(4096));
        assert_eq!(parse_byte_size("2K"), Some(2048));
        assert_eq!(parse_byte_size("1MiB"), Some(1 << 20));
        assert_eq!(parse_byte_size("1MB"), Some(1_000_000));
        assert_eq!(parse_byte_size("1kB"), Some(1_000));
        assert_eq!(parse_byte_size("1TiB"), Some(1 << 40));
        assert_eq!(parse_byte_size("KiB"), None);
        assert_eq!(parse_byte_size("12XB"), None);
        assert_eq!(parse_byte_size("99999999999999999999G"), None);
    }
}
