//! `clvscu tune`: search each API's best configuration of a kernel and compare best against
//! best beside the same-configuration comparison.

pub mod answer;
pub mod bayes;
pub mod cache;
pub mod genetic;
pub mod output;
pub mod provenance;
pub mod run;
pub mod search;
pub mod space;
pub mod strategy;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_knobs;
#[cfg(test)]
mod tests_measure;
#[cfg(test)]
mod tests_provenance;
#[cfg(test)]
mod tests_spaces3;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use thiserror::Error;

use crate::families::exec::Inputs;
use crate::families::matrix::MatrixSource;
use crate::families::{Size, WorkloadError};
use crate::kernels::{KernelSourceError, KernelSources};
use crate::rows::Api;
use crate::session::watchdog::Watchdog;

use crate::rows::StrategyKind;
use answer::{Answer, StrategyLine};
use cache::{Cache, Scope};
use run::{Budget, EvalOptions, Evaluation, Side, Tuner};
use space::{Space, SpaceDef};

#[derive(Debug, Error)]
pub enum TuneError {
    #[error("{target} has no tunable space; tunable: {known}")]
    NoSpace { target: String, known: String },
    #[error("the tuning cache {path}: {message}")]
    Cache { path: PathBuf, message: String },
    #[error("cannot write {path}: {message}")]
    Write { path: PathBuf, message: String },
    #[error("the space of {target} has no valid point on this device ({invalid} invalid)")]
    EmptySpace { target: String, invalid: usize },
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    #[error(transparent)]
    Source(#[from] KernelSourceError),
}

pub struct TunePlan<'a> {
    pub def: &'static SpaceDef,
    pub size: Size,
    pub strategies: Vec<StrategyKind>,
    pub budget: Budget,
    pub seed: u64,
    pub options: EvalOptions,
    pub sources: &'a KernelSources,
    /// Watches every launch, as in `run`.
    pub watchdog: Option<&'a Watchdog>,
    /// Set by Ctrl-C: the search stops after the evaluation in progress.
    pub interrupted: Option<&'a AtomicBool>,
    /// `--timeout`: the watchdog's limit of every launch, over its own defaults.
    pub timeout: Option<Duration>,
    /// Told a line as each strategy finishes: how far the tuning is.
    pub progress: Option<&'a dyn Fn(String)>,
}

pub struct TuneReport {
    pub space: Space,
    pub evaluations: Vec<Evaluation>,
    pub lines: Vec<StrategyLine>,
    /// Only when both APIs were tuned and each has a best.
    pub answer: Option<Answer>,
    pub bests: Vec<answer::Best>,
    /// Ctrl-C stopped the search: the evaluations are those before it.
    pub interrupted: bool,
}

impl TunePlan<'_> {
    fn target(&self) -> String {
        run::target_name(self.def.family, self.def.name)
    }

    /// Every strategy in turn on every side, against one cache, then the answer.
    pub fn execute(&self, sides: &mut [Side], cache: &mut Cache) -> Result<TuneReport, TuneError> {
        let space = self.device_space(sides)?;
        let inputs = Inputs::of_variant(
            space.variant,
            self.size,
            run::INPUT_SEED,
            &MatrixSource::Uniform,
        );
        let tuner = Tuner {
            plan: self,
            space: &space,
            inputs: &inputs,
        };
        let evaluations = self.search_all(&tuner, sides, cache)?;
        let bests = self.bests(&tuner, sides, cache, &evaluations)?;
        // The answer measures the other side's best configuration: not after a Ctrl-C.
        let answer = if tuner.stopped() {
            None
        } else {
            self.answer(&tuner, sides, cache, &bests)?
        };
        Ok(TuneReport {
            lines: self.strategy_lines(&space, sides, cache, &evaluations),
            interrupted: tuner.stopped(),
            space,
            evaluations,
            answer,
            bests,
        })
    }

    /// The space on the first side's device, refused when no point is valid there or the
    /// problem does not fit a side's device.
    fn device_space(&self, sides: &[Side]) -> Result<Space, TuneError> {
        let device = sides
            .first()
            .map(|s| s.backend.info().clone())
            .unwrap_or_default();
        let space = Space::expand(self.def, self.size, &device)?;
        if space.is_empty() {
            return Err(TuneError::EmptySpace {
                target: self.target(),
                invalid: space.invalid_count(),
            });
        }
        // Refused before the inputs are generated: a failed host allocation aborts.
        for side in sides {
            crate::families::fits::check(space.variant.family, self.size, side.backend.info())
                .map_err(|reason| WorkloadError::BadProblem {
                    variant: self.target(),
                    reason: reason.to_string(),
                })?;
        }
        Ok(space)
    }

    fn search_all(
        &self,
        tuner: &Tuner,
        sides: &mut [Side],
        cache: &mut Cache,
    ) -> Result<Vec<Evaluation>, TuneError> {
        let points = tuner.space.len();
        let mut evaluations = Vec::new();
        let started = std::time::Instant::now();
        for (i, &kind) in self.strategies.iter().enumerate() {
            // The exhaustive search covers the space whatever the budget; the others stop at
            // the budget given, or at a fifth of the space (the claim's share) when none is.
            let budget = match kind {
                StrategyKind::Exhaustive => Budget::default(),
                _ if self.budget == Budget::default() => Budget {
                    evaluations: Some(points.div_ceil(5)),
                    seconds: None,
                },
                _ => self.budget,
            };
            let evals = tuner.search(sides, cache, kind, self.seed, budget)?;
            if let Some(tell) = self.progress {
                tell(format!(
                    "[{}/{}] {kind}: {} evaluations of {} points, {:.1} s in",
                    i + 1,
                    self.strategies.len(),
                    evals.len(),
                    points,
                    started.elapsed().as_secs_f64()
                ));
            }
            evaluations.extend(evals);
        }
        Ok(evaluations)
    }

    /// One line per side and strategy: how close the strategy came to the exhaustive best.
    fn strategy_lines(
        &self,
        space: &Space,
        sides: &[Side],
        cache: &Cache,
        evaluations: &[Evaluation],
    ) -> Vec<StrategyLine> {
        sides
            .iter()
            .flat_map(|side| {
                let best = answer::exhaustive_best(space, cache, &side.scope, side.backend.info());
                self.strategies.iter().map(move |&kind| {
                    answer::strategy_line(evaluations, kind, side.backend.api(), best, space.len())
                })
            })
            .collect()
    }

    fn bests(
        &self,
        tuner: &Tuner,
        sides: &mut [Side],
        cache: &mut Cache,
        evals: &[Evaluation],
    ) -> Result<Vec<answer::Best>, TuneError> {
        let mut out = Vec::new();
        for side in sides.iter_mut() {
            let api = side.backend.api();
            // By score, of any strategy.
            let scored = evals.iter().filter(|e| e.api == api);
            let best = scored.filter_map(|e| Some((e.point, e.score?)));
            let Some((point, _)) = best.max_by(|a, b| a.1.total_cmp(&b.1)) else {
                continue;
            };
            let Some((o, _)) = tuner.outcome(side, cache, point)? else {
                break;
            };
            let times = o.times().map(<[f64]>::to_vec);
            out.extend(times.and_then(|t| answer::best_of(tuner.space, api, point, t)));
        }
        Ok(out)
    }

    /// Best-vs-best and same-config PRs: each API is measured at the other's best if no
    /// search did (an evaluation outside the strategies' counts).
    fn answer(
        &self,
        tuner: &Tuner,
        sides: &mut [Side],
        cache: &mut Cache,
        bests: &[answer::Best],
    ) -> Result<Option<Answer>, TuneError> {
        let find = |api| bests.iter().find(|b| b.api == api).cloned();
        let (Some(cl), Some(cu)) = (find(Api::OpenCl), find(Api::Cuda)) else {
            return Ok(None);
        };
        let mut cross = [None, None];
        for side in sides.iter_mut() {
            let (point, slot) = match side.backend.api() {
                Api::OpenCl => (cu.point, 1),
                Api::Cuda => (cl.point, 0),
            };
            let Some((o, _)) = tuner.outcome(side, cache, point)? else {
                return Ok(None);
            };
            cross[slot] = o.times().map(<[f64]>::to_vec);
        }
        Ok(Some(answer::answer(
            tuner.space,
            cl,
            cu,
            cross[0].as_deref(),
            cross[1].as_deref(),
        )))
    }
}

/// The scope of `backend`'s measurements of `def` at `size`; the hash covers the prelude and
/// the kernel file as the compiler receives them.
pub fn scope_of(
    backend: &dyn crate::backend::Runtime,
    sources: &KernelSources,
    def: &SpaceDef,
    size: Size,
) -> Result<Scope, TuneError> {
    let program = sources.program(backend.api(), def.family.file())?;
    let hash = crate::export::folder::short_hash(program.as_bytes());
    let (device, target) = (backend.info(), run::target_name(def.family, def.name));
    Ok(Scope {
        text: format!(
            "{} | {} | {} | {hash} | {target} | {size}",
            device.name,
            device.driver_version,
            backend.api()
        ),
    })
}

pub fn default_cache(out: &Path) -> PathBuf {
    out.join("tune-cache.json")
}
