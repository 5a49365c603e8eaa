//! The registry's facts on the families a row names that the outputs need and no row holds
//! (which charts draw a family, which kernels measure memory itself, which vendor operation
//! stands against which kernel, each variant's algorithm), as data: the charts and the report
//! read this, never the families.

use super::words::FamilyId;

#[derive(Debug, Clone, PartialEq)]
pub struct VariantFacts {
    pub name: &'static str,
    /// The variant's algorithm (`scalar-tex` and `scalar-ro` are one algorithm, `scalar`).
    pub algorithm: &'static str,
    /// A one-launch experiment on part of a variant (reduce's first pass): never a whole
    /// operation.
    pub experiment: bool,
}

/// A vendor library's operation (a row of `baselines.csv`) that does the same work as a
/// family's kernels: its name there, and the one variant it stands against (all when `None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VendorOp {
    pub name: &'static str,
    pub variant: Option<&'static str>,
}

/// The variants that measure what the memory itself can do, which charts hold other kernels
/// to: a plain read and a plain copy kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryReferences {
    pub read: &'static str,
    pub copy: &'static str,
}

/// The levels of a search whose row predates the `levels` column, from its variant and
/// element count (`None` where the graph's depth is not known from its size).
pub type LevelsOfSize = fn(variant: &str, elements: u64) -> Option<u64>;

#[derive(Debug, Clone)]
pub struct FamilyFacts {
    pub family: FamilyId,
    /// The charts that draw this family's rows, by name.
    pub charts: &'static [&'static str],
    pub memory_references: Option<MemoryReferences>,
    pub vendor_ops: &'static [VendorOp],
    pub levels_of_size: Option<LevelsOfSize>,
    pub variants: Vec<VariantFacts>,
}

#[derive(Debug, Clone, Default)]
pub struct Catalog {
    pub families: Vec<FamilyFacts>,
}

impl Catalog {
    fn family(&self, family: FamilyId) -> Option<&FamilyFacts> {
        self.families.iter().find(|f| f.family == family)
    }

    fn variant(&self, family: FamilyId, variant: &str) -> Option<&VariantFacts> {
        self.family(family)?
            .variants
            .iter()
            .find(|v| v.name == variant)
    }

    /// Whether `chart` draws `family`'s rows.
    pub fn drawn_in(&self, chart: &str, family: FamilyId) -> bool {
        self.family(family)
            .is_some_and(|f| f.charts.contains(&chart))
    }

    /// The family whose read and copy kernels measure memory itself, and those variants.
    pub fn memory_references(&self) -> Option<(FamilyId, MemoryReferences)> {
        self.families
            .iter()
            .find_map(|f| f.memory_references.map(|m| (f.family, m)))
    }

    /// The family (and the one variant, where only one does the same work) that a vendor
    /// library's operation `op` stands against.
    pub fn vendor_target(&self, op: &str) -> Option<(FamilyId, Option<&'static str>)> {
        self.families.iter().find_map(|f| {
            f.vendor_ops
                .iter()
                .find(|o| o.name == op)
                .map(|o| (f.family, o.variant))
        })
    }

    /// Whether `variant` of `family` is a one-launch experiment (false for one not known).
    pub fn is_experiment(&self, family: FamilyId, variant: &str) -> bool {
        self.variant(family, variant).is_some_and(|v| v.experiment)
    }

    /// The algorithm of `variant`; the variant's own name for one not known.
    pub fn algorithm<'a>(&self, family: FamilyId, variant: &'a str) -> &'a str {
        self.variant(family, variant)
            .map_or(variant, |v| v.algorithm)
    }

    /// The levels of a search whose row does not record them, where its size tells them.
    pub fn levels_of_size(&self, family: FamilyId, variant: &str, elements: u64) -> Option<u64> {
        self.family(family)?.levels_of_size?(variant, elements)
    }
}
