//! Matrix-vector multiply (the whitepaper's Listings 2-7, a tuned kernel, and the shape-aware
//! algorithms of `shapes` and `flat`): W = M V, M row-major `rows` x `cols`.

pub mod derive;
pub mod flat;
pub mod rules;
pub mod shapes;
mod split;
mod tune;

use crate::backend::fake::{FakeLaunch, KernelEmulation};
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
use crate::families::variant::{points, unsafe_variant, v, Variant};
use crate::rows::{FamilyId, Metric, Size};

use shapes::pow2_variant;

/// The whitepaper's listings and the tuned kernel, then the shape-aware algorithms.
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
    unsafe_variant(points(
        pow2_variant(
            "listing7-unsafe",
            "matvec_listing7_unsafe",
            PerComputeUnit(8),
            64,
            512,
            "whitepaper Listing 7 as printed: warp-synchronous, racy since Volta",
        ),
        &[],
    )),
    pow2_variant(
        "tuned",
        "matvec_tuned",
        PerComputeUnit(16),
        32,
        u32::MAX,
        "modern: a warp per row, float4 loads, warp-level reduction",
    ),
    shapes::VARIANTS[0],
    shapes::VARIANTS[1],
    shapes::VARIANTS[2],
    shapes::VARIANTS[3],
    shapes::VARIANTS[4],
    shapes::VARIANTS[5],
    shapes::VARIANTS[6],
    shapes::VARIANTS[7],
    shapes::VARIANTS[8],
    shapes::VARIANTS[9],
    shapes::VARIANTS[10],
];

pub struct Matvec;

/// A matvec kernel's arguments: `M, cols, rows, V, W`; W = M V.
fn emulate_product(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let (cols, rows) = (l.count(1)?, l.count(2)?);
    let (w, _) = reference::matvec(l.read(0)?, l.read(3)?, rows, cols);
    l.write(4, rounded(&w))
}

impl Family for Matvec {
    fn tuning(&self) -> Option<&dyn Tuning> {
        Some(self)
    }

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
            return Err(bad_size(
                variant,
                format!(
                    "matrix {size} is empty; both rows and columns must be at least 1 (give \
                     ROWSxCOLS)"
                ),
            ));
        }
        nonzero_in_32_bits(variant, size)?;
        flat::size_problem(variant, size).map_or(Ok(()), |r| Err(bad_size(variant, r)))
    }

    fn rule_plan(&self, variant: &Variant, size: Size, device: &DeviceInfo) -> Option<RulePlan> {
        shapes::plan_for(variant, size, device).map(|p| RulePlan {
            variant: p.variant,
            local: p.local,
            groups: p.groups,
            define: ("MV_AUTO_RULE", p.source.into()),
        })
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
        let (steps, partial) = if name == shapes::SPLIT_FLAT {
            flat::steps(cx, k, [m, v, w])?
        } else if shapes::is_split(name) {
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

    /// Split-K's two passes (their own block boundaries), every other kernel a whole product.
    fn emulation(&self, kernel: &str) -> Option<KernelEmulation> {
        match kernel {
            "matvec_split_k" | "matvec_split_wide" => Some(split::emulate_partial_sums),
            shapes::SPLIT_K_FINAL => Some(split::emulate_final_sums),
            _ => kernel.starts_with("matvec_").then_some(emulate_product),
        }
    }
}

impl Tuning for Matvec {
    fn spaces(&self) -> &'static [(SpaceKind, SpaceDef)] {
        tune::SPACES
    }
}
