//! The whole of `clvscu run` as a library call ([`execute`]): open the [`RunFolder`], run the
//! study (once, or `passes` times for a soak) and write the summary. The binary opens the
//! sides, draws the charts and maps the [`Outcome`](super::Outcome) to an exit code.

use std::time::Instant;

pub use super::plan::{RunPlan, SessionError, Sides};
pub use super::run_folder::{RunFolder, STUDY_FILE};
use super::{run_study_with, timings, InputCache, RunContext, RunSummary};
use crate::backend::Runtime;
use crate::calibrate::{self, Calibration, CalibrationPlan};
use crate::export::csv::{read_rows, read_rows_if_file};
use crate::export::markdown;
use crate::kernels::KernelSources;
use crate::rows::{MeasurementRow, PassRow, PrRow, Status, PASSES_CSV};
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

pub fn execute(
    plan: &RunPlan,
    sides: &mut Sides,
    on_event: &mut dyn FnMut(Event),
) -> Result<RunReport, SessionError> {
    let ctx = &plan.context;
    check_comparisons(&plan.study, sides, ctx.sources)?;
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
    let (measurements, prs) = folder.rows_with(&summary.measurements, &summary.prs);
    let text = summary_text(
        &plan.study,
        (&measurements, &prs),
        &summary,
        calibration.as_ref(),
    );
    folder.close(&text, &summary.timings, line)?;
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
        let kept = read_rows(&dir.join(crate::rows::CALIBRATION_CSV)).and_then(|rows| {
            let prs = read_rows_if_file(&dir.join(crate::rows::CALIBRATION_PR_CSV))?;
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
        read_rows_if_file(&folder.dir.join(PASSES_CSV))?
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
