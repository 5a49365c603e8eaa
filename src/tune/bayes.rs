//! Bayesian optimisation, as Kernel Tuner's `bayes_opt`: a Gaussian process models the score
//! over the parameters' value indices (each scaled to [0, 1]), and the next point is the
//! unseen one of largest expected improvement; the first points are random. Written here: the
//! spaces are small, so a fixed squared-exponential kernel and a Cholesky solve of a few
//! hundred rows at most are all it needs, where the GP crates bring linear-algebra stacks.

use super::search::{keep_best, Strategy, Unseen};
use super::space::Space;

/// Random points before the model picks.
const INITIAL: usize = 5;
/// Length scale of the kernel, in the [0, 1]-scaled value indices.
const LENGTH_SCALE: f64 = 0.3;
/// Noise on the diagonal, relative to the standardised scores' unit variance.
const NOISE: f64 = 1e-4;
/// The model stands on at most this many observations, the best ones: a fit costs the cube of
/// its points, and where the next improvement lies is told by the good region.
const MAX_MODEL_POINTS: usize = 64;

pub struct Bayes {
    unseen: Unseen,
    /// Best first, at most [`MAX_MODEL_POINTS`].
    observed: Vec<(usize, f64)>,
}

impl Bayes {
    pub fn new(n: usize, seed: u64) -> Self {
        Bayes {
            unseen: Unseen::new(n, seed),
            observed: Vec::new(),
        }
    }

    fn most_promising(&self, space: &Space) -> Option<usize> {
        let kept = &self.observed;
        let x: Vec<Vec<f64>> = kept.iter().map(|(i, _)| scaled(space, *i)).collect();
        let (mean, sd) = mean_sd(kept.iter().map(|o| o.1));
        let y: Vec<f64> = kept.iter().map(|o| (o.1 - mean) / sd).collect();
        let model = Model::fit(x, &y)?;
        let best = y.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (0..space.len())
            .filter(|&i| !self.unseen.is_seen(i))
            .map(|i| (i, model.expected_improvement(&scaled(space, i), best)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i)
    }
}

impl Strategy for Bayes {
    fn propose(&mut self, space: &Space) -> Option<usize> {
        let proposed = space.len() - self.unseen.left();
        let modelled = if proposed < INITIAL || self.observed.len() < 2 {
            None
        } else {
            self.most_promising(space)
        };
        let pick = modelled.or_else(|| self.unseen.random());
        pick.inspect(|&i| self.unseen.mark(i))
    }

    fn observe(&mut self, point: usize, score: Option<f64>) {
        keep_best(&mut self.observed, MAX_MODEL_POINTS, point, score);
    }
}

fn scaled(space: &Space, i: usize) -> Vec<f64> {
    space.points[i]
        .iter()
        .zip(space.def.params)
        .map(|(&v, p)| f64::from(v) / (p.values.len().max(2) - 1) as f64)
        .collect()
}

fn mean_sd(values: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let n = values.clone().count().max(1) as f64;
    let mean = values.clone().sum::<f64>() / n;
    let var = values.map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    (mean, var.sqrt().max(1e-12))
}

fn kernel(a: &[f64], b: &[f64]) -> f64 {
    let d2: f64 = a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum();
    (-d2 / (2.0 * LENGTH_SCALE * LENGTH_SCALE)).exp()
}

/// Fitted to standardised scores.
struct Model {
    x: Vec<Vec<f64>>,
    /// Lower Cholesky factor of K + noise·I.
    l: Vec<Vec<f64>>,
    /// (K + noise·I)⁻¹ y.
    alpha: Vec<f64>,
}

impl Model {
    fn fit(x: Vec<Vec<f64>>, y: &[f64]) -> Option<Model> {
        let n = x.len();
        let mut k = vec![vec![0.0; n]; n];
        for i in 0..n {
            for j in 0..n {
                k[i][j] = kernel(&x[i], &x[j]) + if i == j { NOISE } else { 0.0 };
            }
        }
        let l = cholesky(&k)?;
        let alpha = back_substitute(&l, &forward_substitute(&l, y));
        Some(Model { x, l, alpha })
    }

    fn expected_improvement(&self, at: &[f64], best: f64) -> f64 {
        let ks: Vec<f64> = self.x.iter().map(|xi| kernel(xi, at)).collect();
        let mean: f64 = ks.iter().zip(&self.alpha).map(|(k, a)| k * a).sum();
        let v = forward_substitute(&self.l, &ks);
        let var = (1.0 + NOISE - v.iter().map(|x| x * x).sum::<f64>()).max(1e-12);
        let sd = var.sqrt();
        let z = (mean - best) / sd;
        let pdf = (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
        (mean - best) * normal_cdf(z) + sd * pdf
    }
}

fn cholesky(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let mut l = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..=i {
            let s: f64 = (0..j).map(|k| l[i][k] * l[j][k]).sum();
            if i == j {
                let d = a[i][i] - s;
                if d <= 0.0 {
                    return None;
                }
                l[i][j] = d.sqrt();
            } else {
                l[i][j] = (a[i][j] - s) / l[j][j];
            }
        }
    }
    Some(l)
}

/// Solves L z = b.
fn forward_substitute(l: &[Vec<f64>], b: &[f64]) -> Vec<f64> {
    let mut z = vec![0.0; b.len()];
    for i in 0..b.len() {
        let s: f64 = (0..i).map(|k| l[i][k] * z[k]).sum();
        z[i] = (b[i] - s) / l[i][i];
    }
    z
}

/// Solves Lᵀ x = z.
fn back_substitute(l: &[Vec<f64>], z: &[f64]) -> Vec<f64> {
    let n = z.len();
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        let s: f64 = (i + 1..n).map(|k| l[k][i] * x[k]).sum();
        x[i] = (z[i] - s) / l[i][i];
    }
    x
}

/// Φ(z) through erf (Abramowitz and Stegun 7.1.26, error below 1.5e-7: ample for ranking).
fn normal_cdf(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-x * x).exp();
    if z >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_normal_cdf_matches_known_values() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_cdf(1.96) - 0.975).abs() < 1e-4);
        assert!((normal_cdf(-1.0) - 0.158_655).abs() < 1e-5);
    }

    #[test]
    fn the_model_passes_through_its_points_and_prefers_the_rising_side() {
        let x = vec![vec![0.0], vec![0.5], vec![1.0]];
        let model = Model::fit(x, &[-1.0, 0.0, 1.0]).unwrap();
        // Beyond the best point the improvement is larger than beside the worst.
        assert!(model.expected_improvement(&[0.9], 1.0) > model.expected_improvement(&[0.1], 1.0));
    }
}
