//! What a tuning space is made of: its parameters (knobs and their values), the constraints
//! that make a point invalid, the space's definition, and a point made concrete ([`Config`]).
//! The spaces are data in each family's module (`Tuning::spaces`), expanded in `tune::space`.

use super::plan::SideConfig;
use crate::backend::{JitOptions, LaunchShape};
use crate::fairness::Flags;
use crate::rows::{Api, FamilyId};

/// What a parameter sets in a configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Knob {
    /// Work-group size (CUDA block size).
    Local,
    /// Work-groups per compute unit: the group count is this times the device's units, so a
    /// space means the same on every GPU.
    GroupsPerCu,
    /// Unroll factor at a marked point of the kernel (`PRAGMA_UNROLL_<P>`); 0: no pragma.
    Unroll(&'static str),
    /// Index width of the work-item functions on both sides (`CLVSCU_INDEX`: 32 or 64).
    Index,
    /// A kernel macro given to both compilers (`-DNAME=value`): SGEMM's tile sizes, SpMV's
    /// lanes per row (its vector width).
    Define(&'static str),
    /// Which of these variants of the family runs: the value is an index into the list (the
    /// read path, where a family offers it as variants).
    Variant(&'static [&'static str]),
    /// The register ceiling of both second stages (`-cl-nv-maxrregcount`, the CUDA JIT's
    /// `CU_JIT_MAX_REGISTERS`); 0 leaves each driver its own choice. Fewer registers fit more
    /// work-groups on a compute unit, which can turn a part-empty last wave into a full one.
    MaxRegisters,
}

/// One tunable parameter and the values it may take, in order (neighbours are adjacent).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Param {
    pub name: &'static str,
    pub knob: Knob,
    pub values: &'static [u32],
}

/// One parameter of a space written as data: `param("local", Knob::Local, &[64, 128])`.
pub const fn param(name: &'static str, knob: Knob, values: &'static [u32]) -> Param {
    Param { name, knob, values }
}

/// A rule a launched point satisfies; a point that breaks one is counted under the rule's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "kebab-case")]
pub enum Constraint {
    /// The variant's own rule on the work-group size (power of two, bounds).
    VariantLocal,
    /// The device's largest work-group.
    DeviceLocal,
    /// Matvec: every work-group has a row to compute (`groups x local/32 <= rows`); more
    /// groups only add idle ones.
    #[strum(serialize = "every-group-has-a-row")]
    EveryGroupHasRow,
    /// Reduce: every work-item loads at least one float4 (`groups x local x 4 <= n`).
    EveryItemHasWork,
    /// SGEMM: the block tile divides N both ways and the micro-tile the block tile.
    TileDividesMatrix,
    /// SGEMM: each work-item loads whole float4 of both K-step slices.
    TileLoads,
    /// Stencil: the tile divides the grid's x and y extents (the kernel has no edge tiles).
    TileDividesGrid,
    /// Stencil: the tile is at least RADIUS wide and high (its first RADIUS rows and columns
    /// load the halo).
    TileHalo,
    /// The device's local memory holds what a work-group stages.
    LocalMemory,
    /// A register ceiling needs a second stage that takes options: CUDA's JIT, or NVIDIA's
    /// OpenCL (`cl_nv_compiler_options`); elsewhere the build would refuse it.
    #[strum(serialize = "second-stage-options")]
    SecondStage,
    /// A user kernel's declared restrictions (`tune.restrictions` of its study entry).
    Restriction,
}

impl Constraint {
    pub fn name(self) -> &'static str {
        self.into()
    }
}

/// A family's tunable space, as data.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpaceDef {
    pub family: FamilyId,
    /// The space's name in `FAMILY/NAME` (`clvscu tune matvec/tuned-vec`): the variant's for its
    /// first space, another for a further one (so a measured space never changes under its name).
    pub name: &'static str,
    /// The variant run (where no `Knob::Variant` chooses another).
    pub variant: &'static str,
    pub params: &'static [Param],
    pub constraints: &'static [Constraint],
    /// The size the space is meant for: several times a 50-60 MB L2.
    pub size: &'static str,
}

impl SpaceDef {
    /// `family`'s `variant` under `constraints`, which [`SpaceDef::space`] names and fills.
    pub const fn of(
        family: FamilyId,
        variant: &'static str,
        constraints: &'static [Constraint],
    ) -> SpaceDef {
        SpaceDef {
            family,
            name: variant,
            variant,
            params: &[],
            constraints,
            size: "",
        }
    }

    pub const fn space(
        self,
        kind: SpaceKind,
        name: &'static str,
        size: &'static str,
        params: &'static [Param],
    ) -> (SpaceKind, SpaceDef) {
        (
            kind,
            SpaceDef {
                name,
                size,
                params,
                ..self
            },
        )
    }
}

/// How large a space to search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::EnumString, strum::Display)]
#[strum(serialize_all = "lowercase")]
pub enum SpaceKind {
    /// The GPU space (at least 500 valid points for matvec and reduce).
    Full,
    /// A space a CPU device (PoCL) tunes in seconds: there a program costs seconds to compile
    /// and a run milliseconds, so it varies the launch more than the text (4 programs, 16 points).
    Small,
}

/// A point made concrete: what both sides of one configuration run.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Config {
    pub local: u32,
    pub groups: u32,
    /// (point, factor); factor 0 is absent from the defines.
    pub unroll: Vec<(&'static str, u32)>,
    pub index: u32,
    /// The variant run, where the space chooses one (`None`: the space's own).
    pub variant: Option<&'static str>,
    /// Kernel macros set by the space (`SG_BM`, `SPMV_LANES`).
    pub defines: Vec<(&'static str, u32)>,
    /// The register ceiling of both second stages; 0: each driver's own choice.
    pub max_registers: u32,
}

impl Config {
    /// The defines both compilers receive (besides WG_SIZE and FMA_ITERS).
    pub fn defines(&self) -> Vec<(String, String)> {
        let mut d: Vec<(String, String)> = self
            .unroll
            .iter()
            .filter(|(_, f)| *f > 0)
            .map(|(p, f)| (format!("UNROLL_{p}"), f.to_string()))
            .collect();
        d.push(("CLVSCU_INDEX".into(), self.index.to_string()));
        d.extend(
            self.defines
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string())),
        );
        d
    }

    /// A configuration that sets only `defines`: the launch left for the space to derive.
    pub(crate) fn with_defines(defines: &[(&'static str, u32)]) -> Config {
        Config {
            local: 0,
            groups: 0,
            unroll: Vec::new(),
            index: 32,
            variant: None,
            defines: defines.to_vec(),
            max_registers: 0,
        }
    }

    pub fn define(&self, name: &str) -> Option<u32> {
        self.defines
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| *v)
    }

    /// The side configuration of `api`: the same launch and defines on both APIs, the flags
    /// of the harness's default (`mad = true`) in each compiler's spelling.
    pub fn side(&self, api: Api) -> SideConfig {
        SideConfig {
            shape: LaunchShape::linear(self.groups, self.local),
            defines: self.defines(),
            flags: Flags {
                mad: true,
                ..Flags::default()
            }
            .for_api(api),
            jit: JitOptions {
                max_registers: (self.max_registers > 0).then_some(self.max_registers),
                ..JitOptions::default()
            },
        }
    }

    /// `local=256 groups=1056 unroll.A=4 index=32`: the cache's and the CSV's spelling; a
    /// chosen variant comes first and the space's defines last (`variant=vector-ro ...
    /// SPMV_LANES=16`), so spaces without them keep their old keys.
    pub fn text(&self) -> String {
        let mut launch = vec![format!("local={}", self.local)];
        launch.push(format!("groups={}", self.groups));
        launch.extend(self.unroll.iter().map(|(p, f)| format!("unroll.{p}={f}")));
        launch.push(format!("index={}", self.index));
        self.parts(launch).join(" ")
    }

    /// The variant and defines of the space, `variant=vector-ro;SPMV_LANES=16` (CSV).
    pub fn knobs_text(&self) -> String {
        self.parts(Vec::new()).join(";")
    }

    /// The chosen variant, then `launch`, then the space's defines and register ceiling.
    fn parts(&self, launch: Vec<String>) -> Vec<String> {
        let variant = self.variant.map(|v| format!("variant={v}"));
        let mut parts: Vec<String> = variant.into_iter().chain(launch).collect();
        parts.extend(self.defines.iter().map(|(k, v)| format!("{k}={v}")));
        if self.max_registers > 0 {
            parts.push(format!("registers={}", self.max_registers));
        }
        parts
    }

    /// Named values, for telling two configurations apart.
    pub fn named(&self) -> Vec<(String, String)> {
        self.text()
            .split(' ')
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }
}
