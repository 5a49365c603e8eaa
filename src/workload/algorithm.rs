//! The algorithm of a variant: what the fairness table's algorithm step compares.
//!
//! Variants that differ only in where an operand is read from (Sobel's filter in constant,
//! global or literal form; SpMV's and MD's gathered operand through global loads, the
//! read-only path or the texture path) are one algorithm: a one-sided memory space is then a
//! difference in the *implementation* step only, as the paper counts it (Figs. 4, 5 and 8).

use super::spmv::ReadPath;
use super::{FamilyKind, Variant};

/// The algorithm `variant` implements; a variant that is its own algorithm gives its name.
pub fn algorithm(variant: &Variant) -> &'static str {
    match variant.family {
        FamilyKind::Sobel => "sobel-x-3x3",
        FamilyKind::Spmv | FamilyKind::Md => without_read_path(variant.name),
        _ => variant.name,
    }
}

/// `scalar-tex` -> `scalar`, `lj-ro` -> `lj`; a name with no read-path suffix unchanged.
fn without_read_path(name: &'static str) -> &'static str {
    match ReadPath::of(name) {
        ReadPath::Global => name,
        _ => name.rsplit_once('-').map_or(name, |(stem, _)| stem),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{find_variant, variants_of};

    fn of(family: FamilyKind, name: &str) -> &'static str {
        algorithm(find_variant(family, name).unwrap())
    }

    #[test]
    fn read_paths_share_one_algorithm_per_family() {
        for (family, groups) in [
            (
                FamilyKind::Sobel,
                vec![vec!["constant", "global", "literal"]],
            ),
            (
                FamilyKind::Spmv,
                vec![
                    vec!["scalar", "scalar-ro", "scalar-tex"],
                    vec!["vector", "vector-ro", "vector-tex"],
                ],
            ),
            (FamilyKind::Md, vec![vec!["lj", "lj-ro", "lj-tex"]]),
        ] {
            let names: Vec<&str> = groups
                .iter()
                .map(|g| {
                    let first = of(family, g[0]);
                    for v in g {
                        assert_eq!(of(family, v), first, "{family:?} {v}");
                    }
                    first
                })
                .collect();
            // Distinct kernels stay distinct algorithms (scalar is not vector).
            let mut unique = names.clone();
            unique.dedup();
            assert_eq!(unique, names, "{family:?}");
        }
        assert_eq!(of(FamilyKind::Spmv, "vector-tex"), "vector");
        assert_eq!(of(FamilyKind::Md, "lj-ro"), "lj");
    }

    #[test]
    fn other_variants_are_their_own_algorithm() {
        for family in [
            FamilyKind::Matvec,
            FamilyKind::Reduce,
            FamilyKind::Broadcast,
        ] {
            for v in variants_of(family, true) {
                assert_eq!(algorithm(v), v.name);
            }
        }
    }
}
