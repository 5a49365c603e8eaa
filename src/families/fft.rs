//! The 512-point forward FFT family (the kernel behind Fang et al. 2011, Table V): its size
//! rule, its work count, its f64 reference and its verification.
//!
//! The size is the total number of complex points `N`, a multiple of 512: `N / 512`
//! independent transforms, one per work-group of 64, of interleaved `(re, im)` f32 pairs
//! (`2 N` floats in and out). Work is SHOC's convention: `5 N log2(512)` flops (the radix-2
//! operation count, whatever algorithm runs) and `16 N` bytes (each point read and written).
//!
//! Each checked batch is transformed on the CPU in f64 (radix-2, tested against an exact DFT):
//! every batch up to [`CHECK_ALL_UP_TO`] batches, past that a seeded sample of that many
//! (always the first and the last), so a 2^25-point run verifies in about a second. Each real
//! and imaginary part of a bin passes when `|got - ref| <= 2 eps32 (log2 512 + 1) sum_n |x_n|`:
//! float32 rounding grows with the stages (log2 512), and `sum_n |x_n|` bounds every bin of the
//! batch. A wrong bin or twiddle, a swapped batch, or a NaN (outputs are poisoned before every
//! verified run) is off by a multiple of the data's magnitude and fails.

use rand::rngs::SmallRng;
use rand::seq::index::sample;
use rand::SeedableRng;

use crate::backend::fake::FakeLaunch;
use crate::backend::{self, Arg};
use crate::families::error::WorkloadError;
use crate::families::family::{
    bad_size, vector_size, vectors, Family, FamilySpec, InputChoice, QuickSize,
};
use crate::families::footprint::{plain, Footprint};
use crate::families::plan::{Build, Built, ExecError, Inputs};
use crate::families::reference::{random_vector, EPS32};
use crate::families::variant::{exact_local, v, GroupRule, Variant};
use crate::rows::{FamilyId, Metric, Size};

/// Points per transform.
pub const POINTS: usize = 512;
/// log2 of [`POINTS`]: the stage count of the flop convention and of the tolerance.
pub const LOG2_POINTS: u32 = 9;
/// Work-items per transform: each does 8 points per pass.
pub const LOCAL: u32 = 64;
/// Batches checked at most (all of them below this count).
pub const CHECK_ALL_UP_TO: usize = 4096;

/// The one variant: a work-group of exactly 64 per 512-point batch.
pub const VARIANT: Variant = exact_local(
    v(
        FamilyId::Fft,
        "fft512",
        "fft512_forward",
        GroupRule::Cover {
            per_item: POINTS as u32 / LOCAL,
        },
        "SHOC-style 512-point forward FFT: 64 work-items, radix-8 in registers, 3 passes",
    ),
    LOCAL,
);

/// One 512-point forward transform in f64, `X[k] = sum_n x[n] exp(-2 pi j n k / 512)`, of
/// interleaved f32 input; returns interleaved (re, im). Iterative radix-2.
pub fn forward_f64(batch: &[f32]) -> Vec<f64> {
    let n = batch.len() / 2;
    let bits = n.trailing_zeros();
    let mut re = vec![0.0f64; n];
    let mut im = vec![0.0f64; n];
    for i in 0..n {
        let r = i.reverse_bits() >> (usize::BITS - bits);
        re[r] = f64::from(batch[2 * i]);
        im[r] = f64::from(batch[2 * i + 1]);
    }
    let mut len = 2;
    while len <= n {
        let step = -2.0 * std::f64::consts::PI / len as f64;
        for start in (0..n).step_by(len) {
            for k in 0..len / 2 {
                let (s, c) = (step * k as f64).sin_cos();
                let (a, b) = (start + k, start + k + len / 2);
                let tr = re[b] * c - im[b] * s;
                let ti = re[b] * s + im[b] * c;
                re[b] = re[a] - tr;
                im[b] = im[a] - ti;
                re[a] += tr;
                im[a] += ti;
            }
        }
        len *= 2;
    }
    re.iter().zip(&im).flat_map(|(r, i)| [*r, *i]).collect()
}

/// The twiddle table both kernels read: `exp(-2 pi j m / 512)` for `m < 512`, interleaved,
/// computed in f64 and rounded once to f32.
pub fn twiddles() -> Vec<f32> {
    (0..POINTS)
        .flat_map(|m| {
            let (s, c) = (-2.0 * std::f64::consts::PI * m as f64 / POINTS as f64).sin_cos();
            [c as f32, s as f32]
        })
        .collect()
}

/// The batches that verification checks, ascending: all, or a seeded sample that always
/// holds the first and the last.
pub fn checked_batches(batches: usize) -> Vec<usize> {
    if batches <= CHECK_ALL_UP_TO {
        return (0..batches).collect();
    }
    let mut rng = SmallRng::seed_from_u64(0x5f3759df);
    let mut picked: Vec<usize> = sample(&mut rng, batches - 2, CHECK_ALL_UP_TO - 2)
        .into_iter()
        .map(|b| b + 1)
        .collect();
    picked.push(0);
    picked.push(batches - 1);
    picked.sort_unstable();
    picked
}

/// The f64 reference of the checked batches of interleaved input `x`, concatenated, and a
/// tolerance per value (see the module docs).
pub fn reference(x: &[f32]) -> (Vec<f64>, Vec<f64>) {
    let floats = 2 * POINTS;
    let batches = x.len() / floats;
    let mut want = Vec::new();
    let mut tol = Vec::new();
    for b in checked_batches(batches) {
        let batch = &x[b * floats..(b + 1) * floats];
        let magnitude: f64 = batch
            .chunks_exact(2)
            .map(|c| f64::from(c[0]).hypot(f64::from(c[1])))
            .sum();
        let t = 2.0 * EPS32 * f64::from(LOG2_POINTS + 1) * magnitude;
        want.extend(forward_f64(batch));
        tol.extend(std::iter::repeat_n(t, floats));
    }
    (want, tol)
}

/// Every batch of `x` transformed (f64, rounded to f32): what the kernel computes, for the
/// fake backend. `points` bounds the batches read.
fn forward_all(x: &[f32], points: usize) -> Vec<f32> {
    let floats = 2 * POINTS;
    x[..(2 * points).min(x.len())]
        .chunks_exact(floats)
        .flat_map(forward_f64)
        .map(|v| v as f32)
        .collect()
}

pub struct Fft;

/// `fft512_forward(x, y, _, points)`: every transform of the batch.
fn emulate_forward(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let y = forward_all(l.read(0)?, l.count(3)?);
    l.write(1, y)
}

impl Family for Fft {
    fn spec(&self) -> &FamilySpec {
        const SPEC: FamilySpec = FamilySpec {
            quick_size: Some(QuickSize::same("2^16")),
            variants: std::slice::from_ref(&VARIANT),
            test_sizes: &vectors([512, 512 * 7]),
            emulations: &[("fft512_forward", emulate_forward)],
            ..FamilySpec::new(FamilyId::Fft, "fft", Metric::Flops)
        };
        &SPEC
    }

    /// SHOC's counts (see the module docs).
    fn work(&self, _variant: &str, size: Size, _global: u64) -> (u64, u64) {
        let points = size.rows;
        (
            points.saturating_mul(16),
            points.saturating_mul(5 * u64::from(LOG2_POINTS)),
        )
    }

    fn footprint(&self, size: Size) -> Footprint {
        let floats = size.rows.saturating_mul(2);
        plain(floats, floats, floats, 0)
    }

    fn check_size(&self, variant: &Variant, size: Size) -> Result<(), WorkloadError> {
        vector_size(variant, size)?;
        // The kernels' 32-bit `uint n` must index the `2 N` floats.
        let n = size.rows;
        if !n.is_multiple_of(POINTS as u64) {
            return Err(bad_size(
                variant,
                format!(
                    "{n} points is not a multiple of {POINTS}: the size is the total number of \
                     complex points, one {POINTS}-point transform per work-group (e.g. 2^24)"
                ),
            ));
        }
        if n.saturating_mul(2) >= u64::from(u32::MAX) {
            return Err(bad_size(
                variant,
                format!(
                    "{n} points are {} floats (re, im); kernels index with 32-bit integers",
                    n.saturating_mul(2)
                ),
            ));
        }
        Ok(())
    }

    /// `N` complex points as `2 N` interleaved floats; `b` holds the twiddles. The reference
    /// is of the checked batches' floats.
    fn inputs(&self, _: &'static Variant, size: Size, seed: u64, _: InputChoice<'_>) -> Inputs {
        let a = random_vector(2 * size.rows as usize, seed);
        let (reference, tolerances) = reference(&a);
        let floats = 2 * POINTS;
        let batches = checked_batches(size.rows as usize / POINTS).into_iter();
        let sample = batches.flat_map(|b| b * floats..(b + 1) * floats).collect();
        Inputs::new(size, a, twiddles())
            .with_reference(reference, tolerances)
            .with_sample(sample)
    }

    fn build(&self, cx: &mut Build<'_>) -> Result<Built, ExecError> {
        let k = cx.kernel()?;
        let inputs = cx.inputs;
        let n = inputs.size.rows as usize;
        let x = cx.upload(&inputs.a)?;
        let out = cx.output(2 * n)?;
        let tw = cx.upload(&inputs.b)?;
        let mut args: Vec<Arg> = [x, out, tw].map(Arg::Buffer).into();
        args.push(Arg::U32(n as u32));
        Ok(Built::into(vec![cx.launch(k, args)], out, 2 * n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::reference::random_vector;

    /// The exact DFT in f64 (O(n^2)): the definition the radix-2 reference is tested against.
    fn dft_f64(batch: &[f32]) -> Vec<f64> {
        let n = batch.len() / 2;
        let mut out = Vec::with_capacity(2 * n);
        for k in 0..n {
            let (mut sr, mut si) = (0.0f64, 0.0f64);
            for j in 0..n {
                // (j k) mod n keeps the angle small, so the twiddle is exact to f64 rounding.
                let ang = -2.0 * std::f64::consts::PI * ((j * k) % n) as f64 / n as f64;
                let (s, c) = ang.sin_cos();
                let (xr, xi) = (f64::from(batch[2 * j]), f64::from(batch[2 * j + 1]));
                sr += xr * c - xi * s;
                si += xr * s + xi * c;
            }
            out.push(sr);
            out.push(si);
        }
        out
    }

    fn max_diff(a: &[f64], b: &[f64]) -> f64 {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max)
    }

    #[test]
    fn an_impulse_transforms_to_a_constant() {
        let mut x = vec![0.0f32; 2 * POINTS];
        x[0] = 1.0;
        let y = forward_f64(&x);
        for k in 0..POINTS {
            assert!(
                (y[2 * k] - 1.0).abs() < 1e-12 && y[2 * k + 1].abs() < 1e-12,
                "bin {k}"
            );
        }
    }

    #[test]
    fn a_single_tone_lands_in_one_bin() {
        let f = 37usize;
        let x: Vec<f32> = (0..POINTS)
            .flat_map(|n| {
                let ang = 2.0 * std::f64::consts::PI * (f * n) as f64 / POINTS as f64;
                [ang.cos() as f32, ang.sin() as f32]
            })
            .collect();
        let y = forward_f64(&x);
        for k in 0..POINTS {
            let mag = y[2 * k].hypot(y[2 * k + 1]);
            let want = if k == f { POINTS as f64 } else { 0.0 };
            assert!((mag - want).abs() < 1e-4, "bin {k}: {mag}");
        }
    }

    #[test]
    fn radix2_matches_the_exact_dft() {
        let x = random_vector(2 * POINTS, 9);
        assert!(max_diff(&forward_f64(&x), &dft_f64(&x)) < 1e-9);
    }

    #[test]
    fn sizes_must_be_whole_transforms() {
        let size_problem = |n| Fft.check_size(&VARIANT, Size::vector(n));
        assert!(size_problem(1 << 24).is_ok());
        let e = size_problem(1000).unwrap_err().to_string();
        assert!(e.contains("multiple of 512"), "{e}");
        assert!(size_problem(1 << 31).is_err());
    }

    #[test]
    fn twiddles_are_unit_roots() {
        let w = twiddles();
        assert_eq!((w[0], w[1]), (1.0, 0.0));
        assert!((w[2 * 128] - 0.0).abs() < 1e-7 && (w[2 * 128 + 1] + 1.0).abs() < 1e-7);
    }

    #[test]
    fn work_follows_shoc() {
        assert_eq!(
            Fft.work("fft512", Size::vector(512), 0),
            (512 * 16, 5 * 512 * 9)
        );
    }

    #[test]
    fn large_runs_check_a_seeded_sample_with_both_ends() {
        assert_eq!(checked_batches(3), vec![0, 1, 2]);
        let s = checked_batches(65536);
        assert_eq!(s.len(), CHECK_ALL_UP_TO);
        assert_eq!((s[0], *s.last().unwrap()), (0, 65535));
        assert!(s.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(s, checked_batches(65536));
    }

    #[test]
    fn float32_output_passes_and_a_wrong_bin_fails() {
        let size = Size::vector(2 * POINTS as u64);
        let inputs = Fft.inputs(&VARIANT, size, 4, crate::families::tests::no_matrix());
        let mut got = forward_all(&inputs.a, 2 * POINTS);
        assert!(inputs.compare(&got).ok);
        got[2 * POINTS + 10] += 0.01;
        assert!(!inputs.compare(&got).ok);
        assert!(!inputs.compare(&got[..POINTS]).ok);
    }
}
