//! The whole of `clvscu run` as a library call: open the output folder, record provenance,
//! run the study (once, or `passes` times for a soak), write the summary and draw the
//! charts. The binary only parses arguments, opens the sides, calls [`execute`] and maps the
//! [`Outcome`](super::Outcome) to an exit code.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use super::folder::{self, FolderError, FolderIdentity, LockCheck};
use super::store::{CsvStore, Guards, Sink};
use super::{provenance, run_study_with, timings, InputCache, RunContext, RunSummary};
use crate::backend::{DeviceInfo, Runtime};
use crate::calibrate::{self, Calibration, CalibrationPlan};
use crate::export::csv::write_rows;
use crate::export::json::write_json_atomic;
use crate::export::{markdown, safe, write_atomic, ExportError};
use crate::kernels::KernelSources;
use crate::plot;
use crate::record::Status;
use crate::soak::{self, PassRow};
use crate::study::Study;

/// The study file of a command-line run, in its output folder.
pub const STUDY_FILE: &str = "study.toml";

/// The backends of a run: side A, and side B when a PR can be formed.
pub struct Sides {
    pub a: Box<dyn Runtime>,
    pub b: Option<Box<dyn Runtime>>,
}

impl Sides {
    pub fn infos(&self) -> Vec<&DeviceInfo> {
        std::iter::once(self.a.info())
            .chain(self.b.as_ref().map(|b| b.info()))
            .collect()
    }
}

/// What to run and where to put it.
pub struct RunPlan<'a> {
    pub study: Study,
    pub out: PathBuf,
    pub resume: bool,
    /// Repeat the study this many times (a soak); 1 is an ordinary run.
    pub passes: u32,
    pub charts: bool,
    pub sources: &'a KernelSources,
    pub interrupted: &'a AtomicBool,
    pub progress: bool,
    /// The command line, for the provenance.
    pub command_line: Vec<String>,
    pub run_id: String,
    pub watchdog: Option<&'a super::watchdog::Watchdog>,
    /// `--timeout`: the watchdog's limit of every launch, in seconds.
    pub timeout_s: Option<f64>,
    /// The study file of a command-line run, saved as `study.toml` so it can be repeated.
    pub study_text: Option<String>,
    /// Told of every finished comparison (`done` of `total`).
    pub on_comparison: Option<&'a super::OnComparison>,
}

/// What happened while a run went on, for the caller to show.
pub enum Event<'a> {
    Started { study: &'a Study, sides: &'a Sides },
    PassDone { row: &'a PassRow, of: u32 },
}

/// What a run produced.
pub struct RunReport {
    pub summary: RunSummary,
    /// The chart files, or why none were drawn; `None` when charts were not asked for.
    pub charts: Option<Result<Vec<PathBuf>, ChartsError>>,
    /// Comparisons of a resumed folder that were incomplete or had failed, and why; they
    /// were measured again.
    pub remeasured: Vec<String>,
}

/// Errors that end a run; every finished comparison is on disk all the same.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("cannot use output directory {}: {source}", dir.display())]
    Output {
        dir: PathBuf,
        #[source]
        source: ExportError,
    },
    #[error(transparent)]
    Folder(#[from] FolderError),
    #[error(transparent)]
    Export(#[from] ExportError),
    #[error("{study}: {comparison}: {reason}")]
    Refused {
        study: String,
        comparison: String,
        reason: String,
    },
}

/// Refuses a define that names an identifier of the kernel it compiles into (either API's
/// program), other than one of the kernel's knobs.
fn check_defines(study: &Study, sources: &KernelSources) -> Result<(), SessionError> {
    use crate::backend::Api;
    for c in &study.comparisons {
        for settings in [&c.a, &c.b].into_iter().filter(|s| !s.defines.is_empty()) {
            let stem = settings.family.file();
            for api in [Api::OpenCl, Api::Cuda] {
                // A missing file is reported where the kernel is built.
                let Ok(text) = sources.program(api, stem) else {
                    continue;
                };
                let file = format!(
                    "{}/{stem}.{}",
                    crate::kernels::folder(api),
                    crate::kernels::extension(api)
                );
                for name in settings.defines.keys() {
                    crate::study::defines::check_against_source(name, &text, &file)
                        .map_err(|reason| refused(study, &c.id, reason))?;
                }
            }
        }
    }
    Ok(())
}

/// The refusal of one comparison of `study`, its names escaped for the terminal.
fn refused(study: &Study, comparison: &str, reason: impl ToString) -> SessionError {
    SessionError::Refused {
        study: crate::terminal::printable(&study.file).into_owned(),
        comparison: crate::terminal::printable(comparison).into_owned(),
        reason: reason.to_string(),
    }
}

/// Refuses a comparison whose problem cannot fit in its side's device memory or in host
/// memory, before the folder is touched or any input generated.
fn check_footprints(study: &Study, sides: &Sides) -> Result<(), SessionError> {
    let infos = sides.infos();
    for c in &study.comparisons {
        for (settings, info) in [&c.a, &c.b].into_iter().zip(&infos) {
            crate::families::fits::check(settings.family, settings.size, info)
                .map_err(|reason| refused(study, &c.id, reason))?;
        }
    }
    Ok(())
}

/// Runs `plan` over `sides`; see the module docs.
pub fn execute(
    plan: &RunPlan,
    sides: &mut Sides,
    on_event: &mut dyn FnMut(Event),
) -> Result<RunReport, SessionError> {
    check_defines(&plan.study, plan.sources)?;
    check_footprints(&plan.study, sides)?;
    let output = |source| SessionError::Output {
        dir: plan.out.clone(),
        source,
    };
    // A link planted in the folder would take a write elsewhere: refused by name.
    safe::prepare_dir(&plan.out, true).map_err(output)?;
    // Held until this function returns: no other run writes this folder meanwhile.
    let lock = folder::lock(&plan.out)?;
    let held = lock.check();
    let identity = FolderIdentity::of(
        &plan.study,
        &sides.infos(),
        plan.passes.max(1),
        plan.sources,
    );
    let recorded =
        folder::check_identity(&plan.out, &identity, plan.resume, holds_rows(&plan.out))?;
    let expected_sides = if sides.b.is_some() { 2 } else { 1 };
    let guards = Guards {
        identity: Some(FolderIdentity {
            rows: recorded,
            ..identity
        }),
        lock: Some(held.clone()),
    };
    let mut store =
        CsvStore::open_guarded(&plan.out, plan.resume, expected_sides, guards).map_err(output)?;
    if let Some(text) = &plan.study_text {
        held.still_held()?;
        write_atomic(&plan.out.join(STUDY_FILE), text.as_bytes())?;
    }
    let mut prov = provenance::of_run(
        &plan.study,
        &sides.infos(),
        plan.sources,
        &plan.command_line,
        provenance::GpuSnapshot::now(),
    );
    // The first run's provenance stays; each resume adds its own beside it.
    let prov_path = provenance_path(&plan.out, plan.resume);
    held.still_held()?;
    write_json_atomic(&prov_path, &prov)?;
    on_event(Event::Started {
        study: &plan.study,
        sides,
    });
    let ctx = RunContext {
        run_id: plan.run_id.clone(),
        sources: plan.sources,
        interrupted: plan.interrupted,
        progress: plan.progress,
        watchdog: plan.watchdog,
        timeout_s: plan.timeout_s,
        on_comparison: plan.on_comparison,
    };
    held.still_held()?;
    let wall = Instant::now();
    let calibration = calibrate_if_runtime_bound(plan, sides, &mut prov)?;
    let calibration_s = wall.elapsed().as_secs_f64();
    held.still_held()?;
    write_json_atomic(&prov_path, &prov)?;
    let summary = run_passes(plan, sides, &mut store, &ctx, on_event, &held)?;
    provenance::record_after(&mut prov, provenance::GpuSnapshot::now());
    held.still_held()?;
    write_json_atomic(&prov_path, &prov)?;
    held.still_held()?;
    write_summary(&plan.out, &plan.study, &summary, calibration.as_ref())?;
    held.still_held()?;
    let charts_started = Instant::now();
    let charts = (plan.charts && !summary.interrupted).then(|| draw_charts(&plan.out));
    let charts_s = charts_started.elapsed().as_secs_f64();
    // Where the time went, for this run (a resume's rows cover what it measured itself).
    held.still_held()?;
    write_rows(&plan.out.join(timings::TIMINGS_CSV), &summary.timings)?;
    prov.notes.push(timings::summary_line(
        &summary.timings,
        timings::RunPhases {
            calibration_s,
            built_ahead: summary.built_ahead,
            built_ahead_s: summary.built_ahead_s,
            charts_s,
        },
        wall.elapsed().as_secs_f64(),
    ));
    write_json_atomic(&prov_path, &prov)?;
    Ok(RunReport {
        summary,
        charts,
        remeasured: store.remeasured().to_vec(),
    })
}

/// Whether a study's rows are bound by the runtime, so that the harness's own launch cost
/// could sit inside them: launches, BFS levels, reductions small enough for their two
/// launches to matter.
pub fn runtime_bound(study: &Study) -> bool {
    study
        .comparisons
        .iter()
        .any(|c| [&c.a, &c.b].iter().any(|s| s.family.runtime_bound(s.size)))
}

/// For a runtime-bound study, the quick calibration on the run's backends before the
/// study: written beside the rows (`calibration*.csv`), noted in the provenance, and
/// summarised with its flag in `summary.md`. A resumed folder keeps its first calibration.
fn calibrate_if_runtime_bound(
    plan: &RunPlan,
    sides: &mut Sides,
    prov: &mut crate::export::json::Provenance,
) -> Result<Option<Calibration>, SessionError> {
    let done = plan.out.join(calibrate::ROWS_CSV).exists();
    if !runtime_bound(&plan.study) || (plan.resume && done) {
        return Ok(None);
    }
    let mut backends: Vec<&mut dyn Runtime> = vec![sides.a.as_mut()];
    if let Some(b) = sides.b.as_mut() {
        backends.push(b.as_mut());
    }
    match calibrate::calibrate(&mut backends, plan.sources, &CalibrationPlan::quick()) {
        Ok(c) => {
            calibrate::write(&plan.out, &c, "Runtime calibration")?;
            prov.notes
                .push(format!("runtime calibration: {}", calibration_verdict(&c)));
            Ok(Some(c))
        }
        Err(e) => {
            // The study still runs; its rows then say nothing of the harness's overhead.
            prov.notes.push(format!(
                "runtime calibration failed, nothing calibrated: {e}"
            ));
            Ok(None)
        }
    }
}

/// One sentence on whether the harness's own launch cost is the same on both sides.
fn calibration_verdict(c: &Calibration) -> String {
    let Some(h) = calibrate::headline(c) else {
        return match c.rows.iter().find(|r| r.batch == 1) {
            Some(r) => format!(
                "one API ({}): the harness's 1x1 launch costs {:+.2} µs over the plain loop's",
                r.api, r.overhead_us
            ),
            None => "nothing calibrated".into(),
        };
    };
    let gap = (h.overhead_opencl_us - h.overhead_cuda_us).abs();
    let (cl, cu) = (h.overhead_opencl_us, h.overhead_cuda_us);
    if h.flagged {
        format!(
            "FLAGGED: the harness's own overhead per 1x1 launch ({} wait) is {cl:+.2} µs on \
             OpenCL and {cu:+.2} µs on CUDA, {gap:.2} µs apart (more than {} µs): the launch, \
             BFS and small-reduction rows of this folder carry part of it on one side \
             (launch PR {:.3} through the harness, {:.3} through the plain loops)",
            h.wait,
            calibrate::OVERHEAD_DIFF_LIMIT_US,
            h.pr_harness,
            h.pr_plain
        )
    } else {
        format!(
            "the harness's own overhead per 1x1 launch ({} wait) is {cl:+.2} µs on OpenCL and \
             {cu:+.2} µs on CUDA, {gap:.2} µs apart (within {} µs): the runtime rows are the \
             APIs' own (launch PR {:.3} through the harness, {:.3} through the plain loops)",
            h.wait,
            calibrate::OVERHEAD_DIFF_LIMIT_US,
            h.pr_harness,
            h.pr_plain
        )
    }
}

/// Whether any result CSV of the folder has content.
fn holds_rows(dir: &Path) -> bool {
    [CsvStore::MEASUREMENTS, CsvStore::PRS, CsvStore::SAMPLES]
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

/// The study once, or `passes` times with the pass in every comparison's name and one row
/// of process resources per pass in `passes.csv`.
fn run_passes(
    plan: &RunPlan,
    sides: &mut Sides,
    sink: &mut dyn Sink,
    ctx: &RunContext,
    on_event: &mut dyn FnMut(Event),
    held: &LockCheck,
) -> Result<RunSummary, SessionError> {
    let mut all = RunSummary::default();
    let mut pass_rows = Vec::new();
    let mut inputs = InputCache::default();
    let passes = plan.passes.max(1);
    for pass in 1..=passes {
        let started = Instant::now();
        let study = if passes > 1 {
            numbered_pass(&plan.study, pass)
        } else {
            plan.study.clone()
        };
        let b: Option<&mut dyn Runtime> = match &mut sides.b {
            Some(x) => Some(x.as_mut()),
            None => None,
        };
        let summary = run_study_with(&study, sides.a.as_mut(), b, sink, ctx, &mut inputs)?;
        if passes > 1 {
            let row = pass_row(pass, started, &summary);
            on_event(Event::PassDone {
                row: &row,
                of: passes,
            });
            pass_rows.push(row);
            held.still_held()?;
            write_rows(&plan.out.join(soak::PASSES_CSV), &pass_rows)?;
        }
        let interrupted = summary.interrupted;
        all.absorb(summary);
        if interrupted {
            break;
        }
    }
    Ok(all)
}

fn numbered_pass(study: &Study, pass: u32) -> Study {
    let mut s = study.clone();
    s.name = format!("{}#pass{pass}", study.name);
    for c in &mut s.comparisons {
        c.id = format!("{}#pass{pass}", c.id);
    }
    s
}

fn pass_row(pass: u32, started: Instant, summary: &RunSummary) -> PassRow {
    PassRow {
        pass,
        seconds: started.elapsed().as_secs_f64(),
        measurements_ok: summary
            .measurements
            .iter()
            .filter(|m| m.status == Status::Ok)
            .count(),
        failed: summary.failed.len(),
        resident_kib: soak::resident_kib(),
        open_fds: soak::open_fds(),
    }
}

fn write_summary(
    out: &Path,
    study: &Study,
    all: &RunSummary,
    calibration: Option<&Calibration>,
) -> Result<(), ExportError> {
    let mut text = format!(
        "# clvscu run: {}\n\n{}\n\n## Measurements\n\n{}\n\n## Performance Ratio\n\n{}\n",
        study.name,
        study.description,
        markdown::measurement_table(&all.measurements),
        markdown::pr_table(&all.prs)
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
            calibration_verdict(c),
            calibrate::markdown(c)
        ));
    }
    write_atomic(&out.join("summary.md"), text.as_bytes())
}

/// Why a run drew no charts (reported, not fatal).
#[derive(Debug, thiserror::Error)]
pub enum ChartsError {
    #[error(transparent)]
    Dir(#[from] ExportError),
    #[error(transparent)]
    Input(#[from] plot::input::InputError),
    #[error(transparent)]
    Plot(#[from] plot::PlotError),
}

/// Charts of the folder's CSVs into `charts/`; a failure is reported, not fatal.
fn draw_charts(out: &Path) -> Result<Vec<PathBuf>, ChartsError> {
    safe::check_dir(&out.join("charts"), false)?;
    let data = plot::input::load(&[out.to_path_buf()])?;
    Ok(plot::draw_all(
        &data,
        &out.join("charts"),
        &[plot::Format::Png, plot::Format::Svg],
    )?)
}
