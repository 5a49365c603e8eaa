//! Parity of the kernel twins: every OpenCL kernel file against its CUDA twin.
//!
//! The twins must have the same kernels, parameters and algorithm text, differing only in how
//! each API spells the same thing. The check normalises both to one canonical form and diffs
//! the result line by line, per kernel:
//!
//! 1. Lex the text as C (comments dropped, string and character literals kept whole), so every
//!    mapping is token-aware: `threadIdx.x` never matches inside `my_threadIdx.x` or `s.threadIdx.x`.
//! 2. Rewrite API spellings to the canonical form with the tables [`SPELLINGS`],
//!    [`POINTER_QUALIFIERS`] and [`OBJECT_QUALIFIERS`]. The canonical spelling is the OpenCL
//!    one, except that pointer address-space qualifiers are dropped (CUDA has none).
//! 3. Render each source line's tokens with one spacing rule (whitespace collapsed), drop lines
//!    left empty, and keep the source line number for the report.
//! 4. Split each file into kernels (`__kernel void NAME(` after normalisation, which is also how
//!    `extern "C" __global__ void NAME(` reads) and the text outside kernels, compared as the
//!    pseudo-kernel [`FILE_SCOPE`] (macros such as `LAST_WARP_STEP` live there).
//! 5. Diff each pair of kernels with a longest-common-subsequence line diff. A differing line is
//!    allowed when the allow-list ([`load_allow_list`]) names it with a reason; any other
//!    difference, and any kernel on one side only, fails.
//!
//! The preludes legitimately differ (they define the same macros in each API's terms), so they
//! are not diffed: both must `#define` the same set of macro names.
//!
//! Normalisation is the same function for both sides. A file that used the other API's spelling
//! would normalise as if it were correct; the compilers catch that, this check does not.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::sync::OnceLock;

use thiserror::Error;

use crate::backend::Api;
use crate::kernels::{extension, folder, stems, KernelSources};

/// The allow-list shipped with the crate (`kernels_parity_allow.txt`).
pub const EMBEDDED_ALLOW_LIST: &str = include_str!("../kernels_parity_allow.txt");

/// The name of the pseudo-kernel holding a file's text outside every kernel.
pub const FILE_SCOPE: &str = "<file-scope>";

/// The stem of the prelude pair, compared by macro names instead of line by line.
pub const PRELUDE: &str = "prelude";

/// API spellings of the same thing: (OpenCL, CUDA). Each side is matched as a whole token
/// sequence and rewritten to the OpenCL column, the canonical form.
///
/// Longer patterns win at the same position. An entry whose pattern is a parenthesised
/// expression is not applied where the parentheses belong to a call, a cast or a statement
/// (`f(...)`, `if (...)`); an entry whose pattern is a bare expression is applied only where its
/// neighbours bind more loosely than its loosest operator (`x * blockIdx.x * blockDim.x + ...`
/// is left alone), so a rewrite never changes what an expression means. An OpenCL text that
/// spells such an expression out in OpenCL builtins (`get_group_id(0) * get_local_size(0) +
/// get_local_id(0)`) is rewritten the same way: it is the same value (the harness launches
/// without a global offset).
pub const SPELLINGS: &[(&str, &str)] = &[
    ("__kernel void", "extern \"C\" __global__ void"),
    (
        "get_global_id(0)",
        "(blockIdx.x * blockDim.x + threadIdx.x)",
    ),
    ("get_global_id(0)", "blockIdx.x * blockDim.x + threadIdx.x"),
    ("get_global_size(0)", "(gridDim.x * blockDim.x)"),
    ("get_global_size(0)", "gridDim.x * blockDim.x"),
    ("get_local_id(0)", "threadIdx.x"),
    ("get_local_size(0)", "blockDim.x"),
    ("get_group_id(0)", "blockIdx.x"),
    ("get_num_groups(0)", "gridDim.x"),
    ("barrier(CLK_LOCAL_MEM_FENCE)", "__syncthreads()"),
    ("uint", "unsigned int"),
];

/// Address-space qualifiers of a pointer (a parameter, a variable or a cast whose declarator
/// has a `*`): (OpenCL, CUDA). CUDA pointers carry no address space, so both columns
/// canonicalise to nothing.
pub const POINTER_QUALIFIERS: &[(&str, &str)] = &[("__global", ""), ("__local", "")];

/// The memory space of an object (an array or a scalar, no `*`) declared in a kernel:
/// (OpenCL, CUDA). Canonical form: the OpenCL column.
pub const OBJECT_QUALIFIERS: &[(&str, &str)] = &[("__local", "__shared__")];

/// Words that precede an expression: an expression after them starts there.
const EXPR_START_KEYWORDS: &[&str] = &["return", "case", "else", "do"];

/// Words before `(` that are control statements rather than calls (spacing only).
const CONTROL_KEYWORDS: &[&str] = &["if", "for", "while", "switch", "return"];

/// Attribute words that may sit between `__kernel void` and the kernel's name.
const ATTRIBUTE_WORDS: &[&str] = &["__attribute__", "__launch_bounds__"];

const PUNCT3: &[&str] = &["<<=", ">>=", "..."];
const PUNCT2: &[&str] = &[
    "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-=", "*=", "/=", "%=",
    "&=", "|=", "^=", "##",
];
const ASSIGNMENTS: &[&str] = &[
    "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=",
];

/// Errors of the allow-list; each names the 1-based line it was found on.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ParityError {
    #[error(
        "allow-list line {line}: {message} (expected `file:kernel: <normalised line text> | <reason>`)"
    )]
    Malformed { line: usize, message: String },
    #[error("allow-list line {line}: unknown kernel file '{file}'; known: {known}")]
    UnknownFile {
        line: usize,
        file: String,
        known: String,
    },
}

/// One reviewed, intended difference between the twins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowEntry {
    /// The file stem (`matvec`).
    pub file: String,
    /// The kernel name, or [`FILE_SCOPE`].
    pub kernel: String,
    /// The differing line in normalised form.
    pub text: String,
    pub reason: String,
    /// The 1-based line of the allow-list the entry came from.
    pub line: usize,
}

/// One differing line of a kernel pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLine {
    /// The side the line is on: OpenCL (`- cl`) or CUDA (`+ cu`).
    pub api: Api,
    /// The 1-based line in that side's source file.
    pub line: usize,
    /// The normalised text.
    pub text: String,
    /// The allow-list's reason, when an entry names this difference.
    pub allowed: Option<String>,
}

/// A kernel (or the [`FILE_SCOPE`] pseudo-kernel) present in both twins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelParity {
    pub name: String,
    /// The differing lines, OpenCL ones before CUDA ones within a change; empty when the
    /// normalised texts match.
    pub diff: Vec<DiffLine>,
}

impl KernelParity {
    pub fn identical(&self) -> bool {
        self.diff.is_empty()
    }

    /// True when every difference is allowed.
    pub fn passed(&self) -> bool {
        self.diff.iter().all(|d| d.allowed.is_some())
    }
}

/// The parity of one file pair.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileParity {
    pub stem: String,
    /// Why a side could not be read (the file then fails).
    pub error: Option<String>,
    /// Kernels defined only in the OpenCL file (always a failure).
    pub only_in_opencl: Vec<String>,
    /// Kernels defined only in the CUDA file (always a failure).
    pub only_in_cuda: Vec<String>,
    /// Kernels in both files, in OpenCL order, then [`FILE_SCOPE`]. Empty for the prelude.
    pub kernels: Vec<KernelParity>,
    /// The prelude only: macro names `#define`d by the OpenCL prelude alone (a failure).
    pub macros_only_in_opencl: Vec<String>,
    /// The prelude only: macro names `#define`d by the CUDA prelude alone (a failure).
    pub macros_only_in_cuda: Vec<String>,
    /// The prelude only: how many macro names both define.
    pub macros_shared: usize,
    /// Allow-list entries for this file that matched no difference (stale; not a failure).
    pub unused_allow: Vec<AllowEntry>,
}

impl FileParity {
    pub fn passed(&self) -> bool {
        self.error.is_none()
            && self.only_in_opencl.is_empty()
            && self.only_in_cuda.is_empty()
            && self.macros_only_in_opencl.is_empty()
            && self.macros_only_in_cuda.is_empty()
            && self.kernels.iter().all(KernelParity::passed)
    }
}

/// The parity of every file pair, prelude first.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParityReport {
    pub files: Vec<FileParity>,
}

impl ParityReport {
    pub fn passed(&self) -> bool {
        self.files.iter().all(FileParity::passed)
    }

    /// A human-readable report: per file, per kernel "identical", allowed differences with
    /// their reasons, or the failing diff lines marked `- cl` / `+ cu`.
    pub fn render(&self) -> String {
        let mut s = String::new();
        s.push_str(
            "Kernel parity: OpenCL twins against CUDA twins, after normalising API spellings\n",
        );
        let (mut identical, mut allowed, mut failures) = (0usize, 0usize, 0usize);
        for f in &self.files {
            let _ = writeln!(s, "\n{}", f.stem);
            if let Some(e) = &f.error {
                failures += 1;
                let _ = writeln!(s, "  FAIL       {e}");
                continue;
            }
            if f.stem == PRELUDE {
                render_macros(&mut s, f, &mut failures);
            }
            for k in &f.kernels {
                if k.identical() {
                    identical += 1;
                    let _ = writeln!(s, "  identical  {}", k.name);
                    continue;
                }
                let open = k.diff.iter().filter(|d| d.allowed.is_none()).count();
                if open == 0 {
                    allowed += 1;
                    let _ = writeln!(
                        s,
                        "  allowed    {}: {} differing line(s), all allowed",
                        k.name,
                        k.diff.len()
                    );
                } else {
                    failures += 1;
                    let _ = writeln!(
                        s,
                        "  FAIL       {}: {} differing line(s) not allowed",
                        k.name, open
                    );
                }
                for d in &k.diff {
                    let mark = match d.api {
                        Api::OpenCl => "- cl",
                        Api::Cuda => "+ cu",
                    };
                    let _ = write!(s, "      {mark} L{:<4} {}", d.line, d.text);
                    if let Some(reason) = &d.allowed {
                        let _ = write!(s, "    [allowed: {reason}]");
                    }
                    s.push('\n');
                }
            }
            for (names, api) in [
                (&f.only_in_opencl, Api::OpenCl),
                (&f.only_in_cuda, Api::Cuda),
            ] {
                for name in names {
                    failures += 1;
                    let _ = writeln!(
                        s,
                        "  FAIL       {name}: only in {} ({}/{}.{})",
                        api.label(),
                        folder(api),
                        f.stem,
                        extension(api)
                    );
                }
            }
            for e in &f.unused_allow {
                let _ = writeln!(
                    s,
                    "  note       allow-list line {} matches no difference (stale): {}:{}: {}",
                    e.line, e.file, e.kernel, e.text
                );
            }
        }
        let verdict = if self.passed() { "PASS" } else { "FAIL" };
        let _ = writeln!(
            s,
            "\nResult: {verdict}: {identical} identical, {allowed} with allowed differences only, \
             {failures} failure(s)"
        );
        s
    }
}

fn render_macros(s: &mut String, f: &FileParity, failures: &mut usize) {
    if f.macros_only_in_opencl.is_empty() && f.macros_only_in_cuda.is_empty() {
        let _ = writeln!(
            s,
            "  identical  macro names: both preludes #define the same {}",
            f.macros_shared
        );
        return;
    }
    for (names, api) in [
        (&f.macros_only_in_opencl, Api::OpenCl),
        (&f.macros_only_in_cuda, Api::Cuda),
    ] {
        for name in names {
            *failures += 1;
            let _ = writeln!(
                s,
                "  FAIL       macro {name} is #defined only in {} ({}/{}.{})",
                api.label(),
                folder(api),
                f.stem,
                extension(api)
            );
        }
    }
}

/// Checks every file pair of `sources`: the prelude by macro names, the kernel files kernel
/// by kernel, with `allow` naming the intended differences.
pub fn check(sources: &KernelSources, allow: &[AllowEntry]) -> ParityReport {
    let mut used = vec![false; allow.len()];
    let mut files = Vec::new();
    for stem in stems() {
        let cl = sources.file(Api::OpenCl, stem);
        let cu = sources.file(Api::Cuda, stem);
        let mut fp = match (cl, cu) {
            (Ok(cl), Ok(cu)) if stem == PRELUDE => compare_preludes(&cl, &cu),
            (Ok(cl), Ok(cu)) => compare_file(stem, &cl, &cu, allow, &mut used),
            (cl, cu) => FileParity {
                error: Some(
                    [cl.err(), cu.err()]
                        .into_iter()
                        .flatten()
                        .map(|e| e.to_string())
                        .collect::<Vec<_>>()
                        .join("; "),
                ),
                ..FileParity::default()
            },
        };
        fp.stem = stem.to_string();
        files.push(fp);
    }
    // Entries naming a file that was not compared (only possible for hand-built entries) have
    // nowhere to be reported and are ignored.
    for (entry, _) in allow.iter().zip(&used).filter(|(_, u)| !**u) {
        if let Some(f) = files.iter_mut().find(|f| f.stem == entry.file) {
            f.unused_allow.push(entry.clone());
        }
    }
    ParityReport { files }
}

/// Compares the macro names the two preludes `#define`.
fn compare_preludes(cl: &str, cu: &str) -> FileParity {
    let a = defined_macros(cl);
    let b = defined_macros(cu);
    FileParity {
        stem: PRELUDE.to_string(),
        macros_only_in_opencl: a.difference(&b).cloned().collect(),
        macros_only_in_cuda: b.difference(&a).cloned().collect(),
        macros_shared: a.intersection(&b).count(),
        ..FileParity::default()
    }
}

/// Every macro name a text `#define`s (conditionally or not).
pub fn defined_macros(text: &str) -> BTreeSet<String> {
    let toks = lex(text);
    let mut names = BTreeSet::new();
    for (k, t) in toks.iter().enumerate() {
        if t.text == "#" && starts_logical_line(&toks, k) {
            if let (Some(d), Some(n)) = (toks.get(k + 1), toks.get(k + 2)) {
                if d.text == "define" && n.kind == Kind::Ident {
                    names.insert(n.text.clone());
                }
            }
        }
    }
    names
}

/// Compares one kernel file pair; marks the allow entries it uses in `used`.
fn compare_file(
    stem: &str,
    cl: &str,
    cu: &str,
    allow: &[AllowEntry],
    used: &mut [bool],
) -> FileParity {
    let a = split_kernels(cl);
    let b = split_kernels(cu);
    let mut fp = FileParity {
        stem: stem.to_string(),
        ..FileParity::default()
    };
    for sa in &a {
        match b.iter().find(|sb| sb.name == sa.name) {
            None => fp.only_in_opencl.push(sa.name.clone()),
            Some(sb) => {
                let mut diff = diff_lines(&sa.lines, &sb.lines);
                for d in &mut diff {
                    let hit = allow
                        .iter()
                        .position(|e| e.file == stem && e.kernel == sa.name && e.text == d.text);
                    if let Some(i) = hit {
                        d.allowed = Some(allow[i].reason.clone());
                        if let Some(u) = used.get_mut(i) {
                            *u = true;
                        }
                    }
                }
                fp.kernels.push(KernelParity {
                    name: sa.name.clone(),
                    diff,
                });
            }
        }
    }
    fp.only_in_cuda = b
        .iter()
        .filter(|sb| !a.iter().any(|sa| sa.name == sb.name))
        .map(|sb| sb.name.clone())
        .collect();
    fp
}

/// Parses the allow-list: one entry per line, `file:kernel: <normalised line text> | <reason>`;
/// blank lines and lines starting with `#` are skipped. The reason is everything after the
/// last ` | `; the text is normalised like kernel text, so its spacing does not matter.
///
/// # Errors
///
/// [`ParityError`] for the first malformed line (missing separator, empty part, a kernel that
/// is not an identifier) or unknown file stem, naming its 1-based line.
pub fn load_allow_list(text: &str) -> Result<Vec<AllowEntry>, ParityError> {
    let known: Vec<&str> = stems().into_iter().filter(|s| *s != PRELUDE).collect();
    let mut entries = Vec::new();
    for (idx, raw) in text.lines().enumerate() {
        let line = idx + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let malformed = |message: &str| ParityError::Malformed {
            line,
            message: message.to_string(),
        };
        // Trailing blanks stay, so that `text |   ` reads as an empty reason.
        let (file, rest) = raw
            .trim_start()
            .split_once(':')
            .ok_or_else(|| malformed("no ':' after the file name"))?;
        let file = file.trim();
        if file.is_empty() {
            return Err(malformed("empty file name"));
        }
        if !known.contains(&file) {
            return Err(ParityError::UnknownFile {
                line,
                file: file.to_string(),
                known: known.join(", "),
            });
        }
        let (kernel, rest) = rest
            .split_once(':')
            .ok_or_else(|| malformed("no ':' after the kernel name"))?;
        let kernel = kernel.trim();
        if kernel != FILE_SCOPE && !is_identifier(kernel) {
            return Err(malformed(&format!(
                "kernel '{kernel}' is neither an identifier nor {FILE_SCOPE}"
            )));
        }
        let (body, reason) = rest
            .rsplit_once(" | ")
            .ok_or_else(|| malformed("no ' | ' before the reason"))?;
        let reason = reason.trim();
        if reason.is_empty() {
            return Err(malformed("empty reason"));
        }
        let body = normalise_line(body);
        if body.is_empty() {
            return Err(malformed("empty line text"));
        }
        entries.push(AllowEntry {
            file: file.to_string(),
            kernel: kernel.to_string(),
            text: body,
            reason: reason.to_string(),
            line,
        });
    }
    Ok(entries)
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

// ---------------------------------------------------------------------------------------------
// Normalisation.

/// One normalised source line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NormLine {
    /// The 1-based line in the source file.
    pub line: usize,
    pub text: String,
}

/// A kernel (or [`FILE_SCOPE`]) of a normalised file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    pub lines: Vec<NormLine>,
}

/// Normalises a whole file (either API): one [`NormLine`] per source line that has code.
pub fn normalise(text: &str) -> Vec<NormLine> {
    render_lines(&rewrite(&lex(text), rules()))
}

/// Normalises a whole file to one string, one line per line of code (equal for twins that
/// normalise identically, so suited to hashing).
pub fn normalise_text(text: &str) -> String {
    normalise(text)
        .into_iter()
        .map(|l| l.text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Normalises a fragment onto a single line (line breaks inside it are ignored).
pub fn normalise_line(text: &str) -> String {
    render(&rewrite(&lex(text), rules()))
}

/// Splits a file (either API) into its kernels, in order, then [`FILE_SCOPE`]; lines are
/// normalised. A kernel runs from the line of `__kernel` to the line of its closing brace; a
/// second kernel of the same name is called `NAME#2`.
pub fn split_kernels(text: &str) -> Vec<Section> {
    let toks = rewrite(&lex(text), rules());
    let mut spans: Vec<(String, usize, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut k = 0;
    while k < toks.len() {
        if depth == 0 && toks[k].text == "__kernel" {
            if let Some((name, end)) = kernel_at(&toks, k) {
                let mut unique = name.clone();
                let mut n = 1;
                while spans.iter().any(|(s, _, _)| *s == unique) {
                    n += 1;
                    unique = format!("{name}#{n}");
                }
                spans.push((unique, toks[k].line, toks[end].line));
                k = end + 1;
                continue;
            }
        }
        match toks[k].text.as_str() {
            "{" => depth += 1,
            "}" => depth = depth.saturating_sub(1),
            _ => {}
        }
        k += 1;
    }
    let mut sections: Vec<Section> = spans
        .iter()
        .map(|(name, _, _)| Section {
            name: name.clone(),
            lines: Vec::new(),
        })
        .collect();
    let mut file_scope = Vec::new();
    for line in render_lines(&toks) {
        match spans
            .iter()
            .position(|(_, first, last)| (*first..=*last).contains(&line.line))
        {
            Some(i) => sections[i].lines.push(line),
            None => file_scope.push(line),
        }
    }
    sections.push(Section {
        name: FILE_SCOPE.to_string(),
        lines: file_scope,
    });
    sections
}

/// At a `__kernel` token: the kernel's name and the index of its closing brace, or None for a
/// prototype or something that is not a kernel definition.
fn kernel_at(toks: &[Tok], start: usize) -> Option<(String, usize)> {
    let mut j = start + 1;
    let name_at = loop {
        let t = toks.get(j)?;
        if matches!(t.text.as_str(), ";" | "{" | "}") {
            return None;
        }
        if t.kind == Kind::Ident && toks.get(j + 1).is_some_and(|n| n.text == "(") {
            if ATTRIBUTE_WORDS.contains(&t.text.as_str()) {
                j = closing(toks, j + 1)? + 1;
                continue;
            }
            break j;
        }
        j += 1;
    };
    let params_end = closing(toks, name_at + 1)?;
    let mut b = params_end + 1;
    loop {
        match toks.get(b)?.text.as_str() {
            "{" => break,
            ";" => return None,
            _ => b += 1,
        }
    }
    let end = closing(toks, b).unwrap_or(toks.len() - 1);
    Some((toks[name_at].text.clone(), end))
}

/// The index of the bracket closing the one at `open` (`(`/`)`, `{`/`}`, `[`/`]`).
fn closing(toks: &[Tok], open: usize) -> Option<usize> {
    let (o, c) = match toks.get(open)?.text.as_str() {
        "(" => ("(", ")"),
        "{" => ("{", "}"),
        "[" => ("[", "]"),
        _ => return None,
    };
    let mut depth = 0usize;
    for (k, t) in toks.iter().enumerate().skip(open) {
        if t.text == o {
            depth += 1;
        } else if t.text == c {
            depth -= 1;
            if depth == 0 {
                return Some(k);
            }
        }
    }
    None
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ident,
    Number,
    /// A string or character literal.
    Literal,
    Punct,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Tok {
    text: String,
    kind: Kind,
    /// The 1-based source line.
    line: usize,
    /// Whitespace (or a comment) separates it from the previous token.
    space_before: bool,
    /// The last token of a preprocessor directive (an expression ends there).
    ends_directive: bool,
    /// The name in `#define NAME`.
    define_name: bool,
    /// The first token of a `#define`'s replacement text (an expression starts there).
    macro_body: bool,
}

impl Tok {
    fn new(text: &str, kind: Kind, line: usize) -> Tok {
        Tok {
            text: text.to_string(),
            kind,
            line,
            space_before: true,
            ends_directive: false,
            define_name: false,
            macro_body: false,
        }
    }
}

fn lex(src: &str) -> Vec<Tok> {
    let c: Vec<char> = src.chars().collect();
    let mut toks = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let mut space = true;
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
            space = true;
            continue;
        }
        if ch.is_whitespace() {
            i += 1;
            space = true;
            continue;
        }
        if ch == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
            space = true;
            continue;
        }
        if ch == '/' && c.get(i + 1) == Some(&'*') {
            space = true;
            i += 2;
            while i < c.len() && !(c[i] == '*' && c.get(i + 1) == Some(&'/')) {
                if c[i] == '\n' {
                    line += 1;
                }
                i += 1;
            }
            i = (i + 2).min(c.len());
            continue;
        }
        let start = i;
        let kind = if ch == '"' || ch == '\'' {
            i += 1;
            while i < c.len() && c[i] != ch && c[i] != '\n' {
                if c[i] == '\\' && c.get(i + 1).is_some_and(|n| *n != '\n') {
                    i += 1;
                }
                i += 1;
            }
            if c.get(i) == Some(&ch) {
                i += 1;
            }
            Kind::Literal
        } else if ch.is_ascii_digit()
            || (ch == '.' && c.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            i += 1;
            while let Some(&d) = c.get(i) {
                let exponent_sign =
                    (d == '+' || d == '-') && matches!(c[i - 1], 'e' | 'E' | 'p' | 'P');
                if d.is_ascii_alphanumeric() || d == '_' || d == '.' || exponent_sign {
                    i += 1;
                } else {
                    break;
                }
            }
            Kind::Number
        } else if ch.is_alphabetic() || ch == '_' {
            while c.get(i).is_some_and(|d| d.is_alphanumeric() || *d == '_') {
                i += 1;
            }
            Kind::Ident
        } else {
            let rest: String = c[i..(i + 3).min(c.len())].iter().collect();
            i += PUNCT3
                .iter()
                .chain(PUNCT2)
                .find(|p| rest.starts_with(**p))
                .map_or(1, |p| p.len());
            Kind::Punct
        };
        let text: String = c[start..i].iter().collect();
        toks.push(Tok {
            space_before: space,
            ..Tok::new(&text, kind, line)
        });
        space = false;
    }
    mark_directives(&mut toks);
    toks
}

/// True when token `k` is the first of a logical line (not after a `\` continuation).
fn starts_logical_line(toks: &[Tok], k: usize) -> bool {
    match k.checked_sub(1).and_then(|p| toks.get(p)) {
        None => true,
        Some(prev) => {
            prev.ends_directive
                || (toks.get(k).is_some_and(|t| prev.line < t.line) && prev.text != "\\")
        }
    }
}

fn mark_directives(toks: &mut [Tok]) {
    let mut k = 0;
    while k < toks.len() {
        if toks[k].text != "#" || !starts_logical_line(toks, k) {
            k += 1;
            continue;
        }
        // The directive runs to the end of its logical line.
        let mut e = k;
        while e + 1 < toks.len() && (toks[e + 1].line == toks[e].line || toks[e].text == "\\") {
            e += 1;
        }
        toks[e].ends_directive = true;
        let is_define = toks.get(k + 1).is_some_and(|t| t.text == "define");
        if is_define && e >= k + 2 && toks[k + 2].kind == Kind::Ident {
            toks[k + 2].define_name = true;
            // A `(` glued to the name opens a parameter list; the body follows it.
            let body = match toks.get(k + 3) {
                Some(t) if t.text == "(" && !t.space_before => closing(toks, k + 3).map(|c| c + 1),
                _ => Some(k + 3),
            };
            if let Some(b) = body.filter(|b| *b <= e) {
                toks[b].macro_body = true;
            }
        }
        k = e + 1;
    }
}

/// What a rewrite rule's pattern is, which decides where it may apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// A plain token sequence: applies anywhere except after `.` or `->`.
    Plain,
    /// A whole parenthesised expression: not where the parentheses are a call's or a
    /// statement's (after an identifier, `)` or `]`).
    Group,
    /// A bare expression whose loosest operator has this C precedence level (3 multiplicative,
    /// 4 additive): only where both neighbours bind more loosely.
    Expr(u8),
}

#[derive(Debug, Clone)]
struct Rule {
    from: Vec<String>,
    to: Vec<Tok>,
    shape: Shape,
}

/// The rules compiled from [`SPELLINGS`], longest pattern first, with the derived rules for
/// expressions spelled out in OpenCL builtins.
fn rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        let mut list: Vec<Rule> = SPELLINGS
            .iter()
            .map(|(cl, cu)| {
                let from: Vec<String> = lex(cu).into_iter().map(|t| t.text).collect();
                Rule {
                    shape: shape_of(&from),
                    from,
                    to: lex(cl),
                }
            })
            .collect();
        let plain: Vec<Rule> = list
            .iter()
            .filter(|r| r.shape == Shape::Plain)
            .cloned()
            .collect();
        let derived: Vec<Rule> = list
            .iter()
            .filter(|r| r.shape != Shape::Plain)
            .filter_map(|r| {
                let pattern: Vec<Tok> = r.from.iter().map(|t| tok(t, 1)).collect();
                let from: Vec<String> = rewrite(&pattern, &plain)
                    .into_iter()
                    .map(|t| t.text)
                    .collect();
                let to: Vec<String> = r.to.iter().map(|t| t.text.clone()).collect();
                (from != r.from && from != to).then(|| Rule {
                    from,
                    to: r.to.clone(),
                    shape: r.shape,
                })
            })
            .collect();
        list.extend(derived);
        list.sort_by_key(|r| std::cmp::Reverse(r.from.len()));
        list
    })
}

fn tok(text: &str, line: usize) -> Tok {
    let kind = match text.chars().next() {
        Some(c) if c.is_alphabetic() || c == '_' => Kind::Ident,
        Some(c) if c.is_ascii_digit() => Kind::Number,
        Some('"' | '\'') => Kind::Literal,
        _ => Kind::Punct,
    };
    Tok::new(text, kind, line)
}

fn shape_of(pattern: &[String]) -> Shape {
    let toks: Vec<Tok> = pattern.iter().map(|t| tok(t, 1)).collect();
    if pattern.len() >= 2 && closing(&toks, 0) == Some(pattern.len() - 1) {
        return Shape::Group;
    }
    let mut depth = 0usize;
    let mut loosest: Option<u8> = None;
    for (k, t) in pattern.iter().enumerate() {
        match t.as_str() {
            "(" | "[" => depth += 1,
            ")" | "]" => depth = depth.saturating_sub(1),
            s if depth == 0 && k > 0 => {
                if let Some(p) = binary_precedence(s) {
                    loosest = Some(loosest.map_or(p, |l| l.max(p)));
                }
            }
            _ => {}
        }
    }
    loosest.map_or(Shape::Plain, Shape::Expr)
}

/// C precedence level of a binary operator (lower binds tighter).
fn binary_precedence(op: &str) -> Option<u8> {
    Some(match op {
        "*" | "/" | "%" => 3,
        "+" | "-" => 4,
        "<<" | ">>" => 5,
        "<" | ">" | "<=" | ">=" => 6,
        "==" | "!=" => 7,
        "&" => 8,
        "^" => 9,
        "|" => 10,
        "&&" => 11,
        "||" => 12,
        _ => return None,
    })
}

/// Where an operand ends (so a following `-`, `*`, `&`, `+` is binary).
fn is_operand_end(t: &Tok) -> bool {
    match t.kind {
        Kind::Ident => !EXPR_START_KEYWORDS.contains(&t.text.as_str()) && t.text != "sizeof",
        Kind::Number | Kind::Literal => true,
        Kind::Punct => matches!(t.text.as_str(), ")" | "]" | "++" | "--"),
    }
}

/// The last token of `out` that is not a line continuation, with its index.
fn last_significant(out: &[Tok]) -> Option<(usize, &Tok)> {
    out.iter().enumerate().rev().find(|(_, t)| t.text != "\\")
}

/// May an expression of precedence `level` be rewritten after what `out` ends with?
fn left_ok(out: &[Tok], level: u8) -> bool {
    let Some((k, t)) = last_significant(out) else {
        return true;
    };
    if t.ends_directive {
        return true;
    }
    let s = t.text.as_str();
    match t.kind {
        Kind::Ident => EXPR_START_KEYWORDS.contains(&s),
        Kind::Number | Kind::Literal => false,
        Kind::Punct => {
            if matches!(s, "(" | "[" | "{" | "}" | ";" | "," | "?" | ":")
                || ASSIGNMENTS.contains(&s)
            {
                return true;
            }
            let Some(p) = binary_precedence(s) else {
                return false;
            };
            let binary = !matches!(s, "+" | "-" | "*" | "&")
                || last_significant(&out[..k])
                    .is_some_and(|(_, b)| !b.ends_directive && is_operand_end(b));
            binary && p > level
        }
    }
}

/// May an expression of precedence `level` ending before `input[end]` be rewritten?
fn right_ok(input: &[Tok], end: usize, level: u8) -> bool {
    if end == 0 || input[end - 1].ends_directive {
        return true;
    }
    let Some(t) = input[end..].iter().find(|t| t.text != "\\") else {
        return true;
    };
    t.kind == Kind::Punct
        && (matches!(t.text.as_str(), ")" | "]" | "}" | ";" | "," | "?" | ":")
            || binary_precedence(&t.text).is_some_and(|p| p >= level))
}

impl Rule {
    fn applies_at(&self, input: &[Tok], i: usize, out: &[Tok]) -> bool {
        let end = i + self.from.len();
        if end > input.len()
            || !input[i..end]
                .iter()
                .zip(&self.from)
                .all(|(t, f)| t.text == *f)
        {
            return false;
        }
        let prev = last_significant(out).map(|(_, t)| t);
        match self.shape {
            Shape::Plain => !prev.is_some_and(|p| p.text == "." || p.text == "->"),
            Shape::Group => {
                input[i].macro_body
                    || !prev.is_some_and(|p| {
                        !p.ends_directive
                            && ((p.kind == Kind::Ident
                                && !EXPR_START_KEYWORDS.contains(&p.text.as_str()))
                                || p.text == ")"
                                || p.text == "]")
                    })
            }
            Shape::Expr(level) => left_ok(out, level) && right_ok(input, end, level),
        }
    }
}

/// Does the qualifier at `i` qualify a pointer (a `*` before the declarator ends)?
fn qualifies_pointer(input: &[Tok], i: usize) -> bool {
    if input[i].ends_directive {
        return false;
    }
    for t in input.iter().skip(i + 1).take(24) {
        match t.text.as_str() {
            "*" => return true,
            ";" | "=" | "," | ")" | "(" | "[" | "]" | "{" | "}" | ":" => return false,
            _ if t.ends_directive => return false,
            _ => {}
        }
    }
    false
}

/// The canonical spelling of an address-space qualifier at `i` (empty: dropped), or None when
/// the token is not a qualifier in this context.
fn qualifier(input: &[Tok], i: usize) -> Option<&'static str> {
    let s = input[i].text.as_str();
    let pointer_word = POINTER_QUALIFIERS
        .iter()
        .any(|(cl, cu)| s == *cl || (!cu.is_empty() && s == *cu));
    let object_word = OBJECT_QUALIFIERS
        .iter()
        .any(|(cl, cu)| s == *cl || s == *cu);
    if !pointer_word && !object_word {
        return None;
    }
    if qualifies_pointer(input, i) {
        return pointer_word.then_some("");
    }
    OBJECT_QUALIFIERS
        .iter()
        .find(|(cl, cu)| s == *cl || s == *cu)
        .map(|(cl, _)| *cl)
}

/// Rewrites API spellings to the canonical form in one left-to-right pass.
fn rewrite(input: &[Tok], rules: &[Rule]) -> Vec<Tok> {
    let mut out: Vec<Tok> = Vec::with_capacity(input.len());
    let mut i = 0;
    while i < input.len() {
        if let Some(text) = qualifier(input, i) {
            if !text.is_empty() {
                out.push(Tok {
                    text: text.to_string(),
                    ..input[i].clone()
                });
            }
            i += 1;
            continue;
        }
        if let Some(rule) = rules.iter().find(|r| r.applies_at(input, i, &out)) {
            let end = i + rule.from.len();
            let last = rule.to.len();
            for (k, t) in rule.to.iter().enumerate() {
                out.push(Tok {
                    space_before: if k == 0 {
                        input[i].space_before
                    } else {
                        t.space_before
                    },
                    ends_directive: k + 1 == last && input[end - 1].ends_directive,
                    macro_body: k == 0 && input[i].macro_body,
                    ..Tok::new(&t.text, t.kind, input[i].line)
                });
            }
            i = end;
            continue;
        }
        out.push(input[i].clone());
        i += 1;
    }
    out
}

/// Groups tokens by source line and renders each line.
fn render_lines(toks: &[Tok]) -> Vec<NormLine> {
    let mut lines: Vec<NormLine> = Vec::new();
    let mut start = 0;
    while start < toks.len() {
        let line = toks[start].line;
        let end = toks[start..]
            .iter()
            .position(|t| t.line != line)
            .map_or(toks.len(), |n| start + n);
        lines.push(NormLine {
            line,
            text: render(&toks[start..end]),
        });
        start = end;
    }
    lines
}

/// Joins tokens with the canonical spacing.
fn render(toks: &[Tok]) -> String {
    let mut s = String::new();
    for (k, t) in toks.iter().enumerate() {
        if k > 0 && needs_space(&toks[k - 1], t) {
            s.push(' ');
        }
        s.push_str(&t.text);
    }
    s
}

fn needs_space(prev: &Tok, next: &Tok) -> bool {
    let (p, n) = (prev.text.as_str(), next.text.as_str());
    if matches!(p, "(" | "[" | "." | "->" | "!" | "~") || (p == "#" && next.kind == Kind::Ident) {
        return false;
    }
    if matches!(n, ")" | "]" | "," | ";" | "." | "->") {
        return false;
    }
    if matches!(n, "(" | "[") {
        // Calls and subscripts are glued; so is a macro's parameter list, which only a glued
        // `(` opens (`#define F(a)` and `#define F (a)` differ).
        let call = (prev.kind == Kind::Ident
            && !CONTROL_KEYWORDS.contains(&p)
            && !(prev.define_name && next.space_before))
            || p == "]"
            || (p == ")" && n == "[");
        return !call;
    }
    if matches!(p, "++" | "--") && next.kind == Kind::Ident {
        return false;
    }
    if matches!(n, "++" | "--") && (prev.kind == Kind::Ident || matches!(p, ")" | "]")) {
        return false;
    }
    true
}

// ---------------------------------------------------------------------------------------------
// Line diff.

/// A longest-common-subsequence line diff: the lines of `a` (OpenCL) and `b` (CUDA) outside
/// the common subsequence, OpenCL lines before CUDA lines within each change.
fn diff_lines(a: &[NormLine], b: &[NormLine]) -> Vec<DiffLine> {
    let prefix = a
        .iter()
        .zip(b)
        .take_while(|(x, y)| x.text == y.text)
        .count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x.text == y.text)
        .count();
    let a = &a[prefix..a.len() - suffix];
    let b = &b[prefix..b.len() - suffix];
    let (n, m) = (a.len(), b.len());
    // lcs[i][j]: the LCS length of a[i..] and b[j..].
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i].text == b[j].text {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let line = |api: Api, l: &NormLine| DiffLine {
        api,
        line: l.line,
        text: l.text.clone(),
        allowed: None,
    };
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    // Changes are collected per run so OpenCL lines come before CUDA lines.
    let mut added = Vec::new();
    while i < n || j < m {
        if i < n && j < m && a[i].text == b[j].text {
            out.append(&mut added);
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            out.push(line(Api::OpenCl, &a[i]));
            i += 1;
        } else {
            added.push(line(Api::Cuda, &b[j]));
            j += 1;
        }
    }
    out.append(&mut added);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(cl: &str, cu: &str) {
        assert_eq!(normalise_line(cl), normalise_line(cu), "cl: {cl}\ncu: {cu}");
    }

    fn differ(cl: &str, cu: &str) {
        assert_ne!(normalise_line(cl), normalise_line(cu), "cl: {cl}\ncu: {cu}");
    }

    #[test]
    fn kernel_signature_and_pointer_qualifiers() {
        same(
            "__kernel void k(const __global float* M, uint n, __global float* W)",
            "extern \"C\" __global__ void k(const float* M, uint n, float* W)",
        );
        assert_eq!(
            normalise_line("extern \"C\"   __global__ void k(float *W)"),
            "__kernel void k(float * W)"
        );
        // __global__ without extern "C" is a different spelling (the harness looks kernels up
        // by unmangled name), and __global__ is not the __global qualifier.
        differ("__kernel void k(float* W)", "__global__ void k(float* W)");
    }

    #[test]
    fn global_id_with_and_without_parentheses() {
        same(
            "uint y = get_global_id(0);",
            "uint y = (blockIdx.x * blockDim.x + threadIdx.x);",
        );
        same(
            "uint y = get_global_id(0);",
            "uint y = blockIdx.x*blockDim.x + threadIdx.x;",
        );
        same(
            "out[get_global_id(0)] = v;",
            "out[(blockIdx.x * blockDim.x + threadIdx.x)] = v;",
        );
        same(
            "if (get_global_id(0) == 0)",
            "if ((blockIdx.x * blockDim.x + threadIdx.x) == 0)",
        );
        same(
            "x = 2 * get_global_id(0);",
            "x = 2 * (blockIdx.x * blockDim.x + threadIdx.x);",
        );
        same(
            "f(get_global_id(0), 1);",
            "f(blockIdx.x * blockDim.x + threadIdx.x, 1);",
        );
        // The OpenCL side spelling the same value out in builtins.
        same(
            "uint i = get_group_id(0) * get_local_size(0) + get_local_id(0);",
            "uint i = blockIdx.x * blockDim.x + threadIdx.x;",
        );
        assert_eq!(
            normalise_line("uint i = get_group_id(0) * get_local_size(0) + get_local_id(0);"),
            "uint i = get_global_id(0);"
        );
    }

    #[test]
    fn bare_expressions_keep_their_meaning() {
        // Tighter neighbours: not the global id, so only the atoms are mapped.
        for (cu, canonical) in [
            (
                "x = 2 * blockIdx.x * blockDim.x + threadIdx.x;",
                "x = 2 * get_group_id(0) * get_local_size(0) + get_local_id(0);",
            ),
            (
                "x = blockIdx.x * blockDim.x + threadIdx.x * 2;",
                "x = get_group_id(0) * get_local_size(0) + get_local_id(0) * 2;",
            ),
            (
                "x = n - blockIdx.x * blockDim.x + threadIdx.x;",
                "x = n - get_group_id(0) * get_local_size(0) + get_local_id(0);",
            ),
            (
                "x = n / gridDim.x * blockDim.x;",
                "x = n / get_num_groups(0) * get_local_size(0);",
            ),
        ] {
            assert_eq!(normalise_line(cu), canonical);
        }
        // A call's parentheses stay: the argument inside is rewritten.
        assert_eq!(
            normalise_line("f(blockIdx.x * blockDim.x + threadIdx.x)"),
            "f(get_global_id(0))"
        );
        // Looser neighbours on both sides.
        assert_eq!(
            normalise_line("x = n + (gridDim.x * blockDim.x) * 2 < gridDim.x * blockDim.x + 1;"),
            "x = n + get_global_size(0) * 2 < get_global_size(0) + 1;"
        );
    }

    #[test]
    fn global_size_with_and_without_parentheses() {
        same(
            "i += get_global_size(0)) {",
            "i += (gridDim.x * blockDim.x)) {",
        );
        same("i += get_global_size(0);", "i += gridDim.x * blockDim.x;");
        same(
            "s = get_num_groups(0) * get_local_size(0);",
            "s = gridDim.x * blockDim.x;",
        );
    }

    #[test]
    fn work_item_builtins_and_barrier() {
        same("t = get_local_id(0);", "t = threadIdx.x;");
        same("t = get_local_size(0);", "t = blockDim.x;");
        same("t = get_group_id(0);", "t = blockIdx.x;");
        same("t = get_num_groups(0);", "t = gridDim.x;");
        same("barrier(CLK_LOCAL_MEM_FENCE);", "__syncthreads();");
        same(
            "if (WG_SIZE >= 64) { if (tid < 32) s[tid] += s[tid + 32]; barrier(CLK_LOCAL_MEM_FENCE); } \\",
            "if (WG_SIZE >= 64) { if (tid < 32) s[tid] += s[tid + 32]; __syncthreads(); }   \\",
        );
        // Token-aware: other dimensions, members and longer names are not mapped.
        differ("t = get_local_id(0);", "t = threadIdx.y;");
        assert_eq!(normalise_line("a = s.threadIdx.x;"), "a = s.threadIdx.x;");
        assert_eq!(normalise_line("a = my_threadIdx.x;"), "a = my_threadIdx.x;");
        assert_eq!(normalise_line("a = blockDim.xy;"), "a = blockDim.xy;");
        assert_eq!(
            normalise_line("__syncthreads_count(1);"),
            "__syncthreads_count(1);"
        );
    }

    #[test]
    fn local_arrays_and_pointers() {
        same("__local float s[WG_SIZE];", "__shared__ float s[WG_SIZE];");
        same("__local float total;", "__shared__ float total;");
        assert_eq!(
            normalise_line("__shared__ float s[WG_SIZE];"),
            "__local float s[WG_SIZE];"
        );
        same(
            "__local float* p = s + (a ? 2 * b - c : 0);",
            "float* p = s + (a ? 2 * b - c : 0);",
        );
        same(
            "volatile __local float* p = s + id;",
            "volatile float* p = s + id;",
        );
        same(
            "const __global float4* in4 = (const __global float4*)in;",
            "const float4* in4 = (const float4*)in;",
        );
        // A local array is not a plain array.
        differ("__local float s[WG_SIZE];", "float s[WG_SIZE];");
    }

    #[test]
    fn unsigned_int_is_uint() {
        same("uint n4 = n / 4u;", "unsigned int n4 = n / 4u;");
        same(
            "for (unsigned int i = 0; i < n; ++i)",
            "for (uint i = 0; i < n; ++i)",
        );
        differ("uint n;", "unsigned long n;");
    }

    #[test]
    fn comments_and_whitespace() {
        same("a  =  b+c; // the sum\n", "a = b + c;   /* the\n sum */");
        same("x = \"// not a comment\";", "x = \"// not a comment\";");
        differ("x = \"// not a comment\";", "x = \"\";");
        let lines = normalise("/* one\n two */\n\n   a=1;  // c\n#define X(a)   (a) \\\n    + 1\n");
        assert_eq!(
            lines,
            vec![
                NormLine {
                    line: 4,
                    text: "a = 1;".into()
                },
                NormLine {
                    line: 5,
                    text: "#define X(a) (a) \\".into()
                },
                NormLine {
                    line: 6,
                    text: "+ 1".into()
                },
            ]
        );
    }

    #[test]
    fn macros_at_file_scope_and_directive_ends() {
        let cl = "#define GID get_global_id(0)\nint x;\n";
        let cu = "#define GID (blockIdx.x * blockDim.x + threadIdx.x)\nint x;\n";
        assert_eq!(normalise_text(cl), normalise_text(cu));
        // A bare macro body is not one expression where the macro is used (`2 * GID`), so it
        // is not the global id.
        let cu_bare = "#define GID blockIdx.x * blockDim.x + threadIdx.x\nint x;\n";
        assert_eq!(
            normalise_text(cu_bare),
            "#define GID get_group_id(0) * get_local_size(0) + get_local_id(0)\nint x;"
        );
        // A function-like macro's parameter list is not a parenthesised expression.
        assert_eq!(normalise_line("#define F(a) (a)"), "#define F(a) (a)");
        assert_eq!(normalise_line("#define F (a)"), "#define F (a)");
        // A directive ends an expression: the next line's tokens are not its neighbours.
        same(
            "#if N == get_global_size(0)\nint x;",
            "#if N == gridDim.x * blockDim.x\nint x;",
        );
        assert_eq!(
            normalise_text("#if N == gridDim.x * blockDim.x\nint x;"),
            "#if N == get_global_size(0)\nint x;"
        );
        let names =
            defined_macros("#define A 1\n# define B(x) x\n#ifdef C\n#define D\n#endif\nint E;\n");
        assert_eq!(names.into_iter().collect::<Vec<_>>(), ["A", "B", "D"]);
    }

    const CL: &str = "\
/* twin */
#define STEP(s, t) { s[t] += 1; barrier(CLK_LOCAL_MEM_FENCE); }

__kernel void add(const __global float* a, __global float* b, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        b[i] = a[i] + 1.0f;
}

__kernel void sum(const __global float* a, __global float* b, uint n)
{
    __local float s[WG_SIZE];
    s[get_local_id(0)] = a[get_global_id(0)];
    STEP(s, get_local_id(0))
    b[get_group_id(0)] = s[0];
}
";

    fn cu_of(cl: &str) -> String {
        cl.replace("__kernel void", "extern \"C\" __global__ void")
            .replace("__global ", "")
            .replace(
                "get_global_id(0)",
                "(blockIdx.x * blockDim.x + threadIdx.x)",
            )
            .replace("get_local_id(0)", "threadIdx.x")
            .replace("get_group_id(0)", "blockIdx.x")
            .replace("barrier(CLK_LOCAL_MEM_FENCE)", "__syncthreads()")
            .replace("__local float s", "__shared__ float s")
    }

    #[test]
    fn twins_that_differ_only_in_spelling_pass() {
        let cu = cu_of(CL);
        let mut used = [];
        let fp = compare_file("matvec", CL, &cu, &[], &mut used);
        assert!(fp.passed(), "{fp:?}");
        let names: Vec<&str> = fp.kernels.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["add", "sum", FILE_SCOPE]);
        assert!(fp.kernels.iter().all(KernelParity::identical));
    }

    #[test]
    fn a_changed_operator_is_caught() {
        let cu = cu_of(CL).replace("a[i] + 1.0f", "a[i] - 1.0f");
        let mut used = [];
        let fp = compare_file("matvec", CL, &cu, &[], &mut used);
        assert!(!fp.passed());
        let add = &fp.kernels[0];
        assert_eq!(add.name, "add");
        assert_eq!(
            add.diff,
            vec![
                DiffLine {
                    api: Api::OpenCl,
                    line: 8,
                    text: "b[i] = a[i] + 1.0f;".into(),
                    allowed: None
                },
                DiffLine {
                    api: Api::Cuda,
                    line: 8,
                    text: "b[i] = a[i] - 1.0f;".into(),
                    allowed: None
                },
            ]
        );
        assert!(fp.kernels[1].identical() && fp.kernels[2].identical());
        let report = ParityReport { files: vec![fp] };
        let text = report.render();
        assert!(text.contains("- cl L8    b[i] = a[i] + 1.0f;"), "{text}");
        assert!(text.contains("+ cu L8    b[i] = a[i] - 1.0f;"), "{text}");
        assert!(text.contains("FAIL       add"), "{text}");
        assert!(text.contains("identical  sum"), "{text}");
        assert!(text.contains("Result: FAIL"), "{text}");
    }

    #[test]
    fn a_file_scope_change_is_caught() {
        let cu = cu_of(CL).replace("s[t] += 1", "s[t] += 2");
        let mut used = [];
        let fp = compare_file("matvec", CL, &cu, &[], &mut used);
        assert!(!fp.passed());
        let scope = fp.kernels.iter().find(|k| k.name == FILE_SCOPE);
        assert_eq!(scope.map(|k| k.diff.len()), Some(2));
    }

    #[test]
    fn a_kernel_on_one_side_only_fails() {
        let cl = format!("{CL}\n__kernel void extra(__global float* a) {{ a[0] = 1; }}\n");
        let cu = cu_of(CL).replace("void sum(", "void summ(");
        let mut used = [];
        let fp = compare_file("matvec", &cl, &cu, &[], &mut used);
        assert!(!fp.passed());
        assert_eq!(fp.only_in_opencl, ["sum", "extra"]);
        assert_eq!(fp.only_in_cuda, ["summ"]);
        let text = ParityReport { files: vec![fp] }.render();
        assert!(
            text.contains("extra: only in OpenCL (kernels_cl/matvec.cl)"),
            "{text}"
        );
        assert!(
            text.contains("summ: only in CUDA (kernels_cu/matvec.cu)"),
            "{text}"
        );
    }

    #[test]
    fn allowed_differences_pass_with_their_reason() {
        let cu = cu_of(CL).replace("a[i] + 1.0f", "a[i] - 1.0f");
        let allow = load_allow_list(
            "# header\n\nmatvec:add: b[i]=a[i]+1.0f; | sign flip, reviewed\n\
             matvec:add:   b[i] = a[i] - 1.0f;   |   sign flip, reviewed  \n\
             matvec:sum: s[0] = 1; | stale\n",
        )
        .unwrap();
        let report = check_one("matvec", CL, &cu, &allow);
        assert!(report.passed(), "{}", report.render());
        let text = report.render();
        assert!(
            text.contains("allowed    add: 2 differing line(s), all allowed"),
            "{text}"
        );
        assert!(text.contains("[allowed: sign flip, reviewed]"), "{text}");
        assert!(
            text.contains("allow-list line 5 matches no difference"),
            "{text}"
        );
        // One entry alone leaves the other side's line failing.
        let report = check_one("matvec", CL, &cu, &allow[..1]);
        assert!(!report.passed());
        // An entry for another kernel or file does not apply.
        let other = load_allow_list("matvec:sum: b[i] = a[i] - 1.0f; | wrong kernel\nreduce:add: b[i] = a[i] - 1.0f; | wrong file\nmatvec:add: b[i] = a[i] + 1.0f; | x\n").unwrap();
        assert!(!check_one("matvec", CL, &cu, &other).passed());
    }

    fn check_one(stem: &str, cl: &str, cu: &str, allow: &[AllowEntry]) -> ParityReport {
        let mut used = vec![false; allow.len()];
        let mut fp = compare_file(stem, cl, cu, allow, &mut used);
        fp.unused_allow = allow
            .iter()
            .zip(&used)
            .filter(|(e, u)| !**u && e.file == stem)
            .map(|(e, _)| e.clone())
            .collect();
        ParityReport { files: vec![fp] }
    }

    #[test]
    fn allow_list_parses_good_lines() {
        let entries = load_allow_list(
            "# comment\n   # indented comment\n\n\
             reduce:reduce_tuned: v = a | b; | bitwise or, reviewed\n\
             peak:<file-scope>: #define X   1 | only one side needs X\n",
        )
        .unwrap();
        assert_eq!(
            entries,
            vec![
                AllowEntry {
                    file: "reduce".into(),
                    kernel: "reduce_tuned".into(),
                    text: "v = a | b;".into(),
                    reason: "bitwise or, reviewed".into(),
                    line: 4,
                },
                AllowEntry {
                    file: "peak".into(),
                    kernel: FILE_SCOPE.into(),
                    text: "#define X 1".into(),
                    reason: "only one side needs X".into(),
                    line: 5,
                },
            ]
        );
        // Entries are normalised like kernel text.
        let e =
            load_allow_list("peak:k: out[(blockIdx.x*blockDim.x+threadIdx.x)] = v; | r\n").unwrap();
        assert_eq!(e[0].text, "out[get_global_id(0)] = v;");
        assert_eq!(load_allow_list("").unwrap(), vec![]);
        assert_eq!(load_allow_list(EMBEDDED_ALLOW_LIST).unwrap(), vec![]);
    }

    #[test]
    fn allow_list_rejects_bad_lines_naming_the_line() {
        for (text, line, needle) in [
            (
                "# ok\nno colon at all | r\n",
                2,
                "no ':' after the file name",
            ),
            (
                "matvec: no kernel colon | r\n",
                1,
                "no ':' after the kernel name",
            ),
            ("\n\nmatvec:k: x = 1;\n", 3, "no ' | ' before the reason"),
            ("matvec:k: x = 1; |   \n", 1, "empty reason"),
            ("matvec:k: // only a comment | r\n", 1, "empty line text"),
            (":k: x | r\n", 1, "empty file name"),
            ("matvec:two words: x | r\n", 1, "neither an identifier"),
            ("nope:k: x | r\n", 1, "unknown kernel file 'nope'"),
            ("prelude:k: x | r\n", 1, "unknown kernel file 'prelude'"),
        ] {
            let e = load_allow_list(text).unwrap_err();
            let shown = e.to_string();
            assert!(
                shown.contains(&format!("allow-list line {line}:")),
                "{shown}"
            );
            assert!(shown.contains(needle), "{shown}");
            match e {
                ParityError::Malformed { line: l, .. }
                | ParityError::UnknownFile { line: l, .. } => {
                    assert_eq!(l, line)
                }
            }
        }
    }

    #[test]
    fn preludes_must_define_the_same_macro_names() {
        let cl = "#define A 1\n#if X\n#define W() barrier(CLK_LOCAL_MEM_FENCE)\n#endif\n#define CL_ONLY\n";
        let cu = "#define A 1\n#if X\n#define W() __syncthreads()\n#endif\n#define CU_ONLY 2\n";
        let fp = compare_preludes(cl, cu);
        assert!(!fp.passed());
        assert_eq!(fp.macros_only_in_opencl, ["CL_ONLY"]);
        assert_eq!(fp.macros_only_in_cuda, ["CU_ONLY"]);
        assert_eq!(fp.macros_shared, 2);
        let text = ParityReport { files: vec![fp] }.render();
        assert!(
            text.contains("macro CL_ONLY is #defined only in OpenCL (kernels_cl/prelude.cl)"),
            "{text}"
        );
        assert!(
            text.contains("macro CU_ONLY is #defined only in CUDA (kernels_cu/prelude.cu)"),
            "{text}"
        );
        // Different bodies of the same names are fine.
        assert!(compare_preludes("#define A 1\n", "#define A 2\n").passed());
    }

    #[test]
    fn real_embedded_kernels_pass() -> Result<(), ParityError> {
        let report = check(
            &KernelSources::embedded(),
            &load_allow_list(include_str!("../kernels_parity_allow.txt"))?,
        );
        assert!(report.passed(), "{}", report.render());
        let stems: Vec<&str> = report.files.iter().map(|f| f.stem.as_str()).collect();
        assert_eq!(stems, crate::kernels::stems());
        // Every file has kernels, and every kernel is identical (no allow entries needed).
        for f in report.files.iter().filter(|f| f.stem != PRELUDE) {
            assert!(f.kernels.len() > 1, "{}", f.stem);
            assert!(f.kernels.iter().all(KernelParity::identical), "{}", f.stem);
        }
        Ok(())
    }

    #[test]
    fn real_kernels_split_into_the_expected_kernels() {
        let sources = KernelSources::embedded();
        for api in [Api::OpenCl, Api::Cuda] {
            let text = sources.file(api, "matvec").unwrap();
            let names: Vec<String> = split_kernels(&text).into_iter().map(|s| s.name).collect();
            assert_eq!(
                names,
                [
                    "matvec_listing2",
                    "matvec_listing3",
                    "matvec_listing4",
                    "matvec_listing5",
                    "matvec_listing6",
                    "matvec_listing7",
                    "matvec_listing7_unsafe",
                    "matvec_tuned",
                    FILE_SCOPE
                ]
            );
            let reduce = split_kernels(&sources.file(api, "reduce").unwrap());
            let scope = reduce.iter().find(|s| s.name == FILE_SCOPE).unwrap();
            assert!(scope
                .lines
                .iter()
                .any(|l| l.text.starts_with("#define LAST_WARP_STEP")));
            assert!(scope
                .lines
                .iter()
                .any(|l| l.text.starts_with("#define UNROLLED_TREE")));
        }
    }

    #[test]
    fn a_changed_real_twin_is_caught_through_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        let embedded = KernelSources::embedded();
        for stem in crate::kernels::stems() {
            for api in [Api::OpenCl, Api::Cuda] {
                let d = dir.path().join(folder(api));
                std::fs::create_dir_all(&d).unwrap();
                let mut text = embedded.file(api, stem).unwrap();
                if api == Api::Cuda && stem == "reduce" {
                    text = text.replacen(
                        "sdata[tid] += sdata[tid + s];",
                        "sdata[tid] -= sdata[tid + s];",
                        1,
                    );
                }
                std::fs::write(d.join(format!("{stem}.{}", extension(api))), text).unwrap();
            }
        }
        let report = check(&KernelSources::from_dir(dir.path()), &[]);
        assert!(!report.passed());
        let text = report.render();
        assert!(
            text.contains(
                "FAIL       reduce_interleaved_divergent: 2 differing line(s) not allowed"
            ),
            "{text}"
        );
        assert!(
            text.contains("+ cu L20   sdata[tid] -= sdata[tid + s];"),
            "{text}"
        );
        // A missing file fails its pair, naming the path.
        std::fs::remove_file(dir.path().join("kernels_cu/peak.cu")).unwrap();
        let report = check(&KernelSources::from_dir(dir.path()), &[]);
        let peak = report.files.iter().find(|f| f.stem == "peak").unwrap();
        assert!(
            peak.error.as_deref().is_some_and(|e| e.contains("peak.cu")),
            "{peak:?}"
        );
    }
}

/// Property tests: kernel text from a `--kernels-dir` is user input, so no text may make the
/// lexer, the rewriter, the kernel splitter, the diff or the allow-list parser panic.
#[cfg(test)]
mod fuzz_tests {
    use std::collections::HashSet;

    use proptest::prelude::*;

    use super::*;

    /// C and API tokens that steer the lexer and the rewrite rules, and the characters that
    /// open or close something (comments, strings, directives, braces).
    const TOKENS: &[&str] = &[
        "__kernel",
        "void",
        "extern",
        "\"C\"",
        "__global__",
        "__global",
        "__local",
        "__shared__",
        "const",
        "float",
        "uint",
        "*",
        "k",
        "x",
        "(",
        ")",
        "{",
        "}",
        "[",
        "]",
        ";",
        ",",
        "+",
        "=",
        "#",
        "#define",
        "define",
        "#if",
        "#endif",
        "\\",
        "\\\n",
        "\n",
        "\n",
        " ",
        " ",
        "\t",
        "//",
        "/*",
        "*/",
        "\"",
        "'",
        "0",
        "get_global_id(0)",
        "get_local_id(0)",
        "get_group_id",
        "threadIdx.x",
        "blockIdx.x",
        "blockDim.x",
        ".",
        "barrier(CLK_LOCAL_MEM_FENCE)",
        "__syncthreads()",
        "a ? b : c",
        "é",
        "\r",
    ];

    fn soup() -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(TOKENS), 0..120).prop_map(|t| t.join(" "))
    }

    /// The largest character boundary of `text` at or before `i`.
    fn floor_boundary(text: &str, i: usize) -> usize {
        let mut i = i.min(text.len());
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    }

    /// An embedded twin with a random range deleted and random tokens inserted.
    fn mutate(text: &str, at: usize, len: usize, insert: &str) -> String {
        let start = floor_boundary(text, at % (text.len() + 1));
        let end = floor_boundary(text, start + len);
        let mut out = text.to_string();
        out.replace_range(start..end, insert);
        out
    }

    fn check_sections(text: &str) -> Result<(), TestCaseError> {
        let lines = normalise(text);
        let max_line = text.split('\n').count();
        for w in lines.windows(2) {
            prop_assert!(w[0].line < w[1].line, "lines out of order: {w:?}");
        }
        for l in &lines {
            prop_assert!(
                (1..=max_line).contains(&l.line),
                "line {} of {max_line}",
                l.line
            );
            prop_assert!(!l.text.is_empty());
        }
        let sections = split_kernels(text);
        prop_assert_eq!(sections.last().map(|s| s.name.as_str()), Some(FILE_SCOPE));
        let names: HashSet<&str> = sections.iter().map(|s| s.name.as_str()).collect();
        prop_assert_eq!(names.len(), sections.len(), "section names repeat");
        // Splitting only distributes the normalised lines; it loses and invents none.
        let split: usize = sections.iter().map(|s| s.lines.len()).sum();
        prop_assert_eq!(split, lines.len());
        Ok(())
    }

    fn check_pair(cl: &str, cu: &str) -> Result<(), TestCaseError> {
        let allow = load_allow_list(EMBEDDED_ALLOW_LIST).unwrap();
        let mut used = vec![false; allow.len()];
        let fp = compare_file("matvec", cl, cu, &allow, &mut used);
        for k in &fp.kernels {
            for d in &k.diff {
                prop_assert!(d.line >= 1 && !d.text.is_empty());
            }
        }
        // A file compared with itself has no difference.
        let same = compare_file("matvec", cl, cl, &allow, &mut used);
        prop_assert!(same.only_in_opencl.is_empty() && same.only_in_cuda.is_empty());
        prop_assert!(same.kernels.iter().all(|k| k.diff.is_empty()), "{same:?}");
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1500))]

        #[test]
        fn arbitrary_text_never_panics(text in ".{0,300}") {
            check_sections(&text)?;
            let _ = defined_macros(&text);
            let _ = normalise_line(&text);
        }

        #[test]
        fn token_soup_never_panics(a in soup(), b in soup()) {
            check_sections(&a)?;
            let _ = defined_macros(&a);
            check_pair(&a, &b)?;
        }

        #[test]
        fn allow_lists_parse_or_name_the_line(
            lines in prop::collection::vec(
                prop_oneof![
                    ".{0,40}",
                    "(matvec|reduce|peak|prelude|x| )?:([a-z_]{0,8}|<file-scope>)?:.{0,12}( \\| .{0,6})?",
                    Just("# comment".to_string()),
                    Just(String::new()),
                ],
                0..6,
            )
        ) {
            let text = lines.join("\n");
            match load_allow_list(&text) {
                Ok(entries) => {
                    for e in entries {
                        prop_assert!(stems().contains(&e.file.as_str()) && e.file != PRELUDE);
                        prop_assert!(!e.text.is_empty() && !e.reason.is_empty());
                        prop_assert!((1..=lines.len()).contains(&e.line));
                    }
                }
                Err(e) => prop_assert!(e.to_string().starts_with("allow-list line "), "{e}"),
            }
        }
    }

    proptest! {
        // The embedded files are a few hundred lines: fewer, costlier cases.
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn mutated_twins_never_panic(
            stem in prop::sample::select(&["matvec", "reduce", "peak", "prelude"][..]),
            at in any::<usize>(),
            len in 0..400usize,
            insert in soup(),
            cuda_side in any::<bool>(),
        ) {
            let sources = KernelSources::embedded();
            let cl = sources.file(Api::OpenCl, stem).unwrap();
            let cu = sources.file(Api::Cuda, stem).unwrap();
            let (cl, cu) = if cuda_side {
                (cl.clone(), mutate(&cu, at, len, &insert))
            } else {
                (mutate(&cl, at, len, &insert), cu.clone())
            };
            check_sections(&cl)?;
            check_sections(&cu)?;
            let _ = compare_preludes(&cl, &cu);
            check_pair(&cl, &cu)?;
        }
    }
}
