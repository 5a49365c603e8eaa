//! Sum reduction: the ladder of seven kernels (interleaved to completely unrolled), a tuned
//! kernel, and a one-step experiment on `tuned`'s two timed launches (partial sums per
//! work-group, then `reduce_final`, one work-group, adds them), where small reductions are
//! 4-7% (a constant 0.1-1 µs) faster on NVIDIA's OpenCL than on CUDA. `first-pass` times the
//! first launch alone at `tuned`'s shape (the host adds its partial sums to check them) and
//! `final` the second (over N floats, at N = `tuned`'s group count): if `first-pass` is fair
//! and `final` carries the gap, the second launch is its cause.

use crate::backend::fake::FakeLaunch;
use crate::backend::{self, Arg, LaunchShape};
use crate::families::emulation::strided_sums;
use crate::families::family::{vectors, Family, FamilySpec, QuickSize, Tuning, VendorOp};
use crate::families::footprint::{mul, plain, Footprint};
use crate::families::plan::{Build, Built, ExecError, Inputs, Ran};
use crate::families::reference::{self, Verification};
use crate::families::tune_space::{param as p, Constraint, Knob, SpaceDef, SpaceKind};
use crate::families::variant::GroupRule::*;
use crate::families::variant::{experiment, points, pow2, v, GroupRule, Variant};
use crate::rows::{FamilyId, Metric, Size};

/// The variant names, as studies spell them.
pub const FIRST_PASS: &str = "first-pass";
pub const FINAL: &str = "final";

/// A reduction kernel for power-of-two work-groups of `min..=max` work-items.
const fn reduction(
    name: &'static str,
    kernel: &'static str,
    rule: GroupRule,
    [min, max]: [u32; 2],
    about: &'static str,
) -> Variant {
    pow2(v(FamilyId::Reduce, name, kernel, rule, about), min, max)
}

/// The ladder and the tuned kernel, then the two launches of `tuned` alone.
const VARIANTS: [Variant; 10] = [
    reduction(
        "interleaved-divergent",
        "reduce_interleaved_divergent",
        Cover { per_item: 1 },
        [1, u32::MAX],
        "ladder 1: interleaved addressing, divergent branches",
    ),
    reduction(
        "interleaved-bank",
        "reduce_interleaved_bank",
        Cover { per_item: 1 },
        [1, u32::MAX],
        "ladder 2: interleaved addressing, bank conflicts",
    ),
    reduction(
        "sequential",
        "reduce_sequential",
        Cover { per_item: 1 },
        [1, u32::MAX],
        "ladder 3: sequential addressing",
    ),
    reduction(
        "first-add",
        "reduce_first_add",
        Cover { per_item: 2 },
        [1, u32::MAX],
        "ladder 4: first add during load",
    ),
    reduction(
        "unroll-last-warp",
        "reduce_unroll_last_warp",
        Cover { per_item: 2 },
        [64, u32::MAX],
        "ladder 5: last warp unrolled (synchronised)",
    ),
    reduction(
        "complete-unroll",
        "reduce_complete_unroll",
        Cover { per_item: 2 },
        [64, 1024],
        "ladder 6: completely unrolled for the compile-time work-group size",
    ),
    reduction(
        "multi",
        "reduce_multi",
        PerComputeUnit(8),
        [64, 1024],
        "ladder 7: several elements per work-item (grid-stride)",
    ),
    reduction(
        "tuned",
        "reduce_tuned",
        PerComputeUnit(8),
        [64, 1024],
        "tuned: float4 grid-stride loads, warp-level reduction",
    ),
    experiment(reduction(
        FIRST_PASS,
        "reduce_tuned",
        PerComputeUnit(8),
        [64, 1024],
        "launch experiment: the tuned kernel's launch alone (its partial sums added on \
             the host), no second launch",
    )),
    experiment(points(
        reduction(
            FINAL,
            "reduce_final",
            Fixed(1),
            [1, 1024],
            "launch experiment: reduce_final alone, one work-group over N floats (the \
                 second launch of tuned at N = its group count)",
        ),
        &[],
    )),
];

/// Reductions up to this many floats are short enough for their two launches to matter.
const SMALL_REDUCTION: u64 = 1 << 20;

pub struct Reduce;

const REDUCE_RULES: &[Constraint] = &[
    Constraint::VariantLocal,
    Constraint::DeviceLocal,
    Constraint::EveryItemHasWork,
];
const TUNED: SpaceDef = SpaceDef::of(FamilyId::Reduce, "tuned", REDUCE_RULES);

/// `reduce/tuned`'s spaces: work-group size, groups, unroll and index width.
const SPACES: &[(SpaceKind, SpaceDef)] = &[
    TUNED.space(
        SpaceKind::Full,
        "tuned",
        "2^26",
        &[
            p("local", Knob::Local, &[64, 128, 256, 512, 1024]),
            p(
                "groups_per_cu",
                Knob::GroupsPerCu,
                &[1, 2, 3, 4, 6, 8, 12, 16, 24, 32],
            ),
            p("unroll.A", Knob::Unroll("A"), &[0, 1, 2, 4, 8, 16]),
            p("index", Knob::Index, &[32, 64]),
        ],
    ),
    TUNED.space(
        SpaceKind::Small,
        "tuned",
        "2^16",
        &[
            p("local", Knob::Local, &[64, 128]),
            p("groups_per_cu", Knob::GroupsPerCu, &[1, 2, 4, 8]),
            p("unroll.A", Knob::Unroll("A"), &[0, 4]),
            p("index", Knob::Index, &[32]),
        ],
    ),
];

/// `reduce_final(partial, out, groups)`: the sum of the partial sums.
fn emulate_final(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let (partial, groups) = (l.read(0)?, l.count(2)?);
    let (s, _) = reference::sum(&partial[..groups.min(partial.len())]);
    l.write(1, vec![s as f32])
}

/// A first pass `(x, partial, n)`: one partial sum per work-group.
fn emulate_pass(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let groups = l.shape.groups as usize;
    let sums = strided_sums(l.read(0)?, l.count(2)?, groups);
    l.write(1, sums)
}

impl Family for Reduce {
    fn spec(&self) -> &FamilySpec {
        const SPEC: FamilySpec = FamilySpec {
            vendor_ops: &[VendorOp {
                name: "sum",
                variant: None,
            }],
            quick_size: Some(QuickSize::same("2^20")),
            variants: &VARIANTS,
            tuning: Some(&Reduce),
            test_sizes: &vectors([1, 997, 4096, 100_003]),
            // The last pass sums the partial sums; every other pass makes one per work-group.
            emulations: &[("reduce_final", emulate_final), ("reduce_*", emulate_pass)],
            ..FamilySpec::new(FamilyId::Reduce, "reduce", Metric::Bandwidth)
        };
        &SPEC
    }

    /// `tuned` is two launches: `first-pass` times its first alone, `final` its second.
    fn launch_parts(&self, variant: &Variant) -> Option<(&'static str, &'static str)> {
        (variant.name == "tuned").then_some(("first-pass", "final"))
    }

    fn work(&self, _variant: &str, size: Size, _global: u64) -> (u64, u64) {
        (mul(size.rows, 4), size.rows)
    }

    fn footprint(&self, size: Size) -> Footprint {
        plain(size.rows, size.rows, 1, 0).with_largest(size.rows)
    }

    fn runtime_bound(&self, size: Size) -> bool {
        size.elements() <= SMALL_REDUCTION
    }

    fn build(&self, cx: &mut Build<'_>) -> Result<Built, ExecError> {
        let k = cx.kernel()?;
        let program = cx.program()?;
        let final_kernel = cx.backend.kernel(program, "reduce_final")?;
        let inputs = cx.inputs;
        let n = inputs.size.rows as u32;
        let shape = cx.side.shape;
        let x = cx.upload(&inputs.a)?;
        let groups = shape.groups as usize;
        let partial = cx.output(groups)?;
        let out = cx.output(1)?;
        let mut steps = vec![cx.launch(k, vec![Arg::Buffer(x), Arg::Buffer(partial), Arg::U32(n)])];
        // One work-group writes the whole sum: one launch, the same on both sides (and the
        // launch experiment's variants).
        let name = cx.variant.name;
        if one_launch(name, shape.groups) {
            return Ok(Built::into(steps, partial, result_len(name, shape.groups)));
        }
        let count = Arg::U32(shape.groups);
        steps.push(crate::families::plan::Step::Kernel {
            kernel: final_kernel,
            shape: LaunchShape::linear(1, shape.local),
            args: vec![Arg::Buffer(partial), Arg::Buffer(out), count],
        });
        let mut built = Built::into(steps, out, 1);
        built.outputs = vec![(partial, groups), (out, 1)];
        Ok(built)
    }

    fn check(&self, ran: &Ran, inputs: &Inputs, got: &[f32]) -> Verification {
        // `first-pass` leaves partial sums: not a whole reduction, so their total is checked.
        if ran.variant == FIRST_PASS {
            inputs.check_total(got)
        } else {
            inputs.compare(got)
        }
    }
}

impl Tuning for Reduce {
    fn spaces(&self) -> &'static [(SpaceKind, SpaceDef)] {
        SPACES
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::FamilyId;

    #[test]
    fn the_experiment_variants_are_one_launch_whatever_the_group_count() {
        assert!(one_launch(FIRST_PASS, 1056) && one_launch(FINAL, 4));
        assert!(one_launch("tuned", 1) && !one_launch("tuned", 1056));
        assert_eq!(result_len(FIRST_PASS, 1056), 1056);
        assert_eq!((result_len(FINAL, 7), result_len("tuned", 1)), (1, 1));
    }

    #[test]
    fn both_variants_are_in_the_family_table() {
        for name in [FIRST_PASS, FINAL] {
            let found = crate::families::find_variant(FamilyId::Reduce, name).unwrap();
            assert_eq!(found.name, name);
        }
        let tuned = crate::families::find_variant(FamilyId::Reduce, "tuned").unwrap();
        let first = crate::families::find_variant(FamilyId::Reduce, FIRST_PASS).unwrap();
        // The first pass is the tuned kernel at the tuned launch shape: one step differs.
        assert_eq!(
            (first.kernel, first.default_groups),
            (tuned.kernel, tuned.default_groups)
        );
    }
}
