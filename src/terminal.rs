//! Study text (comparison and study names, file names) on the terminal: control characters
//! and bidirectional overrides are shown escaped, so a name holding an escape sequence cannot clear or recolour the
//! terminal of whoever runs the study.

use std::borrow::Cow;

/// `text` with every control character written as a Rust escape (`\u{1b}`, `\n`).
pub fn printable(text: &str) -> Cow<'_, str> {
    escaped(text, |_| false)
}

/// [`printable`] for a text of several lines (a table, an error): its line breaks and tabs
/// are kept.
pub fn printable_lines(text: &str) -> Cow<'_, str> {
    escaped(text, |c| c == '\n' || c == '\t')
}

/// The bidirectional formatting characters: not control characters to Rust, but a
/// right-to-left override (U+202E) makes a terminal show the text after it reversed, so a
/// name could read as another.
fn is_bidi(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn escaped(text: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    let escape = |c: char| (c.is_control() || is_bidi(c)) && !keep(c);
    if !text.chars().any(escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if escape(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_and_newlines_are_shown_escaped() {
        assert_eq!(printable("plain ü"), "plain ü");
        assert_eq!(printable("a\u{1b}[2Jb\n"), "a\\u{1b}[2Jb\\n");
        assert_eq!(printable("\u{9b}x"), "\\u{9b}x");
        assert_eq!(printable_lines("a\n\tb\u{1b}c\r"), "a\n\tb\\u{1b}c\\r");
        assert_eq!(printable("a\u{202e}b\u{2066}c"), "a\\u{202e}b\\u{2066}c");
        assert_eq!(printable("\u{200f}"), "\\u{200f}");
    }
}
