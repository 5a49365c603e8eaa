//! `clvscu tune`'s words and rows: its search strategies, and one row per evaluation
//! (`evaluations.csv`).

use serde::{Deserialize, Serialize};

use super::words::Api;

crate::names::named_enum! {
    /// The search strategies of `clvscu tune`.
    #[strum(serialize_all = "lowercase")]
    pub enum StrategyKind {
        /// Every valid point, in the space's order.
        Exhaustive,
        /// Points drawn uniformly without replacement.
        Random,
        /// Simulated annealing over neighbouring points (one parameter one step away).
        Anneal,
        /// A genetic algorithm: tournament selection, uniform crossover, mutation.
        Genetic,
        /// Bayesian optimisation: a Gaussian process and expected improvement.
        Bayes,
    }
}

/// Every evaluation of a tuning run, in the order asked.
pub const EVALUATIONS_CSV: &str = "evaluations.csv";

/// One evaluation of one configuration by one strategy on one API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvaluationRow {
    pub strategy: StrategyKind,
    pub api: Api,
    /// 1 for the first evaluation this strategy asked for on this API.
    pub n: usize,
    /// The configuration's index in the search space.
    pub point: usize,
    pub local: u32,
    pub groups: u32,
    /// `pragma=factor` entries, `;`-separated.
    pub unroll: String,
    pub index: String,
    pub knobs: String,
    pub status: String,
    /// The outcome came from the cache (measured by an earlier search or run).
    pub cached: bool,
    pub reps: usize,
    /// Empty when nothing was timed.
    pub median_s: Option<f64>,
    /// The metric (higher is better) at the median time; empty when it failed.
    pub metric: Option<f64>,
    pub unit: String,
    pub message: String,
}
