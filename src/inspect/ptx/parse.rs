//! The parser: the scanner's statements -> [`PtxModule`] of functions, instructions with their
//! predicates, checked `.reg` declarations and state-space variables with their literal sizes.

use super::classify::{classify_opcode, ClassCounts, InstrClass};
use super::scan::{first_token, is_identifier, scan, Event};

pub use super::scan::PtxError;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PtxModule {
    /// Every `.entry` and `.func` definition with a body, in source order.
    pub kernels: Vec<PtxKernel>,
    /// Module-scope variable declarations (`.global`, `.const`, `.shared`, `.local`).
    pub globals: Vec<VarDecl>,
}

impl PtxModule {
    pub fn kernel(&self, name: &str) -> Option<&PtxKernel> {
        self.kernels.iter().find(|k| k.name == name)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PtxKernel {
    pub name: String,
    /// The instructions of the body, nested blocks included, in source order.
    pub instructions: Vec<PtxInstruction>,
    /// Variables declared in the body (`.shared`, `.local`, ...).
    pub variables: Vec<VarDecl>,
    /// The sum of the literal sizes of the body's `.local` declarations.
    pub local_bytes: u64,
}

/// A variable declared in a state space (`.shared`, `.local`, `.global`, `.const`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarDecl {
    /// State space without the dot (`"shared"`).
    pub space: String,
    pub name: String,
    /// Size in bytes when the type and every array dimension are literal; `None` for
    /// unsized (`extern ... []`, dynamic shared memory) or unknown types.
    pub bytes: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtxInstruction {
    /// Line where the instruction starts.
    pub line: usize,
    /// The opcode: the first dotted component (`"ld"` for `ld.global.nc.v4.f32`).
    pub opcode: String,
    /// The remaining dotted components (`["global", "nc", "v4", "f32"]`).
    pub modifiers: Vec<String>,
    /// The operands as written, whitespace-normalized.
    pub operands: String,
}

impl PtxInstruction {
    pub(super) fn class(&self) -> InstrClass {
        classify_opcode(&self.opcode, &self.modifiers)
    }
}

/// Linkage directives that may precede a declaration.
const LINKAGE: &[&str] = &[".visible", ".extern", ".weak", ".common"];

fn bad(line: usize, text: &str) -> PtxError {
    PtxError::BadStatement {
        line,
        text: text.to_string(),
    }
}

/// The first whitespace-separated token, and the rest trimmed at the start.
fn next_token(s: &str) -> (&str, &str) {
    split_word(s, char::is_whitespace)
}

fn split_word(s: &str, ends: impl Fn(char) -> bool) -> (&str, &str) {
    let end = s.find(ends).unwrap_or(s.len());
    (&s[..end], s[end..].trim_start())
}

/// Skip a leading guard (`@%p1`, `@!%p1`, `@ !%p1`) of an instruction; `None` if the guard
/// names no register.
fn skip_predicate(text: &str) -> Option<&str> {
    let Some(after_at) = text.strip_prefix('@') else {
        return Some(text);
    };
    let r = after_at.trim_start();
    let (register, rest) = next_token(r.strip_prefix('!').unwrap_or(r).trim_start());
    (!register.is_empty()).then_some(rest)
}

pub(super) fn parse_instruction(text: &str, line: usize) -> Result<PtxInstruction, PtxError> {
    let rest = skip_predicate(text.trim()).ok_or_else(|| bad(line, text))?;
    // Operands may follow the opcode without a space (`mov.b64 {%r1, %r2}, ...`).
    let end = rest
        .find(|c: char| c.is_whitespace() || matches!(c, '{' | '[' | '(' | ','))
        .unwrap_or(rest.len());
    let mut parts = rest[..end].split('.');
    let opcode = parts.next().unwrap_or("");
    if opcode.is_empty() {
        return Err(bad(line, text));
    }
    Ok(PtxInstruction {
        line,
        opcode: opcode.to_string(),
        modifiers: parts
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect(),
        operands: rest[end..].trim().to_string(),
    })
}

/// Leading dotted tokens (`.v4 .f32`) without their dots, and what follows them.
fn dotted_prefix(s: &str) -> (Vec<String>, &str) {
    let mut parts = Vec::new();
    let mut rest = s.trim_start();
    while rest.starts_with('.') {
        let (tok, after) = next_token(rest);
        parts.push(tok[1..].to_string());
        rest = after;
    }
    (parts, rest)
}

/// Check `.reg .f32 %f<12>, %g;`: a type, then names, each with an optional literal count.
fn check_reg(text: &str, line: usize) -> Result<(), PtxError> {
    let body = text.trim_start().strip_prefix(".reg").unwrap_or(text);
    let (type_parts, rest) = dotted_prefix(body);
    let item_ok = |item: &str| match item.split_once('<') {
        Some((_, tail)) => tail
            .strip_suffix('>')
            .is_some_and(|n| n.trim().parse::<u64>().is_ok()),
        None => !item.is_empty(),
    };
    if type_parts.is_empty() || rest.is_empty() || !rest.split(',').map(str::trim).all(item_ok) {
        return Err(bad(line, text));
    }
    Ok(())
}

/// Size in bytes of a scalar PTX type (without the dot), if fixed.
fn scalar_size(ty: &str) -> Option<u64> {
    match ty {
        "b8" | "u8" | "s8" | "e4m3" | "e5m2" => Some(1),
        "b16" | "u16" | "s16" | "f16" | "bf16" | "e4m3x2" | "e5m2x2" => Some(2),
        "b32" | "u32" | "s32" | "f32" | "f16x2" | "bf16x2" | "tf32" => Some(4),
        "b64" | "u64" | "s64" | "f64" => Some(8),
        "b128" => Some(16),
        _ => None,
    }
}

/// The state space (no dot) a statement declares variables in.
fn declared_space(text: &str) -> Option<&'static str> {
    let tok = text.split_whitespace().find(|t| !LINKAGE.contains(t))?;
    ["global", "const", "shared", "local"]
        .into_iter()
        .find(|space| tok.strip_prefix('.') == Some(space))
}

/// Skip the directives of a declaration in `space`; returns its type components without
/// dots (`["v4", "f32"]`, the state space and linkage left out) and the name list.
fn decl_prefix<'a>(decl: &'a str, space: &str) -> (Vec<String>, &'a str) {
    let mut type_parts = Vec::new();
    let mut rest = decl.trim_start();
    while rest.starts_with('.') {
        let (tok, after) = next_token(rest);
        rest = after;
        if tok == ".align" {
            rest = next_token(rest).1;
        } else if !LINKAGE.contains(&tok) && tok.strip_prefix('.') != Some(space) {
            type_parts.push(tok[1..].to_string());
        }
    }
    (type_parts, rest)
}

/// Element size: the scalar type times the vector width, when both are known.
fn element_size(type_parts: &[String]) -> Option<u64> {
    let mut elem: Option<u64> = None;
    let mut vec_width = 1u64;
    for part in type_parts {
        match part.as_str() {
            "v2" => vec_width = 2,
            "v4" => vec_width = 4,
            "v8" => vec_width = 8,
            p => {
                if let Some(s) = scalar_size(p) {
                    elem = Some(s);
                }
            }
        }
    }
    elem.and_then(|e| e.checked_mul(vec_width))
}

/// One declared name with its array dimensions (`tile[16][17]`) and its size in bytes, unknown
/// when a dimension is not a literal (`dyn_smem[]`); `None` if the item is malformed.
fn var_item(item: &str, elem: Option<u64>) -> Option<(&str, Option<u64>)> {
    let (name, dims) = match item.find('[') {
        Some(p) => (item[..p].trim(), &item[p..]),
        None => (item, ""),
    };
    let mut bytes = elem;
    let mut rest = dims;
    while let Some(open) = rest.strip_prefix('[') {
        let close = open.find(']')?;
        let dim = open[..close].trim().parse::<u64>().ok();
        bytes = match (bytes, dim) {
            (Some(b), Some(d)) => b.checked_mul(d),
            _ => None,
        };
        rest = open[close + 1..].trim_start();
    }
    if !rest.is_empty() || name.is_empty() {
        return None;
    }
    Some((name, bytes))
}

/// Parse a state-space variable declaration such as
/// `.shared .align 4 .b8 buf[1024];` or `.global .f32 a, b[4] = {...};`.
fn parse_var_decl(text: &str, space: &str, line: usize) -> Result<Vec<VarDecl>, PtxError> {
    // An initializer does not change the size, and its braces would confuse the names.
    let decl = text.split('=').next().unwrap_or(text);
    let (type_parts, rest) = decl_prefix(decl, space);
    if rest.is_empty() {
        return Err(bad(line, text));
    }
    let elem = element_size(&type_parts);
    rest.split(',')
        .map(|item| {
            let (name, bytes) = var_item(item.trim(), elem).ok_or_else(|| bad(line, text))?;
            Ok(VarDecl {
                space: space.to_string(),
                name: name.to_string(),
                bytes,
            })
        })
        .collect()
}

/// Split off a header's first word, which ends at whitespace or at `(`.
fn header_word(s: &str) -> (&str, &str) {
    split_word(s, |c| c.is_whitespace() || c == '(')
}

/// Skip the linkage directives up to `.entry` / `.func`; whether it is a `.func`, and the
/// rest of the header; `None` if neither `.entry` nor `.func` is there.
fn split_kind(header: &str) -> Option<(bool, &str)> {
    let mut rest = header;
    loop {
        let (tok, after) = header_word(rest);
        rest = after;
        match tok {
            ".entry" => return Some((false, rest)),
            ".func" => return Some((true, rest)),
            "" => return None,
            _ => {}
        }
    }
}

/// Skips a parameter list at the start of `s`, if any; `None` if its parentheses do not balance.
fn skip_params(s: &str) -> Option<&str> {
    let Some(body) = s.strip_prefix('(') else {
        return Some(s);
    };
    let mut depth = 1usize;
    for (idx, c) in body.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(body[idx + 1..].trim_start());
                }
            }
            _ => {}
        }
    }
    None
}

fn parse_header(text: &str, line: usize) -> Result<PtxKernel, PtxError> {
    let header_err = |reason: &str| PtxError::BadHeader {
        line,
        reason: reason.to_string(),
    };
    let unbalanced = || header_err("unbalanced '('");
    let (is_func, rest) =
        split_kind(text.trim()).ok_or_else(|| header_err("missing .entry or .func"))?;
    // Only a `.func` has return parameters, written before its name.
    let rest = if is_func {
        skip_params(rest).ok_or_else(unbalanced)?
    } else {
        rest
    };
    let (name, rest) = header_word(rest);
    if !is_identifier(name) {
        return Err(header_err("missing or invalid function name"));
    }
    skip_params(rest).ok_or_else(unbalanced)?;
    Ok(PtxKernel {
        name: name.to_string(),
        ..PtxKernel::default()
    })
}

fn module_statement(module: &mut PtxModule, text: &str, line: usize) -> Result<(), PtxError> {
    let head = first_token(text);
    if !head.starts_with('.') {
        return Err(PtxError::OutsideFunction {
            line,
            text: text.to_string(),
        });
    }
    if let Some(space) = declared_space(text) {
        module.globals.extend(parse_var_decl(text, space, line)?);
    }
    // Any other directive (.version, .target, prototypes, .file, unknown ones) is ignored.
    Ok(())
}

fn body_statement(kernel: &mut PtxKernel, text: &str, line: usize) -> Result<(), PtxError> {
    let head = first_token(text);
    if head == ".reg" {
        check_reg(text, line)?;
    } else if head.starts_with('.') {
        if let Some(space) = declared_space(text) {
            kernel.variables.extend(parse_var_decl(text, space, line)?);
        }
        // `.param` (call sequences), `.pragma`, `.loc` and unknown directives: ignored.
    } else {
        kernel.instructions.push(parse_instruction(text, line)?);
    }
    Ok(())
}

/// Parses PTX text: lenient for unknown directives (ignored) and opcodes (kept, classified
/// `other`), strict about structure (the error names the line of unbalanced braces, unclosed
/// comments or strings, unterminated statements, instructions outside functions). Never panics.
pub fn parse_ptx(text: &str) -> Result<PtxModule, PtxError> {
    // The whole text is scanned first, so a scanner error wins over a parser error
    // that comes earlier in the text.
    let events = scan(text)?;
    let mut module = PtxModule::default();
    // Open blocks: (is a function body, line of its `{`); the function whose body is open.
    let mut scopes: Vec<(bool, usize)> = Vec::new();
    let mut current: Option<PtxKernel> = None;
    for event in events {
        match event {
            Event::Open {
                header: Some((header, header_line)),
                line,
            } => {
                if current.is_some() {
                    return Err(PtxError::NestedFunction { line: header_line });
                }
                current = Some(parse_header(&header, header_line)?);
                scopes.push((true, line));
            }
            Event::Open { header: None, line } => scopes.push((false, line)),
            Event::Close { line } => match scopes.pop() {
                None => return Err(PtxError::UnmatchedClose { line }),
                Some((true, _)) => {
                    if let Some(mut kernel) = current.take() {
                        kernel.local_bytes = (kernel.variables.iter())
                            .filter(|v| v.space == "local")
                            .filter_map(|v| v.bytes)
                            .fold(0u64, u64::saturating_add);
                        module.kernels.push(kernel);
                    }
                }
                Some((false, _)) => {}
            },
            Event::Stmt { text, line } => match current.as_mut() {
                Some(kernel) => body_statement(kernel, &text, line)?,
                None => module_statement(&mut module, &text, line)?,
            },
            Event::Label { name, line } => {
                if current.is_none() {
                    return Err(PtxError::OutsideFunction {
                        line,
                        text: format!("{name}:"),
                    });
                }
            }
        }
    }
    if let Some(&(_, line)) = scopes.last() {
        return Err(PtxError::UnclosedBrace { line });
    }
    Ok(module)
}

/// The function `name` of a PTX text: the text is parsed whole, and `Ok(None)` means it parses
/// but defines no such function, a case each caller words its own way.
pub fn parse_kernel(text: &str, name: &str) -> Result<Option<PtxKernel>, PtxError> {
    Ok(parse_ptx(text)?.kernel(name).cloned())
}

/// The instructions of one function (an `.entry` or a `.func`) by class.
pub fn count_classes(kernel: &PtxKernel) -> ClassCounts {
    let mut counts = ClassCounts::new();
    for instr in &kernel.instructions {
        counts.add(instr.class(), 1);
    }
    counts
}
