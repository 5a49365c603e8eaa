//! Charts of a run, drawn from the result rows (never from a backend), so any past run can be
//! re-plotted from its CSV. One file per chart kind, listed in [`draw_all`]; PNG and SVG come
//! from the same drawing code, rendered in memory first so a failure leaves no half-drawn file.

pub(crate) mod bfs;
mod fill;
mod gpus;
mod hbar;
pub mod input;
mod layout;
mod peak;
mod pr;
pub mod pr_groups;
mod ptx;
mod relative;
mod render;
mod shapes;
pub mod style;
mod sweep;
mod table1;
pub mod tune_convergence;
pub mod tune_distribution;
mod unroll;
pub mod vendor;
pub mod waterfall;

use std::path::{Path, PathBuf};

use crate::rows::{Api, Catalog, ClassCountRow, MeasurementRow, PrRow};

pub use gpus::NAME as GPUS_CHART;

#[cfg(test)]
pub(crate) use render::{render_rgb, render_svg};
pub(crate) use render::{write_all_figures, write_figure, write_figures, DrawError, Figure};

/// Why a chart could not be written, naming the file concerned.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error("cannot create the chart directory {path}: {source}")]
    CreateDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot draw {path}: the embedded font could not be registered")]
    Font { path: PathBuf },
    #[error("cannot draw {path}: {message}")]
    Draw { path: PathBuf, message: String },
    #[error("cannot write {path}: {message}")]
    Write { path: PathBuf, message: String },
}

impl PlotError {
    pub fn path(&self) -> &Path {
        match self {
            PlotError::CreateDir { path, .. }
            | PlotError::Font { path }
            | PlotError::Draw { path, .. }
            | PlotError::Write { path, .. } => path,
        }
    }
}

/// Output image format: raster for quick looks and READMEs, vector for papers and slides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    Png,
    Svg,
}

impl Format {
    /// Both formats, the default of `plot`.
    pub const ALL: [Format; 2] = [Format::Png, Format::Svg];

    pub fn extension(self) -> &'static str {
        match self {
            Format::Png => "png",
            Format::Svg => "svg",
        }
    }
}

/// Everything the charts read: the rows of one or more runs.
#[derive(Debug, Clone, Default)]
pub struct ChartData {
    pub measurements: Vec<MeasurementRow>,
    pub prs: Vec<PrRow>,
    pub ptx_classes: Vec<ClassCountRow>,
    /// Vendor-library baselines measured beside the runs (`baselines.csv`), when present.
    pub baselines: Vec<vendor::RunBaseline>,
    /// Which charts draw a family, the memory's reference kernels, each variant's algorithm.
    pub catalog: Catalog,
}

/// Draws every chart that `data` allows and returns the files written. Writes nothing (and
/// creates no directory) when no chart applies.
pub fn draw_all(data: &ChartData, out: &Path, fmts: &[Format]) -> Result<Vec<PathBuf>, PlotError> {
    crate::export::safe::check_dir(out, true).map_err(|e| PlotError::Write {
        path: out.to_path_buf(),
        message: e.to_string(),
    })?;
    // In drawing order; a chart kind with nothing to draw writes nothing.
    let mut written = write_figures("pr", &pr::figures(data), out, fmts)?;
    written.extend(write_figures("sweep", &sweep::figures(data), out, fmts)?);
    written.extend(write_figures("table1", &table1::figures(data), out, fmts)?);
    written.extend(write_figures("peak", &peak::figures(data), out, fmts)?);
    written.extend(write_figures("ptx", &ptx::figures(data), out, fmts)?);
    written.extend(write_figures(GPUS_CHART, &gpus::figures(data), out, fmts)?);
    written.extend(write_figures("unroll", &unroll::figures(data), out, fmts)?);
    let constant = relative::figures(&relative::CONSTANT, data);
    written.extend(write_figures("constant", &constant, out, fmts)?);
    written.extend(write_figures("bfs", &bfs::figures(data), out, fmts)?);
    written.extend(write_figures("shapes", &shapes::figures(data), out, fmts)?);
    let texture = relative::figures(&relative::TEXTURE, data);
    written.extend(write_figures("texture", &texture, out, fmts)?);
    written.extend(write_figures("fill", &fill::figures(data), out, fmts)?);
    Ok(written)
}

/// The file name of a run's chart: its study, and its comparison when it has only one (two runs
/// of one study are told apart by the `-2` [`write_figures`] appends, not by a timestamp).
pub(crate) fn run_slug<'a>(study: &str, comparisons: impl IntoIterator<Item = &'a str>) -> String {
    // One pass, no set of names: a chart of a million rows must not spend its time here.
    let mut comparisons = comparisons.into_iter();
    let first = comparisons.next();
    let one = first.filter(|f| comparisons.all(|c| c == *f));
    match one {
        Some(one) if !study.is_empty() => slug(&format!("{study}-{one}")),
        Some(one) => slug(one),
        None => slug(study),
    }
}

/// File-name-safe form of free text: lowercase ASCII letters, digits, `.` and `_`, with runs
/// of anything else turned into one `-`; never empty, at most 80 characters.
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let trimmed: String = out.trim_matches(['-', '.']).chars().take(80).collect();
    let trimmed = trimmed.trim_end_matches('-').to_string();
    if trimmed.is_empty() {
        "chart".to_string()
    } else {
        trimmed
    }
}

/// Each of `values` once, in the order they first appear.
pub(crate) fn unique<T: PartialEq>(values: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut out = Vec::new();
    for v in values {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

pub(crate) fn sorted_apis(apis: impl IntoIterator<Item = Api>) -> Vec<Api> {
    let mut apis = unique(apis);
    apis.sort();
    apis
}

/// The non-empty `values`, each once, in first-seen order.
pub(crate) fn distinct<S: AsRef<str>>(values: impl IntoIterator<Item = S>) -> Vec<String> {
    let values = values.into_iter().map(|v| v.as_ref().to_string());
    unique(values.filter(|v| !v.is_empty()))
}

/// Groups items by key in first-seen order (the runner's); linear, for 100,000s of rows.
pub(crate) fn group_in_order<T, K: Eq + std::hash::Hash + Clone, F: Fn(&T) -> K>(
    items: impl IntoIterator<Item = T>,
    key: F,
) -> Vec<(K, Vec<T>)> {
    let mut index: std::collections::HashMap<K, usize> = std::collections::HashMap::new();
    let mut groups: Vec<(K, Vec<T>)> = Vec::new();
    for item in items {
        let i = *index.entry(key(&item)).or_insert_with_key(|k| {
            groups.push((k.clone(), Vec::new()));
            groups.len() - 1
        });
        groups[i].1.push(item);
    }
    groups
}

/// At most this many rows (bars) in one figure: a longer list is split into pages.
pub const MAX_ROWS_PER_FIGURE: usize = 60;
/// At most this many figures of one chart kind ([`input::warnings`] names what is left out):
/// this bounds the pixels drawn whatever the input's size.
pub const MAX_FIGURES_PER_CHART: usize = 24;

/// What the size bounds leave out of the charts of `data`, said in words.
pub(crate) fn left_out(data: &ChartData) -> Vec<String> {
    let mut out = Vec::new();
    let total = data.prs.iter().filter(|r| r.sweep_param.is_empty()).count();
    let drawn: usize = pr::figures(data).iter().map(|(_, f)| f.rows()).sum();
    if drawn < total {
        out.push(format!(
            "the PR chart draws {drawn} of {total} PR rows ({MAX_FIGURES_PER_CHART} figures of \
             at most {MAX_ROWS_PER_FIGURE}); the other {} are in the CSV but not drawn",
            total - drawn
        ));
    }
    let sweeps = sweep::groups(data);
    if sweeps.len() > MAX_FIGURES_PER_CHART {
        out.push(format!(
            "the sweep chart draws {MAX_FIGURES_PER_CHART} of {} swept configurations",
            sweeps.len()
        ));
    }
    out
}

/// Adds `build`'s figures of `items` in pages of `per_page`, named `base` or `base-p1`, ...,
/// up to [`MAX_FIGURES_PER_CHART`].
pub(crate) fn push_pages<T, F>(
    out: &mut Vec<(String, F)>,
    base: &str,
    items: &[T],
    per_page: usize,
    build: impl Fn(&[T]) -> F,
) {
    let pages = items.len().div_ceil(per_page);
    let room = MAX_FIGURES_PER_CHART.saturating_sub(out.len());
    for (i, page) in items.chunks(per_page).enumerate().take(room) {
        let name = if pages <= 1 {
            base.to_string()
        } else {
            format!("{base}-p{}", i + 1)
        };
        out.push((name, build(page)));
    }
}

/// Where the numbers of a chart came from: its GPUs, drivers and runs.
pub(crate) fn run_subtitle<'a>(rows: impl IntoIterator<Item = &'a MeasurementRow>) -> String {
    let rows: Vec<&MeasurementRow> = rows.into_iter().collect();
    let devices = distinct(rows.iter().map(|r| &r.device));
    let run_ids = distinct(rows.iter().map(|r| &r.run_id));
    style::subtitle(&devices, &drivers(&rows), &run_ids)
}

/// [`run_subtitle`] of run `run_id`'s rows on the devices of `rows`.
pub(crate) fn devices_subtitle(data: &ChartData, run_id: &str, rows: &[&MeasurementRow]) -> String {
    let mine =
        |m: &&MeasurementRow| m.run_id == run_id && rows.iter().any(|r| r.device == m.device);
    run_subtitle(data.measurements.iter().filter(mine))
}

/// The drivers of `rows`, named per API when they differ.
pub(crate) fn drivers(rows: &[&MeasurementRow]) -> Vec<String> {
    let with_driver = rows.iter().filter(|r| !r.driver.is_empty());
    let by_api = unique(with_driver.map(|r| (r.api, &r.driver)));
    let plain = distinct(by_api.iter().map(|(_, d)| d));
    if plain.len() <= 1 {
        plain
    } else {
        by_api.iter().map(|(a, d)| format!("{a} {d}")).collect()
    }
}

/// Formats a measured value with three significant digits ("4.80", "0.410", "83.2", "905"),
/// keeping trailing zeros: they state the precision, as in a table.
pub(crate) fn fmt_sig(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        return "n/a".to_string();
    }
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// The top of an axis from 0 over values up to `max`, `headroom` (1.08: 8 %) above them; `max`
/// itself where that is infinite (plotters' ticks never end), 1 where nothing is positive.
pub(crate) fn axis_top(max: f64, headroom: f64) -> f64 {
    if !(max.is_finite() && max > 0.0) {
        1.0
    } else if (max * headroom).is_finite() {
        max * headroom
    } else {
        max
    }
}

/// Axis tick label: integers without decimals ("20", not "20.0"), others as short as exact.
pub(crate) fn fmt_tick(&v: &f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    if (v - v.round()).abs() < 1e-9 * v.abs().max(1.0) {
        return format!("{:.0}", v.round());
    }
    // Four decimals always print a point, so the zeros trimmed are decimals.
    format!("{v:.4}")
        .trim_end_matches('0')
        .trim_end_matches('.')
        .to_string()
}

#[cfg(test)]
pub(crate) mod tests;
