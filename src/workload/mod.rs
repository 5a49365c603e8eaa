//! Kernel families, declared once as data: variants, arguments, bytes moved and flops per run,
//! launch-shape rules and the CPU reference. Nothing here knows which API runs it.

mod algorithm;
pub mod bfs;
pub mod constmem;
pub mod exec;
pub mod fft;
pub mod fill;
pub mod footprint;
pub mod host_memory;
pub mod math;
pub mod matvec_flat;
pub mod matvec_shapes;
pub mod md;
pub mod reduce_launches;
pub mod reference;
pub mod sgemm;
pub mod spmv;
pub mod stencil;
pub mod transfer;

pub use algorithm::algorithm;

use std::fmt;

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// How a variant's default number of work-groups follows from the problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupRule {
    /// One work-item per `per_item` elements of the family's primary dimension.
    Cover { per_item: u32 },
    /// A fixed count (the whitepaper's 60 groups, for example).
    Fixed(u32),
    /// `k` groups per compute unit (grid-stride kernels that fill the device).
    PerComputeUnit(u32),
    /// One group per square output tile of an N x N matrix (SGEMM).
    Tiles,
    /// One work-item per (x, y) column of a 3D grid (the stencil).
    Columns,
    /// A 2-D launch with one work-item per element of a ROWSxCOLS image: x covers the
    /// columns, y the rows (Sobel: `constmem::SOBEL_ROWS` rows per work-item).
    Cover2D,
}

impl GroupRule {
    /// Whether variants of this rule are launched in two dimensions.
    pub fn is_planar(self) -> bool {
        matches!(self, GroupRule::Cover2D)
    }
}

crate::names::named_enum! {
    /// The performance metric a family is judged by (higher is better), written as its unit.
    pub enum Metric {
        /// Bytes moved per second, GB/s (1e9).
        #[strum(serialize = "GB/s")]
        Bandwidth,
        /// GFLOP/s (1e9).
        #[strum(serialize = "GFLOP/s")]
        Flops,
        /// Launches per second (1 / time), for the launch-overhead kernel.
        #[strum(serialize = "1/s")]
        Rate,
        /// G evaluations per second (1e9): chain steps of the math family (see `math`).
        #[strum(serialize = "Geval/s")]
        Evaluations,
        /// G 4-byte reads per second (1e9): the broadcast micro-kernel (see `constmem`).
        #[strum(serialize = "Gread/s")]
        Reads,
        /// G traversed edges per second (1e9), for BFS: the `flops` column counts edges.
        #[strum(serialize = "GTEPS")]
        Teps,
    }
}

impl Metric {
    pub fn unit(self) -> &'static str {
        self.into()
    }

    /// The work one run does in this metric's numerator: GB, GFLOP, or one launch.
    pub fn work(self, bytes: u64, flops: u64) -> f64 {
        match self {
            Metric::Bandwidth => bytes as f64 / 1e9,
            Metric::Flops => flops as f64 / 1e9,
            Metric::Rate => 1.0,
            // The math family counts 2 FLOP (a multiply-add) per evaluation.
            Metric::Evaluations => flops as f64 / 2e9,
            Metric::Reads => bytes as f64 / 4e9,
            Metric::Teps => flops as f64 / 1e9,
        }
    }
}

crate::names::named_enum! {
    /// The family a variant belongs to; selects arguments, reference and metric.
    #[strum(serialize_all = "kebab-case")]
    pub enum FamilyKind {
        Matvec,
        Reduce,
        Bandwidth,
        Flops,
        Launch,
        Fft,
        Sgemm,
        Math,
        Stencil,
        Sobel,
        Broadcast,
        Spmv,
        Md,
        Bfs,
        Fill,
        Transfer,
    }
}

impl FamilyKind {
    pub fn name(self) -> &'static str {
        self.into()
    }

    pub fn all() -> &'static [FamilyKind] {
        <Self as strum::VariantArray>::VARIANTS
    }

    pub fn parse(name: &str) -> Result<Self, WorkloadError> {
        name.parse().map_err(|_| WorkloadError::UnknownFamily {
            name: name.to_string(),
            known: Self::all()
                .iter()
                .map(|f| f.name())
                .collect::<Vec<_>>()
                .join(", "),
        })
    }

    /// Whether a run of this family at `size` is bound by the runtime, so that a harness's own
    /// launch cost could sit inside its rows: launches, BFS levels, and reductions small
    /// enough for their two launches to matter.
    pub fn runtime_bound(self, size: Size) -> bool {
        const SMALL_REDUCTION: u64 = 1 << 20;
        match self {
            FamilyKind::Launch | FamilyKind::Bfs => true,
            FamilyKind::Reduce => size.elements() <= SMALL_REDUCTION,
            _ => false,
        }
    }

    pub fn metric(self) -> Metric {
        match self {
            FamilyKind::Matvec
            | FamilyKind::Reduce
            | FamilyKind::Bandwidth
            | FamilyKind::Stencil
            | FamilyKind::Sobel
            | FamilyKind::Md
            | FamilyKind::Fill
            | FamilyKind::Transfer => Metric::Bandwidth,
            FamilyKind::Broadcast => Metric::Reads,
            FamilyKind::Flops | FamilyKind::Fft | FamilyKind::Sgemm | FamilyKind::Spmv => {
                Metric::Flops
            }
            FamilyKind::Math => Metric::Evaluations,
            FamilyKind::Launch => Metric::Rate,
            FamilyKind::Bfs => Metric::Teps,
        }
    }

    /// The kernel file stem shared by the twins.
    pub fn file(self) -> &'static str {
        match self {
            FamilyKind::Matvec => "matvec",
            FamilyKind::Reduce => "reduce",
            FamilyKind::Fft => "fft",
            FamilyKind::Bandwidth
            | FamilyKind::Flops
            | FamilyKind::Launch
            | FamilyKind::Transfer => "peak",
            FamilyKind::Sgemm => "sgemm",
            FamilyKind::Math => "math",
            FamilyKind::Stencil => "stencil",
            FamilyKind::Sobel | FamilyKind::Broadcast => "constant",
            FamilyKind::Spmv => "spmv",
            FamilyKind::Md => "md",
            FamilyKind::Bfs => "bfs",
            FamilyKind::Fill => "fill",
        }
    }
}

/// One kernel variant, as data.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Variant {
    pub family: FamilyKind,
    pub name: &'static str,
    /// The kernel function name in both files; empty for the API's own copy command.
    pub kernel: &'static str,
    /// The local size must be a power of two (halving-stride reductions).
    pub pow2_local: bool,
    pub min_local: u32,
    pub max_local: u32,
    /// False for the faithful-but-racy forms: never run unless asked for by name.
    pub safe: bool,
    /// A one-step experiment on part of another variant (one launch of a two-launch
    /// reduction): run when a study names it, never by `all_variants`, whose sizes it would
    /// misread (`final` over 2^28 floats in one work-group is not a pass any reduction makes).
    pub experiment: bool,
    pub default_groups: GroupRule,
    /// Unroll points present in the kernel text (`A`, `B`).
    pub unroll_points: &'static [&'static str],
    pub about: &'static str,
}

const fn v(
    family: FamilyKind,
    name: &'static str,
    kernel: &'static str,
    default_groups: GroupRule,
    about: &'static str,
) -> Variant {
    Variant {
        family,
        name,
        kernel,
        pow2_local: false,
        min_local: 1,
        max_local: u32::MAX,
        safe: true,
        experiment: false,
        default_groups,
        unroll_points: &["A"],
        about,
    }
}

const fn pow2(mut x: Variant, min: u32, max: u32) -> Variant {
    x.pow2_local = true;
    x.min_local = min;
    x.max_local = max;
    x
}

const fn points(mut x: Variant, p: &'static [&'static str]) -> Variant {
    x.unroll_points = p;
    x
}

/// A kernel written for exactly one work-group size (a 2D tile mapped onto a 1D group).
const fn exact_local(mut x: Variant, local: u32) -> Variant {
    x.min_local = local;
    x.max_local = local;
    x.unroll_points = &[];
    x
}

const fn experiment(mut x: Variant) -> Variant {
    x.experiment = true;
    x
}

const fn unsafe_variant(mut x: Variant) -> Variant {
    x.safe = false;
    x
}

use FamilyKind::*;
use GroupRule::*;

/// Every variant of every family. The order is the order of reports and charts.
pub const VARIANTS: &[Variant] = &[
    v(
        Matvec,
        "listing2",
        "matvec_listing2",
        Cover { per_item: 1 },
        "whitepaper Listing 2: one work-item per row (bound check added)",
    ),
    v(
        Matvec,
        "listing3",
        "matvec_listing3",
        PerComputeUnit(8),
        "whitepaper Listing 3: work-items stride over rows (uncoalesced)",
    ),
    points(
        v(
            Matvec,
            "listing4",
            "matvec_listing4",
            PerComputeUnit(8),
            "whitepaper Listing 4: a work-group per row, coalesced; serial sum",
        ),
        &["A", "B"],
    ),
    pow2(
        v(
            Matvec,
            "listing5",
            "matvec_listing5",
            PerComputeUnit(8),
            "whitepaper Listing 5: interleaved tree reduction (bank conflicts)",
        ),
        1,
        u32::MAX,
    ),
    pow2(
        v(
            Matvec,
            "listing6",
            "matvec_listing6",
            PerComputeUnit(8),
            "whitepaper Listing 6: sequential-addressing tree reduction",
        ),
        1,
        u32::MAX,
    ),
    pow2(
        v(
            Matvec,
            "listing7",
            "matvec_listing7",
            PerComputeUnit(8),
            "whitepaper Listing 7: warp-based reduction, synchronised (safe)",
        ),
        64,
        512,
    ),
    unsafe_variant(pow2(
        points(
            v(
                Matvec,
                "listing7-unsafe",
                "matvec_listing7_unsafe",
                PerComputeUnit(8),
                "whitepaper Listing 7 as printed: warp-synchronous, racy since Volta",
            ),
            &[],
        ),
        64,
        512,
    )),
    pow2(
        v(
            Matvec,
            "tuned",
            "matvec_tuned",
            PerComputeUnit(16),
            "modern: a warp per row, float4 loads, warp-level reduction",
        ),
        32,
        u32::MAX,
    ),
    matvec_shapes::VARIANTS[0],
    matvec_shapes::VARIANTS[1],
    matvec_shapes::VARIANTS[2],
    matvec_shapes::VARIANTS[3],
    matvec_shapes::VARIANTS[4],
    matvec_shapes::VARIANTS[5],
    matvec_shapes::VARIANTS[6],
    matvec_shapes::VARIANTS[7],
    matvec_shapes::VARIANTS[8],
    matvec_shapes::VARIANTS[9],
    pow2(
        v(
            Reduce,
            "interleaved-divergent",
            "reduce_interleaved_divergent",
            Cover { per_item: 1 },
            "ladder 1: interleaved addressing, divergent branches",
        ),
        1,
        u32::MAX,
    ),
    pow2(
        v(
            Reduce,
            "interleaved-bank",
            "reduce_interleaved_bank",
            Cover { per_item: 1 },
            "ladder 2: interleaved addressing, bank conflicts",
        ),
        1,
        u32::MAX,
    ),
    pow2(
        v(
            Reduce,
            "sequential",
            "reduce_sequential",
            Cover { per_item: 1 },
            "ladder 3: sequential addressing",
        ),
        1,
        u32::MAX,
    ),
    pow2(
        v(
            Reduce,
            "first-add",
            "reduce_first_add",
            Cover { per_item: 2 },
            "ladder 4: first add during load",
        ),
        1,
        u32::MAX,
    ),
    pow2(
        v(
            Reduce,
            "unroll-last-warp",
            "reduce_unroll_last_warp",
            Cover { per_item: 2 },
            "ladder 5: last warp unrolled (synchronised)",
        ),
        64,
        u32::MAX,
    ),
    pow2(
        v(
            Reduce,
            "complete-unroll",
            "reduce_complete_unroll",
            Cover { per_item: 2 },
            "ladder 6: completely unrolled for the compile-time work-group size",
        ),
        64,
        1024,
    ),
    pow2(
        v(
            Reduce,
            "multi",
            "reduce_multi",
            PerComputeUnit(8),
            "ladder 7: several elements per work-item (grid-stride)",
        ),
        64,
        1024,
    ),
    pow2(
        v(
            Reduce,
            "tuned",
            "reduce_tuned",
            PerComputeUnit(8),
            "tuned: float4 grid-stride loads, warp-level reduction",
        ),
        64,
        1024,
    ),
    reduce_launches::VARIANTS[0],
    reduce_launches::VARIANTS[1],
    points(
        v(
            Bandwidth,
            "read",
            "peak_read",
            PerComputeUnit(16),
            "coalesced float4 read of the whole array",
        ),
        &[],
    ),
    points(
        v(
            Bandwidth,
            "copy-kernel",
            "peak_copy",
            PerComputeUnit(16),
            "float4 copy kernel (bytes read + written)",
        ),
        &[],
    ),
    points(
        v(
            Bandwidth,
            "copy",
            "",
            Fixed(1),
            "the API's device-to-device copy (clEnqueueCopyBuffer / cuMemcpyDtoD)",
        ),
        &[],
    ),
    v(
        Flops,
        "fma",
        "peak_fma",
        PerComputeUnit(16),
        "8 independent FMA chains per work-item",
    ),
    points(
        v(
            Launch,
            "empty",
            "launch_empty",
            Fixed(1),
            "1 x 1 launch of a kernel that stores one value",
        ),
        &[],
    ),
    points(
        v(
            Launch,
            "back-to-back",
            "launch_empty",
            Fixed(1),
            "N launches of the empty kernel (N = size), one wait: time per launch",
        ),
        &[],
    ),
    transfer::VARIANTS[0],
    transfer::VARIANTS[1],
    transfer::VARIANTS[2],
    transfer::VARIANTS[3],
    transfer::VARIANTS[4],
    transfer::VARIANTS[5],
    fft::VARIANT,
    exact_local(
        v(
            Sgemm,
            "tiled16",
            "sgemm_tiled16",
            Tiles,
            "16x16 shared-memory tiles, one output per work-item (N a multiple of 16)",
        ),
        256,
    ),
    // The SG_* defines retile it (src/tune/tiles.rs); the kernel refuses to compile at a
    // work-group size that does not match its tile, so the rule here is only the range.
    points(
        pow2(
            v(
                Sgemm,
                "blocked",
                "sgemm_blocked",
                Tiles,
                "128x128 block tile, K-step 8, 8x8 register micro-tile, float4 loads (N a \
                 multiple of 128; SG_* defines retile it)",
            ),
            64,
            1024,
        ),
        &["A"],
    ),
    points(
        v(
            Math,
            "sin",
            "math_sin",
            Cover { per_item: 1 },
            "8 chains of precise sin per work-item (x = sin(x)/2 + c)",
        ),
        &[],
    ),
    points(
        v(
            Math,
            "exp",
            "math_exp",
            Cover { per_item: 1 },
            "8 chains of precise exp per work-item (x = exp(-x)/4 + c)",
        ),
        &[],
    ),
    points(
        v(
            Math,
            "native-sin",
            "math_native_sin",
            Cover { per_item: 1 },
            "the sin chains through the intrinsic: native_sin / __sinf",
        ),
        &[],
    ),
    points(
        v(
            Math,
            "native-exp",
            "math_native_exp",
            Cover { per_item: 1 },
            "the exp chains through the intrinsic: native_exp / __expf",
        ),
        &[],
    ),
    pow2(
        points(
            v(
                Stencil,
                "fdtd3d",
                "stencil_fdtd3d",
                Columns,
                "FDTD3d as in NVIDIA's SDK: radius 4, z-marching register queue, local tile",
            ),
            &["A", "B"],
        ),
        128,
        1024,
    ),
    constmem::VARIANTS[0],
    constmem::VARIANTS[1],
    constmem::VARIANTS[2],
    constmem::VARIANTS[3],
    constmem::VARIANTS[4],
    constmem::VARIANTS[5],
    constmem::VARIANTS[6],
    constmem::VARIANTS[7],
    constmem::VARIANTS[8],
    constmem::VARIANTS[9],
    spmv::VARIANTS[0],
    spmv::VARIANTS[1],
    spmv::VARIANTS[2],
    spmv::VARIANTS[3],
    spmv::VARIANTS[4],
    spmv::VARIANTS[5],
    spmv::VARIANTS[6],
    spmv::VARIANTS[7],
    spmv::VARIANTS[8],
    md::VARIANTS[0],
    md::VARIANTS[1],
    md::VARIANTS[2],
    points(
        v(
            Bfs,
            "uniform",
            "bfs_expand",
            Cover { per_item: 1 },
            "Rodinia's level-synchronous BFS on a seeded graph with uniform edges",
        ),
        &[],
    ),
    points(
        v(
            Bfs,
            "power-law",
            "bfs_expand",
            Cover { per_item: 1 },
            "Rodinia's level-synchronous BFS on a seeded graph with power-law out-degrees",
        ),
        &[],
    ),
    points(
        v(
            Bfs,
            "random-uniform",
            "bfs_expand",
            Cover { per_item: 1 },
            "Rodinia's BFS on a seeded uniform random graph (as Rodinia's graphgen; levels measured)",
        ),
        &[],
    ),
    points(
        v(
            Bfs,
            "random-power-law",
            "bfs_expand",
            Cover { per_item: 1 },
            "Rodinia's BFS on a seeded preferential-attachment power-law graph (levels measured)",
        ),
        &[],
    ),
    points(
        v(
            Fill,
            "1d",
            "fill_1d",
            Cover { per_item: 1 },
            "fill article: one float per work-item, whole work-groups and a bound check",
        ),
        &[],
    ),
    points(
        v(
            Fill,
            "1d-exact",
            "fill_1d",
            Cover { per_item: 1 },
            "fill article's launch: global size exactly N (OpenCL 1.2 refuses a local size \
             that does not divide it)",
        ),
        &[],
    ),
    points(
        v(
            Fill,
            "1d-auto",
            "fill_1d",
            Cover { per_item: 1 },
            "fill article's NULL launch: global size exactly N, the work-group size the \
             runtime's (OpenCL NULL, CUDA's occupancy calculator)",
        ),
        &[],
    ),
    points(
        v(
            Fill,
            "float4",
            "fill_float4",
            Cover { per_item: 4 },
            "fill article: one float4 store per work-item",
        ),
        &[],
    ),
    points(
        v(
            Fill,
            "2d-rows",
            "fill_2d_rows",
            Cover2D,
            "2D fill, columns on dimension 0 (coalesced stores)",
        ),
        &[],
    ),
    points(
        v(
            Fill,
            "2d-article",
            "fill_2d_article",
            Cover2D,
            "fill article's 2D kernel: rows on dimension 0 (strided stores); square tables",
        ),
        &[],
    ),
];

/// Every variant of a family (safe ones only unless `include_unsafe`).
pub fn variants_of(family: FamilyKind, include_unsafe: bool) -> Vec<&'static Variant> {
    VARIANTS
        .iter()
        .filter(|v| v.family == family && (include_unsafe || v.safe))
        .collect()
}

/// The variants `all_variants = true` expands to: the safe ones that are whole algorithms, not
/// one-step experiments on a part of one.
pub fn user_variants_of(family: FamilyKind) -> Vec<&'static Variant> {
    variants_of(family, false)
        .into_iter()
        .filter(|v| !v.experiment)
        .collect()
}

/// A variant by family and name, or an error that lists the valid names.
pub fn find_variant(family: FamilyKind, name: &str) -> Result<&'static Variant, WorkloadError> {
    VARIANTS
        .iter()
        .find(|v| v.family == family && v.name == name)
        .ok_or_else(|| WorkloadError::UnknownVariant {
            family: family.name().into(),
            name: name.to_string(),
            known: variants_of(family, true)
                .iter()
                .map(|v| v.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// The problem size. Matvec: `rows` x `cols`; every other family: `rows` elements, `cols` 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Size {
    pub rows: u64,
    pub cols: u64,
}

impl Size {
    pub fn vector(n: u64) -> Self {
        Size { rows: n, cols: 0 }
    }

    pub fn matrix(rows: u64, cols: u64) -> Self {
        Size { rows, cols }
    }

    /// Elements the problem touches: rows*cols for a matrix, n for a vector.
    pub fn elements(&self) -> u64 {
        if self.cols == 0 {
            self.rows
        } else {
            self.rows.saturating_mul(self.cols)
        }
    }

    /// Parse `60989x1100` (rows x cols), `268435456`, or `2^28`.
    pub fn parse(text: &str) -> Result<Self, WorkloadError> {
        let bad = || WorkloadError::BadSize {
            text: text.to_string(),
        };
        let number = |t: &str| -> Result<u64, WorkloadError> {
            let t = t.trim();
            if let Some((b, e)) = t.split_once('^') {
                let b: u64 = b.trim().parse().map_err(|_| bad())?;
                let e: u32 = e.trim().parse().map_err(|_| bad())?;
                b.checked_pow(e).ok_or_else(bad)
            } else {
                t.replace('_', "").parse().map_err(|_| bad())
            }
        };
        match text.split_once(['x', 'X', '*']) {
            Some((r, c)) => Ok(Size::matrix(number(r)?, number(c)?)),
            None => Ok(Size::vector(number(text)?)),
        }
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.cols == 0 {
            write!(f, "{}", self.rows)
        } else {
            write!(f, "{}x{}", self.rows, self.cols)
        }
    }
}

/// Iterations of each FMA chain in the flops kernel (a compile-time define of both sides).
pub const FMA_ITERS: u32 = 1024;

crate::names::named_enum! {
    /// Which compiler's program a side runs. `other` loads the program text (PTX on NVIDIA)
    /// that the other side's compiler made for the same configuration, instead of compiling
    /// this side's own source: the other front end's code through this API's runtime, which
    /// tells a compiler cause from a runtime cause in one step.
    #[strum(serialize_all = "lowercase")]
    pub enum ProgramSource {
        Own,
        Other,
    }
}

crate::names::named_enum! {
    /// The width of index arithmetic: OpenCL's work-item functions return a 64-bit `size_t`,
    /// CUDA's built-in index variables are 32-bit. `u32` and `u64` hold one width on both
    /// sides (through the preludes' `CLVSCU_INDEX`); `native` leaves each API its own, which is
    /// unfair by construction.
    #[strum(serialize_all = "lowercase")]
    pub enum IndexWidth {
        U32,
        U64,
        Native,
    }
}

impl IndexWidth {
    /// The value of the preludes' `CLVSCU_INDEX`.
    pub fn define(self) -> &'static str {
        match self {
            IndexWidth::U32 => "32",
            IndexWidth::U64 => "64",
            IndexWidth::Native => "0",
        }
    }

    /// The bits of index arithmetic this setting gives on `api`.
    pub fn bits(self, api: crate::backend::Api) -> u32 {
        match (self, api) {
            (IndexWidth::U32, _) => 32,
            (IndexWidth::U64, _) => 64,
            (IndexWidth::Native, crate::backend::Api::OpenCl) => 64,
            (IndexWidth::Native, crate::backend::Api::Cuda) => 32,
        }
    }
}

/// Elements a problem touches: the size's own count, or the grid's points for the stencil
/// (whose size `N` names an N^3 cube).
pub fn elements_of(family: FamilyKind, size: Size) -> u64 {
    match family {
        Stencil => stencil::Grid::of(size).points(),
        Sobel => constmem::Image::of(size).pixels(),
        // ROWSxNNZ: the stored entries.
        Spmv => size.cols,
        _ => size.elements(),
    }
}

/// Bytes moved and flops of one run, from the family table — computed here, centrally, never
/// per backend. `global` is the number of work-items launched.
///
/// Saturating: a study may ask for `groups` x `local` up to 2^64 work-items (the flops count
/// multiplies that by 2^14), and a count pinned at `u64::MAX` is visibly wrong where a wrapped
/// one would look plausible. Sizes that `check_size` accepts never come near the limit.
pub fn work_of(family: FamilyKind, variant: &str, size: Size, global: u64) -> (u64, u64) {
    let f = 4u64;
    let mul = u64::saturating_mul;
    match family {
        Matvec => {
            let (h, w) = (size.rows, size.cols);
            let hw = mul(h, w);
            // M once, V once (cached), W written once.
            (mul(hw.saturating_add(w).saturating_add(h), f), mul(2, hw))
        }
        Reduce => (mul(size.rows, f), size.rows),
        Bandwidth => {
            let n = size.rows;
            match variant {
                "read" => (mul(n, f), n),
                _ => (mul(mul(2, n), f), 0),
            }
        }
        Flops => (
            mul(global, f * 2),
            mul(global, 8 * u64::from(FMA_ITERS) * 2),
        ),
        Launch => (f, 0),
        Fft => fft::work(size.rows),
        Sgemm => sgemm::work(size),
        Math => math::work(global, FMA_ITERS),
        Stencil => stencil::work(size),
        Sobel | Broadcast => constmem::work(family, size, global),
        Spmv => spmv::work(size),
        Md => md::work(size),
        Bfs => (bfs::bytes_of(variant, size.rows), bfs::edges(size.rows)),
        Fill => (mul(size.elements(), f), 0),
        Transfer => transfer::work(variant, size.rows),
    }
}

#[derive(Debug, Error)]
pub enum WorkloadError {
    #[error("unknown family '{name}'; valid families: {known}")]
    UnknownFamily { name: String, known: String },
    #[error("unknown variant '{name}' of family {family}; valid variants: {known}")]
    UnknownVariant {
        family: String,
        name: String,
        known: String,
    },
    #[error("cannot read size '{text}': use ROWSxCOLS (e.g. 60989x1100), N or 2^K")]
    BadSize { text: String },
    #[error("invalid problem for {variant}: {reason}")]
    BadProblem { variant: String, reason: String },
    #[error("invalid launch for {variant}: {reason}")]
    BadLaunch { variant: String, reason: String },
}

/// Refuse a problem size the family cannot run, before anything is allocated.
pub fn check_size(variant: &Variant, size: Size) -> Result<(), WorkloadError> {
    let bad = |reason: String| WorkloadError::BadProblem {
        variant: format!("{}/{}", variant.family.name(), variant.name),
        reason,
    };
    if variant.family == Sgemm {
        sgemm::check_size(variant, size)?;
    }
    if variant.family == Fill {
        return fill::check_size(variant, size).map_err(bad);
    }
    if variant.family == Stencil {
        return stencil::check_size(size).map_err(bad);
    }
    if matches!(variant.family, Sobel | Broadcast) {
        return constmem::check_size(variant, size).map_err(bad);
    }
    match variant.family {
        Spmv => return spmv::check_size(size).map_err(bad),
        Md => return md::check_size(size).map_err(bad),
        _ => {}
    }
    let matrix = variant.family == Matvec;
    if matrix && (size.rows == 0 || size.cols == 0) {
        return Err(bad(format!(
            "matrix {size} is empty; both rows and columns must be at least 1 (give ROWSxCOLS)"
        )));
    }
    if !matrix && size.cols != 0 {
        return Err(bad(format!(
            "{size} is a matrix; this family takes one length N"
        )));
    }
    if size.rows == 0 {
        return Err(bad("size 0: there is nothing to compute".into()));
    }
    // Kernels index with 32-bit unsigned integers, as the whitepaper does.
    if size.elements() >= u64::from(u32::MAX) || size.rows >= u64::from(u32::MAX) {
        return Err(bad(format!(
            "{size} has {} elements; kernels index with 32-bit integers (limit {})",
            size.elements(),
            u32::MAX - 1
        )));
    }
    // The CSR offsets of a graph are 32-bit too: they index its `n × DEGREE` edges.
    if variant.family == Bfs && bfs::edges(size.rows) >= u64::from(u32::MAX) {
        return Err(bad(format!(
            "{size} vertices have {} edges; edge offsets are 32-bit integers (limit {}, so at \
             most {} vertices)",
            bfs::edges(size.rows),
            u32::MAX - 1,
            (u64::from(u32::MAX) - 1) / bfs::DEGREE
        )));
    }
    match variant.family {
        Fft => fft::size_problem(size).map_or(Ok(()), |r| Err(bad(r))),
        Matvec => matvec_flat::size_problem(variant, size).map_or(Ok(()), |r| Err(bad(r))),
        _ => Ok(()),
    }
}

/// Refuse a launch shape the variant cannot run, naming the variant and why.
pub fn check_local(variant: &Variant, local: u32) -> Result<(), WorkloadError> {
    let bad = |reason: String| WorkloadError::BadLaunch {
        variant: format!("{}/{}", variant.family.name(), variant.name),
        reason,
    };
    if local == 0 && fill::leaves_local_to_runtime(variant) {
        return Ok(()); // OpenCL's NULL: the runtime's choice, unknown here.
    }
    if local == 0 {
        return Err(bad("work-group size 0".into()));
    }
    if variant.pow2_local && !local.is_power_of_two() {
        return Err(bad(format!(
            "work-group size {local} is not a power of two; its tree reduction halves the \
             stride at every step and would drop elements"
        )));
    }
    if local < variant.min_local || local > variant.max_local {
        return Err(bad(format!(
            "work-group size {local} is outside {}..={} that this kernel supports",
            variant.min_local,
            if variant.max_local == u32::MAX {
                "device limit".to_string()
            } else {
                variant.max_local.to_string()
            }
        )));
    }
    Ok(())
}

/// The default number of work-groups for a variant, problem and device.
pub fn default_groups(variant: &Variant, size: Size, local: u32, compute_units: u32) -> u32 {
    let primary = size.rows.max(1);
    let groups = match variant.default_groups {
        Cover { per_item } => {
            primary.div_ceil(u64::from(local.max(1)) * u64::from(per_item.max(1)))
        }
        Fixed(g) => u64::from(g),
        PerComputeUnit(k) => u64::from(compute_units.max(1)) * u64::from(k),
        Tiles => sgemm::groups(variant, size),
        Columns => stencil::columns(size).div_ceil(u64::from(local.max(1))),
        Cover2D => (size.cols.max(1).div_ceil(constmem::cols_per_item(variant)))
            .div_ceil(u64::from(local.max(1))),
    };
    groups.clamp(1, u64::from(u32::MAX / local.max(1))) as u32
}

/// The default number of work-groups in y: the rows of a 2-D kernel's image, 1 otherwise.
pub fn default_groups_y(variant: &Variant, size: Size, local_y: u32) -> u32 {
    match variant.default_groups {
        Cover2D => {
            let rows = size
                .rows
                .max(1)
                .div_ceil(constmem::rows_per_item(variant.family));
            let groups = rows.div_ceil(u64::from(local_y.max(1)));
            groups.clamp(1, u64::from(u32::MAX / local_y.max(1))) as u32
        }
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(
            Size::parse("60989x1100").unwrap(),
            Size::matrix(60989, 1100)
        );
        assert_eq!(Size::parse("2^28").unwrap(), Size::vector(1 << 28));
        assert_eq!(Size::parse("1_000").unwrap(), Size::vector(1000));
        assert!(Size::parse("12q").is_err());
        assert!(Size::parse("2^99").is_err());
        assert_eq!(Size::matrix(3, 4).to_string(), "3x4");
    }

    #[test]
    fn variant_names_are_unique_per_family() {
        for &f in FamilyKind::all() {
            let names: Vec<_> = variants_of(f, true).iter().map(|v| v.name).collect();
            let mut dedup = names.clone();
            dedup.sort();
            dedup.dedup();
            assert_eq!(names.len(), dedup.len(), "{f:?}");
        }
    }

    #[test]
    fn unknown_variant_lists_names() {
        let e = find_variant(Matvec, "listing9").unwrap_err().to_string();
        assert!(e.contains("listing2") && e.contains("tuned"), "{e}");
    }

    #[test]
    fn unsafe_listing7_is_not_in_default_set() {
        assert!(variants_of(Matvec, false).iter().all(|v| v.safe));
        assert!(variants_of(Matvec, true).iter().any(|v| !v.safe));
    }

    #[test]
    fn all_variants_leaves_out_the_one_launch_experiments() {
        let names: Vec<_> = user_variants_of(Reduce).iter().map(|v| v.name).collect();
        assert!(names.contains(&"tuned"), "{names:?}");
        for experiment in [reduce_launches::FIRST_PASS, reduce_launches::FINAL] {
            assert!(!names.contains(&experiment), "{names:?}");
            assert!(find_variant(Reduce, experiment).is_ok());
        }
    }

    #[test]
    fn local_size_rules() {
        let l7 = find_variant(Matvec, "listing7").unwrap();
        assert!(check_local(l7, 256).is_ok());
        let e = check_local(l7, 96).unwrap_err().to_string();
        assert!(e.contains("listing7") && e.contains("power of two"), "{e}");
        assert!(check_local(l7, 1024)
            .unwrap_err()
            .to_string()
            .contains("512"));
        let l2 = find_variant(Matvec, "listing2").unwrap();
        assert!(check_local(l2, 100).is_ok());
    }

    #[test]
    fn size_rules() {
        let l2 = find_variant(Matvec, "listing2").unwrap();
        assert!(check_size(l2, Size::matrix(0, 10)).is_err());
        assert!(check_size(l2, Size::vector(10)).is_err());
        assert!(check_size(l2, Size::matrix(1, 1)).is_ok());
        let r = find_variant(Reduce, "sequential").unwrap();
        assert!(check_size(r, Size::vector(0))
            .unwrap_err()
            .to_string()
            .contains("size 0"));
        assert!(check_size(r, Size::vector(1 << 33)).is_err());
    }

    #[test]
    fn whitepaper_listing2_groups() {
        let l2 = find_variant(Matvec, "listing2").unwrap();
        assert_eq!(default_groups(l2, Size::matrix(60989, 1100), 256, 132), 239);
    }

    #[test]
    fn matvec_bytes() {
        let (b, f) = work_of(Matvec, "listing2", Size::matrix(2, 3), 0);
        assert_eq!(b, (6 + 3 + 2) * 4);
        assert_eq!(f, 12);
    }
}

/// Property tests of the user-string parsers of this module (sizes, family and variant names)
/// and of the checks that guard a study's numbers: no input panics, and what is accepted
/// satisfies what the runner assumes.
#[cfg(test)]
mod fuzz_tests {
    use proptest::prelude::*;

    use super::*;

    /// Text made of what `Size::parse` treats specially, with long digit runs that overflow.
    fn size_like() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![
                3 => "[0-9]{1,3}",
                1 => "[0-9]{18,22}",
                2 => prop::sample::select(&["x", "X", "*", "^", "_", " ", "+", "-", "0x", "é"][..])
                    .prop_map(str::to_string),
            ],
            0..8,
        )
        .prop_map(|parts| parts.concat())
    }

    fn any_variant() -> impl Strategy<Value = Variant> {
        prop::sample::select(VARIANTS)
    }

    const EDGES: &[u64] = &[
        0,
        1,
        2,
        u32::MAX as u64 - 1,
        u32::MAX as u64,
        u32::MAX as u64 + 1,
        u64::MAX,
    ];

    /// Edges of the u64 and u32 ranges and the 32-bit index limit, plus anything.
    fn count() -> impl Strategy<Value = u64> {
        prop_oneof![prop::sample::select(EDGES), any::<u64>(),]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        #[test]
        fn size_parse_never_panics_and_round_trips(text in ".*") {
            if let Ok(s) = Size::parse(&text) {
                prop_assert_eq!(Size::parse(&s.to_string()).unwrap(), s);
            }
        }

        #[test]
        fn size_like_text_parses_or_quotes_itself(text in size_like()) {
            match Size::parse(&text) {
                // Display is the canonical spelling: it reads back as the same size.
                Ok(s) => prop_assert_eq!(Size::parse(&s.to_string()).unwrap(), s),
                Err(e) => {
                    prop_assert!(matches!(e, WorkloadError::BadSize { .. }), "{e:?}");
                    let quoted = format!("'{text}'");
                    prop_assert!(e.to_string().contains(&quoted), "{e}");
                }
            }
        }

        #[test]
        fn size_display_round_trips(rows in count(), cols in count()) {
            let s = Size::matrix(rows, cols);
            prop_assert_eq!(Size::parse(&s.to_string()).unwrap(), s);
        }

        #[test]
        fn powers_are_exact_or_refused(b in 0u64..100_000, e in 0u32..80) {
            let parsed = Size::parse(&format!("{b}^{e}")).ok();
            prop_assert_eq!(parsed, b.checked_pow(e).map(Size::vector));
        }

        #[test]
        fn family_names_parse_exactly(name in "[a-z-]{0,10}|matvec|reduce|bandwidth|flops|launch") {
            match FamilyKind::parse(&name) {
                Ok(f) => prop_assert_eq!(f.name(), name.as_str()),
                Err(e) => {
                    prop_assert!(FamilyKind::all().iter().all(|f| f.name() != name));
                    prop_assert!(e.to_string().contains("matvec, reduce"), "{e}");
                }
            }
        }

        #[test]
        fn variant_lookup_finds_exactly_its_own(v in any_variant(), junk in ".{0,8}") {
            prop_assert_eq!(find_variant(v.family, v.name).unwrap(), &v);
            let name = format!("{}{junk}", v.name);
            match find_variant(v.family, &name) {
                Ok(found) => prop_assert!(found.name == name && found.family == v.family),
                Err(e) => prop_assert!(e.to_string().contains(v.name), "{e}"),
            }
        }

        #[test]
        fn checks_and_counts_never_panic(
            v in any_variant(),
            rows in count(),
            cols in count(),
            local in any::<u32>(),
            groups in any::<u32>(),
            cus in any::<u32>(),
        ) {
            let v = &v;
            let size = Size::matrix(rows, cols);
            if check_size(v, size).is_ok() {
                // The kernels index with u32: what passes must fit.
                prop_assert!(elements_of(v.family, size) < u64::from(u32::MAX));
            }
            if check_local(v, local).is_ok() {
                prop_assert!(local > 0 && local >= v.min_local && local <= v.max_local);
            }
            let g = default_groups(v, size, local, cus);
            prop_assert!(g >= 1);
            prop_assert!(u64::from(g) * u64::from(local.max(1)) <= u64::from(u32::MAX));
            let global = u64::from(groups) * u64::from(local);
            let (bytes, flops) = work_of(v.family, v.name, size, global);
            if v.family == Flops {
                // Saturating, never wrapped: the count only grows with the launch.
                prop_assert_eq!(bytes, global.saturating_mul(8));
                prop_assert_eq!(flops, global.saturating_mul(16 * u64::from(FMA_ITERS)));
            }
        }
    }

    /// Cases proptest once shrank to: sizes at and far past the 32-bit limit with a zero
    /// launch, where counts and group rules once overflowed.
    #[test]
    fn huge_sizes_with_a_zero_launch_count_without_overflow() {
        let cases = [
            (FamilyKind::Spmv, "scalar", 4_294_967_294, 2),
            (FamilyKind::Bfs, "uniform", 227_737_581_156_908_045, 0),
        ];
        for (family, name, rows, cols) in cases {
            let v = find_variant(family, name).unwrap();
            let size = Size::matrix(rows, cols);
            if check_size(v, size).is_ok() {
                assert!(elements_of(v.family, size) < u64::from(u32::MAX));
            }
            assert!(default_groups(v, size, 0, 0) >= 1);
            let _ = work_of(v.family, v.name, size, 0);
        }
    }

    #[test]
    fn work_counts_saturate_instead_of_wrapping() {
        let huge = Size::matrix(u64::MAX, u64::MAX);
        assert_eq!(work_of(Matvec, "listing2", huge, 0), (u64::MAX, u64::MAX));
        assert_eq!(work_of(Flops, "fma", Size::vector(1), u64::MAX).1, u64::MAX);
        assert_eq!(
            work_of(Bandwidth, "copy", Size::vector(u64::MAX / 4), 0).0,
            u64::MAX
        );
    }
}
