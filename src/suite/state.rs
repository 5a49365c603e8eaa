//! `suite.csv`: one row per finished step (how it ended, its exit code, its wall time against
//! its cap), rewritten after every step, so `clvscu suite --resume` skips what is done and the
//! report says which steps ran whole.

use std::path::Path;

use crate::export::csv::{read_by_name, write_rows};
use crate::export::ExportError;
use crate::rows::{StepRow, StepStatus, SUITE_CSV};

/// The rows of `dir/suite.csv`; none when it is missing.
pub fn read(dir: &Path) -> Result<Vec<StepRow>, ExportError> {
    let path = dir.join(SUITE_CSV);
    if !path.is_file() {
        return Ok(Vec::new());
    }
    read_by_name(&path)
}

/// Writes `rows` as `dir/suite.csv`, replacing it whole.
pub fn write(dir: &Path, rows: &[StepRow]) -> Result<(), ExportError> {
    write_rows(&dir.join(SUITE_CSV), rows)
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
        .any(|r| r.step == step && matches!(r.status, StepStatus::Done | StepStatus::Skipped))
}

/// The steps as a Markdown table, for `suite.md` and the console.
pub fn markdown(rows: &[StepRow]) -> String {
    let mut s = String::from(
        "| step | status | exit | wall (s) | cap (s) | note |\n|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let exit = r.exit_code.map(|c| c.to_string()).unwrap_or_default();
        s += &format!(
            "| {} | {} | {exit} | {:.1} | {} | {} |\n",
            r.step,
            r.status,
            r.wall_s,
            r.cap_s,
            crate::export::markdown::cell(&r.note)
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(step: &str, status: StepStatus) -> StepRow {
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
        let mut rows = vec![row("table1", StepStatus::Capped)];
        record(&mut rows, row("peaks", StepStatus::Done));
        record(&mut rows, row("table1", StepStatus::Done));
        write(dir.path(), &rows).unwrap();
        let back = read(dir.path()).unwrap();
        assert_eq!(back, rows);
        assert_eq!(back.len(), 2);
        assert!(is_finished(&back, "table1"));
        assert!(!is_finished(&[row("x", StepStatus::Capped)], "x"));
        assert!(markdown(&back).contains("| table1 | done | 0 | 1.5 | 20 |"));
    }

    /// A note quotes a driver's first line: a pipe or a tag in it (`<built-in>` of a clang
    /// build log) stays text in the table, as in every other Markdown cell.
    #[test]
    fn a_note_cannot_break_the_table() {
        let mut r = row("fill", StepStatus::Done);
        r.note = "1 of 4 rows build-failed (<built-in>:1: a | b)".into();
        let md = markdown(&[r]);
        assert!(md.contains("(&lt;built-in>:1: a &#124; b) |"), "{md}");
    }
}
