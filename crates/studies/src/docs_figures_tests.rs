//! Figures in prose: every figure written in the prose of the checked docs
//! ([`CHECKED`]) names where it comes from, and still agrees with it.
//!
//! A *figure* is a number outside code, HTML comments, link targets and generated
//! blocks (`docs_data_tests`) that is followed by a unit of time, rate, frequency or
//! a share (`ns`, `µs`, `ms`, `s`, `Hz`, `MB/s`, `/s`, `k`, `%`, `×`, …), has a
//! decimal point or a thousands separator, or follows `≈` or `~`; a range `a–b`
//! with a unit is two figures. Counts (`2 CPUs`, `16 workers`), sizes (`64 B`,
//! `4 MiB`: a point's parameters) and versions are not figures.
//!
//! Every figure is followed, on its line, by a reference:
//!
//! ```text
//! reads 529.8 MB/s<!-- = t1|9|per board --> against 1025.3<!-- = seed.rs|TEST1_KU_OF_6 -->
//! 610.5–611.8<!-- = t1|7|per board; t1|8|per board --> per board
//! −54.8 %<!-- = 100 * ({t1|9|per board} / {t1|9|seed per board} - 1) -->
//! ```
//!
//! A comment `<!-- = E1; E2 -->` binds its expressions, in order, to the last figures
//! before it on its line that have none yet. An expression is a reference, `set` (a
//! figure the setup chooses: a parameter, a preset, a threshold, which the sentence
//! names as such), `example` (a figure of a worked illustration, not a measurement,
//! which the sentence presents as one), `unchecked` (a measured figure whose data is
//! not among the committed files, which the sentence says: an earlier session's, in
//! git history; one measured by hand), or arithmetic (`+ - * /`, parentheses, numbers) over references
//! in braces. A reference is `SOURCE|…`, its source a path relative to the doc or a
//! name declared on a line of its own as `<!-- source NAME = PATH -->`:
//!
//! * a `.csv` file: `SOURCE|ROW|COLUMN[|N]`, ROW a data row's number (1 is the row
//!   under the header) or a text only that row's line contains, COLUMN a header or
//!   a column's number, N the cell's N-th number (1 by default: the median of
//!   `"15974 [14127–20400, 75 %]"`);
//! * a `.json` file: `SOURCE|/json/pointer` to a number;
//! * any other text (a `.txt` result, a study's `seed.rs`): `SOURCE|TEXT[|N]`, the
//!   N-th number after TEXT on the only line that contains it. TEXT that begins or
//!   ends with a space is written in double quotes, which keep it (`"memcpy 4 KiB  "`,
//!   not `memcpy 4 KiB at 16`); other quotes are part of TEXT. `SOURCE|:LINE[|N]` is
//!   the N-th number of the file's line LINE (1 is the first), for a result whose
//!   lines repeat their labels (one block per round).
//!
//! The figure agrees when it is its source's value rounded as printed: 529.8 stands
//! for [529.75, 529.85]; one after `≈` or `~` agrees within 10 % of itself. A figure without a reference fails with the references of
//! the declared sources that would hold it, ready to paste.
//!
//! The measurement log, `docs/transports-log.md`, is exempt ([`EXEMPT`]): history,
//! each section what one run gave on its day, kept as written. Its figures carry no
//! references; every table of it names its data file on a `*Data:*` line instead,
//! which a test holds it to. Every study page is in [`CHECKED`], which a test holds
//! too.
//!
//! `scripts/check-docs.sh` runs these tests.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The docs whose prose figures are checked, relative to `docs/`.
const CHECKED: &[&str] = &[
    "studies/perf-stat.md",
    "studies/sis8300.md",
    "studies/rpmsg.md",
    "studies/warp-pipe.md",
    "studies/hashtable.md",
    "transports.md",
    "plugins.md",
    "load.md",
    "limits.md",
];

/// Docs with figures in prose that are not checked, relative to `docs/`, and why.
/// An exempt page still heads every table with the data file it comes from
/// (`*Data:*`), which a test holds it to.
const EXEMPT: &[(&str, &str)] = &[(
    "transports-log.md",
    "the measurement history: each section is what one run gave on its day, kept as \
     written and superseded by later sections and by transports.md, which is checked; \
     every table is headed by its data file",
)];

/// Units that make a number a figure, longest first so that `MB/s` wins over `MB`.
const UNITS: &[&str] = &[
    "ns/B", "MB/s", "GB/s", "MiB/s", "GiB/s", "KiB/s", "kB/s", "B/s", "k/s", "M/s", "/s", "cycles",
    "GHz", "MHz", "kHz", "Hz", "min", "ns", "µs", "us", "ms", "s", "%", "×", "k",
];

/// Byte sizes: a point's parameters, not figures (unless a rate, `/s`, follows).
const SIZES: &[&str] = &[
    "KiB", "MiB", "GiB", "TiB", "kB", "KB", "MB", "GB", "TB", "B",
];

fn docs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs")
}

/// A number as printed: its value and its decimals.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Printed {
    value: f64,
    decimals: u32,
}

impl Printed {
    /// Whether `v` rounds to this figure as printed.
    fn agrees(&self, v: f64) -> bool {
        let half = 0.5 * 10f64.powi(-(self.decimals as i32));
        (v - self.value).abs() <= half * (1.0 + 1e-9) + 1e-12 * self.value.abs()
    }
}

/// One figure found in a line: where it starts (in chars), its text and value.
#[derive(Debug, Clone)]
struct Figure {
    text: String,
    printed: Printed,
    /// After `≈` or `~`: agrees within 10 % of itself.
    approx: bool,
}

impl Figure {
    fn agrees(&self, v: f64) -> bool {
        self.printed.agrees(v)
            || (self.approx && (v - self.printed.value).abs() <= 0.1 * self.printed.value.abs())
    }
}

/// Reads a number at `chars[i..]` (a digit), with `,ddd` groups when `groups`, `_`
/// between digits when `underscores`, and a decimal part; returns it and the index
/// after it.
fn read_number(chars: &[char], i: usize, groups: bool, underscores: bool) -> (Printed, usize) {
    let mut j = i;
    let mut digits = String::new();
    while j < chars.len() {
        let c = chars[j];
        if c.is_ascii_digit() {
            digits.push(c);
            j += 1;
        } else if (underscores
            && c == '_'
            && !digits.is_empty()
            && chars.get(j + 1).is_some_and(|d| d.is_ascii_digit()))
            || (groups
                && c == ','
                && chars.len() >= j + 4
                && chars[j + 1..j + 4].iter().all(|d| d.is_ascii_digit())
                && chars.get(j + 4).is_none_or(|d| !d.is_ascii_digit()))
        {
            // `_` between digits, or a `,ddd` group: part of the number.
            j += 1;
        } else {
            break;
        }
    }
    let mut decimals = 0;
    if j + 1 < chars.len() && chars[j] == '.' && chars[j + 1].is_ascii_digit() {
        digits.push('.');
        j += 1;
        while j < chars.len() && chars[j].is_ascii_digit() {
            digits.push(chars[j]);
            decimals += 1;
            j += 1;
        }
    }
    let value = digits.parse().unwrap_or(f64::NAN);
    (Printed { value, decimals }, j)
}

/// Whether a sign at `chars[i]` (before a digit) is a sign, not a dash or a hyphen.
fn sign_at(chars: &[char], i: usize) -> Option<f64> {
    let s = match chars[i] {
        '−' | '-' => -1.0,
        '+' => 1.0,
        _ => return None,
    };
    if i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '.') {
        return None;
    }
    Some(s)
}

/// Every number in a source's text (a cell, a line), signed, in order.
fn numbers(text: &str, underscores: bool) -> Vec<f64> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let starts = c.is_ascii_digit()
            && (i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_'))
            && !(i > 0 && chars[i - 1] == '.' && i > 1 && chars[i - 2].is_ascii_digit());
        if starts {
            let (p, j) = read_number(&chars, i, true, underscores);
            let sign = if i > 0 { sign_at(&chars, i - 1) } else { None };
            out.push(p.value * sign.unwrap_or(1.0));
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// What follows a number: a unit (and the index after it), a byte size, or neither.
enum After {
    Unit(usize),
    Size,
    Nothing,
}

/// What follows the number ending at `chars[i]`, after at most one space.
fn unit_at(chars: &[char], i: usize) -> After {
    let mut k = i;
    let spaced = k < chars.len() && matches!(chars[k], ' ' | '\u{a0}' | '\u{202f}');
    if spaced {
        k += 1;
    }
    let rest: String = chars[k..].iter().take(8).collect();
    for u in SIZES {
        if rest.starts_with(u) {
            let end = k + u.chars().count();
            let after = chars.get(end);
            if after != Some(&'/') && after.is_none_or(|c| !c.is_alphanumeric()) {
                return After::Size;
            }
        }
    }
    for u in UNITS {
        if rest.starts_with(u) {
            let end = k + u.chars().count();
            if spaced && *u == "×" {
                return After::Nothing; // `8 × 32`: a product, not a ratio
            }
            let boundary = matches!(*u, "%" | "×")
                || chars
                    .get(end)
                    .is_none_or(|c| !c.is_alphanumeric() && *c != '_');
            if boundary {
                return After::Unit(end);
            }
        }
    }
    After::Nothing
}

/// The figures of a piece of prose, in order.
fn figures(text: &str) -> Vec<Figure> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let prev = if i > 0 { Some(chars[i - 1]) } else { None };
        let starts = c.is_ascii_digit()
            && prev.is_none_or(|p| !(p.is_alphanumeric() || matches!(p, '_' | '.' | '^' | '#')));
        if !starts {
            i += 1;
            continue;
        }
        let signed = if i > 0 { sign_at(&chars, i - 1) } else { None };
        let start = if signed.is_some() { i - 1 } else { i };
        let (p1, j1) = read_number(&chars, i, true, false);
        let first = Printed {
            value: p1.value * signed.unwrap_or(1.0),
            ..p1
        };
        // A range: a–b, both sharing what follows b.
        let mut second = None;
        let mut end = j1;
        if j1 + 1 < chars.len() && matches!(chars[j1], '–' | '-') && chars[j1 + 1].is_ascii_digit()
        {
            let (p2, j2) = read_number(&chars, j1 + 1, true, false);
            second = Some((p2, j2));
            end = j2;
        }
        let unit = match unit_at(&chars, end) {
            After::Size => {
                i = end;
                continue;
            }
            After::Unit(e) => Some(e),
            After::Nothing => None,
        };
        let approx = {
            let mut k = start;
            while k > 0 && chars[k - 1] == ' ' {
                k -= 1;
            }
            k > 0 && matches!(chars[k - 1], '≈' | '~')
        };
        let shaped = |p: &Printed, s: usize, e: usize| {
            p.decimals > 0 || chars[s..e].contains(&',') || unit.is_some() || approx
        };
        let is_version = {
            // "Linux 6.1", "v1.2", "0.5.0": a version, not a figure.
            let before: String = chars[..start].iter().collect();
            let dotted_twice = chars.get(end) == Some(&'.')
                && chars.get(end + 1).is_some_and(|c| c.is_ascii_digit());
            dotted_twice
                || [
                    "Linux ",
                    "kernel ",
                    "version ",
                    "Rust ",
                    "iceoryx2 ",
                    "glibc ",
                    "v",
                ]
                .iter()
                .any(|w| before.ends_with(w))
        };
        let unit_text: String = unit
            .map(|e| chars[end..e].iter().collect())
            .unwrap_or_default();
        match second {
            Some((p2, j2)) => {
                if !is_version && (shaped(&first, start, j1) || shaped(&p2, j1 + 1, j2)) {
                    out.push(Figure {
                        text: chars[start..j1].iter().collect(),
                        printed: first,
                        approx,
                    });
                    out.push(Figure {
                        text: chars[j1 + 1..j2].iter().collect::<String>() + &unit_text,
                        printed: p2,
                        approx,
                    });
                }
            }
            None => {
                if !is_version && shaped(&first, start, j1) {
                    out.push(Figure {
                        text: chars[start..j1].iter().collect::<String>() + &unit_text,
                        printed: first,
                        approx,
                    });
                }
            }
        }
        i = unit.unwrap_or(end).max(i + 1);
    }
    out
}

/// A line of prose cut into what is checked: text (figures), and reference comments
/// in their places. Code spans, link targets and other comments are dropped. A code
/// span may run on from the line before (`code` is true on entry) and on to the next
/// (`code` is true on return), as Markdown lets it within a paragraph.
enum Piece {
    Text(String),
    Refs(String),
}

fn pieces(line: &str, code: &mut bool) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut rest = line;
    if *code {
        match rest.find('`') {
            Some(k) => {
                rest = &rest[k + 1..];
                *code = false;
            }
            None => return vec![Piece::Text(text)],
        }
    }
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("<!--") {
            let end = r.find("-->").map(|k| k + 3).unwrap_or(r.len());
            let body = r[..end.min(r.len())].trim_end_matches("-->").trim();
            if let Some(refs) = body.strip_prefix('=') {
                out.push(Piece::Text(std::mem::take(&mut text)));
                out.push(Piece::Refs(refs.trim().to_string()));
            }
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix('`') {
            let end = r.find('`').map(|k| k + 1).unwrap_or_else(|| {
                *code = true;
                r.len()
            });
            text.push(' ');
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix("](") {
            let end = r.find(')').map(|k| k + 1).unwrap_or(r.len());
            text.push_str("] ");
            rest = &r[end..];
        } else {
            let c = rest.chars().next().unwrap();
            text.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out.push(Piece::Text(text));
    out
}

/// A doc being checked: where it is (references are relative to it) and its sources.
struct Doc {
    dir: PathBuf,
    sources: BTreeMap<String, String>,
}

impl Doc {
    fn path_of(&self, source: &str) -> (String, PathBuf) {
        let rel = self
            .sources
            .get(source)
            .cloned()
            .unwrap_or_else(|| source.to_string());
        let p = self.dir.join(&rel);
        (rel, p)
    }

    /// The value a reference names.
    fn resolve(&self, reference: &str) -> Result<f64, String> {
        let parts: Vec<&str> = reference.split('|').map(str::trim).collect();
        let (rel, path) = self.path_of(parts[0]);
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{rel}: {e}"))?;
        let nth = |s: Option<&&str>| -> Result<usize, String> {
            match s {
                None => Ok(1),
                Some(s) => s
                    .parse::<usize>()
                    .ok()
                    .filter(|n| *n >= 1)
                    .ok_or_else(|| format!("`{s}` is not a number's position (1, 2, …)")),
            }
        };
        if rel.ends_with(".csv") {
            let [_, row, col, ..] = parts[..] else {
                return Err(format!(
                    "`{reference}`: a CSV reference is FILE|ROW|COLUMN[|N]"
                ));
            };
            let rows: Vec<(&str, Vec<String>)> = text.lines().map(|l| (l, csv_cells(l))).collect();
            let header = &rows.first().ok_or(format!("{rel} is empty"))?.1;
            let data = &rows[1..];
            let r = match row.parse::<usize>() {
                Ok(n) => data
                    .get(n.wrapping_sub(1))
                    .ok_or(format!("{rel} has no row {n}"))?,
                Err(_) => {
                    let hits: Vec<_> = data.iter().filter(|(l, _)| l.contains(row)).collect();
                    match hits[..] {
                        [one] => one,
                        [] => return Err(format!("no row of {rel} contains `{row}`")),
                        _ => return Err(format!("{} rows of {rel} contain `{row}`", hits.len())),
                    }
                }
            };
            let c = match col.parse::<usize>() {
                Ok(n) => n.wrapping_sub(1),
                Err(_) => header
                    .iter()
                    .position(|h| h == col)
                    .ok_or(format!("{rel} has no column `{col}`"))?,
            };
            let cell =
                r.1.get(c)
                    .ok_or(format!("{rel} row {row} has no column {col}"))?;
            let n = nth(parts.get(3))?;
            numbers(cell, false).get(n - 1).copied().ok_or(format!(
                "{rel} row {row}, `{col}`: `{cell}` has no number {n}"
            ))
        } else if rel.ends_with(".json") {
            let pointer = parts
                .get(1)
                .ok_or(format!("`{reference}`: a JSON reference is FILE|/pointer"))?;
            let v: Value = serde_json::from_str(&text).map_err(|e| format!("{rel}: {e}"))?;
            match v.pointer(pointer) {
                Some(Value::Number(n)) => Ok(n.as_f64().unwrap()),
                Some(Value::String(s)) => numbers(s, false)
                    .first()
                    .copied()
                    .ok_or(format!("{rel}{pointer} is `{s}`, no number")),
                Some(other) => Err(format!("{rel}{pointer} is {other}, not a number")),
                None => Err(format!("{rel} has nothing at {pointer}")),
            }
        } else {
            let anchor = parts
                .get(1)
                .ok_or(format!("`{reference}`: a text reference is FILE|TEXT[|N]"))?;
            // `"TEXT "`: quoted with a space at an end, the spaces are part of it
            // (`"5l2"`, with none, is its quotes and all, as a seed's code has it).
            let anchor = anchor
                .strip_prefix('"')
                .and_then(|a| a.strip_suffix('"'))
                .filter(|a| a.starts_with(' ') || a.ends_with(' '))
                .unwrap_or(anchor);
            // `:LINE`: the file's line of that number (1 is the first), from its start.
            let numbered = anchor
                .strip_prefix(':')
                .and_then(|n| n.parse::<usize>().ok());
            let after = if let Some(n) = numbered {
                text.lines()
                    .nth(n.wrapping_sub(1))
                    .ok_or(format!("{rel} has no line {n}"))?
            } else {
                let hits: Vec<&str> = text.lines().filter(|l| l.contains(anchor)).collect();
                let line = match hits[..] {
                    [one] => one,
                    [] => return Err(format!("no line of {rel} contains `{anchor}`")),
                    _ => {
                        return Err(format!("{} lines of {rel} contain `{anchor}`", hits.len()));
                    }
                };
                &line[line.find(anchor).unwrap() + anchor.len()..]
            };
            let n = nth(parts.get(2))?;
            numbers(after, rel.ends_with(".rs"))
                .get(n - 1)
                .copied()
                .ok_or(format!("{rel}: no number {n} after `{anchor}`"))
        }
    }

    /// An expression's value; `None` for `set`, `example` and `unchecked`.
    fn eval(&self, expr: &str) -> Result<Option<f64>, String> {
        let e = expr.trim();
        if e == "set" || e == "example" || e == "unchecked" {
            return Ok(None);
        }
        if !e.contains('{') && e.contains('|') {
            return self.resolve(e).map(Some);
        }
        let mut p = Parser {
            doc: self,
            s: e.chars().collect(),
            i: 0,
        };
        let v = p.expr()?;
        p.space();
        if p.i != p.s.len() {
            return Err(format!(
                "`{e}`: unexpected `{}`",
                p.s[p.i..].iter().collect::<String>()
            ));
        }
        Ok(Some(v))
    }
}

/// Cells of a CSV line (RFC 4180 quoting).
fn csv_cells(line: &str) -> Vec<String> {
    let mut cells = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                cells.last_mut().unwrap().push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => cells.push(String::new()),
            _ => cells.last_mut().unwrap().push(c),
        }
    }
    cells
}

/// Arithmetic over references: `+ - * /`, parentheses, numbers, `{reference}`.
struct Parser<'a> {
    doc: &'a Doc,
    s: Vec<char>,
    i: usize,
}

impl Parser<'_> {
    fn space(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_whitespace() {
            self.i += 1;
        }
    }
    fn peek(&mut self) -> Option<char> {
        self.space();
        self.s.get(self.i).copied()
    }
    fn expr(&mut self) -> Result<f64, String> {
        let mut v = self.term()?;
        while let Some(c @ ('+' | '-' | '−')) = self.peek() {
            self.i += 1;
            let t = self.term()?;
            v = if c == '+' { v + t } else { v - t };
        }
        Ok(v)
    }
    fn term(&mut self) -> Result<f64, String> {
        let mut v = self.factor()?;
        while let Some(c @ ('*' | '/' | '×')) = self.peek() {
            self.i += 1;
            let f = self.factor()?;
            v = if c == '/' { v / f } else { v * f };
        }
        Ok(v)
    }
    fn factor(&mut self) -> Result<f64, String> {
        match self.peek() {
            Some('-' | '−') => {
                self.i += 1;
                Ok(-self.factor()?)
            }
            Some('(') => {
                self.i += 1;
                let v = self.expr()?;
                if self.peek() != Some(')') {
                    return Err("a `(` without its `)`".into());
                }
                self.i += 1;
                Ok(v)
            }
            Some('{') => {
                let end = self.s[self.i..]
                    .iter()
                    .position(|c| *c == '}')
                    .ok_or("a `{` without its `}`")?;
                let r: String = self.s[self.i + 1..self.i + end].iter().collect();
                self.i += end + 1;
                self.doc.resolve(&r)
            }
            Some(c) if c.is_ascii_digit() => {
                let (p, j) = read_number(&self.s, self.i, false, false);
                self.i = j;
                Ok(p.value)
            }
            other => Err(format!(
                "expected a number, `(` or `{{reference}}`, found {other:?}"
            )),
        }
    }
}

/// The problems of a doc, each `NAME:LINE: what`. `name` is how the doc is named in
/// them; `dir` is the folder its references are relative to.
fn check(text: &str, dir: &Path, name: &str) -> (Vec<String>, usize) {
    let mut doc = Doc {
        dir: dir.to_path_buf(),
        sources: BTreeMap::new(),
    };
    for line in text.lines() {
        let t = line.trim();
        if let Some((k, v)) = t
            .strip_prefix("<!-- source ")
            .and_then(|d| d.strip_suffix("-->"))
            .and_then(|d| d.split_once('='))
        {
            doc.sources.insert(k.trim().into(), v.trim().into());
        }
    }
    let mut problems = Vec::new();
    let mut checked = 0;
    let mut fence = false;
    let mut generated = false;
    let mut code = false;
    for (n, line) in text.lines().enumerate() {
        let at = format!("{name}:{}", n + 1);
        let t = line.trim_start();
        if t.is_empty() {
            code = false; // a code span ends with its paragraph
        }
        if t.starts_with("```") || t.starts_with("~~~") {
            fence = !fence;
            continue;
        }
        if t.starts_with("<!-- generated from ") {
            generated = true;
        }
        if t.starts_with("<!-- end of generated block -->") {
            generated = false;
            continue;
        }
        if fence || generated {
            continue;
        }
        let mut pending: Vec<Figure> = Vec::new();
        for piece in pieces(line, &mut code) {
            match piece {
                Piece::Text(s) => pending.extend(figures(&s)),
                Piece::Refs(refs) => {
                    let exprs: Vec<&str> = refs.split(';').collect();
                    if exprs.len() > pending.len() {
                        problems.push(format!(
                            "{at}: `<!-- = {refs} -->` has {} references for {} figures \
                             before it",
                            exprs.len(),
                            pending.len()
                        ));
                        pending.clear();
                        continue;
                    }
                    let bound = pending.split_off(pending.len() - exprs.len());
                    for (fig, e) in bound.iter().zip(exprs) {
                        checked += 1;
                        match doc.eval(e) {
                            Ok(None) => {}
                            Ok(Some(v)) if fig.agrees(v) => {}
                            Ok(Some(v)) => problems.push(format!(
                                "{at}: {} does not agree with its source, which gives {} \
                                 ({})",
                                fig.text,
                                shown(v, fig.printed.decimals),
                                e.trim()
                            )),
                            Err(err) => problems.push(format!("{at}: {}: {err}", fig.text)),
                        }
                    }
                    // Figures left before a comment stay unreferenced.
                    for fig in pending.drain(..) {
                        problems.push(unreferenced(&at, &fig, &doc));
                    }
                }
            }
        }
        for fig in pending {
            problems.push(unreferenced(&at, &fig, &doc));
        }
    }
    (problems, checked)
}

fn shown(v: f64, decimals: u32) -> String {
    format!("{v:.*}", decimals as usize)
}

/// An unreferenced figure's problem, with the references of the doc's declared
/// sources that hold its value, ready to paste.
fn unreferenced(at: &str, fig: &Figure, doc: &Doc) -> String {
    let mut hits = Vec::new();
    for (name, rel) in &doc.sources {
        let Ok(text) = std::fs::read_to_string(doc.dir.join(rel)) else {
            continue;
        };
        if rel.ends_with(".csv") {
            let rows: Vec<Vec<String>> = text.lines().map(csv_cells).collect();
            let Some(header) = rows.first() else { continue };
            for (r, row) in rows.iter().enumerate().skip(1) {
                for (c, cell) in row.iter().enumerate() {
                    for (k, v) in numbers(cell, false).iter().enumerate() {
                        if fig.agrees(*v) || fig.agrees(-*v) {
                            let col = header
                                .get(c)
                                .cloned()
                                .unwrap_or_else(|| (c + 1).to_string());
                            let n = if k > 0 {
                                format!("|{}", k + 1)
                            } else {
                                String::new()
                            };
                            hits.push(format!("{name}|{r}|{col}{n}"));
                        }
                    }
                }
            }
        } else if let Some(v) = rel
            .ends_with(".json")
            .then(|| serde_json::from_str::<Value>(&text).ok())
            .flatten()
        {
            json_hits(&v, String::new(), fig, name, &mut hits);
        }
    }
    let total = hits.len();
    hits.truncate(4);
    let more = if total > hits.len() {
        format!(" and {} more", total - hits.len())
    } else {
        String::new()
    };
    if hits.is_empty() {
        format!(
            "{at}: {} has no reference (`<!-- = SOURCE|… -->` after it)",
            fig.text
        )
    } else {
        format!(
            "{at}: {} has no reference; the sources hold it at: {}{more}",
            fig.text,
            hits.iter()
                .map(|h| format!("`<!-- = {h} -->`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

fn json_hits(v: &Value, at: String, fig: &Figure, name: &str, hits: &mut Vec<String>) {
    match v {
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(f64::NAN);
            if fig.printed.decimals > 0 && (fig.agrees(x) || fig.agrees(-x)) {
                hits.push(format!("{name}|{at}"));
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                json_hits(x, format!("{at}/{i}"), fig, name, hits);
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                let k = k.replace('~', "~0").replace('/', "~1");
                json_hits(x, format!("{at}/{k}"), fig, name, hits);
            }
        }
        _ => {}
    }
}

#[test]
fn docs_figures_every_prose_figure_agrees_with_its_source() {
    let mut problems = Vec::new();
    let mut total = 0;
    for rel in CHECKED {
        let path = docs().join(rel);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let (p, n) = check(&text, path.parent().unwrap(), &format!("docs/{rel}"));
        eprintln!("docs/{rel}: {n} referenced figures");
        problems.extend(p);
        total += n;
    }
    assert!(
        problems.is_empty(),
        "{} of the docs' prose figures fail (of {total} referenced); see the module doc of \
         crates/studies/src/docs_figures_tests.rs or docs/README.md, \"Figures in prose\":\n{}",
        problems.len(),
        problems.join("\n")
    );
    assert!(total > 0);
}

#[test]
fn docs_figures_every_study_is_checked() {
    let mut studies: Vec<String> = std::fs::read_dir(docs().join("studies"))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("studies/{n}"))
        .collect();
    studies.sort();
    assert!(!studies.is_empty());
    for rel in studies {
        assert!(
            CHECKED.contains(&rel.as_str()),
            "docs/{rel} is a study, so its prose figures are checked: add it to CHECKED"
        );
    }
}

/// An exempt page is not checked, and every table in it is headed, in its section, by
/// a `*Data:*` line whose `data/…` paths exist: its figures are history, but each
/// table still names the file it comes from.
#[test]
fn docs_figures_an_exempt_page_names_the_data_of_every_table() {
    for (rel, why) in EXEMPT {
        assert!(
            !CHECKED.contains(rel),
            "docs/{rel} is both checked and exempt"
        );
        let path = docs().join(rel);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let (problems, tables) =
            tables_without_data(&text, path.parent().unwrap(), &format!("docs/{rel}"));
        assert!(tables > 0, "docs/{rel}: no tables");
        assert!(
            problems.is_empty(),
            "docs/{rel} is exempt from the figures check because {why}; but:\n{}",
            problems.join("\n")
        );
    }
}

/// The tables of a page with no `*Data:*` line before them in their section, and the
/// `data/…` paths of its `*Data:*` lines that do not exist, each `NAME:LINE: what`;
/// and how many tables it has.
fn tables_without_data(text: &str, dir: &Path, name: &str) -> (Vec<String>, usize) {
    let lines: Vec<&str> = text.lines().collect();
    let mut problems = Vec::new();
    let mut fence = false;
    let mut data = false;
    let mut tables = 0;
    for (n, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fence = !fence;
            continue;
        }
        if fence {
            continue;
        }
        if t.starts_with('#') {
            data = false;
        }
        if let Some(rest) = t.strip_prefix("*Data:*") {
            data = true;
            for word in rest.split(['`', '(', ')', '[', ']', ' ', ',']) {
                if word.starts_with("data/") && !dir.join(word).exists() {
                    problems.push(format!("{name}:{}: {word} does not exist", n + 1));
                }
            }
        }
        let separator = lines.get(n + 1).is_some_and(|l| {
            let l = l.trim();
            l.starts_with('|') && l.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
        });
        if t.starts_with('|') && separator {
            tables += 1;
            if !data {
                problems.push(format!(
                    "{name}:{}: a table with no `*Data:*` line before it in its section",
                    n + 1
                ));
            }
        }
    }
    (problems, tables)
}

#[test]
fn docs_figures_a_table_without_its_data_fails_naming_its_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    std::fs::write(dir.path().join("data/a.md"), "").unwrap();
    let page = "# Log\n\n## One\n\n*Data:* [`data/a.md`](data/a.md), 1 Nov.\n\n\
                | a | b |\n|:--|--:|\n| x | 1.5 µs |\n\n## Two\n\n\
                | a | b |\n|:--|--:|\n| y | 2 |\n\n## Three\n\n\
                *Data:* `data/gone.csv`.\n\n| a |\n|---|\n";
    let (problems, tables) = tables_without_data(page, dir.path(), "log.md");
    assert_eq!(tables, 3);
    assert_eq!(
        problems,
        [
            "log.md:13: a table with no `*Data:*` line before it in its section",
            "log.md:19: data/gone.csv does not exist",
        ]
    );
}

#[test]
fn docs_figures_a_changed_figure_fails_naming_its_line() {
    a_changed_figure_fails_naming_its_line("studies/sis8300.md");
}

#[test]
fn docs_figures_a_changed_figure_fails_naming_its_line_outside_the_studies() {
    for rel in ["transports.md", "load.md", "limits.md"] {
        a_changed_figure_fails_naming_its_line(rel);
    }
}

#[test]
fn docs_figures_a_figure_without_its_reference_fails_naming_its_line() {
    for rel in CHECKED {
        a_figure_without_its_reference_fails_naming_its_line(rel);
    }
}

/// Removes the reference of the first referenced figure of `rel`'s prose (a `set` one
/// too: plugins.md's figures are all chosen), and adds an unreferenced figure to its
/// line: both fail, naming the line.
fn a_figure_without_its_reference_fails_naming_its_line(rel: &str) {
    let path = docs().join(rel);
    let text = std::fs::read_to_string(&path).unwrap();
    let dir = path.parent().unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut fence = false;
    let (n, line) = lines
        .iter()
        .enumerate()
        .find(|(_, l)| {
            if l.trim_start().starts_with("```") {
                fence = !fence;
            }
            !fence && l.contains("<!-- = ")
        })
        .unwrap_or_else(|| panic!("{rel}: a referenced figure"));
    let at = line.find("<!-- = ").unwrap();
    let end = at + line[at..].find("-->").unwrap() + 3;
    let fig = figures(&line[..at]).pop().unwrap().text;
    let mut copy: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    copy[n] = format!("{}{}", &line[..at], &line[end..]);
    let (problems, _) = check(&copy.join("\n"), dir, "copy.md");
    let want = format!("copy.md:{}: {fig} has no reference", n + 1);
    assert!(
        problems.iter().any(|p| p.starts_with(&want)),
        "{rel}: {want}: {problems:?}"
    );
    // The same line, its reference back, gains a figure of its own.
    copy[n] = format!("{line} It now takes 12.5 µs.");
    let (problems, _) = check(&copy.join("\n"), dir, "copy.md");
    let want = format!("copy.md:{}: 12.5 µs has no reference", n + 1);
    assert!(
        problems.iter().any(|p| p.starts_with(&want)),
        "{rel}: {want}: {problems:?}"
    );
}

/// Changes the first referenced figure of `rel`'s prose in its last digit, and adds an
/// unreferenced one: both fail, naming the line.
fn a_changed_figure_fails_naming_its_line(rel: &str) {
    let path = docs().join(rel);
    let text = std::fs::read_to_string(&path).unwrap();
    let dir = path.parent().unwrap();
    // The first referenced figure of the prose, one in its last digit changed.
    let lines: Vec<&str> = text.lines().collect();
    let (n, line) = lines
        .iter()
        .enumerate()
        .find(|(_, l)| {
            l.contains("<!-- = ")
                && !l.contains("<!-- = set")
                && !l.contains("<!-- = example")
                && !l.contains("<!-- = unchecked")
        })
        .expect("a referenced figure");
    let at = line.find("<!-- = ").unwrap();
    let digit = line[..at]
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_ascii_digit())
        .unwrap()
        .0;
    let old = line.as_bytes()[digit] - b'0';
    let mut changed = line.to_string();
    changed.replace_range(digit..digit + 1, &((old + 5) % 10).to_string());
    let mut copy: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    copy[n] = changed;
    let (problems, _) = check(&copy.join("\n"), dir, "copy.md");
    let want = format!("copy.md:{}: ", n + 1);
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with(&want) && p.contains("does not agree")),
        "{rel}: {problems:?}"
    );
    // A new figure with no reference fails likewise.
    copy[n] = format!("{} It now moves 123.4 MB/s.", lines[n]);
    let (problems, _) = check(&copy.join("\n"), dir, "copy.md");
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with(&want) && p.contains("123.4 MB/s has no reference")),
        "{rel}: {problems:?}"
    );
}

#[test]
fn docs_figures_a_code_span_across_lines_hides_only_itself() {
    let dir = tempfile::tempdir().unwrap();
    // The span `client 10\n10` runs over the line break: the figures after it, on
    // the second line, are still checked.
    let doc = "at the quick size (`client 10\n10`, 0.3 s steady windows) 1.23× here\n\nnext";
    let (problems, _) = check(doc, dir.path(), "d.md");
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("d.md:2: 0.3 s has no reference")),
        "{problems:?}"
    );
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("d.md:2: 1.23× has no reference")),
        "{problems:?}"
    );
    assert_eq!(problems.len(), 2, "{problems:?}");
    // An unclosed span ends with its paragraph.
    let (problems, _) = check("a `b\n\nc 4.5 ms", dir.path(), "d.md");
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("d.md:3: 4.5 ms has no reference")),
        "{problems:?}"
    );
}

#[test]
fn docs_figures_what_a_figure_is() {
    let f = |s: &str| {
        figures(s)
            .iter()
            .map(|f| f.text.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        f("reads 529.8 MB/s (−54.8 %) on 2 CPUs"),
        ["529.8 MB/s", "−54.8 %"]
    );
    assert_eq!(
        f("32–34 % of one, 1.48–1.64× and 6× as many, 8 × 32"),
        ["32", "34 %", "1.48", "1.64×", "6×"]
    );
    assert_eq!(
        f("60 MB × 30 reads of 4 MiB at 64 B, 0.6 MB, 16 workers, S4, Q3.13"),
        Vec::<String>::new()
    );
    assert_eq!(
        f("Linux 6.18, version 0.5.0, 84,494/s, 10,800 MB, ≈ 511"),
        ["84,494/s", "511"]
    );
    assert_eq!(
        f("in 2895.3 ms, 14.5k, 20.2 s and 3.3 GB/s"),
        ["2895.3 ms", "14.5k", "20.2 s", "3.3 GB/s"]
    );
    assert!(
        Printed {
            value: 529.8,
            decimals: 1
        }
        .agrees(529.84)
    );
    assert!(
        !Printed {
            value: 529.8,
            decimals: 1
        }
        .agrees(529.86)
    );
    assert_eq!(
        numbers("\"15974 [14127–20400, 75 %]\"", false),
        [15974.0, 14127.0, 20400.0, 75.0]
    );
    assert_eq!(numbers("x = -3.5, 1_025.3", true), [-3.5, 1025.3]);
    assert_eq!(csv_cells("a,\"b, c\",d"), ["a", "b, c", "d"]);
}

#[test]
fn docs_figures_references_resolve_csv_json_text_and_arithmetic() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("t.csv"),
        "name,MB/s\nku,\"529.8 [500–600, 75 %]\"\nl2,600\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("r.json"), r#"{"points":[{"v":3.25}]}"#).unwrap();
    std::fs::write(dir.path().join("s.rs"), "pub const KU: f64 = 1_025.3;\n").unwrap();
    std::fs::write(
        dir.path().join("c.txt"),
        "memcpy 4 KiB      48.0 GB/s\nmemcpy 4 KiB at 16   1.8 GB/s\n  58.0 [ 54.4- 71.5]\n",
    )
    .unwrap();
    let doc = "<!-- source t = t.csv -->\n\
               KU 529.8 MB/s<!-- = t|1|MB/s --> of 600 MB/s<!-- = t|l2|2 -->,\n\
               500–600 MB/s<!-- = t|ku|MB/s|2; t|ku|MB/s|3 --> and 3.3<!-- = r.json|/points/0/v -->\n\
               seed 1025.3 MB/s<!-- = s.rs|KU: f64 = --> is 88.3 %<!-- = 100 * {t|1|2} / {t|2|2} -->\n\
               a 50 µs<!-- = set --> slack, 4 MiB chunks, say 5 GB/s<!-- = example -->, 13 µs<!-- = unchecked -->\n\
               48.0 GB/s<!-- = c.txt|\"memcpy 4 KiB  \" --> and 1.8 GB/s<!-- = c.txt|at 16 --> 71.5 µs<!-- = c.txt|:3|3 -->";
    let (problems, n) = check(doc, dir.path(), "d.md");
    assert_eq!(problems, Vec::<String>::new());
    assert_eq!(n, 13);
    let (problems, _) = check("48.0 GB/s<!-- = c.txt|memcpy 4 KiB -->", dir.path(), "d.md");
    assert!(
        problems[0].contains("2 lines of c.txt contain"),
        "{problems:?}"
    );
    let (problems, _) = check(
        "now 529.7 MB/s<!-- = t.csv|1|MB/s -->\nand 529.8 MB/s",
        dir.path(),
        "d.md",
    );
    assert!(
        problems[0].starts_with("d.md:1: 529.7 MB/s does not agree"),
        "{problems:?}"
    );
    assert!(
        problems[1].starts_with("d.md:2: 529.8 MB/s has no reference"),
        "{problems:?}"
    );
}
