//! Two pieces of guidance of NVIDIA's whitepaper "OpenCL Programming for the CUDA
//! Architecture" (sections "Avoiding Low-Throughput Instructions" and "Control Flow") as
//! one-step experiments: each variant is one kernel with one macro switch, which a study flips on
//! neither side, both sides or one side (`defines = { ... }`), so that a row differs from its
//! fair neighbour in that switch alone. The kernels are `kernels_*/guidance.*`. The switches,
//! `INDEX_SHIFT` of `index` and `BRANCH_BY_WARP` of `branch`, are 0 by default (division and
//! modulo; a branch divergent within every warp).
//!
//! Both compute u32 words from the work-item's index alone, checked exactly against the host's
//! wrapping arithmetic; `branch` passes when every word fits one of the two assignments of
//! paths to work-items (the switch picks one). Metric: G evaluations per second, one being one
//! step of a work-item's loop (the `flops` column counts 2 per step, as math counts its chain).

use crate::backend::fake::FakeLaunch;
use crate::backend::{self, Arg};
use crate::families::emulation::floats;
use crate::families::family::{vectors, Family, FamilySpec, InputChoice};
use crate::families::footprint::{mul, plain, Footprint};
use crate::families::plan::{Build, Built, ExecError, Inputs, Ran};
use crate::families::reference::{self, Verification};
use crate::families::variant::{bare, GroupRule, Variant};
use crate::rows::{FamilyId, Metric, Size};

const ID: FamilyId = FamilyId::new("guidance");

/// Loop steps per work-item: the kernels' `INDEX_STEPS` and `BRANCH_STEPS`.
pub const INDEX_STEPS: u32 = 64;
pub const BRANCH_STEPS: u32 = 256;

/// The grid width of `index`: a power of two, passed to the kernel at run time.
pub const WIDTH: u32 = 1024;

/// The warp width the kernel's `BRANCH_BY_WARP` branch follows (the preludes' `WARP_SIZE`).
const WARP: u32 = 32;

const VARIANTS: [Variant; 2] = [
    bare(
        ID,
        "index",
        "guidance_index",
        GroupRule::Cover { per_item: 1 },
        "index arithmetic: k / width and k % width (INDEX_SHIFT=0) or k >> log2 width and \
             k & (width - 1) (INDEX_SHIFT=1)",
    ),
    bare(
        ID,
        "branch",
        "guidance_branch",
        GroupRule::Cover { per_item: 1 },
        "two equal-length paths: branch on i % 2, divergent in every warp \
             (BRANCH_BY_WARP=0), or on (i / 32) % 2, uniform per warp (BRANCH_BY_WARP=1)",
    ),
];

/// What `guidance_index` writes for work-item `i` of `n`.
pub fn index_word(i: u32, n: u32) -> u32 {
    (0..INDEX_STEPS).fold(0u32, |acc, j| {
        let k = i.wrapping_add(j.wrapping_mul(n));
        acc.wrapping_add((k / WIDTH).wrapping_mul(3).wrapping_add(k % WIDTH))
    })
}

/// What `guidance_branch` writes for work-item `i` when it takes the second path or not.
pub fn branch_word(i: u32, second: bool) -> u32 {
    (0..BRANCH_STEPS).fold(i, |acc, _| {
        if second {
            (acc ^ (acc >> 15)).wrapping_mul(2_246_822_519)
        } else {
            acc.wrapping_mul(1_664_525).wrapping_add(1_013_904_223)
        }
    })
}

/// Which path work-item `i` takes: by its parity (divergent) or its warp's (uniform).
fn takes_second(i: usize, by_warp: bool) -> bool {
    let lane_or_warp = if by_warp { i / WARP as usize } else { i };
    lane_or_warp % 2 == 1
}

pub struct Guidance;

/// `guidance_index(out, n, width, log2 width)`: each work-item's word (either switch: the same).
fn emulate_index(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let n = l.count(1)? as u32;
    l.write(0, floats((0..n).map(|i| index_word(i, n))))
}

/// `guidance_branch(out, n)`: each work-item's word on the path its `BRANCH_BY_WARP` gives it.
fn emulate_branch(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let n = l.count(1)?;
    let by_warp = l.define("BRANCH_BY_WARP").is_some_and(|v| v.trim() != "0");
    let out = (0..n).map(|i| branch_word(i as u32, takes_second(i, by_warp)));
    l.write(0, floats(out))
}

impl Family for Guidance {
    fn spec(&self) -> &FamilySpec {
        const SPEC: FamilySpec = FamilySpec {
            default_size: "2^22",
            variants: &VARIANTS,
            // One work-item, one warp and a bit, sizes no work-group divides.
            test_sizes: &vectors([1, 33, 1000, 70_001]),
            emulations: &[
                ("guidance_index", emulate_index),
                ("guidance_branch", emulate_branch),
            ],
            // The variants compute different words: their references are kept apart.
            inputs_per_variant: true,
            ..FamilySpec::new(ID, "guidance", Metric::Evaluations)
        };
        &SPEC
    }

    fn work(&self, variant: &str, size: Size, _global: u64) -> (u64, u64) {
        let steps = if variant == "branch" {
            BRANCH_STEPS
        } else {
            INDEX_STEPS
        };
        (mul(size.rows, 4), mul(mul(size.rows, u64::from(steps)), 2))
    }

    /// The result and, for `branch`, two references (one per assignment of paths).
    fn footprint(&self, size: Size) -> Footprint {
        plain(0, size.rows, mul(size.rows, 2), 0)
    }

    fn inputs(&self, variant: &'static Variant, size: Size, _: u64, _: InputChoice<'_>) -> Inputs {
        let n = size.rows as usize;
        let mut want = vec![0u32; if variant.name == "branch" { 2 * n } else { n }];
        // `branch`: the first n words with each path taken by parity, the next n by warp.
        reference::on_every_core(&mut want, reference::RANDOM_BLOCK, |block, words| {
            let first = block * reference::RANDOM_BLOCK;
            for (at, w) in words.iter_mut().enumerate() {
                let k = first + at;
                *w = if variant.name == "branch" {
                    let i = k % n;
                    branch_word(i as u32, takes_second(i, k >= n))
                } else {
                    index_word(k as u32, n as u32)
                };
            }
        });
        Inputs::new(size, Vec::new(), Vec::new()).with_words(want)
    }

    fn build(&self, cx: &mut Build<'_>) -> Result<Built, ExecError> {
        let k = cx.kernel()?;
        let n = cx.inputs.size.rows as usize;
        let out = cx.output(n)?;
        let mut args = vec![Arg::Buffer(out), Arg::U32(n as u32)];
        if cx.variant.name != "branch" {
            args.extend([Arg::U32(WIDTH), Arg::U32(WIDTH.trailing_zeros())]);
        }
        Ok(Built::into(vec![cx.launch(k, args)], out, n))
    }

    fn check(&self, ran: &Ran, inputs: &Inputs, got: &[f32]) -> Verification {
        let want = &inputs.reference;
        if ran.variant != "branch" {
            return inputs.compare(got);
        }
        // Either assignment of paths, whole: by parity or by warp (parity's miss if neither).
        let n = want.len() / 2;
        let by_parity = reference::compare_words(got, &want[..n]);
        let by_warp = reference::compare_words(got, &want[n..]);
        if by_parity.ok || !by_warp.ok {
            by_parity
        } else {
            by_warp
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::tests::no_matrix;

    fn words(v: &[u32]) -> Vec<f32> {
        v.iter().map(|w| f32::from_bits(*w)).collect()
    }

    #[test]
    fn shifts_and_masks_give_what_division_gives() {
        for k in [0u32, 1, 1023, 1024, 4_000_000_000] {
            assert_eq!(k / WIDTH, k >> WIDTH.trailing_zeros());
            assert_eq!(k % WIDTH, k & (WIDTH - 1));
        }
        // n = 1: k = 0..63, all in row 0, so the columns add up.
        assert_eq!(index_word(0, 1), (0..64).sum::<u32>());
        // n = width: k = j * width, row j and column 0, so three times the rows.
        assert_eq!(index_word(0, WIDTH), 3 * (0..64).sum::<u32>());
    }

    #[test]
    fn the_two_paths_differ_and_the_assignments_too() {
        assert_ne!(branch_word(7, false), branch_word(7, true));
        assert!(takes_second(1, false) && !takes_second(1, true));
        assert!(takes_second(33, true) && !takes_second(31, true));
    }

    fn ran(variant: &'static str) -> Ran {
        Ran {
            variant,
            shape: crate::backend::LaunchShape::linear(1, 64),
            flags: vec![],
        }
    }

    #[test]
    fn a_branch_result_passes_by_parity_or_by_warp_and_nothing_else() {
        let n = 100usize;
        let inputs = Guidance.inputs(&VARIANTS[1], Size::vector(n as u64), 1, no_matrix());
        let by = |warp: bool| -> Vec<u32> {
            (0..n)
                .map(|i| branch_word(i as u32, takes_second(i, warp)))
                .collect()
        };
        assert!(
            Guidance
                .check(&ran("branch"), &inputs, &words(&by(false)))
                .ok
        );
        assert!(
            Guidance
                .check(&ran("branch"), &inputs, &words(&by(true)))
                .ok
        );
        // Half one assignment, half the other: neither.
        let mut mixed = by(false);
        mixed[64..].copy_from_slice(&by(true)[64..]);
        assert!(!Guidance.check(&ran("branch"), &inputs, &words(&mixed)).ok);
        let mut off = by(true);
        off[99] ^= 1;
        assert!(!Guidance.check(&ran("branch"), &inputs, &words(&off)).ok);
    }

    #[test]
    fn an_index_result_is_checked_word_for_word() {
        let n = 50u32;
        let inputs = Guidance.inputs(&VARIANTS[0], Size::vector(u64::from(n)), 1, no_matrix());
        let mut got: Vec<u32> = (0..n).map(|i| index_word(i, n)).collect();
        assert!(Guidance.check(&ran("index"), &inputs, &words(&got)).ok);
        got[0] += 1;
        assert!(!Guidance.check(&ran("index"), &inputs, &words(&got)).ok);
    }
}
