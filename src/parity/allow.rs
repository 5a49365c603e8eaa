//! The allow-list: reviewed, intended differences between the twins, each with its reason.

use crate::names::is_identifier;
use thiserror::Error;

use super::diff::DiffLine;
use super::rewrite::normalise_line;
use super::{FILE_SCOPE, PRELUDE};
use crate::kernels::stems;

/// Errors of the allow-list, each at its 1-based line.
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
    pub(super) file: String,
    /// The kernel name, or `FILE_SCOPE`.
    pub(super) kernel: String,
    /// The differing line in normalised form.
    pub(super) text: String,
    pub(super) reason: String,
    /// The 1-based line of the allow-list the entry came from.
    pub(super) line: usize,
}

/// Parses the allow-list: one entry per line, `file:kernel: <normalised line text> | <reason>`;
/// blank lines and lines starting with `#` are skipped. The reason is everything after the
/// last ` | `; the text is normalised like kernel text, so its spacing does not matter. The
/// error names the first malformed line or unknown file stem.
pub fn load_allow_list(text: &str) -> Result<Vec<AllowEntry>, ParityError> {
    let known: Vec<&str> = stems().into_iter().filter(|s| *s != PRELUDE).collect();
    text.lines()
        .enumerate()
        .filter(|(_, raw)| !(raw.trim().is_empty() || raw.trim().starts_with('#')))
        .map(|(idx, raw)| parse_entry(raw, idx + 1, &known))
        .collect()
}

/// Parses allow-list line `line`, which may name the file stems `known`.
fn parse_entry(raw: &str, line: usize, known: &[&str]) -> Result<AllowEntry, ParityError> {
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
    // The last ` | `: the line text may itself contain one (`v = a | b;`).
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
    Ok(AllowEntry {
        file: file.to_string(),
        kernel: kernel.to_string(),
        text: body,
        reason: reason.to_string(),
        line,
    })
}

/// Gives each line of `diff` (kernel `kernel` of file `stem`) the reason of the first entry
/// naming it, marking that entry in `used` (parallel to `allow`) to report stale ones.
pub(super) fn mark_allowed(
    diff: &mut [DiffLine],
    allow: &[AllowEntry],
    stem: &str,
    kernel: &str,
    used: &mut [bool],
) {
    for d in diff {
        let hit = allow
            .iter()
            .position(|e| e.file == stem && e.kernel == kernel && e.text == d.text);
        if let Some(i) = hit {
            d.allowed = Some(allow[i].reason.clone());
            if let Some(u) = used.get_mut(i) {
                *u = true;
            }
        }
    }
}
