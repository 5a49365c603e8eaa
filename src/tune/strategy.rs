//! Search strategies over a space's valid points: exhaustive, random sampling, simulated
//! annealing, a genetic algorithm ([`super::genetic`]) and Bayesian optimisation
//! ([`super::bayes`]), each deterministic given its seed and the scores it is told (higher is
//! better, `None` for a configuration that failed to build, launch or verify).

use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

pub use super::search::Strategy;
use super::search::Unseen;
use super::space::Space;

use crate::rows::StrategyKind;

pub fn make(kind: StrategyKind, space: &Space, seed: u64) -> Box<dyn Strategy> {
    match kind {
        StrategyKind::Exhaustive => Box::new(Listed::new(space.len(), None)),
        StrategyKind::Random => Box::new(Listed::new(space.len(), Some(seed))),
        StrategyKind::Anneal => Box::new(Anneal::new(space.len(), seed)),
        StrategyKind::Genetic => Box::new(super::genetic::Genetic::new(space.len(), seed)),
        StrategyKind::Bayes => Box::new(super::bayes::Bayes::new(space.len(), seed)),
    }
}

/// Every point once, in index order (exhaustive) or shuffled by a seed (random sampling).
struct Listed {
    order: Vec<usize>,
}

impl Listed {
    fn new(n: usize, shuffle: Option<u64>) -> Self {
        let mut order: Vec<usize> = (0..n).collect();
        if let Some(seed) = shuffle {
            order.shuffle(&mut SmallRng::seed_from_u64(seed));
        }
        order.reverse();
        Listed { order }
    }
}

impl Strategy for Listed {
    fn propose(&mut self, _: &Space) -> Option<usize> {
        self.order.pop()
    }

    fn observe(&mut self, _: usize, _: Option<f64>) {}
}

/// Simulated annealing: the state moves to a proposed neighbour that scores better, or with
/// probability `exp(-loss / T)` (`loss`: the relative drop in score); T cools by `COOLING` per
/// proposal. With every neighbour seen it restarts elsewhere, else the walk would end early.
pub struct Anneal {
    unseen: Unseen,
    state: Option<(usize, f64)>,
    best: Option<(usize, f64)>,
    temperature: f64,
}

/// Starting temperature, as a relative loss: a 10% worse point is accepted with p = 1/e.
const T0: f64 = 0.1;
const COOLING: f64 = 0.97;
const T_MIN: f64 = 1e-4;
/// Of the proposals from a state, this share jumps to a random unseen point.
const JUMP: f64 = 0.05;

impl Anneal {
    pub fn new(n: usize, seed: u64) -> Self {
        Anneal {
            unseen: Unseen::new(n, seed),
            state: None,
            best: None,
            temperature: T0,
        }
    }
}

impl Strategy for Anneal {
    fn propose(&mut self, space: &Space) -> Option<usize> {
        let near = match self.state {
            Some((i, _)) if !self.unseen.rng.gen_bool(JUMP) => {
                self.unseen.random_neighbour(space, i)
            }
            _ => None,
        };
        let pick = near.or_else(|| {
            // A dead end: go on from the best point found, or jump.
            if let Some((b, s)) = self.best {
                self.state = Some((b, s));
                match self.unseen.random_neighbour(space, b) {
                    Some(j) if self.unseen.rng.gen_bool(0.5) => Some(j),
                    _ => self.unseen.random(),
                }
            } else {
                self.unseen.random()
            }
        });
        pick.inspect(|&i| self.unseen.mark(i))
    }

    fn observe(&mut self, point: usize, score: Option<f64>) {
        let t = self.temperature;
        self.temperature = (t * COOLING).max(T_MIN);
        let Some(s) = score.filter(|s| s.is_finite()) else {
            return;
        };
        if self.best.is_none_or(|(_, b)| s > b) {
            self.best = Some((point, s));
        }
        let accept = match self.state {
            None => true,
            Some((_, cur)) if s >= cur => true,
            Some((_, cur)) => {
                let loss = (cur - s) / cur.abs().max(f64::MIN_POSITIVE);
                self.unseen.rng.gen_bool((-loss / t).exp().clamp(0.0, 1.0))
            }
        };
        if accept {
            self.state = Some((point, s));
        }
    }
}
