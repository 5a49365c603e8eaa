//! `clvscu calibrate`: a runtime number (launch, wait, BFS level) is an API's cost only if the
//! harness adds nothing, or the same on both sides. An empty kernel runs, interleaved in chunks,
//! through the harness (host clock) and a plain loop of driver calls
//! ([`PlainLoops`](crate::backend::PlainLoops)): the difference is the harness's overhead on that
//! API; the launch PR of the two paths says whether it falls on one side of the ratio.

use crate::backend::{Arg, BackendError, BufferId, KernelId, LaunchShape, PlainLoop, Runtime};
use crate::families::exec::{self, ExecError};
use crate::kernels::KernelSources;
use crate::rows::{Api, TimerKind, WaitMode};
use crate::stats;

mod report;
pub use crate::rows::{
    CalibrationPr, CalibrationRow, CALIBRATION_CSV, CALIBRATION_PR_CSV, OVERHEAD_DIFF_LIMIT_US,
};
pub use report::{checks, headline, markdown, verdict, write, Check, REPORT_MD};

/// The empty kernel's source file and name (the `launch` family's).
const STEM: &str = "peak";
const KERNEL: &str = "launch_empty";

/// The checks of a calibrated harness (the one-at-a-time and back-to-back criteria).
pub const SINGLE_WITHIN_US: f64 = 0.5;
pub const PR_WITHIN: f64 = 0.05;
pub const BACK_TO_BACK_WITHIN: f64 = 0.10;

/// Bootstrap resamples for every CI (calibration, run and tuning rows alike).
pub const RESAMPLES: usize = 2000;

#[derive(Debug, Clone, PartialEq)]
pub struct CalibrationPlan {
    pub shapes: Vec<LaunchShape>,
    /// Launches per wait: 1 (one at a time) and larger (back to back).
    pub batches: Vec<u32>,
    pub waits: Vec<WaitMode>,
    /// Timed repetitions per path, API and case.
    pub reps: u32,
    /// Repetitions in a row before the other path (or API) takes its turn; the first of a
    /// turn is untimed, so that neither pays the switch.
    pub chunk: u32,
}

impl CalibrationPlan {
    /// Every case: 1 x 1 and a grid sweep up to about 1000 groups a unit of an H100, one at a
    /// time and 100 back to back (1000 at the largest grid, an 80 µs kernel both paths pay,
    /// took most of a minute to show what 100 do), every wait mode.
    pub fn full() -> Self {
        CalibrationPlan {
            shapes: [(1, 1), (132, 256), (8448, 256), (135_168, 256)]
                .map(|(g, l)| LaunchShape::linear(g, l))
                .to_vec(),
            batches: vec![1, 100],
            waits: WaitMode::ALL.to_vec(),
            reps: 400,
            chunk: 50,
        }
    }

    /// 1 x 1 only: what a run of a runtime study starts with, and what a CPU can afford.
    pub fn quick() -> Self {
        CalibrationPlan {
            shapes: vec![LaunchShape::linear(1, 1)],
            reps: 200,
            chunk: 25,
            ..Self::full()
        }
    }

    /// Repetitions of a case: fewer back to back (`batch` launches each), never below 10.
    fn reps_of(&self, batch: u32) -> u32 {
        if batch <= 1 {
            self.reps
        } else {
            (self.reps / 10).max(10)
        }
    }

    /// Every batch and wait of each shape in turn, and after 1 x 1 the level case.
    fn cases(&self) -> Vec<PlainLoop> {
        let mut cases = Vec::new();
        for &shape in &self.shapes {
            for &batch in &self.batches {
                for &wait in &self.waits {
                    cases.push(PlainLoop {
                        shape,
                        wait,
                        batch,
                        reps: self.reps_of(batch),
                        flag_copies: false,
                    });
                }
            }
            if shape == LaunchShape::linear(1, 1) {
                // The level case: one BFS level's calls (see `PlainLoop::flag_copies`). Its
                // rows give per-launch times, as every case's do; a level is `batch` of them.
                cases.push(PlainLoop {
                    shape,
                    wait: WaitMode::Finish,
                    batch: 2,
                    reps: self.reps_of(1),
                    flag_copies: true,
                });
            }
        }
        cases
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Calibration {
    pub rows: Vec<CalibrationRow>,
    pub prs: Vec<CalibrationPr>,
}

#[derive(Debug, thiserror::Error)]
pub enum CalibrationError {
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error(transparent)]
    Exec(#[from] ExecError),
    #[error("{api}: the empty kernel stored {got} where {want} was expected; nothing was timed")]
    Verify { api: Api, got: f32, want: f32 },
}

/// The empty kernel built, with its two buffers, on one backend.
struct Probe {
    kernel: KernelId,
    args: [Arg; 3],
    buffers: [BufferId; 2],
}

/// The value the empty kernel stores (its `n`), so that a launch that ran is seen to have run.
const MARK: u32 = 7;

impl Probe {
    fn build(
        backend: &mut dyn Runtime,
        sources: &KernelSources,
        local: u32,
    ) -> Result<Self, CalibrationError> {
        // The defines every kernel of the launch family is built with, as a study's side.
        let side = exec::SideConfig::launch_only(LaunchShape::linear(1, local));
        let program = exec::compile(backend, sources, STEM, &side, None)?;
        let kernel = backend.kernel(program, KERNEL)?;
        let input = backend.alloc(1)?;
        let out = backend.alloc(1)?;
        backend.upload(input, &[0.0])?;
        Ok(Probe {
            kernel,
            args: [Arg::Buffer(input), Arg::Buffer(out), Arg::U32(MARK)],
            buffers: [input, out],
        })
    }

    /// One launch, checked against the mark: a probe that does not run is never timed.
    fn verify(
        &self,
        backend: &mut dyn Runtime,
        shape: LaunchShape,
    ) -> Result<(), CalibrationError> {
        backend.upload(self.buffers[1], &[-1.0])?;
        backend.set_timer(TimerKind::WallClock)?;
        backend.set_wait_mode(WaitMode::Finish)?;
        backend.launch(self.kernel, shape, &self.args)?;
        let mut got = [0.0f32];
        backend.download(self.buffers[1], &mut got)?;
        let want = MARK as f32;
        if got[0] != want {
            return Err(CalibrationError::Verify {
                api: backend.api(),
                got: got[0],
                want,
            });
        }
        Ok(())
    }

    fn release(self, backend: &mut dyn Runtime) {
        for b in self.buffers {
            let _ = backend.free(b);
        }
    }
}

/// Samples of one API in one case, per launch, in seconds.
#[derive(Default)]
struct Samples {
    harness: Vec<f64>,
    plain: Vec<f64>,
    events: u64,
    launches: u64,
}

/// One turn of `n` repetitions through the harness path, the first untimed; the level case
/// (`plan.flag_copies`) makes a BFS level's calls: `upload`, `batch` launches, `download`.
fn harness_turn(
    backend: &mut dyn Runtime,
    probe: &Probe,
    plan: PlainLoop,
    n: u32,
    into: &mut Samples,
) -> Result<(), CalibrationError> {
    backend.set_timer(TimerKind::WallClock)?;
    backend.set_wait_mode(plan.wait)?;
    // The untimed first repetition (the level case's is the first of its loop).
    if !plan.flag_copies {
        backend.launch_repeated(probe.kernel, plan.shape, &probe.args, plan.batch)?;
    }
    let before = backend.calls();
    if plan.flag_copies {
        let flag = probe.buffers[0];
        for rep in 0..=n {
            let t0 = std::time::Instant::now();
            backend.upload(flag, &[0.0])?;
            for _ in 0..plan.batch {
                backend.launch(probe.kernel, plan.shape, &probe.args)?;
            }
            let mut word = [0.0f32];
            backend.download(flag, &mut word)?;
            if rep > 0 {
                into.harness
                    .push(t0.elapsed().as_secs_f64() / f64::from(plan.batch));
            }
        }
    } else {
        for _ in 0..n {
            let t = backend.launch_repeated(probe.kernel, plan.shape, &probe.args, plan.batch)?;
            into.harness.push(t.wall.0 / f64::from(plan.batch));
        }
    }
    let after = backend.calls();
    into.events += after.events - before.events;
    into.launches += after.launches - before.launches;
    Ok(())
}

/// Measures one case on every backend, the paths and APIs taking turns.
fn measure_case(
    backends: &mut [&mut dyn Runtime],
    probes: &[Probe],
    plan: PlainLoop,
    chunk: u32,
) -> Result<Vec<Samples>, CalibrationError> {
    let mut samples: Vec<Samples> = backends.iter().map(|_| Samples::default()).collect();
    for (b, p) in backends.iter_mut().zip(probes) {
        p.verify(&mut **b, plan.shape)?;
    }
    // At least four turns each, so a drift (clocks ramping, a queue filling) hits both paths alike.
    let chunk = chunk.min(plan.reps / 4).max(1);
    let mut done = 0;
    while done < plan.reps {
        let n = chunk.min(plan.reps - done);
        for ((b, p), s) in backends.iter_mut().zip(probes).zip(samples.iter_mut()) {
            harness_turn(&mut **b, p, plan, n, s)?;
            // The plain loop's turn, its first repetition untimed.
            let plain = PlainLoop {
                reps: n + 1,
                ..plan
            };
            let times = b.plain_launches(p.kernel, &p.args, plain)?;
            s.plain
                .extend(times.iter().skip(1).map(|t| t / f64::from(plan.batch)));
        }
        done += n;
    }
    Ok(samples)
}

fn us(x: f64) -> f64 {
    x * 1e6
}

/// The row of one API in one case; the level case's has the wait [`LEVEL_WAIT`].
fn row_of(backend: &dyn Runtime, plan: PlainLoop, s: &Samples) -> Option<CalibrationRow> {
    let h = stats::summarize(&s.harness, RESAMPLES, 1)?;
    let p = stats::summarize(&s.plain, RESAMPLES, 2)?;
    let info = backend.info();
    let api = backend.api();
    let (wait, wait_calls) = match (plan.flag_copies, api) {
        (false, _) => (plan.wait.label(), plan.wait.how(api)),
        (true, Api::Cuda) => (
            LEVEL_WAIT,
            "cuMemcpyHtoDAsync, 2 cuLaunchKernel, cuMemcpyDtoHAsync, cuStreamSynchronize",
        ),
        (true, Api::OpenCl) => (
            LEVEL_WAIT,
            "clEnqueueWriteBuffer (blocking), 2 clEnqueueNDRangeKernel, \
             clEnqueueReadBuffer (blocking)",
        ),
    };
    Some(CalibrationRow {
        api: api.label().into(),
        device: info.name.clone(),
        driver: info.driver_version.clone(),
        shape: plan.shape.describe(),
        batch: plan.batch,
        wait: wait.into(),
        wait_calls: wait_calls.into(),
        reps: s.harness.len(),
        harness_us: us(h.median),
        harness_ci_lo_us: us(h.ci_lo),
        harness_ci_hi_us: us(h.ci_hi),
        plain_us: us(p.median),
        plain_ci_lo_us: us(p.ci_lo),
        plain_ci_hi_us: us(p.ci_hi),
        overhead_us: us(h.median - p.median),
        harness_events_per_launch: s.events as f64 / s.launches.max(1) as f64,
    })
}

/// The PR of one case, where one row is OpenCL's and one CUDA's.
fn pr_of(rows: &[CalibrationRow]) -> Option<CalibrationPr> {
    let side = |api: Api| rows.iter().find(|r| r.api == api.label());
    let (cl, cu) = (side(Api::OpenCl)?, side(Api::Cuda)?);
    let diff = (cl.overhead_us - cu.overhead_us).abs();
    Some(CalibrationPr {
        shape: cl.shape.clone(),
        batch: cl.batch,
        wait: cl.wait.clone(),
        pr_harness: cu.harness_us / cl.harness_us,
        pr_plain: cu.plain_us / cl.plain_us,
        overhead_opencl_us: cl.overhead_us,
        overhead_cuda_us: cu.overhead_us,
        flagged: diff > OVERHEAD_DIFF_LIMIT_US,
    })
}

/// Runs `plan` on every backend (one or two) and summarises it.
pub fn calibrate(
    backends: &mut [&mut dyn Runtime],
    sources: &KernelSources,
    plan: &CalibrationPlan,
) -> Result<Calibration, CalibrationError> {
    measure_cases(backends, sources, &plan.cases(), plan.chunk)
}

/// Each of `cases` on every backend, as [`calibrate`] measures its own: `explain`'s replay of a
/// target's launch sequence (shape, wait, launches per wait) as a plain program.
pub fn measure_cases(
    backends: &mut [&mut dyn Runtime],
    sources: &KernelSources,
    cases: &[PlainLoop],
    chunk: u32,
) -> Result<Calibration, CalibrationError> {
    let mut out = Calibration::default();
    if cases.is_empty() {
        return Ok(out);
    }
    // One probe per work-group size on each backend, built before anything runs: the warm-up
    // and the cases share them.
    let mut probes: Vec<(u32, Vec<Probe>)> = Vec::new();
    let result = build_probes(backends, sources, cases, &mut probes).and_then(|()| {
        warm_up(backends, &probes[0])?;
        for &case in cases {
            let (_, built) = (probes.iter())
                .find(|(l, _)| *l == case.shape.local)
                .expect("every case's work-group size has its probes, built above");
            let samples = measure_case(backends, built, case, chunk)?;
            let rows: Vec<CalibrationRow> = backends
                .iter()
                .zip(&samples)
                .filter_map(|(b, s)| row_of(&**b, case, s))
                .collect();
            out.prs.extend(pr_of(&rows));
            out.rows.extend(rows);
        }
        Ok(())
    });
    for (_, built) in probes {
        for (b, p) in backends.iter_mut().zip(built) {
            p.release(&mut **b);
        }
    }
    result?;
    Ok(out)
}

/// Builds into `probes` one probe per work-group size of `cases` on every backend, in the
/// backends' order. On a failure what was built stays there, so that each probe is released
/// through the backend that built it.
fn build_probes(
    backends: &mut [&mut dyn Runtime],
    sources: &KernelSources,
    cases: &[PlainLoop],
    probes: &mut Vec<(u32, Vec<Probe>)>,
) -> Result<(), CalibrationError> {
    for case in cases {
        let local = case.shape.local;
        if probes.iter().any(|(l, _)| *l == local) {
            continue;
        }
        let mut built = Vec::new();
        let failed = backends.iter_mut().find_map(|b| {
            let probe = Probe::build(&mut **b, sources, local);
            probe.map(|p| built.push(p)).err()
        });
        probes.push((local, built));
        if let Some(e) = failed {
            return Err(e);
        }
    }
    Ok(())
}

/// Launches `local`'s probes (one group) for a while first, so an idle GPU's clocks have
/// ramped up for the first case too.
fn warm_up(
    backends: &mut [&mut dyn Runtime],
    (local, probes): &(u32, Vec<Probe>),
) -> Result<(), CalibrationError> {
    const WARM: std::time::Duration = std::time::Duration::from_millis(300);
    let plan = PlainLoop {
        shape: LaunchShape::linear(1, *local),
        wait: WaitMode::Finish,
        batch: 100,
        reps: 10,
        flag_copies: false,
    };
    for (b, probe) in backends.iter_mut().zip(probes) {
        let started = std::time::Instant::now();
        // At most 50 rounds of 1000 launches: about 0.2 s on a GPU, nothing on a fake.
        let mut rounds = 0;
        while rounds < 50 && started.elapsed() < WARM {
            b.plain_launches(probe.kernel, &probe.args, plan)?;
            rounds += 1;
        }
    }
    Ok(())
}

/// The `wait` of the level case's rows: one BFS level's calls.
pub const LEVEL_WAIT: &str = "level";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::fake::{FakeBackend, FakeScript};

    fn fakes(opencl_overhead: f64) -> (FakeBackend, FakeBackend) {
        let script = |harness: f64| FakeScript {
            harness_overhead_seconds: harness,
            jitter: 0.0,
            ..FakeScript::default()
        };
        (
            FakeBackend::new(
                Api::OpenCl,
                script(opencl_overhead),
                crate::families::emulator(),
            ),
            FakeBackend::new(Api::Cuda, script(0.0), crate::families::emulator()),
        )
    }

    fn small() -> CalibrationPlan {
        CalibrationPlan {
            reps: 20,
            chunk: 5,
            ..CalibrationPlan::quick()
        }
    }

    fn run(opencl_overhead: f64) -> Calibration {
        let (mut cl, mut cu) = fakes(opencl_overhead);
        let mut backends: Vec<&mut dyn Runtime> = vec![&mut cl, &mut cu];
        calibrate(&mut backends, &KernelSources::embedded(), &small()).unwrap()
    }

    #[test]
    fn a_harness_that_adds_nothing_passes_every_check() {
        let c = run(0.0);
        // Every wait mode one at a time and back to back on both sides, and the level case.
        assert_eq!(c.rows.len(), 2 * WaitMode::ALL.len() * 2 + 2);
        assert_eq!(c.prs.len(), WaitMode::ALL.len() * 2 + 1);
        let checks = checks(&c);
        assert!(!checks.is_empty());
        assert!(checks.iter().all(|k| k.passed), "{checks:?}");
        let h = headline(&c).unwrap();
        assert!(!h.flagged && (h.pr_harness - 1.0).abs() < 1e-9, "{h:?}");
    }

    #[test]
    fn overhead_on_one_side_is_measured_flagged_and_fails_the_checks() {
        // 2 µs of the harness's own on OpenCL's side only.
        let c = run(2e-6);
        let h = headline(&c).unwrap();
        assert!(h.flagged, "{h:?}");
        assert!((h.overhead_opencl_us - 2.0).abs() < 1e-6, "{h:?}");
        assert!(h.overhead_cuda_us.abs() < 1e-6, "{h:?}");
        // The harness's PR blames OpenCL; the plain loops' does not.
        assert!(
            h.pr_harness < 0.9 && (h.pr_plain - 1.0).abs() < 1e-9,
            "{h:?}"
        );
        let failed: Vec<_> = checks(&c).into_iter().filter(|k| !k.passed).collect();
        assert!(
            failed.iter().any(|k| k.what.starts_with("OpenCL 1x1 x1")),
            "{failed:?}"
        );
        assert!(
            failed.iter().any(|k| k.what.starts_with("launch PR")),
            "{failed:?}"
        );
        assert!(markdown(&c).contains("overheads differ by more than 0.3 µs"));
    }

    /// The warm-up runs on the probes the cases share: a backend builds one program per
    /// work-group size of the cases and none besides.
    #[test]
    fn the_warm_up_builds_no_probe_of_its_own() {
        let (mut cl, mut cu) = fakes(0.0);
        let mut backends: Vec<&mut dyn Runtime> = vec![&mut cl, &mut cu];
        let case = PlainLoop {
            shape: LaunchShape::linear(4, 64),
            wait: WaitMode::Finish,
            batch: 5,
            reps: 10,
            flag_copies: false,
        };
        let c = measure_cases(&mut backends, &KernelSources::embedded(), &[case, case], 5).unwrap();
        assert_eq!(c.rows.len(), 4);
        for side in [&cl, &cu] {
            assert_eq!(side.builds().in_compile, 1, "{:?}", side.builds());
        }
    }

    #[test]
    fn a_probe_that_does_not_store_its_mark_is_never_timed() {
        let (mut cl, mut cu) = fakes(0.0);
        let mut cl_wrong = FakeBackend::new(
            Api::OpenCl,
            FakeScript {
                wrong_results: vec![KERNEL.into()],
                ..FakeScript::default()
            },
            crate::families::emulator(),
        );
        let mut backends: Vec<&mut dyn Runtime> = vec![&mut cl_wrong, &mut cu];
        let e = calibrate(&mut backends, &KernelSources::embedded(), &small()).unwrap_err();
        assert!(matches!(e, CalibrationError::Verify { .. }), "{e}");
        let mut backends: Vec<&mut dyn Runtime> = vec![&mut cl];
        assert!(calibrate(&mut backends, &KernelSources::embedded(), &small()).is_ok());
    }
}
