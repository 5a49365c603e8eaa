//! Matrix-vector multiply (the whitepaper's Listings 2-7, a tuned kernel, and the shape-aware
//! algorithms of `shapes` and `flat`): W = M V, M row-major `rows` x `cols`.

pub mod derive;
pub mod flat;
pub mod rules;
pub mod shapes;
mod split;
mod tune;

use crate::backend::fake::FakeLaunch;
use crate::backend::{self, Arg, DeviceInfo};
use crate::families::emulation::rounded;
use crate::families::error::WorkloadError;
use crate::families::family::{
    bad_size, nonzero_in_32_bits, Family, FamilySpec, InputChoice, QuickSize, RulePlan, Tuning,
    VendorOp,
};
use crate::families::footprint::{add, mul, plain, Footprint};
use crate::families::plan::{Build, Built, ExecError, Inputs};
use crate::families::reference;
use crate::families::tune_space::{SpaceDef, SpaceKind};
use crate::families::variant::GroupRule::*;
use crate::families::variant::{points, pow2, v, GroupRule, Variant};
use crate::rows::{FamilyId, Metric, Size};

use shapes::*;

/// A matvec variant for power-of-two work-groups of `min` to `max` work-items.
const fn pow2_variant(
    name: &'static str,
    kernel: &'static str,
    rule: GroupRule,
    min: u32,
    max: u32,
    about: &'static str,
) -> Variant {
    pow2(v(FamilyId::Matvec, name, kernel, rule, about), min, max)
}

/// Where the shape-aware algorithms (`shapes`; `auto` picks among them) start in [`VARIANTS`].
const SHAPES_FROM: usize = 8;

/// In report order: the listings, the tuned kernel, then the shape-aware algorithms (each
/// `about` says what shape it is for).
const VARIANTS: [Variant; 19] = [
    v(
        FamilyId::Matvec,
        "listing2",
        "matvec_listing2",
        Cover { per_item: 1 },
        "whitepaper Listing 2: one work-item per row (bound check added)",
    ),
    v(
        FamilyId::Matvec,
        "listing3",
        "matvec_listing3",
        PerComputeUnit(8),
        "whitepaper Listing 3: work-items stride over rows (uncoalesced)",
    ),
    points(
        v(
            FamilyId::Matvec,
            "listing4",
            "matvec_listing4",
            PerComputeUnit(8),
            "whitepaper Listing 4: a work-group per row, coalesced; serial sum",
        ),
        &["A", "B"],
    ),
    pow2_variant(
        "listing5",
        "matvec_listing5",
        PerComputeUnit(8),
        1,
        u32::MAX,
        "whitepaper Listing 5: interleaved tree reduction (bank conflicts)",
    ),
    pow2_variant(
        "listing6",
        "matvec_listing6",
        PerComputeUnit(8),
        1,
        u32::MAX,
        "whitepaper Listing 6: sequential-addressing tree reduction",
    ),
    pow2_variant(
        "listing7",
        "matvec_listing7",
        PerComputeUnit(8),
        64,
        512,
        "whitepaper Listing 7: warp-based reduction, synchronised (safe)",
    ),
    Variant {
        safe: false,
        ..points(
            pow2_variant(
                "listing7-unsafe",
                "matvec_listing7_unsafe",
                PerComputeUnit(8),
                64,
                512,
                "whitepaper Listing 7 as printed: warp-synchronous, racy since Volta",
            ),
            &[],
        )
    },
    pow2_variant(
        "tuned",
        "matvec_tuned",
        PerComputeUnit(16),
        32,
        u32::MAX,
        "modern: a warp per row, float4 loads, warp-level reduction",
    ),
    pow2_variant(
        ROW_ITEM,
        "matvec_row_item",
        Cover { per_item: 1 },
        1,
        u32::MAX,
        "shapes: one work-item per row, float4 loads (tall, very short rows)",
    ),
    pow2_variant(
        ROW_WARP,
        "matvec_row_warp",
        PerComputeUnit(16),
        32,
        u32::MAX,
        "shapes: 32 work-items per row, float4 loads, local-memory sum (tall, square)",
    ),
    pow2_variant(
        ROW_GROUP,
        "matvec_row_group",
        PerComputeUnit(8),
        1,
        u32::MAX,
        "shapes: one work-group per row, float4 loads, tree sum (few, short rows)",
    ),
    pow2_variant(
        SPLIT_K,
        "matvec_split_k",
        PerComputeUnit(8),
        // The second pass has a warp-sized slice per row.
        32,
        u32::MAX,
        "shapes: 4-row tiles x column blocks, partial sums, second pass (short, wide)",
    ),
    // No kernel: replaced by the rule's choice before anything is built.
    pow2_variant(
        AUTO,
        "",
        PerComputeUnit(8),
        32,
        1024,
        "shapes: the device's measured table (harness/rules/, or CLVSCU_MATVEC_RULES) \
         or, for a device without one, the hand rule picks a variant from the shape; the \
         row names the one that ran and its flags the source (-DMV_AUTO_RULE)",
    ),
    // At most 512: the 16 x WG_SIZE partial sums must fit CUDA's 48 KB of static shared memory.
    pow2_variant(
        SPLIT_WIDE,
        "matvec_split_wide",
        PerComputeUnit(4),
        32,
        512,
        "shapes: 16-row tiles x column blocks, V read once per tile, two-step sums, \
         second pass (at most 64 rows, very wide)",
    ),
    pow2_variant(
        ROW_SLICE,
        "matvec_row_slice",
        Cover { per_item: 1 },
        32,
        u32::MAX,
        "shapes: a row's float4s on consecutive work-items, 256 rows per group, \
         coalesced loads, products added in local memory (tall, rows of 17-64 floats)",
    ),
    pow2_variant(
        SPLIT_ONE,
        "matvec_split_one",
        PerComputeUnit(8),
        1,
        u32::MAX,
        "shapes: split-k in one launch, the work-group that finishes a row tile's last \
         column block adds the tile's partial sums (atomic count, no second launch)",
    ),
    pow2_variant(
        ROW_MULTI,
        "matvec_row_multi",
        PerComputeUnit(8),
        32,
        u32::MAX,
        "shapes: 4 rows per warp-sized slice, the loads of all 4 in flight before any \
         sum, float4 loads, local-memory sums (tall, rows of a few hundred floats)",
    ),
    // At least 32: the tail's scalars take one work-item each (up to 3, twice).
    pow2_variant(
        SPLIT_FLAT,
        "matvec_split_flat",
        PerComputeUnit(16),
        32,
        u32::MAX,
        "shapes: M as one flat float4 stream in tasks of at most a row (unaligned rows \
         too), two partial sums per task, the work-group that completes a row adds them \
         (atomic count per row, one launch; very wide rows)",
    ),
    pow2_variant(
        ROW_PACK,
        "matvec_row_pack",
        PerComputeUnit(16),
        32,
        u32::MAX,
        "shapes: a block of 4 or more whole rows read as one float4 stream (unaligned rows \
         too), 4 loads in flight per work-item, staged in local memory, then a power-of-two \
         set of work-items per row multiplies and adds (tall, rows of up to 1024 floats)",
    ),
];

pub struct Matvec;

/// A matvec kernel's arguments: `M, cols, rows, V, W`; W = M V.
fn emulate_product(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let (cols, rows) = (l.count(1)?, l.count(2)?);
    let (w, _) = reference::matvec(l.read(0)?, l.read(3)?, rows, cols);
    l.write(4, rounded(&w))
}

impl Family for Matvec {
    fn spec(&self) -> &FamilySpec {
        const SPEC: FamilySpec = FamilySpec {
            default_size: "60989x1100",
            charts: &["shapes"],
            vendor_ops: &[VendorOp {
                name: "sgemv",
                variant: None,
            }],
            quick_size: Some(QuickSize::same("4096x1100")),
            variants: &VARIANTS,
            tuning: Some(&Matvec),
            // Odd shapes; short and wide ones, aligned and not, that split-K cuts into several
            // column blocks; split-wide's 16-row tiles with a short last tile; row-slice with 5
            // float4s per row, which no work-group size divides.
            test_sizes: &[
                Size::matrix(1, 1),
                Size::matrix(37, 101),
                Size::matrix(131, 64),
                Size::matrix(300, 257),
                Size::matrix(3, 4100),
                Size::matrix(9, 2001),
                Size::matrix(70, 4100),
                Size::matrix(1000, 20),
            ],
            // Split-K's two passes (their own block boundaries), every other kernel a whole
            // product.
            emulations: &[
                ("matvec_split_k", split::emulate_partial_sums),
                ("matvec_split_wide", split::emulate_partial_sums),
                (SPLIT_K_FINAL, split::emulate_final_sums),
                ("matvec_*", emulate_product),
            ],
            ..FamilySpec::new(FamilyId::Matvec, "matvec", Metric::Bandwidth)
        };
        &SPEC
    }

    fn work(&self, _variant: &str, size: Size, _global: u64) -> (u64, u64) {
        let (h, w) = (size.rows, size.cols);
        let hw = mul(h, w);
        // M once, V once (cached), W written once.
        (mul(add(add(hw, w), h), 4), mul(2, hw))
    }

    fn footprint(&self, size: Size) -> Footprint {
        let n = size.rows;
        plain(add(mul(n, size.cols), size.cols), n, mul(n, 2), 0).with_largest(mul(n, size.cols))
    }

    fn check_size(&self, variant: &Variant, size: Size) -> Result<(), WorkloadError> {
        if size.rows == 0 || size.cols == 0 {
            let reason = format!(
                "matrix {size} is empty; both rows and columns must be at least 1 (give \
                 ROWSxCOLS)"
            );
            return Err(bad_size(variant, reason));
        }
        nonzero_in_32_bits(variant, size)?;
        if variant.name == SPLIT_FLAT && size.cols < 4 {
            return Err(bad_size(variant, flat::narrow_rows(size)));
        }
        Ok(())
    }

    fn rule_plan(&self, variant: &Variant, size: Size, device: &DeviceInfo) -> Option<RulePlan> {
        plan_for(variant, size, device)
    }

    fn inputs(&self, _: &'static Variant, size: Size, seed: u64, _: InputChoice<'_>) -> Inputs {
        let (rows, cols) = (size.rows as usize, size.cols as usize);
        let a = reference::random_vector(rows * cols, seed);
        let b = reference::random_vector(cols, seed.wrapping_add(1));
        let (w, abs) = reference::matvec(&a, &b, rows, cols);
        let f = reference::tolerance_factor(size.cols);
        let tolerances = abs.iter().map(|s| f * s).collect();
        Inputs::new(size, a, b).with_reference(w, tolerances)
    }

    fn build(&self, cx: &mut Build<'_>) -> Result<Built, ExecError> {
        let k = cx.kernel()?;
        let size = cx.inputs.size;
        let n = size.rows as usize;
        let inputs = cx.inputs;
        let m = cx.upload(&inputs.a)?;
        let v = cx.upload(&inputs.b)?;
        let w = cx.output(n)?;
        let name = cx.variant.name;
        let (steps, partial) = if name == SPLIT_FLAT {
            flat::steps(cx, k, [m, v, w])?
        } else if is_split(name) {
            split::split_k_steps(cx, k, [m, v, w])?
        } else {
            let (cols, rows) = (Arg::U32(size.cols as u32), Arg::U32(size.rows as u32));
            let args = vec![Arg::Buffer(m), cols, rows, Arg::Buffer(v), Arg::Buffer(w)];
            return Ok(Built::into(vec![cx.launch(k, args)], w, n));
        };
        let mut built = Built::into(steps, w, n);
        built.outputs = vec![partial, (w, n)];
        Ok(built)
    }
}

impl Tuning for Matvec {
    fn spaces(&self) -> &'static [(SpaceKind, SpaceDef)] {
        tune::SPACES
    }
}
