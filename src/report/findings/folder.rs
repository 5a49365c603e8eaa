//! One suite folder as the findings read it: `suite.csv` (which steps ran and how they
//! ended), each step's run folder, explain's verdicts and the provenance of the run. The files
//! are read by column name into the ground floor's row types, so that the findings depend on
//! the files and not on the code that wrote them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::export::csv::read_by_name;
use crate::report::load::{self, RunFolder};
use crate::report::ReportError;
use crate::rows::{MeasurementRow, PrRow, StepRow, VerdictRow};

/// Where the run came from: `provenance.json` of its first step that has one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Provenance {
    pub commit: String,
    pub device: String,
    pub driver: String,
    pub date: String,
    /// The step folder it was read from.
    pub step: String,
}

pub struct SuiteFolder {
    pub dir: PathBuf,
    /// The GPU's name as the run's provenance or measurements give it, else the folder's name.
    pub gpu: String,
    pub steps: Vec<StepRow>,
    runs: BTreeMap<String, RunFolder>,
    pub verdicts: Vec<VerdictRow>,
    pub provenance: Option<Provenance>,
}

/// Where explain writes its verdicts, below the suite's folder.
pub const VERDICTS: &str = "explain/explain-verdicts.csv";

impl SuiteFolder {
    /// Reads `dir`; an error when it is not a suite folder (no `suite.csv`).
    pub fn read(dir: &Path) -> Result<SuiteFolder, ReportError> {
        let suite_csv = dir.join("suite.csv");
        if !suite_csv.is_file() {
            return Err(ReportError::NotASuite(dir.to_path_buf()));
        }
        let steps: Vec<StepRow> = read_by_name(&suite_csv)?;
        let mut runs: BTreeMap<String, RunFolder> = BTreeMap::new();
        for f in load::load_tree(&[dir.to_path_buf()])? {
            if let Ok(rel) = f.path.strip_prefix(dir) {
                let key = crate::report::html::href(rel);
                merge_into(&mut runs, one_run_per_comparison(&key).unwrap_or(&key), f);
            }
        }
        let verdicts_csv = dir.join(VERDICTS);
        let verdicts = if verdicts_csv.is_file() {
            read_by_name(&verdicts_csv)?
        } else {
            Vec::new()
        };
        let provenance = steps
            .iter()
            .find_map(|s| provenance(&dir.join(&s.step), &s.step));
        // The CUDA side's device, as provenance names it, else any measured device.
        let gpu = provenance
            .as_ref()
            .map(|p| p.device.clone())
            .filter(|d| d != "?")
            .or_else(|| {
                runs.values()
                    .flat_map(|r| r.measurements().first())
                    .map(|m| m.device.clone())
                    .next()
            })
            .unwrap_or_else(|| match dir.file_name() {
                Some(name) => name.to_string_lossy().into_owned(),
                None => dir.display().to_string(),
            });
        Ok(SuiteFolder {
            dir: dir.to_path_buf(),
            gpu,
            steps,
            runs,
            verdicts,
            provenance,
        })
    }

    /// The run folder of a step, when it holds one (a CPU step's, its comparisons' folders
    /// read as one).
    pub fn run(&self, step: &str) -> Option<&RunFolder> {
        self.runs.get(step)
    }

    pub fn prs(&self, step: &str) -> &[PrRow] {
        self.run(step).map_or(&[], RunFolder::prs)
    }

    pub fn measurements(&self, step: &str) -> &[MeasurementRow] {
        self.run(step).map_or(&[], RunFolder::measurements)
    }

    /// Every run folder of the suite's steps (explain's own runs left out).
    pub fn step_runs(&self) -> impl Iterator<Item = (&str, &RunFolder)> {
        self.steps
            .iter()
            .filter_map(|s| self.run(&s.step).map(|r| (s.step.as_str(), r)))
    }

    pub fn step(&self, step: &str) -> Option<&StepRow> {
        self.steps.iter().find(|s| s.step == step)
    }

    pub fn verdicts_on<'a>(&'a self, comparison: &'a str) -> impl Iterator<Item = &'a VerdictRow> {
        self.verdicts.iter().filter(move |v| v.target == comparison)
    }
}

fn provenance(step_dir: &Path, step: &str) -> Option<Provenance> {
    let text = std::fs::read_to_string(step_dir.join("provenance.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let s = |x: &serde_json::Value| x.as_str().unwrap_or("?").to_string();
    let cuda = v["devices"]
        .as_array()
        .and_then(|d| d.iter().find(|d| d["api"] == "CUDA").or_else(|| d.first()))
        .cloned()
        .unwrap_or_default();
    let date = s(&v["date_utc"]);
    Some(Provenance {
        commit: s(&v["git_commit"]),
        device: s(&cuda["device"]),
        driver: s(&cuda["driver"]),
        date: date.get(..10).unwrap_or(&date).to_string(),
        step: step.to_string(),
    })
}

/// The suite's steps whose children each run one comparison into a folder of their own under
/// the step's (its CPU step: a CPU runtime that aborts costs one comparison); the findings
/// read those folders as the step's one run. The suite's tests hold its steps to this list.
pub const ONE_RUN_PER_COMPARISON: &[&str] = &["cpu"];

/// The step `key` is a comparison's folder of, when it is one.
fn one_run_per_comparison(key: &str) -> Option<&'static str> {
    let (step, rest) = key.split_once('/')?;
    ONE_RUN_PER_COMPARISON
        .iter()
        .find(|s| **s == step)
        .filter(|_| !rest.contains('/'))
        .copied()
}

/// `f` as the run of `step`, or its rows added to the step's run when it has one already (the
/// first folder's, which names the rest). Only a comparison's folder of a
/// [`ONE_RUN_PER_COMPARISON`] step meets one: every other folder is its own step.
fn merge_into(runs: &mut BTreeMap<String, RunFolder>, step: &str, f: RunFolder) {
    let Some(run) = runs.get_mut(step) else {
        runs.insert(step.to_string(), f);
        return;
    };
    if let Some(rows) = f.measurements {
        run.measurements.get_or_insert_with(Vec::new).extend(rows);
    }
    if let Some(rows) = f.prs {
        run.prs.get_or_insert_with(Vec::new).extend(rows);
    }
}
