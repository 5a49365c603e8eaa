//! The whole of `clvscu run` as a library call ([`execute`]): open the [`RunFolder`], run the
//! study (once, or `passes` times for a soak) and write the summary. The binary opens the
//! sides, draws the charts and maps the [`Outcome`](super::Outcome) to an exit code.

use std::time::Instant;

pub use super::plan::{RunPlan, SessionError, Sides};
pub use super::run_folder::{RunFolder, STUDY_FILE};
use super::{run_study_with, timings, InputCache, RunContext, RunSummary};
use crate::backend::Runtime;
use crate::calibrate::{self, Calibration, CalibrationPlan};
use crate::export::csv::read_folder_rows;
use crate::rows::{PassRow, Status, PASSES_CSV};
use crate::soak;
use crate::study::Study;

/// What happened while a run went on, for the caller to show.
pub enum Event<'a> {
    Started {
        study: &'a Study,
        sides: &'a Sides,
    },
    PassDone {
        row: &'a PassRow,
        of: u32,
    },
    /// A step left out, and why; the run goes on without it.
    Note(String),
}

pub struct RunReport {
    pub summary: RunSummary,
    /// Comparisons of a resumed folder that were incomplete or had failed, and why: measured again.
    pub remeasured: Vec<String>,
}

pub fn execute(
    plan: &RunPlan,
    sides: &mut Sides,
    on_event: &mut dyn FnMut(Event),
) -> Result<RunReport, SessionError> {
    let ctx = &plan.context;
    let mut folder = RunFolder::open(plan, sides)?;
    on_event(Event::Started {
        study: &plan.study,
        sides,
    });
    let wall = Instant::now();
    let calibration = calibrate_if_runtime_bound(plan, sides, &mut folder)?;
    let calibration_s = wall.elapsed().as_secs_f64();
    folder.save_provenance()?;
    let summary = run_passes(plan, sides, &mut folder, ctx, on_event)?;
    let line = timings::summary_line(&summary, calibration_s, wall.elapsed().as_secs_f64());
    folder.close(&plan.study, &summary, calibration.as_ref(), line)?;
    Ok(RunReport {
        remeasured: folder.store.remeasured.clone(),
        summary,
    })
}

/// For a runtime-bound study (launches, BFS levels, reductions small enough for their two
/// launches to matter), whose rows could hold the harness's own launch cost: the quick
/// calibration, written beside the rows (`calibration*.csv`), noted in the provenance and
/// summarised with its flag in `summary.md`. A resumed folder keeps and reads back its first.
fn calibrate_if_runtime_bound(
    plan: &RunPlan,
    sides: &mut Sides,
    folder: &mut RunFolder,
) -> Result<Option<Calibration>, SessionError> {
    let runtime_bound = plan.study.comparisons.iter().any(|c| {
        [&c.a, &c.b]
            .iter()
            .any(|s| s.family.family().runtime_bound(s.size))
    });
    if !runtime_bound {
        return Ok(None);
    }
    let dir = folder.dir.clone();
    let found = if plan.resume && dir.join(crate::rows::CALIBRATION_CSV).exists() {
        let kept = read_folder_rows(&dir.join(crate::rows::CALIBRATION_CSV)).and_then(|rows| {
            let prs = read_folder_rows(&dir.join(crate::rows::CALIBRATION_PR_CSV))?;
            Ok(Calibration { rows, prs })
        });
        kept.map_err(|e| format!("the first run's runtime calibration is unreadable: {e}"))
    } else {
        let mut backends: Vec<&mut dyn Runtime> = vec![sides.a.as_mut()];
        if let Some(b) = sides.b.as_mut() {
            backends.push(b.as_mut());
        }
        let quick = CalibrationPlan::quick();
        match calibrate::calibrate(&mut backends, plan.context.sources, &quick) {
            Ok(c) => {
                calibrate::write(&dir, &c, "Runtime calibration")?;
                folder.note(format!("runtime calibration: {}", calibrate::verdict(&c)));
                Ok(c)
            }
            Err(e) => Err(format!(
                "runtime calibration failed, nothing calibrated: {e}"
            )),
        }
    };
    // Without it the study still runs; its rows and summary then say nothing of the overhead.
    Ok(found.map_err(|why| folder.note(why)).ok())
}

/// The study once, or `passes` times with the pass in each comparison's name and a row of
/// process resources a pass in `passes.csv` (an earlier run's for a pass resumed whole).
fn run_passes(
    plan: &RunPlan,
    sides: &mut Sides,
    folder: &mut RunFolder,
    ctx: &RunContext,
    on_event: &mut dyn FnMut(Event),
) -> Result<RunSummary, SessionError> {
    let mut all = RunSummary::default();
    let mut pass_rows = Vec::new();
    let mut inputs = InputCache::default();
    let passes = plan.passes.max(1);
    let earlier: Vec<PassRow> = if plan.resume && passes > 1 {
        read_folder_rows(&folder.dir.join(PASSES_CSV))?
    } else {
        Vec::new()
    };
    for pass in 1..=passes {
        let started = Instant::now();
        let mut study = plan.study.clone();
        if passes > 1 {
            study.name = format!("{}#pass{pass}", study.name);
            for c in &mut study.comparisons {
                c.id = format!("{}#pass{pass}", c.id);
            }
        }
        let b = sides.b.as_deref_mut().map(|x| x as &mut dyn Runtime);
        let sink = &mut folder.store;
        let summary = run_study_with(&study, sides.a.as_mut(), b, sink, ctx, &mut inputs)?;
        if passes > 1 {
            let kept = summary.skipped == study.comparisons.len();
            let row = earlier.iter().find(|r| kept && r.pass == pass).cloned();
            let row = row.unwrap_or_else(|| PassRow {
                pass,
                seconds: started.elapsed().as_secs_f64(),
                measurements_ok: (summary.measurements.iter())
                    .filter(|m| m.status == Status::Ok)
                    .count(),
                failed: summary.failed.len(),
                resident_kib: soak::resident_kib(),
                open_fds: soak::open_fds(),
            });
            on_event(Event::PassDone {
                row: &row,
                of: passes,
            });
            pass_rows.push(row);
            folder.write_rows(PASSES_CSV, &pass_rows)?;
        }
        let interrupted = summary.interrupted;
        all.absorb(summary);
        if interrupted {
            break;
        }
    }
    Ok(all)
}
