//! `xferbench plugin`: a start for plugin authors.
//!
//! - `plugin new NAME --lang c|rust` writes a stub plugin that builds as written and
//!   passes `xferbench check`: a real transport (Unix-domain `SOCK_SEQPACKET` sockets
//!   in the abstract namespace, since the checks run the two sides in two processes),
//!   its comments marking where the author's code goes. The stubs are the files
//!   under `crates/cli/templates/`, embedded in the binary.
//! - `plugin sdk --prefix DIR` installs what a plugin outside this repository builds
//!   against: the C header, a pkg-config file for it, and a copy of the Rust crate
//!   `xferbench-plugin` with a Cargo.toml of its own. Every file is embedded from the
//!   repository itself (`include_str!` of the real paths), so the SDK cannot drift
//!   from the header and the crate xferbench is built with.

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand, ValueEnum};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The version of xferbench, of its header and of the crate copy.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// `xferbench plugin`.
#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// Write a stub plugin in C or Rust that builds and passes `xferbench check`,
    /// with comments marking where your transport's code goes.
    #[command(after_help = "\
The stub moves messages over Unix-domain SOCK_SEQPACKET sockets (abstract addresses: nothing \
is left behind). It prints the commands that build and check it, and a CI step.

Examples:
  xferbench plugin sdk --prefix ~/.local
  xferbench plugin new my-link --lang c
  xferbench plugin new my-link --lang rust --sdk ~/.local --dir ~/src/my-link")]
    New(NewArgs),
    /// Install the plugin SDK: the C header, a pkg-config file, and the Rust crate
    /// `xferbench-plugin` as a folder to depend on by path.
    #[command(after_help = "\
Writes PREFIX/include/xferbench/plugin.h, PREFIX/lib/pkgconfig/xferbench-plugin.pc and \
PREFIX/share/xferbench/rust/xferbench-plugin/ (a crate with a Cargo.toml of its own), all of \
this xferbench's version. Writing it again replaces them.

Examples:
  xferbench plugin sdk --prefix ~/.local
  PKG_CONFIG_PATH=~/.local/lib/pkgconfig pkg-config --cflags xferbench-plugin")]
    Sdk(SdkArgs),
}

/// The language of a stub.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Lang {
    /// One C file and a Makefile (the header through pkg-config).
    C,
    /// A cdylib crate using the `xferbench-plugin` crate.
    Rust,
}

/// `xferbench plugin new`.
#[derive(Debug, Args)]
pub struct NewArgs {
    /// The plugin's name: a letter, then letters, digits, `_` or `-`, at most 32 bytes.
    /// It names the folder, the library (libNAME.so, with `-` as `_`) and the transport
    /// (in lower case).
    pub name: String,
    /// The language of the stub.
    #[arg(long, value_enum)]
    pub lang: Lang,
    /// The folder to write, which must not exist or be empty [default: ./NAME].
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// The prefix of an SDK written by `xferbench plugin sdk`: a Rust stub depends on
    /// its crate copy, a C stub's printed commands name its pkg-config folder. Without
    /// it a Rust stub gets a copy of the crate in DIR/vendor/.
    #[arg(long, value_name = "PREFIX")]
    pub sdk: Option<PathBuf>,
}

/// `xferbench plugin sdk`.
#[derive(Debug, Args)]
pub struct SdkArgs {
    /// Where to install: include/, lib/pkgconfig/ and share/xferbench/ below it.
    #[arg(long, value_name = "DIR")]
    pub prefix: PathBuf,
}

/// Runs `xferbench plugin ...` and returns the exit status.
pub fn run(cmd: &PluginCommand) -> Result<u8> {
    let mut out = crate::out::stdout();
    match cmd {
        PluginCommand::New(args) => new(args, &mut out),
        PluginCommand::Sdk(args) => sdk(args, &mut out),
    }
}

// ---- the SDK -------------------------------------------------------------------

/// The C header, as xferbench is built with it.
const HEADER: &str = include_str!("../../../include/xferbench/plugin.h");

/// The sources of the crate `xferbench-plugin`, as xferbench is built with them:
/// (path in the crate, text). A test holds this list to `crates/plugin/src/`.
const PLUGIN_CRATE_SOURCES: &[(&str, &str)] = &[
    ("src/lib.rs", include_str!("../../plugin/src/lib.rs")),
    ("src/abi.rs", include_str!("../../plugin/src/abi.rs")),
    ("src/api.rs", include_str!("../../plugin/src/api.rs")),
    ("src/glue.rs", include_str!("../../plugin/src/glue.rs")),
    ("src/params.rs", include_str!("../../plugin/src/params.rs")),
];

/// The Rust edition, minimum Rust version and licence of the workspace, which
/// `crates/plugin` inherits; a test holds them to the workspace's Cargo.toml.
const EDITION: &str = "2024";
const RUST_VERSION: &str = "1.89";
const LICENSE: &str = "MIT OR Apache-2.0";

/// Where the SDK's parts lie below its prefix.
const HEADER_PATH: &str = "include/xferbench/plugin.h";
const PC_PATH: &str = "lib/pkgconfig/xferbench-plugin.pc";
const CRATE_PATH: &str = "share/xferbench/rust/xferbench-plugin";

/// The crate copy's Cargo.toml: the package of `crates/plugin/Cargo.toml`, with
/// what it inherits from the workspace written out.
fn plugin_crate_manifest() -> String {
    format!(
        "# The crate xferbench-plugin of xferbench {VERSION}, written by `xferbench plugin sdk`.\n\
         # Depend on it by path: xferbench-plugin = {{ path = \"...\" }}\n\
         [package]\n\
         name = \"xferbench-plugin\"\n\
         version = \"{VERSION}\"\n\
         edition = \"{EDITION}\"\n\
         rust-version = \"{RUST_VERSION}\"\n\
         license = \"{LICENSE}\"\n\
         description = \"Write an xferbench transport plugin in Rust: a safe trait and one export macro over the C ABI of xferbench/plugin.h\"\n\
         \n\
         [lints.rust]\n\
         unsafe_op_in_unsafe_fn = \"deny\"\n\
         \n\
         [dependencies]\n"
    )
}

/// The pkg-config file of an SDK at `prefix` (absolute).
fn pc_file(prefix: &str) -> String {
    format!(
        "# The xferbench plugin SDK, written by `xferbench plugin sdk`.\n\
         prefix={prefix}\n\
         includedir=${{prefix}}/include\n\
         \n\
         Name: xferbench-plugin\n\
         Description: The C header of xferbench transport plugins (xferbench/plugin.h)\n\
         Version: {VERSION}\n\
         Cflags: -I${{includedir}}\n"
    )
}

fn write_file(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the folder {}", dir.display()))?;
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// Writes the crate copy into `dir` (replacing an earlier copy's sources).
fn write_plugin_crate(dir: &Path) -> Result<()> {
    let src = dir.join("src");
    if src.is_dir() {
        std::fs::remove_dir_all(&src)
            .with_context(|| format!("cannot replace the earlier copy in {}", src.display()))?;
    }
    write_file(&dir.join("Cargo.toml"), &plugin_crate_manifest())?;
    for (path, text) in PLUGIN_CRATE_SOURCES {
        write_file(&dir.join(path), text)?;
    }
    Ok(())
}

/// An absolute, normalised form of `dir`, which exists.
fn absolute_dir(dir: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the folder {}", dir.display()))?;
    std::fs::canonicalize(dir).with_context(|| format!("cannot resolve {}", dir.display()))
}

/// Refuses a prefix a pkg-config file cannot name.
fn check_prefix(prefix: &Path) -> Result<&str> {
    let text = prefix.to_str().with_context(|| {
        format!(
            "--prefix {}: not valid UTF-8, which pkg-config files and Cargo.toml need",
            prefix.display()
        )
    })?;
    if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        bail!(
            "--prefix {text:?}: pkg-config cannot name a folder with spaces or control characters; choose another"
        );
    }
    Ok(text)
}

fn sdk(args: &SdkArgs, out: &mut dyn Write) -> Result<u8> {
    if let Err(e) = check_prefix(&args.prefix) {
        return Ok(crate::exit::usage("plugin sdk", e));
    }
    if args.prefix.exists() && !args.prefix.is_dir() {
        return Ok(crate::exit::usage(
            "plugin sdk",
            format!("--prefix {}: not a folder", args.prefix.display()),
        ));
    }
    let prefix = absolute_dir(&args.prefix)?;
    let text = match check_prefix(&prefix) {
        Ok(t) => t.to_string(),
        Err(e) => return Ok(crate::exit::usage("plugin sdk", e)),
    };
    write_file(&prefix.join(HEADER_PATH), HEADER)?;
    write_file(&prefix.join(PC_PATH), &pc_file(&text))?;
    let crate_dir = prefix.join(CRATE_PATH);
    write_plugin_crate(&crate_dir)?;
    writeln!(
        out,
        "wrote the plugin SDK of xferbench {VERSION} to {text}:"
    )?;
    writeln!(out, "  {HEADER_PATH}")?;
    writeln!(out, "  {PC_PATH}")?;
    writeln!(out, "  {CRATE_PATH}/  (the Rust crate)")?;
    writeln!(out)?;
    writeln!(out, "C:     export PKG_CONFIG_PATH={text}/lib/pkgconfig")?;
    writeln!(
        out,
        "       cc -shared -fPIC -O2 $(pkg-config --cflags xferbench-plugin) -o libmine.so mine.c"
    )?;
    writeln!(
        out,
        "Rust:  xferbench-plugin = {{ version = \"{VERSION}\", path = {} }}",
        toml_string(&crate_dir.display().to_string())
    )?;
    writeln!(
        out,
        "Start: xferbench plugin new NAME --lang c|rust --sdk {}",
        quote(&text)
    )?;
    Ok(0)
}

// ---- a new plugin ----------------------------------------------------------------

/// The C stub: (file name, text).
const C_TEMPLATES: &[(&str, &str)] = &[
    ("{{ident}}.c", include_str!("../templates/c/plugin.c")),
    ("Makefile", include_str!("../templates/c/Makefile")),
];

/// The Rust stub: (file name, text).
const RUST_TEMPLATES: &[(&str, &str)] = &[
    ("Cargo.toml", include_str!("../templates/rust/Cargo.toml")),
    ("src/lib.rs", include_str!("../templates/rust/src/lib.rs")),
];

/// The longest plugin name: a transport name's limit.
const NAME_MAX: usize = 32;

/// Words a Rust package cannot be named.
const RUST_RESERVED: &[&str] = &[
    "abstract",
    "as",
    "async",
    "await",
    "become",
    "box",
    "break",
    "const",
    "continue",
    "crate",
    "do",
    "dyn",
    "else",
    "enum",
    "extern",
    "false",
    "final",
    "fn",
    "for",
    "gen",
    "if",
    "impl",
    "in",
    "let",
    "loop",
    "macro",
    "match",
    "mod",
    "move",
    "mut",
    "override",
    "priv",
    "pub",
    "ref",
    "return",
    "self",
    "static",
    "struct",
    "super",
    "trait",
    "true",
    "try",
    "type",
    "typeof",
    "unsafe",
    "unsized",
    "use",
    "virtual",
    "where",
    "while",
    "yield",
    "std",
    "core",
    "alloc",
    "test",
    "proc_macro",
];

/// The names a stub's files use, derived from its NAME.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Names {
    /// As given: the plugin's and the package's name.
    name: String,
    /// `-` as `_`: the C prefix and the library's name.
    ident: String,
    /// In lower case: the transport's name.
    transport: String,
    /// `my-link` → `MyLink`: the Rust types' prefix.
    camel: String,
}

/// Checks a plugin name and derives the others from it.
fn names(name: &str, lang: Lang) -> Result<Names> {
    if name.is_empty() {
        bail!("the plugin's name is empty; give one such as `my-link`");
    }
    if name.contains('/') {
        bail!("{name:?} is a path, not a name: give the name alone and the folder with --dir DIR");
    }
    let ident = name.replace('-', "_");
    let mut chars = ident.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    if !first_ok || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        bail!(
            "{name:?} cannot name a plugin: it must start with a letter and hold only letters, \
             digits, `_` and `-`, as it becomes a C identifier ({:?}) and a transport name",
            ident
        );
    }
    if name.len() > NAME_MAX {
        bail!("{name:?} is longer than {NAME_MAX} bytes, a transport name's limit");
    }
    let transport = name.to_ascii_lowercase();
    if xferbench_transports::plugin::describe::RESERVED_TRANSPORT_NAMES
        .contains(&transport.as_str())
    {
        bail!("{name:?} is the name of a built-in transport; choose another");
    }
    if lang == Lang::Rust && RUST_RESERVED.contains(&ident.as_str()) {
        bail!(
            "{name:?} is a Rust keyword or a standard crate's name, which a crate cannot take; choose another"
        );
    }
    let camel = ident
        .split('_')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let mut c = p.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect();
    Ok(Names {
        name: name.to_string(),
        ident,
        transport,
        camel,
    })
}

/// Fills a template's `{{key}}` placeholders.
fn render(template: &str, values: &[(&str, &str)]) -> String {
    let mut s = template.to_string();
    for (key, value) in values {
        s = s.replace(&format!("{{{{{key}}}}}"), value);
    }
    s
}

/// A path or word as a POSIX shell reads it.
fn quote(s: &str) -> String {
    shlex::try_quote(s).map_or_else(|_| format!("{s:?}"), |q| q.into_owned())
}

/// A TOML basic string holding `s`.
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Refuses a folder that holds anything.
fn check_dir(dir: &Path) -> Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    if !dir.is_dir() {
        bail!(
            "{} exists and is not a folder; choose another with --dir",
            dir.display()
        );
    }
    let mut entries = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read the folder {}", dir.display()))?;
    if entries.next().is_some() {
        bail!(
            "{} exists and is not empty: nothing was written; choose another folder with --dir or remove it",
            dir.display()
        );
    }
    Ok(())
}

/// What `plugin new` checks before it writes anything.
struct NewPlan {
    names: Names,
    dir: PathBuf,
    sdk: Option<PathBuf>,
}

fn plan(args: &NewArgs) -> Result<NewPlan> {
    let names = names(&args.name, args.lang)?;
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(&names.name));
    check_dir(&dir)?;
    let sdk = match &args.sdk {
        None => None,
        Some(p) => {
            let prefix = std::fs::canonicalize(p).ok().filter(|p| p.is_dir());
            let found = prefix
                .as_ref()
                .is_some_and(|p| p.join(PC_PATH).is_file() && p.join(CRATE_PATH).is_dir());
            if !found {
                bail!(
                    "--sdk {}: no SDK there; write one with `xferbench plugin sdk --prefix {}`",
                    p.display(),
                    quote(&p.display().to_string())
                );
            }
            prefix
        }
    };
    Ok(NewPlan { names, dir, sdk })
}

fn new(args: &NewArgs, out: &mut dyn Write) -> Result<u8> {
    let plan = match plan(args) {
        Ok(p) => p,
        Err(e) => return Ok(crate::exit::usage("plugin new", e)),
    };
    let Names {
        name,
        ident,
        transport,
        camel,
    } = &plan.names;
    let dir = &plan.dir;
    let crate_path = match (&plan.sdk, args.lang) {
        (Some(sdk), Lang::Rust) => {
            let path = sdk.join(CRATE_PATH);
            path.to_str()
                .map(toml_string)
                .with_context(|| format!("--sdk {}: not valid UTF-8", sdk.display()))?
        }
        _ => toml_string("vendor/xferbench-plugin"),
    };
    let values: [(&str, &str); 6] = [
        ("name", name),
        ("ident", ident),
        ("transport", transport),
        ("Camel", camel),
        ("xferbench_version", VERSION),
        ("plugin_crate", &crate_path),
    ];
    let templates = match args.lang {
        Lang::C => C_TEMPLATES,
        Lang::Rust => RUST_TEMPLATES,
    };
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the folder {}", dir.display()))?;
    let mut written = Vec::new();
    for (file, text) in templates {
        let file = render(file, &values);
        write_file(&dir.join(&file), &render(text, &values))?;
        written.push(file);
    }
    if args.lang == Lang::Rust && plan.sdk.is_none() {
        write_plugin_crate(&dir.join("vendor/xferbench-plugin"))?;
        written.push("vendor/xferbench-plugin/ (the crate xferbench-plugin)".into());
    }

    let shown_dir = quote(&dir.display().to_string());
    let lib = format!("lib{ident}.so");
    writeln!(
        out,
        "wrote a {} plugin `{name}` to {}: {}",
        match args.lang {
            Lang::C => "C",
            Lang::Rust => "Rust",
        },
        dir.display(),
        written.join(", ")
    )?;
    writeln!(out)?;
    writeln!(out, "Build and check it:")?;
    writeln!(out, "  cd {shown_dir}")?;
    let (build, so) = match args.lang {
        Lang::C => {
            let pc = plan
                .sdk
                .as_ref()
                .map(|s| {
                    format!(
                        "PKG_CONFIG_PATH={} ",
                        quote(&s.join("lib/pkgconfig").display().to_string())
                    )
                })
                .unwrap_or_default();
            (format!("{pc}make"), format!("./{lib}"))
        }
        Lang::Rust => {
            let target = std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("target"));
            (
                "cargo build --release".to_string(),
                target.join("release").join(&lib).display().to_string(),
            )
        }
    };
    let check = format!(
        "xferbench check -t {} --fail-fast",
        quote(&format!("plugin:{so}"))
    );
    writeln!(out, "  {build}")?;
    writeln!(out, "  {check}")?;
    if args.lang == Lang::C && plan.sdk.is_none() {
        writeln!(
            out,
            "(make finds xferbench/plugin.h with pkg-config: if `pkg-config --exists xferbench-plugin` fails, \
             run `xferbench plugin sdk --prefix ~/.local` and export PKG_CONFIG_PATH=~/.local/lib/pkgconfig)"
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "In CI, a shell step (it exits non-zero when a check fails):"
    )?;
    match args.lang {
        Lang::C => writeln!(out, "  {build} check")?,
        Lang::Rust => writeln!(out, "  {build} && {check}")?,
    }
    writeln!(out)?;
    writeln!(
        out,
        "Your transport's code goes where the comments say YOUR TRANSPORT; then measure it:"
    )?;
    writeln!(
        out,
        "  xferbench run stream -t unix,{} -s 64,4KiB --verify",
        quote(&format!("plugin:{so}"))
    )?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_derived_and_bad_ones_refused_with_the_reason() {
        let n = names("my-Link2", Lang::C).unwrap();
        assert_eq!(n.ident, "my_Link2");
        assert_eq!(n.transport, "my-link2");
        assert_eq!(n.camel, "MyLink2");
        for (bad, why) in [
            ("", "empty"),
            ("a/b", "path"),
            ("2fast", "start with a letter"),
            ("-x", "start with a letter"),
            ("a.b", "C identifier"),
            ("naïve", "C identifier"),
            ("pipe", "built-in"),
            (&"x".repeat(33), "longer than 32"),
        ] {
            let e = names(bad, Lang::C).unwrap_err().to_string();
            assert!(e.contains(why), "{bad:?}: {e}");
        }
        assert!(names("fn", Lang::C).is_ok());
        let e = names("fn", Lang::Rust).unwrap_err().to_string();
        assert!(e.contains("Rust keyword"), "{e}");
    }

    /// Every placeholder of every template is filled.
    #[test]
    fn every_template_renders_without_a_placeholder_left() {
        let values = [
            ("name", "n"),
            ("ident", "n"),
            ("transport", "n"),
            ("Camel", "N"),
            ("xferbench_version", VERSION),
            ("plugin_crate", "\"p\""),
        ];
        for (file, text) in C_TEMPLATES.iter().chain(RUST_TEMPLATES) {
            let r = render(text, &values);
            assert!(!r.contains("{{"), "{file}: a placeholder is left");
            assert!(r.contains("YOUR TRANSPORT") || *file != "src/lib.rs");
        }
    }

    #[test]
    fn toml_strings_escape_quotes_backslashes_and_controls() {
        assert_eq!(toml_string(r#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(toml_string("a\nb"), "\"a\\u000Ab\"");
    }

    /// The crate copy is the crate: every source file of `crates/plugin/src` is
    /// embedded (the texts are the files themselves, by `include_str!`), the crate
    /// has no dependencies to write out, and what it inherits from the workspace is
    /// what the copy's Cargo.toml says.
    #[test]
    fn the_crate_copy_holds_every_file_of_crates_plugin_and_its_inherited_fields() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut on_disk: Vec<String> = std::fs::read_dir(root.join("crates/plugin/src"))
            .unwrap()
            .map(|e| format!("src/{}", e.unwrap().file_name().to_string_lossy()))
            .collect();
        on_disk.sort();
        let mut embedded: Vec<String> = PLUGIN_CRATE_SOURCES
            .iter()
            .map(|(p, _)| p.to_string())
            .collect();
        embedded.sort();
        assert_eq!(
            on_disk, embedded,
            "crates/plugin/src changed: list its files in PLUGIN_CRATE_SOURCES"
        );
        for (path, text) in PLUGIN_CRATE_SOURCES {
            let real = std::fs::read_to_string(root.join("crates/plugin").join(path)).unwrap();
            assert_eq!(&real, text, "{path}");
        }

        let manifest = std::fs::read_to_string(root.join("crates/plugin/Cargo.toml")).unwrap();
        let section = |text: &str, name: &str| -> Vec<String> {
            text.lines()
                .skip_while(|l| l.trim() != name)
                .skip(1)
                .take_while(|l| !l.starts_with('['))
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(String::from)
                .collect()
        };
        assert_eq!(
            section(&manifest, "[dependencies]"),
            Vec::<String>::new(),
            "crates/plugin has dependencies now: write them into plugin_crate_manifest()"
        );
        let package = section(&manifest, "[package]");
        for field in ["version", "edition", "rust-version", "license"] {
            assert!(
                package.contains(&format!("{field}.workspace = true")),
                "crates/plugin/Cargo.toml: {field} is no longer the workspace's; copy it into plugin_crate_manifest()"
            );
        }
        let workspace = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
        let inherited = section(&workspace, "[workspace.package]");
        for (field, value) in [
            ("version", VERSION),
            ("edition", EDITION),
            ("rust-version", RUST_VERSION),
            ("license", LICENSE),
        ] {
            let line = format!("{field} = \"{value}\"");
            assert!(
                inherited.contains(&line),
                "the workspace's {field} is no longer {value:?}: update plugin_crate_manifest()"
            );
            assert!(plugin_crate_manifest().contains(&line));
        }
        let lints = section(&workspace, "[workspace.lints.rust]");
        assert_eq!(
            lints,
            section(&plugin_crate_manifest(), "[lints.rust]"),
            "the workspace's Rust lints changed: copy them into plugin_crate_manifest()"
        );
    }

    #[test]
    fn the_header_is_the_repositorys() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let real = std::fs::read_to_string(root.join("include/xferbench/plugin.h")).unwrap();
        assert_eq!(real, HEADER);
        assert!(HEADER.contains("XB_REQUIRE_ABI"));
    }
}
