//! Tunable parameters declared as data per kernel family, with constraints, and the
//! expansion of a space into its valid points. Invalid points are counted per constraint and
//! never launched.

use std::collections::{BTreeMap, HashMap};

use crate::backend::DeviceInfo;
use crate::workload::{check_local, default_groups, find_variant, FamilyKind, Size, Variant};

pub use super::space_def::{Config, Constraint, Knob, Param, SpaceDef, SpaceKind};
use super::tiles::Tiling;
use super::TuneError;

const LOCAL_32: &[u32] = &[32, 64, 128, 256, 512, 1024];
const LOCAL_64: &[u32] = &[64, 128, 256, 512, 1024];
const GROUPS: &[u32] = &[1, 2, 3, 4, 6, 8, 12, 16, 24, 32];
const UNROLL: &[u32] = &[0, 1, 2, 4, 8, 16];
const INDEX: &[u32] = &[32, 64];

const fn p(name: &'static str, knob: Knob, values: &'static [u32]) -> Param {
    Param { name, knob, values }
}

const MATVEC_RULES: &[Constraint] = &[
    Constraint::VariantLocal,
    Constraint::DeviceLocal,
    Constraint::EveryGroupHasRow,
];
const REDUCE_RULES: &[Constraint] = &[
    Constraint::VariantLocal,
    Constraint::DeviceLocal,
    Constraint::EveryItemHasWork,
];

const SGEMM_RULES: &[Constraint] = &[
    Constraint::TileDividesMatrix,
    Constraint::VariantLocal,
    Constraint::DeviceLocal,
    Constraint::TileLoads,
    Constraint::LocalMemory,
];
const SPMV_RULES: &[Constraint] = &[Constraint::VariantLocal, Constraint::DeviceLocal];
/// SpMV's read paths of the gathered vector, as the family's vector-kernel variants.
const SPMV_PATHS: &[&str] = &["vector", "vector-ro", "vector-tex"];
const PATHS: &[u32] = &[0, 1, 2];

/// Every tunable space: the GPU spaces, then the small ones for CPU devices.
pub const SPACES: &[(SpaceKind, SpaceDef)] = &[
    (
        SpaceKind::Full,
        SpaceDef {
            family: FamilyKind::Matvec,
            name: "tuned",
            variant: "tuned",
            params: &[
                p("local", Knob::Local, LOCAL_32),
                p("groups_per_cu", Knob::GroupsPerCu, GROUPS),
                p("unroll.A", Knob::Unroll("A"), UNROLL),
                p("index", Knob::Index, INDEX),
            ],
            constraints: MATVEC_RULES,
            size: "32768x2048",
        },
    ),
    (
        SpaceKind::Full,
        SpaceDef {
            family: FamilyKind::Reduce,
            name: "tuned",
            variant: "tuned",
            params: &[
                p("local", Knob::Local, LOCAL_64),
                p("groups_per_cu", Knob::GroupsPerCu, GROUPS),
                p("unroll.A", Knob::Unroll("A"), UNROLL),
                p("index", Knob::Index, INDEX),
            ],
            constraints: REDUCE_RULES,
            size: "2^26",
        },
    ),
    // Two block tiles x two micro-tiles x two K-steps x unroll of the K loop: 16 points, of
    // which the 4 whose slices a group cannot load in whole float4 are refused; the 512
    // work-item tiling is in on purpose (NVIDIA's OpenCL refuses it at build time).
    (
        SpaceKind::Full,
        SpaceDef {
            family: FamilyKind::Sgemm,
            name: "blocked",
            variant: "blocked",
            params: &[
                p("tile_m", Knob::Define("SG_BM"), &[64, 128]),
                p("tile_n", Knob::Define("SG_BN"), &[128]),
                p("tile_k", Knob::Define("SG_BK"), &[8, 16]),
                p("item_m", Knob::Define("SG_TM"), &[4, 8]),
                p("item_n", Knob::Define("SG_TN"), &[8]),
                p("unroll.A", Knob::Unroll("A"), &[0, 2]),
            ],
            constraints: SGEMM_RULES,
            size: "4096",
        },
    ),
    // Read path x lanes per row (the vector width; with the work-group size, rows per group:
    // 32, 16 or 8) x groups: 9 programs (each costs seconds of GPU compile), 18 points, on a
    // uniform matrix of 16 entries a row whose x (32 MB) is about an L2.
    (
        SpaceKind::Full,
        SpaceDef {
            family: FamilyKind::Spmv,
            name: "vector",
            variant: "vector",
            params: &[
                p("path", Knob::Variant(SPMV_PATHS), PATHS),
                p("local", Knob::Local, &[256]),
                p("lanes", Knob::Define("SPMV_LANES"), &[8, 16, 32]),
                p("groups_per_cu", Knob::GroupsPerCu, &[8, 32]),
            ],
            constraints: SPMV_RULES,
            size: "2^23x2^27",
        },
    ),
    (
        SpaceKind::Small,
        SpaceDef {
            family: FamilyKind::Matvec,
            name: "tuned",
            variant: "tuned",
            params: &[
                p("local", Knob::Local, &[64, 128]),
                p("groups_per_cu", Knob::GroupsPerCu, &[1, 2, 4, 8]),
                p("unroll.A", Knob::Unroll("A"), &[0, 4]),
                p("index", Knob::Index, &[32]),
            ],
            constraints: MATVEC_RULES,
            size: "512x256",
        },
    ),
    (
        SpaceKind::Small,
        SpaceDef {
            family: FamilyKind::Reduce,
            name: "tuned",
            variant: "tuned",
            params: &[
                p("local", Knob::Local, &[64, 128]),
                p("groups_per_cu", Knob::GroupsPerCu, &[1, 2, 4, 8]),
                p("unroll.A", Knob::Unroll("A"), &[0, 4]),
                p("index", Knob::Index, &[32]),
            ],
            constraints: REDUCE_RULES,
            size: "2^16",
        },
    ),
    // Two tilings run, two are refused (tile-loads): 2 programs.
    (
        SpaceKind::Small,
        SpaceDef {
            family: FamilyKind::Sgemm,
            name: "blocked",
            variant: "blocked",
            params: &[
                p("tile_m", Knob::Define("SG_BM"), &[64, 128]),
                p("tile_n", Knob::Define("SG_BN"), &[128]),
                p("tile_k", Knob::Define("SG_BK"), &[8]),
                p("item_m", Knob::Define("SG_TM"), &[4, 8]),
                p("item_n", Knob::Define("SG_TN"), &[8]),
            ],
            constraints: SGEMM_RULES,
            size: "128",
        },
    ),
    // Every read path at two lane counts: 6 programs, 12 points.
    (
        SpaceKind::Small,
        SpaceDef {
            family: FamilyKind::Spmv,
            name: "vector",
            variant: "vector",
            params: &[
                p("path", Knob::Variant(SPMV_PATHS), PATHS),
                p("local", Knob::Local, &[64]),
                p("lanes", Knob::Define("SPMV_LANES"), &[16, 32]),
                p("groups_per_cu", Knob::GroupsPerCu, &[1, 4]),
            ],
            constraints: SPMV_RULES,
            size: "2^12x2^16",
        },
    ),
];

/// The space of `family/variant` of this kind, or an error naming the tunable ones.
pub fn space_def(
    family: FamilyKind,
    variant: &str,
    kind: SpaceKind,
) -> Result<&'static SpaceDef, TuneError> {
    let written = all_spaces()
        .find(|(k, d)| *k == kind && d.family == family && d.name == variant)
        .map(|(_, d)| d);
    written
        .or_else(|| declared_space(family, variant))
        .ok_or_else(|| TuneError::NoSpace {
            target: format!("{}/{variant}", family.name()),
            known: all_spaces()
                .filter(|(k, _)| *k == kind)
                .map(|(_, d)| format!("{}/{}", d.family.name(), d.name))
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// The space a family declares for `variant` (its work-group sizes, `Family::tune_locals`),
/// the same on GPUs and CPUs, at the family's default size; `None` where it declares none.
fn declared_space(family: FamilyKind, variant: &str) -> Option<&'static SpaceDef> {
    let v = find_variant(family, variant).ok()?;
    let locals = family.family().tune_locals(v);
    if locals.is_empty() {
        return None;
    }
    let params: &'static [Param] = Box::leak(Box::new([p("local", Knob::Local, locals)]));
    Some(Box::leak(Box::new(SpaceDef {
        family,
        name: v.name,
        variant: v.name,
        params,
        constraints: &[Constraint::VariantLocal, Constraint::DeviceLocal],
        size: family.family().default_size(),
    })))
}

/// Every space: [`SPACES`], then the further spaces of [`super::spaces3`].
pub fn all_spaces() -> impl Iterator<Item = &'static (SpaceKind, SpaceDef)> {
    SPACES.iter().chain(super::spaces3::SPACES3)
}

/// One point: a value index per parameter (into `Param::values`).
pub type Coords = Vec<u8>;

/// A space expanded for one problem and device: the valid points, and the invalid ones
/// counted by the first constraint they break.
#[derive(Debug, Clone)]
pub struct Space {
    pub def: &'static SpaceDef,
    pub variant: &'static Variant,
    pub size: Size,
    pub compute_units: u32,
    pub points: Vec<Coords>,
    pub invalid: BTreeMap<&'static str, usize>,
    index: HashMap<Coords, usize>,
}

impl Space {
    /// Expand `def` for `size` on `device`: every combination of values, checked against the
    /// constraints before anything runs.
    pub fn expand(
        def: &'static SpaceDef,
        size: Size,
        device: &DeviceInfo,
    ) -> Result<Space, TuneError> {
        let variant = find_variant(def.family, def.variant)?;
        crate::workload::check_size(variant, size)?;
        let mut space = Space {
            def,
            variant,
            size,
            compute_units: device.compute_units.max(1),
            points: Vec::new(),
            invalid: BTreeMap::new(),
            index: HashMap::new(),
        };
        let mut coords = vec![0u8; def.params.len()];
        loop {
            match space.broken_rule(&coords, device) {
                Some(rule) => *space.invalid.entry(rule.name()).or_default() += 1,
                None => {
                    space.index.insert(coords.clone(), space.points.len());
                    space.points.push(coords.clone());
                }
            }
            if !next_coords(&mut coords, def.params) {
                break;
            }
        }
        Ok(space)
    }

    pub fn len(&self) -> usize {
        self.points.len()
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    pub fn invalid_count(&self) -> usize {
        self.invalid.values().sum()
    }

    /// The valid point at `coords`, if any.
    pub fn find(&self, coords: &[u8]) -> Option<usize> {
        self.index.get(coords).copied()
    }

    /// The configuration of point `i`.
    pub fn config(&self, i: usize) -> Config {
        self.config_of(&self.points[i])
    }

    fn config_of(&self, coords: &[u8]) -> Config {
        let mut c = Config {
            local: 0,
            groups: 0,
            unroll: Vec::new(),
            index: 32,
            variant: None,
            defines: Vec::new(),
        };
        for (param, &ix) in self.def.params.iter().zip(coords) {
            let v = param.values[usize::from(ix)];
            match param.knob {
                Knob::Local => c.local = v,
                Knob::GroupsPerCu => c.groups = v * self.compute_units,
                Knob::Unroll(point) => c.unroll.push((point, v)),
                Knob::Index => c.index = v,
                Knob::Define(name) => c.defines.push((name, v)),
                Knob::Variant(names) => c.variant = names.get(v as usize).copied(),
            }
        }
        super::tiles::derive(self.def.family, self.size, &mut c);
        if c.groups == 0 && c.local > 0 {
            // A space that sets no group count: the variant's own rule (one work-item per
            // point of its grid).
            let variant = self.variant_of(&c);
            c.groups = default_groups(variant, self.size, c.local, self.compute_units);
        }
        c
    }

    /// The variant a configuration runs: the one it chose, or the space's.
    pub fn variant_of(&self, c: &Config) -> &'static Variant {
        c.variant
            .and_then(|name| find_variant(self.def.family, name).ok())
            .unwrap_or(self.variant)
    }

    /// Valid points one step away from point `i` along one parameter.
    pub fn neighbours(&self, i: usize) -> Vec<usize> {
        let here = &self.points[i];
        let mut out = Vec::new();
        for (d, param) in self.def.params.iter().enumerate() {
            for step in [-1i32, 1] {
                let v = i32::from(here[d]) + step;
                if v < 0 || v as usize >= param.values.len() {
                    continue;
                }
                let mut c = here.clone();
                c[d] = v as u8;
                if let Some(j) = self.find(&c) {
                    out.push(j);
                }
            }
        }
        out
    }

    fn broken_rule(&self, coords: &[u8], device: &DeviceInfo) -> Option<Constraint> {
        let c = self.config_of(coords);
        self.def
            .constraints
            .iter()
            .copied()
            .find(|rule| match rule {
                Constraint::VariantLocal => check_local(self.variant_of(&c), c.local).is_err(),
                Constraint::DeviceLocal => {
                    device.max_work_group_size > 0 && c.local > device.max_work_group_size
                }
                Constraint::EveryGroupHasRow => {
                    u64::from(c.groups) * u64::from(c.local / 32).max(1) > self.size.rows
                }
                Constraint::EveryItemHasWork => {
                    u64::from(c.groups) * u64::from(c.local) * 4 > self.size.rows
                }
                Constraint::TileDividesMatrix => !Tiling::of(&c).divides(self.size),
                Constraint::TileLoads => !Tiling::of(&c).loads_whole(),
                Constraint::LocalMemory => !match self.def.family {
                    FamilyKind::Stencil => super::stencil_tiles::fits_local_memory(&c, device),
                    _ => super::tiles::fits_local_memory(&c, device),
                },
                Constraint::TileDividesGrid => !super::stencil_tiles::divides(&c, self.size),
                Constraint::TileHalo => !super::stencil_tiles::has_halo(&c),
            })
    }
}

/// The next combination in row-major order; false after the last.
fn next_coords(coords: &mut [u8], params: &[Param]) -> bool {
    for d in (0..coords.len()).rev() {
        if usize::from(coords[d]) + 1 < params[d].values.len() {
            coords[d] += 1;
            return true;
        }
        coords[d] = 0;
    }
    false
}
