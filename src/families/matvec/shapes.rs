//! The rule (`auto`) that picks one of matvec's shape-aware algorithms (`super::VARIANTS`;
//! `split-flat` is in [`super::flat`]) from the shape and the device.
//!
//! `auto` is not a kernel: the session replaces it by the variant and launch shape that
//! [`plan_for`] gives (see `session::auto`), so every row names the algorithm that ran: the
//! nearest region of the device's measured table ([`super::rules`], derived from a shape sweep
//! by `clvscu shapes-rule`) at the launch its winner was measured at, or [`rule`], the hand
//! rule, for a device without a table.

use crate::backend::DeviceInfo;
use crate::families::family::{Family, RulePlan};
use crate::families::variant::Variant;
use crate::rows::{FamilyId, Size};

use super::rules::RuleTable;

/// Rows of one split-K tile; the kernels' `MV_TILE`.
pub const TILE: u32 = 4;
/// Rows of one split-wide tile; the kernels' `MV_WIDE`.
pub const WIDE_TILE: u32 = 16;

/// The variant names, as studies spell them.
pub const ROW_ITEM: &str = "row-item";
pub const ROW_WARP: &str = "row-warp";
pub const ROW_GROUP: &str = "row-group";
pub const SPLIT_K: &str = "split-k";
pub const SPLIT_WIDE: &str = "split-wide";
pub const ROW_SLICE: &str = "row-slice";
pub const SPLIT_ONE: &str = "split-one";
pub const ROW_MULTI: &str = "row-multi";
pub const SPLIT_FLAT: &str = "split-flat";
pub const ROW_PACK: &str = "row-pack";
pub const AUTO: &str = "auto";

/// The second-pass kernel of split-K.
pub const SPLIT_K_FINAL: &str = "matvec_split_k_final";

/// The variant `auto` can pick by `name`: any shape-aware one but `auto` itself.
pub fn pick(name: &str) -> Option<&'static Variant> {
    let shapes = &super::VARIANTS[super::SHAPES_FROM..];
    shapes.iter().find(|v| v.name == name && v.name != AUTO)
}

/// Where a plan came from: the `MV_AUTO_RULE` define that records it in a row's flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum Source {
    /// The hand rule ([`rule`]): no measured table names this device.
    Hand,
    /// The device's measured table (`harness/rules/`, or the file `CLVSCU_MATVEC_RULES` names).
    Table,
    /// The hand rule: the device's table was unreadable or chose a variant unfit for the shape.
    HandFallback,
}

/// Work-groups of 256 that fill one compute unit of a current NVIDIA GPU (2048 resident
/// threads); the rule aims at two such waves so that no compute unit idles at the tail.
const GROUPS_PER_CU: u64 = 8;
/// Rows of at most this many floats are read whole by one work-item.
const SHORT_ROW: u64 = 16;
/// A split is never narrower than this many columns: one float4 per work-item of 256.
const MIN_SPLIT_COLS: u64 = 1024;
/// Rows of at most this many floats (and a multiple of 4) are staged by `row-slice`: the
/// kernels' `MV_SLICE_W4` float4s.
const SLICE_COLS: u64 = 64;
/// Rows a `row-slice` work-group finishes per step: the kernels' `MV_SLICE_ROWS`.
const SLICE_ROWS: u32 = 256;

/// The rule: the algorithm and launch shape for a `rows` x `cols` matrix on a device with
/// `compute_units` compute units and a work-group limit of `wg_limit`. Pure, so it is tested
/// without a device and both sides of a comparison get the same answer on the same device.
///
/// - rows of at most 16 floats: a work-item per row (a warp per row would idle most lanes);
/// - rows of 17 to 64 floats, a multiple of 4: a row-slice (a row's float4s on consecutive
///   work-items, so every warp load is contiguous);
/// - enough rows to give every compute unit 64 warps (one full wave): a warp per row;
/// - otherwise the rows alone cannot fill the device: split the columns so that one wave of
///   work-groups runs, each on one row tile x one column block (split-k, 4-row tiles) —
///   unless the rows are too short to split (fewer than two 1024-column blocks), then a
///   work-group per row. One wave, not two: on an H100 and an H200 (2026-11-22, shapes) the
///   split-k rows at 8 groups per compute unit beat the rule's two waves at 1100x60989,
///   1024x65536, 256x262144, 64x1048576 and 16x4194304 (H100 2360 / 2667 / 2665 / 2534 /
///   2553 GB/s against 2264 / 2409 / 2503 and, on the H200, 3138 / 2441 at the last two);
///   each work-group's fixed cost (its tree of partial sums) is paid half as often.
///   Split-wide (16-row tiles) is not chosen: on an H100 (2026-11-22, shapes-gaps) split-k
///   reached 2553 / 2534 / 1230 GB/s at 16x4194304 / 64x1048576 / 16x262144 against
///   split-wide's 2372 / 2369 / 1039.
/// - rows not a multiple of 4 floats, in that split case: `split-flat` at two waves of 8 groups
///   per compute unit. Unaligned rows leave the row-based kernels scalar loads; on an H100
///   (2026-11-23, shapes5) split-flat read 1100x60989 at 2692 / 2699 GB/s (OpenCL / CUDA) at
///   2112 groups, against split-one's 2463 / 2480 and its own 2138 / 2144 at 1056 (its tasks,
///   at most a row each, then need a second, nearly empty wave).
pub fn rule(rows: u64, cols: u64, compute_units: u32, wg_limit: u32) -> RulePlan {
    let local = local_for(wg_limit);
    let cus = u64::from(compute_units.max(1));
    let fill_groups = 2 * cus * GROUPS_PER_CU;
    // Groups of `rows_each` rows, at most two waves.
    let waves = |rows_each: u32| rows.div_ceil(u64::from(rows_each.max(1))).min(fill_groups);
    let (algorithm, groups) = if cols <= SHORT_ROW {
        (ROW_ITEM, waves(local))
    } else if cols <= SLICE_COLS && cols.is_multiple_of(4) {
        (ROW_SLICE, waves(local.min(SLICE_ROWS)))
    } else if rows >= cus * 64 {
        (ROW_WARP, waves(local / 32))
    } else {
        let tiles = rows.div_ceil(u64::from(TILE));
        let splits = (cus * GROUPS_PER_CU)
            .div_ceil(tiles)
            .min(cols.div_ceil(MIN_SPLIT_COLS));
        if splits >= 2 && !cols.is_multiple_of(4) {
            (SPLIT_FLAT, fill_groups)
        } else if splits >= 2 {
            (SPLIT_K, tiles * splits)
        } else {
            (ROW_GROUP, rows.min(fill_groups))
        }
    };
    RulePlan {
        variant: pick(algorithm).expect("the rule picks a shape variant"),
        local,
        groups: groups.clamp(1, u64::from(u32::MAX / local)) as u32,
        define: ("MV_AUTO_RULE", Source::Hand.into()),
    }
}

/// The plan of a measured table's region for `size`: its variant at the launch it won at where
/// the sweep swept it and this device allows it, else at the variant's default launch; `None`
/// when the variant cannot run the shape.
fn table_plan(table: &RuleTable, size: Size, info: &DeviceInfo) -> Option<RulePlan> {
    let region = table.nearest(size.rows, size.cols);
    let variant = pick(&region.variant)?;
    let family: &dyn Family = &super::Matvec;
    family.check_size(variant, size).ok()?;
    let measured = region.local > 0
        && region.local <= info.max_work_group_size
        && family.check_local(variant, region.local).is_ok();
    let local = if measured {
        region.local
    } else {
        let local = local_for(info.max_work_group_size).clamp(variant.min_local, variant.max_local);
        family.check_local(variant, local).ok()?;
        local
    };
    let groups = if measured && region.groups > 0 {
        region.groups
    } else {
        family.default_groups(variant, size, local, info.compute_units)
    };
    Some(RulePlan {
        variant,
        local,
        groups,
        define: ("MV_AUTO_RULE", Source::Table.into()),
    })
}

/// 256 work-items, or the largest power of two the device allows below that.
fn local_for(wg_limit: u32) -> u32 {
    let limit = wg_limit.clamp(32, 256);
    1 << (31 - limit.leading_zeros())
}

/// The rule's plan for `variant` when it is `auto`; `None` for every other variant.
pub fn plan_for(variant: &Variant, size: Size, info: &DeviceInfo) -> Option<RulePlan> {
    (variant.family == FamilyId::Matvec && variant.name == AUTO).then(|| {
        let hand = rule(
            size.rows,
            size.cols,
            info.compute_units,
            info.max_work_group_size,
        );
        match super::rules::table_for(&info.name) {
            Ok(None) => hand,
            table => table
                .ok()
                .flatten()
                .and_then(|table| table_plan(&table, size, info))
                .unwrap_or(RulePlan {
                    define: ("MV_AUTO_RULE", Source::HandFallback.into()),
                    ..hand
                }),
        }
    })
}

pub fn is_split(variant: &str) -> bool {
    matches!(variant, SPLIT_K | SPLIT_WIDE | SPLIT_ONE | SPLIT_FLAT)
}

/// Rows of one tile of a split variant.
pub fn tile_of(variant: &str) -> u32 {
    if variant == SPLIT_WIDE {
        WIDE_TILE
    } else {
        TILE
    }
}

/// Column blocks of a split launch of `groups` work-groups over tiles of `tile` rows: as many
/// as the groups cover after one per tile, none empty (each is whole float4s).
pub fn splits_of(size: Size, groups: u32, tile: u32) -> u32 {
    let tiles = size.rows.div_ceil(u64::from(tile.max(1))).max(1);
    let most = size.cols.div_ceil(4).max(1);
    (u64::from(groups) / tiles).clamp(1, most) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::matvec::split::{final_sums, partial_sums};

    const H100_CUS: u32 = 132;

    fn on_h100(rows: u64, cols: u64) -> RulePlan {
        rule(rows, cols, H100_CUS, 1024)
    }

    #[test]
    fn tall_and_square_matrices_get_a_warp_per_row() {
        for (rows, cols) in [(60989, 1100), (16384, 16384), (32768, 32768), (1 << 20, 68)] {
            let p = on_h100(rows, cols);
            assert_eq!(p.variant.name, ROW_WARP, "{rows}x{cols}");
            assert_eq!(p.local, 256);
            // Two waves of 8 groups per compute unit, or fewer when the rows run out.
            assert_eq!(u64::from(p.groups), rows.div_ceil(8).min(2 * 132 * 8));
        }
    }

    #[test]
    fn short_wide_matrices_split_the_columns() {
        let p = on_h100(256, 262_144);
        assert_eq!(p.variant.name, SPLIT_K);
        // 64 tiles of 4 rows, 17 column blocks each: 1088 groups, one wave of 8 per CU.
        assert_eq!(p.groups, 64 * 17);
        assert_eq!(splits_of(Size::matrix(256, 262_144), p.groups, TILE), 17);
        // Rows not a multiple of 4 floats: one flat stream, two waves of 8 groups per unit.
        let p = on_h100(1100, 60989);
        assert_eq!(p.variant.name, SPLIT_FLAT);
        assert_eq!(p.groups, 2 * 132 * 8);
        assert_eq!(on_h100(1100, 60988).variant.name, SPLIT_K);
        assert_eq!(on_h100(300, 1501).variant.name, SPLIT_FLAT);
        // Very wide: 4 tiles of 4 rows, 264 blocks: the 1056 groups of the split-k rows.
        assert_eq!(on_h100(16, 4_194_304).groups, 1056);
    }

    #[test]
    fn very_short_rows_get_a_work_item_per_row() {
        let p = on_h100(1 << 24, 4);
        assert_eq!(p.variant.name, ROW_ITEM);
        assert_eq!(p.groups, 2 * 132 * 8);
        assert_eq!(on_h100(100, 16).groups, 1);
    }

    #[test]
    fn rows_of_17_to_64_aligned_floats_get_a_row_slice() {
        let p = on_h100(1 << 20, 64);
        assert_eq!(p.variant.name, ROW_SLICE);
        // 256 rows per group and step: two waves of 8 per compute unit, fewer when rows run out.
        assert_eq!(p.groups, 2 * 132 * 8);
        assert_eq!(on_h100(65536, 64).groups, 256);
        assert_eq!(on_h100(65536, 20).variant.name, ROW_SLICE);
        // Unaligned or wider rows are not staged.
        assert_eq!(on_h100(1 << 20, 63).variant.name, ROW_WARP);
        assert_eq!(on_h100(1 << 20, 68).variant.name, ROW_WARP);
    }

    #[test]
    fn very_wide_rows_are_split_k_not_split_wide() {
        for (rows, cols) in [
            (16, 4_194_304),
            (64, 1_048_576),
            (16, 262_144),
            (65, 1_048_576),
        ] {
            assert_eq!(on_h100(rows, cols).variant.name, SPLIT_K, "{rows}x{cols}");
        }
        // Too few columns to split: a group per row.
        assert_eq!(on_h100(16, 1000).variant.name, ROW_GROUP);
    }

    #[test]
    fn split_variants_tile_by_their_kernels_rows() {
        assert!(is_split(SPLIT_K) && is_split(SPLIT_WIDE) && !is_split(ROW_SLICE));
        assert!(is_split(SPLIT_ONE) && tile_of(SPLIT_ONE) == TILE);
        assert!(is_split(SPLIT_FLAT));
        assert_eq!((tile_of(SPLIT_K), tile_of(SPLIT_WIDE)), (TILE, WIDE_TILE));
        // 64 rows: 16 tiles of 4 or 4 tiles of 16 out of the same 528 groups.
        let z = Size::matrix(64, 1_048_576);
        assert_eq!(splits_of(z, 528, TILE), 33);
        assert_eq!(splits_of(z, 528, WIDE_TILE), 132);
    }

    #[test]
    fn few_short_rows_get_a_work_group_per_row() {
        // 4096 rows < 132 x 64 warps, and rows too short for two 1024-column blocks.
        let p = on_h100(4096, 1024);
        assert_eq!(p.variant.name, ROW_GROUP);
        assert_eq!(p.groups, 2112);
        assert_eq!(on_h100(300, 1000).variant.name, ROW_GROUP);
        assert_eq!(on_h100(300, 1500).variant.name, SPLIT_K);
    }

    #[test]
    fn the_device_changes_the_choice() {
        // 8448 rows fill an H100 a warp per row; a 256-unit device is not filled by them, and
        // its one wave of 2048 groups is fewer than the 2112 row tiles: a group per row.
        assert_eq!(on_h100(8448, 8192).variant.name, ROW_WARP);
        assert_eq!(rule(8448, 8192, 256, 1024).variant.name, ROW_GROUP);
        assert_eq!(rule(2048, 8192, 256, 1024).variant.name, SPLIT_K);
        // A work-group limit under 256 shrinks the group, to a power of two.
        assert_eq!(rule(60989, 1100, 132, 200).local, 128);
        assert_eq!(rule(60989, 1100, 0, 0).local, 32);
    }

    #[test]
    fn every_plan_is_a_launch_its_variant_accepts() {
        for rows in [1u64, 3, 37, 256, 1100, 8191, 60989, 1 << 22] {
            for cols in [1u64, 4, 17, 1100, 4096, 60989, 262_144] {
                for (cus, limit) in [(2, 4096), (132, 1024), (16, 256), (1, 64)] {
                    let p = rule(rows, cols, cus, limit);
                    let v = p.variant;
                    assert!(v.family.family().check_local(v, p.local).is_ok(), "{p:?}");
                    assert!(p.groups >= 1);
                    assert!(u64::from(p.groups) * u64::from(p.local) <= u64::from(u32::MAX));
                }
            }
        }
    }

    #[test]
    fn splits_never_leave_a_block_empty() {
        assert_eq!(splits_of(Size::matrix(8, 8), 1000, TILE), 2);
        assert_eq!(splits_of(Size::matrix(8, 8), 1, TILE), 1);
        assert_eq!(splits_of(Size::matrix(60989, 1100), 1056, TILE), 1);
    }

    #[test]
    fn partial_sums_add_up_to_the_product() {
        let (rows, cols) = (5, 37);
        let m: Vec<f32> = (0..rows * cols).map(|i| (i % 7) as f32 - 3.0).collect();
        let v: Vec<f32> = (0..cols).map(|i| (i % 5) as f32 * 0.5).collect();
        let (want, _) = crate::families::reference::matvec(&m, &v, rows, cols);
        for s in [1, 2, 3, 9] {
            let p = partial_sums(&m, &v, rows, cols, s);
            let got = final_sums(&p, rows, s);
            for (g, w) in got.iter().zip(&want) {
                assert!((f64::from(*g) - w).abs() < 1e-3, "splits {s}: {g} vs {w}");
            }
        }
        // Three blocks of 16 columns over 37: the third holds 5, none is empty.
        let p = partial_sums(&m, &v, rows, cols, 3);
        assert!(p[2 * rows..].iter().any(|x| *x != 0.0));
    }

    #[test]
    fn only_auto_is_replaced() {
        let info = DeviceInfo {
            compute_units: 132,
            max_work_group_size: 1024,
            ..DeviceInfo::default()
        };
        let auto = crate::families::find_variant(FamilyId::Matvec, AUTO).unwrap();
        let wide = Size::matrix(256, 262_144);
        let plan = plan_for(auto, wide, &info).unwrap();
        assert_eq!(plan.variant.name, SPLIT_K);
        let tuned = crate::families::find_variant(FamilyId::Matvec, "tuned").unwrap();
        assert!(plan_for(tuned, wide, &info).is_none());
    }

    /// A region won at a swept launch runs there; one this device refuses (a work-group past
    /// its limit) runs at the variant's default launch instead; a region without a launch too.
    #[test]
    fn a_tables_measured_launch_is_the_plans() {
        let region = |local, groups| super::super::rules::Region {
            rows: 32,
            cols: 4_194_304,
            key: super::super::rules::Key::of(32, 4_194_304),
            variant: SPLIT_ONE.into(),
            local,
            groups,
            gbs: 1.0,
            runner_up: String::new(),
            runner_up_gbs: 0.0,
        };
        let table = |r| RuleTable {
            device: "GPU X".into(),
            provenance: String::new(),
            regions: vec![r],
        };
        let info = |limit| DeviceInfo {
            compute_units: 132,
            max_work_group_size: limit,
            ..DeviceInfo::default()
        };
        let size = Size::matrix(32, 4_194_304);
        let p = table_plan(&table(region(512, 528)), size, &info(1024)).unwrap();
        assert_eq!((p.variant.name, p.local, p.groups), (SPLIT_ONE, 512, 528));
        let default = table_plan(&table(region(0, 0)), size, &info(1024)).unwrap();
        assert_eq!((default.local, default.groups), (256, 132 * 8));
        let refused = table_plan(&table(region(512, 528)), size, &info(256)).unwrap();
        assert_eq!(
            (refused.local, refused.groups),
            (default.local, default.groups)
        );
        // A measured work-group size without a count: the variant's count at that size.
        let local_only = table_plan(&table(region(128, 0)), size, &info(1024)).unwrap();
        assert_eq!((local_only.local, local_only.groups), (128, 132 * 8));
    }
}
