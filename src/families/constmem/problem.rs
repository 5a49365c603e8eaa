//! The constant-memory families' inputs and references: the quantised image and table, the
//! Sobel filter at a pixel, and the sampled check of a large image.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::families::plan::Inputs;
use crate::families::reference::{self, Verification};

/// Floats in [-1, 1] that are multiples of 2^-bits (see the module docs).
pub(super) fn quantised(len: usize, seed: u64, bits: i32) -> Vec<f32> {
    let scale = 2f32.powi(bits);
    reference::random_vector(len, seed)
        .into_iter()
        .map(|x| (x * scale).round() / scale)
        .collect()
}

/// Sobel's inputs: the image, the filter, the reference and its output positions (empty: all).
pub fn problem(size: Size, seed: u64) -> Inputs {
    let data = quantised(pixels(size) as usize, seed, 8);
    let sample = sobel_sample(size, seed);
    let positions: Box<dyn Iterator<Item = usize>> = if sample.is_empty() {
        Box::new(0..pixels(size) as usize)
    } else {
        Box::new(sample.iter().copied())
    };
    let reference = positions
        .map(|p| sobel_at(&data, &FILTER_X, size, p))
        .collect();
    Inputs::new(size, data, FILTER_X.to_vec())
        .with_reference(reference, Vec::new())
        .with_sample(sample)
}

/// Empty for an image checked whole; else its first and last two rows and a seeded sample.
pub(super) fn sobel_sample(img: Size, seed: u64) -> Vec<usize> {
    if pixels(img) <= FULL_CHECK_PIXELS {
        return Vec::new();
    }
    let (w, n) = (img.cols as usize, pixels(img) as usize);
    let mut p: Vec<usize> = (0..2 * w).chain(n - 2 * w..n).collect();
    let mut rng = SmallRng::seed_from_u64(seed ^ 0x50be1);
    p.extend((0..SAMPLED_PIXELS).map(|_| rng.gen_range(0..n)));
    p
}

/// The Sobel output at pixel `p`: 0 on the border, the 3x3 filter elsewhere (in f64).
pub fn sobel_at(data: &[f32], filter: &[f32], img: Size, p: usize) -> f64 {
    let (w, h) = (img.cols as usize, img.rows as usize);
    let (x, y) = (p % w, p / w);
    if x == 0 || y == 0 || x + 1 >= w || y + 1 >= h {
        return 0.0;
    }
    let mut v = 0.0;
    for dy in 0..3 {
        for dx in 0..3 {
            let q = (y + dy - 1) * w + (x + dx - 1);
            v += f64::from(filter[dy * 3 + dx]) * f64::from(data[q]);
        }
    }
    v
}

/// Compare a run's output with the reference (for the `sample` positions, or all), exactly.
pub fn check(got: &[f32], reference: &[f64], sample: &[usize]) -> Verification {
    let picked: Vec<f32> = sample
        .iter()
        .map(|&q| got.get(q).copied().unwrap_or(f32::NAN))
        .collect();
    let got = if sample.is_empty() { got } else { &picked };
    reference::compare_exact(got, reference.len(), |i| reference[i])
}
