//! Normalisation: the spelling tables, the rewrite of API spellings to the canonical form
//! (with the precedence checks that keep an expression's meaning), the rendering of tokens
//! into normalised lines, and the split of a file into kernels.

use std::sync::OnceLock;

use super::lexer::{closing, lex, tok, Kind, Tok};
use super::FILE_SCOPE;

/// API spellings of the same thing: (OpenCL, CUDA). Each side is matched as a whole token
/// sequence and rewritten to the OpenCL column, the canonical form.
///
/// Longer patterns win at the same position. Where an expression's pattern applies is its
/// [`Shape`] (`x * blockIdx.x * blockDim.x + ...` is left alone), so a rewrite never changes
/// what an expression means; an OpenCL text that spells it out in builtins is rewritten the
/// same way ([`derived_rules`]): it is the same value (the harness launches without a global
/// offset).
const SPELLINGS: &[(&str, &str)] = &[
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
    // The second dimension of 2-D launches.
    (
        "get_global_id(1)",
        "(blockIdx.y * blockDim.y + threadIdx.y)",
    ),
    ("get_global_id(1)", "blockIdx.y * blockDim.y + threadIdx.y"),
    ("get_global_size(1)", "(gridDim.y * blockDim.y)"),
    ("get_global_size(1)", "gridDim.y * blockDim.y"),
    ("get_local_id(1)", "threadIdx.y"),
    ("get_local_size(1)", "blockDim.y"),
    ("get_group_id(1)", "blockIdx.y"),
    ("get_num_groups(1)", "gridDim.y"),
    ("barrier(CLK_LOCAL_MEM_FENCE)", "__syncthreads()"),
    ("uint", "unsigned int"),
    // The hardware approximations of the math kernels' intrinsic variants.
    ("native_sin", "__sinf"),
    ("native_exp", "__expf"),
    ("native_divide", "__fdividef"),
    // The read paths of the gather kernels (spmv, md): a restrict pointer, and a buffer read
    // through the texture path (its fetch is a prelude macro, FETCH_F1 / FETCH_F4).
    ("restrict", "__restrict__"),
    ("__read_only image1d_buffer_t", "cudaTextureObject_t"),
];

/// Address-space qualifiers of a pointer (a declarator with a `*`): (OpenCL, CUDA). CUDA
/// pointers carry no address space, so both canonicalise to nothing.
const POINTER_QUALIFIERS: &[(&str, &str)] = &[("__global", ""), ("__local", "")];

/// The memory space of an object (an array or a scalar, no `*`) declared in a kernel:
/// (OpenCL, CUDA). Canonical form: the OpenCL column.
const OBJECT_QUALIFIERS: &[(&str, &str)] = &[("__local", "__shared__")];

/// Words that precede an expression: an expression after them starts there.
const EXPR_START_KEYWORDS: &[&str] = &["return", "case", "else", "do"];

/// Words before `(` that are control statements rather than calls (spacing only).
const CONTROL_KEYWORDS: &[&str] = &["if", "for", "while", "switch", "return"];

/// Attribute words that may sit between `__kernel void` and the kernel's name.
const ATTRIBUTE_WORDS: &[&str] = &["__attribute__", "__launch_bounds__"];

const ASSIGNMENTS: &[&str] = &[
    "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=",
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct NormLine {
    pub(super) line: usize,
    pub(super) text: String,
}

/// A kernel (or `FILE_SCOPE`) of a normalised file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Section {
    pub(super) name: String,
    pub(super) lines: Vec<NormLine>,
}

/// Normalises a fragment onto a single line (line breaks inside it are ignored).
pub(super) fn normalise_line(text: &str) -> String {
    render(&rewrite(&lex(text), rules()))
}

/// Splits a lexed file into its kernels, in order, then `FILE_SCOPE`, its lines normalised. A
/// kernel runs from the line of `__kernel` to that of its closing brace.
pub(super) fn split_tokens(lexed: &[Tok]) -> Vec<Section> {
    let toks = rewrite(lexed, rules());
    let spans = kernel_spans(&toks);
    let mut sections: Vec<Section> = spans
        .iter()
        .map(|span| Section {
            name: span.name.clone(),
            lines: Vec::new(),
        })
        .collect();
    let mut file_scope = Vec::new();
    for line in render_lines(&toks) {
        match spans
            .iter()
            .position(|span| (span.first..=span.last).contains(&line.line))
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

struct KernelSpan {
    name: String,
    first: usize,
    last: usize,
}

/// The kernel definitions at file scope (brace depth 0), in order.
fn kernel_spans(toks: &[Tok]) -> Vec<KernelSpan> {
    let mut spans: Vec<KernelSpan> = Vec::new();
    let mut depth = 0usize;
    let mut k = 0;
    while k < toks.len() {
        if depth == 0 && toks[k].text == "__kernel" {
            if let Some((name, end)) = kernel_at(toks, k) {
                spans.push(KernelSpan {
                    name: unique_name(&spans, name),
                    first: toks[k].line,
                    last: toks[end].line,
                });
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
    spans
}

/// `name`, or `name#2`, `name#3`, ... when an earlier kernel has it: the report and the
/// allow-list address kernels by name, so each must be unique.
fn unique_name(spans: &[KernelSpan], name: String) -> String {
    let mut unique = name.clone();
    let mut n = 1;
    while spans.iter().any(|s| s.name == unique) {
        n += 1;
        unique = format!("{name}#{n}");
    }
    unique
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
    // An unclosed body runs to the end of the file.
    let end = closing(toks, b).unwrap_or(toks.len() - 1);
    Some((toks[name_at].text.clone(), end))
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
pub(super) struct Rule {
    from: Vec<String>,
    to: Vec<Tok>,
    shape: Shape,
}

/// Whether `name` is one of the APIs' own words in [`SPELLINGS`] (`get_global_id`,
/// `threadIdx`, ...). A prelude may redefine its API's words (the index-width step narrows or
/// widens them); such a macro is that API's spelling, not a macro the twins share.
pub(super) fn is_api_word(name: &str) -> bool {
    SPELLINGS.iter().any(|(cl, cu)| {
        [cl, cu].iter().any(|pattern| {
            pattern
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .any(|word| word == name)
        })
    })
}

/// The rules compiled from [`SPELLINGS`], longest pattern first, with the derived rules for
/// expressions spelled out in OpenCL builtins.
pub(super) fn rules() -> &'static [Rule] {
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
        let derived = derived_rules(&list);
        list.extend(derived);
        // Stable: among patterns of one length, the table's order decides.
        list.sort_by_key(|r| std::cmp::Reverse(r.from.len()));
        list
    })
}

/// For each expression rule, the same expression with its atoms already in OpenCL builtins
/// (`get_group_id(0) * get_local_size(0) + get_local_id(0)`), rewritten to the same result.
/// Atom rules would otherwise leave such a text spelled differently from the CUDA twin's.
fn derived_rules(list: &[Rule]) -> Vec<Rule> {
    let plain: Vec<Rule> = list
        .iter()
        .filter(|r| r.shape == Shape::Plain)
        .cloned()
        .collect();
    list.iter()
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
        .collect()
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
            // The first token cannot be a binary operator (it would be unary).
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
            // `+ - * &` are unary unless an operand precedes them; a unary operator binds
            // tighter than any binary one.
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
            Shape::Group => input[i].macro_body || !prev.is_some_and(opens_call_parens),
            Shape::Expr(level) => left_ok(out, level) && right_ok(input, end, level),
        }
    }
}

/// Do parentheses after `prev` belong to a call, a cast or a statement (`f(`, `)(`, `a[i](`,
/// `if (`) rather than group an expression? A keyword that starts an expression (`return (`)
/// and the end of a directive do not count.
fn opens_call_parens(prev: &Tok) -> bool {
    !prev.ends_directive
        && ((prev.kind == Kind::Ident && !EXPR_START_KEYWORDS.contains(&prev.text.as_str()))
            || prev.text == ")"
            || prev.text == "]")
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
    let object = OBJECT_QUALIFIERS
        .iter()
        .find(|(cl, cu)| s == *cl || s == *cu)
        .map(|(cl, _)| *cl);
    if !pointer_word && object.is_none() {
        return None;
    }
    if qualifies_pointer(input, i) {
        return pointer_word.then_some("");
    }
    object
}

/// Rewrites API spellings to the canonical form in one left-to-right pass.
pub(super) fn rewrite(input: &[Tok], rules: &[Rule]) -> Vec<Tok> {
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
            out.extend(replacement(rule, &input[i..end]));
            i = end;
            continue;
        }
        out.push(input[i].clone());
        i += 1;
    }
    out
}

/// The tokens `rule` puts in place of `matched`, on its line, with its spacing before and its
/// directive marks at the ends: rendering and later rules see the same boundaries as before.
fn replacement<'a>(rule: &'a Rule, matched: &'a [Tok]) -> impl Iterator<Item = Tok> + 'a {
    let (first, last) = (&matched[0], &matched[matched.len() - 1]);
    let n = rule.to.len();
    rule.to.iter().enumerate().map(move |(k, t)| Tok {
        space_before: if k == 0 {
            first.space_before
        } else {
            t.space_before
        },
        ends_directive: k + 1 == n && last.ends_directive,
        macro_body: k == 0 && first.macro_body,
        ..Tok::new(&t.text, t.kind, first.line)
    })
}

pub(super) fn render_lines(toks: &[Tok]) -> Vec<NormLine> {
    toks.chunk_by(|a, b| a.line == b.line)
        .map(|line| NormLine {
            line: line[0].line,
            text: render(line),
        })
        .collect()
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
