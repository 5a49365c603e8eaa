//! Studies: declarative experiments in `harness/*.toml`, resolved into comparisons.
//!
//! Settings are layered: built-in defaults, then the study's `[defaults]`, then a
//! `[[comparison]]` or `[[sweep]]`, then that entry's per-side table `[comparison.a]` /
//! `[comparison.b]` (aliases `opencl` / `cuda`). Any step may be overridden on one side only;
//! the fairness verdict then names it.

pub mod limits;
pub mod quick;
mod resolve;
mod sweep;
mod user;

use limits::{check_defines, check_limits, second_dimension};
pub use limits::{check_timeout, FieldError, MAX_REPS, MAX_TIMEOUT_S, WALL_CLOCK_TURN};
use resolve::resolve;
use sweep::{apply_sweep, expand_variants, value_text};

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use sha2::{Digest, Sha256};
use thiserror::Error;

use crate::backend::JitOptions;
use crate::fairness::Flags;
use crate::families::declared::{ArgSpec, CheckSpec, KernelFiles, MetricSpec, TuneSpec};
use crate::families::{self, find_variant, FamilyId, Size, Variant, WorkloadError};
use crate::rows::{IndexWidth, ProgramSource};
use crate::rows::{TimerKind, WaitMode};

/// The studies shipped in the binary: (name, file text), one per `harness/*.toml` (build.rs
/// lists the folder), `default` first.
pub const BUILTIN: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/builtin_studies.rs"));

#[derive(Debug, Error)]
pub enum StudyError {
    #[error(
        "unknown study '{name}'{hint}; built-in studies: {known} (or give a path to a .toml file)"
    )]
    Unknown {
        name: String,
        /// "; did you mean ..." or where an experiment's file is, or nothing.
        hint: String,
        known: String,
    },
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

impl StudyError {
    fn field(file: &str, entry: &str, message: impl Into<String>) -> Self {
        StudyError::Field {
            file: file.to_string(),
            entry: entry.to_string(),
            message: message.into(),
        }
    }
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
    /// Work-group size and work-groups in y, 2-D kernels only (default 16, the variant's rule).
    pub local_y: Option<u32>,
    pub groups_y: Option<u32>,
    /// Unroll factor per unroll point (`A = 4`); 0 removes the pragma at that point.
    pub unroll: Option<BTreeMap<String, u32>>,
    /// Extra kernel defines (WARP_SYNC_WG, USE_SUBGROUPS).
    pub defines: Option<BTreeMap<String, String>>,
    pub flags: Option<Flags>,
    /// Second-stage options: `{ opt_level = 0..=3, max_registers = N }`.
    pub jit: Option<JitOptions>,
    pub timer: Option<String>,
    /// How the host waits for completion: `finish` (default), `spin`, `yield` or `blocking`.
    pub wait: Option<String>,
    pub warmup: Option<u32>,
    /// Timed repetitions a side runs in a row before the runner turns to the other side
    /// (default 1 with the device-event timer, [`WALL_CLOCK_TURN`] with the wall clock).
    pub turn: Option<u32>,
    pub reps: Option<u32>,
    pub max_reps: Option<u32>,
    pub min_time: Option<f64>,
    /// Seconds of timing one comparison may take beyond `reps` and `min_time` while its PR's
    /// CI is still too wide to decide (see [`Resolved::target_ci`]).
    pub max_time: Option<f64>,
    /// The PR's 95% CI half-width, relative to the PR (default 0.05), that ends the timing
    /// early; 0 stops at `reps` and `min_time`.
    pub target_ci: Option<f64>,
    /// The watchdog's limit for one launch, in seconds (default: from the expected time).
    pub timeout: Option<f64>,
    /// Index width: `u32` (default), `u64` or `native` (each API its own: unfair).
    pub index: Option<String>,
    /// `own` (default) or `other`: run the other side's compiled program (one side only).
    pub program: Option<String>,
    /// SpMV's matrix: `uniform` (default), `banded`, `powerlaw` or `file:PATH.mtx`.
    pub matrix: Option<String>,
    /// A refusal the study expects of a driver, recorded as the driver answered but not
    /// counted as a failure: `non-uniform-work-group` (see [`ExpectedRefusal`]).
    pub expect: Option<String>,
    /// Sweep parameter (`local`, `groups`, `size`, `unroll.A`) and its values; sweeps only.
    pub param: Option<String>,
    pub values: Option<Vec<toml::Value>>,
    /// Run every variant of the family (with `family`), instead of naming one.
    pub all_variants: Option<bool>,
    /// A kernel pair of the user's own (`src/study/user.rs`): twin files (relative to the study
    /// file), kernel name, arguments, launch grid, metric, check and tune space.
    pub kernels: Option<KernelFiles>,
    pub kernel: Option<String>,
    pub args: Option<Vec<ArgSpec>>,
    pub global: Option<String>,
    pub metric: Option<MetricSpec>,
    pub check: Option<CheckSpec>,
    pub tune: Option<TuneSpec>,
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

/// The entry's family: the default where it names none.
fn family_of(spec: &Spec) -> Result<FamilyId, WorkloadError> {
    spec.family
        .as_deref()
        .map_or(Ok(families::DEFAULT_FAMILY), FamilyId::parse)
}

#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub family: FamilyId,
    pub variant: &'static Variant,
    pub size: Size,
    pub seed: u64,
    pub local: u32,
    /// `None`: the variant's default rule, evaluated on the device.
    pub groups: Option<u32>,
    /// The y dimension of a 2-D launch (1 and `Some(1)` for 1-D kernels).
    pub local_y: u32,
    pub groups_y: Option<u32>,
    pub unroll: BTreeMap<String, u32>,
    pub defines: BTreeMap<String, String>,
    pub flags: Flags,
    pub jit: JitOptions,
    pub timer: TimerKind,
    pub wait: WaitMode,
    pub warmup: u32,
    /// Timed repetitions in a row per side; above 1, each turn starts with one untimed run.
    pub turn: u32,
    pub reps: u32,
    pub max_reps: u32,
    pub min_time_s: f64,
    pub max_time_s: f64,
    /// See [`Spec::target_ci`] and [`crate::session`]'s adaptive rule.
    pub target_ci: f64,
    /// The watchdog's limit for one launch; `None`: derived from the expected time.
    pub timeout_s: Option<f64>,
    pub index: IndexWidth,
    pub program: ProgramSource,
    /// SpMV's matrix (the others ignore it).
    pub matrix: crate::families::matrix::MatrixSource,
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
        d.push(("CLVSCU_INDEX".into(), self.index.define().into()));
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
    pub expected_refusal: Option<ExpectedRefusal>,
}

crate::names::named_enum! {
    /// A launch a driver is expected to refuse, by the API's own rule: the refusal is still
    /// sent to the driver and recorded as it answered (`launch-failed` with its error), but a
    /// run whose only failures are such refusals is complete (exit 0), and says so.
    #[strum(serialize_all = "kebab-case")]
    pub enum ExpectedRefusal {
        /// OpenCL 1.2 refuses (`CL_INVALID_WORK_GROUP_SIZE`) a local size that does not divide
        /// the global size, as in the fill article's launch at exactly its element count;
        /// OpenCL 2.0 made such non-uniform work-groups optional.
        NonUniformWorkGroup,
    }
}

impl ExpectedRefusal {
    /// Whether `row` is this refusal, and nothing else: the API, the driver's own error and
    /// the launch the rule is about.
    pub fn covers(self, row: &crate::rows::MeasurementRow) -> bool {
        match self {
            ExpectedRefusal::NonUniformWorkGroup => {
                row.status == crate::rows::Status::LaunchFailed
                    && row.api == crate::rows::Api::OpenCl
                    && row.error.contains("CL_INVALID_WORK_GROUP_SIZE")
                    && row.local_size > 0
                    && !row.elements.is_multiple_of(u64::from(row.local_size))
            }
        }
    }

    /// The rule, in a sentence for the run's summary.
    pub fn rule(self) -> &'static str {
        match self {
            ExpectedRefusal::NonUniformWorkGroup => {
                "OpenCL 1.2 refuses a local size that does not divide the global size"
            }
        }
    }
}

#[derive(Debug, Clone)]
pub struct Study {
    pub name: String,
    pub description: String,
    pub file: String,
    pub comparisons: Vec<Comparison>,
    /// SHA-256 of the study file's text (hex), for provenance.
    pub sha256: String,
}

/// The longest one comparison's timing may run: `min_time` above it is refused, and the
/// session stops timing there whatever a study asks.
pub const MAX_TIMING_S: f64 = 600.0;

/// `max_time` and `target_ci`, checked: at most [`MAX_TIMING_S`], a share in [0, 1).
fn stopping_rule(max_time: Option<f64>, target_ci: Option<f64>) -> Result<(f64, f64), FieldError> {
    // 2 s by default: enough for a CPU device's noisy timings to reach a verdict; a GPU's
    // comparisons, narrow at their minimum already, never use it.
    let max_time = max_time.unwrap_or(2.0);
    if !(max_time.is_finite() && (0.0..=MAX_TIMING_S).contains(&max_time)) {
        return Err(FieldError::Rule(format!(
            "field 'max_time' = {max_time} must be a number of seconds from 0 to {MAX_TIMING_S}"
        )));
    }
    let target = target_ci.unwrap_or(0.05);
    if !(target.is_finite() && (0.0..1.0).contains(&target)) {
        return Err(FieldError::Rule(format!(
            "field 'target_ci' = {target} must be a share of the PR in [0, 1) (0.05: ±5%; 0: \
             stop at 'reps' and 'min_time')"
        )));
    }
    Ok((max_time, target))
}

impl Study {
    /// Sets every side's stopping rule from the command line, checked as the study's own
    /// `max_time` and `target_ci` are; `None` keeps the study's.
    pub fn set_stopping(
        &mut self,
        max_time: Option<f64>,
        target_ci: Option<f64>,
    ) -> Result<(), FieldError> {
        let (max_time_s, target) = stopping_rule(max_time, target_ci)?;
        for side in self
            .comparisons
            .iter_mut()
            .flat_map(|c| [&mut c.a, &mut c.b])
        {
            if max_time.is_some() {
                side.max_time_s = max_time_s;
            }
            if target_ci.is_some() {
                side.target_ci = target;
            }
        }
        Ok(())
    }
}

/// Load a built-in study by name, or a study file by path.
pub fn load(name_or_path: &str) -> Result<Study, StudyError> {
    if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
        return parse(text, &format!("harness/{name_or_path}.toml"));
    }
    let path = Path::new(name_or_path);
    if path.extension().is_some_and(|e| e == "toml") || path.exists() {
        let text = crate::input_file::read_text_capped(path, crate::input_file::STUDY_CAP)
            .map_err(|source| StudyError::Io {
                path: name_or_path.to_string(),
                source,
            })?;
        return parse(&text, name_or_path);
    }
    Err(StudyError::Unknown {
        name: name_or_path.to_string(),
        hint: unknown_study_hint(name_or_path),
        known: BUILTIN
            .iter()
            .map(|(n, _)| *n)
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// The studies of `harness/experiments/`, by name: each answers one question of the findings
/// and is run by path, not built in.
const EXPERIMENTS: &[&str] = include!(concat!(env!("OUT_DIR"), "/experiment_studies.rs"));

/// Where an unknown study name points: an experiment's file, or the closest built-in name.
fn unknown_study_hint(name: &str) -> String {
    if EXPERIMENTS.contains(&name) {
        return format!(
            ": it is an experiment, not built in; run it by path: --study \
             harness/experiments/{name}.toml"
        );
    }
    let closest = BUILTIN
        .iter()
        .map(|(n, _)| (strsim::jaro_winkler(name, n), *n))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match closest {
        // The threshold clap uses for its own "did you mean".
        Some((score, n)) if score > 0.7 => format!(" (did you mean '{n}'?)"),
        _ => String::new(),
    }
}

/// Parse and resolve a study file's text. Errors name the file, line and field.
pub fn parse(text: &str, file: &str) -> Result<Study, StudyError> {
    let parsed: StudyFile = toml::from_str(text).map_err(|e| StudyError::Parse {
        file: file.to_string(),
        message: describe_toml_error(text, &e),
    })?;
    let mut study = resolve(&parsed, file)?;
    study.sha256 = format!("{:x}", Sha256::digest(text.as_bytes()));
    Ok(study)
}

fn describe_toml_error(text: &str, e: &toml::de::Error) -> String {
    let msg = e.message().trim().to_string();
    match e.span() {
        Some(span) => {
            // Counted on bytes: slicing the `str` would panic if a span ever fell inside a
            // multi-byte character.
            let upto = span.start.min(text.len());
            let line = text.as_bytes()[..upto]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                + 1;
            format!("line {line}: {msg}")
        }
        None => msg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every define of the shipped studies is a knob of its kernel in both APIs' sources.
    #[test]
    fn the_built_in_studies_define_only_knobs() {
        let sources = crate::kernels::KernelSources::embedded();
        let mut checked = 0;
        for (name, _) in BUILTIN {
            let study = load(name).unwrap();
            for c in &study.comparisons {
                for side in [&c.a, &c.b] {
                    sources
                        .check_defines(side.family.file(), side.defines.keys())
                        .unwrap();
                    checked += side.defines.len();
                }
            }
        }
        assert!(checked > 0, "no built-in study has a define");
    }

    /// On the committed H100 and H200 runs of the exact launch, the fill study's expectation covers exactly
    /// the rows NVIDIA's OpenCL refused (the article's exact launch at a local size that does
    /// not divide 10^8) and no other row.
    #[test]
    fn the_fill_expectation_covers_exactly_what_nvidias_opencl_refused() {
        let fill = load("fill").unwrap();
        let expected = fill
            .comparisons
            .iter()
            .find(|c| c.id.starts_with("fill/1d-exact"))
            .and_then(|c| c.expected_refusal)
            .expect("the exact-launch sweep expects a refusal");
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("results");
        // A suite whose fill step was stopped at its cap may lack the exact-launch sweep: only
        // folders whose suite.csv says the step is done are held to it, and one must be.
        let done: Vec<String> = ["h100", "h200"]
            .into_iter()
            .filter(|gpu| {
                std::fs::read_to_string(root.join(gpu).join("suite.csv"))
                    .is_ok_and(|t| t.lines().any(|l| l.starts_with("fill,done,")))
            })
            .map(|gpu| format!("{gpu}/fill"))
            .collect();
        assert!(
            !done.is_empty(),
            "no suite folder with a finished fill step"
        );
        for folder in &done {
            let rows: Vec<crate::rows::MeasurementRow> = crate::export::csv::read_rows(
                &Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join(format!("results/{folder}/measurements.csv")),
            )
            .unwrap();
            let covered: Vec<&str> = rows
                .iter()
                .filter(|r| expected.covers(r))
                .map(|r| r.comparison.as_str())
                .collect();
            let failed = rows
                .iter()
                .filter(|r| r.status != crate::rows::Status::Ok)
                .count();
            assert_eq!(covered.len(), failed, "{folder}: {covered:?}");
            assert!(
                covered
                    .iter()
                    .all(|c| c.starts_with("fill/1d-exact@local=")),
                "{folder}: {covered:?}"
            );
            assert!(!covered.is_empty(), "{folder}: no refusal to cover");
        }
    }

    /// A watchdog limit past what a `Duration` holds used to end the run in a panic.
    #[test]
    fn a_timeout_beyond_a_week_is_refused_by_name_not_a_panic() {
        let study = |t: &str| {
            parse(
                &format!(
                    "name = \"t\"\n[[comparison]]\nname = \"a\"\nvariant = \"listing2\"\n\
                     size = \"64x64\"\ntimeout = {t}\n"
                ),
                "t.toml",
            )
        };
        if let Err(e) = study("3600") {
            panic!("{e}");
        }
        for t in ["1e308", "604801"] {
            let e = study(t).unwrap_err().to_string();
            assert!(
                e.contains("longest watchdog limit") && e.contains("604800"),
                "{e}"
            );
        }
        assert!(check_timeout(MAX_TIMEOUT_S).is_ok());
    }

    #[test]
    fn builtin_studies_parse() {
        for (name, _) in BUILTIN {
            let s = load(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!s.comparisons.is_empty(), "{name}");
        }
    }

    #[test]
    fn whitepaper_table1_has_the_papers_configuration() {
        let s = load("table1").unwrap();
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
    fn a_second_dimension_is_refused_for_one_dimensional_kernels() {
        let base = "name = \"t\"\n[defaults]\nfamily = \"matvec\"\nvariant = \"tuned\"\n\
                    [[comparison]]\nname = \"c\"\n";
        for key in ["local_y = 8", "groups_y = 4"] {
            let e = parse(&format!("{base}{key}\n"), "t.toml")
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("1-D kernel") && e.contains(&key[..key.find(' ').unwrap()]),
                "{e}"
            );
        }
        // 1 is what a 1-D launch has anyway.
        let s = parse(&format!("{base}local_y = 1\n"), "t.toml").unwrap();
        assert_eq!(
            (s.comparisons[0].a.local_y, s.comparisons[0].a.groups_y),
            (1, None)
        );
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

    /// The study's hash is the file's SHA-256 as `sha256sum` prints it.
    #[test]
    fn a_study_records_its_files_sha256() {
        let text = "name = \"t\"\n[defaults]\nfamily = \"matvec\"\nsize = \"8x8\"\n\
                    [[comparison]]\nvariant = \"listing4\"\n";
        assert_eq!(
            parse(text, "t.toml").unwrap().sha256,
            "5eef5ee968fe075e091bf31a0220db47639d27ffda03df3708fe39a8c884032a"
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
        assert!(e.contains("table1"), "{e}");
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
    fn empty_name_and_zero_groups_are_refused() {
        // Both once parsed: an empty name gave an empty comparison id (the key of --resume
        // and --only), and groups = 0 reached the driver as an empty launch.
        let base = "name = \"t\"\n[[comparison]]\nvariant = \"listing2\"\nsize = \"8x8\"\n";
        let e = parse(&format!("{base}name = \" \"\n"), "t.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("t.toml: comparison #1") && e.contains("'name'"),
            "{e}"
        );
        let e = parse(&format!("{base}groups = 0\n"), "t.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("'groups' = 0"), "{e}");
        let sweep = "name = \"t\"\n[[sweep]]\nvariant = \"listing2\"\nsize = \"8x8\"\n\
                     param = \"groups\"\nvalues = [1, 0]\n";
        let e = parse(sweep, "t.toml").unwrap_err().to_string();
        assert!(e.contains("sweep #1") && e.contains("'groups' = 0"), "{e}");
        assert!(parse(&format!("{base}groups = 1\nname = \"x\"\n"), "t.toml").is_ok());
    }

    #[test]
    fn bad_unroll_point_is_refused() {
        let text = "name = \"t\"\n[[comparison]]\nvariant = \"listing2\"\nsize=\"4x4\"\nunroll = { Z = 2 }\n";
        let e = parse(text, "t.toml").unwrap_err().to_string();
        assert!(e.contains("unroll point 'Z'"), "{e}");
    }
}

/// Property tests over many thousands of study texts: `parse` never panics, every error it
/// returns names the file and says something, and every study it accepts holds what
/// `resolve_side` and `resolve` promise (the runner relies on those without re-checking).
#[cfg(test)]
mod fuzz_tests {
    use std::collections::HashSet;

    use proptest::prelude::*;
    use proptest::sample::{select, Index};
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;

    use super::*;
    use crate::families::all_variants;

    /// Checks the contract of one `parse` call; returns whether the text was accepted.
    fn check_parse(text: &str, file: &str) -> Result<bool, TestCaseError> {
        match parse(text, file) {
            Ok(study) => {
                check_study(&study, file)?;
                Ok(true)
            }
            Err(e) => {
                check_error(&e, file)?;
                Ok(false)
            }
        }
    }

    fn check_error(e: &StudyError, file: &str) -> Result<(), TestCaseError> {
        // `parse` reads no file and looks up no name, so only these kinds can come out, and
        // each of them displays as "FILE: what is wrong".
        prop_assert!(
            matches!(
                e,
                StudyError::Parse { .. } | StudyError::Invalid { .. } | StudyError::Field { .. }
            ),
            "unexpected error kind: {e:?}"
        );
        let shown = e.to_string();
        let prefix = format!("{file}: ");
        prop_assert!(
            shown.starts_with(&prefix),
            "error does not start with the file name {file:?}: {shown:?}"
        );
        prop_assert!(
            !shown[prefix.len()..].trim().is_empty(),
            "error names the file but says nothing: {shown:?}"
        );
        Ok(())
    }

    fn check_study(s: &Study, file: &str) -> Result<(), TestCaseError> {
        prop_assert_eq!(&s.file, file);
        let mut ids = HashSet::new();
        for c in &s.comparisons {
            // `--resume` and `--only` key on the id: it must be present and unique.
            prop_assert!(!c.id.trim().is_empty(), "blank comparison id {:?}", c.id);
            prop_assert!(ids.insert(c.id.as_str()), "duplicate id {}", c.id);
            if c.sweep_param.is_empty() {
                prop_assert!(c.sweep_value.is_empty());
            } else {
                let p = c.sweep_param.as_str();
                prop_assert!(
                    matches!(p, "local" | "groups" | "size" | "index") || p.starts_with("unroll."),
                    "sweep parameter {p}"
                );
                let tail = format!("@{}={}", c.sweep_param, c.sweep_value);
                prop_assert!(c.id.ends_with(&tail), "{} lacks {tail}", c.id);
            }
            for side in [&c.a, &c.b] {
                prop_assert_eq!(side.variant.family, side.family);
                prop_assert!(
                    side.family
                        .family()
                        .check_size(side.variant, side.size)
                        .is_ok(),
                    "{}: size {} accepted",
                    c.id,
                    side.size
                );
                prop_assert!(
                    side.family
                        .family()
                        .check_local(side.variant, side.local)
                        .is_ok(),
                    "{}: local {} accepted",
                    c.id,
                    side.local
                );
                prop_assert!(side.groups != Some(0), "{}: groups = 0 accepted", c.id);
                prop_assert!(side.reps >= 1 && side.max_reps >= side.reps);
                prop_assert!(side.min_time_s.is_finite() && side.min_time_s >= 0.0);
                for point in side.unroll.keys() {
                    prop_assert!(
                        side.variant.unroll_points.contains(&point.as_str()),
                        "{}: unroll point {point} accepted",
                        c.id
                    );
                }
            }
        }
        Ok(())
    }

    /// Values that sit on or past some limit: TOML number edges, u32/u64 edges, sizes that
    /// overflow, strings that look like numbers, and wrong types.
    const NASTY: &[&str] = &[
        "1e308",
        "-1e308",
        "1e-308",
        "5e-324",
        "-1",
        "0",
        "-0.0",
        "0.0",
        "1.5",
        "4294967295",
        "4294967296",
        "9223372036854775807",
        "-9223372036854775808",
        "18446744073709551616",
        "0x0",
        "0xffffffff",
        "nan",
        "inf",
        "-inf",
        "true",
        "[]",
        "[1, -1, 1e308]",
        "[[1], [\"a\"]]",
        "{}",
        "{ A = 4 }",
        "1979-05-27T07:32:00Z",
        "\"\"",
        "\"2^99\"",
        "\"2^64\"",
        "\"2^63\"",
        "\"2^\"",
        "\"^\"",
        "\"0x0\"",
        "\"x\"",
        "\"1_000\"",
        "\"4294967295\"",
        "\"65536x65536\"",
        "\"18446744073709551616x2\"",
        "\"60989x1100\"",
        "\"nan\"",
        "\"é😀\"",
        "'literal'",
        "\"\"\"multi\nline\"\"\"",
    ];

    /// A value in TOML syntax: mostly [`NASTY`], else random numbers and strings.
    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => select(NASTY).prop_map(str::to_string),
            1 => any::<i64>().prop_map(|n| n.to_string()),
            1 => any::<u64>().prop_map(|n| n.to_string()),
            // Any f64 in TOML's spelling (nan, inf, 1e300...).
            1 => any::<f64>().prop_map(|x| toml::Value::Float(x).to_string()),
            1 => ".{0,12}".prop_map(|s| toml::Value::String(s).to_string()),
            1 => "[0-9]{1,5}((x|\\^)[0-9]{1,5})?".prop_map(|s| format!("\"{s}\"")),
        ]
    }

    /// Text that changes the structure when inserted: headers, keys, brackets, quotes.
    const SNIPPETS: &[&str] = &[
        "\n[[comparison]]\n",
        "\n[[comparison]]\nvariant = \"listing2\"\nsize = \"8x8\"\n",
        "\n[[sweep]]\nparam = \"local\"\nvalues = [64, 0, 4294967296]\n",
        "\n[[sweep]]\nfamily = \"reduce\"\nvariant = \"tuned\"\nparam = \"unroll.A\"\nvalues = [\"x\"]\n",
        "\n[defaults]\n",
        "\n[comparison.a]\n",
        "\n[comparison.opencl]\nlocal = 0\n",
        "\n[comparison.b.a]\n",
        "\n[sweep.cuda]\nparam = \"size\"\n",
        "\nall_variants = true\n",
        "\nname = \"\"\n",
        "\ngroups = 0\n",
        "\nunroll = { A = 0, Z = 1 }\n",
        "\nmin_time = nan\n",
        "\nfamily = \"launch\"\n",
        "=",
        "\"",
        "'",
        "[",
        "]",
        "{",
        "}",
        "\n",
        "#",
        "\\",
        "'''",
        "\"\"\"",
        ".",
        ",",
        "\r",
        "\u{feff}",
        "\0",
    ];

    fn inserted_text() -> impl Strategy<Value = String> {
        prop_oneof![
            2 => select(SNIPPETS).prop_map(str::to_string),
            1 => ".{0,16}",
        ]
    }

    /// Positions are taken modulo the length of the text they apply to.
    #[derive(Debug, Clone)]
    enum Mutation {
        /// Delete up to `len` bytes (rounded to character boundaries) at a position.
        Delete(usize, usize),
        /// Insert text at a position.
        Insert(usize, String),
        /// Replace the n-th value (the text after some `=`) with another.
        Replace(usize, String),
    }

    fn mutation() -> impl Strategy<Value = Mutation> {
        prop_oneof![
            1 => (any::<usize>(), 1..80usize).prop_map(|(at, len)| Mutation::Delete(at, len)),
            1 => (any::<usize>(), inserted_text()).prop_map(|(at, s)| Mutation::Insert(at, s)),
            2 => (any::<usize>(), value()).prop_map(|(n, v)| Mutation::Replace(n, v)),
        ]
    }

    /// The largest character boundary of `text` at or before `i`.
    fn floor_boundary(text: &str, i: usize) -> usize {
        let mut i = i.min(text.len());
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    }

    /// Byte ranges of the values in `text`: what follows each `=` up to the end of a quoted
    /// string, a bracketed array or inline table, or a bare token.
    fn value_spans(text: &str) -> Vec<(usize, usize)> {
        let bytes = text.as_bytes();
        let line_end = |from: usize| {
            bytes[from..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |p| from + p)
        };
        let mut spans = Vec::new();
        for (eq, _) in text.match_indices('=') {
            let mut start = eq + 1;
            while start < bytes.len() && (bytes[start] == b' ' || bytes[start] == b'\t') {
                start += 1;
            }
            let eol = line_end(start);
            let end = match bytes.get(start) {
                Some(b'"') => bytes[start + 1..eol]
                    .iter()
                    .position(|&b| b == b'"')
                    .map_or(eol, |p| start + 1 + p + 1),
                Some(&open @ (b'[' | b'{')) => {
                    let close = if open == b'[' { b']' } else { b'}' };
                    let mut depth = 0usize;
                    let mut end = eol;
                    for (k, &b) in bytes[start..eol].iter().enumerate() {
                        if b == open {
                            depth += 1;
                        } else if b == close {
                            depth -= 1;
                            if depth == 0 {
                                end = start + k + 1;
                                break;
                            }
                        }
                    }
                    end
                }
                _ => bytes[start..eol]
                    .iter()
                    .position(|&b| matches!(b, b',' | b'}' | b']' | b'#' | b' '))
                    .map_or(eol, |p| start + p),
            };
            // Every delimiter above is ASCII, so both ends are character boundaries.
            spans.push((start, end));
        }
        spans
    }

    fn apply(text: &str, m: &Mutation) -> String {
        let mut out = text.to_string();
        match m {
            Mutation::Delete(at, len) => {
                let start = floor_boundary(text, at % (text.len() + 1));
                let end = floor_boundary(text, start + len);
                out.replace_range(start..end, "");
            }
            Mutation::Insert(at, s) => {
                out.insert_str(floor_boundary(text, at % (text.len() + 1)), s);
            }
            Mutation::Replace(n, v) => {
                let spans = value_spans(text);
                if !spans.is_empty() {
                    let (start, end) = spans[n % spans.len()];
                    out.replace_range(start..end, v);
                }
            }
        }
        out
    }

    #[test]
    fn mutation_helpers_do_what_they_say() {
        let text = "a = 1\nb = \"x y\" # c\nc = [1, [2]]\nd = { e = 5 }\n";
        let spans: Vec<&str> = value_spans(text)
            .into_iter()
            .map(|(s, e)| &text[s..e])
            .collect();
        assert_eq!(spans, ["1", "\"x y\"", "[1, [2]]", "{ e = 5 }", "5"]);
        assert_eq!(floor_boundary("aé", 2), 1);
        assert_eq!(apply("ab", &Mutation::Insert(5, "X".into())), "abX");
        assert_eq!(apply("aé", &Mutation::Insert(2, "X".into())), "aXé");
        assert_eq!(
            apply(text, &Mutation::Replace(2, "nan".into())),
            text.replace("[1, [2]]", "nan")
        );
        assert_eq!(apply("abc", &Mutation::Delete(1, 1)), "ac");
        assert_eq!(apply("aéb", &Mutation::Delete(0, 2)), "éb");
    }

    // ---- Structured generation: the real schema, with often-invalid values. ----

    fn quoted(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| format!("\"{s}\"")).collect()
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    /// One key of a `Spec` with candidate values in TOML syntax: ones that `parse` accepts
    /// somewhere (`good`), and ones it must refuse, or accept only in some combinations (`bad`).
    struct Key {
        name: &'static str,
        good: Vec<String>,
        bad: Vec<String>,
    }

    fn key(name: &'static str, good: Vec<String>, bad: Vec<String>) -> Key {
        Key { name, good, bad }
    }

    fn spec_keys() -> Vec<Key> {
        let variants: Vec<&str> = all_variants().iter().map(|v| v.name).collect();
        let counts = || strings(&["0", "1", "3", "10", "1000", "1000000"]);
        // Past the limits the study refuses (MAX_REPS), or not a count at all.
        let bad_counts = || strings(&["4294967295", "4294967296", "-1", "\"5\"", "1.0"]);
        vec![
            key(
                "name",
                quoted(&["x", "dup", "a/b@local=1", "é"]),
                quoted(&["", " "]),
            ),
            key(
                "family",
                quoted(&[
                    "matvec",
                    "reduce",
                    "bandwidth",
                    "flops",
                    "launch",
                    "transfer",
                ]),
                quoted(&["Matvec", "", "peak"]),
            ),
            key(
                "variant",
                quoted(&variants),
                quoted(&["listing9", "", "Listing2", "read "]),
            ),
            key(
                "size",
                quoted(&[
                    "60989x1100",
                    "64x64",
                    "8x8",
                    "2^20",
                    "4096",
                    "1",
                    "1_000",
                    "3*4",
                    " 16 X 16 ",
                    "4294967294",
                ]),
                quoted(&[
                    "0",
                    "0x5",
                    "5x0",
                    "2^99",
                    "2^64",
                    "2^32",
                    "12q",
                    "x",
                    "2^",
                    "4294967295",
                    "65536x65536",
                    "18446744073709551615",
                ]),
            ),
            key(
                "seed",
                strings(&["0", "1", "9007199254740991"]),
                // Past MAX_SEED, or not a seed at all.
                strings(&[
                    "9007199254740992",
                    "9223372036854775807",
                    "-1",
                    "\"1\"",
                    "1.5",
                ]),
            ),
            key(
                "local",
                strings(&[
                    "1",
                    "32",
                    "64",
                    "96",
                    "128",
                    "256",
                    "512",
                    "1024",
                    "2048",
                    "4294967295",
                ]),
                strings(&["0", "4294967296", "-1", "\"256\"", "256.0"]),
            ),
            key(
                "groups",
                strings(&["1", "60", "239", "16777216"]),
                strings(&["0", "4294967295", "4294967296", "-1", "\"60\""]),
            ),
            key("warmup", counts(), bad_counts()),
            key("reps", counts(), bad_counts()),
            key("turn", counts(), bad_counts()),
            key("max_reps", counts(), bad_counts()),
            key(
                "min_time",
                strings(&["0.0", "0.05", "0.2", "1e308", "-0.0", "5e-324"]),
                strings(&["-0.1", "nan", "inf", "-inf", "\"0.2\"", "1"]),
            ),
            key(
                "timer",
                quoted(&[
                    "device-event",
                    "wall-clock",
                    "event",
                    "wall",
                    "host",
                    "device",
                ]),
                quoted(&["gpu", "", "Wall-Clock"]),
            ),
            key(
                "wait",
                quoted(&["spin", "yield", "blocking"]),
                quoted(&["sleep", "", "Spin"]),
            ),
            key(
                "flags",
                strings(&[
                    "{ mad = true }",
                    "{ mad = false, fast_math = true }",
                    "{ denorms_zero = true }",
                    "{}",
                ]),
                strings(&["{ mad = 1 }", "{ fma = true }", "true"]),
            ),
            key(
                "unroll",
                strings(&["{ A = 4 }", "{ B = 8 }", "{ A = 0, B = 16 }", "{}"]),
                strings(&[
                    "{ Z = 2 }",
                    "{ A = -1 }",
                    "{ A = 4294967296 }",
                    "{ \"\" = 1 }",
                    "4",
                ]),
            ),
            key(
                "defines",
                strings(&[
                    "{ WARP_SYNC_WG = \"1\" }",
                    "{ USE_SUBGROUPS = \"0\" }",
                    "{}",
                ]),
                strings(&["{ X = 1 }", "\"A=1\""]),
            ),
            key(
                "all_variants",
                strings(&["true", "false"]),
                strings(&["\"yes\"", "1"]),
            ),
            key(
                "param",
                quoted(&["local", "groups", "size", "unroll.A", "unroll.B"]),
                quoted(&["unroll.Z", "unroll.", "reps", ""]),
            ),
            key(
                "values",
                strings(&[
                    "[64, 128, 256]",
                    "[1, 2]",
                    "[\"2^20\", \"2^22\"]",
                    "[\"64x64\", \"8x8\"]",
                ]),
                strings(&[
                    "[]",
                    "[0]",
                    "[-1, 4294967296]",
                    "[1.5, 64.0]",
                    "[true]",
                    "[[1]]",
                    "[{ a = 1 }]",
                    "[\"x\", 1]",
                    "64",
                    "[1979-05-27]",
                    "[nan, inf]",
                ]),
            ),
            key("famly", Vec::new(), quoted(&["matvec"])),
        ]
    }

    /// One `key = value` line: a key of the schema with one of its good candidates (mostly),
    /// one of its bad ones, or a value from the nasty pool.
    fn spec_line() -> impl Strategy<Value = (String, String)> {
        let keys = spec_keys();
        (any::<Index>(), 0..8u8, any::<Index>(), value()).prop_map(move |(k, pick, v, nasty)| {
            let key = &keys[k.index(keys.len())];
            let value = match pick {
                0..=5 if !key.good.is_empty() => key.good[v.index(key.good.len())].clone(),
                0..=6 => key.bad[v.index(key.bad.len())].clone(),
                _ => nasty,
            };
            (key.name.to_string(), value)
        })
    }

    /// A table body: random lines, then (usually) a coherent core for the keys not given, so
    /// that a good share of documents get past the TOML layer into `resolve`.
    fn table_body(sweep: bool) -> impl Strategy<Value = String> {
        (
            prop::collection::vec(spec_line(), 0..3),
            prop::option::weighted(0.9, select(all_variants())),
        )
            .prop_map(move |(lines, core)| {
                let mut lines = lines;
                if let Some(v) = core {
                    let size = match v.family {
                        FamilyId::Matvec => "64x64",
                        FamilyId::Spmv => "64x300",
                        _ => "4096",
                    };
                    // 64 suits every variant's local-size rule.
                    lines.push(("family".into(), format!("\"{}\"", v.family.name())));
                    lines.push(("variant".into(), format!("\"{}\"", v.name)));
                    lines.push(("size".into(), format!("\"{size}\"")));
                    lines.push(("local".into(), "64".into()));
                    if sweep {
                        lines.push(("param".into(), "\"groups\"".into()));
                        lines.push(("values".into(), "[1, 2]".into()));
                    }
                }
                // A repeated key is a TOML error; keep the first so the rest gets through.
                let mut seen = HashSet::new();
                lines
                    .into_iter()
                    .filter(|(k, _)| seen.insert(k.clone()))
                    .map(|(k, v)| format!("{k} = {v}\n"))
                    .collect()
            })
    }

    /// Per-side table names: the two sides and their aliases (and, rarely, one that is not).
    fn side_name() -> impl Strategy<Value = &'static str> {
        prop_oneof![
            8 => select(&["a", "b", "opencl", "cuda"][..]),
            1 => Just("c"),
        ]
    }

    /// A top-level string field: mostly good, rarely empty or of the wrong type.
    fn top_string(good: &'static str) -> impl Strategy<Value = &'static str> {
        prop_oneof![
            16 => Just(good),
            1 => Just("\"\""),
            1 => Just("1"),
        ]
    }

    fn entry() -> impl Strategy<Value = String> {
        (
            any::<bool>(),
            prop::collection::vec(
                (side_name(), prop::collection::vec(spec_line(), 0..2)),
                0..3,
            ),
        )
            .prop_flat_map(|(sweep, sides)| {
                table_body(sweep).prop_map(move |body| {
                    let kind = if sweep { "sweep" } else { "comparison" };
                    let mut text = format!("\n[[{kind}]]\n{body}");
                    let mut seen = HashSet::new();
                    for (side, lines) in &sides {
                        // A second header for the same side is a TOML error, as above.
                        if !seen.insert(*side) {
                            continue;
                        }
                        text.push_str(&format!("[{kind}.{side}]\n"));
                        let mut keys = HashSet::new();
                        for (k, v) in lines {
                            if keys.insert(k.as_str()) {
                                text.push_str(&format!("{k} = {v}\n"));
                            }
                        }
                    }
                    text
                })
            })
    }

    fn study_text() -> impl Strategy<Value = String> {
        (
            prop::option::weighted(0.95, top_string("\"t\"")),
            prop::option::of(top_string("\"d\"")),
            prop::option::of(table_body(false)),
            prop::collection::vec(entry(), 1..3),
        )
            .prop_map(|(name, description, defaults, entries)| {
                let mut text = String::new();
                if let Some(n) = name {
                    text.push_str(&format!("name = {n}\n"));
                }
                if let Some(d) = description {
                    text.push_str(&format!("description = {d}\n"));
                }
                if let Some(body) = defaults {
                    text.push_str(&format!("[defaults]\n{body}"));
                }
                for e in entries {
                    text.push_str(&e);
                }
                text
            })
    }

    /// The structured generator must reach every layer, or its properties test little.
    #[test]
    fn structured_generator_reaches_resolution() {
        let mut runner = TestRunner::deterministic();
        let strategy = study_text();
        let (mut ok, mut comparisons) = (0, 0);
        let mut kinds = HashSet::new();
        for _ in 0..600 {
            let text = strategy.new_tree(&mut runner).unwrap().current();
            match parse(&text, "gen.toml") {
                Ok(s) => {
                    ok += 1;
                    comparisons += s.comparisons.len();
                }
                Err(e) => {
                    kinds.insert(match e {
                        StudyError::Parse { .. } => "parse",
                        StudyError::Invalid { .. } => "invalid",
                        StudyError::Field { .. } => "field",
                        _ => "other",
                    });
                }
            }
        }
        assert!(ok >= 100, "only {ok} of 600 generated studies parse");
        assert!(comparisons >= 100, "{comparisons} comparisons in total");
        assert_eq!(
            kinds,
            HashSet::from(["parse", "invalid", "field"]),
            "error kinds seen"
        );
    }

    /// Deep nesting must come back as an error, not overflow the stack (an abort that no
    /// test harness can catch).
    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let depth = 100_000;
        let texts = [
            format!("name = \"t\"\nx = {}{}", "[".repeat(depth), "]".repeat(depth)),
            format!("name = \"t\"\nx = {}{}", "{ a = ".repeat(depth), "}".repeat(depth)),
            format!("name = \"t\"\n{} = 1", vec!["a"; depth].join(".")),
            format!("name = \"t\"\n[{}]", vec!["defaults"; depth].join(".")),
            format!("name = \"t\"\n[[comparison]]\nvariant = \"listing2\"\nsize = \"8x8\"\nvalues = {}{}", "[".repeat(depth), "]".repeat(depth)),
        ];
        for text in &texts {
            let e = parse(text, "deep.toml").unwrap_err();
            assert!(e.to_string().starts_with("deep.toml: "), "{e}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        #[test]
        fn arbitrary_strings_never_panic(text in ".*", file in "[a-z0-9_/.-]{1,12}") {
            check_parse(&text, &file)?;
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1500))]

        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
            check_parse(&String::from_utf8_lossy(&bytes), "bytes.toml")?;
        }
    }

    /// A mutation proptest once shrank to: an `=` inserted at a far position (taken modulo
    /// the text's length), tried on every built-in study.
    #[test]
    fn an_inserted_equals_sign_never_panics_in_any_builtin_study() {
        for (name, text) in BUILTIN {
            let mutated = apply(
                text,
                &Mutation::Insert(16_704_732_666_340_371_646, "=".into()),
            );
            check_parse(&mutated, &format!("harness/{name}.toml")).unwrap();
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        #[test]
        fn mutated_builtin_studies_never_panic(
            which in 0..BUILTIN.len(),
            mutations in prop::collection::vec(mutation(), 1..4),
        ) {
            let (name, text) = BUILTIN[which];
            let mut mutated = text.to_string();
            for m in &mutations {
                mutated = apply(&mutated, m);
            }
            check_parse(&mutated, &format!("harness/{name}.toml"))?;
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        #[test]
        fn generated_studies_never_panic(text in study_text()) {
            check_parse(&text, "generated.toml")?;
        }
    }
}
