//! The one-step experiment on the two launches of a reduction: `reduce/tuned` is the tuned
//! kernel (partial sums, one per work-group) followed by `reduce_final` (one work-group adds
//! them), both timed. Small reductions are 4-7% faster on NVIDIA's OpenCL than on CUDA there,
//! a constant 0.1-1 µs. These two variants time each launch alone, with nothing else changed:
//!
//! - `first-pass`: the tuned kernel's launch alone, with the launch shape `tuned` gets; the
//!   host adds its partial sums to check them (as it does for the read kernel);
//! - `final`: `reduce_final` alone over N floats, in one work-group (N = the tuned launch's
//!   group count is the second launch of `tuned`).
//!
//! If `first-pass` is fair and `final` carries the gap, the second launch is its cause.

use super::{experiment, points, pow2, v, FamilyKind, GroupRule, Variant};

/// The variant names, as studies spell them.
pub const FIRST_PASS: &str = "first-pass";
pub const FINAL: &str = "final";

/// The variants (appended to the family table in `mod.rs`).
pub const VARIANTS: [Variant; 2] = [
    experiment(pow2(
        v(
            FamilyKind::Reduce,
            FIRST_PASS,
            "reduce_tuned",
            GroupRule::PerComputeUnit(8),
            "launch experiment: the tuned kernel's launch alone (its partial sums added on \
             the host), no second launch",
        ),
        64,
        1024,
    )),
    experiment(points(
        pow2(
            v(
                FamilyKind::Reduce,
                FINAL,
                "reduce_final",
                GroupRule::Fixed(1),
                "launch experiment: reduce_final alone, one work-group over N floats (the \
                 second launch of tuned at N = its group count)",
            ),
            1,
            1024,
        ),
        &[],
    )),
];

/// Whether a reduction of `variant` with `groups` work-groups is one launch: one work-group
/// sums everything itself, `final` is a single work-group's sum by construction (with more
/// groups each one writes the same total), and `first-pass` stops after its partial sums.
pub fn one_launch(variant: &str, groups: u32) -> bool {
    groups == 1 || variant == FIRST_PASS || variant == FINAL
}

/// How many floats the one launch leaves to check: the partial sums of `first-pass` (their
/// total is checked), one sum otherwise.
pub fn result_len(variant: &str, groups: u32) -> usize {
    if variant == FIRST_PASS {
        groups.max(1) as usize
    } else {
        1
    }
}

/// Whether the variant leaves partial sums (their total is checked, not one sum): not a whole
/// reduction, so never the family's best against a vendor's sum.
pub fn is_partial(variant: &str) -> bool {
    variant == FIRST_PASS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_experiment_variants_are_one_launch_whatever_the_group_count() {
        assert!(one_launch(FIRST_PASS, 1056) && one_launch(FINAL, 4));
        assert!(one_launch("tuned", 1) && !one_launch("tuned", 1056));
        assert_eq!(result_len(FIRST_PASS, 1056), 1056);
        assert_eq!((result_len(FINAL, 7), result_len("tuned", 1)), (1, 1));
        assert!(is_partial(FIRST_PASS) && !is_partial(FINAL));
    }

    #[test]
    fn both_variants_are_in_the_family_table() {
        for name in [FIRST_PASS, FINAL] {
            let found = super::super::find_variant(FamilyKind::Reduce, name).unwrap();
            assert_eq!(found.name, name);
        }
        let tuned = super::super::find_variant(FamilyKind::Reduce, "tuned").unwrap();
        let first = super::super::find_variant(FamilyKind::Reduce, FIRST_PASS).unwrap();
        // The first pass is the tuned kernel at the tuned launch shape: one step differs.
        assert_eq!(
            (first.kernel, first.default_groups),
            (tuned.kernel, tuned.default_groups)
        );
    }
}
