//! The SGEMM family: C = A·B with A, B and C all N×N, row-major, float32. Size `N` means the
//! N×N×N product; the metric is GFLOP/s with 2·N³ floating-point operations per run.
//!
//! Verification computes an f64 reference for a seeded sample of output elements (a full N³
//! reference at N = 4096 would take minutes of CPU time per configuration), always including
//! the first and the last element, and accepts each within the reduction tolerance of
//! [`reference::tolerance_factor`] for a dot product of length K = N.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::backend::fake::FakeLaunch;
use crate::backend::{self, Arg};
use crate::families::error::WorkloadError;
use crate::families::family::VendorOp;
use crate::families::family::{bad_size, vector_size, Family, FamilySpec, InputChoice, QuickSize};
use crate::families::footprint::{mul, plain, Footprint};
use crate::families::plan::{Build, Built, ExecError, Inputs};
use crate::families::reference;
use crate::families::variant::GroupRule::*;
use crate::families::variant::{exact_local, pow2, v, Variant};
use crate::rows::{FamilyId, Metric, Size};

pub mod tiles;

/// A register-blocked variant, retiled by the SG_* defines (`tiles.rs`); the kernel refuses to
/// compile at a work-group size that does not match its tile, so the rule here is the range.
const fn blocked(name: &'static str, kernel: &'static str, about: &'static str) -> Variant {
    pow2(v(FamilyId::Sgemm, name, kernel, Tiles, about), 64, 1024)
}

const VARIANTS: [Variant; 3] = [
    exact_local(
        v(
            FamilyId::Sgemm,
            "tiled16",
            "sgemm_tiled16",
            Tiles,
            "16x16 shared-memory tiles, one output per work-item (N a multiple of 16)",
        ),
        256,
    ),
    Variant {
        alternative: Some("blocked-vec"),
        ..blocked(
            "blocked",
            "sgemm_blocked",
            "128x128 block tile, K-step 8, 8x8 register micro-tile, float4 loads (N a \
             multiple of 128; SG_* defines retile it)",
        )
    },
    // `blocked` with its tiles declared as float4 arrays: each tile read is a vector variable,
    // not a vector read through a cast pointer (explain's fix for `blocked`).
    blocked(
        "blocked-vec",
        "sgemm_blocked_vec",
        "blocked with its shared tiles declared as float4 arrays, so every tile read is a \
         vector variable (N a multiple of 128; SG_* defines retile it)",
    ),
];

/// Output elements checked of a larger C; a smaller one is checked whole.
pub const SAMPLE: usize = 1024;

/// The square output tile one work-group computes, by variant (the kernels' SG_TS and SG_BM).
pub fn tile(variant: &str) -> u64 {
    if variant == "tiled16" {
        16
    } else {
        128
    }
}

/// Seeded random A and B in [-1, 1), and the reference at a seeded sample of positions.
pub fn problem(size: Size, seed: u64) -> Inputs {
    let n = size.rows as usize;
    let a = reference::random_vector(n * n, seed);
    let b = reference::random_vector(n * n, seed.wrapping_add(1));
    let sample = sample_positions(n * n, seed.wrapping_add(2));
    let f = reference::tolerance_factor(size.rows);
    let (want, tolerances) = sample
        .iter()
        .map(|&p| {
            let (v, abs) = element(&a, &b, n, p / n.max(1), p % n.max(1));
            (v, f * abs)
        })
        .unzip();
    Inputs::new(size, a, b)
        .with_reference(want, tolerances)
        .with_sample(sample)
}

/// Every position of a small C; otherwise the first, the last and `SAMPLE - 2` seeded ones.
pub fn sample_positions(len: usize, seed: u64) -> Vec<usize> {
    if len <= SAMPLE {
        return (0..len).collect();
    }
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut p: Vec<usize> = vec![0, len - 1];
    p.extend((2..SAMPLE).map(|_| rng.gen_range(0..len)));
    p
}

/// `C[row][col] = Σ_k A[row][k]·B[k][col]` in f64, and its terms' summed magnitudes.
pub fn element(a: &[f32], b: &[f32], n: usize, row: usize, col: usize) -> (f64, f64) {
    (0..n).fold((0.0, 0.0), |(s, abs), k| {
        let p = f64::from(a[row * n + k]) * f64::from(b[k * n + col]);
        (s + p, abs + p.abs())
    })
}

/// The whole product in f64 (the fake backend's emulation; small N only).
fn full(a: &[f32], b: &[f32], n: usize) -> Vec<f32> {
    (0..n * n)
        .map(|p| element(a, b, n, p / n, p % n).0 as f32)
        .collect()
}

pub struct Sgemm;

/// `sgemm_*(a, b, c, n)`: the whole product.
fn emulate_product(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let c = full(l.read(0)?, l.read(1)?, l.count(3)?);
    l.write(2, c)
}

impl Family for Sgemm {
    fn spec(&self) -> &FamilySpec {
        const SPEC: FamilySpec = FamilySpec {
            default_size: "1024",
            vendor_ops: &[VendorOp {
                name: "sgemm",
                variant: None,
            }],
            quick_size: Some(QuickSize::same("512")),
            variants: &VARIANTS,
            tuning: Some(&Sgemm),
            // Multiples of both tiles (16 and 128); the last one has several tiles per row.
            test_sizes: &[Size::vector(128), Size::vector(384)],
            emulations: &[("sgemm_*", emulate_product)],
            ..FamilySpec::new(FamilyId::Sgemm, "sgemm", Metric::Flops)
        };
        &SPEC
    }

    /// Bytes (A and B read once, C written once: the least any SGEMM moves) and flops (2·N³).
    fn work(&self, _variant: &str, size: Size, _global: u64) -> (u64, u64) {
        let nn = size.rows.saturating_mul(size.rows);
        let flops = nn.saturating_mul(size.rows).saturating_mul(2);
        (nn.saturating_mul(12), flops)
    }

    fn footprint(&self, size: Size) -> Footprint {
        let nn = mul(size.rows, size.rows);
        plain(mul(nn, 2), nn, 0, 0).with_largest(nn)
    }

    /// N a multiple of the variant's tile, N² within the kernels' 32-bit indices.
    fn check_size(&self, variant: &Variant, size: Size) -> Result<(), WorkloadError> {
        let (n, t) = (size.rows, tile(variant.name));
        if n % t != 0 {
            let reason = format!(
                "N = {n} is not a multiple of {t}: each work-group computes a {t}x{t} tile of C \
                 and the kernel has no edge handling (use a multiple of {t})"
            );
            return Err(bad_size(variant, reason));
        }
        if n.saturating_mul(n) >= u64::from(u32::MAX) {
            let reason = format!(
                "N = {n} gives {} elements per matrix; kernels index with 32-bit integers",
                n.saturating_mul(n)
            );
            return Err(bad_size(variant, reason));
        }
        vector_size(variant, size)
    }

    /// One work-group per output tile.
    fn groups(&self, variant: &Variant, size: Size, _local: u32) -> u64 {
        let per_row = size.rows.div_ceil(tile(variant.name));
        per_row.saturating_mul(per_row)
    }

    fn inputs(&self, _: &'static Variant, size: Size, seed: u64, _: InputChoice<'_>) -> Inputs {
        problem(size, seed)
    }

    fn build(&self, cx: &mut Build<'_>) -> Result<Built, ExecError> {
        let k = cx.kernel()?;
        let inputs = cx.inputs;
        let n = inputs.size.rows as usize;
        let a = cx.upload(&inputs.a)?;
        let b = cx.upload(&inputs.b)?;
        let c = cx.output(n * n)?;
        let mut args: Vec<Arg> = [a, b, c].map(Arg::Buffer).into();
        args.push(Arg::U32(n as u32));
        Ok(Built::into(vec![cx.launch(k, args)], c, n * n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::{find_variant, FamilyId};

    fn f32_product(a: &[f32], b: &[f32], n: usize) -> Vec<f32> {
        let mut c = vec![0.0f32; n * n];
        for i in 0..n {
            for k in 0..n {
                for j in 0..n {
                    c[i * n + j] += a[i * n + k] * b[k * n + j];
                }
            }
        }
        c
    }

    #[test]
    fn reference_of_a_small_product() {
        // [1 2; 3 4] · [5 6; 7 8] = [19 22; 43 50]
        let (a, b) = ([1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]);
        assert_eq!(full(&a, &b, 2), vec![19.0, 22.0, 43.0, 50.0]);
        assert_eq!(element(&a, &[5.0, -6.0, 7.0, 8.0], 2, 0, 1), (10.0, 22.0));
    }

    #[test]
    fn a_float32_product_passes_and_a_wrong_element_fails() {
        let n = 64;
        let p = problem(Size::vector(n as u64), 9);
        let mut c = f32_product(&p.a, &p.b, n);
        assert!(p.sample.len() > SAMPLE / 2, "64x64 is sampled");
        let v = p.compare(&c);
        assert!(v.ok, "{v:?}");
        // The last element is always sampled: one wrong output there must fail.
        let last = n * n - 1;
        c[last] += 0.01;
        let v = p.compare(&c);
        assert!(!v.ok, "{v:?}");
        c[last] = f32::NAN;
        assert!(!p.compare(&c).ok);
    }

    #[test]
    fn a_transposed_operand_fails() {
        let n = 32;
        let p = problem(Size::vector(n as u64), 3);
        let bt: Vec<f32> = (0..n * n).map(|i| p.b[(i % n) * n + i / n]).collect();
        let c = f32_product(&p.a, &bt, n);
        assert!(!p.compare(&c).ok);
    }

    #[test]
    fn samples_are_seeded_and_hold_both_ends() {
        let s = sample_positions(1 << 24, 5);
        assert_eq!(s, sample_positions(1 << 24, 5));
        assert_eq!(s.len(), SAMPLE);
        assert!(s.contains(&0) && s.contains(&((1 << 24) - 1)));
        assert_eq!(sample_positions(100, 5), (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn sizes_must_be_multiples_of_the_tile() {
        let blocked = find_variant(FamilyId::Sgemm, "blocked").unwrap();
        let tiled = find_variant(FamilyId::Sgemm, "tiled16").unwrap();
        assert!(Sgemm.check_size(blocked, Size::vector(4096)).is_ok());
        let e = Sgemm
            .check_size(blocked, Size::vector(4000))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("multiple of 128") && e.contains("sgemm/blocked"),
            "{e}"
        );
        assert!(Sgemm.check_size(tiled, Size::vector(48)).is_ok());
        assert!(Sgemm.check_size(tiled, Size::vector(65536)).is_err());
        assert_eq!(Sgemm.groups(blocked, Size::vector(4096), 256), 32 * 32);
        assert_eq!(Sgemm.work("", Size::vector(4096), 0).1, 2 * 4096u64.pow(3));
    }
}
