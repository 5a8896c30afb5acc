//! Opening a plugin file: the checks before `dlopen`, the entry symbol, the ABI
//! revision, and the description. Every failure is a [`PluginLoadError`] that names
//! the file and the problem.
//!
//! Libraries are opened once per process and never closed (`dlclose` would free code
//! and strings a plugin's threads or the lab may still hold).

use super::describe::{self, PluginInfo};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use xferbench_plugin::abi::{self, EntryFn, XbPlugin, XbTransport};

/// Why a plugin file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PluginLoadError {
    /// No file at the path.
    #[error("plugin {path}: no such file")]
    NotFound {
        /// The path as given.
        path: String,
    },
    /// The file cannot be read.
    #[error("plugin {path}: cannot read it: {reason}")]
    Unreadable {
        /// The path.
        path: String,
        /// The OS error.
        reason: String,
    },
    /// Not a shared library for this machine.
    #[error("plugin {path}: not a shared library: {reason}")]
    NotALibrary {
        /// The path.
        path: String,
        /// What it is instead.
        reason: String,
    },
    /// `dlopen` refused it.
    #[error("plugin {path}: cannot load it: {reason}")]
    Open {
        /// The path.
        path: String,
        /// `dlerror()`.
        reason: String,
    },
    /// No `xferbench_plugin_v1` symbol.
    #[error(
        "plugin {path}: no entry symbol `xferbench_plugin_v1`: not an xferbench plugin, or its entry is not exported (define it with XB_EXPORT from include/xferbench/plugin.h)"
    )]
    NoEntry {
        /// The path.
        path: String,
    },
    /// The entry returned NULL.
    #[error(
        "plugin {path}: its entry returned no description (NULL); its stderr above may say why"
    )]
    NoDescription {
        /// The path.
        path: String,
    },
    /// The description breaks the header's rules (an ABI revision this build does
    /// not know, a NULL function, a parameter schema that contradicts itself, ...).
    #[error("plugin {path}: {problem}")]
    Invalid {
        /// The path.
        path: String,
        /// What is wrong.
        problem: String,
    },
    /// `plugin:PATH:NAME` names a transport the plugin does not have.
    #[error("plugin {path}: no transport `{name}`; it has: {known}")]
    NoSuchTransport {
        /// The path.
        path: String,
        /// The name asked for.
        name: String,
        /// The ones it has.
        known: String,
    },
}

/// An opened, checked plugin library.
pub struct Library {
    /// Its description.
    pub info: PluginInfo,
    /// Its transports' function tables, in the order of `info.transports`.
    pub(super) tables: Vec<XbTransport>,
    /// Its clean-up hook.
    pub(super) cleanup: Option<abi::CleanupFn>,
    /// Transport names, leaked once per process for error messages that need a
    /// `&'static str` ([`crate::TransportError`]).
    pub(super) static_names: Vec<&'static str>,
}

impl std::fmt::Debug for Library {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Library").field("info", &self.info).finish()
    }
}

// SAFETY: the function tables and the clean-up pointer are plain code addresses of a
// library that is never unloaded; the header's contract lets any thread call them
// under the rules the wrappers in `super` follow.
unsafe impl Send for Library {}
// SAFETY: as above; nothing in a Library is mutated after it is opened.
unsafe impl Sync for Library {}

const ELF_MAGIC: &[u8; 4] = b"\x7fELF";
const ET_DYN: u16 = 3;

fn host_machine() -> (u16, &'static str) {
    match std::env::consts::ARCH {
        "x86_64" => (62, "x86-64"),
        "aarch64" => (183, "AArch64"),
        "x86" => (3, "x86"),
        "arm" => (40, "ARM"),
        "riscv64" => (243, "RISC-V"),
        "powerpc64" => (21, "PowerPC64"),
        "s390x" => (22, "s390x"),
        other => (0, other),
    }
}

/// Checks the ELF header: a 64-bit (or this build's width) shared object for this
/// machine, so that a wrong file gets a clear message rather than `dlerror`'s.
fn check_elf(path: &Path, shown: &str) -> Result<(), PluginLoadError> {
    let not = |reason: String| PluginLoadError::NotALibrary {
        path: shown.to_string(),
        reason,
    };
    let mut head = [0u8; 20];
    let mut f = std::fs::File::open(path).map_err(|e| PluginLoadError::Unreadable {
        path: shown.to_string(),
        reason: e.to_string(),
    })?;
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) => {
                return Err(PluginLoadError::Unreadable {
                    path: shown.to_string(),
                    reason: e.to_string(),
                });
            }
        }
    }
    if n < head.len() || &head[..4] != ELF_MAGIC {
        let what = if n == 0 {
            "the file is empty".to_string()
        } else if head[..n].starts_with(b"#!") {
            "it is a script".to_string()
        } else {
            "it is not an ELF file".to_string()
        };
        return Err(not(format!(
            "{what}; build one with `cc -shared -fPIC -I include -o libNAME.so NAME.c`"
        )));
    }
    let class = if cfg!(target_pointer_width = "64") {
        2
    } else {
        1
    };
    if head[4] != class {
        return Err(not(format!(
            "it is a {}-bit ELF file; this xferbench is {}-bit",
            if head[4] == 1 { 32 } else { 64 },
            if class == 1 { 32 } else { 64 }
        )));
    }
    let little = head[5] == 1;
    let u16_at = |i: usize| {
        let b = [head[i], head[i + 1]];
        if little {
            u16::from_le_bytes(b)
        } else {
            u16::from_be_bytes(b)
        }
    };
    let (machine, machine_name) = host_machine();
    let e_machine = u16_at(18);
    if machine != 0 && e_machine != machine {
        return Err(not(format!(
            "it is built for another machine (ELF e_machine {e_machine}); this one is {machine_name}"
        )));
    }
    let e_type = u16_at(16);
    if e_type != ET_DYN {
        let what = match e_type {
            1 => "a relocatable object (.o): link it with -shared",
            2 => "an executable: build it with -shared -fPIC",
            4 => "a core dump",
            _ => "not a shared object",
        };
        return Err(not(format!("it is {what}")));
    }
    Ok(())
}

/// SHA-256 of a file, hex.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// The absolute path of a plugin file, with the checks that need no loading.
pub fn resolve(path: &str) -> Result<PathBuf, PluginLoadError> {
    let p = Path::new(path);
    let meta = std::fs::metadata(p).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => PluginLoadError::NotFound {
            path: path.to_string(),
        },
        _ => PluginLoadError::Unreadable {
            path: path.to_string(),
            reason: e.to_string(),
        },
    })?;
    if meta.is_dir() {
        return Err(PluginLoadError::NotALibrary {
            path: path.to_string(),
            reason: "it is a directory".into(),
        });
    }
    if !meta.is_file() {
        return Err(PluginLoadError::NotALibrary {
            path: path.to_string(),
            reason: "it is not a regular file".into(),
        });
    }
    std::fs::canonicalize(p).map_err(|e| PluginLoadError::Unreadable {
        path: path.to_string(),
        reason: e.to_string(),
    })
}

/// The checks that need no loading: the file exists, is an ELF shared object for
/// this machine; returns its absolute path and SHA-256.
pub fn check_file(path: &str) -> Result<(PathBuf, String), PluginLoadError> {
    let abs = resolve(path)?;
    check_elf(&abs, path)?;
    let sha = sha256_file(&abs).map_err(|e| PluginLoadError::Unreadable {
        path: path.to_string(),
        reason: e.to_string(),
    })?;
    Ok((abs, sha))
}

/// Opens (once per process) and checks the plugin at `path`.
pub fn open(path: &str) -> Result<Arc<Library>, PluginLoadError> {
    static OPENED: OnceLock<Mutex<HashMap<PathBuf, Arc<Library>>>> = OnceLock::new();
    let abs = resolve(path)?;
    let opened = OPENED.get_or_init(|| Mutex::new(HashMap::new()));
    let mut opened = opened.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(lib) = opened.get(&abs) {
        return Ok(lib.clone());
    }
    let lib = Arc::new(open_uncached(path, &abs)?);
    opened.insert(abs, lib.clone());
    Ok(lib)
}

fn open_uncached(shown: &str, abs: &Path) -> Result<Library, PluginLoadError> {
    check_elf(abs, shown)?;
    let sha256 = sha256_file(abs).map_err(|e| PluginLoadError::Unreadable {
        path: shown.to_string(),
        reason: e.to_string(),
    })?;
    use libloading::os::unix::{Library as Dl, RTLD_LOCAL, RTLD_NOW};
    // SAFETY: loading a library runs its initialisers; that is what a plugin is, and
    // the lab only does it in processes that exist to run the plugin (never in the
    // xferbench process itself, see the module doc of `super`).
    let dl = unsafe { Dl::open(Some(abs), RTLD_NOW | RTLD_LOCAL) }.map_err(|e| {
        PluginLoadError::Open {
            path: shown.to_string(),
            reason: e.to_string(),
        }
    })?;
    // SAFETY: the symbol's type is the header's `xb_plugin_entry`; a library that
    // exports the name with another type breaks the ABI it claims.
    let entry: EntryFn = match unsafe { dl.get::<EntryFn>(abi::ENTRY_SYMBOL) } {
        Ok(sym) => *sym,
        Err(_) => {
            return Err(PluginLoadError::NoEntry {
                path: shown.to_string(),
            });
        }
    };
    // SAFETY: the header's entry contract: callable with the host's revision.
    let desc: *const XbPlugin = unsafe { entry(abi::XB_ABI_VERSION) };
    if desc.is_null() {
        return Err(PluginLoadError::NoDescription {
            path: shown.to_string(),
        });
    }
    // SAFETY: a non-null description from the entry; the library stays loaded
    // (leaked below) for as long as the description is used.
    let info = unsafe { describe::read(desc, abs.to_path_buf(), sha256) }.map_err(|problem| {
        PluginLoadError::Invalid {
            path: shown.to_string(),
            problem,
        }
    })?;
    // SAFETY: read() checked the revision and the transports array.
    let plugin = unsafe { &*desc };
    let tables = (0..info.transports.len())
        // SAFETY: read() checked `transport_count` elements of the revision's size.
        .map(|i| unsafe { abi::read_transport(plugin.transports, info.abi_version, i) })
        .collect();
    let static_names = info
        .transports
        .iter()
        .map(|t| &*Box::leak(t.name.clone().into_boxed_str()))
        .collect();
    // Never unloaded: see the module doc.
    std::mem::forget(dl);
    Ok(Library {
        tables,
        cleanup: plugin.cleanup,
        static_names,
        info,
    })
}
