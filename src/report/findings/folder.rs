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

/// The findings' few fields of `provenance.json` in `step_dir`, read as the report reads it; a
/// field the file leaves empty (or an older file lacks) is `?`, the date only its day. The
/// device and driver are the CUDA side's, else the first device's.
fn provenance(step_dir: &Path, step: &str) -> Option<Provenance> {
    let p = load::provenance(step_dir)?;
    let known = |s: &str| if s.is_empty() { "?" } else { s }.to_string();
    let cuda = p
        .devices
        .iter()
        .find(|d| d.api == "CUDA")
        .or_else(|| p.devices.first());
    let date = known(&p.date_utc);
    Some(Provenance {
        commit: known(&p.git_commit),
        device: known(cuda.map_or("", |d| &d.device)),
        driver: known(cuda.map_or("", |d| &d.driver)),
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// A suite folder of steps `a` and `b`, each a run folder (with no rows) holding the
    /// `provenance.json` given, or none.
    fn suite(provenances: [Option<&str>; 2]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join("suite.csv"),
            "step,status,exit_code,wall_s,cap_s,note\na,done,0,1.0,10,\nb,done,0,1.0,10,\n",
        )
        .unwrap();
        for (step, p) in ["a", "b"].into_iter().zip(provenances) {
            let run = dir.path().join(step);
            fs::create_dir(&run).unwrap();
            crate::export::csv::write_rows::<PrRow>(&run.join(crate::rows::PRS_CSV), &[]).unwrap();
            if let Some(p) = p {
                fs::write(run.join("provenance.json"), p).unwrap();
            }
        }
        dir
    }

    fn folder_name(dir: &tempfile::TempDir) -> String {
        dir.path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }

    /// The findings read `provenance.json` as the report does: a file the report cannot read
    /// (a field of the wrong type) names no device there, and the findings take the next
    /// step's; the device and driver are the CUDA side's.
    #[test]
    fn a_provenance_the_report_cannot_read_is_not_the_findings_either() {
        let odd = r#"{"git_commit": 5, "devices": [{"api": "CUDA", "device": "GPU A"}]}"#;
        let good = r#"{"git_commit": "abc", "date_utc": "2026-11-30T01:02:03Z", "devices": [
            {"api": "OpenCL", "device": "cl", "driver": "d1"},
            {"api": "CUDA", "device": "NVIDIA H200", "driver": "580"}]}"#;
        let dir = suite([Some(odd), Some(good)]);
        let report = load::load_tree(&[dir.path().to_path_buf()]).unwrap();
        let devices = |step: &str| {
            let run = report.iter().find(|r| r.path.ends_with(step)).unwrap();
            run.provenance_devices.len()
        };
        assert_eq!((devices("a"), devices("b")), (0, 2));
        let s = SuiteFolder::read(dir.path()).unwrap();
        let want = Provenance {
            commit: "abc".into(),
            device: "NVIDIA H200".into(),
            driver: "580".into(),
            date: "2026-11-30".into(),
            step: "b".into(),
        };
        assert_eq!(s.provenance, Some(want));
        assert_eq!(s.gpu, "NVIDIA H200");
    }

    /// An older file's missing fields, and fields left empty, read as `?`; the GPU is then
    /// named by the folder (no measurement names one).
    #[test]
    fn fields_an_older_provenance_lacks_or_leaves_empty_read_as_unknown() {
        let unknown = |commit: &str| Provenance {
            commit: commit.into(),
            device: "?".into(),
            driver: "?".into(),
            date: "?".into(),
            step: "a".into(),
        };
        let cases = [
            (r#"{"git_commit": "abc"}"#, unknown("abc")),
            (
                r#"{"git_commit": "", "date_utc": "", "devices": [{"api": "CUDA"}]}"#,
                unknown("?"),
            ),
        ];
        for (text, want) in cases {
            let dir = suite([Some(text), None]);
            let s = SuiteFolder::read(dir.path()).unwrap();
            assert_eq!(s.provenance, Some(want), "{text}");
            assert_eq!(s.gpu, folder_name(&dir), "{text}");
        }
        let dir = suite([None, None]);
        let s = SuiteFolder::read(dir.path()).unwrap();
        assert_eq!(s.provenance, None);
    }
}
