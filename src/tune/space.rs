//! Tunable parameters declared as data per kernel family, with constraints, and the
//! expansion of a space into its valid points. Invalid points are counted per constraint and
//! never launched.

use std::collections::{BTreeMap, HashMap};

use crate::backend::DeviceInfo;
use crate::families::{find_variant, FamilyId, Size, Variant};

use super::TuneError;
use crate::families::tune_space::param as p;
pub use crate::families::tune_space::{Config, Constraint, Knob, Param, SpaceDef, SpaceKind};

/// The error names the tunable ones.
pub fn space_def(
    family: FamilyId,
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

/// The space of the work-group sizes a family declares for `variant` (`Tuning::locals`), at
/// the family's default size.
fn declared_space(family: FamilyId, variant: &str) -> Option<&'static SpaceDef> {
    let v = find_variant(family, variant).ok()?;
    let locals = family.family().tuning().map_or(&[][..], |t| t.locals(v));
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
        size: family.family().spec().default_size,
    })))
}

/// Family by family in registry order (`Tuning::spaces`).
pub fn all_spaces() -> impl Iterator<Item = &'static (SpaceKind, SpaceDef)> {
    crate::families::all()
        .iter()
        .flat_map(|f| f.tuning().map_or(&[][..], |t| t.spaces()))
}

/// One point: a value index per parameter (into `Param::values`).
pub type Coords = Vec<u8>;

/// A space expanded for one problem and device; invalid points are counted by the first
/// constraint they break.
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
    pub fn expand(
        def: &'static SpaceDef,
        size: Size,
        device: &DeviceInfo,
    ) -> Result<Space, TuneError> {
        let variant = find_variant(def.family, def.variant)?;
        variant.family.family().check_size(variant, size)?;
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

    pub fn find(&self, coords: &[u8]) -> Option<usize> {
        self.index.get(coords).copied()
    }

    pub fn config(&self, i: usize) -> Config {
        self.config_of(&self.points[i])
    }

    fn config_of(&self, coords: &[u8]) -> Config {
        let mut c = Config::with_defines(&[]);
        for (param, &ix) in self.def.params.iter().zip(coords) {
            let v = param.values[usize::from(ix)];
            match param.knob {
                Knob::Local => c.local = v,
                Knob::GroupsPerCu => c.groups = v * self.compute_units,
                Knob::Unroll(point) => c.unroll.push((point, v)),
                Knob::Index => c.index = v,
                Knob::Define(name) => c.defines.push((name, v)),
                Knob::Variant(names) => c.variant = names.get(v as usize).copied(),
                Knob::MaxRegisters => c.max_registers = v,
            }
        }
        if let Some(t) = self.def.family.family().tuning() {
            t.derive_launch(self.size, &mut c);
        }
        if c.groups == 0 && c.local > 0 {
            // A space that sets no group count: the variant's own rule (one work-item per
            // point of its grid).
            let variant = self.variant_of(&c);
            c.groups = variant.family.family().default_groups(
                variant,
                self.size,
                c.local,
                self.compute_units,
            );
        }
        c
    }

    /// The one the configuration chose, or the space's.
    pub fn variant_of(&self, c: &Config) -> &'static Variant {
        c.variant
            .and_then(|name| find_variant(self.def.family, name).ok())
            .unwrap_or(self.variant)
    }

    /// Valid points one step away along one parameter.
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
        let family = self.def.family.family();
        self.def
            .constraints
            .iter()
            .copied()
            .find(|rule| match rule {
                Constraint::VariantLocal => {
                    let v = self.variant_of(&c);
                    v.family.family().check_local(v, c.local).is_err()
                }
                Constraint::DeviceLocal => {
                    device.max_work_group_size > 0 && c.local > device.max_work_group_size
                }
                Constraint::EveryGroupHasRow => {
                    u64::from(c.groups) * u64::from(c.local / 32).max(1) > self.size.rows
                }
                Constraint::EveryItemHasWork => {
                    u64::from(c.groups) * u64::from(c.local) * 4 > self.size.rows
                }
                Constraint::SecondStage => c.max_registers > 0 && !takes_second_stage(device),
                // The tile rules and restrictions are the family's own.
                _ => family
                    .tuning()
                    .is_some_and(|t| t.breaks_rule(*rule, &c, self.size, device)),
            })
    }
}

/// Whether the second stage takes options such as a register ceiling: CUDA's JIT, and
/// NVIDIA's OpenCL (`cl_nv_compiler_options`).
fn takes_second_stage(device: &DeviceInfo) -> bool {
    device.api == crate::rows::Api::Cuda.label()
        || device.vendor.to_ascii_uppercase().contains("NVIDIA")
}

/// In row-major order; false after the last.
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
