//! The backend-agnostic runner: for each comparison, prepare and verify both sides, warm up,
//! then time repetitions interleaved A, B, A, B... so that clock and thermal drift hit both
//! alike; summarise, form PR, and append the rows to disk before the next comparison starts.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use sha2::{Digest, Sha256};

use crate::backend::{Api, Backend, LaunchShape, TimerKind};
use crate::export::csv::{key_counts, retain_rows, CsvAppender};
use crate::export::ExportError;
use crate::fairness::{self, SideSteps};
use crate::kernels::KernelSources;
use crate::record::{MeasurementRow, PrRow, SampleRow, Status};
use crate::stats;
use crate::study::{Comparison, Resolved, Study};
use crate::workload::exec::{self, ExecError, Inputs, Prepared, SideConfig};
use crate::workload::{default_groups, work_of, FamilyKind, Size};

/// Bootstrap resamples for every CI.
pub const RESAMPLES: usize = 2000;

/// Where a run writes: CSVs appended after every comparison.
pub struct Sinks {
    pub dir: PathBuf,
    measurements: CsvAppender<MeasurementRow>,
    prs: CsvAppender<PrRow>,
    samples: CsvAppender<SampleRow>,
    /// Comparisons already complete in the output (both sides present), for `--resume`.
    done: HashMap<String, usize>,
}

impl Sinks {
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
        Ok(Sinks {
            dir: dir.to_path_buf(),
            measurements: CsvAppender::open(&mpath, resume)?,
            prs: CsvAppender::open(&dir.join(Self::PRS), resume)?,
            samples: CsvAppender::open(&dir.join(Self::SAMPLES), resume)?,
            done,
        })
    }
}

impl Sinks {
    /// Writes one comparison's rows to the three files as a unit: samples, the PR, and
    /// last the measurements, which `--resume` reads to know what is done (each file gets
    /// one write). When a write fails, all three files are cut back to where they were, so
    /// the output holds whole comparisons only and a resumed run measures the failed one
    /// again; a kill between the writes is repaired on resume ([`drop_unfinished`]).
    pub fn record(
        &mut self,
        measurements: &[MeasurementRow],
        samples: &[SampleRow],
        pr: Option<&PrRow>,
    ) -> Result<(), ExportError> {
        let marks = (
            self.samples.byte_len()?,
            self.measurements.byte_len()?,
            self.prs.byte_len()?,
        );
        let written = self
            .samples
            .append_all(samples)
            .and_then(|_| {
                self.prs
                    .append_all(pr.map(std::slice::from_ref).unwrap_or(&[]))
            })
            .and_then(|_| self.measurements.append_all(measurements));
        if written.is_err() {
            // The first error is the one to report; these cuts are best effort.
            let _ = self.samples.roll_back_to(marks.0);
            let _ = self.measurements.roll_back_to(marks.1);
            let _ = self.prs.roll_back_to(marks.2);
        }
        written
    }
}

/// A run killed inside [`Sinks::record`] can leave samples or a PR of a comparison whose
/// measurements never reached the disk; `--resume` measures that comparison again, so those
/// rows would be duplicated. Drop them first, saying so.
fn drop_unfinished(dir: &Path, done: &HashMap<String, usize>) -> Result<(), ExportError> {
    let samples = dir.join(Sinks::SAMPLES);
    let n = retain_rows::<SampleRow, _>(&samples, |r| done.contains_key(&r.comparison))?;
    let prs = dir.join(Sinks::PRS);
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

/// Run-wide settings.
pub struct RunContext<'a> {
    pub run_id: String,
    pub sources: &'a KernelSources,
    pub interrupted: &'a AtomicBool,
    pub progress: bool,
}

/// What a run did, for the summary and the exit code.
#[derive(Debug, Default)]
pub struct RunSummary {
    pub measurements: Vec<MeasurementRow>,
    pub prs: Vec<PrRow>,
    pub skipped: usize,
    pub failed: Vec<String>,
    pub interrupted: bool,
}

/// Inputs are costly at GPU sizes (2^28 random floats and their f64 reference): keep the
/// last set, since consecutive comparisons of a study usually share family, size and seed.
#[derive(Default)]
struct InputCache {
    entries: Vec<((FamilyKind, Size, u64), Rc<Inputs>)>,
}

impl InputCache {
    fn get(&mut self, family: FamilyKind, size: Size, seed: u64) -> Rc<Inputs> {
        let key = (family, size, seed);
        if let Some((_, v)) = self.entries.iter().find(|(k, _)| *k == key) {
            return v.clone();
        }
        let v = Rc::new(Inputs::generate(family, size, seed));
        // At most two sets (the two sides of an unfair problem-size pair).
        if self.entries.len() >= 2 {
            self.entries.remove(0);
        }
        self.entries.push((key, v.clone()));
        v
    }
}

/// One side of a comparison, ready to run.
struct Side<'b> {
    backend: &'b mut dyn Backend,
    settings: Resolved,
    shape: LaunchShape,
    config: SideConfig,
}

/// Run a study over one backend (no PR) or two (A = OpenCL side, B = CUDA side).
pub fn run_study(
    study: &Study,
    a: &mut dyn Backend,
    mut b: Option<&mut dyn Backend>,
    sinks: &mut Sinks,
    ctx: &RunContext,
) -> Result<RunSummary, ExportError> {
    let mut summary = RunSummary::default();
    let bar = progress_bar(study.comparisons.len(), ctx.progress);
    let expected = if b.is_some() { 2 } else { 1 };
    let mut cache = InputCache::default();
    for comparison in &study.comparisons {
        if ctx.interrupted.load(Ordering::SeqCst) {
            summary.interrupted = true;
            break;
        }
        if sinks.done.get(&comparison.id).copied().unwrap_or(0) >= expected {
            summary.skipped += 1;
            bar.inc(1);
            continue;
        }
        bar.set_message(comparison.id.clone());
        let b_side: Option<&mut dyn Backend> = match &mut b {
            Some(x) => Some(&mut **x),
            None => None,
        };
        let outcome = run_comparison(study, comparison, a, b_side, ctx, &mut cache);
        match outcome {
            Some(out) => {
                // Written before the next comparison starts: an interruption keeps it.
                sinks.record(&out.measurements, &out.samples, out.pr.as_ref())?;
                for m in &out.measurements {
                    if m.status != Status::Ok {
                        summary.failed.push(format!(
                            "{} [{}]: {} {}",
                            m.comparison,
                            m.api,
                            m.status.as_str(),
                            first_line(&m.error)
                        ));
                    }
                }
                if let Some(pr) = &out.pr {
                    summary.prs.push(pr.clone());
                }
                summary.measurements.extend(out.measurements);
            }
            None => {
                summary.interrupted = true;
                break;
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(summary)
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

fn progress_bar(len: usize, enabled: bool) -> indicatif::ProgressBar {
    if !enabled {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len as u64);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed_precise} {msg}")
    {
        bar.set_style(style);
    }
    bar
}

/// The rows one comparison produced.
struct Outcome {
    measurements: Vec<MeasurementRow>,
    samples: Vec<SampleRow>,
    pr: Option<PrRow>,
}

fn side_config(backend: &dyn Backend, r: &Resolved) -> (LaunchShape, SideConfig) {
    let groups = r.groups.unwrap_or_else(|| {
        default_groups(r.variant, r.size, r.local, backend.info().compute_units)
    });
    let shape = LaunchShape {
        groups,
        local: r.local,
    };
    let config = SideConfig {
        shape,
        defines: r.kernel_defines(),
        flags: r.flags.for_api(backend.api()),
    };
    (shape, config)
}

/// Returns `None` when interrupted mid-comparison (nothing of it is written).
fn run_comparison(
    study: &Study,
    c: &Comparison,
    a: &mut dyn Backend,
    b: Option<&mut dyn Backend>,
    ctx: &RunContext,
    cache: &mut InputCache,
) -> Option<Outcome> {
    let mut sides: Vec<Side> = Vec::new();
    let (shape_a, config_a) = side_config(a, &c.a);
    sides.push(Side {
        backend: a,
        settings: c.a.clone(),
        shape: shape_a,
        config: config_a,
    });
    if let Some(b) = b {
        // Both sides use the same group count unless the study sets one explicitly: the
        // default rule is evaluated on side A's device so that a fair comparison stays fair.
        let mut settings = c.b.clone();
        if settings.groups.is_none()
            && c.a.groups.is_none()
            && settings.variant == c.a.variant
            && settings.size == c.a.size
            && settings.local == c.a.local
        {
            settings.groups = Some(shape_a.groups);
        }
        let (shape, config) = side_config(b, &settings);
        sides.push(Side {
            backend: b,
            settings,
            shape,
            config,
        });
    }
    let inputs_a = cache.get(c.a.family, c.a.size, c.a.seed);
    let inputs_b = cache.get(c.b.family, c.b.size, c.b.seed);

    let mut rows = Vec::new();
    let mut prepared: Vec<Option<Prepared>> = Vec::new();
    let mut verified = Vec::new();
    for (i, side) in sides.iter_mut().enumerate() {
        let inputs: &Inputs = if i == 1 { &inputs_b } else { &inputs_a };
        let base = base_row(study, c, side, ctx);
        match exec::prepare(
            side.backend,
            ctx.sources,
            side.settings.variant,
            inputs,
            &side.config,
        ) {
            Err(e) => {
                rows.push(failed_row(base, &e));
                prepared.push(None);
                verified.push(false);
            }
            Ok(p) => match exec::verify(side.backend, &p, inputs) {
                Ok(v) if v.ok => {
                    let mut r = base;
                    r.verified = true;
                    r.max_error = v.max_error;
                    rows.push(r);
                    prepared.push(Some(p));
                    verified.push(true);
                }
                Ok(v) => {
                    let mut r = base;
                    r.status = Status::VerifyFailed;
                    r.max_error = v.max_error;
                    r.error = format!(
                        "max error {:.3e} exceeds tolerance {:.3e} ({} outputs checked)",
                        v.max_error, v.tolerance, v.checked
                    );
                    rows.push(r);
                    exec::release(side.backend, p);
                    prepared.push(None);
                    verified.push(false);
                }
                Err(e) => {
                    rows.push(failed_row(base, &e));
                    exec::release(side.backend, p);
                    prepared.push(None);
                    verified.push(false);
                }
            },
        }
    }

    // Time only the sides that verified; a failed side is recorded but never timed.
    let mut samples: Vec<Vec<(f64, f64)>> = vec![Vec::new(); sides.len()];
    let timed = measure(&mut sides, &prepared, &mut samples, ctx);
    for (side, p) in sides.iter_mut().zip(prepared) {
        if let Some(p) = p {
            exec::release(side.backend, p);
        }
    }
    match timed {
        Err(()) => return None,
        Ok(errors) => {
            for (i, e) in errors.into_iter().enumerate() {
                if let Some(e) = e {
                    rows[i] = failed_row(rows[i].clone(), &e);
                }
            }
        }
    }

    let mut sample_rows = Vec::new();
    for (i, side) in sides.iter().enumerate() {
        if rows[i].status != Status::Ok {
            continue;
        }
        let times = pick(&samples[i], side.settings.timer);
        fill_stats(&mut rows[i], &times, side.settings.timer);
        for (rep, (dev, wall)) in samples[i].iter().enumerate() {
            for (timer, value) in [
                (TimerKind::DeviceEvent, *dev),
                (TimerKind::WallClock, *wall),
            ] {
                if value.is_finite() {
                    sample_rows.push(SampleRow {
                        run_id: ctx.run_id.clone(),
                        comparison: c.id.clone(),
                        side: if i == 0 { "A" } else { "B" }.into(),
                        api: rows[i].api.clone(),
                        timer: timer.label().into(),
                        rep: rep as u32,
                        seconds: value,
                    });
                }
            }
        }
    }
    let pr = (sides.len() == 2 && rows.iter().all(|r| r.status == Status::Ok))
        .then(|| {
            let steps: Vec<SideSteps> = sides.iter().map(side_steps).collect();
            let verdict = fairness::verdict(&steps[0], &steps[1]);
            pr_row(study, c, &rows, &samples, &sides, &verdict, ctx)
        })
        .flatten();
    Some(Outcome {
        measurements: rows,
        samples: sample_rows,
        pr,
    })
}

/// Warm-up then interleaved repetitions. Returns Err(()) when interrupted, else per-side
/// errors (a launch that failed mid-measurement marks that side failed).
fn measure(
    sides: &mut [Side],
    prepared: &[Option<Prepared>],
    samples: &mut [Vec<(f64, f64)>],
    ctx: &RunContext,
) -> Result<Vec<Option<ExecError>>, ()> {
    let mut errors: Vec<Option<ExecError>> = (0..sides.len()).map(|_| None).collect();
    let active =
        |errors: &Vec<Option<ExecError>>, i: usize| prepared[i].is_some() && errors[i].is_none();
    let warmup = sides.iter().map(|s| s.settings.warmup).max().unwrap_or(0);
    for w in 0..warmup {
        for (i, side) in sides.iter_mut().enumerate() {
            if active(&errors, i) && w < side.settings.warmup {
                if let Some(p) = &prepared[i] {
                    if let Err(e) = exec::run(side.backend, p) {
                        errors[i] = Some(e);
                    }
                }
            }
        }
    }
    let mut spent = vec![0.0f64; sides.len()];
    let started = Instant::now();
    for rep in 0.. {
        if ctx.interrupted.load(Ordering::SeqCst) {
            return Err(());
        }
        let mut any = false;
        for (i, side) in sides.iter_mut().enumerate() {
            let s = &side.settings;
            let needed = rep < s.reps || spent[i] < s.min_time_s;
            if !active(&errors, i) || !needed || rep >= s.max_reps {
                continue;
            }
            any = true;
            if let Some(p) = &prepared[i] {
                match exec::run(side.backend, p) {
                    Ok(t) => {
                        let dev = t.device.map(|d| d.0).unwrap_or(f64::NAN);
                        samples[i].push((dev, t.wall.0));
                        spent[i] += t.get(s.timer).map(|x| x.0).unwrap_or(t.wall.0);
                    }
                    Err(e) => errors[i] = Some(e),
                }
            }
        }
        // A hard cap on wall time per comparison keeps a mis-specified study from running away.
        if !any || started.elapsed().as_secs_f64() > 600.0 {
            break;
        }
    }
    Ok(errors)
}

fn pick(samples: &[(f64, f64)], timer: TimerKind) -> Vec<f64> {
    samples
        .iter()
        .map(|(d, w)| match timer {
            TimerKind::DeviceEvent => *d,
            TimerKind::WallClock => *w,
        })
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect()
}

fn seed_of(id: &str) -> u64 {
    let h = Sha256::digest(id.as_bytes());
    u64::from_le_bytes([h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]])
}

fn fill_stats(row: &mut MeasurementRow, times: &[f64], timer: TimerKind) {
    let Some(s) = stats::summarize(times, RESAMPLES, seed_of(&row.comparison)) else {
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
    let (median, lo, hi) = (
        metric_value(row, s.median),
        metric_value(row, s.ci_hi),
        metric_value(row, s.ci_lo),
    );
    row.metric = median;
    // The slow end of the time CI is the low end of the metric CI.
    row.metric_ci_lo = lo;
    row.metric_ci_hi = hi;
}

/// The work a row's metric counts (bytes, flops or one launch).
fn work(row: &MeasurementRow) -> f64 {
    match row.metric_unit.as_str() {
        "GB/s" => row.bytes as f64 / 1e9,
        "GFLOP/s" => row.flops as f64 / 1e9,
        _ => 1.0,
    }
}

fn metric_value(row: &MeasurementRow, seconds: f64) -> f64 {
    if seconds > 0.0 {
        work(row) / seconds
    } else {
        f64::NAN
    }
}

/// SHA-256 of the kernel's source file text (prelude excluded), first 12 hex digits.
pub fn source_hash(sources: &KernelSources, api: Api, stem: &str) -> String {
    let text = sources.file(api, stem).unwrap_or_default();
    let h = Sha256::digest(text.as_bytes());
    h.iter().take(6).map(|b| format!("{b:02x}")).collect()
}

fn side_steps(side: &Side) -> SideSteps {
    let s = &side.settings;
    let mut native: BTreeMap<String, String> = s
        .unroll
        .iter()
        .map(|(p, f)| (format!("unroll.{p}"), f.to_string()))
        .collect();
    native.extend(s.defines.clone());
    SideSteps {
        api: side.backend.api(),
        problem: format!("{} {} f32 seed {}", s.family.name(), s.size, s.seed),
        algorithm: s.variant.name.to_string(),
        // The twins differ in spelling by design; the parity check (`clvscu parity`) guards
        // that they are the same algorithm text, so the implementation step records the
        // variant's kernel name and the check, not the raw hash of one file.
        implementation: format!("{} (parity-checked twins)", s.variant.kernel),
        native,
        flags: s.flags,
        second_stage: "driver JIT of PTX, default options".into(),
        local: side.shape.local,
        groups: side.shape.groups,
        timer: s.timer,
        warmup: s.warmup,
        min_reps: s.reps,
        min_time_s: s.min_time_s,
    }
}

fn base_row(study: &Study, c: &Comparison, side: &Side, ctx: &RunContext) -> MeasurementRow {
    let info = side.backend.info();
    let s = &side.settings;
    let (bytes, flops) = work_of(s.family, s.variant.name, s.size, side.shape.global());
    let mut flags: Vec<String> = side
        .config
        .all_defines()
        .iter()
        .map(|(k, v)| format!("-D{k}={v}"))
        .collect();
    flags.extend(side.config.flags.iter().cloned());
    MeasurementRow {
        run_id: ctx.run_id.clone(),
        study: study.name.clone(),
        comparison: c.id.clone(),
        api: side.backend.api().label().into(),
        device: info.name.clone(),
        platform: info.platform.clone(),
        driver: info.driver_version.clone(),
        api_version: info.api_version.clone(),
        family: s.family.name().into(),
        variant: s.variant.name.into(),
        size: s.size.to_string(),
        elements: s.size.elements(),
        local_size: side.shape.local,
        groups: side.shape.groups,
        global_size: side.shape.global(),
        unroll: s.unroll_text(),
        flags: flags.join(" "),
        timer: s.timer.label().into(),
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
        metric_unit: s.family.metric().unit().into(),
        metric_ci_lo: f64::NAN,
        metric_ci_hi: f64::NAN,
        bytes,
        flops,
        peak_gbs: info.theoretical_peak_gbs().unwrap_or(0.0),
        verified: false,
        max_error: f64::NAN,
        status: Status::Ok,
        error: String::new(),
        sweep_param: c.sweep_param.clone(),
        sweep_value: c.sweep_value.clone(),
    }
}

fn failed_row(mut row: MeasurementRow, e: &ExecError) -> MeasurementRow {
    row.status = if e.is_build() {
        Status::BuildFailed
    } else {
        Status::LaunchFailed
    };
    row.verified = false;
    row.error = e.to_string();
    row
}

fn pr_row(
    study: &Study,
    c: &Comparison,
    rows: &[MeasurementRow],
    samples: &[Vec<(f64, f64)>],
    sides: &[Side],
    verdict: &fairness::Verdict,
    ctx: &RunContext,
) -> Option<PrRow> {
    let ta = pick(&samples[0], sides[0].settings.timer);
    let tb = pick(&samples[1], sides[1].settings.timer);
    let ratio = stats::performance_ratio(
        &ta,
        work(&rows[0]),
        &tb,
        work(&rows[1]),
        RESAMPLES,
        seed_of(&c.id),
    )?;
    let label = stats::classify_pr(&ratio);
    let (a, b) = (&rows[0], &rows[1]);
    Some(PrRow {
        run_id: ctx.run_id.clone(),
        study: study.name.clone(),
        comparison: c.id.clone(),
        device_a: a.device.clone(),
        device_b: b.device.clone(),
        api_a: a.api.clone(),
        api_b: b.api.clone(),
        family: a.family.clone(),
        variant: a.variant.clone(),
        size: a.size.clone(),
        local_size: a.local_size,
        groups: a.groups,
        metric_unit: a.metric_unit.clone(),
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
            a.timer.clone()
        } else {
            format!("{} vs {}", a.timer, b.timer)
        },
        sweep_param: c.sweep_param.clone(),
        sweep_value: c.sweep_value.clone(),
    })
}
