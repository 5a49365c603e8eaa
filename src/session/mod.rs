//! A session runs a study over one or two sides and hands every finished comparison to a
//! sink before the next one starts, so an interruption keeps everything that finished. The
//! session draws nothing: it tells its [`Progress`], and the charts are drawn from the folder.

mod adaptive;
mod ahead;
pub mod analysis;
mod auto;
pub mod host;
pub mod identity;
pub mod measure;
pub mod nvml;
mod plan;
pub mod provenance;
pub mod run;
pub mod run_folder;
pub mod sizing;
pub mod timings;
pub mod watchdog;

#[cfg(test)]
mod tests;

use std::sync::atomic::{AtomicBool, Ordering};

use crate::backend::Runtime;
use crate::export::store::Sink;
use crate::export::ExportError;
use crate::families::exec::SideConfig;
use crate::kernels::KernelSources;
use crate::rows::{ComparisonRows, MeasurementRow, PrRow, Side, Status, TimingRow};
use crate::study::{Comparison, ExpectedRefusal, Resolved, Study};
use analysis::RowContext;
pub use measure::InputCache;
use measure::SidePlan;

/// What a study's run tells whoever shows its progress (a bar, a line per comparison).
pub enum Progress<'r> {
    Started {
        total: usize,
    },
    Measuring {
        id: &'r str,
    },
    /// Comparison `index` (from 1) of `total` is done: measured now (`rows`) or kept (`None`).
    Done {
        index: usize,
        total: usize,
        rows: Option<&'r ComparisonRows>,
    },
    /// The study's run is over, finished or stopped.
    Ended,
}

/// Told of a run's [`Progress`]; it may borrow what lives as long as the run.
pub type OnProgress<'a> = dyn Fn(Progress) + 'a;

/// Run-wide settings: what a run, and every pass of explain or tune it serves, goes by.
#[derive(Clone)]
pub struct RunContext<'a> {
    pub run_id: String,
    pub sources: &'a KernelSources,
    pub interrupted: &'a AtomicBool,
    /// Watches every launch; `None` runs unwatched (tests of the fake).
    pub watchdog: Option<&'a watchdog::Watchdog>,
    /// `--timeout`: the watchdog's limit of every launch, over the study's.
    pub timeout_s: Option<f64>,
    /// Told of the run's progress; every finished comparison as it is stored.
    pub on_progress: Option<&'a OnProgress<'a>>,
}

impl<'a> RunContext<'a> {
    /// No watchdog, `--timeout` or progress: a command sets those it has.
    pub fn new(run_id: String, sources: &'a KernelSources, interrupted: &'a AtomicBool) -> Self {
        RunContext {
            run_id,
            sources,
            interrupted,
            watchdog: None,
            timeout_s: None,
            on_progress: None,
        }
    }
}

/// What a run did, for the summary and the exit code.
#[derive(Debug, Default)]
pub struct RunSummary {
    pub measurements: Vec<MeasurementRow>,
    pub prs: Vec<PrRow>,
    pub skipped: usize,
    pub failed: Vec<String>,
    /// Launches the driver refused as the study expected (its `expect`): in the rows as the
    /// driver answered, in no PR, and no failure of the run.
    pub refused_as_expected: Vec<String>,
    pub interrupted: bool,
    /// Where each measured comparison's time went (see [`timings`]).
    pub timings: Vec<TimingRow>,
    /// Programs built ahead, several at once, and the seconds that took (in no comparison's).
    pub built_ahead: usize,
    pub built_ahead_s: f64,
}

/// How a run ended, in the order of precedence of the exit codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Every comparison ran, verified and timed (or was already done).
    Complete,
    /// Some configuration failed to build, launch or verify; it is in no PR.
    FailedConfigs,
    /// Stopped by Ctrl-C; every finished comparison is on disk.
    Interrupted,
}

impl RunSummary {
    pub fn outcome(&self) -> Outcome {
        if self.interrupted {
            Outcome::Interrupted
        } else if !self.failed.is_empty() {
            Outcome::FailedConfigs
        } else {
            Outcome::Complete
        }
    }

    /// Adds another part of the same run (a later pass) to this one.
    pub fn absorb(&mut self, other: RunSummary) {
        self.measurements.extend(other.measurements);
        self.prs.extend(other.prs);
        self.skipped += other.skipped;
        self.failed.extend(other.failed);
        self.refused_as_expected.extend(other.refused_as_expected);
        self.interrupted |= other.interrupted;
        self.timings.extend(other.timings);
        self.built_ahead += other.built_ahead;
        self.built_ahead_s += other.built_ahead_s;
    }

    fn note(&mut self, rows: ComparisonRows, expected: Option<ExpectedRefusal>) {
        for m in rows.measurements.iter().filter(|m| m.status != Status::Ok) {
            let line = format!(
                "{} [{}]: {} {}",
                m.comparison,
                m.api,
                m.status,
                m.error.lines().next().unwrap_or("")
            );
            match expected.filter(|e| e.covers(m)) {
                Some(e) => self
                    .refused_as_expected
                    .push(format!("{line} ({})", e.rule())),
                None => self.failed.push(line),
            }
        }
        self.prs.extend(rows.pr);
        self.measurements.extend(rows.measurements);
    }
}

/// Runs a study over one backend (no PR) or two (A = OpenCL side, B = CUDA side), with the
/// inputs of earlier runs at hand in `cache`: passes of one study reuse them, not make them again.
pub fn run_study_with(
    study: &Study,
    a: &mut dyn Runtime,
    b: Option<&mut dyn Runtime>,
    sink: &mut dyn Sink,
    ctx: &RunContext,
    cache: &mut InputCache,
) -> Result<RunSummary, ExportError> {
    let tell = |p: Progress| ctx.on_progress.map_or((), |on_progress| on_progress(p));
    tell(Progress::Started {
        total: study.comparisons.len(),
    });
    let summary = measure_all(study, a, b, sink, ctx, cache, &tell);
    tell(Progress::Ended);
    summary
}

fn measure_all(
    study: &Study,
    a: &mut dyn Runtime,
    mut b: Option<&mut dyn Runtime>,
    sink: &mut dyn Sink,
    ctx: &RunContext,
    cache: &mut InputCache,
    tell: &dyn Fn(Progress),
) -> Result<RunSummary, ExportError> {
    let mut summary = RunSummary::default();
    let total = study.comparisons.len();
    let expected = if b.is_some() { 2 } else { 1 };
    let mut built_through = 0;
    for (i, comparison) in study.comparisons.iter().enumerate() {
        if ctx.interrupted.load(Ordering::SeqCst) {
            summary.interrupted = true;
            break;
        }
        let index = i + 1;
        if sink.stored_sides(&comparison.id) >= expected {
            summary.skipped += 1;
            tell(Progress::Done {
                index,
                total,
                rows: None,
            });
            continue;
        }
        if i >= built_through {
            built_through = i + ahead::stretch();
            let next: Vec<&Comparison> = study.comparisons[i..built_through.min(total)]
                .iter()
                .filter(|c| sink.stored_sides(&c.id) < expected)
                .collect();
            let started = std::time::Instant::now();
            // Side B is lent for each call: the cast shortens its trait object's lifetime
            // with the borrow, which `as_deref_mut` alone does not.
            let b_side = b.as_deref_mut().map(|x| x as &mut dyn Runtime);
            summary.built_ahead += ahead::build_ahead(&next, a, b_side, ctx.sources);
            summary.built_ahead_s += started.elapsed().as_secs_f64();
        }
        tell(Progress::Measuring { id: &comparison.id });
        let mut times = timings::PhaseTimes::default();
        let b_side = b.as_deref_mut().map(|x| x as &mut dyn Runtime);
        let Some(rows) = run_comparison(study, comparison, a, b_side, ctx, cache, &mut times)
        else {
            summary.interrupted = true;
            break;
        };
        summary.timings.push(TimingRow::of(&comparison.id, &times));
        // Written before the next comparison starts: an interruption keeps it.
        sink.record(&rows)?;
        tell(Progress::Done {
            index,
            total,
            rows: Some(&rows),
        });
        summary.note(rows, comparison.expected_refusal);
    }
    Ok(summary)
}

/// The side's launch shape and compile settings, default groups by the rule on its device.
fn side_plan<'b>(side: Side, backend: &'b mut dyn Runtime, settings: Resolved) -> SidePlan<'b> {
    let settings = auto::resolve(settings, backend.info());
    let (s, units) = (&settings, backend.info().compute_units);
    let family = s.variant.family.family();
    let groups = s
        .groups
        .unwrap_or_else(|| family.default_groups(s.variant, s.size, s.local, units));
    let groups_y = s
        .groups_y
        .unwrap_or_else(|| family.default_groups_y(s.variant, s.size, s.local_y));
    let config = SideConfig {
        shape: crate::backend::LaunchShape::planar(
            (groups, groups_y),
            (settings.local, settings.local_y),
        ),
        defines: settings.kernel_defines(),
        flags: settings.flags.for_api(backend.api()),
        jit: settings.jit,
    };
    SidePlan {
        side,
        backend,
        settings,
        config,
    }
}

/// The program text (PTX on NVIDIA) `backend`'s compiler makes of `settings`, built exactly as
/// a run builds it; `None` where the variant has no kernel or the platform gives no text.
pub fn program_text_of(
    backend: &mut dyn Runtime,
    sources: &KernelSources,
    settings: Resolved,
) -> Result<Option<String>, crate::families::exec::ExecError> {
    let plan = side_plan(Side::A, backend, settings);
    let Some(file) = kernel_file(&plan.settings) else {
        return Ok(None);
    };
    let program = crate::families::exec::compile(plan.backend, sources, file, &plan.config, None)?;
    Ok(plan.backend.program_text(program)?)
}

/// The kernel file `s` builds; `None` for a variant with no kernel.
fn kernel_file(s: &Resolved) -> Option<&'static str> {
    (!s.variant.kernel.is_empty()).then(|| s.family.family().spec().kernel_file)
}

/// The launch shape a run of `settings` on `backend` uses, default groups resolved.
pub fn launch_shape(backend: &mut dyn Runtime, settings: Resolved) -> crate::backend::LaunchShape {
    side_plan(Side::A, backend, settings).config.shape
}

/// What decides the program a run of `settings` builds on `backend` (kernel file, kernel,
/// defines, flags, JIT) as one text, `None` without a kernel: one program's code is read once.
pub fn program_key(backend: &mut dyn Runtime, settings: Resolved) -> Option<String> {
    let plan = side_plan(Side::A, backend, settings);
    let (s, c) = (&plan.settings, &plan.config);
    let file = kernel_file(s)?;
    Some(format!(
        "{:?} {file} {} {:?} {:?} {:?}",
        plan.backend.api(),
        s.variant.kernel,
        c.all_defines(),
        c.flags,
        c.jit
    ))
}

/// Builds `settings` on `backend` as a run does (running `program`, a compiler's text, where
/// given), runs it once and checks it (`Ok(false)`: it does not verify): what a profiler watches.
pub fn run_once(
    backend: &mut dyn Runtime,
    sources: &KernelSources,
    settings: Resolved,
    program: Option<&str>,
) -> Result<bool, crate::families::exec::ExecError> {
    use crate::families::exec;
    let mut plan = side_plan(Side::A, backend, settings);
    auto::runtime_local(&mut plan, sources);
    let s = &plan.settings;
    let inputs = measure::InputCache::default().get(s.variant, s.size, s.seed, &s.matrix);
    let p = exec::prepare_with_program(
        plan.backend,
        sources,
        s.variant,
        &inputs,
        &plan.config,
        program,
    )?;
    let verified = exec::verify(plan.backend, &p, &inputs);
    exec::release(plan.backend, p);
    Ok(verified?.ok)
}

/// Side B's settings as its comparison runs them: when neither side sets a group count and
/// both run the same variant, size and work-group size, B takes the count the default rule
/// gave on side A's device (`groups_a`), so that a fair comparison stays fair.
fn settings_b(c: &Comparison, groups_a: u32) -> Resolved {
    let (a, b) = (&c.a, &c.b);
    let same_problem = b.variant == a.variant
        && b.size == a.size
        && b.local == a.local
        && b.local_y == a.local_y
        && b.groups_y == a.groups_y;
    let mut settings = b.clone();
    if a.groups.is_none() && b.groups.is_none() && same_problem {
        settings.groups = Some(groups_a);
    }
    settings
}

/// Measures one comparison and turns it into rows; `None` when interrupted (nothing written).
fn run_comparison(
    study: &Study,
    c: &Comparison,
    a: &mut dyn Runtime,
    b: Option<&mut dyn Runtime>,
    ctx: &RunContext,
    cache: &mut InputCache,
    times: &mut timings::PhaseTimes,
) -> Option<ComparisonRows> {
    let (mut plans, mut inputs) = (Vec::new(), Vec::new());
    let mut add = |side, backend, settings: Resolved| {
        let s = settings.clone();
        let mut plan = side_plan(side, backend, settings);
        auto::runtime_local(&mut plan, ctx.sources);
        let groups = plan.config.shape.groups;
        plans.push(plan);
        inputs.push(times.add(
            |t| &mut t.inputs,
            || cache.get(s.variant, s.size, s.seed, &s.matrix),
        ));
        groups
    };
    let groups_a = add(Side::A, a, c.a.clone());
    if let Some(b) = b {
        add(Side::B, b, settings_b(c, groups_a));
    }
    let id: std::sync::Arc<str> = std::sync::Arc::from(c.id.as_str());
    let guard = measure::Guard {
        watchdog: ctx.watchdog,
        timeout_s: ctx.timeout_s,
        comparison: &id,
    };
    let inputs: Vec<&crate::families::exec::Inputs> = inputs.iter().map(|i| &**i).collect();
    let runs = measure::measure_comparison(
        &mut plans,
        &inputs,
        ctx.sources,
        ctx.interrupted,
        guard,
        times,
    )?;
    let row_ctx = RowContext {
        run_id: &ctx.run_id,
        study,
        comparison: c,
    };
    let stats = analysis::comparison_stats(&row_ctx, &plans, &runs);
    let mut rows = ComparisonRows::default();
    for (i, (plan, run)) in plans.iter().zip(&runs).enumerate() {
        rows.measurements
            .push(analysis::measurement_row(&row_ctx, plan, run, &stats, i));
        if run.failure.is_none() {
            rows.samples
                .extend(analysis::sample_rows(&row_ctx, plan, run));
        }
    }
    rows.pr = analysis::pr_row(&row_ctx, &plans, &stats, &rows.measurements);
    Some(rows)
}
