//! The tuning loop: each API searched by its own strategy, one evaluation of OpenCL then one
//! of CUDA in turn (so drift hits both alike), every configuration looked up in the cache
//! first. A configuration is measured by the session's own step (`session::measure`), so a
//! tuned time and a run's time come from the same loop.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use super::cache::{Cache, Outcome, Scope};
use super::space::{Config, Space};
use super::strategy;
use super::TuneError;
use crate::backend::{DeviceInfo, Runtime};
use crate::fairness::Flags;
use crate::families::exec::Inputs;
use crate::families::matrix::MatrixSource;
use crate::families::{FamilyId, Metric, Variant};
use crate::rows::StrategyKind;
use crate::rows::{Api, TimerKind, WaitMode};
use crate::rows::{IndexWidth, ProgramSource};
use crate::rows::{Side as RowSide, Status};
use crate::session::measure::{measure_comparison, Guard, SidePlan, SideRun};
use crate::session::timings::PhaseTimes;
use crate::study::Resolved;

/// The seed of the inputs every configuration is verified and timed on.
pub const INPUT_SEED: u64 = 1;

/// How one configuration is measured: cheap, because a search evaluates hundreds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EvalOptions {
    pub warmup: u32,
    pub reps: u32,
}

impl Default for EvalOptions {
    fn default() -> Self {
        EvalOptions { warmup: 2, reps: 7 }
    }
}

/// When a search stops: after this many evaluations asked for, or seconds spent.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Budget {
    pub evaluations: Option<usize>,
    pub seconds: Option<f64>,
}

pub struct Side<'b> {
    pub backend: &'b mut dyn Runtime,
    pub scope: Scope,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    pub api: Api,
    pub strategy: StrategyKind,
    /// 1 for the first evaluation this strategy asked for on this API.
    pub n: usize,
    pub point: usize,
    pub config: Config,
    pub outcome: Outcome,
    /// Measured by an earlier search or run.
    pub cached: bool,
    /// The metric (higher is better) at the median time; `None` when it failed.
    pub score: Option<f64>,
}

/// The family's work over the median time.
pub fn score_of(space: &Space, config: &Config, times: &[f64]) -> Option<f64> {
    let t = crate::stats::median(times)?;
    let items = u64::from(config.groups) * u64::from(config.local);
    let family = space.def.family.family();
    let (bytes, flops) = family.work(space.def.variant, space.size, items);
    let work = space.def.family.metric().work(bytes, flops);
    (t > 0.0).then(|| work / t)
}

/// No device-event time of a kernel launch is shorter than this: a time below it is a broken
/// timer or an edited cache, not a fast kernel.
pub const MIN_EVENT_S: f64 = 1e-7;
/// A measured bandwidth may pass the memory's theoretical peak (a small problem stays in
/// cache), but never by this factor.
pub const PEAK_FACTOR: f64 = 10.0;
/// Without a known peak: more than any device's on-chip bandwidth (GB/s) or arithmetic
/// rate (GFLOP/s).
pub const MAX_GBS: f64 = 1e5;
pub const MAX_GFLOPS: f64 = 1e7;

/// Why `times` cannot be true of `config` on `device`: the first time that is not positive
/// and finite or is shorter than [`MIN_EVENT_S`], or a metric above the device's bound.
pub fn implausible(
    space: &Space,
    config: &Config,
    times: &[f64],
    device: &DeviceInfo,
) -> Option<String> {
    if let Some(t) = times.iter().find(|t| !t.is_finite() || **t < MIN_EVENT_S) {
        return Some(format!(
            "a time of {t:e} s: no launch is shorter than {MIN_EVENT_S:e} s"
        ));
    }
    let score = score_of(space, config, times)?;
    let metric = space.def.family.metric();
    let bound = match metric {
        Metric::Bandwidth => device
            .theoretical_peak_gbs()
            .map_or(MAX_GBS, |p| p * PEAK_FACTOR),
        Metric::Flops => MAX_GFLOPS,
        _ => f64::INFINITY,
    };
    (score > bound).then(|| {
        format!(
            "{score:.0} {} is above what {} can reach ({bound:.0} {})",
            metric.unit(),
            device.name,
            metric.unit()
        )
    })
}

pub struct Tuner<'a> {
    pub plan: &'a super::TunePlan<'a>,
    pub space: &'a Space,
    pub inputs: &'a Inputs,
}

impl Tuner<'_> {
    /// The outcome of `point` on `side`: from the cache, or measured and then cached. `None`
    /// when Ctrl-C stopped the measurement (nothing is cached).
    pub fn outcome(
        &self,
        side: &mut Side,
        cache: &mut Cache,
        point: usize,
    ) -> Result<Option<(Outcome, bool)>, TuneError> {
        let config = self.space.config(point);
        let key = config.text();
        let (outcome, cached) = match cache.get(&side.scope, &key) {
            Some(o) => (o.clone(), true),
            None => {
                let Some(o) = self.measure(side.backend, &config) else {
                    return Ok(None);
                };
                cache.put(&side.scope, &key, o.clone())?;
                (o, false)
            }
        };
        let device = side.backend.info();
        let why = outcome
            .times()
            .and_then(|t| implausible(self.space, &config, t, device));
        let outcome = why.map_or(outcome, |message| Outcome::Implausible { message });
        Ok(Some((outcome, cached)))
    }

    pub fn stopped(&self) -> bool {
        self.plan
            .interrupted
            .is_some_and(|f| f.load(Ordering::SeqCst))
    }

    /// The study entry `config` is measured as: a run's defaults for everything a space does
    /// not choose (device clock, default wait, the same compiler flags).
    pub fn settings(&self, variant: &'static Variant, config: &Config) -> Resolved {
        let reps = self.plan.options.reps.max(1);
        Resolved {
            family: variant.family,
            variant,
            size: self.space.size,
            seed: INPUT_SEED,
            local: config.local,
            groups: Some(config.groups),
            local_y: 1,
            groups_y: None,
            unroll: config
                .unroll
                .iter()
                .map(|(p, f)| ((*p).to_string(), *f))
                .collect(),
            defines: config
                .defines
                .iter()
                .map(|(k, v)| ((*k).to_string(), v.to_string()))
                .collect(),
            flags: Flags {
                mad: true,
                ..Flags::default()
            },
            jit: Default::default(),
            timer: TimerKind::DeviceEvent,
            wait: WaitMode::default(),
            warmup: self.plan.options.warmup,
            turn: 1,
            reps,
            max_reps: reps,
            min_time_s: 0.0,
            // A tune times each configuration a fixed count: its search compares them.
            max_time_s: 0.0,
            target_ci: 0.0,
            timeout_s: None,
            index: if config.index == 64 {
                IndexWidth::U64
            } else {
                IndexWidth::U32
            },
            program: ProgramSource::Own,
            matrix: MatrixSource::Uniform,
        }
    }

    /// Measures `config` as `run` measures a study entry (build, verify, warm up, time); `None`
    /// when Ctrl-C stopped it mid-way.
    fn measure(&self, backend: &mut dyn Runtime, config: &Config) -> Option<Outcome> {
        let variant = self.space.variant_of(config);
        let settings = self.settings(variant, config);
        let side = config.side(backend.api());
        let mut plans = [SidePlan {
            side: RowSide::A,
            backend,
            settings,
            config: side,
        }];
        let target = target_name(self.space.def.family, self.space.def.name);
        let what: Arc<str> = Arc::from(format!("{target} {}", config.text()));
        let guard = Guard {
            watchdog: self.plan.watchdog,
            timeout_s: self.plan.timeout.map(|t| t.as_secs_f64()),
            comparison: &what,
        };
        let never = AtomicBool::new(false);
        let runs = measure_comparison(
            &mut plans,
            &[self.inputs],
            self.plan.sources,
            self.plan.interrupted.unwrap_or(&never),
            guard,
            &mut PhaseTimes::default(),
        )?;
        runs.into_iter().next().map(outcome_of)
    }

    /// Search with `kind` on every side, interleaved: one evaluation per side in turn until
    /// every side's strategy is done or the budget is spent.
    pub fn search(
        &self,
        sides: &mut [Side],
        cache: &mut Cache,
        kind: StrategyKind,
        seed: u64,
        budget: Budget,
    ) -> Result<Vec<Evaluation>, TuneError> {
        let mut strategies: Vec<_> = (0..sides.len())
            .map(|i| strategy::make(kind, self.space, seed.wrapping_add(i as u64)))
            .collect();
        let mut asked = vec![0usize; sides.len()];
        let mut done = vec![false; sides.len()];
        let mut out = Vec::new();
        let start = Instant::now();
        while done.iter().any(|d| !d) && !self.stopped() {
            for (i, side) in sides.iter_mut().enumerate() {
                if self.stopped() {
                    break;
                }
                let over = budget.evaluations.is_some_and(|b| asked[i] >= b)
                    || budget
                        .seconds
                        .is_some_and(|s| start.elapsed().as_secs_f64() >= s);
                let proposed = (!done[i] && !over).then(|| strategies[i].propose(self.space));
                let Some(point) = proposed.flatten() else {
                    done[i] = true;
                    continue;
                };
                let Some((outcome, cached)) = self.outcome(side, cache, point)? else {
                    break;
                };
                let config = self.space.config(point);
                let score = outcome
                    .times()
                    .and_then(|t| score_of(self.space, &config, t));
                strategies[i].observe(point, score);
                asked[i] += 1;
                out.push(Evaluation {
                    api: side.backend.api(),
                    strategy: kind,
                    n: asked[i],
                    point,
                    config,
                    outcome,
                    cached,
                    score,
                });
            }
        }
        Ok(out)
    }
}

fn outcome_of(run: SideRun) -> Outcome {
    if let Some(f) = run.failure {
        let message = f.message;
        return match f.status {
            Status::BuildFailed => Outcome::BuildFailed { message },
            Status::VerifyFailed => Outcome::VerifyFailed { message },
            Status::LaunchFailed | Status::Ok => Outcome::LaunchFailed { message },
        };
    }
    // Device events only: the host clock also sees the context switch between the two APIs
    // on one GPU.
    match run.samples.iter().map(|s| Some(s.device?.0)).collect() {
        Some(times) => Outcome::Timed { times },
        None => Outcome::LaunchFailed {
            message: "the device gives no event timer".into(),
        },
    }
}

/// `family/variant`, for messages.
pub fn target_name(family: FamilyId, variant: &str) -> String {
    format!("{}/{variant}", family.name())
}
