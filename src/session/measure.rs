//! Measuring one comparison: prepare and verify each side, then warm up and time the sides
//! that verified, interleaved A, B, A, B... so that clock and thermal drift hit both alike.
//! The result is typed per side: its samples, its verification error, or why it failed.

use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::backend::{BackendError, KernelResources, Runtime, Timing};
use crate::families::exec::{self, ExecError, Inputs, Prepared, SideConfig};
use crate::families::matrix::MatrixSource;
use crate::families::{FamilyId, Size, Variant};
use crate::kernels::KernelSources;
use crate::rows::{Api, ProgramSource, Side, Status, TimerKind};
use crate::study::Resolved;

use super::adaptive::Rule;
use super::timings::PhaseTimes;
use super::watchdog::{expected_limit, Watchdog, Watched, FIRST_LAUNCH_LIMIT, MIN_LIMIT};

/// One side of a comparison, ready to run.
pub struct SidePlan<'b> {
    pub side: Side,
    pub backend: &'b mut dyn Runtime,
    pub settings: Resolved,
    pub config: SideConfig,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub status: Status,
    pub message: String,
}

impl Failure {
    fn of(e: &ExecError) -> Failure {
        Failure {
            status: if e.is_build() {
                Status::BuildFailed
            } else {
                Status::LaunchFailed
            },
            message: e.to_string(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SideRun {
    /// The largest error against the reference; NaN when the side never got that far.
    pub max_error: f64,
    /// Each timed repetition, in order.
    pub samples: Vec<Timing>,
    pub failure: Option<Failure>,
    /// A verified run's levels, for a level-by-level family ([`crate::families::Family::levels`]).
    pub levels: Option<u64>,
    /// The built kernel's work-group limit, registers, spill and shared memory as the API
    /// reports them (see [`crate::rows::MeasurementRow::kernel_work_group_limit`]).
    pub resources: Option<KernelResources>,
}

impl SideRun {
    fn failed(max_error: f64, failure: Failure) -> SideRun {
        SideRun {
            max_error,
            samples: Vec::new(),
            failure: Some(failure),
            levels: None,
            resources: None,
        }
    }
}

/// A set of inputs: family, [input key](crate::families::Family::input_key), size, seed, matrix.
type InputKey = (FamilyId, &'static str, Size, u64, String);

/// The recent input sets, costly at GPU sizes (2^28 floats and their f64 reference) and often
/// wanted again, not always in a row (BFS's kernel and level sweeps, SpMV's memory-space
/// variants): least recently used out past a byte budget, the last two (two sides) always kept.
pub struct InputCache {
    pub(super) entries: Vec<(InputKey, Rc<Inputs>)>,
    budget_bytes: usize,
}

impl Default for InputCache {
    /// A budget of a quarter of the host memory available at the start, at most 16 GiB (a few
    /// GPU-sized sets, never a share that pushes the host to swap).
    fn default() -> Self {
        const CAP: u64 = 16 << 30;
        let bytes = crate::host_memory::available_host_bytes()
            .map(|t| (t / 4).min(CAP))
            .unwrap_or(CAP / 4);
        InputCache::with_budget(usize::try_from(bytes).unwrap_or(usize::MAX))
    }
}

impl InputCache {
    pub fn with_budget(budget_bytes: usize) -> Self {
        InputCache {
            entries: Vec::new(),
            budget_bytes,
        }
    }

    pub fn get(
        &mut self,
        variant: &'static Variant,
        size: Size,
        seed: u64,
        matrix: &MatrixSource,
    ) -> Rc<Inputs> {
        let key = (
            variant.family,
            crate::families::get(variant.family).input_key(variant),
            size,
            seed,
            matrix.name(),
        );
        // Most recently used last: what is evicted is what went longest unused.
        let v = match self.entries.iter().position(|(k, _)| *k == key) {
            Some(i) => self.entries.remove(i).1,
            None => Rc::new(Inputs::of_variant(variant, size, seed, matrix)),
        };
        self.entries.push((key, v.clone()));
        self.evict();
        v
    }

    /// Drops the least recently used sets past the budget, but never the last two.
    fn evict(&mut self) {
        while self.entries.len() > 2 {
            let held: usize = self.entries.iter().map(|(_, v)| v.bytes()).sum();
            if held <= self.budget_bytes {
                break;
            }
            self.entries.remove(0);
        }
    }
}

#[derive(Clone, Copy)]
pub struct Guard<'a> {
    pub watchdog: Option<&'a Watchdog>,
    /// `--timeout`: the limit of every launch, over the study's.
    pub timeout_s: Option<f64>,
    /// The comparison, for the watchdog's message (shared, so arming allocates nothing).
    pub comparison: &'a std::sync::Arc<str>,
}

impl Guard<'_> {
    fn watch<T>(
        &self,
        api: Api,
        what: &'static str,
        limit: Duration,
        launch: impl FnOnce() -> T,
    ) -> T {
        let Some(dog) = self.watchdog else {
            return launch();
        };
        let watched = Watched {
            phase: what,
            comparison: self.comparison.clone(),
            api,
        };
        dog.arm(watched, limit);
        let out = launch();
        dog.disarm();
        out
    }
}

/// The one measuring loop (`run`'s and `tune`'s): every side of a comparison; `None` if stopped.
pub fn measure_comparison(
    sides: &mut [SidePlan],
    inputs: &[&Inputs],
    sources: &KernelSources,
    interrupted: &AtomicBool,
    guard: Guard,
    times: &mut PhaseTimes,
) -> Option<Vec<SideRun>> {
    let n = sides.len();
    let mut prepared: Vec<Option<Prepared>> = (0..n).map(|_| None).collect();
    let mut runs: Vec<Option<SideRun>> = (0..n).map(|_| None).collect();
    let mut limits = vec![MIN_LIMIT; n];
    // A side that runs the other side's program is prepared after it.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| sides[i].settings.program == ProgramSource::Other);
    for i in order {
        let foreign = match sides[i].settings.program {
            ProgramSource::Own => Ok(None),
            ProgramSource::Other => other_program(sides, &prepared, &runs, i).map(Some),
        };
        let (p, run, limit) = match foreign {
            Ok(text) => prepare_and_verify(&mut sides[i], inputs[i], sources, guard, text, times),
            Err(e) => not_built(&e),
        };
        prepared[i] = p;
        runs[i] = Some(run);
        limits[i] = limit;
    }
    let mut runs: Vec<SideRun> = runs.into_iter().flatten().collect();
    times.add(
        |t| &mut t.warmup,
        || warm_up(sides, &prepared, &mut runs, guard, &limits),
    );
    let timed = times.add(
        |t| &mut t.timed,
        || time_turns(sides, &prepared, &mut runs, interrupted, guard, &limits),
    );
    for (side, p) in sides.iter_mut().zip(prepared) {
        if let Some(p) = p {
            exec::release(side.backend, p);
        }
    }
    timed.then_some(runs)
}

/// The program text the other side compiled, for side `i` with `program = "other"`, or why
/// there is none.
fn other_program(
    sides: &[SidePlan],
    prepared: &[Option<Prepared>],
    runs: &[Option<SideRun>],
    i: usize,
) -> Result<String, ExecError> {
    let api = sides[i].backend.api();
    let missing = |why: String| {
        ExecError::Backend(BackendError::Unsupported {
            api,
            what: format!("run the other side's program (program = \"other\"): {why}"),
        })
    };
    let j = (0..sides.len())
        .find(|&j| j != i)
        .ok_or_else(|| missing("the comparison has no other side".into()))?;
    let other = sides[j].backend.api();
    match &prepared[j] {
        Some(p) => p.program_text.clone().ok_or_else(|| {
            missing(format!(
                "{other}'s compiler gave no program text for this device"
            ))
        }),
        // A side built but not verified is released, as one that did not build.
        None => Err(missing(
            match runs[j].as_ref().and_then(|r| r.failure.as_ref()) {
                Some(f) if f.status != Status::BuildFailed => {
                    format!("{other}'s side failed ({})", f.status)
                }
                _ => format!("{other}'s side did not build"),
            },
        )),
    }
}

/// A side that stopped before it was built: nothing to release, no error, the shortest limit.
fn not_built(e: &ExecError) -> (Option<Prepared>, SideRun, Duration) {
    (None, SideRun::failed(f64::NAN, Failure::of(e)), MIN_LIMIT)
}

/// Builds the side and checks its result, with the watchdog limit of its later launches; a
/// side that fails either step is released here and never timed.
fn prepare_and_verify(
    side: &mut SidePlan,
    inputs: &Inputs,
    sources: &KernelSources,
    guard: Guard,
    foreign: Option<String>,
    times: &mut PhaseTimes,
) -> (Option<Prepared>, SideRun, Duration) {
    let variant = side.settings.variant;
    let fixed = guard
        .timeout_s
        .or(side.settings.timeout_s)
        .map(Duration::from_secs_f64);
    if let Err(e) = side.backend.set_wait_mode(side.settings.wait) {
        return not_built(&ExecError::Backend(e));
    }
    let config = &side.config;
    let prepared = times.add(
        |t| &mut t.build,
        || {
            exec::prepare_with_program(
                side.backend,
                sources,
                variant,
                inputs,
                config,
                foreign.as_deref(),
            )
        },
    );
    let p = match prepared {
        Ok(p) => p,
        Err(e) => return not_built(&e),
    };
    let reported = p.kernel.and_then(|k| side.backend.kernel_resources(k).ok());
    let started = Instant::now();
    let limit = fixed.unwrap_or(FIRST_LAUNCH_LIMIT);
    let verified = times.add(
        |t| &mut t.verify,
        || {
            guard.watch(side.backend.api(), "verification", limit, || {
                exec::verify(side.backend, &p, inputs)
            })
        },
    );
    let later = fixed.unwrap_or_else(|| expected_limit(started.elapsed()));
    let failure = match verified {
        Ok(v) if v.ok => {
            let run = SideRun {
                max_error: v.max_error,
                samples: Vec::new(),
                failure: None,
                levels: crate::families::get(side.settings.family).levels(inputs),
                resources: reported,
            };
            return (Some(p), run, later);
        }
        Ok(v) => SideRun::failed(
            v.max_error,
            Failure {
                status: Status::VerifyFailed,
                message: format!(
                    "max error {:.3e} exceeds tolerance {:.3e} ({} outputs checked)",
                    v.max_error, v.tolerance, v.checked
                ),
            },
        ),
        Err(e) => SideRun::failed(f64::NAN, Failure::of(&e)),
    };
    exec::release(side.backend, p);
    let failure = SideRun {
        resources: reported,
        ..failure
    };
    (None, failure, later)
}

/// Runs once in the side's wait mode and timer, set each time: two sides may share a backend.
fn run_waiting(
    backend: &mut dyn Runtime,
    p: &Prepared,
    (wait, timer): (crate::rows::WaitMode, TimerKind),
) -> Result<crate::backend::Timing, ExecError> {
    backend.set_wait_mode(wait)?;
    backend.set_timer(timer)?;
    exec::run(backend, p)
}

/// Asks the rule with the two sides' times so far; a failed side ends the timing.
fn wants_more(rule: &mut Rule, sides: &[SidePlan], runs: &[SideRun]) -> bool {
    if runs.iter().any(|r| r.failure.is_some()) {
        return false;
    }
    let timed: Vec<Vec<f64>> = sides.iter().zip(runs).map(|(p, r)| times(p, r)).collect();
    let work: Vec<f64> = sides.iter().map(side_work).collect();
    match (timed.as_slice(), work.as_slice()) {
        ([a, b], [wa, wb]) => rule.wants_more([a, b], [*wa, *wb]),
        _ => false,
    }
}

/// Each side's untimed `warmup` runs, interleaved.
fn warm_up(
    sides: &mut [SidePlan],
    prepared: &[Option<Prepared>],
    runs: &mut [SideRun],
    guard: Guard,
    limits: &[Duration],
) {
    let warmup = sides.iter().map(|s| s.settings.warmup).max().unwrap_or(0);
    for w in 0..warmup {
        for (i, side) in sides.iter_mut().enumerate() {
            let due = w < side.settings.warmup && runs[i].failure.is_none();
            if let (Some(p), true) = (&prepared[i], due) {
                let api = side.backend.api();
                let wait = (side.settings.wait, side.settings.timer);
                let warm = guard.watch(api, "warm-up", limits[i], || {
                    run_waiting(side.backend, p, wait)
                });
                if let Err(e) = warm {
                    runs[i].failure = Some(Failure::of(&e));
                }
            }
        }
    }
}

/// The timed turns (false when interrupted): turns of `turn` repetitions (after an untimed one
/// when `turn` > 1 and the other side went before) to each side's minimum (`reps`, `min_time`),
/// then while the [`super::adaptive`] rule wants more; a failed launch marks its side failed.
fn time_turns(
    sides: &mut [SidePlan],
    prepared: &[Option<Prepared>],
    runs: &mut [SideRun],
    interrupted: &AtomicBool,
    guard: Guard,
    limits: &[Duration],
) -> bool {
    let mut spent = vec![0.0f64; sides.len()];
    let started = Instant::now();
    let mut last_side = None;
    // Only a comparison whose two sides both verified has a stopping rule.
    let asked: Vec<(f64, f64)> = sides
        .iter()
        .map(|s| (s.settings.target_ci, s.settings.max_time_s))
        .collect();
    let mut rule = Rule::of(&asked).filter(|_| prepared.iter().all(Option::is_some));
    let mut extending = false;
    loop {
        if interrupted.load(Ordering::SeqCst) {
            return false;
        }
        let mut any = false;
        for (i, side) in sides.iter_mut().enumerate() {
            let Some(p) = &prepared[i] else { continue };
            let s = &side.settings;
            let needs_more = |run: &SideRun, spent: f64| {
                let count = run.samples.len() as u32;
                run.failure.is_none()
                    && count < s.max_reps
                    && (extending || count < s.reps || spent < s.min_time_s)
            };
            if !needs_more(&runs[i], spent[i]) {
                continue;
            }
            any = true;
            let api = side.backend.api();
            let wait = (s.wait, s.timer);
            let mut timed_run = || {
                guard.watch(api, "timed run", limits[i], || {
                    run_waiting(side.backend, p, wait)
                })
            };
            // The first run of a turn absorbs the GPU's switch between the two
            // APIs' contexts, which the host clock would otherwise see (see WALL_CLOCK_TURN).
            let switched = last_side != Some(i);
            last_side = Some(i);
            if s.turn > 1 && switched {
                if let Err(e) = timed_run() {
                    runs[i].failure = Some(Failure::of(&e));
                    continue;
                }
            }
            for _ in 0..s.turn {
                if !needs_more(&runs[i], spent[i]) {
                    break;
                }
                match timed_run() {
                    Ok(t) => {
                        // `min_time` is host time spent timing (a kernel of microseconds
                        // among host work, as BFS's level read-backs, would otherwise repeat
                        // for many seconds); a sample of back-to-back launches counts each.
                        spent[i] += t.wall.0 * f64::from(exec::launches_per_sample(p));
                        runs[i].samples.push(t);
                    }
                    Err(e) => runs[i].failure = Some(Failure::of(&e)),
                }
            }
        }
        if started.elapsed().as_secs_f64() > crate::study::MAX_TIMING_S {
            break;
        }
        if any && !extending {
            continue;
        }
        // Minimums met: the rule decides on more (none can run once all failed or hit `max_reps`).
        if !any && extending {
            break;
        }
        let more = rule.as_mut().is_some_and(|r| wants_more(r, sides, runs));
        if !more {
            break;
        }
        extending = true;
    }
    true
}

pub fn times(plan: &SidePlan, run: &SideRun) -> Vec<f64> {
    run.samples
        .iter()
        .filter_map(|s| Some(s.get(plan.settings.timer)?.0))
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect()
}

/// The work a side's metric counts per run, as its row will record it.
pub fn side_work(plan: &SidePlan) -> f64 {
    let s = &plan.settings;
    let (bytes, flops) = s
        .family
        .family()
        .work(s.variant.name, s.size, plan.config.shape.global());
    s.family.metric().work(bytes, flops)
}
