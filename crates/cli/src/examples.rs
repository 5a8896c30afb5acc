//! Every example command line in every `--help`, in the README, in CONTRIBUTING.md
//! and in every page of `docs/` parses, and passes the checks its subcommand makes
//! before it runs (`run`'s whole configuration, `rpmsg`'s point); the cheap ones
//! (`list`, `completions`, `man`) run, into memory.

use crate::cli::{Cli, Command};
use clap::{CommandFactory, FromArgMatches};
use std::path::{Path, PathBuf};

/// One example: where it is written and its words.
#[derive(Debug, Clone)]
pub struct Example {
    pub origin: String,
    pub argv: Vec<String>,
}

/// Words that end the command: pipes, redirections, lists.
fn ends_command(word: &str) -> bool {
    matches!(word, "|" | "||" | "&&" | ";" | "&")
        || word.starts_with('>')
        || word.starts_with("2>")
        || word.starts_with('#')
}

/// The words of a command line as the shell splits them, up to the first pipe,
/// redirection or comment; `None` when it is not an xferbench command line or uses
/// shell expansion (`$((...))`, `$VAR`).
pub fn words(line: &str) -> Option<Vec<String>> {
    let line = line.trim().strip_prefix("$ ").unwrap_or(line.trim());
    let line = line
        .strip_prefix("cargo run --release -- ")
        .map(|rest| format!("xferbench {rest}"))
        .unwrap_or_else(|| line.to_string());
    if !line.starts_with("xferbench ") {
        return None;
    }
    let all = shlex::split(&line)?;
    let argv: Vec<String> = all.into_iter().take_while(|w| !ends_command(w)).collect();
    // Shell expansion, and synopses (`[--listen ADDR]`), are not examples.
    if argv.iter().any(|w| w.contains('$') || w.starts_with('[')) {
        return None;
    }
    Some(argv)
}

/// A word that stands for what the reader fills in (`HOST`, `CMD_A`, `<name>`,
/// `…`): the line is a synopsis, not an example.
fn placeholder(word: &str) -> bool {
    let letters = word.chars().filter(|c| c.is_ascii_alphabetic()).count();
    (letters >= 2
        && !word
            .chars()
            .any(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && !word.starts_with('-'))
        || word.contains('…')
        || word.contains('<')
        || word.contains('[')
        || word.contains("\\|")
}

/// The command lines in a line of prose: inline code spans (`` `xferbench run …` ``)
/// that give options and no placeholder. A bare `xferbench list` names a
/// subcommand; `xferbench run -t shm -s 64` is an example.
fn from_prose(line: &str) -> Vec<Vec<String>> {
    let parts: Vec<&str> = line.split('`').collect();
    // Spans closed on this line: an odd part followed by another part.
    let closed = parts.len() - usize::from(parts.len().is_multiple_of(2));
    parts[..closed]
        .iter()
        .skip(1)
        .step_by(2)
        .filter_map(|span| words(span))
        .filter(|argv| argv.iter().any(|w| w.starts_with('-')))
        .filter(|argv| !argv.iter().any(|w| placeholder(w)))
        .collect()
}

/// The command lines of a Markdown text's code blocks (joined over `\` line ends),
/// and those of its prose (`from_prose`).
pub fn from_markdown(origin: &str, text: &str) -> Vec<Example> {
    let mut out = Vec::new();
    let mut in_code = false;
    let mut pending = String::new();
    let mut start = 0;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if !in_code {
            out.extend(from_prose(line).into_iter().map(|argv| Example {
                origin: format!("{origin}:{}", i + 1),
                argv,
            }));
            continue;
        }
        if pending.is_empty() {
            start = i + 1;
        }
        if let Some(head) = line.strip_suffix('\\') {
            pending.push_str(head);
            pending.push(' ');
            continue;
        }
        pending.push_str(line);
        if let Some(argv) = words(&pending) {
            out.push(Example {
                origin: format!("{origin}:{start}"),
                argv,
            });
        }
        pending.clear();
    }
    out
}

/// The examples of every subcommand's `--help` (the lines after `Examples:`).
pub fn from_help() -> Vec<Example> {
    fn walk(cmd: &mut clap::Command, path: &str, out: &mut Vec<Example>) {
        let help = cmd.render_long_help().to_string();
        let mut in_examples = false;
        let mut pending = String::new();
        for line in help.lines() {
            if line.trim_end() == "Examples:" {
                in_examples = true;
                continue;
            }
            if in_examples && !line.starts_with(' ') {
                in_examples = false;
            }
            if !in_examples {
                continue;
            }
            if let Some(head) = line.trim_end().strip_suffix('\\') {
                pending.push_str(head);
                pending.push(' ');
                continue;
            }
            pending.push_str(line);
            if let Some(argv) = words(&pending) {
                out.push(Example {
                    origin: format!("`xferbench {path} --help`").replace("  ", " "),
                    argv,
                });
            }
            pending.clear();
        }
        let names: Vec<String> = cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .map(|s| s.get_name().to_string())
            .collect();
        for name in names {
            let sub = cmd.find_subcommand_mut(&name).expect("listed");
            walk(sub, format!("{path} {name}").trim(), out);
        }
    }
    let mut cmd = Cli::command();
    cmd.build();
    let mut out = Vec::new();
    walk(&mut cmd, "", &mut out);
    out
}

/// The repository's Markdown pages: the README, CONTRIBUTING.md, and every page
/// under `docs/`.
pub fn pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut pages = vec![root.join("README.md"), root.join("CONTRIBUTING.md")];
    let mut dirs = vec![root.join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir)
            .expect("docs/ is readable")
            .flatten()
        {
            let p = entry.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|e| e == "md")
                && !p.starts_with(root.join("docs/data"))
            {
                pages.push(p);
            }
        }
    }
    pages.sort();
    pages
}

/// Every example of the help texts and the pages.
pub fn all() -> Vec<Example> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut all = from_help();
    for page in pages() {
        let text = std::fs::read_to_string(&page).expect("page readable");
        let name = page
            .strip_prefix(&root)
            .unwrap_or(&page)
            .display()
            .to_string();
        all.extend(from_markdown(&name, &text));
    }
    all
}

/// Why the example would be refused before it runs, if it would. An example that
/// names a plugin library (`plugin:./libxb_pipe.so`) is accepted when the only
/// complaint is that the library is not there: the reader builds it first, as the
/// page around the example says.
pub fn check(argv: &[String]) -> Result<(), String> {
    match check_argv(argv) {
        Err(e) if e.contains(": plugin ") && e.ends_with(": no such file") => Ok(()),
        r => r,
    }
}

fn check_argv(argv: &[String]) -> Result<(), String> {
    let mut matches = match Cli::command_line().try_get_matches_from(argv) {
        Ok(m) => m,
        Err(e)
            if matches!(
                e.kind(),
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
            ) =>
        {
            return Ok(());
        }
        Err(e) => return Err(e.to_string()),
    };
    let cli = Cli::from_arg_matches_mut(&mut matches).map_err(|e| e.to_string())?;
    match &cli.command {
        Command::Run(args) => {
            match crate::config::RunConfig::from_args(args, crate::launcher::launcher) {
                // `--token-file ~/.xferbench-token` is the user's own file (docs/remote.md).
                Err(e) if format!("{e:#}").contains("cannot read the token file") => Ok(()),
                r => r.map(drop).map_err(|e| format!("{e:#}")),
            }
        }
        Command::Rpmsg(args) => crate::rpmsg::point(args).map(drop),
        // The cheap ones run, into memory.
        Command::List(args) => crate::list::run(args, &mut Vec::new())
            .map(drop)
            .map_err(|e| format!("{e:#}")),
        Command::Completions(args) => {
            crate::docs::completions(args, Cli::command(), &mut Vec::new())
                .map(drop)
                .map_err(|e| format!("{e:#}"))
        }
        Command::Man(args) if args.out.is_none() => {
            crate::docs::man(args, Cli::command(), &mut Vec::new())
                .map(drop)
                .map_err(|e| format!("{e:#}"))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_stop_at_pipes_redirections_and_comments() {
        assert_eq!(
            words("$ xferbench list --json | jq .transports  # names").unwrap(),
            ["xferbench", "list", "--json"]
        );
        assert_eq!(
            words("xferbench completions bash > ~/x").unwrap(),
            ["xferbench", "completions", "bash"]
        );
        assert_eq!(
            words("cargo run --release -- run stream -t pipe").unwrap(),
            ["xferbench", "run", "stream", "-t", "pipe"]
        );
        assert!(words("cargo test --workspace").is_none());
        assert!(words("xferbench daq b0 -S $((100*300000))").is_none());
        assert!(words("xferbench warp serve [--listen ADDR]").is_none());
    }

    #[test]
    fn prose_gives_the_command_lines_of_its_code_spans_not_its_synopses() {
        let page = "Run `xferbench run stream -t shm -s 64 -p wait=spin` twice; \
                    `xferbench list` lists, `xferbench profile -- CMD` profiles, \
                    `xferbench run stream\\|pingpong -t tcp --remote HOST[:PORT]` crosses, \
                    `xferbench study x --profile[=DIR]` profiles, `xferbench warp serve --port\n\
                    23115` is cut.\n\
                    ```sh\nxferbench limits --json\n```\n";
        let argvs: Vec<String> = from_markdown("p.md", page)
            .into_iter()
            .map(|e| format!("{} {}", e.origin, e.argv.join(" ")))
            .collect();
        assert_eq!(
            argvs,
            [
                "p.md:1 xferbench run stream -t shm -s 64 -p wait=spin",
                "p.md:4 xferbench limits --json"
            ]
        );
    }

    #[test]
    fn every_example_in_the_help_readme_and_docs_is_accepted() {
        let all = all();
        assert!(all.len() > 60, "only {} examples found", all.len());
        let refused: Vec<String> = all
            .iter()
            .filter_map(|ex| {
                check(&ex.argv)
                    .err()
                    .map(|e| format!("{}: {}\n  {}", ex.origin, ex.argv.join(" "), e.trim()))
            })
            .collect();
        assert!(
            refused.is_empty(),
            "{} of {} examples are refused:\n{}",
            refused.len(),
            all.len(),
            refused.join("\n")
        );
    }
}
