//! What a study declares about a user's kernel pair, as read from the study file (the raw
//! keys) and as checked and parsed (a [`UserKernel`]): its arguments with their data, the
//! launch grid, the metric and the check of its result.

use serde::Deserialize;

use super::expr::{size_slot, Expr, ExprError, SizeExpr, SIZE_NAMES};
use super::restriction::{Restriction, RestrictionError};
use super::signature::{self, SignatureError};
use crate::rows::Metric;
use DeclError::Declaration;

/// Why a study's declaration of a kernel pair cannot be used, naming the key or argument.
#[derive(Debug, thiserror::Error)]
pub enum DeclError {
    #[error("{0}")]
    Declaration(String),
    #[error("{path}: {source}")]
    Signature {
        path: String,
        source: SignatureError,
    },
    #[error("field 'tune': {0}")]
    Restriction(#[from] RestrictionError),
}

/// A value a scalar's type cannot hold, with the type's range.
#[derive(Debug, thiserror::Error)]
#[error("{value} is not {range}")]
pub struct OutOfRange {
    pub value: f64,
    pub range: &'static str,
}

/// `kernels = { cl = "saxpy.cl", cu = "saxpy.cu" }`: the twin files, relative to the study.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelFiles {
    pub cl: String,
    pub cu: String,
}

/// One argument as the study writes it: `{ name = "x", buffer = "f32", len = "N", init =
/// "random(-1, 1)" }` or `{ name = "a", scalar = "f32", value = 2.5 }`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgSpec {
    pub name: String,
    pub buffer: Option<String>,
    pub scalar: Option<String>,
    pub len: Option<String>,
    pub init: Option<String>,
    pub value: Option<toml::Value>,
}

/// `metric = { bytes = "12*N" }` or `{ flops = "2*N" }`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricSpec {
    pub bytes: Option<String>,
    pub flops: Option<String>,
}

/// `check = { output = "y", reference = "a * x + y", tolerance = 1e-6 }`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckSpec {
    pub output: String,
    pub reference: Option<String>,
    pub tolerance: Option<f64>,
}

/// `tune = { local = [64, 128, 256], defines = { ITEMS = [1, 2, 4] }, restrictions = [...] }`:
/// what `clvscu tune` tries, as Kernel Tuner's `tune_params` and `restrictions` (defines are
/// passed as `-DNAME=value` to both compilers; every tried point satisfies every restriction).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TuneSpec {
    #[serde(default)]
    pub local: Vec<u32>,
    #[serde(default)]
    pub defines: std::collections::BTreeMap<String, Vec<u32>>,
    #[serde(default)]
    pub restrictions: Vec<String>,
}

/// Element types of buffers and types of scalars, by their lowercase names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "lowercase")]
pub enum Elem {
    F32,
    I32,
    U32,
}

impl Elem {
    /// The 32 bits that hold `v` in this type (rounded to the type; ints saturate).
    pub fn bits(self, v: f64) -> u32 {
        match self {
            Elem::F32 => (v as f32).to_bits(),
            Elem::I32 => (v as i32) as u32,
            Elem::U32 => v as u32,
        }
    }

    /// Refuses a value this type cannot hold, naming the range, which [`Elem::bits`] would
    /// saturate (infinity to 4294967295, -1 to 0) into a number nobody asked for.
    pub fn check(self, v: f64) -> Result<(), OutOfRange> {
        let (lo, hi, range) = match self {
            Elem::F32 => (
                -f64::from(f32::MAX),
                f64::from(f32::MAX),
                "a finite f32 (magnitude at most 3.4e38)",
            ),
            Elem::I32 => (
                f64::from(i32::MIN),
                f64::from(i32::MAX),
                "an i32, -2147483648 to 2147483647",
            ),
            Elem::U32 => (0.0, f64::from(u32::MAX), "a u32, 0 to 4294967295"),
        };
        if v.is_finite() && (lo..=hi).contains(&v) {
            Ok(())
        } else {
            Err(OutOfRange { value: v, range })
        }
    }

    pub fn value(self, bits: u32) -> f64 {
        match self {
            Elem::F32 => f64::from(f32::from_bits(bits)),
            Elem::I32 => f64::from(bits as i32),
            Elem::U32 => f64::from(bits),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Init {
    /// Every element this value (`zeros`, `ones`, a number).
    Fill(f64),
    /// Element i is i.
    Ramp,
    /// Uniform in [lo, hi) (whole numbers in [lo, hi] for integer buffers), from the seed.
    Random(f64, f64),
}

impl Init {
    fn parse(text: &str) -> Result<Init, DeclError> {
        let t = text.trim();
        match t {
            "zeros" => return Ok(Init::Fill(0.0)),
            "ones" => return Ok(Init::Fill(1.0)),
            "ramp" => return Ok(Init::Ramp),
            _ => {}
        }
        if let Some(inner) = t.strip_prefix("random(").and_then(|r| r.strip_suffix(')')) {
            let bounds: Vec<f64> = inner
                .split(',')
                .map(|b| b.trim().parse::<f64>())
                .collect::<Result<_, _>>()
                .map_err(|_| {
                    Declaration(format!("init '{t}': random(LO, HI) takes two numbers"))
                })?;
            return match bounds[..] {
                [lo, hi] if lo.is_finite() && hi.is_finite() && lo < hi => Ok(Init::Random(lo, hi)),
                _ => Err(Declaration(format!(
                    "init '{t}': random(LO, HI) needs LO < HI"
                ))),
            };
        }
        t.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .map(Init::Fill)
            .ok_or_else(|| {
                Declaration(format!(
                    "init '{t}' is not zeros, ones, ramp, random(LO, HI) or a number"
                ))
            })
    }
}

/// One checked argument, in the kernel's parameter order.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgDecl {
    pub name: String,
    pub elem: Elem,
    pub kind: ArgKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ArgKind {
    Buffer {
        len: SizeExpr,
        /// `None`: an output only, zeros on the device and poisoned before verification.
        init: Option<Init>,
    },
    Scalar(SizeExpr),
}

impl ArgDecl {
    fn parse(spec: &ArgSpec) -> Result<ArgDecl, DeclError> {
        let name = spec.name.clone();
        // Every message about this argument starts with its name.
        let bad = |what: String| Declaration(format!("argument '{name}': {what}"));
        if !crate::names::is_identifier(&name) || size_slot(&name).is_some() || name == "i" {
            return Err(bad(format!(
                "a name must be an identifier other than i, {}",
                SIZE_NAMES.join(", ")
            )));
        }
        let at = |what: &str, e: ExprError| bad(format!("{what}: {e}"));
        let elem = |ty: &str| {
            let e = ty.parse::<Elem>();
            e.map_err(|_| bad(format!("type '{ty}' is not one of f32, i32, u32")))
        };
        let (elem, kind) = match (&spec.buffer, &spec.scalar) {
            (Some(ty), None) => {
                if spec.value.is_some() {
                    return Err(bad("a buffer takes len and init, not value".into()));
                }
                let len = spec
                    .len
                    .as_deref()
                    .ok_or_else(|| bad("a buffer needs 'len'".into()))?;
                let init = spec.init.as_deref().map(Init::parse).transpose();
                (
                    elem(ty)?,
                    ArgKind::Buffer {
                        len: SizeExpr::parse(len).map_err(|e| at("len", e))?,
                        init: init.map_err(|e| bad(e.to_string()))?,
                    },
                )
            }
            (None, Some(ty)) => {
                if spec.len.is_some() || spec.init.is_some() {
                    return Err(bad("a scalar takes value, not len or init".into()));
                }
                let text = match &spec.value {
                    Some(toml::Value::String(s)) => s.clone(),
                    Some(v @ (toml::Value::Integer(_) | toml::Value::Float(_))) => v.to_string(),
                    Some(_) => return Err(bad("value must be a number or an expression".into())),
                    None => return Err(bad("a scalar needs 'value'".into())),
                };
                let value = SizeExpr::parse(&text).map_err(|e| at("value", e));
                (elem(ty)?, ArgKind::Scalar(value?))
            }
            _ => {
                return Err(bad(
                    "give exactly one of buffer = \"TYPE\" or scalar = \"TYPE\"".into(),
                ))
            }
        };
        Ok(ArgDecl { elem, kind, name })
    }

    pub fn is_buffer(&self) -> bool {
        matches!(self.kind, ArgKind::Buffer { .. })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct CheckDecl {
    /// The index of the output buffer among the arguments.
    pub output: usize,
    /// Per element, over the size parameters, `i`, and the arguments by name (a buffer's
    /// element i); `None`: the two sides' outputs are compared with each other.
    pub reference: Option<Expr>,
    /// Allowed error per element, relative to the expected value's magnitude (absolute below 1).
    pub tolerance: f64,
}

/// A user's kernel pair, checked: everything its family needs.
#[derive(Debug, Clone, PartialEq)]
pub struct UserKernel {
    /// The family's name (the kernel's unless the study names one).
    pub family: String,
    pub kernel: String,
    /// (path as the study resolved it, text) of the OpenCL and the CUDA file.
    pub cl: (String, String),
    pub cu: (String, String),
    pub args: Vec<ArgDecl>,
    pub global: SizeExpr,
    pub metric: Metric,
    pub work: SizeExpr,
    pub check: CheckDecl,
    pub tune_local: Vec<u32>,
    /// The tunable defines with their values, in name order.
    pub tune_defines: Vec<(String, Vec<u32>)>,
    /// Over `local` and the defines' names, in that order.
    pub restrictions: Vec<Restriction>,
    /// The size of the study entry, for a tune that names none.
    pub size: String,
}

/// The raw keys of one study entry, before checking.
pub struct Declared<'a> {
    pub family: String,
    pub kernel: &'a str,
    pub cl: (String, String),
    pub cu: (String, String),
    pub args: &'a [ArgSpec],
    pub global: Option<&'a str>,
    pub metric: Option<&'a MetricSpec>,
    pub check: Option<&'a CheckSpec>,
    pub tune: Option<&'a TuneSpec>,
    /// The entry's work-group size: the one tried when `tune` declares defines but no sizes.
    pub local: Option<u32>,
    pub size: String,
}

/// The checked `tune` key: work-group sizes (the entry's own `local` when the key declares
/// defines but no sizes), defines, and restrictions over `local` and the define names.
type Tune = (Vec<u32>, Vec<(String, Vec<u32>)>, Vec<Restriction>);

fn tune_of(tune: Option<&TuneSpec>, local: Option<u32>) -> Result<Tune, DeclError> {
    let Some(t) = tune else {
        return Ok(Default::default());
    };
    let mut locals = t.local.clone();
    if locals.is_empty() && !t.defines.is_empty() {
        locals.extend(local);
    }
    if locals.contains(&0) {
        return Err(Declaration("field 'tune': a work-group size of 0".into()));
    }
    for (name, values) in &t.defines {
        if !crate::names::is_identifier(name) || name == "local" {
            return Err(Declaration(format!(
                "field 'tune': '{name}' cannot name a define"
            )));
        }
        let n = values.len();
        if !(1..=255).contains(&n) {
            let e = format!("field 'tune': define '{name}' has {n} values (1 to 255)");
            return Err(Declaration(e));
        }
    }
    let names: Vec<String> = std::iter::once("local".to_string())
        .chain(t.defines.keys().cloned())
        .collect();
    let restrictions = t
        .restrictions
        .iter()
        .map(|r| Restriction::parse(r, &names))
        .collect::<Result<Vec<_>, _>>()?;
    let defines = t.defines.clone().into_iter().collect();
    Ok((locals, defines, restrictions))
}

/// The slot of `i` in a reference expression; the arguments follow it.
pub const INDEX_SLOT: usize = SIZE_NAMES.len();

impl UserKernel {
    /// Checks the declaration, and the kernels' signatures against it.
    pub fn declare(d: Declared<'_>) -> Result<UserKernel, DeclError> {
        if !crate::names::is_identifier(d.kernel) {
            return Err(Declaration(format!(
                "field 'kernel': '{}' is not a kernel name",
                d.kernel
            )));
        }
        let args = d
            .args
            .iter()
            .map(ArgDecl::parse)
            .collect::<Result<Vec<_>, _>>()?;
        for (i, a) in args.iter().enumerate() {
            if args[..i].iter().any(|b| b.name == a.name) {
                return Err(Declaration(format!(
                    "argument '{}' is declared twice",
                    a.name
                )));
            }
        }
        for file in [&d.cl, &d.cu] {
            check_signature(d.kernel, &args, file)?;
        }
        let global = SizeExpr::parse(d.global.ok_or_else(|| {
            Declaration("field 'global' is missing: the launch grid, e.g. \"N\"".into())
        })?)
        .map_err(|e| Declaration(format!("field 'global': {e}")))?;
        let (metric, work) = metric_of(d.metric)?;
        let check = check_of(d.check, &args)?;
        let (tune_local, tune_defines, restrictions) = tune_of(d.tune, d.local)?;
        Ok(UserKernel {
            family: d.family,
            kernel: d.kernel.to_string(),
            cl: d.cl,
            cu: d.cu,
            args,
            global,
            metric,
            work,
            check,
            tune_local,
            tune_defines,
            restrictions,
            size: d.size,
        })
    }
}

/// Holds the declared arguments to the kernel's parameters in `file`, naming any mismatch.
fn check_signature(
    kernel: &str,
    args: &[ArgDecl],
    (path, text): &(String, String),
) -> Result<(), DeclError> {
    let params = signature::kernel_params(text, kernel).map_err(|source| DeclError::Signature {
        path: path.clone(),
        source,
    })?;
    if params.len() != args.len() {
        let found: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
        let declared: Vec<&str> = args.iter().map(|a| a.name.as_str()).collect();
        return Err(Declaration(format!(
            "{path}: kernel '{kernel}' has {} parameter(s) ({}); the study declares {} ({})",
            found.len(),
            found.join(", "),
            declared.len(),
            declared.join(", ")
        )));
    }
    let kind =
        |buffer: bool, ty: &str| format!("{} {ty}", if buffer { "buffer" } else { "scalar" });
    for (i, (arg, param)) in args.iter().zip(&params).enumerate() {
        let declared = kind(arg.is_buffer(), arg.elem.into());
        let found = kind(param.pointer, &param.element);
        if declared != found {
            return Err(Declaration(format!(
                "{path}: argument '{}' (parameter {} of kernel '{kernel}', '{}' in the source) is \
                     declared {declared}, but the kernel takes a {found}",
                arg.name,
                i + 1,
                param.name
            )));
        }
    }
    Ok(())
}

fn metric_of(spec: Option<&MetricSpec>) -> Result<(Metric, SizeExpr), DeclError> {
    let (metric, text) = match spec.map(|m| (&m.bytes, &m.flops)) {
        Some((Some(b), None)) => (Metric::Bandwidth, b),
        Some((None, Some(f))) => (Metric::Flops, f),
        _ => {
            return Err(Declaration(
                "field 'metric': give exactly one of bytes = \"EXPR\" (GB/s) or flops = \
                 \"EXPR\" (GFLOP/s)"
                    .into(),
            ))
        }
    };
    let work = SizeExpr::parse(text).map_err(|e| Declaration(format!("field 'metric': {e}")))?;
    Ok((metric, work))
}

fn check_of(spec: Option<&CheckSpec>, args: &[ArgDecl]) -> Result<CheckDecl, DeclError> {
    let spec = spec.ok_or_else(|| {
        Declaration(
            "field 'check' is missing: which buffer holds the result, e.g. check = { output = \
             \"y\" }"
                .into(),
        )
    })?;
    let output = args
        .iter()
        .position(|a| a.is_buffer() && a.name == spec.output)
        .ok_or_else(|| {
            Declaration(format!(
                "field 'check': output '{}' is not a declared buffer",
                spec.output
            ))
        })?;
    // By default a few float32 roundings of a value near 1.
    let tolerance = spec.tolerance.unwrap_or(1e-5);
    if !(tolerance.is_finite() && tolerance >= 0.0) {
        return Err(Declaration(format!(
            "field 'check': tolerance {tolerance} must be a number of at least 0"
        )));
    }
    // The size parameters, `i`, then the arguments.
    let slot = |name: &str| match name {
        "i" => Some(INDEX_SLOT),
        _ => size_slot(name).or_else(|| {
            let k = args.iter().position(|a| a.name == name)?;
            Some(INDEX_SLOT + 1 + k)
        }),
    };
    let reference = spec
        .reference
        .as_deref()
        .map(|r| Expr::parse(r, &slot))
        .transpose()
        .map_err(|e| Declaration(format!("field 'check': reference: {e}")))?;
    Ok(CheckDecl {
        output,
        reference,
        tolerance,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CL: &str =
        "__kernel void saxpy(uint n, float a, __global const float *x, __global float *y) {}";
    const CU: &str =
        "extern \"C\" __global__ void saxpy(unsigned int n, float a, const float *x, float *y) {}";

    fn args(text: &str) -> Vec<ArgSpec> {
        #[derive(Deserialize)]
        struct A {
            args: Vec<ArgSpec>,
        }
        toml::from_str::<A>(text).unwrap().args
    }

    fn declare(args: &[ArgSpec], check: &CheckSpec) -> Result<UserKernel, DeclError> {
        UserKernel::declare(Declared {
            family: "saxpy".into(),
            kernel: "saxpy",
            cl: ("saxpy.cl".into(), CL.into()),
            cu: ("saxpy.cu".into(), CU.into()),
            args,
            global: Some("N"),
            metric: Some(&MetricSpec {
                bytes: Some("12*N".into()),
                flops: None,
            }),
            check: Some(check),
            tune: None,
            local: None,
            size: "2^10".into(),
        })
    }

    const SAXPY: &str = r#"args = [
        { name = "n", scalar = "u32", value = "N" },
        { name = "a", scalar = "f32", value = 2.5 },
        { name = "x", buffer = "f32", len = "N", init = "random(-1, 1)" },
        { name = "y", buffer = "f32", len = "N", init = "ones" },
    ]"#;

    fn check(reference: Option<&str>) -> CheckSpec {
        CheckSpec {
            output: "y".into(),
            reference: reference.map(Into::into),
            tolerance: None,
        }
    }

    #[test]
    fn saxpy_declares() {
        let k = declare(&args(SAXPY), &check(Some("a * x + y"))).unwrap();
        assert_eq!(k.args.len(), 4);
        assert_eq!(k.check.output, 3);
        assert_eq!(k.metric, Metric::Bandwidth);
        let r = k.check.reference.unwrap();
        // n, a, x, y after N, ROWS, COLS, i.
        assert_eq!(r.eval(&[0.0, 0.0, 0.0, 0.0, 8.0, 2.0, 3.0, 1.0]), 7.0);
    }

    #[test]
    fn a_wrong_argument_is_named() {
        let wrong = SAXPY.replace(
            r#"scalar = "f32", value = 2.5"#,
            r#"buffer = "f32", len = "N""#,
        );
        let e = declare(&args(&wrong), &check(None))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("argument 'a'") && e.contains("scalar f32"),
            "{e}"
        );
        let wrong = SAXPY.replace(
            r#"name = "x", buffer = "f32""#,
            r#"name = "x", buffer = "i32""#,
        );
        let e = declare(&args(&wrong), &check(None))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("argument 'x'") && e.contains("buffer f32"),
            "{e}"
        );
        let e = declare(&args(SAXPY)[..3], &check(None))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("4 parameter(s)") && e.contains("declares 3"),
            "{e}"
        );
    }

    #[test]
    fn bad_keys_are_named() {
        let e = declare(&args(SAXPY), &check(Some("a * z")))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("reference") && e.contains("unknown name 'z'"),
            "{e}"
        );
        let e = declare(&args(&SAXPY.replace("\"ones\"", "\"twos\"")), &check(None))
            .unwrap_err()
            .to_string();
        assert!(e.contains("argument 'y'") && e.contains("'twos'"), "{e}");
        let e = declare(
            &args(&SAXPY.replace("random(-1, 1)", "random(1, -1)")),
            &check(None),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("LO < HI"), "{e}");
        let mut c = check(None);
        c.output = "a".into();
        let e = declare(&args(SAXPY), &c).unwrap_err().to_string();
        assert!(e.contains("output 'a' is not a declared buffer"), "{e}");
        let e = declare(&args(&SAXPY.replace("\"n\"", "\"N\"")), &check(None))
            .unwrap_err()
            .to_string();
        assert!(e.contains("argument 'N'"), "{e}");
    }

    #[test]
    fn values_out_of_their_type_are_refused_naming_the_range() {
        assert!(Elem::U32.check(4294967295.0).is_ok());
        let e = Elem::U32.check(f64::INFINITY).unwrap_err().to_string();
        assert!(e.contains("0 to 4294967295"), "{e}");
        assert!(Elem::U32.check(-1.0).is_err());
        assert!(Elem::I32.check(-2147483648.0).is_ok());
        assert!(Elem::I32.check(2147483648.0).is_err());
        assert!(Elem::F32.check(f64::NAN).is_err());
        assert!(Elem::F32.check(1e39).is_err());
        assert!(Elem::F32.check(-1.5).is_ok());
    }

    #[test]
    fn values_hold_their_type() {
        assert_eq!(Elem::F32.value(Elem::F32.bits(2.5)), 2.5);
        assert_eq!(Elem::I32.value(Elem::I32.bits(-3.0)), -3.0);
        assert_eq!(Elem::U32.value(Elem::U32.bits(4e9)), 4e9);
        assert_eq!(Init::parse(" 3.5 ").unwrap(), Init::Fill(3.5));
        assert_eq!(
            Init::parse("random(0, 10)").unwrap(),
            Init::Random(0.0, 10.0)
        );
    }
}
