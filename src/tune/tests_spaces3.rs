//! Tests of the further spaces: the stencil's tiles, matvec's vector width and SpMV's
//! work-group size: point counts and refused points by rule, the launch a tile implies, and
//! the knobs in both compilers' defines.

use super::space::{space_def, SpaceKind};
use super::tests_knobs::{gpu, space};
use crate::backend::DeviceInfo;
use crate::families::exec::SideConfig;
use crate::families::{FamilyId, Size};
use crate::rows::Api;

fn has_define(side: &SideConfig, name: &str, value: u32) -> bool {
    side.all_defines()
        .contains(&(name.to_string(), value.to_string()))
}

#[test]
fn the_stencil_space_counts_refused_tiles_by_rule_and_derives_the_launch() {
    let s = space(FamilyId::Stencil, "fdtd3d", SpaceKind::Full, &gpu());
    // 15 tiles x 2 unroll settings: the 2-row tiles lack a halo row, three tiles exceed 1024.
    assert_eq!((s.len(), s.invalid_count()), (18, 12), "{:?}", s.invalid);
    assert_eq!(s.invalid["tile-halo"], 6);
    assert_eq!(s.invalid["device-local"], 6);
    for i in 0..s.len() {
        let c = s.config(i);
        let (x, y) = (
            c.define("ST_TILE_X").unwrap(),
            c.define("ST_TILE_Y").unwrap(),
        );
        assert_eq!(c.local, x * y, "{}", c.text());
        assert_eq!(c.groups, (384 / x) * (384 / y), "{}", c.text());
        assert!(y >= 4 && c.local <= 1024, "{}", c.text());
    }
    // The fdtd-unroll study's own kernel is a point: 32 x 8, A = 9, B = 4.
    let study = (0..s.len()).map(|i| s.config(i)).find(|c| {
        c.define("ST_TILE_X") == Some(32)
            && c.define("ST_TILE_Y") == Some(8)
            && c.unroll.contains(&("A", 9))
    });
    assert_eq!(study.map(|c| c.unroll), Some(vec![("A", 9), ("B", 4)]));
    // The tiles NVIDIA's OpenCL refuses (more than 256 work-items) are kept.
    assert!((0..s.len()).any(|i| s.config(i).local == 1024));
}

#[test]
fn device_limits_and_the_grid_refuse_stencil_tiles_before_anything_runs() {
    let mut small = gpu();
    small.max_work_group_size = 256;
    small.local_mem_bytes = 6 * 1024;
    let s = space(FamilyId::Stencil, "fdtd3d", SpaceKind::Full, &small);
    // At 256 work-items: 32x4, 32x8, 64x4 (x 2 unroll). 32x8's tile with its halo is
    // 40 x 16 floats (2560 bytes), 64x4 72 x 12 (3456): all fit in 6 KiB.
    assert_eq!(s.len(), 6, "{:?}", s.invalid);
    assert_eq!(s.invalid["device-local"], 18);
    small.local_mem_bytes = 3 * 1024;
    let s = space(FamilyId::Stencil, "fdtd3d", SpaceKind::Full, &small);
    assert_eq!(s.invalid["local-memory"], 2, "{:?}", s.invalid);
    let cpu = DeviceInfo {
        compute_units: 16,
        max_work_group_size: 4096,
        ..DeviceInfo::default()
    };
    let s = space(FamilyId::Stencil, "fdtd3d", SpaceKind::Small, &cpu);
    assert_eq!((s.len(), s.invalid_count()), (4, 5), "{:?}", s.invalid);
    assert_eq!(s.invalid["tile-divides-grid"], 3);
    assert_eq!(s.invalid["tile-halo"], 2);
    assert!((0..s.len()).any(|i| s.config(i).define("ST_TILE_X") == Some(64)));
}

#[test]
fn tile_defines_reach_both_compilers_and_the_harness_accepts_the_launch() {
    use crate::backend::LaunchShape;
    use crate::families::{find_variant, stencil};
    let s = space(FamilyId::Stencil, "fdtd3d", SpaceKind::Full, &gpu());
    let variant = find_variant(FamilyId::Stencil, "fdtd3d").unwrap();
    for i in 0..s.len() {
        let c = s.config(i);
        let (cl, cu) = (c.side(Api::OpenCl), c.side(Api::Cuda));
        assert_eq!(cl.defines, cu.defines);
        let x = c.define("ST_TILE_X").unwrap();
        assert!(has_define(&cl, "ST_TILE_X", x) && has_define(&cu, "ST_TILE_X", x));
        assert!(has_define(&cu, "WG_SIZE", c.local));
        // The harness reads the tile width from the same defines.
        let size = Size::parse(s.def.size).unwrap();
        assert_eq!(stencil::tile_x_of(&cl.defines), u64::from(x));
        let shape = LaunchShape::linear(c.groups, c.local);
        stencil::check_launch(variant, size, shape, u64::from(x))
            .unwrap_or_else(|e| panic!("{}: {e}", c.text()));
    }
    assert!(s.config(0).knobs_text().contains("ST_TILE_Y="));
}

#[test]
fn the_matvec_vector_width_is_a_new_named_space() {
    // `matvec/tuned` keeps its 612 measured points and no MV_VEC.
    let tuned = space(FamilyId::Matvec, "tuned", SpaceKind::Full, &gpu());
    assert_eq!(tuned.len(), 612);
    assert!((0..tuned.len()).all(|i| tuned.config(i).define("MV_VEC").is_none()));
    let s = space(FamilyId::Matvec, "tuned-vec", SpaceKind::Full, &gpu());
    assert_eq!(s.variant.name, "tuned");
    // 256 items at 32 groups a unit: 4224 x 8 rows > 32768.
    assert_eq!((s.len(), s.invalid_count()), (9, 3), "{:?}", s.invalid);
    assert_eq!(s.invalid["every-group-has-a-row"], 3);
    let mut widths: Vec<u32> = (0..s.len())
        .filter_map(|i| s.config(i).define("MV_VEC"))
        .collect();
    widths.sort_unstable();
    widths.dedup();
    assert_eq!(widths, [1, 2, 4]);
    let c = s.config(0);
    assert!(has_define(&c.side(Api::OpenCl), "MV_VEC", 1));
    assert!(has_define(&c.side(Api::Cuda), "MV_VEC", 1));
    assert!(c.text().ends_with("index=32 MV_VEC=1"), "{}", c.text());
}

#[test]
fn the_spmv_local_space_varies_the_work_group_size() {
    let s = space(FamilyId::Spmv, "vector-local", SpaceKind::Full, &gpu());
    assert_eq!((s.len(), s.invalid_count()), (16, 0));
    let mut locals: Vec<u32> = (0..s.len()).map(|i| s.config(i).local).collect();
    locals.dedup();
    assert_eq!(locals, [64, 128, 256, 512]);
    assert!((0..s.len()).all(|i| s.config(i).variant.is_none()));
    assert!(has_define(&s.config(15).side(Api::Cuda), "WG_SIZE", 512));
    // `spmv/vector` keeps its 18 measured points at 256 work-items.
    let old = space(FamilyId::Spmv, "vector", SpaceKind::Full, &gpu());
    assert_eq!(old.len(), 18);
    assert!((0..old.len()).all(|i| old.config(i).local == 256));
    // A device of 256 work-items refuses 512 by rule.
    let mut small = gpu();
    small.max_work_group_size = 256;
    let s = space(FamilyId::Spmv, "vector-local", SpaceKind::Full, &small);
    assert_eq!(s.invalid["device-local"], 4);
}

#[test]
fn unknown_names_list_the_new_spaces() {
    let e = space_def(FamilyId::Matvec, "nope", SpaceKind::Full)
        .unwrap_err()
        .to_string();
    for name in ["matvec/tuned-vec", "stencil/fdtd3d", "spmv/vector-local"] {
        assert!(e.contains(name), "{e}");
    }
}
