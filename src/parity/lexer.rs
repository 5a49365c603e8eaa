//! The C lexer: tokens with their source line and spacing, and the marks preprocessor
//! directives leave on them (where a directive ends, a `#define`'s name and body), which the
//! rewrite rules need to tell where an expression starts and ends.

use std::collections::BTreeSet;

const PUNCT3: &[&str] = &["<<=", ">>=", "..."];
const PUNCT2: &[&str] = &[
    "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-=", "*=", "/=", "%=",
    "&=", "|=", "^=", "##",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Ident,
    Number,
    /// A string or character literal.
    Literal,
    Punct,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Tok {
    pub(super) text: String,
    pub(super) kind: Kind,
    pub(super) line: usize,
    /// Whitespace (or a comment) separates it from the previous token.
    pub(super) space_before: bool,
    /// The last token of a preprocessor directive (an expression ends there).
    pub(super) ends_directive: bool,
    /// The name in `#define NAME`.
    pub(super) define_name: bool,
    /// The first token of a `#define`'s replacement text (an expression starts there).
    pub(super) macro_body: bool,
}

impl Tok {
    pub(super) fn new(text: &str, kind: Kind, line: usize) -> Tok {
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

/// A token from its text alone, its kind read off the first character (for the rewrite
/// rules' patterns, which are single tokens already).
pub(super) fn tok(text: &str, line: usize) -> Tok {
    let kind = match text.chars().next() {
        Some(c) if c.is_alphabetic() || c == '_' => Kind::Ident,
        Some(c) if c.is_ascii_digit() => Kind::Number,
        Some('"' | '\'') => Kind::Literal,
        _ => Kind::Punct,
    };
    Tok::new(text, kind, line)
}

pub(super) fn lex(src: &str) -> Vec<Tok> {
    let c: Vec<char> = src.chars().collect();
    let mut toks = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let mut space = true;
    while i < c.len() {
        if let Some((next, breaks)) = skip_blank(&c, i) {
            i = next;
            line += breaks;
            space = true;
            continue;
        }
        let (end, kind) = scan_token(&c, i);
        let text: String = c[i..end].iter().collect();
        toks.push(Tok {
            space_before: space,
            ..Tok::new(&text, kind, line)
        });
        i = end;
        space = false;
    }
    mark_directives(&mut toks);
    toks
}

/// At whitespace or a comment starting at `i`: the index after it (a `//` comment stops
/// before its line break) and the line breaks it spans. None where a token starts.
fn skip_blank(c: &[char], i: usize) -> Option<(usize, usize)> {
    match (c[i], c.get(i + 1).copied()) {
        ('/', Some('/')) => {
            let end = c[i..]
                .iter()
                .position(|&d| d == '\n')
                .map_or(c.len(), |n| i + n);
            Some((end, 0))
        }
        ('/', Some('*')) => {
            let mut j = i + 2;
            let mut breaks = 0;
            while j < c.len() && !(c[j] == '*' && c.get(j + 1) == Some(&'/')) {
                if c[j] == '\n' {
                    breaks += 1;
                }
                j += 1;
            }
            // An unterminated comment runs to the end of the text.
            Some(((j + 2).min(c.len()), breaks))
        }
        (ch, _) if ch.is_whitespace() => Some((i + 1, usize::from(ch == '\n'))),
        _ => None,
    }
}

/// The end (exclusive) and kind of the token starting at `i`.
fn scan_token(c: &[char], i: usize) -> (usize, Kind) {
    let ch = c[i];
    if ch == '"' || ch == '\'' {
        (scan_literal(c, i), Kind::Literal)
    } else if ch.is_ascii_digit() || (ch == '.' && c.get(i + 1).is_some_and(char::is_ascii_digit)) {
        (scan_number(c, i), Kind::Number)
    } else if ch.is_alphabetic() || ch == '_' {
        let len = c[i..]
            .iter()
            .take_while(|d| d.is_alphanumeric() || **d == '_')
            .count();
        (i + len, Kind::Ident)
    } else {
        (scan_punct(c, i), Kind::Punct)
    }
}

/// A string or character literal ends at its closing quote, or before the line break when it
/// has none, so a stray quote cannot swallow the rest of the file.
fn scan_literal(c: &[char], start: usize) -> usize {
    let quote = c[start];
    let mut i = start + 1;
    while i < c.len() && c[i] != quote && c[i] != '\n' {
        if c[i] == '\\' && c.get(i + 1).is_some_and(|n| *n != '\n') {
            i += 1;
        }
        i += 1;
    }
    if c.get(i) == Some(&quote) {
        i += 1;
    }
    i
}

/// A pp-number: digits, letters, `_`, `.`, and a sign right after an exponent letter
/// (`1.0e-3f`, `0x1p+4`).
fn scan_number(c: &[char], start: usize) -> usize {
    let mut i = start + 1;
    while let Some(&d) = c.get(i) {
        let exponent_sign = (d == '+' || d == '-') && matches!(c[i - 1], 'e' | 'E' | 'p' | 'P');
        if d.is_ascii_alphanumeric() || d == '_' || d == '.' || exponent_sign {
            i += 1;
        } else {
            break;
        }
    }
    i
}

/// The longest punctuator at `i`; any other character is a token of its own.
fn scan_punct(c: &[char], i: usize) -> usize {
    let rest: String = c[i..(i + 3).min(c.len())].iter().collect();
    i + PUNCT3
        .iter()
        .chain(PUNCT2)
        .find(|p| rest.starts_with(**p))
        .map_or(1, |p| p.len())
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
        let e = directive_end(toks, k);
        toks[e].ends_directive = true;
        if toks.get(k + 1).is_some_and(|t| t.text == "define") {
            mark_define(toks, k, e);
        }
        k = e + 1;
    }
}

/// The last token of the directive whose `#` is at `k`: it runs to the end of its logical line.
fn directive_end(toks: &[Tok], k: usize) -> usize {
    let mut e = k;
    while e + 1 < toks.len() && (toks[e + 1].line == toks[e].line || toks[e].text == "\\") {
        e += 1;
    }
    e
}

/// Marks the name and the first body token of the `#define` at `k` ending at `e`.
fn mark_define(toks: &mut [Tok], k: usize, e: usize) {
    if e < k + 2 || toks[k + 2].kind != Kind::Ident {
        return;
    }
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

/// The index of the bracket closing the one at `open` (`(`/`)`, `{`/`}`, `[`/`]`).
pub(super) fn closing(toks: &[Tok], open: usize) -> Option<usize> {
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

/// Every macro name a text `#define`s (conditionally or not).
pub(super) fn defined_macros(text: &str) -> BTreeSet<String> {
    // The names `mark_define` found: a `#define` whose name is not on its own line defines
    // nothing.
    lex(text)
        .into_iter()
        .filter(|t| t.define_name)
        .map(|t| t.text)
        .collect()
}
