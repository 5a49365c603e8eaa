//! Tuning distribution: every evaluated configuration's metric, sorted from best to worst,
//! one curve per API, so the share of configurations near each API's best is visible (a
//! flat top: tuning matters little; a sharp peak: it matters a lot). Failed configurations
//! are counted in the caption, not drawn.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{style, write_figure, DrawError, Figure, Format, PlotError};
use crate::backend::Api;
use crate::tune::run::Evaluation;

pub struct Distribution {
    pub title: String,
    pub unit: String,
    /// Per API: the metrics of its distinct evaluated configurations, and failures.
    pub series: Vec<(Api, Vec<f64>, usize)>,
}

/// The distinct configurations' metrics of every API in `evals`, best first.
pub fn series_of(evals: &[Evaluation]) -> Vec<(Api, Vec<f64>, usize)> {
    let mut out = Vec::new();
    for api in [Api::OpenCl, Api::Cuda] {
        let mut seen = std::collections::HashSet::new();
        let (mut scores, mut failed) = (Vec::new(), 0);
        for e in evals.iter().filter(|e| e.api == api) {
            if !seen.insert(e.point) {
                continue;
            }
            match e.score {
                Some(s) => scores.push(s),
                None => failed += 1,
            }
        }
        if !scores.is_empty() || failed > 0 {
            scores.sort_by(|a, b| b.total_cmp(a));
            out.push((api, scores, failed));
        }
    }
    out
}

impl Figure for Distribution {
    fn size(&self) -> (u32, u32) {
        (style::WIDTH, style::HEIGHT)
    }

    fn paint<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), DrawError> {
        let n = self
            .series
            .iter()
            .map(|s| s.1.len())
            .max()
            .unwrap_or(1)
            .max(1);
        let y_hi = self
            .series
            .iter()
            .flat_map(|s| s.1.first().copied())
            .fold(1e-9, f64::max);
        let mut chart = ChartBuilder::on(root)
            .caption(self.title.as_str(), style::font(style::TITLE_PX))
            .margin(style::MARGIN)
            .x_label_area_size(50)
            .y_label_area_size(80)
            .build_cartesian_2d(0.0..n as f64 + 1.0, 0.0..y_hi * 1.05)?;
        chart
            .configure_mesh()
            .x_desc("configurations, ranked from best")
            .y_desc(self.unit.as_str())
            .axis_desc_style(style::font(style::AXIS_DESC_PX))
            .label_style(style::font(style::TICK_PX))
            .bold_line_style(style::GRID_BOLD)
            .light_line_style(style::GRID_LIGHT)
            .draw()?;
        for (api, scores, failed) in &self.series {
            let c = match api {
                Api::OpenCl => style::OPENCL,
                Api::Cuda => style::CUDA,
            };
            let pts = scores.iter().enumerate().map(|(i, s)| (i as f64 + 1.0, *s));
            chart
                .draw_series(pts.map(|p| Circle::new(p, 3, c.filled())))?
                .label(format!(
                    "{} ({} ok, {failed} failed)",
                    api.label(),
                    scores.len()
                ))
                .legend(move |(x, y)| Circle::new((x + 10, y), 4, c.filled()));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .label_font(style::font(style::LEGEND_PX))
            .background_style(WHITE.mix(0.9))
            .border_style(style::OUTLINE)
            .draw()?;
        Ok(())
    }
}

/// Write `tune-distribution.png/svg` into `out`.
pub fn write(fig: &Distribution, out: &Path) -> Result<Vec<PathBuf>, PlotError> {
    write_figure(fig, out, "tune-distribution", &Format::ALL)
}
