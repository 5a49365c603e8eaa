//! Runtime targets replayed as plain programs. A host-timed target whose work is the runtime's
//! own calls (empty-kernel launches, host transfers) is replayed in the explain process through
//! the harness's path and through a plain loop of the API's raw calls, turn about, on each API.
//! The gap is the driver's when the replay gives the target's PR and the plain loop agrees with
//! the harness, the harness's own when the plain loop is at parity and the harness is not.

use std::path::Path;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::attribute::{Cause, TargetExplanation, Verdict};
use crate::backend::{BackendError, Direction, HostMemory, PlainLoop, Runtime, Transfer};
use crate::calibrate::{measure_cases, CalibrationError, CalibrationRow};
use crate::export::csv::write_rows;
use crate::export::ExportError;
use crate::families::family::PlainCalls;
use crate::kernels::KernelSources;
use crate::rows::{Api, TimerKind};
use crate::session::run::Sides;
use crate::stats;
use crate::study::Comparison;

pub const REPLAY_CSV: &str = "replay.csv";
/// How far the replay's PRs may lie apart (the harness's against the target's, the plain
/// loop's against the harness's) and still be called the same: the calibration's own limit.
pub const AGREE_WITHIN: f64 = crate::calibrate::PR_WITHIN;

/// One API's replay of one target: one step through the harness and as a plain program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayRow {
    pub target: String,
    pub api: String,
    /// The driver calls of one replayed step, as the plain loop makes them.
    pub calls: String,
    pub reps: usize,
    /// Median microseconds per step: launch (with its share of the wait) or copy.
    pub harness_us: f64,
    pub plain_us: f64,
    pub plain_ci_lo_us: f64,
    pub plain_ci_hi_us: f64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Replay {
    Launch(PlainLoop),
    /// A copy of `len` elements in this direction, to or from this host memory.
    Copy(Direction, HostMemory, usize),
}

fn replay_of(t: &Comparison, backend: &mut dyn Runtime) -> Option<Replay> {
    let (a, b) = (&t.a, &t.b);
    let host_timed = a.timer == TimerKind::WallClock && b.timer == TimerKind::WallClock;
    if !host_timed || a.wait != b.wait {
        return None;
    }
    let calls = a.family.family().plain_calls(a.variant, a.size)?;
    Some(match calls {
        PlainCalls::Launches { batch } => Replay::Launch(PlainLoop {
            shape: crate::session::launch_shape(backend, a.clone()),
            wait: a.wait,
            batch,
            reps: if batch > 1 { 20 } else { 200 },
            flag_copies: false,
        }),
        PlainCalls::Copy {
            direction,
            memory,
            len,
        } => Replay::Copy(direction, memory, len),
    })
}

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error(transparent)]
    Calibration(#[from] CalibrationError),
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error(transparent)]
    Export(#[from] ExportError),
}

/// Replays every target that is the runtime's own calls and writes `replay.csv` into `out`.
pub fn collect(
    targets: &[Comparison],
    sources: &KernelSources,
    sides: &mut Sides,
    out: &Path,
) -> Result<Vec<ReplayRow>, ReplayError> {
    let replays: Vec<(&Comparison, Replay)> = targets
        .iter()
        .filter_map(|t| Some((t, replay_of(t, sides.a.as_mut())?)))
        .collect();
    let mut rows = launch_rows(&replays, sources, sides)?;
    for (t, replay) in &replays {
        if let Replay::Copy(direction, memory, len) = *replay {
            for b in super::each_side(sides) {
                rows.push(copy_row(t, b, direction, memory, len)?);
            }
        }
    }
    write_rows(&out.join(REPLAY_CSV), &rows)?;
    Ok(rows)
}

/// The launch targets' cases, each measured once (targets may share one), through the
/// calibration's harness-and-plain-loop turns.
fn launch_rows(
    replays: &[(&Comparison, Replay)],
    sources: &KernelSources,
    sides: &mut Sides,
) -> Result<Vec<ReplayRow>, ReplayError> {
    let mut cases: Vec<PlainLoop> = Vec::new();
    for (_, r) in replays {
        match r {
            Replay::Launch(case) if !cases.contains(case) => cases.push(*case),
            _ => {}
        }
    }
    let mut backends: Vec<&mut dyn Runtime> = super::each_side(sides).collect();
    let measured = measure_cases(&mut backends, sources, &cases, 25)?;
    let mut rows = Vec::new();
    for (t, r) in replays {
        let Replay::Launch(case) = r else { continue };
        rows.extend(
            measured
                .rows
                .iter()
                .filter(|c| c.shape == case.shape.describe() && c.batch == case.batch)
                .filter(|c| c.wait == case.wait.label())
                .map(|c| launch_row(&t.id, c)),
        );
    }
    Ok(rows)
}

fn launch_row(target: &str, c: &CalibrationRow) -> ReplayRow {
    let launches = if c.batch > 1 {
        format!("{} launches", c.batch)
    } else {
        "1 launch".into()
    };
    let launch_call = if c.api == Api::Cuda.label() {
        "cuLaunchKernel"
    } else {
        "clEnqueueNDRangeKernel"
    };
    ReplayRow {
        target: target.to_string(),
        api: c.api.clone(),
        calls: format!(
            "{launches} ({launch_call}) of {}, then {}",
            c.shape, c.wait_calls
        ),
        reps: c.reps,
        harness_us: c.harness_us,
        plain_us: c.plain_us,
        plain_ci_lo_us: c.plain_ci_lo_us,
        plain_ci_hi_us: c.plain_ci_hi_us,
    }
}

/// How long one API's copy replay takes turns at most, and the copies per path.
const COPY_BUDGET: Duration = Duration::from_millis(200);
const COPY_MIN_REPS: usize = 3;
const COPY_MAX_REPS: usize = 100;

/// One API's copies of one target through the harness and as plain blocking copies, in turns
/// of three (the first of each path untimed).
fn copy_row(
    t: &Comparison,
    backend: &mut dyn Runtime,
    direction: Direction,
    memory: HostMemory,
    len: usize,
) -> Result<ReplayRow, ReplayError> {
    backend.set_timer(TimerKind::WallClock)?;
    backend.set_wait_mode(t.a.wait)?;
    let host = backend.alloc_host(len, memory)?;
    let device = backend.alloc(len).inspect_err(|_| {
        let _ = backend.free_host(host);
    })?;
    let copy = Transfer {
        host,
        buffer: device,
        direction,
        len,
    };
    let samples = copy_turns(backend, copy);
    let _ = backend.free(device);
    let _ = backend.free_host(host);
    let (harness, plain) = samples?;
    let h = stats::summarize(&harness, 2000, 1);
    let p = stats::summarize(&plain, 2000, 2);
    let (Some(h), Some(p)) = (h, p) else {
        return Err(ReplayError::Backend(BackendError::InvalidHandle(
            "no copy was timed".into(),
        )));
    };
    let api = backend.api();
    // The one call of `api` that makes a plain blocking copy in `direction`.
    let call = match (api, direction) {
        (Api::Cuda, Direction::H2d) => "cuMemcpyHtoD",
        (Api::Cuda, Direction::D2h) => "cuMemcpyDtoH",
        (_, Direction::H2d) => "clEnqueueWriteBuffer (blocking)",
        (_, Direction::D2h) => "clEnqueueReadBuffer (blocking)",
    };
    Ok(ReplayRow {
        target: t.id.clone(),
        api: api.label().into(),
        calls: format!("1 {call} of {} bytes, {} host memory", len * 4, memory),
        reps: plain.len(),
        harness_us: h.median * 1e6,
        plain_us: p.median * 1e6,
        plain_ci_lo_us: p.ci_lo * 1e6,
        plain_ci_hi_us: p.ci_hi * 1e6,
    })
}

fn copy_turns(
    backend: &mut dyn Runtime,
    copy: Transfer,
) -> Result<(Vec<f64>, Vec<f64>), BackendError> {
    const TURN: u32 = 3;
    let (mut harness, mut plain) = (Vec::new(), Vec::new());
    let started = Instant::now();
    while plain.len() < COPY_MAX_REPS
        && (plain.len() < COPY_MIN_REPS || started.elapsed() < COPY_BUDGET)
    {
        for rep in 0..=TURN {
            let t = backend.transfer(copy)?;
            if rep > 0 {
                harness.push(t.wall.0);
            }
        }
        let times = backend.plain_transfers(copy, TURN + 1)?;
        plain.extend(times.into_iter().skip(1));
    }
    Ok((harness, plain))
}

pub fn read(out: &Path) -> Result<Vec<ReplayRow>, ExportError> {
    crate::export::csv::read_rows_if_file(&out.join(REPLAY_CSV))
}

struct Replayed<'r> {
    opencl: &'r ReplayRow,
    cuda: &'r ReplayRow,
}

impl Replayed<'_> {
    /// perf(OpenCL) / perf(CUDA) of a step: time CUDA / time OpenCL.
    fn pr_plain(&self) -> f64 {
        self.cuda.plain_us / self.opencl.plain_us
    }
    fn pr_harness(&self) -> f64 {
        self.cuda.harness_us / self.opencl.harness_us
    }

    fn sentence(&self) -> String {
        let side = |r: &ReplayRow| {
            format!(
                "{} {:.2} µs as a plain program ({}), {:.2} µs through the harness ({:+.2} µs \
                 of its own)",
                r.api,
                r.plain_us,
                r.calls,
                r.harness_us,
                r.harness_us - r.plain_us
            )
        };
        format!(
            "replayed in one process: {}; {}: plain PR {:.3}, the harness's PR {:.3}",
            side(self.opencl),
            side(self.cuda),
            self.pr_plain(),
            self.pr_harness()
        )
    }
}

/// How far (in logarithm) the harness's replay may lie from the target's PR and still be said
/// to reproduce it: host-clock timings of a few microseconds move about this much from one run
/// to the next.
pub const REPRODUCES_WITHIN_LN: f64 = 0.15;

/// The causes a replay proves for a target with PR `pr`, with their shares of the gap (in
/// logarithms). The harness's replay must reproduce the gap (the same side of the band as `pr`,
/// within [`REPRODUCES_WITHIN_LN`]); the plain loop then puts it on the driver's calls where it
/// agrees with the harness (within [`AGREE_WITHIN`]), on the harness's own path where it is at
/// parity, and on both, in the measured proportions, where it holds part of the gap.
fn proven(r: &Replayed, pr: f64) -> Option<Vec<(Cause, f64)>> {
    let (harness, plain) = (r.pr_harness(), r.pr_plain());
    // -1 below the parity band, 1 above it, 0 in it.
    let outside = |x: f64| i8::from(x > stats::PARITY.1) - i8::from(x < stats::PARITY.0);
    let close = (harness.ln() - pr.ln()).abs() <= REPRODUCES_WITHIN_LN;
    if outside(harness) == 0 || outside(harness) != outside(pr) || !close {
        return None;
    }
    if (plain - harness).abs() <= AGREE_WITHIN {
        return Some(vec![(Cause::DriverCalls, 1.0)]);
    }
    if outside(plain) == 0 {
        return Some(vec![(Cause::HarnessPath, 1.0)]);
    }
    let driver_share = plain.ln() / harness.ln();
    (outside(plain) == outside(harness) && driver_share < 1.0).then(|| {
        vec![
            (Cause::DriverCalls, driver_share),
            (Cause::HarnessPath, 1.0 - driver_share),
        ]
    })
}

/// Adds each replayed target's replay to its verdict: a cause the replay proves becomes the
/// verdict of a target no rung explained (or one whose runtime cause it confirms), verified;
/// otherwise the replay is a sentence beside the verdict.
pub fn annotate(explanations: &mut [TargetExplanation], rows: &[ReplayRow]) {
    for t in explanations.iter_mut() {
        let side = |api: Api| {
            rows.iter()
                .find(|r| r.target == t.target && r.api == api.label())
        };
        let (Some(opencl), Some(cuda)) = (side(Api::OpenCl), side(Api::Cuda)) else {
            continue;
        };
        let r = Replayed { opencl, cuda };
        let Some(pr) = t.pr.map(|p| p.value) else {
            continue;
        };
        let sentence = r.sentence();
        // Whether the verdict leaves the cause open or names a runtime cause a replay can prove.
        let open = match &t.verdict {
            Verdict::CodeOnly | Verdict::Unexplained { .. } => true,
            Verdict::Explained(causes) => causes
                .iter()
                .all(|(c, _)| matches!(c, Cause::Runtime | Cause::LaunchAndWait)),
            _ => false,
        };
        match proven(&r, pr) {
            Some(causes) if open => {
                t.verdict = Verdict::Explained(causes);
                t.verified = true;
                t.replay = Some(sentence);
            }
            Some(causes) => {
                let named: Vec<String> = causes.iter().map(|(c, _)| c.slug()).collect();
                t.replay = Some(format!(
                    "{sentence}; it reproduces the target's PR {pr:.3} and would put the gap on \
                     {}, but the verdict is `{}`: a replay proves a cause only where no rung \
                     explained the gap or a rung put it on the runtime, so the verdict stands",
                    named.join("+"),
                    t.verdict.slug()
                ));
            }
            None => {
                t.replay = Some(format!(
                    "{sentence}; it proves no cause: the harness's replay does not reproduce \
                     the target's PR {pr:.3} (the same side of [0.98, 1.02], within 15%), or \
                     the plain loop holds more of the gap than the harness"
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(api: Api, harness_us: f64, plain_us: f64) -> ReplayRow {
        ReplayRow {
            target: "launch/1x1-spin".into(),
            api: api.label().into(),
            calls: "1 launch".into(),
            reps: 200,
            harness_us,
            plain_us,
            plain_ci_lo_us: plain_us,
            plain_ci_hi_us: plain_us,
        }
    }

    #[test]
    fn a_replay_that_reproduces_the_gap_in_the_plain_loop_proves_the_drivers_calls() {
        let (cl, cu) = (row(Api::OpenCl, 12.5, 12.2), row(Api::Cuda, 9.3, 9.3));
        let r = Replayed {
            opencl: &cl,
            cuda: &cu,
        };
        assert_eq!(proven(&r, 0.77), Some(vec![(Cause::DriverCalls, 1.0)]));
    }

    #[test]
    fn a_plain_loop_at_parity_puts_the_gap_on_the_harness() {
        let (cl, cu) = (row(Api::OpenCl, 12.5, 9.3), row(Api::Cuda, 9.3, 9.3));
        let r = Replayed {
            opencl: &cl,
            cuda: &cu,
        };
        assert_eq!(proven(&r, 0.75), Some(vec![(Cause::HarnessPath, 1.0)]));
    }

    #[test]
    fn a_plain_loop_holding_part_of_the_gap_splits_it_in_the_measured_proportions() {
        // Harness PR 0.7, plain PR 0.9: ln 0.9 / ln 0.7 of the gap is the driver's.
        let (cl, cu) = (row(Api::OpenCl, 10.0, 10.0), row(Api::Cuda, 7.0, 9.0));
        let r = Replayed {
            opencl: &cl,
            cuda: &cu,
        };
        let causes = proven(&r, 0.68).unwrap();
        assert_eq!(causes[0].0, Cause::DriverCalls);
        assert!((causes[0].1 - 0.9f64.ln() / 0.7f64.ln()).abs() < 1e-9);
        assert_eq!(causes[1].0, Cause::HarnessPath);
    }

    #[test]
    fn a_replay_that_misses_the_targets_pr_proves_nothing() {
        let (cl, cu) = (row(Api::OpenCl, 9.3, 9.3), row(Api::Cuda, 9.3, 9.3));
        let r = Replayed {
            opencl: &cl,
            cuda: &cu,
        };
        assert_eq!(proven(&r, 0.75), None);
    }

    #[test]
    fn a_replay_that_reproduces_a_gap_the_rungs_put_elsewhere_does_not_say_it_missed_the_pr() {
        let own = crate::explain::attribute::Interval {
            value: 0.77,
            lo: 0.76,
            hi: 0.78,
        };
        let mut t = [TargetExplanation {
            target: "launch/1x1-spin".into(),
            study: String::new(),
            family: String::new(),
            variant: String::new(),
            size: String::new(),
            device: String::new(),
            pr: Some(own),
            rungs: Vec::new(),
            verdict: Verdict::Explained(vec![(Cause::FrontEnd, 1.0)]),
            verified: false,
            machine_code: None,
            fix: None,
            replay: None,
            shapes: Vec::new(),
        }];
        // The harness's replay reproduces 0.77 and the plain loop agrees with it.
        let rows = [row(Api::OpenCl, 12.5, 12.2), row(Api::Cuda, 9.3, 9.3)];
        annotate(&mut t, &rows);
        assert_eq!(
            t[0].verdict,
            Verdict::Explained(vec![(Cause::FrontEnd, 1.0)])
        );
        assert!(!t[0].verified);
        let replay = t[0].replay.as_deref().unwrap();
        assert!(!replay.contains("does not reproduce"), "{replay}");
        assert!(replay.contains("front-end"), "{replay}");
    }
}
