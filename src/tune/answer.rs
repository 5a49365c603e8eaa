//! The answer of a tuning run: each API's best, the best-vs-best and same-configuration PRs,
//! and how well each strategy did against the exhaustive best.

use super::cache::{Cache, Scope};
use super::run::{score_of, Evaluation};
use super::space::{Config, Space};
use crate::backend::DeviceInfo;
use crate::calibrate::RESAMPLES;
use crate::rows::Api;
use crate::rows::StrategyKind;
use crate::stats::{self, Ratio};

/// The seed of every bootstrap here (reports regenerate exactly).
const SEED: u64 = 7;

#[derive(Debug, Clone, PartialEq)]
pub struct Best {
    pub api: Api,
    pub point: usize,
    pub config: Config,
    /// At the median time, with its 95% CI from the median time's.
    pub metric: f64,
    pub ci: (f64, f64),
    pub times: Vec<f64>,
}

/// `perf(OpenCL) / perf(CUDA)` of two configurations' times.
pub fn pr(space: &Space, cl: (&Config, &[f64]), cu: (&Config, &[f64])) -> Option<Ratio> {
    let work =
        |c: &Config, t: &[f64]| score_of(space, c, t).map(|s| s * stats::median(t).unwrap_or(0.0));
    let (wa, wb) = (work(cl.0, cl.1)?, work(cu.0, cu.1)?);
    stats::performance_ratio(cl.1, wa, cu.1, wb, RESAMPLES, SEED)
}

/// (name, a's value, b's value) of each parameter that differs.
pub fn differing(a: &Config, b: &Config) -> Vec<(String, String, String)> {
    a.named()
        .into_iter()
        .zip(b.named())
        .filter(|((_, va), (_, vb))| va != vb)
        .map(|((k, va), (_, vb))| (k, va, vb))
        .collect()
}

#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub unit: &'static str,
    pub opencl: Best,
    pub cuda: Best,
    pub best_vs_best: Option<Ratio>,
    pub same_at_opencl_best: Option<Ratio>,
    pub same_at_cuda_best: Option<Ratio>,
    pub differing: Vec<(String, String, String)>,
}

pub fn best_of(space: &Space, api: Api, point: usize, times: Vec<f64>) -> Option<Best> {
    let config = space.config(point);
    let metric = score_of(space, &config, &times)?;
    let s = stats::summarize(&times, RESAMPLES, SEED)?;
    // The metric is work / time: the CI's bounds swap.
    let work = metric * s.median;
    Some(Best {
        api,
        point,
        config,
        metric,
        ci: (work / s.ci_hi, work / s.ci_lo),
        times,
    })
}

/// The times at the other's best are `None` where that configuration failed there.
pub fn answer(
    space: &Space,
    opencl: Best,
    cuda: Best,
    cuda_at_opencl_best: Option<&[f64]>,
    opencl_at_cuda_best: Option<&[f64]>,
) -> Answer {
    let (cl, cu) = (&opencl.config, &cuda.config);
    Answer {
        unit: space.def.family.metric().unit(),
        best_vs_best: pr(space, (cl, &opencl.times), (cu, &cuda.times)),
        same_at_opencl_best: cuda_at_opencl_best
            .and_then(|t| pr(space, (cl, &opencl.times), (cl, t))),
        same_at_cuda_best: opencl_at_cuda_best.and_then(|t| pr(space, (cu, t), (cu, &cuda.times))),
        differing: differing(cl, cu),
        opencl,
        cuda,
    }
}

/// How one strategy did on one API against the exhaustive best.
#[derive(Debug, Clone, PartialEq)]
pub struct StrategyLine {
    pub strategy: StrategyKind,
    pub api: Api,
    /// Evaluations the strategy asked for (cache hits included: they are not free).
    pub asked: usize,
    /// Of those, measured in this run.
    pub measured: usize,
    pub best_found: Option<f64>,
    /// Where the cache holds every valid point.
    pub exhaustive_best: Option<f64>,
    /// Evaluations asked before the best so far came within `WITHIN` of the exhaustive best.
    pub to_within: Option<usize>,
    pub space: usize,
}

/// "Within 2% of the exhaustive best".
pub const WITHIN: f64 = 0.02;

impl StrategyLine {
    pub fn ratio(&self) -> Option<f64> {
        Some(self.best_found? / self.exhaustive_best?)
    }
}

/// The best score over every valid point of `scope`, if the cache holds every one, leaving
/// out times `device` cannot give ([`super::run::implausible`]).
pub fn exhaustive_best(
    space: &Space,
    cache: &Cache,
    scope: &Scope,
    device: &DeviceInfo,
) -> Option<f64> {
    let mut best = f64::NEG_INFINITY;
    for i in 0..space.len() {
        let config = space.config(i);
        let times = cache.get(scope, &config.text())?.times();
        let plausible =
            times.filter(|t| super::run::implausible(space, &config, t, device).is_none());
        if let Some(s) = plausible.and_then(|t| score_of(space, &config, t)) {
            best = best.max(s);
        }
    }
    best.is_finite().then_some(best)
}

pub fn strategy_line(
    evals: &[Evaluation],
    strategy: StrategyKind,
    api: Api,
    exhaustive: Option<f64>,
    space: usize,
) -> StrategyLine {
    let mine: Vec<&Evaluation> = evals
        .iter()
        .filter(|e| e.strategy == strategy && e.api == api)
        .collect();
    // The best so far first comes within `WITHIN` at the first evaluation that does itself.
    let close = |x: f64| {
        mine.iter()
            .find(|e| e.score.is_some_and(|s| s >= x * (1.0 - WITHIN)))
    };
    let to_within = exhaustive.and_then(close).map(|e| e.n);
    StrategyLine {
        strategy,
        api,
        asked: mine.len(),
        measured: mine.iter().filter(|e| !e.cached).count(),
        best_found: mine.iter().filter_map(|e| e.score).reduce(f64::max),
        exhaustive_best: exhaustive,
        to_within,
        space,
    }
}
