//! Exporters: the result rows of [`crate::record`] as CSV (the source of truth, appended row by
//! row), JSON (provenance and machine-readable dumps) and Markdown (human-readable reports).
//!
//! Rendering to bytes ([`Exporter::render`]) is separate from writing files so every format can
//! be tested without touching the disk. File-writing helpers never leave a half-written file
//! that looks valid: CSV rows are flushed whole, and whole-file writes go through a temporary
//! file and a rename.

pub mod csv;
pub mod json;
pub mod markdown;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Renders a slice of rows into the bytes of one document in some format.
pub trait Exporter<T> {
    /// Renders `rows` (possibly none) into a complete document.
    fn render(&self, rows: &[T]) -> Result<Vec<u8>, ExportError>;
}

/// Everything that can go wrong while exporting or re-reading results. Each variant names the
/// file involved (and the 1-based line where there is one) so the user can go and look.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The operating system refused a read, write, create or rename.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A CSV file could not be parsed or written.
    #[error("{}:{line}: {message}", path.display())]
    Csv {
        /// The CSV file.
        path: PathBuf,
        /// 1-based line on which the offending record starts (0 when unknown).
        line: u64,
        /// What is wrong, naming the column where known.
        message: String,
    },
    /// A CSV file's header is not the one expected for the rows being read or appended, e.g. a
    /// measurement file given where PR rows are expected, or a file from an older schema.
    #[error("{}: {}", path.display(), schema_message(expected, found))]
    Schema {
        /// The CSV file.
        path: PathBuf,
        /// The columns the row type has, in order.
        expected: Vec<String>,
        /// The columns the file's header has, in order.
        found: Vec<String>,
    },
    /// A JSON document could not be written or parsed.
    #[error("{}: {message}", location(path, *line))]
    Json {
        /// The JSON file.
        path: PathBuf,
        /// 1-based line of the error (0 when the error has no position).
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// The output already holds results and would be appended to or overwritten by accident.
    #[error("{}: already exists and is not empty; {hint}", path.display())]
    OutputExists {
        /// The existing output.
        path: PathBuf,
        /// What to do instead (e.g. pass `--resume`, or choose another output).
        hint: String,
    },
    /// A row that no real run writes, or the same row twice.
    #[error("{}: row {row}: {message}", path.display())]
    BadRow {
        /// The CSV file.
        path: PathBuf,
        /// 1-based data row (the header not counted).
        row: usize,
        /// What is wrong with it.
        message: String,
    },
    /// The output of a merge is also one of its inputs, which would destroy that input.
    #[error("{}: the output is also one of the inputs", path.display())]
    OutputIsInput {
        /// The offending output path.
        path: PathBuf,
    },
    /// Rows could not be rendered in memory (no file involved).
    #[error("cannot render {format}: {message}")]
    Render {
        /// The format being rendered (`csv`, `json`, `markdown`).
        format: &'static str,
        /// What went wrong.
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
    let missing: Vec<&str> = expected
        .iter()
        .filter(|c| !found.contains(c))
        .map(String::as_str)
        .collect();
    let unexpected: Vec<&str> = found
        .iter()
        .filter(|c| !expected.contains(c))
        .map(String::as_str)
        .collect();
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
    let mut s = cols
        .iter()
        .take(SHOWN)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if cols.len() > SHOWN {
        s.push_str(", ...");
    }
    s
}

/// Wraps an I/O error with the path it concerns.
pub(crate) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ExportError + '_ {
    move |source| ExportError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Creates the parent directory of `path` if it has one, so outputs can name fresh folders.
pub(crate) fn create_parent_dirs(path: &Path) -> Result<(), ExportError> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => fs::create_dir_all(dir).map_err(io_err(dir)),
        _ => Ok(()),
    }
}

/// The temporary sibling that [`write_atomic`] writes before renaming: `name.tmp`.
pub(crate) fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

/// Writes `bytes` to `path` all-or-nothing: into `path.tmp`, synced, then renamed over `path`.
///
/// A crash leaves either the old file or the new one, never a truncated file that a later read
/// would take for a complete result. Parent directories are created.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ExportError> {
    create_parent_dirs(path)?;
    let tmp = tmp_path(path);
    let result = (|| {
        let mut file = fs::File::create(&tmp).map_err(io_err(&tmp))?;
        file.write_all(bytes).map_err(io_err(&tmp))?;
        file.sync_all().map_err(io_err(&tmp))?;
        fs::rename(&tmp, path).map_err(io_err(path))
    })();
    if result.is_err() {
        // Best effort: the temporary file is garbage, and the original error is what matters.
        let _ = fs::remove_file(&tmp);
    }
    result
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

    #[test]
    fn write_atomic_replaces_content_and_leaves_no_tmp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/dir/out.txt");
        write_atomic(&path, b"first").unwrap();
        write_atomic(&path, b"second").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"second");
        assert!(!tmp_path(&path).exists());
        assert_eq!(tmp_path(&path).file_name().unwrap(), "out.txt.tmp");
    }

    #[test]
    fn write_atomic_reports_the_failing_path() {
        let dir = tempfile::tempdir().unwrap();
        // The target is an existing directory: the rename must fail and name it.
        let target = dir.path().join("occupied");
        fs::create_dir(&target).unwrap();
        fs::write(target.join("f"), b"x").unwrap();
        let err = write_atomic(&target, b"data").unwrap_err();
        match &err {
            ExportError::Io { path, .. } => assert_eq!(path, &target),
            other => panic!("unexpected error {other:?}"),
        }
        assert!(!tmp_path(&target).exists());
    }
}
