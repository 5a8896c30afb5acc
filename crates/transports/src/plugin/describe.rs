//! A plugin's description as plain data: read from the library's `xb_plugin`,
//! checked against the rules of the header, and serialisable, so that a process
//! that never loads the library (the xferbench process itself) knows its transports
//! and parameters.

use crate::Descriptor;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::ffi::{CStr, c_char};
use std::path::PathBuf;
use std::time::Duration;
use xferbench_params::{Choice, Kind, ParamDef, Value};
use xferbench_plugin::abi::{self, XbParam, XbPlugin, XbTransport};

/// Names a plugin transport may not take: the built-in transports' and `plugin`.
pub const RESERVED_TRANSPORT_NAMES: [&str; 8] = [
    "shm", "pipe", "unix", "tcp", "iceoryx2", "iox2", "rpmsg", "plugin",
];

/// Most transports in one plugin, parameters of one transport, choices of one
/// parameter.
pub const MAX_ITEMS: usize = 64;

/// What a plugin file is and holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PluginInfo {
    /// The file, as an absolute path.
    pub path: PathBuf,
    /// SHA-256 of the file, hex.
    pub sha256: String,
    /// The library's name (`xb_plugin::name`).
    pub name: String,
    /// Its own version string.
    pub version: String,
    /// The header revision it was built with.
    pub abi_version: u32,
    /// Whether it has a clean-up hook.
    pub cleanup: bool,
    /// Its transports.
    pub transports: Vec<TransportInfo>,
}

/// One transport of a plugin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TransportInfo {
    /// Its name.
    pub name: String,
    /// One line.
    pub description: String,
    /// The largest message any configuration carries (`None`: no limit).
    pub max_message: Option<u64>,
    /// Whether it moves messages in place.
    pub zero_copy: bool,
    /// Whether its addresses cross hosts (`XB_REACH_NETWORK`, revision 2), so that
    /// `--remote` may run its serving side on another host.
    #[serde(default)]
    pub crosses_hosts: bool,
    /// Its parameters, in declaration order.
    pub params: Vec<ParamInfo>,
}

/// What values a plugin parameter takes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ParamKind {
    /// A whole number.
    Integer {
        /// Smallest accepted.
        min: i64,
        /// Largest accepted.
        max: i64,
    },
    /// A byte size.
    Bytes {
        /// Smallest accepted.
        min: u64,
        /// Largest accepted.
        max: u64,
    },
    /// A length of time, in nanoseconds.
    Duration {
        /// Shortest accepted, ns.
        min_ns: u64,
        /// Longest accepted, ns.
        max_ns: u64,
    },
    /// One of named choices: (name, help).
    Enum {
        /// The choices.
        choices: Vec<(String, String)>,
    },
    /// `true` or `false`.
    Bool,
}

/// One parameter of a plugin transport.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParamInfo {
    /// Its name.
    pub name: String,
    /// Its values.
    pub kind: ParamKind,
    /// The default, as the plugin wrote it.
    pub default: String,
    /// One line of help.
    pub help: String,
}

impl ParamInfo {
    /// The parameter in the lab's typed model: the definition `list`, `-p` sweeps,
    /// validation and results use, as for a built-in's. Fails when the declaration
    /// contradicts itself (a default its own kind or bounds refuse).
    pub fn def(&self) -> Result<ParamDef, String> {
        let kind = match &self.kind {
            ParamKind::Integer { min, max } => Kind::Integer {
                min: *min,
                max: *max,
            },
            ParamKind::Bytes { min, max } => Kind::Bytes {
                min: *min,
                max: *max,
                power_of_two: false,
                multiple_of: 1,
            },
            ParamKind::Duration { min_ns, max_ns } => Kind::Duration {
                min: Duration::from_nanos(*min_ns),
                max: Duration::from_nanos(*max_ns),
            },
            ParamKind::Enum { choices } => Kind::Enum(Cow::Owned(
                choices
                    .iter()
                    .map(|(name, help)| Choice {
                        name: Cow::Owned(name.clone()),
                        help: Cow::Owned(help.clone()),
                    })
                    .collect(),
            )),
            ParamKind::Bool => Kind::Bool,
        };
        let mut def = ParamDef {
            name: Cow::Owned(self.name.clone()),
            kind,
            default: Value::Bool(false),
            unset: None,
            help: Cow::Owned(self.help.clone()),
        };
        def.default = def.parse(&self.default).map_err(|_| {
            format!(
                "the default {:?} is not accepted by its own declaration: expected {}",
                self.default,
                def.accepts()
            )
        })?;
        def.self_check()?;
        Ok(def)
    }
}

impl TransportInfo {
    /// Its parameters in the lab's typed model (checked when the plugin was read).
    pub fn defs(&self) -> Vec<ParamDef> {
        self.params
            .iter()
            .map(|p| p.def().expect("checked when the plugin was read"))
            .collect()
    }

    /// What the lab knows of it before it runs, under the name `name` (the lab's
    /// canonical `plugin:/abs/path:NAME`).
    pub fn descriptor(&self, name: String) -> Descriptor {
        Descriptor {
            name: Cow::Owned(name),
            description: Cow::Owned(self.description.clone()),
            params: Cow::Owned(self.defs()),
            zero_copy: self.zero_copy,
            max_message: self.max_message.and_then(|m| usize::try_from(m).ok()),
            wakeup: crate::WakeupRule::Unknown,
            hosts: if self.crosses_hosts {
                crate::Hosts::Any
            } else {
                crate::Hosts::One(Cow::Borrowed(
                    "does not declare reach = XB_REACH_NETWORK, so its addresses are taken as \
                     local to this host",
                ))
            },
        }
    }
}

/// The `xb_value` of a parsed value: its text as result files store it, and its
/// number (see the header's `xb_param_kind`).
pub fn c_value(def: &ParamDef, v: &Value) -> (String, i64) {
    let number = match v {
        Value::Integer(n) => *n,
        Value::Bytes(n) => i64::try_from(*n).unwrap_or(i64::MAX),
        Value::Duration(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        Value::Bool(b) => i64::from(*b),
        Value::Choice(c) => match &def.kind {
            Kind::Enum(choices) => choices
                .iter()
                .position(|x| x.name == *c)
                .map_or(0, |i| i as i64),
            _ => 0,
        },
        Value::Text(_) | Value::Unset | Value::Auto => 0,
    };
    (def.machine(v), number)
}

/// A C string of the description, checked: non-null, UTF-8, at most `max` bytes.
///
/// # Safety
///
/// `p` is null or points to a NUL-terminated string.
unsafe fn string(p: *const c_char, what: &str, max: usize) -> Result<String, String> {
    if p.is_null() {
        return Err(format!("{what} is NULL"));
    }
    // SAFETY: non-null and NUL-terminated per this function's contract.
    let s = unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|_| format!("{what} is not UTF-8"))?;
    if s.len() > max {
        return Err(format!("{what} is longer than {max} bytes"));
    }
    if s.chars().any(char::is_control) {
        return Err(format!("{what} {s:?} holds control characters"));
    }
    Ok(s.to_string())
}

fn is_name(s: &str, first: impl Fn(char) -> bool, rest: impl Fn(char) -> bool) -> bool {
    let mut cs = s.chars();
    cs.next().is_some_and(first) && cs.all(rest) && s.len() <= 32
}

/// Whether `s` is a valid transport name: `[a-z0-9][a-z0-9._-]*`, at most 32 bytes.
pub fn is_transport_name(s: &str) -> bool {
    let lower_digit = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    is_name(s, lower_digit, |c| lower_digit(c) || "._-".contains(c))
}

fn is_param_name(s: &str) -> bool {
    is_name(
        s,
        |c| c.is_ascii_lowercase(),
        |c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_',
    )
}

/// A slice of the description, checked: non-null unless empty, at most
/// [`MAX_ITEMS`], read with the element size of the plugin's revision.
///
/// # Safety
///
/// `p` points to `count` elements of `stride` bytes each, the first
/// `size_of::<T>()` of which are a `T`.
unsafe fn items<'a, T>(
    p: *const T,
    count: usize,
    stride: usize,
    what: &str,
) -> Result<Vec<&'a T>, String> {
    if count == 0 {
        return Ok(Vec::new());
    }
    if count > MAX_ITEMS {
        return Err(format!("{count} {what}: at most {MAX_ITEMS}"));
    }
    if p.is_null() {
        return Err(format!("{count} {what} declared, but the array is NULL"));
    }
    Ok((0..count)
        // SAFETY: per this function's contract, element i starts i * stride bytes in
        // and begins with a T; the description lives as long as the library.
        .map(|i| unsafe { &*p.cast::<u8>().add(i * stride).cast::<T>() })
        .collect())
}

fn param_info(p: &XbParam, revision: u32, t: &str) -> Result<ParamInfo, String> {
    // SAFETY: the description's strings are NUL-terminated (or NULL, refused).
    let name = unsafe { string(p.name, "a parameter's name", 32) }
        .map_err(|e| format!("transport `{t}`: {e}"))?;
    let at = format!("transport `{t}`, parameter `{name}`");
    if !is_param_name(&name) {
        return Err(format!(
            "{at}: the name must be [a-z][a-z0-9_]*, at most 32 bytes"
        ));
    }
    // SAFETY: as above.
    let default =
        unsafe { string(p.default_value, "the default", 128) }.map_err(|e| format!("{at}: {e}"))?;
    // SAFETY: as above.
    let help = unsafe { string(p.help, "the help", 400) }.map_err(|e| format!("{at}: {e}"))?;
    let bounded = |lo: i64, hi: i64| (lo, hi) != (0, 0);
    let kind = match p.kind {
        abi::XB_PARAM_INTEGER => {
            let (min, max) = if bounded(p.min, p.max) {
                (p.min, p.max)
            } else {
                (i64::MIN, i64::MAX)
            };
            ParamKind::Integer { min, max }
        }
        abi::XB_PARAM_BYTES | abi::XB_PARAM_DURATION => {
            if p.min < 0 || p.max < 0 {
                return Err(format!(
                    "{at}: a negative bound ({}..{}) for a size or a time",
                    p.min, p.max
                ));
            }
            let (min, max) = if bounded(p.min, p.max) {
                (p.min as u64, p.max as u64)
            } else {
                (0, u64::MAX)
            };
            if p.kind == abi::XB_PARAM_BYTES {
                ParamKind::Bytes { min, max }
            } else {
                ParamKind::Duration {
                    min_ns: min,
                    max_ns: max,
                }
            }
        }
        abi::XB_PARAM_ENUM => {
            // SAFETY: `choices` points to `choice_count` xb_choice (or is refused).
            let cs = unsafe {
                items(
                    p.choices,
                    p.choice_count,
                    std::mem::size_of::<abi::XbChoice>(),
                    "choices",
                )
            }
            .map_err(|e| format!("{at}: {e}"))?;
            if cs.is_empty() {
                return Err(format!("{at}: an enumerated parameter without choices"));
            }
            let mut choices: Vec<(String, String)> = Vec::new();
            for c in cs {
                // SAFETY: as above.
                let n = unsafe { string(c.name, "a choice's name", 32) }
                    .map_err(|e| format!("{at}: {e}"))?;
                if !is_transport_name(&n) {
                    return Err(format!(
                        "{at}: the choice {n:?} must be [a-z0-9][a-z0-9._-]*"
                    ));
                }
                if choices.iter().any(|(m, _)| *m == n) {
                    return Err(format!("{at}: the choice `{n}` is declared twice"));
                }
                let h = if c.help.is_null() {
                    String::new()
                } else {
                    // SAFETY: as above.
                    unsafe { string(c.help, "a choice's help", 200) }
                        .map_err(|e| format!("{at}: {e}"))?
                };
                choices.push((n, h));
            }
            ParamKind::Enum { choices }
        }
        abi::XB_PARAM_BOOL => ParamKind::Bool,
        k => {
            return Err(format!(
                "{at}: unknown kind {k} (revision {revision} knows 1 integer, 2 bytes, 3 duration, 4 enum, 5 bool)"
            ));
        }
    };
    let lo_hi = match kind {
        ParamKind::Integer { min, max } => Some((min as i128, max as i128)),
        ParamKind::Bytes { min, max } => Some((min as i128, max as i128)),
        ParamKind::Duration { min_ns, max_ns } => Some((min_ns as i128, max_ns as i128)),
        _ => None,
    };
    if let Some((lo, hi)) = lo_hi
        && lo > hi
    {
        return Err(format!("{at}: min {lo} is above max {hi}"));
    }
    let info = ParamInfo {
        name,
        kind,
        default,
        help,
    };
    info.def().map_err(|e| format!("{at}: {e}"))?;
    Ok(info)
}

fn transport_info(t: &XbTransport, revision: u32) -> Result<TransportInfo, String> {
    // SAFETY: the description's strings are NUL-terminated (or NULL, refused).
    let name = unsafe { string(t.name, "a transport's name", 32) }?;
    if !is_transport_name(&name) {
        return Err(format!(
            "the transport name {name:?} must be [a-z0-9][a-z0-9._-]*, at most 32 bytes"
        ));
    }
    if RESERVED_TRANSPORT_NAMES.contains(&name.as_str()) {
        return Err(format!(
            "the transport name `{name}` is taken by a built-in transport; rename it"
        ));
    }
    // SAFETY: as above.
    let description = unsafe { string(t.description, "the description", 400) }
        .map_err(|e| format!("transport `{name}`: {e}"))?;
    let required = [
        ("create", t.create.is_some()),
        ("destroy", t.destroy.is_some()),
        ("listen", t.listen.is_some()),
        ("accept", t.accept.is_some()),
        ("close_listener", t.close_listener.is_some()),
        ("connect", t.connect.is_some()),
        ("send", t.send.is_some()),
        ("recv", t.recv.is_some()),
        ("close_send", t.close_send.is_some()),
        ("close", t.close.is_some()),
    ];
    if let Some((f, _)) = required.iter().find(|(_, present)| !present) {
        return Err(format!(
            "transport `{name}`: the required function `{f}` is NULL"
        ));
    }
    if t.flags & !abi::XB_ZERO_COPY != 0 {
        return Err(format!(
            "transport `{name}`: unknown flags {:#x} (revision {revision} knows XB_ZERO_COPY)",
            t.flags & !abi::XB_ZERO_COPY
        ));
    }
    let zero_copy = t.flags & abi::XB_ZERO_COPY != 0;
    if zero_copy {
        let zc = [
            ("loan", t.loan.is_some()),
            ("commit", t.commit.is_some()),
            ("borrow", t.borrow.is_some()),
            ("release", t.release.is_some()),
        ];
        if let Some((f, _)) = zc.iter().find(|(_, present)| !present) {
            return Err(format!(
                "transport `{name}`: declares XB_ZERO_COPY but `{f}` is NULL"
            ));
        }
    }
    let crosses_hosts = match t.reach {
        abi::XB_REACH_HOST => false,
        abi::XB_REACH_NETWORK => true,
        other => {
            return Err(format!(
                "transport `{name}`: reach {other} is neither XB_REACH_HOST (0) nor XB_REACH_NETWORK (1)"
            ));
        }
    };
    let stride = abi::param_size(revision).expect("a known revision");
    // SAFETY: `params` points to `param_count` xb_param of this revision.
    let raw = unsafe { items(t.params, t.param_count, stride, "parameters") }
        .map_err(|e| format!("transport `{name}`: {e}"))?;
    let mut params: Vec<ParamInfo> = Vec::with_capacity(raw.len());
    for p in raw {
        let info = param_info(p, revision, &name)?;
        if params.iter().any(|q| q.name == info.name) {
            return Err(format!(
                "transport `{name}`: the parameter `{}` is declared twice",
                info.name
            ));
        }
        params.push(info);
    }
    Ok(TransportInfo {
        name,
        description,
        max_message: (t.max_message != 0).then_some(t.max_message),
        zero_copy,
        crosses_hosts,
        params,
    })
}

/// Reads and checks a plugin's description.
///
/// # Safety
///
/// `p` is the non-null pointer the plugin's entry returned; the library stays loaded.
pub(super) unsafe fn read(
    p: *const XbPlugin,
    path: PathBuf,
    sha256: String,
) -> Result<PluginInfo, String> {
    // SAFETY: the first member of every revision is abi_version.
    let revision = unsafe { (*p).abi_version };
    if revision == 0 {
        return Err("it declares ABI revision 0; set abi_version = XB_ABI_VERSION".into());
    }
    if revision > abi::XB_ABI_VERSION {
        return Err(format!(
            "it was built for ABI revision {revision}, and this xferbench knows revisions 1 to {}: update xferbench, or rebuild the plugin against this xferbench's include/xferbench/plugin.h",
            abi::XB_ABI_VERSION
        ));
    }
    // SAFETY: a revision this build knows: the whole struct is there.
    let plugin = unsafe { &*p };
    // SAFETY: the description's strings are NUL-terminated (or NULL, refused).
    let name = unsafe { string(plugin.name, "the plugin's name", 64) }?;
    if name.is_empty() {
        return Err("the plugin's name is empty".into());
    }
    // SAFETY: as above.
    let version = unsafe { string(plugin.version, "the plugin's version", 64) }?;
    let stride = abi::transport_size(revision).expect("a known revision");
    // SAFETY: `transports` points to `transport_count` xb_transport of this revision;
    // `items` only checks the count and the pointer here.
    let raw = unsafe {
        items(
            plugin.transports.cast::<u8>(),
            plugin.transport_count,
            stride,
            "transports",
        )
    }?;
    if raw.is_empty() {
        return Err("it describes no transport (transport_count is 0)".into());
    }
    let mut transports: Vec<TransportInfo> = Vec::with_capacity(raw.len());
    for i in 0..raw.len() {
        // SAFETY: element i of `transport_count`, of this revision's size.
        let t = unsafe { abi::read_transport(plugin.transports, revision, i) };
        let info = transport_info(&t, revision)?;
        if transports.iter().any(|u| u.name == info.name) {
            return Err(format!("the transport `{}` is declared twice", info.name));
        }
        transports.push(info);
    }
    Ok(PluginInfo {
        path,
        sha256,
        name,
        version,
        abi_version: revision,
        cleanup: plugin.cleanup.is_some(),
        transports,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(kind: ParamKind, default: &str) -> ParamInfo {
        ParamInfo {
            name: "p".into(),
            kind,
            default: default.into(),
            help: String::new(),
        }
    }

    #[test]
    fn declarations_map_onto_the_typed_model() {
        let int = param(ParamKind::Integer { min: 1, max: 10 }, "5");
        let def = int.def().unwrap();
        assert_eq!(c_value(&def, &def.parse("7").unwrap()), ("7".into(), 7));
        assert!(def.parse("11").is_err());
        let bytes = param(
            ParamKind::Bytes {
                min: 0,
                max: u64::MAX,
            },
            "4KiB",
        );
        let def = bytes.def().unwrap();
        assert_eq!(
            c_value(&def, &def.parse("4KiB").unwrap()),
            ("4096".into(), 4096)
        );
        let dur = param(
            ParamKind::Duration {
                min_ns: 0,
                max_ns: u64::MAX,
            },
            "1ms",
        );
        let def = dur.def().unwrap();
        assert_eq!(c_value(&def, &def.parse("250us").unwrap()).1, 250_000);
        let e = param(
            ParamKind::Enum {
                choices: vec![
                    ("spin".into(), String::new()),
                    ("block".into(), String::new()),
                ],
            },
            "spin",
        );
        let def = e.def().unwrap();
        assert_eq!(
            c_value(&def, &def.parse("block").unwrap()),
            ("block".into(), 1)
        );
        assert!(def.parse("nap").is_err());
        let b = param(ParamKind::Bool, "false");
        let def = b.def().unwrap();
        assert_eq!(c_value(&def, &def.parse("on").unwrap()), ("true".into(), 1));
        let bad = param(ParamKind::Integer { min: 1, max: 10 }, "ten");
        assert!(bad.def().unwrap_err().contains("not accepted"));
        let out = param(ParamKind::Integer { min: 1, max: 10 }, "100");
        assert!(out.def().unwrap_err().contains("\"100\""));
    }

    #[test]
    fn names_follow_the_headers_rules() {
        assert!(is_transport_name("posix-mq"));
        assert!(is_transport_name("zmq.ipc_2"));
        assert!(!is_transport_name("Posix"));
        assert!(!is_transport_name("-x"));
        assert!(!is_transport_name(""));
        assert!(!is_transport_name(&"a".repeat(33)));
        assert!(is_param_name("max_message"));
        assert!(!is_param_name("max-message"));
        assert!(!is_param_name("1x"));
    }
}
