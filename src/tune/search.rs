//! What every search strategy stands on: the [`Strategy`] trait, the points not proposed yet
//! (`Unseen`) and the best ones scored (`keep_best`); apart from [`super::strategy`], so that
//! no strategy imports the file that names them all.

use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

use super::space::Space;

pub trait Strategy {
    /// Never a point proposed before; `None` when done.
    fn propose(&mut self, space: &Space) -> Option<usize>;
    /// The score of the point last proposed.
    fn observe(&mut self, point: usize, score: Option<f64>);
}

/// Adds point `i` if its score is finite, keeping `best` best first (ties in the order told)
/// and at most `cap` long: a genetic population, the points a Bayesian model stands on.
pub(crate) fn keep_best(best: &mut Vec<(usize, f64)>, cap: usize, i: usize, score: Option<f64>) {
    if let Some(s) = score.filter(|s| s.is_finite()) {
        best.push((i, s));
        best.sort_by(|a, b| b.1.total_cmp(&a.1));
        best.truncate(cap);
    }
}

/// The points a strategy has not proposed yet, and its seeded generator, which draws them and
/// every other choice the strategy makes.
pub(crate) struct Unseen {
    seen: Vec<bool>,
    left: usize,
    pub(crate) rng: SmallRng,
}

impl Unseen {
    pub(crate) fn new(n: usize, seed: u64) -> Self {
        Unseen {
            seen: vec![false; n],
            left: n,
            rng: SmallRng::seed_from_u64(seed),
        }
    }

    pub(crate) fn left(&self) -> usize {
        self.left
    }

    pub(crate) fn is_seen(&self, i: usize) -> bool {
        self.seen[i]
    }

    pub(crate) fn mark(&mut self, i: usize) {
        if !self.seen[i] {
            self.seen[i] = true;
            self.left -= 1;
        }
    }

    /// Drawn uniformly, not marked.
    pub(crate) fn random(&mut self) -> Option<usize> {
        if self.left == 0 {
            return None;
        }
        let k = self.rng.gen_range(0..self.left);
        (0..self.seen.len()).filter(|&i| !self.seen[i]).nth(k)
    }

    /// Drawn uniformly among [`Space::neighbours`], not marked.
    pub(crate) fn random_neighbour(&mut self, space: &Space, i: usize) -> Option<usize> {
        let around: Vec<usize> = space
            .neighbours(i)
            .into_iter()
            .filter(|&j| !self.is_seen(j))
            .collect();
        around.choose(&mut self.rng).copied()
    }
}
