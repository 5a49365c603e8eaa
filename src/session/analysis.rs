//! From samples to rows: the bridge between what was measured and [`crate::stats`]. Each
//! side's times become a measurement row (median, CI, metric), its raw samples become sample
//! rows, and two timed sides become a PR row with the fairness verdict.

use std::collections::BTreeMap;

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use super::measure::{side_work, times, SidePlan, SideRun};
use crate::backend::Seconds;
use crate::calibrate::RESAMPLES;
use crate::fairness::{self, SideSteps};
use crate::rows::{Api, MeasurementRow, PrRow, SampleRow, Status, TimerKind};
use crate::stats;
use crate::study::{Comparison, Study};

/// What every row of a run shares.
pub struct RowContext<'a> {
    pub run_id: &'a str,
    pub study: &'a Study,
    pub comparison: &'a Comparison,
}

/// The bootstrap statistics of a comparison: each side's summary and the PR of the two.
pub struct ComparisonStats {
    summaries: Vec<Option<stats::Summary>>,
    ratio: Option<stats::Ratio>,
}

/// A comparison's statistics, the sides and the PR in parallel, as a sequential computation
/// gives them (each bootstrap of 2000 resamples, up to half a second for a launch row, has its
/// own seeded generator). A side with fewer than [`stats::MIN_SAMPLES_FOR_CI`] samples keeps
/// its median but gets NaN CI bounds, as does its PR (which then has no verdict).
pub fn comparison_stats(ctx: &RowContext, plans: &[SidePlan], runs: &[SideRun]) -> ComparisonStats {
    // The seed of every bootstrap of a comparison: the same rows give the same CIs.
    let h = Sha256::digest(ctx.comparison.id.as_bytes());
    let seed = u64::from_le_bytes([h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]]);
    let timed: Vec<Option<Vec<f64>>> = plans
        .iter()
        .zip(runs)
        .map(|(p, r)| r.failure.is_none().then(|| times(p, r)))
        .collect();
    let works: Vec<f64> = plans.iter().map(side_work).collect();
    let few = |n: usize| n < stats::MIN_SAMPLES_FOR_CI;
    let (summaries, ratio) = rayon::join(
        || {
            timed
                .par_iter()
                .map(|t| {
                    let mut s = stats::summarize(t.as_ref()?, RESAMPLES, seed)?;
                    if few(s.n) {
                        (s.ci_lo, s.ci_hi) = (f64::NAN, f64::NAN);
                    }
                    Some(s)
                })
                .collect()
        },
        || {
            let ([Some(a), Some(b)], [wa, wb]) = (timed.as_slice(), works.as_slice()) else {
                return None;
            };
            let mut r = stats::performance_ratio(a, *wa, b, *wb, RESAMPLES, seed)?;
            if few(a.len().min(b.len())) {
                (r.ci_lo, r.ci_hi) = (f64::NAN, f64::NAN);
            }
            Some(r)
        },
    );
    ComparisonStats { summaries, ratio }
}

/// The measurement row of side `i`: its settings, and its statistics when it was timed.
pub fn measurement_row(
    ctx: &RowContext,
    plan: &SidePlan,
    run: &SideRun,
    stats: &ComparisonStats,
    i: usize,
) -> MeasurementRow {
    let mut row = base_row(ctx, plan);
    row.max_error = run.max_error;
    if let Some(r) = &run.resources {
        row.kernel_work_group_limit = r.max_threads_per_group;
        row.registers = r.registers;
        row.spill_bytes = r.local_bytes;
        row.shared_bytes = r.shared_bytes;
    }
    match &run.failure {
        Some(f) => {
            row.status = f.status;
            row.error = f.message.clone();
        }
        None => {
            row.verified = true;
            row.levels = run.levels;
            fill_stats(&mut row, stats.summaries.get(i).copied().flatten(), plan);
            row.queued_to_submit_s = median_of(run.samples.iter().map(|s| s.queued_to_submit));
            row.submit_to_start_s = median_of(run.samples.iter().map(|s| s.submit_to_start));
        }
    }
    row
}

/// The raw samples of a side that was timed, both clocks, in repetition order.
pub fn sample_rows(ctx: &RowContext, plan: &SidePlan, run: &SideRun) -> Vec<SampleRow> {
    let mut rows = Vec::new();
    for (rep, s) in run.samples.iter().enumerate() {
        for timer in [TimerKind::DeviceEvent, TimerKind::WallClock] {
            if let Some(seconds) = s.get(timer).map(|v| v.0).filter(|v| v.is_finite()) {
                rows.push(SampleRow {
                    run_id: ctx.run_id.to_string(),
                    comparison: ctx.comparison.id.clone(),
                    side: plan.side,
                    api: plan.backend.api(),
                    timer,
                    rep: rep as u32,
                    seconds,
                });
            }
        }
    }
    rows
}

fn fill_stats(row: &mut MeasurementRow, summary: Option<stats::Summary>, plan: &SidePlan) {
    let timer = plan.settings.timer;
    let Some(s) = summary else {
        row.status = Status::LaunchFailed;
        row.error = format!("the {} timer produced no usable sample", timer.label());
        return;
    };
    row.reps = s.n as u32;
    row.median_s = s.median;
    row.min_s = s.min;
    row.mean_s = s.mean;
    row.mad_s = s.mad;
    row.ci_lo_s = s.ci_lo;
    row.ci_hi_s = s.ci_hi;
    row.outliers = s.outliers as u32;
    row.metric = row.metric_at(s.median);

    // The slow end of the time CI is the low end of the metric CI.
    row.metric_ci_lo = row.metric_at(s.ci_hi);
    row.metric_ci_hi = row.metric_at(s.ci_lo);
}

/// The median of the values an API gave; `None` (an empty cell) when it gave none, as CUDA.
fn median_of(values: impl Iterator<Item = Option<Seconds>>) -> Option<f64> {
    let v: Vec<f64> = values
        .flatten()
        .map(|x| x.0)
        .filter(|x| x.is_finite())
        .collect();
    stats::median(&v)
}

/// Whose front end made the program a side runs: its own API's, or (`Other`) the other API's.
pub fn front_end(api: Api, program: crate::rows::ProgramSource) -> Api {
    match (program, api) {
        (crate::rows::ProgramSource::Own, api) => api,
        (crate::rows::ProgramSource::Other, Api::OpenCl) => Api::Cuda,
        (crate::rows::ProgramSource::Other, Api::Cuda) => Api::OpenCl,
    }
}

/// The eight steps as this side decided them, for the fairness verdict.
pub fn side_steps(plan: &SidePlan) -> SideSteps {
    let s = &plan.settings;
    let native: BTreeMap<String, String> = s
        .unroll
        .iter()
        .map(|(p, f)| (format!("unroll.{p}"), f.to_string()))
        .collect();
    // A define selects what code is compiled (sub-groups or barriers): an implementation step.
    let defines: Vec<String> = s.defines.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let shaped = if defines.is_empty() {
        String::new()
    } else {
        format!(" with {}", defines.join(" "))
    };
    SideSteps {
        api: plan.backend.api(),
        problem: s.family.family().problem_text(
            s.size,
            s.seed,
            crate::families::InputChoice { matrix: &s.matrix },
        ),
        algorithm: s.variant.family.family().algorithm(s.variant).to_string(),
        // The twins differ in spelling by design, and `clvscu parity` guards that they are the
        // same algorithm: the step names the kernel and the check, not one file's hash.
        implementation: format!(
            "{} (parity-checked twins), {}-bit index ({}){shaped}",
            s.variant.kernel,
            s.index.bits(front_end(plan.backend.api(), s.program)),
            s.index,
        ),
        native,
        flags: s.flags,
        second_stage: s.jit.describe(),
        front_end: Some(front_end(plan.backend.api(), s.program)),
        shape: plan.config.shape,
        timer: s.timer,
        wait: s.wait,
        warmup: s.warmup,
        turn: s.turn,
        min_reps: s.reps,
        min_time_s: s.min_time_s,
    }
}

fn base_row(ctx: &RowContext, plan: &SidePlan) -> MeasurementRow {
    let info = plan.backend.info();
    let s = &plan.settings;
    let shape = plan.config.shape;
    let (bytes, flops) = s
        .family
        .family()
        .work(s.variant.name, s.size, shape.global());
    let mut flags: Vec<String> = plan
        .config
        .all_defines()
        .iter()
        .map(|(k, v)| format!("-D{k}={v}"))
        .collect();
    flags.extend(plan.config.flags.iter().cloned());
    flags.extend(plan.config.jit.for_api(plan.backend.api()));
    // A side that runs the other side's program says so where its flags are read.
    if s.program == crate::rows::ProgramSource::Other {
        flags.push("[program=other: runs the other API's compiled program]".into());
    }
    MeasurementRow {
        run_id: ctx.run_id.to_string(),
        study: ctx.study.name.clone(),
        comparison: ctx.comparison.id.clone(),
        api: plan.backend.api(),
        device: info.name.clone(),
        platform: info.platform.clone(),
        driver: info.driver_version.clone(),
        api_version: info.api_version.clone(),
        family: s.family,
        variant: s.variant.name.into(),
        size: s.size.to_string(),
        elements: s.family.family().elements(s.size),
        local_size: shape.local,
        groups: shape.groups,
        global_size: shape.global(),
        local_y: shape.local_y,
        groups_y: shape.groups_y,
        unroll: s.unroll_text(),
        flags: flags.join(" "),
        timer: s.timer,
        wait_mode: Some(s.wait),
        turn: Some(s.turn),
        levels: None,
        front_end: Some(front_end(plan.backend.api(), s.program)),
        kernel_work_group_limit: None,
        registers: None,
        spill_bytes: None,
        shared_bytes: None,
        warmup: s.warmup,
        reps: 0,
        median_s: f64::NAN,
        min_s: f64::NAN,
        mean_s: f64::NAN,
        mad_s: f64::NAN,
        ci_lo_s: f64::NAN,
        ci_hi_s: f64::NAN,
        outliers: 0,
        metric: f64::NAN,
        metric_unit: s.family.metric(),
        metric_ci_lo: f64::NAN,
        metric_ci_hi: f64::NAN,
        bytes,
        flops,
        peak_gbs: info.theoretical_peak_gbs(),
        verified: false,
        max_error: f64::NAN,
        status: Status::Ok,
        error: String::new(),
        sweep_param: ctx.comparison.sweep_param.clone(),
        sweep_value: ctx.comparison.sweep_value.clone(),
        queued_to_submit_s: None,
        submit_to_start_s: None,
    }
}

/// The PR of two verified, timed sides, with the fairness verdict of their steps.
pub fn pr_row(
    ctx: &RowContext,
    plans: &[SidePlan],
    stats: &ComparisonStats,
    rows: &[MeasurementRow],
) -> Option<PrRow> {
    let ([pa, pb], [a, b]) = (plans, rows) else {
        return None;
    };
    if a.status != Status::Ok || b.status != Status::Ok {
        return None;
    }
    let verdict = fairness::verdict(&side_steps(pa), &side_steps(pb));
    let c = ctx.comparison;
    let ratio = stats.ratio?;
    let label = stats::classify_pr(&ratio);
    Some(PrRow {
        run_id: ctx.run_id.to_string(),
        study: ctx.study.name.clone(),
        comparison: c.id.clone(),
        device_a: a.device.clone(),
        device_b: b.device.clone(),
        api_a: a.api,
        api_b: b.api,
        family: a.family,
        variant: a.variant.clone(),
        size: a.size.clone(),
        local_size: a.local_size,
        groups: a.groups,
        metric_unit: a.metric_unit,
        metric_a: a.metric,
        metric_b: b.metric,
        pr: ratio.value,
        pr_ci_lo: ratio.ci_lo,
        pr_ci_hi: ratio.ci_hi,
        similar: label.similar,
        similar_tight: label.similar_tight,
        fair: verdict.fair(),
        differing_steps: verdict.differences(),
        timer: if a.timer == b.timer {
            a.timer.to_string()
        } else {
            format!("{} vs {}", a.timer, b.timer)
        },
        sweep_param: c.sweep_param.clone(),
        sweep_value: c.sweep_value.clone(),
    })
}
