//! The one owner of a run's output folder: it prepares and locks the folder, checks that a
//! resume continues the same study, opens the rows' store, keeps the provenance, and makes
//! every later write, each only while the lock is still this run's.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::export::csv::CsvSchema;
use serde::Serialize;

use super::folder::{self, FolderIdentity, FolderLock};
use super::plan::{RunPlan, SessionError, Sides};
use super::provenance::{self, GpuSnapshot};
use super::store::{CsvStore, Guards};
use crate::export::csv::{read_rows_if_file, write_rows};
use crate::export::json::{write_json_atomic, Provenance};
use crate::export::{safe, write_atomic};
use crate::rows::{MeasurementRow, PrRow, TimingRow, TIMINGS_CSV};
use crate::rows::{MEASUREMENTS_CSV, PRS_CSV, SAMPLES_CSV};

/// The study file of a command-line run, in its output folder.
pub const STUDY_FILE: &str = "study.toml";

/// A run's folder, held for as long as the run goes on (the lock goes when it is dropped).
pub struct RunFolder {
    pub(super) dir: PathBuf,
    lock: FolderLock,
    pub(super) store: CsvStore,
    provenance: Provenance,
    provenance_path: PathBuf,
}

impl RunFolder {
    /// Opens `plan.out` for a run over `sides`: a link planted in it is refused by name, no
    /// other run may hold it, a resume must continue the same study on the same devices, and
    /// the study text and the provenance are written before anything is measured.
    pub fn open(plan: &RunPlan, sides: &Sides) -> Result<RunFolder, SessionError> {
        let dir = plan.out.clone();
        let output = |source| SessionError::Output {
            dir: dir.clone(),
            source,
        };
        safe::prepare_dir(&dir, true).map_err(output)?;
        safe::probe_writable(&dir).map_err(output)?;
        let lock = folder::lock(&dir)?;
        let infos = sides.infos();
        let identity = FolderIdentity::of(
            &plan.study,
            &infos,
            plan.passes.max(1),
            plan.context.sources,
        );
        let recorded = folder::check_identity(&dir, &identity, plan.resume, holds_rows(&dir))?;
        let guards = Guards {
            identity: Some(FolderIdentity {
                rows: recorded,
                ..identity
            }),
            lock: Some(lock.0.check.clone()),
        };
        let sides_n = if sides.b.is_some() { 2 } else { 1 };
        let store = CsvStore::open_guarded(&dir, plan.resume, sides_n, guards).map_err(output)?;
        let provenance = provenance::of_run(
            &plan.study,
            &infos,
            plan.context.sources,
            &plan.command_line,
            GpuSnapshot::now(),
        );
        let folder = RunFolder {
            provenance_path: provenance_path(&dir, plan.resume),
            dir,
            lock,
            store,
            provenance,
        };
        if let Some(text) = &plan.study_text {
            folder.write(STUDY_FILE, text.as_bytes())?;
        }
        folder.save_provenance()?;
        Ok(folder)
    }

    /// A line for the provenance's notes (saved with the next [`RunFolder::save_provenance`]).
    pub fn note(&mut self, line: String) {
        self.provenance.notes.push(line);
    }

    /// The run's last writes: `summary.md`, `timings.csv` (with the rows a resumed folder
    /// kept), `line` in the provenance's notes (this process's time only) and the provenance
    /// with the GPUs' state after the run.
    pub fn close(
        &mut self,
        summary_md: &str,
        timings: &[TimingRow],
        line: String,
    ) -> Result<(), SessionError> {
        self.write("summary.md", summary_md.as_bytes())?;
        let timings = self.timings_with(timings);
        self.write_rows(TIMINGS_CSV, &timings)?;
        self.note(line);
        provenance::record_after(&mut self.provenance, GpuSnapshot::now());
        self.save_provenance()
    }

    /// The first run's provenance stays; each resume saves its own beside it.
    pub fn save_provenance(&self) -> Result<(), SessionError> {
        self.lock.0.check.still_held()?;
        Ok(write_json_atomic(&self.provenance_path, &self.provenance)?)
    }

    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<(), SessionError> {
        self.lock.0.check.still_held()?;
        Ok(write_atomic(&self.dir.join(name), bytes)?)
    }

    pub fn write_rows<T: Serialize + CsvSchema>(
        &self,
        name: &str,
        rows: &[T],
    ) -> Result<(), SessionError> {
        self.lock.0.check.still_held()?;
        Ok(write_rows(&self.dir.join(name), rows)?)
    }

    /// The folder's measurement and PR rows: a resumed folder's, in file order, then this run's.
    pub fn rows_with(
        &self,
        measurements: &[MeasurementRow],
        prs: &[PrRow],
    ) -> (Vec<MeasurementRow>, Vec<PrRow>) {
        let (kept_m, kept_p) = &self.store.kept;
        (
            kept_m.iter().chain(measurements).cloned().collect(),
            kept_p.iter().chain(prs).cloned().collect(),
        )
    }

    /// `timings.csv`'s rows: the earlier rows of the comparisons a resumed folder kept, in file
    /// order, then `own` (alone, with a note, when the earlier file cannot be read).
    fn timings_with(&mut self, own: &[TimingRow]) -> Vec<TimingRow> {
        let kept: BTreeSet<&str> = self
            .store
            .kept
            .0
            .iter()
            .map(|m| m.comparison.as_str())
            .collect();
        if kept.is_empty() {
            return own.to_vec();
        }
        let earlier: Vec<TimingRow> = match read_rows_if_file(&self.dir.join(TIMINGS_CSV)) {
            Ok(rows) => rows,
            Err(e) => {
                let note = format!(
                    "the earlier {TIMINGS_CSV} is unreadable, so it now holds this run's rows \
                     only: {e}"
                );
                self.note(note);
                return own.to_vec();
            }
        };
        let measured: BTreeSet<&str> = own.iter().map(|t| t.comparison.as_str()).collect();
        earlier
            .into_iter()
            .filter(|t| {
                kept.contains(t.comparison.as_str()) && !measured.contains(t.comparison.as_str())
            })
            .chain(own.iter().cloned())
            .collect()
    }
}

/// Whether any result CSV of the folder has content.
fn holds_rows(dir: &Path) -> bool {
    [MEASUREMENTS_CSV, PRS_CSV, SAMPLES_CSV]
        .iter()
        .any(|f| std::fs::metadata(dir.join(f)).is_ok_and(|m| m.len() > 0))
}

/// `provenance.json` for the first run; `provenance-resume-N.json` for the N-th resume.
fn provenance_path(dir: &Path, resume: bool) -> PathBuf {
    let first = dir.join("provenance.json");
    if !resume || !first.exists() {
        return first;
    }
    (1..)
        .map(|n| dir.join(format!("provenance-resume-{n}.json")))
        .find(|p| !p.exists())
        .unwrap_or(first)
}
