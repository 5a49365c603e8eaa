//! Scanner: characters -> [`Event`]s, comments removed and whitespace collapsed: statements
//! (ended by `;`, or the end of the line for [`LINE_DIRECTIVES`]), labels, and the braces that
//! open and close blocks. Blocks after directives other than `.entry` and `.func` (DWARF
//! `.section`s) are skipped here, so the parser never sees them.

use thiserror::Error;

/// Errors from [`super::parse::parse_ptx`], each naming its 1-based line (a statement's first).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PtxError {
    #[error("line {line}: '}}' without a matching '{{'")]
    UnmatchedClose { line: usize },
    #[error("line {line}: '{{' is never closed")]
    UnclosedBrace { line: usize },
    #[error("line {line}: unterminated block comment")]
    UnterminatedComment { line: usize },
    #[error("line {line}: unterminated string literal")]
    UnterminatedString { line: usize },
    /// Before a `}` or the end of the input.
    #[error("line {line}: statement is not terminated by ';'")]
    UnterminatedStatement { line: usize },
    #[error("line {line}: unbalanced parentheses or braces in statement")]
    UnbalancedStatement { line: usize },
    /// An instruction or label outside of any `.entry` / `.func` body; `text` is the
    /// statement, whitespace-normalized (as in `BadStatement`).
    #[error("line {line}: `{text}` appears outside of any function body")]
    OutsideFunction { line: usize, text: String },
    #[error("line {line}: function defined inside another function")]
    NestedFunction { line: usize },
    #[error("line {line}: malformed function header: {reason}")]
    BadHeader { line: usize, reason: String },
    /// A malformed instruction or known directive.
    #[error("line {line}: malformed statement `{text}`")]
    BadStatement { line: usize, text: String },
}

/// Directives that PTX terminates by the end of the line rather than by `;`.
const LINE_DIRECTIVES: &[&str] = &[".version", ".target", ".address_size", ".file", ".loc"];

/// One piece of scanned input; every variant carries its 1-based line.
#[derive(Debug)]
pub(super) enum Event {
    Stmt {
        text: String,
        line: usize,
    },
    Label {
        name: String,
        line: usize,
    },
    /// `{`; `header` is a function header that precedes it.
    Open {
        header: Option<(String, usize)>,
        line: usize,
    },
    Close {
        line: usize,
    },
}

pub(super) fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || matches!(c, '_' | '$' | '%') => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$'))
}

pub(super) fn first_token(s: &str) -> &str {
    s.split_whitespace().next().unwrap_or("")
}

/// Does the statement in `buf` (which is followed by `{`) define a function?
fn is_function_header(buf: &str) -> bool {
    buf.split(|c: char| c.is_whitespace() || c == '(')
        .any(|t| t == ".entry" || t == ".func")
}

pub(super) fn scan(input: &str) -> Result<Vec<Event>, PtxError> {
    let mut sc = Scanner {
        chars: input.chars().collect(),
        line: 1,
        buf_line: 1,
        ..Scanner::default()
    };
    while sc.pos < sc.chars.len() {
        sc.step()?;
    }
    sc.finish()
}

#[derive(Default)]
struct Scanner {
    chars: Vec<char>,
    /// Index and line of the next character to read.
    pos: usize,
    line: usize,
    events: Vec<Event>,
    /// The statement being accumulated, whitespace collapsed.
    buf: String,
    /// Line where `buf` started.
    buf_line: usize,
    /// Open `(` within the current statement.
    paren: i64,
    /// Open `{` within the current statement (vector operands, initializers).
    inner_brace: i64,
    /// Depth and start line of an opaque block (`.section ... { ... }`) being skipped.
    opaque: Option<(usize, usize)>,
}

impl Scanner {
    /// Consumes one character, or a whole comment or string literal.
    fn step(&mut self) -> Result<(), PtxError> {
        let c = self.chars[self.pos];
        let next = self.chars.get(self.pos + 1).copied();
        // Comments and strings are recognised everywhere (opaque blocks included), so
        // that a brace inside them never opens or closes anything.
        match (c, next) {
            ('/', Some('/')) => {
                // To the end of the line; the newline itself is still scanned, since it may
                // end a line directive.
                while self.pos < self.chars.len() && self.chars[self.pos] != '\n' {
                    self.pos += 1;
                }
                Ok(())
            }
            ('/', Some('*')) => self.skip_block_comment(),
            ('"', _) => self.string_literal(),
            _ => {
                self.pos += 1;
                match self.opaque {
                    Some((depth, start)) => {
                        self.opaque_char(c, depth, start);
                        Ok(())
                    }
                    None => self.code_char(c, next),
                }
            }
        }
    }

    fn skip_block_comment(&mut self) -> Result<(), PtxError> {
        let start = self.line;
        self.pos += 2;
        loop {
            match self.chars.get(self.pos) {
                None => return Err(PtxError::UnterminatedComment { line: start }),
                Some('*') if self.chars.get(self.pos + 1) == Some(&'/') => {
                    self.pos += 2;
                    break;
                }
                Some('\n') => self.line += 1,
                Some(_) => {}
            }
            self.pos += 1;
        }
        // A comment separates tokens like whitespace does: `a/**/b` is `a b`.
        if self.opaque.is_none() {
            self.push_char(' ');
        }
        Ok(())
    }

    fn string_literal(&mut self) -> Result<(), PtxError> {
        let start = self.line;
        let mut end = self.pos + 1;
        loop {
            match self.chars.get(end) {
                None | Some('\n') => return Err(PtxError::UnterminatedString { line: start }),
                // An escaped line break still ends the line, and so the string.
                Some('\\') if matches!(self.chars.get(end + 1), None | Some('\n')) => {
                    return Err(PtxError::UnterminatedString { line: start })
                }
                Some('\\') => end += 2,
                Some('"') => break,
                Some(_) => end += 1,
            }
        }
        if self.opaque.is_none() {
            // Keep string contents verbatim (no whitespace collapsing).
            if self.buf.is_empty() {
                self.buf_line = self.line;
            }
            self.buf.extend(&self.chars[self.pos..=end]);
        }
        self.pos = end + 1;
        Ok(())
    }

    /// Inside an opaque block only braces (to find its end) and newlines (to keep line
    /// numbers right) matter.
    fn opaque_char(&mut self, c: char, depth: usize, start: usize) {
        match c {
            '{' => self.opaque = Some((depth + 1, start)),
            '}' if depth <= 1 => self.opaque = None,
            '}' => self.opaque = Some((depth - 1, start)),
            '\n' => self.line += 1,
            _ => {}
        }
    }

    /// One character of code, outside comments, strings and opaque blocks.
    fn code_char(&mut self, c: char, next: Option<char>) -> Result<(), PtxError> {
        match c {
            '\n' => self.newline()?,
            ';' => self.flush_statement()?,
            '{' => self.open_brace(),
            '}' => self.close_brace()?,
            '(' => {
                self.paren += 1;
                self.push_char(c);
            }
            ')' => {
                self.paren -= 1;
                if self.paren < 0 {
                    return Err(PtxError::UnbalancedStatement { line: self.line });
                }
                self.push_char(c);
            }
            ':' if self.colon_ends_label(next) => self.label(),
            _ => self.push_char(c),
        }
        Ok(())
    }

    fn newline(&mut self) -> Result<(), PtxError> {
        if LINE_DIRECTIVES.contains(&first_token(&self.buf)) {
            self.flush_statement()?;
        } else {
            self.push_char(' ');
        }
        self.line += 1;
        Ok(())
    }

    /// A `{` opens a block when nothing precedes it, a function body or an opaque block
    /// after a directive; anywhere else it belongs to the statement.
    fn open_brace(&mut self) {
        let line = self.line;
        if self.is_blank() {
            self.take();
            self.events.push(Event::Open { header: None, line });
        } else if self.paren == 0
            && self.inner_brace == 0
            && self.buf.trim_start().starts_with('.')
            && !self.buf.contains('=')
        {
            let header_line = self.buf_line;
            let header = self.take();
            if is_function_header(&header) {
                self.events.push(Event::Open {
                    header: Some((header, header_line)),
                    line,
                });
            } else {
                // A block after some other directive: opaque data, skipped.
                self.opaque = Some((1, line));
            }
        } else {
            self.inner_brace += 1;
            self.push_char('{');
        }
    }

    fn close_brace(&mut self) -> Result<(), PtxError> {
        if self.inner_brace > 0 {
            self.inner_brace -= 1;
            self.push_char('}');
        } else if !self.is_blank() {
            return Err(PtxError::UnterminatedStatement {
                line: self.buf_line,
            });
        } else {
            self.take();
            self.events.push(Event::Close { line: self.line });
        }
        Ok(())
    }

    /// A `:` ends a label only after a lone identifier, and is never part of `::`
    /// (`ld.shared::cta`) nor inside parentheses or braces.
    fn colon_ends_label(&self, next: Option<char>) -> bool {
        self.paren == 0
            && self.inner_brace == 0
            && next != Some(':')
            && !self.buf.ends_with(':')
            && is_identifier(self.buf.trim())
    }

    fn label(&mut self) {
        let line = self.buf_line;
        let name = self.take();
        self.events.push(Event::Label { name, line });
    }

    fn push_char(&mut self, c: char) {
        if c.is_whitespace() {
            if !self.buf.is_empty() && !self.buf.ends_with(' ') {
                self.buf.push(' ');
            }
            return;
        }
        if self.buf.is_empty() {
            self.buf_line = self.line;
        }
        self.buf.push(c);
    }

    fn is_blank(&self) -> bool {
        self.buf.trim().is_empty()
    }

    fn take(&mut self) -> String {
        let text = self.buf.trim().to_string();
        self.buf.clear();
        self.paren = 0;
        self.inner_brace = 0;
        text
    }

    fn flush_statement(&mut self) -> Result<(), PtxError> {
        if self.paren != 0 || self.inner_brace != 0 {
            return Err(PtxError::UnbalancedStatement {
                line: self.buf_line,
            });
        }
        let line = self.buf_line;
        let text = self.take();
        if !text.is_empty() {
            self.events.push(Event::Stmt { text, line });
        }
        Ok(())
    }

    /// End of input: a pending line directive ends here; anything else is unterminated.
    fn finish(mut self) -> Result<Vec<Event>, PtxError> {
        if let Some((_, start)) = self.opaque {
            return Err(PtxError::UnclosedBrace { line: start });
        }
        if LINE_DIRECTIVES.contains(&first_token(&self.buf)) {
            self.flush_statement()?;
        }
        if !self.is_blank() {
            return Err(PtxError::UnterminatedStatement {
                line: self.buf_line,
            });
        }
        Ok(self.events)
    }
}
