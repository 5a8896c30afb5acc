//! The `xferbench` binary: parses the command line, runs the lab, writes reports.

#[cfg(not(target_os = "linux"))]
compile_error!("xferbench runs on Linux only: the transports and the lab use Linux system calls");

mod ab;
mod check;
mod cli;
mod config;
mod daq;
mod docs;
#[cfg(test)]
mod examples;
mod exit;
mod flags;
mod history;
mod kv;
mod launcher;
mod limits;
mod list;
mod logging;
mod one_point;
mod out;
mod paths;
mod plugin;
mod profile;
mod result_file;
mod rpmsg;
mod run;
mod run_args;
mod serve;
mod stop;
mod study;
mod warp;

use clap::CommandFactory;
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::Cli::parse_args();
    if matches!(cli.command, cli::Command::Serve(_)) {
        logging::init_with(cli.verbose, Some("info"));
    } else {
        logging::init(cli.verbose);
    }
    // A hidden role's parent judges its status itself (it stops some with SIGINT).
    let users_command = !cli.command.is_role();
    let code = match cli.command {
        cli::Command::Peer => {
            let _span = tracing::info_span!("peer", pid = std::process::id()).entered();
            return ExitCode::from(xferbench_lab::peer::serve_stdio() as u8);
        }
        cli::Command::List(args) => list::run(&args, &mut out::stdout()),
        cli::Command::Run(args) => run::run(&args),
        cli::Command::Profile(args) => profile::run(&args),
        cli::Command::Ab(args) => ab::run(&args),
        cli::Command::Compare(args) => ab::compare(&args),
        cli::Command::Limits(args) => limits::run(&args),
        cli::Command::History(cmd) => history::run(&cmd),
        cli::Command::Study(args) => study::run(&args),
        cli::Command::Serve(args) => serve::run(&args),
        cli::Command::RpmsgRemote { name } => {
            let _span = tracing::info_span!("rpmsg-remote", pid = std::process::id()).entered();
            return ExitCode::from(xferbench_lab::rig::rpmsg::serve_remote(&name) as u8);
        }
        cli::Command::MemoryMock { spec_json } => {
            let _span = tracing::info_span!("memory-mock", pid = std::process::id()).entered();
            warp::memory_mock(&spec_json)
        }
        cli::Command::WarpClient { spec_json } => {
            let _span = tracing::info_span!("warp-client", pid = std::process::id()).entered();
            warp::client_process(&spec_json)
        }
        cli::Command::KvServer { spec_json } => {
            let _span = tracing::info_span!("kv-server", pid = std::process::id()).entered();
            kv::server_process(&spec_json)
        }
        cli::Command::KvClient { spec_json } => {
            let _span = tracing::info_span!("kv-client", pid = std::process::id()).entered();
            kv::client_process(&spec_json)
        }
        cli::Command::Kv(cmd) => kv::run(&cmd),
        cli::Command::PerfStatBench { spec_json } => {
            xferbench_probes::process::die_with_parent();
            match xferbench_lab::workload::perf_stat::serve_json(&spec_json) {
                Ok(json) => writeln!(out::stdout(), "{json}")
                    .map(|()| 0)
                    .map_err(Into::into),
                Err(e) => {
                    let _ = writeln!(std::io::stderr(), "error: {e}");
                    Ok(exit::EXIT_USAGE)
                }
            }
        }
        cli::Command::Check(args) => check::run(&args),
        cli::Command::Plugin(cmd) => plugin::run(&cmd),
        cli::Command::PluginProbe { path } => {
            return ExitCode::from(xferbench_lab::plugins::probe_main(&path) as u8);
        }
        cli::Command::PluginDriver { spec_json } => {
            let _span = tracing::info_span!("plugin-driver", pid = std::process::id()).entered();
            return ExitCode::from(xferbench_lab::rig::plugin::driver_main(&spec_json) as u8);
        }
        cli::Command::PluginCleanup { transport, scope } => {
            return ExitCode::from(xferbench_lab::plugins::cleanup_main(&transport, &scope) as u8);
        }
        cli::Command::CheckOne { spec_json } => {
            let _span = tracing::info_span!("check", pid = std::process::id()).entered();
            return ExitCode::from(xferbench_lab::check::check_main(&spec_json) as u8);
        }
        cli::Command::Warp(cmd) => warp::run(&cmd),
        cli::Command::Rpmsg(args) => rpmsg::run(&args),
        cli::Command::Daq(args) => daq::run(&args),
        cli::Command::Completions(args) => {
            docs::completions(&args, cli::Cli::command(), &mut out::stdout())
        }
        cli::Command::Man(args) => docs::man(&args, cli::Cli::command(), &mut out::stdout()),
    };
    // What is still buffered goes out now, where a failure can still be reported.
    let code = code.and_then(|c| out::flush().map(|()| c).map_err(Into::into));
    // A command stopped by a signal exits 128 + N whatever it did after it: kept its
    // finished results, or failed because the signal cut something short.
    let code = match code {
        Ok(c) if users_command && stop::received() && c < 128 => Ok(stop::interrupted_status()),
        Err(e) if users_command && stop::received() && !out::is_closed(&e) => {
            let _ = writeln!(std::io::stderr(), "error: {}", exit::chain(&e));
            Ok(stop::interrupted_status())
        }
        code => code,
    };
    match code {
        Ok(c) => ExitCode::from(c),
        Err(e) if out::is_closed(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {}", exit::chain(&e));
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;
    use std::collections::BTreeMap;

    /// Every visible subcommand, recursively, with its path (`warp client`).
    fn subcommands(cmd: &clap::Command, path: &str, out: &mut Vec<(String, clap::Command)>) {
        for sub in cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        {
            let p = format!("{path} {}", sub.get_name()).trim().to_string();
            out.push((p.clone(), sub.clone()));
            subcommands(sub, &p, out);
        }
    }

    fn all_subcommands() -> Vec<(String, clap::Command)> {
        let mut cmd = super::cli::Cli::command();
        cmd.build();
        let mut out = Vec::new();
        subcommands(&cmd, "", &mut out);
        out
    }

    /// The user's flags of a subcommand: visible, and not clap's help/version.
    fn flags(cmd: &clap::Command) -> impl Iterator<Item = &clap::Arg> {
        cmd.get_arguments().filter(|a| {
            !a.is_hide_set()
                && !a.is_positional()
                && !matches!(a.get_id().as_str(), "help" | "version")
        })
    }

    fn takes_value(a: &clap::Arg) -> bool {
        a.get_action().takes_values()
    }

    fn first_line(help: Option<&clap::builder::StyledStr>) -> String {
        help.map(|h| h.to_string())
            .unwrap_or_default()
            .lines()
            .next()
            .unwrap_or("")
            .to_string()
    }

    #[test]
    fn a_negative_number_is_always_a_flags_value_never_an_unknown_argument() {
        let mut root = super::cli::Cli::command_line();
        root.build();
        let mut subs = Vec::new();
        subcommands(&root, "", &mut subs);
        let mut checked = 0;
        for (path, cmd) in &subs {
            for a in cmd
                .get_arguments()
                .filter(|a| !a.is_positional() && takes_value(a))
            {
                let mut argv = vec!["xferbench".to_string()];
                argv.extend(path.split(' ').map(String::from));
                let long = a.get_long().expect("a long name");
                // A flag whose value is optional takes it only as `--flag=VALUE`.
                if a.get_num_args().is_some_and(|n| n.min_values() == 0) {
                    argv.push(format!("--{long}=-5"));
                } else {
                    argv.extend([format!("--{long}"), "-5".into()]);
                }
                if let Err(e) = root.clone().try_get_matches_from(&argv) {
                    assert!(
                        !matches!(
                            e.kind(),
                            clap::error::ErrorKind::UnknownArgument
                                | clap::error::ErrorKind::NoEquals
                        ),
                        "{argv:?}: {e}"
                    );
                }
                checked += 1;
            }
        }
        assert!(checked > 40, "only {checked} flags checked");
    }

    #[test]
    fn every_duration_flag_reads_units_and_bare_seconds() {
        let mut root = super::cli::Cli::command_line();
        root.build();
        let mut subs = Vec::new();
        subcommands(&root, "", &mut subs);
        let mut checked = Vec::new();
        for (path, cmd) in &subs {
            for a in flags(cmd) {
                let names = a.get_value_names().unwrap_or_default();
                assert!(
                    !names
                        .iter()
                        .any(|n| n.as_str() == "S" || n.as_str() == "SECONDS"),
                    "{path} --{}: a duration is a DURATION",
                    a.get_long().unwrap_or_default()
                );
                if !names.iter().any(|n| n.as_str() == "DURATION") {
                    continue;
                }
                let long = a.get_long().expect("a long name");
                let argv = |value: &str| {
                    let mut v = vec!["xferbench".to_string()];
                    v.extend(path.split(' ').map(String::from));
                    v.push(format!("--{long}={value}"));
                    v
                };
                for value in ["250ms", "1s", "2m", "0.5", "10"] {
                    if let Err(e) = root.clone().try_get_matches_from(argv(value)) {
                        assert!(
                            !matches!(
                                e.kind(),
                                clap::error::ErrorKind::ValueValidation
                                    | clap::error::ErrorKind::InvalidValue
                            ),
                            "{path} --{long}={value}: {e}"
                        );
                    }
                }
                let e = root
                    .clone()
                    .try_get_matches_from(argv("a fortnight"))
                    .unwrap_err();
                assert!(e.to_string().contains(&format!("--{long}")), "{e}");
                checked.push(format!("{path} --{long}"));
            }
        }
        for want in [
            "run --duration",
            "run --timeout",
            "rpmsg --timeout",
            "study --timeout",
            "profile --duration",
            "kv serve --timeout",
            "kv client --timeout",
            "warp client --timeout",
        ] {
            assert!(checked.iter().any(|c| c == want), "{want}: {checked:?}");
        }
    }

    #[test]
    fn every_letter_and_long_name_means_one_thing_across_the_tool() {
        let mut letters: BTreeMap<char, BTreeMap<String, Vec<String>>> = BTreeMap::new();
        let mut kinds: BTreeMap<String, BTreeMap<bool, Vec<String>>> = BTreeMap::new();
        let mut helps: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
        for (path, cmd) in all_subcommands() {
            for a in flags(&cmd) {
                let long = a
                    .get_long()
                    .expect("every flag has a long name")
                    .to_string();
                let shorts = a
                    .get_short()
                    .into_iter()
                    .chain(a.get_visible_short_aliases().unwrap_or_default());
                for s in shorts {
                    letters
                        .entry(s)
                        .or_default()
                        .entry(long.clone())
                        .or_default()
                        .push(path.clone());
                }
                let aliases = a.get_all_aliases().unwrap_or_default();
                let names =
                    std::iter::once(long.clone()).chain(aliases.iter().map(|s| s.to_string()));
                for n in names {
                    kinds
                        .entry(n)
                        .or_default()
                        .entry(takes_value(a))
                        .or_default()
                        .push(path.clone());
                }
                helps
                    .entry(long)
                    .or_default()
                    .push((path.clone(), first_line(a.get_help())));
            }
        }
        // Subcommands that reproduce an original program's flags keep its letters:
        // `kv serve -n WORKERS` is the original server's `-n` (elsewhere `-n` is
        // `--count`).
        const ORIGINAL_FLAGS: [(char, &str, &str); 1] = [('n', "workers", "kv serve")];
        for (letter, long, path) in ORIGINAL_FLAGS {
            let by_long = letters.get_mut(&letter).expect("the letter is used");
            assert_eq!(
                by_long.remove(long),
                Some(vec![path.to_string()]),
                "-{letter} --{long} is exempt in `{path}` only"
            );
        }
        for (letter, longs) in &letters {
            assert_eq!(
                longs.len(),
                1,
                "-{letter} means more than one thing: {longs:?}"
            );
        }
        for (name, by_kind) in &kinds {
            assert_eq!(
                by_kind.len(),
                1,
                "--{name} is a flag in some subcommands and takes a value in others: {by_kind:?}"
            );
        }
        assert!(helps.values().all(|h| !h.is_empty()));
        // The shared letters keep their meaning.
        for (letter, long) in [
            ('t', "transport"),
            ('s', "size"),
            ('c', "channels"),
            ('n', "count"),
            ('d', "duration"),
            ('r', "runs"),
            ('w', "warmup"),
            ('p', "param"),
            ('q', "quiet"),
        ] {
            assert!(
                letters[&letter].contains_key(long),
                "-{letter}: {:?}",
                letters[&letter]
            );
        }
    }

    /// docs/cli.md, from the clap definitions and the exit statuses of exit.rs.
    fn cli_markdown() -> String {
        let mut md = String::from(
            "# Command-line reference\n\n\
             <!-- Generated from the clap definitions by `cargo test -p xferbench`; \
             do not edit. Rewrite with `XFERBENCH_UPDATE_DOCS=1 cargo test -p xferbench \
             cli_md`. -->\n\n\
             Every letter and long name means the same in every subcommand (a test \
             enforces it), except where a subcommand reproduces an original program's \
             command line and keeps its letters: `kv serve -n` is `--workers`, the \
             original server's `-n` (elsewhere `-n` is `--count`). Flags with an optional value take it after `=` only \
             (`--counters=callgrind`, `--profile=DIR`), so that the next word is never \
             taken as their value. `--json` prints one JSON document on stdout; JSON Lines \
             only come from `--jsonl`.\n\n\
             **Point numbers.** The terminal, error messages, warnings and Markdown reports \
             say \"point N\" counting from 1, in the order the points run; the result \
             files' `index` field and `--profile` folders (`point-I`) count from 0, so \
             point N is `index` N − 1.\n\n\
             **Warnings.** The terminal prints one line per cause (`noisy`, `contended`, \
             `machine changed during measurement`, …) with the points it covers (`at \
             points 1–7, 9–12 of 12`) and the detail they share, or one point's as an \
             example; every point's own warnings are in the result document and its \
             exports.\n",
        );
        md.push_str(
            "\n## What `--json` prints\n\n\
             One JSON document on stdout, pretty-printed.\n\n\
             | subcommand | document |\n|---|---|\n\
             | `run` | the result document, as `--export-json` writes it ([results-schema.md](results-schema.md)) |\n\
             | `rpmsg` | the result document of its one point, as `--export-json` writes it; `--jsonl FILE` (`-`: stdout) writes one JSON line per run |\n\
             | `study NAME` | the study's result document, as its `results.json` (the folder is written too) |\n\
             | `ab` | the comparison, as `--export-json` writes it |\n\
             | `compare` | the point-by-point comparison |\n\
             | `history list` | the recorded runs, newest first ([schema](schema/history-list.schema.json)) |\n\
             | `history show ID` | one run: its context and every point's primary figure ([schema](schema/history-show.schema.json)) |\n\
             | `history trend` | one point's figure across runs ([schema](schema/history-trend.schema.json)) |\n\
             | `history baseline list` | the baselines and their runs ([schema](schema/history-baselines.schema.json)) |\n\
             | `profile` | a summary: `title`, `dir`, `outputs` (files written), `perf_data`, `stacks`, `sampled_cpu_ns`, `top_functions` (the first 20) |\n\
             | `warp client` | the client's result; with `--instances K` > 1, an array of K results |\n\
             | `list` | transports, workloads, parameters and studies |\n",
        );
        md.push_str("\n## Letters\n\n| short | long | subcommands |\n|---|---|---|\n");
        let mut letters: BTreeMap<(char, String), Vec<String>> = BTreeMap::new();
        let subs = all_subcommands();
        for (path, cmd) in &subs {
            for a in flags(cmd) {
                if let Some(s) = a.get_short() {
                    let long = a.get_long().unwrap_or_default().to_string();
                    letters
                        .entry((s, long))
                        .or_default()
                        .push(format!("`{path}`"));
                }
            }
        }
        for ((s, l), paths) in &letters {
            md.push_str(&format!("| `-{s}` | `--{l}` | {} |\n", paths.join(", ")));
        }
        md.push_str("\n## Flags\n");
        for (path, cmd) in &subs {
            if cmd.has_subcommands() {
                continue;
            }
            md.push_str(&format!(
                "\n### `xferbench {path}`\n\n{}\n\n\
                 | short | long | value | default | meaning |\n|---|---|---|---|---|\n",
                first_line(cmd.get_about())
            ));
            for a in cmd
                .get_arguments()
                .filter(|a| !a.is_hide_set() && !matches!(a.get_id().as_str(), "help" | "version"))
            {
                let short = a.get_short().map(|s| format!("`-{s}`")).unwrap_or_default();
                let mut long = match a.get_long() {
                    Some(l) => format!("`--{l}`"),
                    None => format!("`{}` (positional)", a.get_value_names().map_or_else(
                        || a.get_id().to_string().to_uppercase(),
                        |v| v.join(" "),
                    )),
                };
                for alias in a.get_visible_aliases().unwrap_or_default() {
                    long.push_str(&format!(", `--{alias}`"));
                }
                let value = if !takes_value(a) {
                    String::new()
                } else {
                    let pv = a.get_possible_values();
                    let v = if !pv.is_empty() && pv.len() <= 8 {
                        pv.iter()
                            .map(|p| p.get_name())
                            .collect::<Vec<_>>()
                            .join("\\|")
                    } else {
                        a.get_value_names()
                            .map_or_else(|| "VALUE".into(), |v| v.join(" "))
                    };
                    let optional = a.get_num_args().is_some_and(|n| n.min_values() == 0);
                    if optional {
                        format!("`[={v}]`")
                    } else {
                        format!("`{v}`")
                    }
                };
                let default = if !takes_value(a) {
                    String::new()
                } else if a.get_default_values().is_empty() {
                    // A default the code applies itself is written in the long help
                    // as a paragraph of its own, `[default: ...]`, as clap writes one.
                    a.get_long_help()
                        .map(|h| h.to_string())
                        .unwrap_or_default()
                        .lines()
                        .filter_map(|l| l.trim().strip_prefix("[default: "))
                        .filter_map(|l| l.strip_suffix(']'))
                        .map(|d| format!("`{d}`"))
                        .next()
                        .unwrap_or_default()
                } else {
                    a.get_default_values()
                        .iter()
                        .map(|d| format!("`{}`", d.to_string_lossy()))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let meaning = a
                    .get_help()
                    .map(|h| h.to_string())
                    .unwrap_or_default()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
                    .replace('|', "\\|");
                md.push_str(&format!(
                    "| {short} | {long} | {value} | {default} | {meaning} |\n"
                ));
            }
        }
        md.push_str("\n## Exit statuses\n\nThe same for every subcommand.\n\n");
        for line in include_str!("exit.rs").lines() {
            if let Some(row) = line.strip_prefix("//! |") {
                md.push('|');
                md.push_str(&row.replace(" ([`crate::stop`])", ""));
                md.push('\n');
            }
        }
        md
    }

    #[test]
    fn cli_md_is_generated_from_the_clap_definitions() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/cli.md");
        let want = cli_markdown();
        if std::env::var_os("XFERBENCH_UPDATE_DOCS").is_some() {
            std::fs::write(&path, &want).unwrap();
            return;
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "docs/cli.md is out of date with the clap definitions; rewrite it with \
             `XFERBENCH_UPDATE_DOCS=1 cargo test -p xferbench cli_md` and commit it"
        );
    }

    #[test]
    fn the_cli_definition_is_consistent() {
        super::cli::Cli::command().debug_assert();
    }

    #[test]
    fn every_visible_subcommand_shows_examples_in_its_help() {
        let subs = all_subcommands();
        assert!(
            subs.len() >= 12,
            "{:?}",
            subs.iter().map(|s| &s.0).collect::<Vec<_>>()
        );
        for (path, mut sub) in subs {
            let help = sub.render_long_help().to_string();
            assert!(
                help.contains("Examples:"),
                "`xferbench {path} --help` has no examples"
            );
            assert!(
                help.contains(&format!("xferbench {path}")),
                "`xferbench {path} --help` has no example of itself:\n{help}"
            );
        }
    }

    #[test]
    fn the_launcher_starts_every_role_with_its_hidden_subcommand() {
        let launcher = super::launcher::launcher().unwrap();
        let names: Vec<String> = super::cli::Cli::command()
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        for role in xferbench_probes::process::Role::ALL {
            let cmd = launcher.command(role, ["DATA"]).unwrap();
            let args: Vec<String> = cmd
                .get_args()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            assert_eq!(args.len(), 2, "{role:?}: {args:?}");
            assert!(names.contains(&args[0]), "{role:?}: {args:?}");
            assert_eq!(args[1], "DATA");
        }
    }
}
