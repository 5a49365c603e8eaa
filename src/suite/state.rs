//! `suite.csv`: one row per finished step (how it ended, its exit code, its wall time against
//! its cap), rewritten after every step, so `clvscu suite --resume` skips what is done and the
//! report says which steps ran whole.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::export::{write_atomic, ExportError};

/// The file, in the suite's folder.
pub const FILE: &str = "suite.csv";

/// How a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// It ran to its end (exit 0, or 3: finished with some configuration failed).
    Done,
    /// It reached its cap and was stopped; its finished parts are kept (`--resume` goes on).
    Capped,
    /// Ctrl-C: the suite stopped here.
    Interrupted,
    /// It could not run here (no python3 with torch for the baselines, no run to explain).
    Skipped,
    /// It ended with an error.
    Failed,
}

/// One step's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRow {
    pub step: String,
    pub status: Status,
    /// The child's exit code; empty when none ran.
    pub exit_code: Option<i32>,
    pub wall_s: f64,
    pub cap_s: u32,
    /// Why it was skipped or failed, in words; empty otherwise.
    pub note: String,
}

/// The rows of `dir/suite.csv`; none when the file is missing.
pub fn read(dir: &Path) -> Result<Vec<StepRow>, ExportError> {
    let path = dir.join(FILE);
    if !path.is_file() {
        return Ok(Vec::new());
    }
    let bad = |e: csv::Error| ExportError::Io {
        path: path.clone(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()),
    };
    let mut reader = csv::Reader::from_path(&path).map_err(bad)?;
    reader.deserialize().map(|r| r.map_err(bad)).collect()
}

/// Writes `rows` as `dir/suite.csv`, replacing it whole.
pub fn write(dir: &Path, rows: &[StepRow]) -> Result<(), ExportError> {
    let path = dir.join(FILE);
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.serialize(r).map_err(|e| ExportError::Io {
            path: path.clone(),
            source: std::io::Error::other(e.to_string()),
        })?;
    }
    let bytes = w.into_inner().map_err(|e| ExportError::Io {
        path: path.clone(),
        source: std::io::Error::other(e.to_string()),
    })?;
    write_atomic(&path, &bytes)
}

/// `rows` with `row` in place of the same step's earlier row, or added at the end.
pub fn record(rows: &mut Vec<StepRow>, row: StepRow) {
    match rows.iter_mut().find(|r| r.step == row.step) {
        Some(old) => *old = row,
        None => rows.push(row),
    }
}

/// Whether `--resume` may skip the step: it ran to its end, or cannot run here.
pub fn is_finished(rows: &[StepRow], step: &str) -> bool {
    rows.iter()
        .any(|r| r.step == step && matches!(r.status, Status::Done | Status::Skipped))
}

/// The steps as a Markdown table, for `suite.md` and the console.
pub fn markdown(rows: &[StepRow]) -> String {
    let mut s = String::from(
        "| step | status | exit | wall (s) | cap (s) | note |\n|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let exit = r.exit_code.map(|c| c.to_string()).unwrap_or_default();
        let status = serde_json::to_value(r.status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        s += &format!(
            "| {} | {status} | {exit} | {:.1} | {} | {} |\n",
            r.step,
            r.wall_s,
            r.cap_s,
            r.note.replace('|', "\\|")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(step: &str, status: Status) -> StepRow {
        StepRow {
            step: step.into(),
            status,
            exit_code: Some(0),
            wall_s: 1.5,
            cap_s: 20,
            note: String::new(),
        }
    }

    #[test]
    fn rows_round_trip_and_a_rerun_replaces_its_row() {
        let dir = tempfile::tempdir().unwrap();
        let mut rows = vec![row("table1", Status::Capped)];
        record(&mut rows, row("peaks", Status::Done));
        record(&mut rows, row("table1", Status::Done));
        write(dir.path(), &rows).unwrap();
        let back = read(dir.path()).unwrap();
        assert_eq!(back, rows);
        assert_eq!(back.len(), 2);
        assert!(is_finished(&back, "table1"));
        assert!(!is_finished(&[row("x", Status::Capped)], "x"));
        assert!(markdown(&back).contains("| table1 | done | 0 | 1.5 | 20 |"));
    }
}
