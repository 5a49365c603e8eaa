//! The further tunable spaces: the stencil's tile (`stencil/fdtd3d`), matvec's vector width
//! (`matvec/tuned-vec`) and SpMV's work-group size (`spmv/vector-local`). The last two are new
//! named spaces beside `matvec/tuned` and `spmv/vector`, whose GPU measurements stay
//! reproducible under their names.

use super::space_def::{Constraint, Knob, Param, SpaceDef, SpaceKind};
use crate::workload::FamilyKind;

const fn p(name: &'static str, knob: Knob, values: &'static [u32]) -> Param {
    Param { name, knob, values }
}

/// The grid first (a refused tile never reaches the device), then the halo, then the limits.
const STENCIL_RULES: &[Constraint] = &[
    Constraint::TileDividesGrid,
    Constraint::TileHalo,
    Constraint::DeviceLocal,
    Constraint::VariantLocal,
    Constraint::LocalMemory,
];
const MATVEC_RULES: &[Constraint] = &[
    Constraint::VariantLocal,
    Constraint::DeviceLocal,
    Constraint::EveryGroupHasRow,
];
const SPMV_RULES: &[Constraint] = &[Constraint::VariantLocal, Constraint::DeviceLocal];

/// Tile widths and heights of the stencil's full space: 15 tiles, of which the 2-row ones are
/// refused (`tile-halo`) and, on a 1024-work-item device, the three of 2048 or 4096 work-items
/// (`device-local`). The 512 and 1024 work-item tiles are in on purpose: NVIDIA's OpenCL allows
/// this kernel 256 work-items, so they are recorded there as build or launch failures.
const TILE_X: &[u32] = &[32, 64, 128];
const TILE_Y: &[u32] = &[2, 4, 8, 16, 32];

pub const SPACES3: &[(SpaceKind, SpaceDef)] = &[
    // 9 tiles x the z loop unrolled or not (the radius loop fully, as the SDK): 18 points, each
    // its own program, at the fdtd-unroll study's 384^3 (226 MB a grid). The study's own
    // kernel (32 x 8, A = 9, B = 4) is one of them.
    (
        SpaceKind::Full,
        SpaceDef {
            family: FamilyKind::Stencil,
            name: "fdtd3d",
            variant: "fdtd3d",
            params: &[
                p("tile_x", Knob::Define("ST_TILE_X"), TILE_X),
                p("tile_y", Knob::Define("ST_TILE_Y"), TILE_Y),
                p("unroll.A", Knob::Unroll("A"), &[0, 9]),
                p("unroll.B", Knob::Unroll("B"), &[4]),
            ],
            constraints: STENCIL_RULES,
            size: "384",
        },
    ),
    // Vector width of the loads x work-group size x groups: 6 programs, 12 points, of which
    // the 3 where 256-item groups at 32 a unit outnumber the rows are refused; at
    // `matvec/tuned`'s size and unroll 0 (at MV_VEC = 4 the PTX is `matvec/tuned`'s).
    (
        SpaceKind::Full,
        SpaceDef {
            family: FamilyKind::Matvec,
            name: "tuned-vec",
            variant: "tuned",
            params: &[
                p("local", Knob::Local, &[128, 256]),
                p("groups_per_cu", Knob::GroupsPerCu, &[8, 32]),
                p("unroll.A", Knob::Unroll("A"), &[0]),
                p("index", Knob::Index, &[32]),
                p("vec", Knob::Define("MV_VEC"), &[1, 2, 4]),
            ],
            constraints: MATVEC_RULES,
            size: "32768x2048",
        },
    ),
    // Work-group size x lanes per row x groups, on `spmv/vector`'s matrix through the global
    // path: 8 programs, 16 points. 512 is in on purpose (NVIDIA's OpenCL may refuse it).
    (
        SpaceKind::Full,
        SpaceDef {
            family: FamilyKind::Spmv,
            name: "vector-local",
            variant: "vector",
            params: &[
                p("local", Knob::Local, &[64, 128, 256, 512]),
                p("lanes", Knob::Define("SPMV_LANES"), &[16, 32]),
                p("groups_per_cu", Knob::GroupsPerCu, &[8, 32]),
            ],
            constraints: SPMV_RULES,
            size: "2^23x2^27",
        },
    ),
    // Four tiles run, 32 and 64 wide; the 2-row ones break the halo rule and the 128-wide
    // ones do not divide the 64-wide grid: 4 programs.
    (
        SpaceKind::Small,
        SpaceDef {
            family: FamilyKind::Stencil,
            name: "fdtd3d",
            variant: "fdtd3d",
            params: &[
                p("tile_x", Knob::Define("ST_TILE_X"), TILE_X),
                p("tile_y", Knob::Define("ST_TILE_Y"), &[2, 4, 8]),
                p("unroll.A", Knob::Unroll("A"), &[0]),
                p("unroll.B", Knob::Unroll("B"), &[4]),
            ],
            constraints: STENCIL_RULES,
            size: "64x9",
        },
    ),
    // The narrowest and the widest loads: 2 programs (a matvec program costs PoCL seconds).
    (
        SpaceKind::Small,
        SpaceDef {
            family: FamilyKind::Matvec,
            name: "tuned-vec",
            variant: "tuned",
            params: &[
                p("local", Knob::Local, &[64]),
                p("groups_per_cu", Knob::GroupsPerCu, &[2]),
                p("unroll.A", Knob::Unroll("A"), &[0]),
                p("index", Knob::Index, &[32]),
                p("vec", Knob::Define("MV_VEC"), &[1, 4]),
            ],
            constraints: MATVEC_RULES,
            size: "512x256",
        },
    ),
    // Two work-group sizes: 2 programs, 2 points.
    (
        SpaceKind::Small,
        SpaceDef {
            family: FamilyKind::Spmv,
            name: "vector-local",
            variant: "vector",
            params: &[
                p("local", Knob::Local, &[64, 256]),
                p("lanes", Knob::Define("SPMV_LANES"), &[16]),
                p("groups_per_cu", Knob::GroupsPerCu, &[1]),
            ],
            constraints: SPMV_RULES,
            size: "2^12x2^16",
        },
    ),
];
