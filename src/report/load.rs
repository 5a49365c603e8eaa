//! Finding run folders in a tree and reading their rows: plain or gzipped CSVs (the GPU
//! scripts compress raw samples), and the devices of the run from `provenance.json` when a
//! folder has PR rows but no measurements.

use std::fs;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use crate::export::csv::{parse_rows, read_by_name, read_maybe_gz, CsvSchema};
use crate::export::json::{DeviceProvenance, Provenance};
use crate::rows::{BaselineRow, MeasurementRow, PrRow, BASELINES_CSV};

use super::ReportError;

#[derive(Debug, Clone, Default)]
pub struct RunFolder {
    pub path: PathBuf,
    /// The folder as the report names it: its path below the parent of the tree given.
    pub label: String,
    /// `None` when the folder has no measurements file.
    pub measurements: Option<Vec<MeasurementRow>>,
    /// `None` when the folder has no PR file.
    pub prs: Option<Vec<PrRow>>,
    /// Each side's device from `provenance.json`, for folders without measurements.
    pub provenance_devices: Vec<DeviceProvenance>,
    /// Where on its host the GPU sits, so two GPUs of one name are two: the PCI bus from
    /// `provenance.json` (`pci 19:00`), or the CUDA index in the name of a folder that `run
    /// --cuda-device all` wrote before buses were recorded (`gpu1-…`: `CUDA device 1`).
    pub gpu_place: Option<String>,
    /// The vendor-library baselines measured beside this run, and the file they came from.
    pub baselines: Option<(PathBuf, Vec<BaselineRow>)>,
    /// The harness-against-plain-loop calibration a runtime-bound study started with.
    pub calibration: Option<Vec<crate::rows::CalibrationPr>>,
    /// The `explain` verdicts found anywhere in the tree, for `super::why`.
    pub verdicts: std::sync::Arc<Vec<super::why::FoundVerdict>>,
}

impl RunFolder {
    pub fn measurements(&self) -> &[MeasurementRow] {
        self.measurements.as_deref().unwrap_or(&[])
    }

    pub fn prs(&self) -> &[PrRow] {
        self.prs.as_deref().unwrap_or(&[])
    }
}

/// `name` or `name.gz` in `dir`, whichever exists (the plain file first).
pub(crate) fn csv_in(dir: &Path, name: &str) -> Option<PathBuf> {
    [dir.join(name), dir.join(format!("{name}.gz"))]
        .into_iter()
        .find(|p| p.is_file())
}

/// The rows of `name` (or `name.gz`) in `dir`; `None` when neither exists.
pub(super) fn read_csv<T: DeserializeOwned + CsvSchema>(
    dir: &Path,
    name: &str,
) -> Result<Option<Vec<T>>, ReportError> {
    match csv_in(dir, name) {
        Some(path) => Ok(Some(parse_rows(&path, &read_maybe_gz(&path)?)?)),
        None => Ok(None),
    }
}

/// The run folders at or below each root, in `walk`'s order; a run folder's own
/// subfolders (charts) are not searched.
pub fn find_run_folders(roots: &[PathBuf]) -> Result<Vec<PathBuf>, ReportError> {
    let mut found = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for root in roots {
        if !root.is_dir() {
            return Err(ReportError::NotAFolder(root.clone()));
        }
        super::walk(root, &mut |dir| {
            let run = csv_in(dir, crate::rows::MEASUREMENTS_CSV).is_some()
                || csv_in(dir, crate::rows::PRS_CSV).is_some();
            // Overlapping roots (a tree and a folder in it) name a folder once.
            if run && seen.insert(same_folder(dir)) {
                found.push(dir.to_path_buf());
            }
            Ok(run)
        })?;
    }
    Ok(found)
}

/// What tells two spellings of one folder apart from two folders: its canonical path.
fn same_folder(dir: &Path) -> PathBuf {
    fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf())
}

/// `provenance.json` of `dir`, where readable: the one reader of it for the report and the
/// findings. Fields an older file lacks read as empty; a file that is not one (no file, not
/// JSON, a field of the wrong type) reads as none.
pub(crate) fn provenance(dir: &Path) -> Option<Provenance> {
    serde_json::from_str(&fs::read_to_string(dir.join("provenance.json")).ok()?).ok()
}

fn gpu_place(dir: &Path, p: &Provenance) -> Option<String> {
    // The CUDA side's bus first: the OpenCL side of an OpenCL-vs-CUDA run is paired by it.
    let mut devices: Vec<_> = p.devices.iter().collect();
    devices.sort_by_key(|d| d.api != "CUDA");
    if let Some(bus) = devices.iter().find_map(|d| d.pci_bus.as_deref()) {
        return Some(format!("pci {bus}"));
    }
    let every_gpu = p
        .command_line
        .windows(2)
        .any(|w| w[0] == "--cuda-device" && w[1] == "all")
        || p.command_line.iter().any(|a| a == "--cuda-device=all");
    let name = dir.file_name()?.to_str()?;
    let index = name.strip_prefix("gpu")?.split('-').next()?;
    (every_gpu && !index.is_empty() && index.chars().all(|c| c.is_ascii_digit()))
        .then(|| format!("CUDA device {index}"))
}

fn label_of(dir: &Path, root: &Path) -> String {
    let base = root.parent().unwrap_or(root);
    dir.strip_prefix(base)
        .unwrap_or(dir)
        .display()
        .to_string()
        .trim_start_matches("./")
        .to_string()
}

/// The nearest `baselines.csv` in `dir` or its ancestors, up to `root`'s parent.
fn baselines_for(
    dir: &Path,
    root: &Path,
) -> Result<Option<(PathBuf, Vec<BaselineRow>)>, ReportError> {
    let stop = root.parent().unwrap_or(root);
    for d in dir.ancestors() {
        let file = d.join(BASELINES_CSV);
        if file.is_file() {
            return Ok(Some((file.clone(), read_by_name(&file)?)));
        }
        if d == stop {
            break;
        }
    }
    Ok(None)
}

/// Loads every run folder under `roots`; a tree with none is refused.
pub fn load_tree(roots: &[PathBuf]) -> Result<Vec<RunFolder>, ReportError> {
    let mut out = Vec::new();
    let verdicts = std::sync::Arc::new(super::why::load_verdicts(roots)?);
    let mut seen = std::collections::HashSet::new();
    for root in roots {
        for dir in find_run_folders(std::slice::from_ref(root))? {
            // A folder under two roots is one run, labelled below the first.
            if !seen.insert(same_folder(&dir)) {
                continue;
            }
            let measurements: Option<Vec<MeasurementRow>> =
                read_csv(&dir, crate::rows::MEASUREMENTS_CSV)?;
            let mut prs: Option<Vec<PrRow>> = read_csv(&dir, crate::rows::PRS_CSV)?;
            if let (Some(prs), Some(rows)) = (prs.as_mut(), measurements.as_ref()) {
                super::relabel::relabel(prs, rows);
            }
            let provenance = provenance(&dir);
            out.push(RunFolder {
                label: label_of(&dir, root),
                measurements,
                prs,
                gpu_place: provenance.as_ref().and_then(|p| gpu_place(&dir, p)),
                provenance_devices: provenance.map(|p| p.devices).unwrap_or_default(),
                baselines: baselines_for(&dir, root)?,
                calibration: read_csv(&dir, crate::rows::CALIBRATION_PR_CSV)?,
                verdicts: verdicts.clone(),
                path: dir,
            });
        }
    }
    if out.is_empty() {
        let names: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
        return Err(ReportError::NoRunFolder(names.join(", ")));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_paths_below_the_roots_parent() {
        let root = Path::new("results/h100");
        assert_eq!(
            label_of(Path::new("results/h100/default"), root),
            "h100/default"
        );
        assert_eq!(label_of(root, root), "h100");
    }

    /// Roots that overlap (a tree and a folder in it, or one folder named twice) name each
    /// run folder once: counted twice, its rows would be reported twice.
    #[test]
    fn a_run_folder_under_two_roots_is_loaded_once() {
        let dir = tempfile::tempdir().unwrap();
        let header = PrRow::columns().join(",") + "\n";
        for run in ["tree/a", "tree/b"] {
            fs::create_dir_all(dir.path().join(run)).unwrap();
            fs::write(dir.path().join(run).join("prs.csv"), &header).unwrap();
        }
        let (tree, a) = (dir.path().join("tree"), dir.path().join("tree/a"));
        let again = dir.path().join("tree/./a");
        let roots = [tree.clone(), a.clone(), again, tree.clone()];
        assert_eq!(
            find_run_folders(&roots).unwrap(),
            [a.clone(), dir.path().join("tree/b")]
        );
        let folders = load_tree(&roots).unwrap();
        let labels: Vec<&str> = folders.iter().map(|f| f.label.as_str()).collect();
        assert_eq!(labels, ["tree/a", "tree/b"]);
    }

    #[test]
    fn gzipped_and_plain_csvs_read_alike_and_hidden_folders_are_skipped() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("gpu/run");
        fs::create_dir_all(&run).unwrap();
        fs::create_dir_all(dir.path().join(".hidden/run")).unwrap();
        let header = PrRow::columns().join(",") + "\n";
        fs::write(dir.path().join(".hidden/run/prs.csv"), &header).unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(header.as_bytes()).unwrap();
        fs::write(run.join("prs.csv.gz"), gz.finish().unwrap()).unwrap();
        let folders = load_tree(&[dir.path().to_path_buf()]).unwrap();
        assert_eq!(folders.len(), 1);
        assert_eq!(folders[0].path, run);
        assert_eq!(folders[0].prs.as_deref(), Some(&[][..]));
        assert!(folders[0].measurements.is_none());
        let empty = tempfile::tempdir().unwrap();
        assert!(matches!(
            load_tree(&[empty.path().to_path_buf()]),
            Err(ReportError::NoRunFolder(_))
        ));
    }
}
