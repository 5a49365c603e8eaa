//! `clvscu report` and `clvscu diff`: what run folders say, as Markdown and static HTML, and
//! how two sets of runs differ, with significance. The content is built once as blocks
//! ([`doc`], by [`tables`]) and rendered per format ([`markdown`]; [`html`] as [`site`]'s
//! pages), read from the folders' CSVs and written only into the output folder.

pub mod baseline;
pub mod bfs;
pub mod diff;
pub mod doc;
pub mod findings;
pub mod html;
pub mod load;
pub mod markdown;
pub mod relabel;
pub mod site;
pub mod tables;
pub mod why;

use std::path::{Path, PathBuf};

use crate::export::{write_atomic, ExportError};
use crate::plot::{self, ChartData, Format, PlotError};
use crate::rows::Catalog;

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{}: not a folder", .0.display())]
    NotAFolder(PathBuf),
    #[error("no run folder (one with measurements.csv or prs.csv) under {0}")]
    NoRunFolder(String),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Export(#[from] ExportError),
    #[error(transparent)]
    Plot(#[from] PlotError),
    #[error("{}: not a suite folder (no suite.csv; `clvscu suite --out DIR` writes one)", .0.display())]
    NotASuite(PathBuf),
    #[error("{0}")]
    Findings(String),
}

/// Calls `leaf` on `dir` and, where it answers false, on each folder in `dir`, depth first in
/// path order: hidden ones skipped, links not followed (a link back up the tree never ends).
pub(crate) fn walk(
    dir: &Path,
    leaf: &mut impl FnMut(&Path) -> Result<bool, ReportError>,
) -> Result<(), ReportError> {
    if leaf(dir)? {
        return Ok(());
    }
    let io = |e| ReportError::Io {
        path: dir.to_path_buf(),
        source: e,
    };
    let mut subdirs = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        if !hidden && entry.file_type().map_err(io)?.is_dir() {
            subdirs.push(entry.path());
        }
    }
    subdirs.sort();
    subdirs.iter().try_for_each(|sub| walk(sub, leaf))
}

/// What `report` wrote: folders read, GPU models, and GPUs told apart by PCI bus and driver.
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    pub folders: usize,
    pub models: usize,
    pub gpus: usize,
    pub files: Vec<PathBuf>,
}

impl Written {
    /// `2 GPU models (14 GPUs by PCI bus and driver)`.
    pub fn gpus_text(&self) -> String {
        tables::gpus_text(self.models, self.gpus)
    }
}

/// The chart files of `folders`' rows, drawn as SVG into `dir` below `base`, relative to `base`.
fn draw_into(
    catalog: &Catalog,
    folders: &[load::RunFolder],
    dir: &Path,
    base: &Path,
) -> Result<Vec<PathBuf>, ReportError> {
    // A link planted at the chart folder would take the charts elsewhere.
    crate::export::safe::check_dir(dir, false)?;
    let data = ChartData {
        measurements: folders.iter().flat_map(placed_measurements).collect(),
        prs: folders.iter().flat_map(placed_prs).collect(),
        ptx_classes: Vec::new(),
        baselines: folders
            .iter()
            .filter_map(|f| {
                Some(plot::vendor::beside(
                    &f.baselines.as_ref()?.1,
                    f.measurements(),
                ))
            })
            .flatten()
            .collect(),
        catalog: catalog.clone(),
    };
    Ok(plot::draw_all(&data, dir, &[Format::Svg])?
        .into_iter()
        .map(|p| p.strip_prefix(base).map(Path::to_path_buf).unwrap_or(p))
        .collect())
}

/// A device's name with its folder's place on the host (`NVIDIA H100 (pci 19:00)`), so the
/// charts hold two GPUs of one name apart, as the tables do.
fn placed(device: &str, f: &load::RunFolder) -> String {
    match &f.gpu_place {
        Some(place) if !device.is_empty() => format!("{device} ({place})"),
        _ => device.to_string(),
    }
}

fn placed_measurements(f: &load::RunFolder) -> Vec<crate::rows::MeasurementRow> {
    let mut rows = f.measurements().to_vec();
    for r in &mut rows {
        r.device = placed(&r.device, f);
    }
    rows
}

fn placed_prs(f: &load::RunFolder) -> Vec<crate::rows::PrRow> {
    let mut rows = f.prs().to_vec();
    for r in &mut rows {
        r.device_a = placed(&r.device_a, f);
        r.device_b = placed(&r.device_b, f);
    }
    rows
}

/// The chart files of all `folders`' rows, drawn as SVG into `out/charts`, relative to `out`;
/// the per-GPU charts first.
fn draw_charts(
    catalog: &Catalog,
    folders: &[load::RunFolder],
    out: &Path,
) -> Result<Vec<PathBuf>, ReportError> {
    // A link planted at the report's folder would take the charts elsewhere.
    crate::export::safe::check_dir(out, true)?;
    let mut files = draw_into(catalog, folders, &out.join("charts"), out)?;
    files.sort_by_key(|p| !p.to_string_lossy().contains(plot::GPUS_CHART));
    Ok(files)
}

/// Reads every run folder under `roots` and writes `report.md`, the charts and, with `html`,
/// [`site`]'s pages into `out`. `catalog` is the registry's word on the rows' families.
pub fn write_report(
    roots: &[PathBuf],
    out: &Path,
    html: bool,
    catalog: &Catalog,
) -> Result<Written, ReportError> {
    let folders = load::load_tree(roots)?;
    let charts = draw_charts(catalog, &folders, out)?;
    let names: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
    let doc = tables::build(catalog, &folders, &names, &charts);
    let mut files: Vec<PathBuf> = charts.iter().map(|c| out.join(c)).collect();
    let md = out.join("report.md");
    write_atomic(&md, markdown::render(&doc).as_bytes())?;
    files.push(md);
    if html {
        files.extend(site::write_site(catalog, &folders, &names, &charts, out)?);
    }
    let groups = tables::per_gpu(&folders);
    Ok(Written {
        folders: folders.len(),
        models: tables::models(&groups),
        gpus: groups.len(),
        files,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chart across GPUs leads the list however the report's folder is named, even when
    /// its name holds the chart's own (`pr-gpus-…`).
    #[test]
    fn the_chart_across_gpus_comes_first_whatever_the_folder_is_named() {
        let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("results");
        let folders =
            load::load_tree(&[results.join("h100/fair"), results.join("h200/fair")]).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join(format!("{}-report", plot::GPUS_CHART));
        let catalog = crate::plot::tests::registered().catalog;
        let charts = draw_charts(&catalog, &folders, &out).unwrap();
        assert!(charts.len() > 1, "{charts:?}");
        assert!(
            charts[0].starts_with("charts")
                && charts[0].to_string_lossy().contains(plot::GPUS_CHART),
            "{charts:?}"
        );
    }
}

#[cfg(test)]
pub(crate) mod fixtures {
    use crate::rows::{Api, FamilyId, Metric, PrRow};

    /// A matvec PR row with PR `value` (CI ±0.005), fair or not, for the tests of the report
    /// and the findings.
    pub fn pr(comparison: &str, value: f64, fair: bool) -> PrRow {
        PrRow {
            run_id: "r".into(),
            study: "s".into(),
            comparison: comparison.into(),
            device_a: "H100".into(),
            device_b: "H100".into(),
            api_a: Api::OpenCl,
            api_b: Api::Cuda,
            family: "matvec".parse::<FamilyId>().unwrap(),
            variant: "listing4".into(),
            size: "4096x1100".into(),
            local_size: 256,
            groups: 16,
            metric_unit: Metric::Bandwidth,
            metric_a: value,
            metric_b: 1.0,
            pr: value,
            pr_ci_lo: value - 0.005,
            pr_ci_hi: value + 0.005,
            similar: true,
            similar_tight: false,
            fair,
            differing_steps: String::new(),
            timer: "device-event".into(),
            sweep_param: String::new(),
            sweep_value: String::new(),
        }
    }
}
