//! Matvec's tunable spaces: `matvec/tuned` (work-group size, groups, unroll, index width) and
//! `matvec/tuned-vec` (the vector width of the loads), a new named space beside `tuned` so that
//! the GPU measurements of `tuned` stay reproducible under its name.

use crate::families::tune_space::{param as p, Constraint, Knob, SpaceDef, SpaceKind};
use crate::rows::FamilyId;

const LOCAL_32: &[u32] = &[32, 64, 128, 256, 512, 1024];
const GROUPS: &[u32] = &[1, 2, 3, 4, 6, 8, 12, 16, 24, 32];
const UNROLL: &[u32] = &[0, 1, 2, 4, 8, 16];
const INDEX: &[u32] = &[32, 64];

const MATVEC_RULES: &[Constraint] = &[
    Constraint::VariantLocal,
    Constraint::DeviceLocal,
    Constraint::EveryGroupHasRow,
];
const TUNED: SpaceDef = SpaceDef::of(FamilyId::Matvec, "tuned", MATVEC_RULES);

pub const SPACES: &[(SpaceKind, SpaceDef)] = &[
    TUNED.space(
        SpaceKind::Full,
        "tuned",
        "32768x2048",
        &[
            p("local", Knob::Local, LOCAL_32),
            p("groups_per_cu", Knob::GroupsPerCu, GROUPS),
            p("unroll.A", Knob::Unroll("A"), UNROLL),
            p("index", Knob::Index, INDEX),
        ],
    ),
    TUNED.space(
        SpaceKind::Small,
        "tuned",
        "512x256",
        &[
            p("local", Knob::Local, &[64, 128]),
            p("groups_per_cu", Knob::GroupsPerCu, &[1, 2, 4, 8]),
            p("unroll.A", Knob::Unroll("A"), &[0, 4]),
            p("index", Knob::Index, &[32]),
        ],
    ),
    // Vector width of the loads x work-group size x groups: 6 programs, 12 points, of which
    // the 3 where 256-item groups at 32 a unit outnumber the rows are refused; at
    // `matvec/tuned`'s size and unroll 0 (at MV_VEC = 4 the PTX is `matvec/tuned`'s).
    TUNED.space(
        SpaceKind::Full,
        "tuned-vec",
        "32768x2048",
        &[
            p("local", Knob::Local, &[128, 256]),
            p("groups_per_cu", Knob::GroupsPerCu, &[8, 32]),
            p("unroll.A", Knob::Unroll("A"), &[0]),
            p("index", Knob::Index, &[32]),
            p("vec", Knob::Define("MV_VEC"), &[1, 2, 4]),
        ],
    ),
    // The narrowest and the widest loads: 2 programs (a matvec program costs PoCL seconds).
    TUNED.space(
        SpaceKind::Small,
        "tuned-vec",
        "512x256",
        &[
            p("local", Knob::Local, &[64]),
            p("groups_per_cu", Knob::GroupsPerCu, &[2]),
            p("unroll.A", Knob::Unroll("A"), &[0]),
            p("index", Knob::Index, &[32]),
            p("vec", Knob::Define("MV_VEC"), &[1, 4]),
        ],
    ),
];
