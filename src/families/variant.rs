//! One kernel variant as data, and the rule for its default launch.

use crate::rows::FamilyId;

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
    /// One work-item per point of a launch grid the family computes (a study kernel's
    /// `global` expression), rounded up to whole work-groups.
    Grid,
}

impl GroupRule {
    /// Whether variants of this rule are launched in two dimensions.
    pub fn is_planar(self) -> bool {
        matches!(self, GroupRule::Cover2D)
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Variant {
    pub family: FamilyId,
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
    /// The variant that does the same work with the code-generation change `clvscu explain`
    /// offers as the fix, made the same way in both twins (SGEMM's tiles read as vectors).
    pub alternative: Option<&'static str>,
}

impl Variant {
    /// `family/variant`, as studies, errors and reports name it.
    pub fn full_name(&self) -> String {
        format!("{}/{}", self.family.name(), self.name)
    }
}

pub(crate) const fn v(
    family: FamilyId,
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
        alternative: None,
    }
}

/// [`v`] with no unroll points in its kernel.
pub(crate) const fn bare(
    family: FamilyId,
    name: &'static str,
    kernel: &'static str,
    default_groups: GroupRule,
    about: &'static str,
) -> Variant {
    points(v(family, name, kernel, default_groups, about), &[])
}

pub(crate) const fn pow2(mut x: Variant, min: u32, max: u32) -> Variant {
    x.pow2_local = true;
    x.min_local = min;
    x.max_local = max;
    x
}

pub(crate) const fn points(mut x: Variant, p: &'static [&'static str]) -> Variant {
    x.unroll_points = p;
    x
}

/// A kernel written for exactly one work-group size (a 2D tile mapped onto a 1D group).
pub(crate) const fn exact_local(mut x: Variant, local: u32) -> Variant {
    x.min_local = local;
    x.max_local = local;
    x.unroll_points = &[];
    x
}

pub(crate) const fn experiment(mut x: Variant) -> Variant {
    x.experiment = true;
    x
}
