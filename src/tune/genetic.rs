//! A genetic algorithm, as Kernel Tuner's `genetic_algorithm`: the best points scored so far
//! breed the next generation by tournament selection, uniform crossover of the value indices,
//! and mutation. A child invalid or already seen is replaced by an unseen neighbour of it,
//! else by a random unseen point.

use rand::seq::SliceRandom;
use rand::Rng;

use super::search::{keep_best, Strategy, Unseen};
use super::space::{Coords, Space};

/// Points per generation (Kernel Tuner's default population is 20; spaces here are smaller).
const POPULATION: usize = 10;

pub struct Genetic {
    unseen: Unseen,
    /// Best first, at most [`POPULATION`].
    elite: Vec<(usize, f64)>,
    /// The generation being proposed.
    queue: Vec<usize>,
}

impl Genetic {
    pub fn new(n: usize, seed: u64) -> Self {
        Genetic {
            unseen: Unseen::new(n, seed),
            elite: Vec::new(),
            queue: Vec::new(),
        }
    }

    /// The next generation: random points until two parents scored, then children.
    fn breed(&mut self, space: &Space) {
        for _ in 0..POPULATION.min(self.unseen.left()) {
            let child = if self.elite.len() < 2 {
                None
            } else {
                let coords = self.child_coords(space);
                self.place(space, &coords)
            };
            let pick = child.or_else(|| self.unseen.random());
            if let Some(i) = pick {
                self.unseen.mark(i);
                self.queue.push(i);
            }
        }
        self.queue.reverse();
    }

    /// Uniform crossover of two tournament winners, then each value index mutated with
    /// probability 1 / (number of parameters).
    fn child_coords(&mut self, space: &Space) -> Coords {
        let (a, b) = (self.tournament(), self.tournament());
        let (pa, pb) = (&space.points[a], &space.points[b]);
        let dims = pa.len().max(1);
        let rng = &mut self.unseen.rng;
        let mut child: Coords = pa
            .iter()
            .zip(pb)
            .map(|(x, y)| if rng.gen_bool(0.5) { *x } else { *y })
            .collect();
        for (d, param) in space.def.params.iter().enumerate() {
            if rng.gen_bool(1.0 / dims as f64) {
                child[d] = rng.gen_range(0..param.values.len()) as u8;
            }
        }
        child
    }

    fn tournament(&mut self) -> usize {
        let x = self.elite.choose(&mut self.unseen.rng).copied();
        let y = self.elite.choose(&mut self.unseen.rng).copied();
        match (x, y) {
            (Some(x), Some(y)) if x.1 >= y.1 => x.0,
            (Some(_), Some(y)) => y.0,
            _ => 0,
        }
    }

    /// The child itself when valid and unseen, else an unseen valid neighbour of it.
    fn place(&mut self, space: &Space, coords: &[u8]) -> Option<usize> {
        let at = space.find(coords);
        if let Some(i) = at.filter(|&i| !self.unseen.is_seen(i)) {
            return Some(i);
        }
        at.and_then(|i| self.unseen.random_neighbour(space, i))
    }
}

impl Strategy for Genetic {
    fn propose(&mut self, space: &Space) -> Option<usize> {
        if self.queue.is_empty() {
            self.breed(space);
        }
        self.queue.pop()
    }

    fn observe(&mut self, point: usize, score: Option<f64>) {
        keep_best(&mut self.elite, POPULATION, point, score);
    }
}
