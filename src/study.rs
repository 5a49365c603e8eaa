//! Studies: declarative experiments in `harness/*.toml`, resolved into comparisons.
//!
//! Settings are layered: built-in defaults, then the study's `[defaults]`, then a
//! `[[comparison]]` or `[[sweep]]`, then that entry's per-side table `[comparison.a]` /
//! `[comparison.b]` (aliases `opencl` / `cuda`). Any step may be overridden on one side only;
//! the fairness verdict then names it.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use thiserror::Error;

use crate::backend::TimerKind;
use crate::fairness::Flags;
use crate::workload::{self, find_variant, FamilyKind, Size, Variant, WorkloadError};

/// The studies shipped in the binary: (name, file text).
pub const BUILTIN: &[(&str, &str)] = &[
    ("default", include_str!("../harness/default.toml")),
    (
        "whitepaper-table1",
        include_str!("../harness/whitepaper-table1.toml"),
    ),
    ("modern", include_str!("../harness/modern.toml")),
    ("unfair", include_str!("../harness/unfair.toml")),
    ("sweeps", include_str!("../harness/sweeps.toml")),
    ("peaks", include_str!("../harness/peaks.toml")),
    (
        "listing4-unroll",
        include_str!("../harness/listing4-unroll.toml"),
    ),
];

#[derive(Debug, Error)]
pub enum StudyError {
    #[error("unknown study '{name}'; built-in studies: {known} (or give a path to a .toml file)")]
    Unknown { name: String, known: String },
    #[error("{file}: {message}")]
    Parse { file: String, message: String },
    #[error("{file}: {entry}: {source}")]
    Invalid {
        file: String,
        entry: String,
        source: WorkloadError,
    },
    #[error("{file}: {entry}: {message}")]
    Field {
        file: String,
        entry: String,
        message: String,
    },
    #[error("cannot read study file {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

/// One layer of settings. Every field is optional; unknown fields are refused.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    pub name: Option<String>,
    pub family: Option<String>,
    pub variant: Option<String>,
    pub size: Option<String>,
    pub seed: Option<u64>,
    pub local: Option<u32>,
    pub groups: Option<u32>,
    /// Unroll factor per unroll point (`A = 4`); 0 removes the pragma at that point.
    pub unroll: Option<BTreeMap<String, u32>>,
    /// Extra kernel defines (WARP_SYNC_WG, USE_SUBGROUPS).
    pub defines: Option<BTreeMap<String, String>>,
    pub flags: Option<Flags>,
    pub timer: Option<String>,
    pub warmup: Option<u32>,
    pub reps: Option<u32>,
    pub max_reps: Option<u32>,
    pub min_time: Option<f64>,
    /// Sweep parameter (`local`, `groups`, `size`, `unroll.A`) and its values; sweeps only.
    pub param: Option<String>,
    pub values: Option<Vec<toml::Value>>,
    /// Run every variant of the family (with `family`), instead of naming one.
    pub all_variants: Option<bool>,
    #[serde(alias = "opencl")]
    pub a: Option<Box<Spec>>,
    #[serde(alias = "cuda")]
    pub b: Option<Box<Spec>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudyFile {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub defaults: Spec,
    #[serde(default, rename = "comparison")]
    pub comparisons: Vec<Spec>,
    #[serde(default, rename = "sweep")]
    pub sweeps: Vec<Spec>,
}

/// One side's fully resolved settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub family: FamilyKind,
    pub variant: &'static Variant,
    pub size: Size,
    pub seed: u64,
    pub local: u32,
    /// `None`: the variant's default rule, evaluated on the device.
    pub groups: Option<u32>,
    pub unroll: BTreeMap<String, u32>,
    pub defines: BTreeMap<String, String>,
    pub flags: Flags,
    pub timer: TimerKind,
    pub warmup: u32,
    pub reps: u32,
    pub max_reps: u32,
    pub min_time_s: f64,
}

impl Resolved {
    /// Unroll factors and kernel-shaping defines, as the compiler receives them.
    pub fn kernel_defines(&self) -> Vec<(String, String)> {
        let mut d: Vec<(String, String)> = self
            .unroll
            .iter()
            .filter(|(_, f)| **f > 0)
            .map(|(p, f)| (format!("UNROLL_{p}"), f.to_string()))
            .collect();
        d.extend(self.defines.iter().map(|(k, v)| (k.clone(), v.clone())));
        d
    }

    pub fn unroll_text(&self) -> String {
        if self.unroll.is_empty() {
            return "none".into();
        }
        self.unroll
            .iter()
            .map(|(p, f)| format!("{p}={f}"))
            .collect::<Vec<_>>()
            .join(";")
    }
}

/// A comparison: two sides (A = OpenCL, B = CUDA in an OpenCL-vs-CUDA run).
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Unique key within the study (used by `--resume`).
    pub id: String,
    pub a: Resolved,
    pub b: Resolved,
    pub sweep_param: String,
    pub sweep_value: String,
}

#[derive(Debug, Clone)]
pub struct Study {
    pub name: String,
    pub description: String,
    pub file: String,
    pub comparisons: Vec<Comparison>,
}

/// Load a built-in study by name, or a study file by path.
pub fn load(name_or_path: &str) -> Result<Study, StudyError> {
    if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
        return parse(text, &format!("harness/{name_or_path}.toml"));
    }
    let path = Path::new(name_or_path);
    if path.extension().is_some_and(|e| e == "toml") || path.exists() {
        let text = std::fs::read_to_string(path).map_err(|source| StudyError::Io {
            path: name_or_path.to_string(),
            source,
        })?;
        return parse(&text, name_or_path);
    }
    Err(StudyError::Unknown {
        name: name_or_path.to_string(),
        known: BUILTIN
            .iter()
            .map(|(n, _)| *n)
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// Parse and resolve a study file's text. Errors name the file, line and field.
pub fn parse(text: &str, file: &str) -> Result<Study, StudyError> {
    let parsed: StudyFile = toml::from_str(text).map_err(|e| StudyError::Parse {
        file: file.to_string(),
        message: describe_toml_error(text, &e),
    })?;
    resolve(&parsed, file)
}

fn describe_toml_error(text: &str, e: &toml::de::Error) -> String {
    let msg = e.message().trim().to_string();
    match e.span() {
        Some(span) => {
            let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
            format!("line {line}: {msg}")
        }
        None => msg,
    }
}

fn merge(base: &Spec, over: &Spec) -> Spec {
    macro_rules! pick {
        ($f:ident) => {
            over.$f.clone().or_else(|| base.$f.clone())
        };
    }
    Spec {
        name: pick!(name),
        family: pick!(family),
        variant: pick!(variant),
        size: pick!(size),
        seed: pick!(seed),
        local: pick!(local),
        groups: pick!(groups),
        unroll: pick!(unroll),
        defines: pick!(defines),
        flags: pick!(flags),
        timer: pick!(timer),
        warmup: pick!(warmup),
        reps: pick!(reps),
        max_reps: pick!(max_reps),
        min_time: pick!(min_time),
        param: pick!(param),
        values: pick!(values),
        all_variants: pick!(all_variants),
        a: None,
        b: None,
    }
}

fn resolve_side(spec: &Spec, file: &str, entry: &str) -> Result<Resolved, StudyError> {
    let invalid = |source| StudyError::Invalid {
        file: file.to_string(),
        entry: entry.to_string(),
        source,
    };
    let field = |message: String| StudyError::Field {
        file: file.to_string(),
        entry: entry.to_string(),
        message,
    };
    let family = FamilyKind::parse(spec.family.as_deref().unwrap_or("matvec")).map_err(invalid)?;
    let variant_name = spec
        .variant
        .as_deref()
        .ok_or_else(|| field("field 'variant' is missing".into()))?;
    let variant = find_variant(family, variant_name).map_err(invalid)?;
    let default_size = match family {
        FamilyKind::Matvec => "60989x1100",
        FamilyKind::Launch => "1",
        _ => "2^24",
    };
    let size = Size::parse(spec.size.as_deref().unwrap_or(default_size)).map_err(invalid)?;
    workload::check_size(variant, size).map_err(invalid)?;
    let local = spec
        .local
        .unwrap_or(if family == FamilyKind::Launch { 1 } else { 256 });
    workload::check_local(variant, local).map_err(invalid)?;
    let timer_text = spec.timer.as_deref().unwrap_or("device-event");
    let timer = TimerKind::parse(timer_text).ok_or_else(|| {
        field(format!(
            "field 'timer' = '{timer_text}' is not a timer; use device-event or wall-clock"
        ))
    })?;
    let unroll = spec.unroll.clone().unwrap_or_default();
    for point in unroll.keys() {
        if !variant.unroll_points.contains(&point.as_str()) {
            return Err(field(format!(
                "field 'unroll': variant {} has no unroll point '{point}' (it has: {})",
                variant.name,
                if variant.unroll_points.is_empty() {
                    "none".to_string()
                } else {
                    variant.unroll_points.join(", ")
                }
            )));
        }
    }
    let min_time_s = spec.min_time.unwrap_or(0.2);
    if !(min_time_s.is_finite() && min_time_s >= 0.0) {
        return Err(field(format!(
            "field 'min_time' = {min_time_s} must be a non-negative number of seconds"
        )));
    }
    let reps = spec.reps.unwrap_or(10).max(1);
    Ok(Resolved {
        family,
        variant,
        size,
        seed: spec.seed.unwrap_or(1),
        local,
        groups: spec.groups,
        unroll,
        defines: spec.defines.clone().unwrap_or_default(),
        flags: spec.flags.unwrap_or(Flags {
            mad: true,
            ..Default::default()
        }),
        timer,
        warmup: spec.warmup.unwrap_or(3),
        reps,
        max_reps: spec.max_reps.unwrap_or(1000).max(reps),
        min_time_s,
    })
}

fn comparison_from(
    spec: &Spec,
    file: &str,
    entry: &str,
    sweep: (String, String),
) -> Result<Comparison, StudyError> {
    for side in [&spec.a, &spec.b].into_iter().flatten() {
        if side.a.is_some() || side.b.is_some() || side.param.is_some() {
            return Err(StudyError::Field {
                file: file.to_string(),
                entry: entry.to_string(),
                message: "a per-side table cannot hold 'a', 'b', 'param' or 'values'".into(),
            });
        }
    }
    let a = resolve_side(
        &merge(spec, spec.a.as_deref().unwrap_or(&Spec::default())),
        file,
        entry,
    )?;
    let b = resolve_side(
        &merge(spec, spec.b.as_deref().unwrap_or(&Spec::default())),
        file,
        entry,
    )?;
    let base = spec
        .name
        .clone()
        .unwrap_or_else(|| format!("{}/{}", a.family.name(), a.variant.name));
    let id = if sweep.0.is_empty() {
        base
    } else {
        format!("{base}@{}={}", sweep.0, sweep.1)
    };
    Ok(Comparison {
        id,
        a,
        b,
        sweep_param: sweep.0,
        sweep_value: sweep.1,
    })
}

fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn apply_sweep(
    spec: &Spec,
    param: &str,
    value: &str,
    file: &str,
    entry: &str,
) -> Result<Spec, StudyError> {
    let field = |message: String| StudyError::Field {
        file: file.to_string(),
        entry: entry.to_string(),
        message,
    };
    let number = || {
        value.parse::<u32>().map_err(|_| {
            field(format!(
                "sweep value '{value}' of '{param}' is not a whole number"
            ))
        })
    };
    let mut s = spec.clone();
    match param {
        "local" => s.local = Some(number()?),
        "groups" => s.groups = Some(number()?),
        "size" => s.size = Some(value.to_string()),
        p if p.starts_with("unroll.") => {
            let mut u = s.unroll.clone().unwrap_or_default();
            u.insert(p.trim_start_matches("unroll.").to_string(), number()?);
            s.unroll = Some(u);
        }
        other => {
            return Err(field(format!(
                "sweep parameter '{other}' is not one of: local, groups, size, unroll.<point>"
            )))
        }
    }
    Ok(s)
}

fn expand_variants(spec: &Spec, file: &str, entry: &str) -> Result<Vec<Spec>, StudyError> {
    if spec.all_variants != Some(true) {
        return Ok(vec![spec.clone()]);
    }
    let family =
        FamilyKind::parse(spec.family.as_deref().unwrap_or("matvec")).map_err(|source| {
            StudyError::Invalid {
                file: file.to_string(),
                entry: entry.to_string(),
                source,
            }
        })?;
    Ok(workload::variants_of(family, false)
        .into_iter()
        .map(|v| {
            let mut s = spec.clone();
            s.variant = Some(v.name.to_string());
            s
        })
        .collect())
}

fn resolve(file_spec: &StudyFile, file: &str) -> Result<Study, StudyError> {
    let mut comparisons = Vec::new();
    for (i, c) in file_spec.comparisons.iter().enumerate() {
        let entry = format!("comparison #{}", i + 1);
        let merged = with_sides(&merge(&file_spec.defaults, c), c);
        for spec in expand_variants(&merged, file, &entry)? {
            comparisons.push(comparison_from(
                &spec,
                file,
                &entry,
                (String::new(), String::new()),
            )?);
        }
    }
    for (i, s) in file_spec.sweeps.iter().enumerate() {
        let entry = format!("sweep #{}", i + 1);
        let merged = with_sides(&merge(&file_spec.defaults, s), s);
        let param = merged.param.clone().ok_or_else(|| StudyError::Field {
            file: file.to_string(),
            entry: entry.clone(),
            message: "field 'param' is missing".into(),
        })?;
        let values = merged.values.clone().unwrap_or_default();
        if values.is_empty() {
            return Err(StudyError::Field {
                file: file.to_string(),
                entry,
                message: "field 'values' is missing or empty".into(),
            });
        }
        for spec in expand_variants(&merged, file, &entry)? {
            for v in &values {
                let value = value_text(v);
                let swept = apply_sweep(&spec, &param, &value, file, &entry)?;
                comparisons.push(comparison_from(
                    &swept,
                    file,
                    &entry,
                    (param.clone(), value),
                )?);
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    for c in &comparisons {
        if !seen.insert(c.id.clone()) {
            return Err(StudyError::Field {
                file: file.to_string(),
                entry: c.id.clone(),
                message: "two comparisons have the same name; give one a distinct 'name'".into(),
            });
        }
    }
    Ok(Study {
        name: file_spec.name.clone(),
        description: file_spec.description.clone(),
        file: file.to_string(),
        comparisons,
    })
}

fn with_sides(merged: &Spec, entry: &Spec) -> Spec {
    let mut s = merged.clone();
    s.a = entry.a.clone();
    s.b = entry.b.clone();
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_studies_parse() {
        for (name, _) in BUILTIN {
            let s = load(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!s.comparisons.is_empty(), "{name}");
        }
    }

    #[test]
    fn whitepaper_table1_has_the_papers_configuration() {
        let s = load("whitepaper-table1").unwrap();
        let names: Vec<_> = s.comparisons.iter().map(|c| c.a.variant.name).collect();
        assert_eq!(
            names,
            ["listing2", "listing3", "listing4", "listing5", "listing6", "listing7"]
        );
        let l2 = &s.comparisons[0];
        assert_eq!(
            (l2.a.size, l2.a.local, l2.a.groups),
            (Size::matrix(60989, 1100), 256, Some(239))
        );
        assert!(s.comparisons[1..]
            .iter()
            .all(|c| c.a.groups == Some(60) && c.b.groups == Some(60)));
    }

    #[test]
    fn one_side_override_is_kept() {
        let text = r#"
name = "t"
[defaults]
family = "matvec"
size = "8x8"
[[comparison]]
variant = "listing4"
[comparison.opencl]
unroll = { A = 4 }
"#;
        let s = parse(text, "t.toml").unwrap();
        let c = &s.comparisons[0];
        assert_eq!(c.a.unroll.get("A"), Some(&4));
        assert!(c.b.unroll.is_empty());
    }

    #[test]
    fn typo_is_refused_with_line_and_field() {
        let text = "name = \"t\"\n[defaults]\nfamly = \"matvec\"\n";
        let e = parse(text, "t.toml").unwrap_err().to_string();
        assert!(
            e.contains("t.toml") && e.contains("line 3") && e.contains("famly"),
            "{e}"
        );
    }

    #[test]
    fn wrong_type_is_refused_with_line() {
        let text = "name = \"t\"\n[defaults]\nlocal = \"big\"\n";
        let e = parse(text, "t.toml").unwrap_err().to_string();
        assert!(e.contains("line 3"), "{e}");
    }

    #[test]
    fn unknown_variant_and_study_list_names() {
        let text = "name = \"t\"\n[[comparison]]\nvariant = \"listing9\"\n";
        let e = parse(text, "t.toml").unwrap_err().to_string();
        assert!(e.contains("listing9") && e.contains("listing2"), "{e}");
        let e = load("nope").unwrap_err().to_string();
        assert!(e.contains("whitepaper-table1"), "{e}");
    }

    #[test]
    fn sweep_expands_values() {
        let text = r#"
name = "t"
[[sweep]]
family = "reduce"
variant = "tuned"
size = "4096"
param = "local"
values = [64, 128, 256]
"#;
        let s = parse(text, "t.toml").unwrap();
        assert_eq!(s.comparisons.len(), 3);
        assert_eq!(s.comparisons[2].a.local, 256);
        assert_eq!(s.comparisons[2].sweep_param, "local");
        assert!(s.comparisons[0].id.ends_with("@local=64"));
    }

    #[test]
    fn bad_unroll_point_is_refused() {
        let text = "name = \"t\"\n[[comparison]]\nvariant = \"listing2\"\nsize=\"4x4\"\nunroll = { Z = 2 }\n";
        let e = parse(text, "t.toml").unwrap_err().to_string();
        assert!(e.contains("unroll point 'Z'"), "{e}");
    }
}
