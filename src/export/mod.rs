//! Exporters: result rows as CSV (the source of truth, appended row by row), JSON and Markdown.
//! Rendering to bytes is separate from writing so every format is testable without a disk;
//! every write goes through [`safe`], which never leaves a half-written file or follows a link.

pub mod csv;
pub mod folder;
pub mod json;
pub mod markdown;
pub mod safe;
pub mod store;

use std::path::{Path, PathBuf};

pub(crate) use safe::create_parent_dirs;
pub use safe::write_atomic;

/// Each variant names the file (and the 1-based line where there is one) so the user can look.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}:{line}: {message}", path.display())]
    Csv {
        path: PathBuf,
        /// 1-based line on which the offending record starts (0 when unknown).
        line: u64,
        message: String,
    },
    /// A CSV file's header is not the one expected for the rows being read or appended, e.g. a
    /// measurement file given where PR rows are expected, or a file from an older schema.
    #[error("{}: {}", path.display(), schema_message(expected, found))]
    Schema {
        path: PathBuf,
        expected: Vec<String>,
        found: Vec<String>,
    },
    #[error("{}: {message}", location(path, *line))]
    Json {
        path: PathBuf,
        /// 1-based line of the error (0 when the error has no position).
        line: u64,
        message: String,
    },
    /// The output already holds results and would be appended to or overwritten by accident.
    #[error("{}: already exists and is not empty; {hint}", path.display())]
    OutputExists { path: PathBuf, hint: String },
    /// A row that no real run writes, or the same row twice.
    #[error("{}: row {row}: {message}", path.display())]
    BadRow {
        path: PathBuf,
        /// 1-based data row (the header not counted).
        row: usize,
        message: String,
    },
    #[error("{}: the output is also one of the inputs", path.display())]
    OutputIsInput { path: PathBuf },
    #[error("{}: is a symbolic link; refusing to write through it (remove it, or choose another output)", path.display())]
    Link { path: PathBuf },
    #[error("{}: is not a regular file; refusing to write to it", path.display())]
    NotAFile { path: PathBuf },
    /// A file with other hard links where clvscu writes: writing would change, or part from,
    /// files under other names.
    #[error("{}: has {links} hard links; refusing to write to it (copy it, or choose another output)", path.display())]
    HardLinked { path: PathBuf, links: u64 },
    #[error("{}: is {}, which this command reads or owns; choose another output", path.display(), owner.display())]
    Owned { path: PathBuf, owner: PathBuf },
    #[error("{}: this run's lock was deleted or replaced by another process; stopping without writing (another run may be writing this folder)", path.display())]
    LockLost { path: PathBuf },
    #[error(
        "{}: comparison {comparison}: {what}; refusing to resume (choose a new --out, or delete \
         the comparison's rows from the three CSV files to measure it again)",
        dir.display()
    )]
    Tampered {
        dir: PathBuf,
        comparison: String,
        what: String,
    },
    /// Rows could not be rendered in memory (no file involved).
    #[error("cannot render {format}: {message}")]
    Render {
        format: &'static str,
        message: String,
    },
}

/// `path:line`, or just `path` when the line is unknown (0).
fn location(path: &Path, line: u64) -> String {
    if line == 0 {
        path.display().to_string()
    } else {
        format!("{}:{line}", path.display())
    }
}

/// A readable description of a header mismatch: the missing and unexpected columns (the full
/// lists are in the error's fields), or a note that only the order differs.
fn schema_message(expected: &[String], found: &[String]) -> String {
    let not_in = |a: &[String], b: &[String]| -> Vec<String> {
        a.iter().filter(|c| !b.contains(c)).cloned().collect()
    };
    let (missing, unexpected) = (not_in(expected, found), not_in(found, expected));
    let mut msg = format!(
        "unexpected CSV columns (expected {} columns starting [{}], found {} starting [{}])",
        expected.len(),
        preview(expected),
        found.len(),
        preview(found),
    );
    if !missing.is_empty() {
        msg.push_str(&format!("; missing: {}", missing.join(", ")));
    }
    if !unexpected.is_empty() {
        msg.push_str(&format!("; not expected: {}", unexpected.join(", ")));
    }
    if missing.is_empty() && unexpected.is_empty() {
        msg.push_str("; the same columns in a different order or repeated");
    }
    msg
}

/// The first few column names, enough to recognise which kind of file it is.
fn preview(cols: &[String]) -> String {
    const SHOWN: usize = 4;
    let mut s = cols[..cols.len().min(SHOWN)].join(", ");
    if cols.len() > SHOWN {
        s.push_str(", ...");
    }
    s
}

pub(crate) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ExportError + '_ {
    move |source| ExportError::Io {
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_message_names_missing_and_unexpected_columns() {
        let expected = vec!["a".to_string(), "b".to_string()];
        let found = vec!["a".to_string(), "c".to_string()];
        let msg = schema_message(&expected, &found);
        assert!(msg.contains("missing: b"), "{msg}");
        assert!(msg.contains("not expected: c"), "{msg}");
        let msg = schema_message(&expected, &["b".to_string(), "a".to_string()]);
        assert!(msg.contains("different order"), "{msg}");
    }

    #[test]
    fn json_location_omits_unknown_line() {
        assert_eq!(location(Path::new("x.json"), 0), "x.json");
        assert_eq!(location(Path::new("x.json"), 3), "x.json:3");
    }
}
