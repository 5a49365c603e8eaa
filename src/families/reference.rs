//! Inputs and CPU references in f64, and the verification tolerance: a float32 sum of `n`
//! terms in any order (tree, strided, sequential) errs by about `eps (log2 n + sqrt n)
//! sum|terms|` (the tree depth, and the random-walk rounding of per-thread chains), so an
//! output passes when `|gpu - ref| <= 2 eps32 (ceil(log2 n) + sqrt n) sum|terms|`, with `n` the
//! reduction length (matvec's row width, a reduction's array length). A missing or duplicated
//! block of terms, a NaN (outputs are poisoned before every verified run) or a race fails it.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;

pub const EPS32: f64 = f32::EPSILON as f64;

/// SplitMix64 of `seed` and a position: the only source of randomness of the
/// generators (SpMV's matrices, MD's sites, the blocks of [`random_vector`]).
pub fn mix(seed: u64, stream: u64, index: u64) -> u64 {
    let mut z = seed
        .wrapping_add(stream.wrapping_mul(0xD1B5_4A32_D192_ED03))
        .wrapping_add(index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Uniform random values in [-1, 1): never all zeros, signs mixed so errors cannot hide in a
/// monotone sum. Made in blocks of [`RANDOM_BLOCK`] values, each from its own generator, so
/// that a GPU-sized vector (2^30 floats) is made on every core; the first block's generator is
/// seeded with `seed` itself, so a vector that fits one block is what one generator gives.
pub fn random_vector(len: usize, seed: u64) -> Vec<f32> {
    let mut out = vec![0.0f32; len];
    on_every_core(&mut out, RANDOM_BLOCK, |block, values| {
        let block_seed = if block == 0 {
            seed
        } else {
            mix(seed, RANDOM_STREAM, block as u64)
        };
        let mut rng = SmallRng::seed_from_u64(block_seed);
        for v in values {
            *v = rng.gen_range(-1.0f32..1.0f32);
        }
    });
    out
}

/// Values per generator in [`random_vector`].
pub const RANDOM_BLOCK: usize = 1 << 20;

/// The stream of [`mix`] that seeds [`random_vector`]'s later blocks.
const RANDOM_STREAM: u64 = 0x7261_6e64;

/// Runs `fill(index, chunk)` over `out` in chunks of `chunk` items spread over the cores; each
/// chunk's result depends on its index alone, so the output is the same on every machine.
pub fn on_every_core<T: Send>(out: &mut [T], chunk: usize, fill: impl Fn(usize, &mut [T]) + Sync) {
    out.par_chunks_mut(chunk.max(1))
        .enumerate()
        .for_each(|(i, c)| fill(i, c));
}

/// `len` values made on every core, value `i` by `value(i, hash)` from the [`mix`] of `seed`,
/// `stream` and `i`: the same whatever the thread count.
pub fn hashed<T: Send + Copy + Default>(
    len: usize,
    seed: u64,
    stream: u64,
    value: impl Fn(usize, u64) -> T + Sync,
) -> Vec<T> {
    let mut out = vec![T::default(); len];
    on_every_core(&mut out, RANDOM_BLOCK, |block, values| {
        let first = block * RANDOM_BLOCK;
        for (k, v) in values.iter_mut().enumerate() {
            *v = value(first + k, mix(seed, stream, (first + k) as u64));
        }
    });
    out
}

/// The relative factor of the tolerance for a reduction of length `n` (see module docs).
pub fn tolerance_factor(n: u64) -> f64 {
    let n = n.max(1) as f64;
    2.0 * EPS32 * (n.log2().ceil() + n.sqrt())
}

/// Listing 1 of the whitepaper, in f64: `W[y] = sum_x M[y][x] * V[x]`. Also returns, per
/// row, `sum |M[y][x] * V[x]|` for the tolerance.
pub fn matvec(m: &[f32], v: &[f32], rows: usize, cols: usize) -> (Vec<f64>, Vec<f64>) {
    let mut out = vec![(0.0f64, 0.0f64); rows];
    // Rows are independent: each is summed in order, whichever core takes it.
    let rows_per_chunk = (MATVEC_CHUNK / cols.max(1)).max(1);
    on_every_core(&mut out, rows_per_chunk, |chunk, sums| {
        let first = chunk * rows_per_chunk;
        for (k, slot) in sums.iter_mut().enumerate() {
            let row = &m[(first + k) * cols..(first + k + 1) * cols];
            let (mut s, mut a) = (0.0f64, 0.0f64);
            for (x, vx) in row.iter().zip(v) {
                let p = f64::from(*x) * f64::from(*vx);
                s += p;
                a += p.abs();
            }
            *slot = (s, a);
        }
    });
    out.into_iter().unzip()
}

/// Matrix elements per work chunk of [`matvec`].
const MATVEC_CHUNK: usize = 1 << 20;

/// Sum in f64, and the sum of absolute values.
pub fn sum(x: &[f32]) -> (f64, f64) {
    x.iter().fold((0.0, 0.0), |(s, a), v| {
        let v = f64::from(*v);
        (s + v, a + v.abs())
    })
}

/// The flops kernel for one work-item, in f64 (same recurrence as `peak_fma`).
pub fn fma_chain(a: f32, iters: u32) -> f64 {
    let a = f64::from(a);
    let b = 0.5 - a * 0.25;
    let m = f64::from(0.999f32);
    let mut x = [0.0f64; 8];
    for (k, xk) in x.iter_mut().enumerate() {
        *xk = a + k as f64;
    }
    for _ in 0..iters {
        for xk in x.iter_mut() {
            *xk = *xk * m + b;
        }
    }
    ((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7]))
}

/// The result of comparing device output with the reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Verification {
    pub ok: bool,
    /// Largest absolute error over the checked outputs (infinite for NaN).
    pub max_error: f64,
    /// The tolerance at the output with the largest error-to-tolerance ratio.
    pub tolerance: f64,
    pub checked: usize,
}

/// Compare outputs (f32, or a study's f64) with references, each with its own absolute tolerance.
pub fn compare<G: Copy + Into<f64> + Sync>(
    got: &[G],
    want: &[f64],
    tolerances: &[f64],
) -> Verification {
    compare_indexed(
        got,
        want.len(),
        |i| (want[i], tolerances[i]),
        tolerances.first().copied().unwrap_or(0.0),
    )
}

/// Compare outputs that must equal their references exactly, without building a reference or
/// tolerance vector: a copy of 2^28 floats would otherwise allocate 4 GB to compare 1 GB.
/// `want(i)` is the reference of output `i`, for `i` below `len`.
pub fn compare_exact(got: &[f32], len: usize, want: impl Fn(usize) -> f64 + Sync) -> Verification {
    compare_indexed(got, len, |i| (want(i), 0.0), 0.0)
}

/// The comparison behind [`compare`] and [`compare_exact`], `expected` (reference, tolerance)
/// pairs given by index. Outputs are compared in parallel (a gigabyte-sized copy took over a
/// second per side on one core) and merged in output order, so the result, including the
/// tolerance reported (the first at the largest error-to-tolerance ratio), is one pass's.
fn compare_indexed<G: Copy + Into<f64> + Sync>(
    got: &[G],
    expected: usize,
    pair: impl Fn(usize) -> (f64, f64) + Sync,
    first_tolerance: f64,
) -> Verification {
    let checked = got.len().min(expected);
    let (max_error, (_, tolerance), ok) = got[..checked]
        .par_iter()
        .enumerate()
        .map(|(i, g)| {
            let (w, t) = pair(i);
            let g: f64 = (*g).into();
            let err = if g.is_finite() {
                (g - w).abs()
            } else {
                f64::INFINITY
            };
            let ratio = if t > 0.0 {
                err / t
            } else if err > 0.0 {
                f64::INFINITY
            } else {
                0.0
            };
            // NaN-safe: an error that is not <= the tolerance (including NaN) fails.
            (err, (ratio, t), err <= t)
        })
        .reduce(
            || (0.0, (0.0, first_tolerance), true),
            // An earlier output keeps the worst ratio on a tie, as a single pass would.
            |(e1, w1, ok1), (e2, w2, ok2)| {
                let worst = if w2.0 > w1.0 { w2 } else { w1 };
                (e1.max(e2), worst, ok1 && ok2)
            },
        );
    Verification {
        ok: got.len() >= expected && ok,
        max_error,
        tolerance,
        checked: expected,
    }
}

/// The words of `got` (u32 bit patterns carried in floats) against the exact reference.
pub fn compare_words(got: &[f32], want: &[f64]) -> Verification {
    let mut max_error = 0.0f64;
    for (g, w) in got.iter().zip(want) {
        max_error = max_error.max((f64::from(g.to_bits()) - w).abs());
    }
    Verification {
        ok: got.len() >= want.len() && max_error == 0.0,
        max_error,
        tolerance: 0.0,
        checked: want.len().min(got.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_inputs_are_seeded_and_not_zero() {
        let a = random_vector(1000, 7);
        assert_eq!(a, random_vector(1000, 7));
        assert_ne!(a, random_vector(1000, 8));
        assert!(a.iter().any(|x| *x != 0.0));
        assert!(a.iter().any(|x| *x < 0.0) && a.iter().any(|x| *x > 0.0));
    }

    #[test]
    fn random_blocks_do_not_depend_on_length_or_cores() {
        // The first block is one generator's sequence, as before blocks existed.
        let mut rng = SmallRng::seed_from_u64(3);
        let one: Vec<f32> = (0..100).map(|_| rng.gen_range(-1.0f32..1.0f32)).collect();
        assert_eq!(random_vector(100, 3), one);
        // A longer vector starts with a shorter one, block for block.
        let long = random_vector(3 * RANDOM_BLOCK + 5, 3);
        let short = random_vector(2 * RANDOM_BLOCK + 1, 3);
        assert_eq!(&long[..short.len()], &short[..]);
        assert_ne!(long[..RANDOM_BLOCK], long[RANDOM_BLOCK..2 * RANDOM_BLOCK]);
    }

    #[test]
    fn the_parallel_matvec_reference_is_the_row_by_row_sum() {
        let (rows, cols) = (3001, 700);
        let m = random_vector(rows * cols, 1);
        let v = random_vector(cols, 2);
        let (w, a) = matvec(&m, &v, rows, cols);
        for r in [0, 1, 1497, rows - 1] {
            let terms = m[r * cols..(r + 1) * cols].iter().zip(&v);
            let p: Vec<f64> = terms.map(|(x, y)| f64::from(*x) * f64::from(*y)).collect();
            assert_eq!(w[r], p.iter().fold(0.0, |s, t| s + t));
            assert_eq!(a[r], p.iter().fold(0.0, |s, t| s + t.abs()));
        }
    }

    #[test]
    fn matvec_reference_small() {
        let m = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let v = [1.0, -1.0, 2.0];
        let (w, a) = matvec(&m, &v, 2, 3);
        assert_eq!(w, vec![5.0, 11.0]);
        assert_eq!(a, vec![9.0, 21.0]);
    }

    #[test]
    fn tolerance_grows_with_length() {
        assert!(tolerance_factor(1 << 20) > tolerance_factor(1 << 10));
        assert!(tolerance_factor(1) > 0.0);
    }

    #[test]
    fn compare_catches_nan_and_errors() {
        let v = compare(&[1.0, 2.0], &[1.0, 2.0], &[0.0, 0.0]);
        assert!(v.ok && v.max_error == 0.0);
        let v = compare(&[1.0, f32::NAN], &[1.0, 2.0], &[0.1, 0.1]);
        assert!(!v.ok && v.max_error.is_infinite());
        let v = compare(&[1.0, 2.5], &[1.0, 2.0], &[0.1, 0.1]);
        assert!(!v.ok && (v.max_error - 0.5).abs() < 1e-12);
        let v = compare(&[1.0], &[1.0, 2.0], &[0.1, 0.1]);
        assert!(!v.ok, "short output must fail");
    }

    #[test]
    fn a_comparison_over_many_chunks_reports_what_one_pass_would() {
        const COMPARE_CHUNK: usize = 1 << 18;
        // Three chunks and a bit; the worst ratio appears twice, in chunk 1 and chunk 2: the
        // earlier one's tolerance is reported, as a front-to-back pass finds it first.
        let n = 3 * COMPARE_CHUNK + 17;
        let want: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let mut got: Vec<f32> = want.iter().map(|w| *w as f32).collect();
        let mut tol = vec![1.0; n];
        let (early, late) = (COMPARE_CHUNK + 5, 2 * COMPARE_CHUNK + 9);
        got[early] += 0.5;
        tol[early] = 2.0;
        got[late] += 0.25;
        tol[late] = 1.0;
        let v = compare(&got, &want, &tol);
        assert!(v.ok);
        assert_eq!((v.tolerance, v.max_error, v.checked), (2.0, 0.5, n));
        // One wrong output in the last, partial chunk fails the whole comparison.
        got[n - 1] = f32::NAN;
        let v = compare(&got, &want, &tol);
        assert!(!v.ok && v.max_error.is_infinite());
        // An exact comparison by index sees a single flipped value anywhere.
        let exact = |i: usize| i as f64;
        let mut copy: Vec<f32> = (0..n).map(|i| i as f32).collect();
        assert!(compare_exact(&copy, n, exact).ok);
        copy[2 * COMPARE_CHUNK] = -1.0;
        assert!(!compare_exact(&copy, n, exact).ok);
        assert!(
            !compare_exact(&copy[..n - 1], n, exact).ok,
            "a short copy fails"
        );
    }

    #[test]
    fn float_sum_of_random_data_is_within_tolerance() {
        let x = random_vector(100_000, 3);
        let (s, a) = sum(&x);
        let f32_sum: f32 = x.iter().sum();
        assert!((f64::from(f32_sum) - s).abs() <= tolerance_factor(100_000) * a);
    }

    #[test]
    fn fma_chain_converges_to_fixed_point() {
        // x -> x*m + b converges to b / (1 - m); 8 chains.
        let a = 0.0f32;
        let fixed = 0.5 / (1.0 - f64::from(0.999f32));
        let r = fma_chain(a, 200_000);
        assert!((r - 8.0 * fixed).abs() / (8.0 * fixed) < 1e-6, "{r}");
    }

    #[test]
    fn words_are_compared_bit_for_bit() {
        let want = [3.0, 4_000_000_000.0];
        let got = [f32::from_bits(3), f32::from_bits(4_000_000_000)];
        assert!(compare_words(&got, &want).ok);
        let off = [f32::from_bits(3), f32::from_bits(4_000_000_001)];
        let v = compare_words(&off, &want);
        assert!(!v.ok && v.max_error == 1.0);
        assert!(!compare_words(&got[..1], &want).ok, "a short result fails");
        // A NaN poison is a word like any other, and not the right one.
        assert!(!compare_words(&[f32::NAN, got[1]], &want).ok);
    }
}
