//! Reading chart data: result CSVs named one by one or found in run folders, each told apart
//! by its header, so a foreign or mangled file is refused with its name and line.

use std::path::{Path, PathBuf};

use crate::export::csv::{read_rows, CsvSchema};
use crate::export::ExportError;

use crate::rows::{
    Catalog, MeasurementRow, PrRow, SampleRow, CLASSES_CSV, MEASUREMENTS_CSV, PRS_CSV,
};

use super::ChartData;

/// Why chart data could not be read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("no result CSV found in {0}")]
    NothingFound(String),
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: line 1: not a clvscu CSV (header '{header}')", path.display())]
    Foreign { path: PathBuf, header: String },
    #[error(transparent)]
    Csv(#[from] ExportError),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CsvKind {
    Measurements,
    Prs,
    Samples,
    PtxClasses,
}

/// The kind of the clvscu CSV at `path`, by its first line.
pub fn kind_of(path: &Path) -> Result<CsvKind, InputError> {
    let text = crate::input_file::read_text_capped(path, crate::input_file::RESULT_CAP).map_err(
        |source| InputError::Read {
            path: path.to_path_buf(),
            source,
        },
    )?;
    let header = text.lines().next().unwrap_or("");
    let header = header.trim_start_matches('\u{feff}').to_string();
    let is = |columns: &[&str]| header == columns.join(",");
    if crate::export::csv::reads_as::<MeasurementRow>(&header) {
        Ok(CsvKind::Measurements)
    } else if is(PrRow::columns()) {
        Ok(CsvKind::Prs)
    } else if is(SampleRow::columns()) {
        Ok(CsvKind::Samples)
    } else if is(crate::rows::ClassCountRow::columns()) {
        Ok(CsvKind::PtxClasses)
    } else {
        Err(InputError::Foreign {
            path: path.to_path_buf(),
            header,
        })
    }
}

/// The result CSVs of `input`: a file as given, a folder's by their known file names.
fn csv_files(input: &Path) -> Vec<PathBuf> {
    if !input.is_dir() {
        return vec![input.to_path_buf()];
    }
    let files = [MEASUREMENTS_CSV, PRS_CSV, CLASSES_CSV].map(|n| input.join(n));
    files.into_iter().filter(|p| p.exists()).collect()
}

/// Every measurement, PR and PTX-class row of `inputs` (samples are not charted).
pub fn load(inputs: &[PathBuf], catalog: Catalog) -> Result<ChartData, InputError> {
    if inputs.iter().all(|i| csv_files(i).is_empty()) {
        let names: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
        return Err(InputError::NothingFound(names.join(", ")));
    }
    let mut data = ChartData {
        catalog,
        ..ChartData::default()
    };
    for input in inputs {
        let first = data.measurements.len();
        for f in csv_files(input) {
            match kind_of(&f)? {
                CsvKind::Measurements => data.measurements.extend(read_rows::<MeasurementRow>(&f)?),
                CsvKind::Prs => data.prs.extend(read_rows::<PrRow>(&f)?),
                CsvKind::PtxClasses => {
                    for r in read_rows::<crate::rows::ClassCountRow>(&f)? {
                        if r.api.parse::<crate::rows::Api>().is_err() {
                            return Err(InputError::Foreign {
                                path: f,
                                header: format!("api '{}' in a PTX class row", r.api),
                            });
                        }
                        data.ptx_classes.push(r);
                    }
                }
                CsvKind::Samples => {}
            }
        }
        // Vendor baselines in or above a run folder (a named CSV's folder) go with its runs.
        let folder = if input.is_dir() {
            Some(input.as_path())
        } else {
            input.parent()
        };
        if let Some(rows) = folder.and_then(super::vendor::near) {
            let beside = super::vendor::beside(&rows, &data.measurements[first..]);
            data.baselines.extend(beside);
        }
    }
    Ok(data)
}

/// Rows the charts show as "n/a", named: a PR not positive and finite, or an ok row without a
/// usable metric; then what the size bounds leave out.
pub fn warnings(data: &ChartData) -> Vec<String> {
    let bad = |v: f64| !(v.is_finite() && v > 0.0);
    let prs = data.prs.iter().filter(|r| bad(r.pr)).map(|r| {
        format!(
            "PR row of {} (run {}) has PR = {}: drawn as n/a",
            r.comparison, r.run_id, r.pr
        )
    });
    let metrics = data
        .measurements
        .iter()
        .filter(|r| r.status == crate::rows::Status::Ok && bad(r.metric))
        .map(|r| {
            format!(
                "measurement of {} [{}] (run {}) is ok but its metric is {}: left out",
                r.comparison, r.api, r.run_id, r.metric
            )
        });
    prs.chain(metrics).chain(super::left_out(data)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The GPU scripts keep `baselines.csv` a folder above the run folder: it is found whether
    /// the folder or its measurements file is given, and the shapes chart then draws cuBLAS.
    #[test]
    fn baselines_a_folder_up_are_found_for_a_folder_and_for_a_file() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/h100");
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("shapes");
        std::fs::create_dir(&run).unwrap();
        std::fs::copy(repo.join("baselines.csv"), dir.path().join("baselines.csv")).unwrap();
        std::fs::copy(
            repo.join("shapes/measurements.csv"),
            run.join("measurements.csv"),
        )
        .unwrap();
        for input in [run.clone(), run.join("measurements.csv")] {
            let data = load(
                std::slice::from_ref(&input),
                crate::plot::tests::registered().catalog,
            )
            .unwrap();
            assert!(!data.baselines.is_empty(), "{}", input.display());
            let figs = super::super::shapes::figures(&data);
            let (_, fig) = &figs[0];
            let svg = crate::plot::render_svg(fig).unwrap();
            assert!(!svg.contains("No cuBLAS"), "{}", input.display());
        }
    }
}
