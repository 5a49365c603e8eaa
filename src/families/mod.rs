//! Kernel families, one module each, behind the `Family` trait; the registry below is the only list
//! of them, and nothing else in the harness switches on families. Adding a family: its module,
//! `kernels_cl/<name>.cl`, `kernels_cu/<name>.cu`, a study entry and a line in `FAMILIES`.

pub mod bandwidth;
pub mod bfs;
pub mod bitonic;
pub mod constmem;
pub mod dxtc;
pub mod emulation;
pub mod error;
pub mod exec;
pub mod family;
pub mod fft;
pub mod fill;
pub mod fits;
pub mod flops;
pub mod footprint;
pub mod guidance;
pub mod keys;
pub mod launch;
pub mod math;
pub mod matrix;
pub mod matvec;
pub mod md;
pub mod plan;
pub mod radix;
pub mod read_path;
pub mod recorded;
pub mod reduce;
pub mod reference;
pub mod scan;
pub mod sgemm;
pub mod spmv;
pub mod stencil;
pub mod stencil2d;
pub mod stream;
pub mod transfer;
pub mod transpose;
pub mod tune_space;
pub mod user;
pub mod variant;

#[cfg(test)]
mod tests;

/// The decision tables a rule variant reads (today `matvec/auto`'s), their files and their
/// derivation from a shape sweep: the one door to them, so nothing outside names the family.
pub mod rule_tables {
    pub use super::matvec::derive::{checks_markdown, Sweep, READ_CHECK_FLOATS};
    pub use super::matvec::rules::{check_env, file_name, table_files, RULES_ENV};
}

/// What a study declares of its own kernel pair, which [`register_user`] registers.
pub mod declared {
    pub use super::user::decl::{
        ArgSpec, CheckSpec, Declared, KernelFiles, MetricSpec, TuneSpec, UserKernel,
    };
}

use std::cmp::Ordering;
use std::str::FromStr;
use std::sync::{Arc, OnceLock, RwLock};

use crate::backend::fake::{Emulator, FakeLaunch};

pub use crate::rows::Size;
use crate::rows::{Catalog, FamilyFacts, VariantFacts};
pub use crate::rows::{FamilyId, Metric};
pub use error::{RegisterError, WorkloadError};
pub use family::{Family, InputChoice, QuickSize};
pub use footprint::Footprint;
pub use plan::FMA_ITERS;
pub use variant::{GroupRule, Variant};

/// Every family, one line each. The order is the order of reports, charts and listings.
const FAMILIES: &[&dyn Family] = &[
    &matvec::Matvec,
    &reduce::Reduce,
    &bandwidth::Bandwidth,
    &flops::Flops,
    &launch::Launch,
    &fft::Fft,
    &sgemm::Sgemm,
    &math::Math,
    &stencil::Stencil,
    &constmem::Sobel,
    &constmem::Broadcast,
    &spmv::Spmv,
    &md::Md,
    &bfs::Bfs,
    &fill::Fill,
    &transfer::Transfer,
    &transpose::Transpose,
    &stencil2d::Stencil2d,
    &scan::Scan,
    &radix::Radix,
    &bitonic::Bitonic,
    &dxtc::Dxtc,
    &stream::Stream,
    &guidance::Guidance,
];

/// The families a process knows: the built-in ones, then those its studies loaded (a
/// study's own kernel pairs, [`register_user`]). Each list is leaked anew when a family is
/// added (a handful per process), so readers get `'static` slices.
#[derive(Clone, Copy)]
struct Registry {
    all: &'static [&'static dyn Family],
    ids: &'static [FamilyId],
    variants: &'static [Variant],
    users: &'static [&'static user::UserFamily],
}

impl Registry {
    fn of(all: Vec<&'static dyn Family>, users: Vec<&'static user::UserFamily>) -> Registry {
        let ids = all.iter().map(|f| f.id()).collect::<Vec<_>>();
        let variants = all
            .iter()
            .flat_map(|f| f.variants().iter().copied())
            .collect::<Vec<_>>();
        Registry {
            all: Box::leak(all.into_boxed_slice()),
            ids: Box::leak(ids.into_boxed_slice()),
            variants: Box::leak(variants.into_boxed_slice()),
            users: Box::leak(users.into_boxed_slice()),
        }
    }
}

fn registry() -> &'static RwLock<Registry> {
    static REGISTRY: OnceLock<RwLock<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(|| RwLock::new(Registry::of(FAMILIES.to_vec(), Vec::new())))
}

fn current() -> Registry {
    *registry().read().unwrap_or_else(|e| e.into_inner())
}

/// Adds the family of a study's kernel pair, or finds it when the same declaration was
/// loaded before (a study is read more than once in a process). Refused: a name of a built-in
/// family or kernel file, or one a different declaration already took.
pub fn register_user(decl: user::decl::UserKernel) -> Result<FamilyId, RegisterError> {
    let mut guard = registry().write().unwrap_or_else(|e| e.into_inner());
    // A stand-in made from rows read earlier in this process gives way to the declaration.
    let standing_in = |f: &&dyn Family| {
        f.id().name() == decl.family && !guard.users.iter().any(|u| u.spec().id == f.id())
    };
    if !FAMILIES.iter().any(|f| f.id().name() == decl.family) && guard.all.iter().any(standing_in) {
        let all: Vec<&'static dyn Family> = guard
            .all
            .iter()
            .copied()
            .filter(|f| !standing_in(f))
            .collect();
        *guard = Registry::of(all, guard.users.to_vec());
    }
    if let Some(loaded) = guard.users.iter().find(|u| u.decl.family == decl.family) {
        if loaded.decl == decl {
            return Ok(loaded.spec().id);
        }
        return Err(RegisterError::Twice(decl.family));
    }
    if FAMILIES.iter().any(|f| f.id().name() == decl.family)
        || crate::kernels::stems().contains(&decl.family.as_str())
    {
        return Err(RegisterError::BuiltIn(decl.family));
    }
    crate::kernels::register_files(&decl.family, [decl.cl.clone(), decl.cu.clone()]);
    let family: &'static user::UserFamily = Box::leak(Box::new(user::UserFamily::new(decl)));
    *guard = Registry::of(
        [guard.all, &[family]].concat(),
        [guard.users, &[family]].concat(),
    );
    Ok(family.spec().id)
}

/// The family named `name` as result rows record it: a registered one, or else a stand-in
/// known only from its rows (a study's kernel pair declared in another process), so that its
/// run folders can be read. `None` for a name no family can have.
fn recorded(name: &str) -> Option<FamilyId> {
    if let Ok(id) = FamilyId::parse(name) {
        return Some(id);
    }
    let plausible = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
    if !plausible {
        return None;
    }
    let mut guard = registry().write().unwrap_or_else(|e| e.into_inner());
    if let Some(f) = guard.all.iter().find(|f| f.id().name() == name) {
        return Some(f.id());
    }
    let id = FamilyId::new(Box::leak(name.to_string().into_boxed_str()));
    let stand_in: &'static dyn Family = Box::leak(Box::new(recorded::Recorded::new(id)));
    *guard = Registry::of([guard.all, &[stand_in]].concat(), guard.users.to_vec());
    Some(id)
}

/// The fake backend's knowledge of kernels, supplied from the registry: each family emulates
/// its own kernels (`Family::emulation`), so the backend layer knows no family.
struct Registered;

impl Emulator for Registered {
    fn emulate(&self, launch: &mut FakeLaunch<'_>) -> crate::backend::Result<()> {
        let kernel = launch.kernel.to_string();
        if let Some(emulate) = all().iter().find_map(|f| f.emulation(&kernel)) {
            return emulate(launch);
        }
        let owner = all()
            .iter()
            .find(|f| f.variants().iter().any(|v| v.kernel == kernel));
        let why = match owner {
            Some(f) => format!(
                "family '{}' has no host emulation, so the fake backend cannot run it",
                f.id().name()
            ),
            None => {
                "no family has a host emulation of it, so the fake backend cannot run it".into()
            }
        };
        Err(launch.refuse(&why))
    }
}

/// What a fake backend runs kernels with: the families registered at each launch.
pub fn emulator() -> Arc<dyn Emulator> {
    Arc::new(Registered)
}

/// The family a study entry gets when it names none: the whitepaper's matrix-vector product.
pub const DEFAULT_FAMILY: FamilyId = FamilyId::Matvec;

/// What the registry says of every family, as the plain data the charts and the report read
/// (`rows::Catalog`): they are handed it and never ask the families themselves.
pub fn catalog() -> Catalog {
    let families = all()
        .iter()
        .map(|f| {
            let spec = f.spec();
            FamilyFacts {
                family: f.id(),
                charts: spec.charts,
                memory_references: spec.memory_references,
                vendor_ops: spec.vendor_ops,
                levels_of_size: spec.levels_of_size,
                variants: f
                    .variants()
                    .iter()
                    .map(|v| VariantFacts {
                        name: v.name,
                        algorithm: f.algorithm(v),
                        experiment: v.experiment,
                    })
                    .collect(),
            }
        })
        .collect();
    Catalog { families }
}

/// Every registered family.
pub fn all() -> &'static [&'static dyn Family] {
    current().all
}

/// The family named by `id`; ids come from the registry, so an unknown one is a bug.
pub fn get(id: FamilyId) -> &'static dyn Family {
    let found = current().all.iter().find(|f| f.id() == id);
    *found.unwrap_or_else(|| panic!("family {id} is not in the registry (src/families/mod.rs)"))
}

impl FamilyId {
    /// Every family's id, in registry order.
    pub fn all() -> &'static [FamilyId] {
        current().ids
    }

    pub fn parse(name: &str) -> Result<Self, WorkloadError> {
        Self::all()
            .iter()
            .copied()
            .find(|f| f.name() == name)
            .ok_or_else(|| WorkloadError::UnknownFamily {
                name: name.to_string(),
                known: Self::all()
                    .iter()
                    .map(|f| f.name())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    pub fn family(self) -> &'static dyn Family {
        get(self)
    }

    pub fn metric(self) -> Metric {
        get(self).spec().metric
    }

    pub fn file(self) -> &'static str {
        get(self).spec().kernel_file
    }
}

impl Ord for FamilyId {
    fn cmp(&self, other: &Self) -> Ordering {
        let position = |id: &FamilyId| current().all.iter().position(|f| f.id() == *id);
        (position(self), self.name()).cmp(&(position(other), other.name()))
    }
}

impl PartialOrd for FamilyId {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl FromStr for FamilyId {
    type Err = WorkloadError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FamilyId::parse(s)
    }
}

impl serde::Serialize for FamilyId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for FamilyId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        recorded(&text).ok_or_else(|| {
            let names: Vec<&str> = FamilyId::all().iter().map(|f| f.name()).collect();
            serde::de::Error::custom(format!(
                "unknown variant `{text}`, expected one of {}",
                names.join(", ")
            ))
        })
    }
}

/// Every variant of every family, in registry order.
pub fn all_variants() -> &'static [Variant] {
    current().variants
}

/// Every variant of a family (safe ones only unless `include_unsafe`).
pub fn variants_of(family: FamilyId, include_unsafe: bool) -> Vec<&'static Variant> {
    get(family)
        .variants()
        .iter()
        .filter(|v| include_unsafe || v.safe)
        .collect()
}

/// The variants `all_variants = true` expands to: the safe ones that are whole algorithms, not
/// one-step experiments on a part of one.
pub fn user_variants_of(family: FamilyId) -> Vec<&'static Variant> {
    variants_of(family, false)
        .into_iter()
        .filter(|v| !v.experiment)
        .collect()
}

/// A variant by family and name, or an error that lists the valid names.
pub fn find_variant(family: FamilyId, name: &str) -> Result<&'static Variant, WorkloadError> {
    get(family)
        .variants()
        .iter()
        .find(|v| v.name == name)
        .ok_or_else(|| WorkloadError::UnknownVariant {
            family: family.name().into(),
            name: name.to_string(),
            known: variants_of(family, true)
                .iter()
                .map(|v| v.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
}
