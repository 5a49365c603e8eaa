//! What the terminal shows. Study text has its control characters and bidirectional overrides
//! escaped, so a name cannot clear or recolour the terminal. On a terminal (or with `COLUMNS`)
//! prose is wrapped and a table too wide laid out again, never over [`MAX_COLUMNS`]; piped into
//! a file without `COLUMNS`, lines stay whole, so logs can be searched.

use std::borrow::Cow;

use comfy_table::{
    presets::ASCII_MARKDOWN, CellAlignment, ColumnConstraint, ContentArrangement, Table, Width,
};

/// The widest line clvscu writes to a person.
pub const MAX_COLUMNS: usize = 100;

/// The narrowest width text is fitted to: below it, wrapping helps no one.
const MIN_COLUMNS: usize = 40;

/// The width to fit standard output to: the terminal's, else `COLUMNS`, at most
/// [`MAX_COLUMNS`]; `None` when neither is known.
pub fn width() -> Option<usize> {
    width_of(&console::Term::stdout())
}

pub fn err_width() -> Option<usize> {
    width_of(&console::Term::stderr())
}

fn width_of(term: &console::Term) -> Option<usize> {
    let columns = (term.is_term())
        .then(|| term.size_checked())
        .flatten()
        .map(|(_, cols)| usize::from(cols))
        .or_else(|| std::env::var("COLUMNS").ok()?.trim().parse().ok())?;
    Some(columns.clamp(MIN_COLUMNS, MAX_COLUMNS))
}

/// `text` fitted to `width` columns (`None`: as it is): prose wrapped, each Markdown table
/// wider than the width laid out again with its cells wrapped.
pub fn fit(text: &str, width: Option<usize>) -> String {
    let Some(width) = width else {
        return text.to_string();
    };
    let lines: Vec<&str> = text.split('\n').collect();
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        let rows = table_rows(&lines[i..]);
        if rows > 0 {
            out.push(fit_table(&lines[i..i + rows], width));
            i += rows;
        } else {
            out.push(wrap_line(lines[i], width));
            i += 1;
        }
    }
    out.join("\n")
}

/// What the binary prints: `text` escaped ([`printable_lines`]), then fitted ([`fit`]).
pub fn show(text: &str, width: Option<usize>) -> String {
    fit(&printable_lines(text), width)
}

fn table_rows(lines: &[&str]) -> usize {
    let is_row = |l: &str| {
        let t = l.trim();
        t.len() > 1 && t.starts_with('|') && t.ends_with('|')
    };
    let is_separator = |l: &str| is_row(l) && l.trim().chars().all(|c| "|-: ".contains(c));
    if lines.len() < 2 || !is_row(lines[0]) || !is_separator(lines[1]) {
        return 0;
    }
    2 + lines[2..].iter().take_while(|l| is_row(l)).count()
}

/// The cells of a Markdown table row, split at pipes not escaped.
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim();
    let inner = &inner[1..inner.len() - 1];
    let mut out = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                out.last_mut().unwrap().push('|');
                chars.next();
            }
            '|' => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out
}

/// Whether a column is aligned right: its separator says so (`--:`), or its cells are padded
/// on the left as comfy-table pads numbers.
fn right_aligned(separator: &str, body: &[String]) -> bool {
    let s = separator.trim();
    if s.ends_with(':') && !s.starts_with(':') {
        return true;
    }
    let padded_left = body
        .iter()
        .filter(|c| !c.trim().is_empty())
        .filter(|c| {
            let lead = c.len() - c.trim_start().len();
            let trail = c.len() - c.trim_end().len();
            lead > trail
        })
        .count();
    padded_left > 0 && padded_left * 2 > body.len()
}

/// A Markdown table as it is when it fits, else laid out again at `width`.
fn fit_table(lines: &[&str], width: usize) -> String {
    if lines.iter().all(|l| columns_of(l) <= width) {
        return lines.join("\n");
    }
    let header = cells(lines[0]);
    let separators = cells(lines[1]);
    let body: Vec<Vec<String>> = lines[2..].iter().map(|l| cells(l)).collect();
    let mut t = Table::new();
    t.load_style(ASCII_MARKDOWN)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(u16::try_from(width).unwrap_or(u16::MAX))
        .set_header(header.iter().map(|c| c.trim().to_string()));
    for row in &body {
        t.add_row(row.iter().map(|c| c.trim().to_string()));
    }
    let mut floors = Vec::with_capacity(separators.len());
    for (i, sep) in separators.iter().enumerate() {
        let column: Vec<String> = body.iter().filter_map(|r| r.get(i).cloned()).collect();
        let cells = header.get(i).into_iter().chain(&column);
        let longest_word = cells
            .flat_map(|c| c.split_whitespace())
            .map(columns_of)
            .max();
        floors.push(longest_word.unwrap_or(0));
        if right_aligned(sep, &column) {
            if let Some(c) = t.column_mut(i) {
                c.set_cell_alignment(CellAlignment::Right);
            }
        }
    }
    // No word is broken where every column's longest word fits: a column is never narrower
    // than its longest word (a cell's padding and border take 3 columns each).
    if floors.iter().map(|f| f + 3).sum::<usize>() < width {
        for (i, floor) in floors.into_iter().enumerate() {
            if let Some(c) = t.column_mut(i) {
                // The boundary counts the cell's padding, one column each side.
                let floor = u16::try_from(floor + 2).unwrap_or(u16::MAX);
                c.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(floor)));
            }
        }
    }
    t.to_string()
}

pub fn columns_of(line: &str) -> usize {
    textwrap::core::display_width(line)
}

/// One line of prose wrapped at `width`, its indent kept, continuations indented two more.
fn wrap_line(line: &str, width: usize) -> String {
    if columns_of(line) <= width {
        return line.to_string();
    }
    let text = line.trim_start();
    let indent = &line[..line.len() - text.len()];
    let more = format!("{indent}  ");
    let options = textwrap::Options::new(width)
        .initial_indent(indent)
        .subsequent_indent(&more);
    textwrap::fill(text, options)
}

/// `text` with every control character written as a Rust escape (`\u{1b}`, `\n`).
pub fn printable(text: &str) -> Cow<'_, str> {
    escaped(text, |_| false)
}

/// [`printable`], keeping line breaks and tabs.
pub fn printable_lines(text: &str) -> Cow<'_, str> {
    escaped(text, |c| c == '\n' || c == '\t')
}

/// The bidirectional formatting characters: not control characters to Rust, but a
/// right-to-left override (U+202E) reverses the text after it, so a name could read as another.
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
    fn prose_is_wrapped_with_its_indent_and_short_lines_are_kept() {
        let long = format!("  warning: {}", "word ".repeat(40));
        let fitted = fit(&format!("short\n{long}"), Some(60));
        let lines: Vec<&str> = fitted.lines().collect();
        assert_eq!(lines[0], "short");
        assert!(lines.len() > 3, "{fitted}");
        assert!(lines.iter().all(|l| columns_of(l) <= 60), "{fitted}");
        assert!(lines[1].starts_with("  warning: word"));
        assert!(lines[2].starts_with("    word"), "{fitted}");
        assert_eq!(fit(&long, None), long, "no width: as it is");
    }

    #[test]
    fn a_table_too_wide_is_laid_out_again_and_one_that_fits_is_kept() {
        let narrow = "| a | b |\n|---|--:|\n| x | 1 |";
        assert_eq!(fit(narrow, Some(60)), narrow);
        let wide = format!(
            "before\n| name | about | value |\n|---|---|---:|\n| one | {} |  1.5 |\n| t\\|wo | short |  22.25 |\nafter",
            "a long description ".repeat(8)
        );
        let fitted = fit(&wide, Some(70));
        assert!(fitted.lines().all(|l| columns_of(l) <= 70), "{fitted}");
        assert!(fitted.starts_with("before\n"), "{fitted}");
        assert!(fitted.ends_with("\nafter"), "{fitted}");
        // The escaped pipe is a character of its cell, and the numbers stay right-aligned.
        assert!(fitted.contains("t|wo"), "{fitted}");
        assert!(fitted.contains(" 22.25 |"), "{fitted}");
        assert!(
            fitted
                .lines()
                .any(|l| l.contains("|  1.5 |") || l.contains("|   1.5 |")),
            "{fitted}"
        );
    }

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
