//! The one owner of a run's output folder: it refuses a plan that cannot run before the folder
//! is touched, prepares and locks the folder, checks that a resume continues the same study,
//! opens the rows' store, keeps the provenance, makes every later write, each only while the
//! lock is still this run's, and writes the summary last.

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::export::csv::CsvSchema;
use serde::Serialize;

use super::identity;
use super::plan::{RunPlan, SessionError, Sides};
use super::provenance::{self, GpuSnapshot};
use super::RunSummary;
use crate::calibrate::{self, Calibration};
use crate::export::csv::write_rows;
use crate::export::folder::{self, FolderIdentity, FolderLock};
use crate::export::json::{write_json_atomic, Provenance};
use crate::export::store::{CsvStore, Guards};
use crate::export::{markdown, safe, write_atomic};
use crate::kernels::KernelSources;
use crate::rows::{MeasurementRow, PrRow, TimingRow, TIMINGS_CSV};
use crate::study::Study;

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
    /// Opens `plan.out` for a run over `sides`. A comparison that cannot run is refused before
    /// the folder is touched; then a link planted in it is refused by name, no other run may
    /// hold it, a resume must continue the same study on the same devices, and the study text
    /// and the provenance are written before anything is measured.
    pub fn open(plan: &RunPlan, sides: &Sides) -> Result<RunFolder, SessionError> {
        check_comparisons(&plan.study, sides, plan.context.sources)?;
        let dir = plan.out.clone();
        let output = |source| SessionError::Output {
            dir: dir.clone(),
            source,
        };
        safe::prepare_dir(&dir, true).map_err(output)?;
        safe::probe_writable(&dir).map_err(output)?;
        let lock = folder::lock(&dir)?;
        let infos = sides.infos();
        let identity = identity::of(
            &plan.study,
            &infos,
            plan.passes.max(1),
            plan.context.sources,
        );
        let has_rows = folder::holds_rows(&dir);
        let recorded = folder::check_identity(&dir, &identity, plan.resume, has_rows)?;
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
            provenance_path: folder::provenance_path(&dir, plan.resume),
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

    /// The run's last writes: `summary.md` (the folder's tables, a resumed folder's rows
    /// included), `timings.csv` (with the rows a resumed folder kept), `line` in the
    /// provenance's notes (this process's time only) and the provenance with the GPUs' state
    /// after the run. All is decided before the first of them is written.
    pub fn close(
        &mut self,
        study: &Study,
        run: &RunSummary,
        calibration: Option<&Calibration>,
        line: String,
    ) -> Result<(), SessionError> {
        let timings = self.timings_with(&run.timings);
        self.note(line);
        provenance::record_after(&mut self.provenance, GpuSnapshot::now());
        let (measurements, prs) = self.rows_with(&run.measurements, &run.prs);
        let text = summary_text(study, (&measurements, &prs), run, calibration);
        let held = &self.lock.0.check;
        held.still_held()?;
        write_atomic(&self.dir.join("summary.md"), text.as_bytes())?;
        held.still_held()?;
        write_rows(&self.dir.join(TIMINGS_CSV), &timings)?;
        held.still_held()?;
        Ok(write_json_atomic(&self.provenance_path, &self.provenance)?)
    }

    /// The first run's provenance stays; each resume saves its own beside it.
    pub fn save_provenance(&self) -> Result<(), SessionError> {
        self.lock.0.check.still_held()?;
        Ok(write_json_atomic(&self.provenance_path, &self.provenance)?)
    }

    fn write(&self, name: &str, bytes: &[u8]) -> Result<(), SessionError> {
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
    fn rows_with(
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

    /// `timings.csv`'s rows: the earlier rows of the comparisons a resumed folder kept and
    /// this run did not measure again, in file order, then `own` (alone, with a note, when the
    /// earlier file cannot be read).
    fn timings_with(&mut self, own: &[TimingRow]) -> Vec<TimingRow> {
        let earlier = match &self.store.kept_timings {
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
            .iter()
            .filter(|t| !measured.contains(t.comparison.as_str()))
            .chain(own)
            .cloned()
            .collect()
    }
}

/// Refuses a comparison before the folder is touched or any input made: a define naming an
/// identifier of either API's program other than a knob, or a problem that cannot fit in its
/// side's device memory or in host memory.
fn check_comparisons(
    study: &Study,
    sides: &Sides,
    sources: &KernelSources,
) -> Result<(), SessionError> {
    let infos = sides.infos();
    for c in &study.comparisons {
        let refused = |reason: String| SessionError::Refused {
            study: study.file.clone(),
            comparison: c.id.clone(),
            reason,
        };
        for (i, settings) in [&c.a, &c.b].into_iter().enumerate() {
            // A side that does not run needs no room.
            if let Some(info) = infos.get(i) {
                crate::families::fits::check(settings.family, settings.size, info)
                    .map_err(|e| refused(e.to_string()))?;
            }
            if !settings.defines.is_empty() {
                sources
                    .check_defines(settings.family.file(), settings.defines.keys())
                    .map_err(|e| refused(e.to_string()))?;
            }
        }
    }
    Ok(())
}

/// `summary.md`: the folder's tables, the refusals the study expects and the calibration.
fn summary_text(
    study: &Study,
    (measurements, prs): (&[MeasurementRow], &[PrRow]),
    all: &RunSummary,
    calibration: Option<&Calibration>,
) -> String {
    let mut text = format!(
        "# clvscu run: {}\n\n{}\n\n## Measurements\n\n{}\n\n## Performance Ratio\n\n{}\n",
        study.name,
        study.description,
        markdown::measurement_table(measurements),
        markdown::pr_table(prs)
    );
    if !all.refused_as_expected.is_empty() {
        text.push_str("\n## Refused as the study expects\n\nLaunches the driver refused by the API's own rule, as the study's `expect` says: recorded as the driver answered, in no PR, and no failure of the run.\n\n");
        for r in &all.refused_as_expected {
            text.push_str(&format!("- {r}\n"));
        }
    }
    if let Some(c) = calibration {
        text.push_str(&format!(
            "\n# Runtime calibration\n\n{}\n\n{}",
            calibrate::verdict(c),
            calibrate::markdown(c)
        ));
    }
    text
}
