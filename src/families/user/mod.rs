//! A family made from a study: the user's twin kernel files with declared arguments, a
//! launch-grid expression, a metric and a check (`docs/study-format.md`, "Your own kernel
//! pair"). Registered when its study is loaded ([`crate::families::register_user`]); from then on
//! the harness runs, tunes and explains it through the `Family` trait like any other.

pub mod decl;
pub mod expr;
pub mod restriction;
pub mod signature;

use std::hash::{Hash, Hasher};
use std::sync::{Mutex, OnceLock};

use crate::backend::{Arg, DeviceInfo};
use crate::families::error::WorkloadError;
use crate::families::family::{nonzero_in_32_bits, Family, FamilySpec, InputChoice, Tuning};
use crate::families::footprint::{add, mul, Footprint};
use crate::families::plan::{Build, Built, ExecError, Inputs, Ran};
use crate::families::reference::{compare, mix, Verification};
use crate::families::tune_space::{param, Config, Constraint, Knob, Param, SpaceDef, SpaceKind};
use crate::families::variant::{points, v, GroupRule, Variant};
use crate::rows::{FamilyId, Metric, Size};

use decl::{ArgDecl, ArgKind, Elem, Init, UserKernel, INDEX_SLOT};
use expr::size_values;

/// The family of one user kernel pair: one variant, named after the kernel.
pub struct UserFamily {
    pub decl: UserKernel,
    spec: FamilySpec,
    /// Without a reference: this process's first result on some inputs (size and a fingerprint
    /// of the data), which later results on them (other side, other configurations) must match.
    first: Mutex<Option<(Size, u64, Vec<f64>)>>,
    /// The tuning space of `tune = {...}`, made once.
    spaces: OnceLock<&'static [(SpaceKind, SpaceDef)]>,
}

/// Leaks `s`: families, their names and variants live for the whole process.
fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

impl UserFamily {
    pub fn new(decl: UserKernel) -> UserFamily {
        let id = FamilyId::new(leak(&decl.family));
        let kernel = leak(&decl.kernel);
        let about = "the study's own kernel pair";
        let variant = points(v(id, kernel, kernel, GroupRule::Grid, about), &[]);
        let spec = FamilySpec {
            default_size: leak(&decl.size),
            variants: Box::leak(Box::new([variant])),
            ..FamilySpec::new(id, id.name(), decl.metric)
        };
        UserFamily {
            decl,
            spec,
            first: Mutex::new(None),
            spaces: OnceLock::new(),
        }
    }

    /// The element count of every argument at `size` (0 for scalars).
    fn lengths(&self, size: Size) -> Result<Vec<u64>, WorkloadError> {
        self.decl
            .args
            .iter()
            .map(|a| match &a.kind {
                ArgKind::Buffer { len, .. } => len
                    .count(size)
                    .map_err(|e| self.bad(format!("argument '{}': len {e}", a.name))),
                ArgKind::Scalar(_) => Ok(0),
            })
            .collect()
    }

    /// The bits of every scalar at `size` (0 for buffers).
    fn scalar_bits(&self, size: Size) -> Vec<u32> {
        self.decl
            .args
            .iter()
            .map(|a| match &a.kind {
                ArgKind::Scalar(value) => a.elem.bits(value.at(size)),
                ArgKind::Buffer { .. } => 0,
            })
            .collect()
    }

    /// The allowed error of each expected value ([`decl::CheckDecl::tolerance`]).
    fn tolerances(&self, want: &[f64]) -> Vec<f64> {
        let tolerance = self.decl.check.tolerance;
        want.iter().map(|w| tolerance * w.abs().max(1.0)).collect()
    }

    /// The space of the study's `tune` key, for GPUs and CPUs alike (a user sizes it): `local`
    /// and every define, under the device's and variant's work-group limits and the
    /// restrictions. None without defines: the tuner's work-group space ([`Tuning::locals`]).
    fn declared_spaces(&self) -> &'static [(SpaceKind, SpaceDef)] {
        let d = &self.decl;
        if d.tune_defines.is_empty() || d.tune_local.is_empty() {
            return &[];
        }
        let mut params: Vec<Param> = vec![param("local", Knob::Local, leak_values(&d.tune_local))];
        for (name, values) in &d.tune_defines {
            let name = leak(name);
            params.push(param(name, Knob::Define(name), leak_values(values)));
        }
        let rules = &[
            Constraint::VariantLocal,
            Constraint::DeviceLocal,
            Constraint::Restriction,
        ];
        let def = SpaceDef {
            params: Box::leak(params.into_boxed_slice()),
            size: leak(&d.size),
            ..SpaceDef::of(self.spec.id, self.spec.variants[0].name, rules)
        };
        Box::leak(Box::new([(SpaceKind::Full, def), (SpaceKind::Small, def)]))
    }

    fn output(&self) -> &ArgDecl {
        &self.decl.args[self.decl.check.output]
    }

    fn bad(&self, reason: String) -> WorkloadError {
        WorkloadError::BadProblem {
            variant: self.decl.family.clone(),
            reason,
        }
    }
}

/// A buffer's initial data, as 32-bit words of its type.
fn initial(elem: Elem, init: Option<&Init>, len: usize, seed: u64, stream: u64) -> Vec<u32> {
    match init {
        None => vec![elem.bits(0.0); len],
        Some(Init::Fill(v)) => vec![elem.bits(*v); len],
        Some(Init::Ramp) => (0..len).map(|i| elem.bits(i as f64)).collect(),
        Some(Init::Random(lo, hi)) => (0..len)
            .map(|i| {
                let u = (mix(seed, stream, i as u64) >> 11) as f64 / (1u64 << 53) as f64;
                match elem {
                    Elem::F32 => elem.bits(lo + u * (hi - lo)),
                    Elem::I32 | Elem::U32 => elem.bits((lo + u * (hi - lo + 1.0)).floor().min(*hi)),
                }
            })
            .collect(),
    }
}

impl Family for UserFamily {
    fn tuning(&self) -> Option<&dyn Tuning> {
        Some(self)
    }

    fn spec(&self) -> &FamilySpec {
        &self.spec
    }

    fn work(&self, _variant: &str, size: Size, _global: u64) -> (u64, u64) {
        // Not a finite number of at least 0: no work counted (`as` takes a negative to 0).
        let w = Some(self.decl.work.at(size)).filter(|w| w.is_finite());
        let w = w.map_or(0, |w| w as u64);
        match self.decl.metric {
            Metric::Flops => (0, w),
            _ => (w, 0),
        }
    }

    fn footprint(&self, size: Size) -> Footprint {
        let lengths = self.lengths(size).unwrap_or_default();
        let device = lengths.iter().fold(0, |s, l| add(s, mul(*l, 4)));
        let out = lengths.get(self.decl.check.output).copied().unwrap_or(0);
        // The inputs on the host, the reference and its tolerances, the result read back.
        Footprint {
            device,
            host: add(add(device, mul(out, 16)), mul(out, 4)),
            largest: lengths.iter().map(|l| mul(*l, 4)).max().unwrap_or(0),
        }
    }

    fn inputs(&self, _: &'static Variant, size: Size, seed: u64, _: InputChoice<'_>) -> Inputs {
        let lengths = self.lengths(size).unwrap_or_default();
        let buffers: Vec<Vec<u32>> = self
            .decl
            .args
            .iter()
            .zip(&lengths)
            .enumerate()
            .map(|(k, (a, len))| match &a.kind {
                ArgKind::Buffer { init, .. } => {
                    initial(a.elem, init.as_ref(), *len as usize, seed, k as u64)
                }
                ArgKind::Scalar(_) => Vec::new(),
            })
            .collect();
        let inputs = Inputs::new(size, Vec::new(), Vec::new());
        let Some(reference) = &self.decl.check.reference else {
            return inputs.with_ints(buffers);
        };
        let scalars = self.scalar_bits(size);
        let mut slots = vec![0.0; INDEX_SLOT + 1 + self.decl.args.len()];
        slots[..INDEX_SLOT].copy_from_slice(&size_values(size));
        let out_len = lengths.get(self.decl.check.output).copied().unwrap_or(0) as usize;
        let mut want = Vec::with_capacity(out_len);
        for i in 0..out_len {
            slots[INDEX_SLOT] = i as f64;
            for (k, a) in self.decl.args.iter().enumerate() {
                slots[INDEX_SLOT + 1 + k] = match a.kind {
                    ArgKind::Scalar(_) => a.elem.value(scalars[k]),
                    ArgKind::Buffer { .. } => {
                        buffers[k].get(i).map_or(f64::NAN, |b| a.elem.value(*b))
                    }
                };
            }
            want.push(reference.eval(&slots));
        }
        let tolerances = self.tolerances(&want);
        inputs.with_ints(buffers).with_reference(want, tolerances)
    }

    fn build(&self, cx: &mut Build<'_>) -> Result<Built, ExecError> {
        let kernel = cx.kernel()?;
        let scalars = self.scalar_bits(cx.inputs.size);
        let mut args = Vec::new();
        let mut result = None;
        for (k, a) in self.decl.args.iter().enumerate() {
            match (&a.kind, a.elem) {
                (ArgKind::Buffer { .. }, _) => {
                    let data = &cx.inputs.ints[k];
                    let id = cx.upload_u32(data)?;
                    if k == self.decl.check.output {
                        result = Some((id, data.len()));
                    }
                    args.push(Arg::Buffer(id));
                }
                // Both backends pass 4 bytes for either; an i32's bits travel as a u32's.
                (_, Elem::F32) => args.push(Arg::F32(f32::from_bits(scalars[k]))),
                _ => args.push(Arg::U32(scalars[k])),
            }
        }
        let (out, len) =
            result.ok_or_else(|| ExecError::from(self.bad("no output buffer".into())))?;
        let step = cx.launch(kernel, args);
        let mut built = Built::into(vec![step], out, len);
        if !matches!(self.output().kind, ArgKind::Buffer { init: None, .. }) {
            // An output that also holds input data (y = a * x + y) is not poisoned: the
            // verified run is the first after upload and reads it.
            built.outputs.clear();
        }
        Ok(built)
    }

    fn check(&self, _ran: &Ran, inputs: &Inputs, got: &[f32]) -> Verification {
        let elem = self.output().elem;
        let got: Vec<f64> = got.iter().map(|g| elem.value(g.to_bits())).collect();
        if self.decl.check.reference.is_some() {
            return compare(&got, &inputs.reference, &inputs.tolerances);
        }
        let len = inputs.ints.get(self.decl.check.output).map_or(0, Vec::len);
        let got = &got[..len.min(got.len())];
        let mut first = self.first.lock().unwrap_or_else(|e| e.into_inner());
        let key = fingerprint(&inputs.ints);
        match &*first {
            Some((size, k, want)) if *size == inputs.size && *k == key => {
                compare(got, want, &self.tolerances(want))
            }
            _ => {
                // The first result: it must at least be written everywhere (no NaN poison).
                let written: Vec<f64> = got.to_vec();
                let v = compare(got, &written, &vec![0.0; got.len()]);
                if v.ok {
                    *first = Some((inputs.size, key, written));
                }
                v
            }
        }
    }

    fn check_size(&self, variant: &Variant, size: Size) -> Result<(), WorkloadError> {
        nonzero_in_32_bits(variant, size)?;
        let lengths = self.lengths(size)?;
        let global = self
            .decl
            .global
            .count(size)
            .map_err(|e| self.bad(format!("global {e}")))?;
        if global == 0 {
            return Err(self.bad(format!(
                "global '{}' is 0 at size {size}: a launch needs at least one work-item",
                self.decl.global.text
            )));
        }
        // A scalar whose value at `size` its type cannot hold is refused, naming the range.
        for a in &self.decl.args {
            if let ArgKind::Scalar(value) = &a.kind {
                a.elem.check(value.at(size)).map_err(|range| {
                    let what = format!("argument '{}' = '{}': {range}", a.name, value.text);
                    self.bad(what)
                })?;
            }
        }
        let out = lengths[self.decl.check.output];
        if let Some(r) = &self.decl.check.reference {
            for (k, a) in self.decl.args.iter().enumerate() {
                if a.is_buffer() && r.reads(INDEX_SLOT + 1 + k) && lengths[k] < out {
                    return Err(self.bad(format!(
                        "the reference reads '{}' at every output element, but it has {} \
                         elements and the output {out}",
                        a.name, lengths[k]
                    )));
                }
            }
        }
        Ok(())
    }

    fn groups(&self, _variant: &Variant, size: Size, local: u32) -> u64 {
        let global = self.decl.global.count(size).unwrap_or(1).max(1);
        global.div_ceil(u64::from(local.max(1)))
    }
}

impl Tuning for UserFamily {
    fn locals(&self, _variant: &Variant) -> &'static [u32] {
        leak_values(&self.decl.tune_local)
    }

    fn spaces(&self) -> &'static [(SpaceKind, SpaceDef)] {
        self.spaces.get_or_init(|| self.declared_spaces())
    }

    /// A point breaks `Restriction` unless every declared restriction holds at it (names:
    /// `local`, then the defines in name order, as the restrictions were parsed).
    fn breaks_rule(&self, rule: Constraint, config: &Config, _: Size, _: &DeviceInfo) -> bool {
        if rule != Constraint::Restriction {
            return false;
        }
        let mut values = vec![f64::from(config.local)];
        for (name, _) in &self.decl.tune_defines {
            let v = config.defines.iter().find(|(n, _)| n == name);
            values.push(v.map_or(f64::NAN, |(_, v)| f64::from(*v)));
        }
        !self.decl.restrictions.iter().all(|r| r.holds(&values))
    }
}

fn leak_values(values: &[u32]) -> &'static [u32] {
    Box::leak(values.to_vec().into_boxed_slice())
}

/// A hash of every input buffer (within this process): tells one set of inputs from another.
fn fingerprint(buffers: &[Vec<u32>]) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    buffers.hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::decl::{ArgSpec, CheckSpec, Declared, MetricSpec, UserKernel};
    use super::*;
    use crate::backend::LaunchShape;

    const CL: &str = "__kernel void inc(__global float *y) {}";

    /// A family (not registered) of `inc(y)`, checked with `reference` or across results.
    fn family(reference: Option<&str>) -> UserFamily {
        let args: Vec<ArgSpec> = vec![ArgSpec {
            name: "y".into(),
            buffer: Some("f32".into()),
            scalar: None,
            len: Some("N".into()),
            init: Some("ramp".into()),
            value: None,
        }];
        let decl = UserKernel::declare(Declared {
            family: "inc-test".into(),
            kernel: "inc",
            cl: ("inc.cl".into(), CL.into()),
            cu: (
                "inc.cu".into(),
                CL.replace("__kernel", "__global__")
                    .replace("__global float", "float"),
            ),
            args: &args,
            global: Some("N"),
            metric: Some(&MetricSpec {
                bytes: Some("8*N".into()),
                flops: None,
            }),
            check: Some(&CheckSpec {
                output: "y".into(),
                reference: reference.map(Into::into),
                tolerance: Some(1e-6),
            }),
            tune: None,
            local: None,
            size: "4".into(),
        })
        .unwrap();
        UserFamily::new(decl)
    }

    fn ran() -> Ran {
        Ran {
            variant: "inc",
            shape: LaunchShape::linear(1, 4),
            flags: Vec::new(),
        }
    }

    fn inputs(f: &UserFamily) -> Inputs {
        let choice = InputChoice {
            matrix: &crate::families::matrix::MatrixSource::Uniform,
        };
        f.inputs(&f.spec().variants[0], Size::vector(4), 1, choice)
    }

    #[test]
    fn a_reference_is_computed_per_element() {
        let f = family(Some("y + 1"));
        let inputs = inputs(&f);
        assert_eq!(inputs.reference, [1.0, 2.0, 3.0, 4.0]);
        assert!(f.check(&ran(), &inputs, &[1.0, 2.0, 3.0, 4.0]).ok);
        assert!(!f.check(&ran(), &inputs, &[1.0, 2.0, 3.0, 4.1]).ok);
        assert!(!f.check(&ran(), &inputs, &[1.0, 2.0, f32::NAN, 4.0]).ok);
        assert_eq!(f.work("inc", Size::vector(4), 4), (32, 0));
        assert_eq!(f.groups(&f.spec().variants[0], Size::vector(1000), 256), 4);
    }

    #[test]
    fn without_a_reference_later_results_are_held_to_the_first() {
        let f = family(None);
        let inputs = inputs(&f);
        // A result the kernel did not write (the NaN poison) is never the reference.
        assert!(!f.check(&ran(), &inputs, &[1.0, f32::NAN, 3.0, 4.0]).ok);
        assert!(f.check(&ran(), &inputs, &[1.0, 2.0, 3.0, 4.0]).ok);
        assert!(f.check(&ran(), &inputs, &[1.0, 2.0, 3.0, 4.0]).ok);
        assert!(!f.check(&ran(), &inputs, &[1.0, 2.0, 3.0, 5.0]).ok);
    }
}
