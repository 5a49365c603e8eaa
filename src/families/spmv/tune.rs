//! SpMV's tunable spaces: `spmv/vector` (read path, lanes per row, groups) and
//! `spmv/vector-local` (the work-group size), a new named space beside `vector` so that the
//! GPU measurements of `vector` stay reproducible under its name.

use crate::families::tune_space::{param as p, Constraint, Knob, SpaceDef, SpaceKind};
use crate::rows::FamilyId;

const SPMV_RULES: &[Constraint] = &[Constraint::VariantLocal, Constraint::DeviceLocal];
/// SpMV's read paths of the gathered vector, as the family's vector-kernel variants.
const SPMV_PATHS: &[&str] = &["vector", "vector-ro", "vector-tex"];
const PATHS: &[u32] = &[0, 1, 2];
const VECTOR: SpaceDef = SpaceDef::of(FamilyId::Spmv, "vector", SPMV_RULES);

pub const SPACES: &[(SpaceKind, SpaceDef)] = &[
    // Read path x lanes per row (the vector width; with the work-group size, rows per group:
    // 32, 16 or 8) x groups: 9 programs (each costs seconds of GPU compile), 18 points, on a
    // uniform matrix of 16 entries a row whose x (32 MB) is about an L2.
    VECTOR.space(
        SpaceKind::Full,
        "vector",
        "2^23x2^27",
        &[
            p("path", Knob::Variant(SPMV_PATHS), PATHS),
            p("local", Knob::Local, &[256]),
            p("lanes", Knob::Define("SPMV_LANES"), &[8, 16, 32]),
            p("groups_per_cu", Knob::GroupsPerCu, &[8, 32]),
        ],
    ),
    // Every read path at two lane counts: 6 programs, 12 points.
    VECTOR.space(
        SpaceKind::Small,
        "vector",
        "2^12x2^16",
        &[
            p("path", Knob::Variant(SPMV_PATHS), PATHS),
            p("local", Knob::Local, &[64]),
            p("lanes", Knob::Define("SPMV_LANES"), &[16, 32]),
            p("groups_per_cu", Knob::GroupsPerCu, &[1, 4]),
        ],
    ),
    // Work-group size x lanes per row x groups, on `spmv/vector`'s matrix through the global
    // path: 8 programs, 16 points. 512 is in on purpose (NVIDIA's OpenCL may refuse it).
    VECTOR.space(
        SpaceKind::Full,
        "vector-local",
        "2^23x2^27",
        &[
            p("local", Knob::Local, &[64, 128, 256, 512]),
            p("lanes", Knob::Define("SPMV_LANES"), &[16, 32]),
            p("groups_per_cu", Knob::GroupsPerCu, &[8, 32]),
        ],
    ),
    // Two work-group sizes: 2 programs, 2 points.
    VECTOR.space(
        SpaceKind::Small,
        "vector-local",
        "2^12x2^16",
        &[
            p("local", Knob::Local, &[64, 256]),
            p("lanes", Knob::Define("SPMV_LANES"), &[16]),
            p("groups_per_cu", Knob::GroupsPerCu, &[1]),
        ],
    ),
];
