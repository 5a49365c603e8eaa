//! Where a session's rows go: a [`Sink`] takes each finished comparison as a unit. The CSV
//! store is the durable one (resume reads it back); [`MemorySink`] keeps rows for tests.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::export::csv::{key_counts, retain_rows, CsvAppender};
use crate::export::ExportError;
use crate::record::{MeasurementRow, PrRow, SampleRow};

/// Everything one comparison produced: one measurement row per side, the raw samples of the
/// sides that were timed, and the PR when both sides were.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ComparisonRows {
    pub measurements: Vec<MeasurementRow>,
    pub samples: Vec<SampleRow>,
    pub pr: Option<PrRow>,
}

/// A destination of finished comparisons.
pub trait Sink {
    /// How many sides of `comparison` are already stored (so `--resume` skips it).
    fn stored_sides(&self, _comparison: &str) -> usize {
        0
    }
    /// Stores one comparison whole, or nothing of it.
    fn record(&mut self, rows: &ComparisonRows) -> Result<(), ExportError>;
}

/// Keeps every comparison in memory; can be told to fail, to test what a session does then.
#[derive(Debug, Default)]
pub struct MemorySink {
    pub recorded: Vec<ComparisonRows>,
    /// Comparisons already stored before this run (as a resumed folder would hold).
    pub stored: HashMap<String, usize>,
    /// Every record after this many fails with an I/O error (a full disk, say).
    pub fail_after: Option<usize>,
}

impl Sink for MemorySink {
    fn stored_sides(&self, comparison: &str) -> usize {
        self.stored.get(comparison).copied().unwrap_or(0)
    }

    fn record(&mut self, rows: &ComparisonRows) -> Result<(), ExportError> {
        if self.fail_after.is_some_and(|n| self.recorded.len() >= n) {
            return Err(ExportError::Io {
                path: PathBuf::from("memory"),
                source: std::io::Error::other("scripted write failure"),
            });
        }
        self.recorded.push(rows.clone());
        Ok(())
    }
}

/// The three CSVs of an output folder, appended after every comparison.
pub struct CsvStore {
    pub dir: PathBuf,
    measurements: CsvAppender<MeasurementRow>,
    prs: CsvAppender<PrRow>,
    samples: CsvAppender<SampleRow>,
    /// Comparisons already complete in the output (sides present), for `--resume`.
    done: HashMap<String, usize>,
}

impl CsvStore {
    pub const MEASUREMENTS: &'static str = "measurements.csv";
    pub const PRS: &'static str = "prs.csv";
    pub const SAMPLES: &'static str = "samples.csv";

    /// Open (or, with `resume`, reopen) the three CSVs in `dir`. Without `resume`, existing
    /// non-empty files are refused rather than overwritten.
    pub fn open(dir: &Path, resume: bool) -> Result<Self, ExportError> {
        std::fs::create_dir_all(dir).map_err(|source| ExportError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        probe_writable(dir)?;
        let mpath = dir.join(Self::MEASUREMENTS);
        let done = if resume && mpath.exists() {
            key_counts(&mpath, "comparison")?
        } else {
            HashMap::new()
        };
        if resume {
            drop_unfinished(dir, &done)?;
        }
        Ok(CsvStore {
            dir: dir.to_path_buf(),
            measurements: CsvAppender::open(&mpath, resume)?,
            prs: CsvAppender::open(&dir.join(Self::PRS), resume)?,
            samples: CsvAppender::open(&dir.join(Self::SAMPLES), resume)?,
            done,
        })
    }
}

impl Sink for CsvStore {
    fn stored_sides(&self, comparison: &str) -> usize {
        self.done.get(comparison).copied().unwrap_or(0)
    }

    /// Writes one comparison's rows to the three files as a unit: samples, the PR, and
    /// last the measurements, which `--resume` reads to know what is done (each file gets
    /// one write). When a write fails, all three files are cut back to where they were, so
    /// the output holds whole comparisons only and a resumed run measures the failed one
    /// again; a kill between the writes is repaired on resume ([`drop_unfinished`]).
    fn record(&mut self, rows: &ComparisonRows) -> Result<(), ExportError> {
        let marks = (
            self.samples.byte_len()?,
            self.measurements.byte_len()?,
            self.prs.byte_len()?,
        );
        let written = self
            .samples
            .append_all(&rows.samples)
            .and_then(|_| self.prs.append_all(rows.pr.as_slice()))
            .and_then(|_| self.measurements.append_all(&rows.measurements));
        if written.is_err() {
            // The first error is the one to report; these cuts are best effort.
            let _ = self.samples.roll_back_to(marks.0);
            let _ = self.measurements.roll_back_to(marks.1);
            let _ = self.prs.roll_back_to(marks.2);
        }
        written
    }
}

/// A run killed inside [`CsvStore::record`] can leave samples or a PR of a comparison whose
/// measurements never reached the disk; `--resume` measures that comparison again, so those
/// rows would be duplicated. Drop them first, saying so.
fn drop_unfinished(dir: &Path, done: &HashMap<String, usize>) -> Result<(), ExportError> {
    let samples = dir.join(CsvStore::SAMPLES);
    let n = retain_rows::<SampleRow, _>(&samples, |r| done.contains_key(&r.comparison))?;
    let prs = dir.join(CsvStore::PRS);
    let m = retain_rows::<PrRow, _>(&prs, |r| done.contains_key(&r.comparison))?;
    if n + m > 0 {
        eprintln!(
            "resume: dropped {n} sample row(s) and {m} PR row(s) of a comparison whose \
             measurements were not written (interrupted); it is measured again"
        );
    }
    Ok(())
}

/// Fail before measuring when the output directory cannot be written.
fn probe_writable(dir: &Path) -> Result<(), ExportError> {
    let probe = dir.join(".clvscu-write-probe");
    std::fs::write(&probe, b"probe")
        .and_then(|_| std::fs::remove_file(&probe))
        .map_err(|source| ExportError::Io {
            path: dir.to_path_buf(),
            source,
        })
}
