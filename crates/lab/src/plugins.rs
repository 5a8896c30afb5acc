//! Plugin transports in the lab (`-t plugin:PATH[:NAME]`).
//!
//! # Where a plugin's code runs, and why
//!
//! A plugin is a user's native code: it may crash (SIGSEGV) or hang. The xferbench
//! process holds the results of every finished point, the journal and the exports,
//! so it never loads a plugin:
//!
//! * **describing** a plugin (its transports, parameters, ABI revision, schema
//!   checks) happens in a short-lived child ([`Role::PluginProbe`]), which prints the
//!   description as JSON. The xferbench process keeps it in a registry ([`probe`]),
//!   so that `list`, `-p` sweeps and validation work as for a built-in, and checks the
//!   file itself (exists, an ELF shared object for this machine, its SHA-256) without
//!   loading it;
//! * **measuring**: the measuring side of a plugin point (the driver threads, which
//!   send and time) runs in a child of its own (`rig::plugin`,
//!   [`Role::PluginDriver`]), which starts the peers (the serving side) as its own
//!   children. A crash or hang in either is reported like a dead peer: the point
//!   fails (exit 1) naming the process and the signal or the timeout, and the points
//!   finished before are kept;
//! * **clean-up**: every process of one visit of a point shares a clean-up scope
//!   ([`SCOPE_ENV`]); when the visit ends, on every path, the lab runs the plugin's
//!   clean-up hook on that scope in a fresh child ([`clean_up`],
//!   [`Role::PluginCleanup`]), so that what a crashed process left (queues, socket
//!   files) is removed.
//!
//! Children that load a plugin learn their scope and the timeout of every send and
//! receive (`--timeout`) from the environment ([`host_from_env`]), which their own
//! children inherit.

use crate::result::PluginRecord;
use std::collections::BTreeMap;
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use xferbench_probes::process::{Child, Launcher, Role, Streams, Supervised};
use xferbench_transports::Descriptor;
use xferbench_transports::plugin::{
    self, PluginHost, PluginInfo, PluginLoadError, PluginSpec, TransportInfo,
};

/// The environment variable carrying the clean-up scope to a plugin's processes.
pub const SCOPE_ENV: &str = "XFERBENCH_PLUGIN_SCOPE";
/// The environment variable carrying the send/receive timeout, milliseconds.
pub const TIMEOUT_ENV: &str = "XFERBENCH_PLUGIN_TIMEOUT_MS";
/// The environment variable carrying `xb_host::listen_host` (with `--remote`).
pub const LISTEN_HOST_ENV: &str = "XFERBENCH_PLUGIN_LISTEN_HOST";

/// How long describing a plugin, or cleaning up after it, may take.
pub const CHILD_LIMIT: Duration = Duration::from_secs(20);

/// The host of plugin transports made in this process: scope and timeout from the
/// environment, or this process's own scope and 10 s.
pub fn host_from_env() -> PluginHost {
    let mut host = PluginHost::default();
    if let Ok(scope) = std::env::var(SCOPE_ENV)
        && !scope.is_empty()
    {
        host.scope = scope;
    }
    if let Some(ms) = std::env::var(TIMEOUT_ENV)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        host.io_timeout = Duration::from_millis(ms.max(1));
    }
    if let Ok(h) = std::env::var(LISTEN_HOST_ENV)
        && !h.is_empty()
    {
        host.listen_host = Some(h);
    }
    host
}

/// A fresh clean-up scope for one visit of a point (or one check): unique among the
/// processes of this user.
pub fn new_scope() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!(
        "xb{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Why a plugin named on the command line cannot be used: always the user's input
/// (exit 2), named with its file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PluginProbeError {
    /// Not `plugin:PATH[:NAME]`.
    #[error("`{0}` is not plugin:PATH[:NAME]")]
    Syntax(String),
    /// The file failed a check or the description did.
    #[error(transparent)]
    Load(#[from] PluginLoadError),
    /// The probe process failed to start, crashed or hung.
    #[error("plugin {path}: {problem}")]
    Probe {
        /// The file.
        path: String,
        /// What happened.
        problem: String,
    },
    /// Two files give a transport the same name and version.
    #[error(
        "plugin {path}: its transport `{name}` has the name of another selected transport with the same file contents"
    )]
    Duplicate {
        /// The file.
        path: String,
        /// The transport.
        name: String,
    },
}

/// One registered plugin transport.
#[derive(Debug, Clone)]
struct Registered {
    /// `plugin:/abs/path:NAME`.
    spec: String,
    /// The name in points and tables.
    display: String,
    info: Arc<PluginInfo>,
    index: usize,
    /// What the lab knows of it: its parameters in the typed model, named `spec`.
    descriptor: Descriptor,
}

impl Registered {
    fn transport(&self) -> &TransportInfo {
        &self.info.transports[self.index]
    }
}

fn registry() -> &'static Mutex<Vec<Registered>> {
    static REGISTRY: OnceLock<Mutex<Vec<Registered>>> = OnceLock::new();
    REGISTRY.get_or_init(|| Mutex::new(Vec::new()))
}

fn find(spec: &str) -> Option<Registered> {
    registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .find(|r| r.spec == spec)
        .cloned()
}

/// Whether `name` is a plugin transport (`plugin:...`).
pub fn is_plugin(name: &str) -> bool {
    PluginSpec::is_plugin(name)
}

static MAY_LOAD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Declares this process one that runs plugins (a measuring process, a peer, a
/// check): a plugin transport it meets unprobed is described by loading it here.
/// The xferbench process never calls this, so it never loads a plugin.
pub fn may_load_plugins() {
    MAY_LOAD.store(true, Ordering::Relaxed);
}

/// Makes sure plugin transport `spec` is registered: probed already, or, in a
/// process that runs plugins ([`may_load_plugins`]), described by loading it.
/// Returns whether it is registered.
pub fn ensure_registered(spec: &str) -> bool {
    if find(spec).is_some() {
        return true;
    }
    if !MAY_LOAD.load(Ordering::Relaxed) {
        return false;
    }
    let Some(parsed) = PluginSpec::parse(spec) else {
        return false;
    };
    let Ok((lib, index)) = plugin::find(&parsed) else {
        return false;
    };
    let info = Arc::new(lib.info.clone());
    let t = &info.transports[index];
    let canonical = PluginSpec::canonical(&info.path, &t.name);
    let mut reg = registry().lock().unwrap_or_else(|e| e.into_inner());
    if !reg.iter().any(|r| r.spec == canonical) {
        reg.push(Registered {
            descriptor: t.descriptor(canonical.clone()),
            spec: canonical.clone(),
            display: t.name.clone(),
            info: info.clone(),
            index,
        });
    }
    canonical == spec
}

/// Describes the plugin of `word` (`plugin:PATH[:NAME]`) in a child process and
/// registers its transports (the one named, or all); returns their canonical names
/// (`plugin:/abs/path:NAME`), which the points, peers and measuring processes use.
/// Probing the same file again reuses the description.
pub fn probe(word: &str, launcher: &Launcher) -> Result<Vec<String>, PluginProbeError> {
    let spec = PluginSpec::parse(word).ok_or_else(|| PluginProbeError::Syntax(word.into()))?;
    let (abs, sha256) = plugin::check_file(&spec.path)?;
    let known: Option<Arc<PluginInfo>> = registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .find(|r| r.info.path == abs && r.info.sha256 == sha256)
        .map(|r| r.info.clone());
    let info = match known {
        Some(info) => info,
        None => {
            let info = describe_in_child(&spec.path, &abs, launcher)?;
            if let Some(problem) = takes_a_lab_name(&info) {
                return Err(PluginProbeError::Probe {
                    path: spec.path.clone(),
                    problem,
                });
            }
            Arc::new(info)
        }
    };
    let indices: Vec<usize> = match &spec.name {
        Some(name) => vec![
            info.transports
                .iter()
                .position(|t| &t.name == name)
                .ok_or_else(|| PluginLoadError::NoSuchTransport {
                    path: spec.path.clone(),
                    name: name.clone(),
                    known: info
                        .transports
                        .iter()
                        .map(|t| t.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                })?,
        ],
        None => (0..info.transports.len()).collect(),
    };
    let mut out = Vec::new();
    let mut reg = registry().lock().unwrap_or_else(|e| e.into_inner());
    for index in indices {
        let t = &info.transports[index];
        let canonical = PluginSpec::canonical(&info.path, &t.name);
        if !reg.iter().any(|r| r.spec == canonical) {
            // Two files (two builds) with a transport of one name: tell them apart
            // in the points by the start of each file's SHA-256.
            let clash: Vec<usize> = reg
                .iter()
                .enumerate()
                .filter(|(_, r)| r.transport().name == t.name)
                .map(|(i, _)| i)
                .collect();
            if clash.iter().any(|&i| reg[i].info.sha256 == info.sha256) {
                return Err(PluginProbeError::Duplicate {
                    path: spec.path.clone(),
                    name: t.name.clone(),
                });
            }
            let display = if clash.is_empty() {
                t.name.clone()
            } else {
                for &i in &clash {
                    reg[i].display =
                        format!("{}@{}", reg[i].transport().name, &reg[i].info.sha256[..8]);
                }
                format!("{}@{}", t.name, &info.sha256[..8])
            };
            reg.push(Registered {
                descriptor: t.descriptor(canonical.clone()),
                spec: canonical.clone(),
                display,
                info: info.clone(),
                index,
            });
        }
        out.push(canonical);
    }
    Ok(out)
}

/// Runs the [`Role::PluginProbe`] child on `abs` and reads its description.
fn describe_in_child(
    shown: &str,
    abs: &std::path::Path,
    launcher: &Launcher,
) -> Result<PluginInfo, PluginProbeError> {
    let problem = |problem: String| PluginProbeError::Probe {
        path: shown.to_string(),
        problem,
    };
    let mut child = launcher
        .spawn(Role::PluginProbe, [abs.as_os_str()], Streams::OUTPUT)
        .map_err(|e| problem(format!("cannot start the process that describes it: {e}")))?;
    let mut stdout = child.take_stdout().expect("piped stdout");
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.read_to_end(&mut out);
        out
    });
    let Some(ended) = child.exited_within(CHILD_LIMIT) else {
        child.kill();
        return Err(problem(format!(
            "describing it did not finish within {} s (its entry or initialisers hang)",
            CHILD_LIMIT.as_secs()
        )));
    };
    let out = reader.join().unwrap_or_default();
    if ended.success() {
        let mut info: PluginInfo = serde_json::from_slice(&out)
            .map_err(|e| problem(format!("the probe's description does not parse: {e}")))?;
        // The probe opened the file by its absolute path; keep the name given here.
        info.path = abs.to_path_buf();
        return Ok(info);
    }
    if ended.status.code() == Some(PROBE_REFUSED) {
        // The probe said what is wrong, in the loader's words, on its last line.
        let said = ended
            .stderr_tail
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("refused")
            .trim()
            .to_string();
        let said = said
            .strip_prefix(&format!("plugin {}: ", abs.display()))
            .map(str::to_string)
            .unwrap_or(said);
        return Err(problem(said));
    }
    Err(problem(
        format!(
            "loading it crashed the process that describes it: {}",
            ended.status_text()
        ) + &if ended.stderr_tail.is_empty() {
            String::new()
        } else {
            format!(": {}", ended.stderr_tail)
        },
    ))
}

/// A plugin parameter that takes the name of one of the lab's own parameters (an
/// axis, or a workload's parameter), which `-p` routes to the lab: why the plugin is
/// refused.
fn takes_a_lab_name(info: &PluginInfo) -> Option<String> {
    let own = crate::workload::lab_param_names();
    info.transports.iter().find_map(|t| {
        t.params.iter().find(|p| own.contains(&p.name)).map(|p| {
            format!(
                "transport `{}`, parameter `{}`: `{}` is one of xferbench's own axes ({}); rename it",
                t.name,
                p.name,
                p.name,
                own.join(", ")
            )
        })
    })
}

/// The exit status of a probe that refused the plugin (its reason on stderr).
pub const PROBE_REFUSED: i32 = 2;

/// The body of the [`Role::PluginProbe`] child: opens the plugin at `path` and
/// prints its description as JSON. Returns the exit status.
pub fn probe_main(path: &str) -> i32 {
    xferbench_probes::process::die_with_parent();
    may_load_plugins();
    match plugin::load_library(path) {
        Ok(lib) => {
            let json = serde_json::to_string(&lib.info).expect("descriptions serialise");
            println!("{json}");
            0
        }
        Err(e) => {
            eprintln!("{e}");
            PROBE_REFUSED
        }
    }
}

/// The plugin calls `child` is in, asked before a hung child is killed: it is sent
/// [`in_flight::REPORT_SIGNAL`](xferbench_transports::plugin::in_flight) and given up
/// to `within` to write them to its stderr. `None` when it wrote no report (it loaded
/// no plugin, or it has exited); empty when it is in none.
pub fn calls_in_flight(child: &mut Child, within: Duration) -> Option<Vec<String>> {
    use xferbench_transports::plugin::in_flight;
    child.report_on_signal(in_flight::REPORT_SIGNAL, within, in_flight::parse_report)
}

/// The name of `transport` in points and tables: a plugin transport's own name (with
/// its file's SHA-256 prefix when two files name a transport alike), else itself.
pub fn display_name(transport: &str) -> String {
    if is_plugin(transport)
        && let Some(r) = find(transport)
    {
        return r.display;
    }
    transport.to_string()
}

/// A registered plugin transport's description, one line, and whether it has
/// zero-copy.
pub fn describe(spec: &str) -> Option<(String, String, bool)> {
    find(spec).map(|r| {
        let t = r.transport();
        (r.display.clone(), t.description.clone(), t.zero_copy)
    })
}

/// The descriptors of the registered plugin transports (named
/// `plugin:/abs/path:NAME`), for the lab's registry of transports.
pub fn descriptors() -> Vec<Descriptor> {
    registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .map(|r| r.descriptor.clone())
        .collect()
}

/// Every registered plugin transport: (canonical name, display name).
pub fn registered() -> Vec<(String, String)> {
    registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .map(|r| (r.spec.clone(), r.display.clone()))
        .collect()
}

/// What results record of the registered plugin transports among `transports`.
pub fn records<'a>(transports: impl IntoIterator<Item = &'a str>) -> Vec<PluginRecord> {
    let mut seen: BTreeMap<String, PluginRecord> = BTreeMap::new();
    for t in transports {
        if let Some(r) = find(t) {
            seen.entry(r.spec.clone()).or_insert_with(|| PluginRecord {
                transport: r.display.clone(),
                name: r.transport().name.clone(),
                plugin: r.info.name.clone(),
                version: r.info.version.clone(),
                path: r.info.path.display().to_string(),
                sha256: r.info.sha256.clone(),
                abi_version: r.info.abi_version,
            });
        }
    }
    seen.into_values().collect()
}

/// `Ok` when the registered plugin transport `spec` declares that its addresses cross
/// hosts (`XB_REACH_NETWORK`), else the usage error of `--remote` naming it.
pub fn crosses_hosts(spec: &str) -> Result<(), String> {
    ensure_registered(spec);
    match find(spec) {
        Some(r) if r.transport().crosses_hosts => Ok(()),
        Some(r) => Err(format!(
            "--remote: plugin transport `{}` ({}) cannot cross hosts: it does not declare \
             reach = XB_REACH_NETWORK (plugin ABI revision {}; the member came in revision 2), \
             so its addresses are taken as local to this host",
            r.display,
            r.info.path.display(),
            r.info.abi_version
        )),
        None => Err(format!(
            "--remote: plugin transport `{spec}` was not described; it cannot cross hosts"
        )),
    }
}

/// The SHA-256 a registered plugin transport's file had when it was probed.
pub fn sha256_of(spec: &str) -> Option<String> {
    find(spec).map(|r| r.info.sha256.clone())
}

/// Runs the plugin's clean-up hook on `scope` in a fresh child, waiting at most
/// [`CHILD_LIMIT`]. Nothing to do for a plugin without a hook.
pub fn clean_up(launcher: &Launcher, spec: &str, scope: &str) -> Result<(), String> {
    clean_up_in(launcher, spec, scope, |_| {})
}

/// [`clean_up`], with `prepare` applied to the clean-up's command before it starts
/// (to start it in the namespace the visit's processes ran in, say).
pub fn clean_up_in(
    launcher: &Launcher,
    spec: &str,
    scope: &str,
    prepare: impl FnOnce(&mut std::process::Command),
) -> Result<(), String> {
    if find(spec).is_some_and(|r| !r.info.cleanup) {
        return Ok(());
    }
    tracing::debug!(
        transport = spec,
        scope,
        "running the plugin's clean-up hook"
    );
    let mut cmd = launcher
        .command(Role::PluginCleanup, [spec, scope])
        .map_err(|e| e.to_string())?;
    cmd.env(SCOPE_ENV, scope);
    prepare(&mut cmd);
    let mut child = Child::spawn(cmd, Streams::QUIET).map_err(|e| e.to_string())?;
    match child.exited_within(CHILD_LIMIT) {
        Some(e) if e.success() => Ok(()),
        Some(e) => Err(format!("the clean-up of scope {scope} {e}")),
        None => {
            child.kill();
            Err(format!(
                "the clean-up of scope {scope} did not finish within {} s",
                CHILD_LIMIT.as_secs()
            ))
        }
    }
}

/// The body of the [`Role::PluginCleanup`] child. Returns the exit status.
pub fn cleanup_main(spec: &str, scope: &str) -> i32 {
    xferbench_probes::process::die_with_parent();
    may_load_plugins();
    let Some(parsed) = PluginSpec::parse(spec) else {
        eprintln!("clean-up: `{spec}` is not a plugin transport");
        return 2;
    };
    let result = plugin::find(&parsed).and_then(|(lib, _)| plugin::cleanup(&lib, scope));
    match result {
        Ok(_) => 0,
        Err(e) => {
            eprintln!("clean-up: {e}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xferbench_transports::plugin::describe::{ParamInfo, ParamKind};

    fn with_param(name: &str) -> PluginInfo {
        PluginInfo {
            path: "/tmp/libxb_test.so".into(),
            sha256: "0".repeat(64),
            name: "test".into(),
            version: "1".into(),
            abi_version: 1,
            cleanup: false,
            transports: vec![TransportInfo {
                name: "mine".into(),
                description: String::new(),
                max_message: None,
                zero_copy: false,
                crosses_hosts: false,
                params: vec![ParamInfo {
                    name: name.into(),
                    kind: ParamKind::Bool,
                    default: "false".into(),
                    help: String::new(),
                }],
            }],
        }
    }

    #[test]
    fn a_plugin_parameter_may_not_take_a_name_of_the_lab() {
        assert_eq!(takes_a_lab_name(&with_param("depth")), None);
        let e = takes_a_lab_name(&with_param("size")).unwrap();
        assert!(
            e.starts_with("transport `mine`, parameter `size`: `size` is one of xferbench's own axes (transport, size,"),
            "{e}"
        );
        // A workload's parameter, from its declaration.
        for w in crate::workload::WorkloadKind::ALL {
            for d in w.params() {
                assert!(
                    takes_a_lab_name(&with_param(d.name())).is_some(),
                    "{}",
                    d.name
                );
            }
        }
    }
}
