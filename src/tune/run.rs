//! The tuning loop: each API searched by its own strategy, one evaluation of OpenCL then one
//! of CUDA in turn (so drift over the run hits both alike), every configuration verified
//! before it is timed and looked up in the cache before it is measured.

use std::time::Instant;

use super::cache::{Cache, Outcome, Scope};
use super::space::{Config, Space};
use super::strategy::{self, StrategyKind};
use super::TuneError;
use crate::backend::{Api, Backend, TimerKind};
use crate::kernels::KernelSources;
use crate::workload::exec::{self, ExecError, Inputs};
use crate::workload::{work_of, FamilyKind};

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

/// One side of the search: a backend and what identifies its measurements.
pub struct Side<'b> {
    pub backend: &'b mut dyn Backend,
    pub scope: Scope,
}

impl Side<'_> {
    pub fn api(&self) -> Api {
        self.backend.api()
    }
}

/// One evaluation a strategy asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    pub api: Api,
    pub strategy: StrategyKind,
    /// 1 for the first evaluation this strategy asked for on this API.
    pub n: usize,
    pub point: usize,
    pub config: Config,
    pub outcome: Outcome,
    /// The outcome came from the cache (measured by an earlier search or run).
    pub cached: bool,
    /// The metric (higher is better) at the median time; `None` when it failed.
    pub score: Option<f64>,
}

/// The metric of `times` for one configuration: the family's work over the median time.
pub fn score_of(space: &Space, config: &Config, times: &[f64]) -> Option<f64> {
    let t = crate::stats::median(times)?;
    let (bytes, flops) = work_of(
        space.def.family,
        space.def.variant,
        space.size,
        u64::from(config.groups) * u64::from(config.local),
    );
    let work = space.def.family.metric().work(bytes, flops);
    (t > 0.0).then(|| work / t)
}

/// What the tuner needs besides the sides.
pub struct Tuner<'a> {
    pub space: &'a Space,
    pub sources: &'a KernelSources,
    pub inputs: &'a Inputs,
    pub options: EvalOptions,
}

impl Tuner<'_> {
    /// The outcome of `point` on `side`: from the cache, or measured and then cached.
    pub fn outcome(
        &self,
        side: &mut Side,
        cache: &mut Cache,
        point: usize,
    ) -> Result<(Outcome, bool), TuneError> {
        let config = self.space.config(point);
        let key = config.text();
        if let Some(o) = cache.get(&side.scope, &key) {
            return Ok((o.clone(), true));
        }
        let outcome = self.measure(side.backend, &config);
        cache.put(&side.scope, &key, outcome.clone())?;
        Ok((outcome, false))
    }

    /// Compile (cached per program text by the backend), verify, then time: never timed
    /// when wrong.
    fn measure(&self, backend: &mut dyn Backend, config: &Config) -> Outcome {
        let side = config.side(backend.api());
        let p = match exec::prepare(
            backend,
            self.sources,
            self.space.variant_of(config),
            self.inputs,
            &side,
        ) {
            Ok(p) => p,
            Err(e) if e.is_build() => {
                return Outcome::BuildFailed {
                    message: e.to_string(),
                }
            }
            Err(e) => {
                return Outcome::LaunchFailed {
                    message: e.to_string(),
                }
            }
        };
        let outcome = self.verify_and_time(backend, &p);
        exec::release(backend, p);
        outcome
    }

    fn verify_and_time(&self, backend: &mut dyn Backend, p: &exec::Prepared) -> Outcome {
        let failed = |e: ExecError| Outcome::LaunchFailed {
            message: e.to_string(),
        };
        match exec::verify(backend, p, self.inputs) {
            Ok(v) if v.ok => {}
            Ok(v) => {
                return Outcome::VerifyFailed {
                    message: format!(
                        "max error {:e} over tolerance {:e} ({} outputs checked)",
                        v.max_error, v.tolerance, v.checked
                    ),
                }
            }
            Err(e) => return failed(e),
        }
        for _ in 0..self.options.warmup {
            if let Err(e) = exec::run(backend, p) {
                return failed(e);
            }
        }
        let mut times = Vec::with_capacity(self.options.reps as usize);
        for _ in 0..self.options.reps.max(1) {
            match exec::run(backend, p) {
                // Device events only: the host clock also sees the context switch between
                // the two APIs on one GPU.
                Ok(t) => match t.get(TimerKind::DeviceEvent) {
                    Some(s) => times.push(s.0),
                    None => {
                        return Outcome::LaunchFailed {
                            message: "the device gives no event timer".into(),
                        }
                    }
                },
                Err(e) => return failed(e),
            }
        }
        Outcome::Timed { times }
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
        let mut strategies: Vec<_> = sides
            .iter()
            .enumerate()
            .map(|(i, _)| strategy::make(kind, self.space, seed.wrapping_add(i as u64)))
            .collect();
        let mut asked = vec![0usize; sides.len()];
        let mut done = vec![false; sides.len()];
        let mut out = Vec::new();
        let start = Instant::now();
        while done.iter().any(|d| !d) {
            for (i, side) in sides.iter_mut().enumerate() {
                let over = budget.evaluations.is_some_and(|b| asked[i] >= b)
                    || budget
                        .seconds
                        .is_some_and(|s| start.elapsed().as_secs_f64() >= s);
                if done[i] || over {
                    done[i] = true;
                    continue;
                }
                let Some(point) = strategies[i].propose(self.space) else {
                    done[i] = true;
                    continue;
                };
                let (outcome, cached) = self.outcome(side, cache, point)?;
                let config = self.space.config(point);
                let score = outcome
                    .times()
                    .and_then(|t| score_of(self.space, &config, t));
                strategies[i].observe(point, score);
                asked[i] += 1;
                out.push(Evaluation {
                    api: side.api(),
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

/// The family of a target, for messages.
pub fn target_name(family: FamilyKind, variant: &str) -> String {
    format!("{}/{variant}", family.name())
}
