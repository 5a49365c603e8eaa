//! Tuning convergence: the best metric found so far against the evaluations asked for, one
//! line per API and strategy (OpenCL blue, CUDA orange; the strategy by line style), with the
//! exhaustive best of each API as a dashed reference where the space was covered.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{style, write_figure, DrawError, Figure, Format, PlotError};
use crate::backend::Api;
use crate::tune::run::Evaluation;
use crate::tune::strategy::StrategyKind;

/// One line: (evaluations asked, best so far).
pub struct Line {
    pub api: Api,
    pub strategy: StrategyKind,
    pub points: Vec<(f64, f64)>,
}

pub struct Convergence {
    pub title: String,
    pub unit: String,
    pub lines: Vec<Line>,
}

/// The best-so-far lines of every (API, strategy) in `evals`.
pub fn lines_of(evals: &[Evaluation]) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::new();
    for e in evals {
        let i = match out
            .iter()
            .position(|l| l.api == e.api && l.strategy == e.strategy)
        {
            Some(i) => i,
            None => {
                out.push(Line {
                    api: e.api,
                    strategy: e.strategy,
                    points: Vec::new(),
                });
                out.len() - 1
            }
        };
        let last = out[i].points.last().map(|p| p.1);
        let best = match (last, e.score) {
            (Some(b), Some(s)) => Some(b.max(s)),
            (b, s) => b.or(s),
        };
        if let Some(b) = best {
            out[i].points.push((e.n as f64, b));
        }
    }
    out
}

fn color(api: Api) -> RGBColor {
    match api {
        Api::OpenCl => style::OPENCL,
        Api::Cuda => style::CUDA,
    }
}

impl Figure for Convergence {
    fn size(&self) -> (u32, u32) {
        (style::WIDTH, style::HEIGHT)
    }

    fn paint<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), DrawError> {
        let all = self.lines.iter().flat_map(|l| l.points.iter());
        let x_hi = all.clone().map(|p| p.0).fold(1.0, f64::max);
        let y_hi = all.clone().map(|p| p.1).fold(0.0, f64::max);
        let y_lo = all.map(|p| p.1).fold(y_hi, f64::min);
        let pad = ((y_hi - y_lo) * 0.05).max(y_hi * 0.01).max(1e-9);
        let mut chart = ChartBuilder::on(root)
            .caption(self.title.as_str(), style::font(style::TITLE_PX))
            .margin(style::MARGIN)
            .x_label_area_size(50)
            .y_label_area_size(80)
            .build_cartesian_2d(0.0..x_hi * 1.02, (y_lo - pad).max(0.0)..y_hi + pad)?;
        chart
            .configure_mesh()
            .x_desc("evaluations asked for")
            .y_desc(format!("best so far ({})", self.unit))
            .axis_desc_style(style::font(style::AXIS_DESC_PX))
            .label_style(style::font(style::TICK_PX))
            .bold_line_style(style::GRID_BOLD)
            .light_line_style(style::GRID_LIGHT)
            .draw()?;
        for l in &self.lines {
            let c = color(l.api);
            let width = match l.strategy {
                StrategyKind::Exhaustive => 1,
                StrategyKind::Random => 2,
                StrategyKind::Anneal => 4,
            };
            chart
                .draw_series(LineSeries::new(
                    l.points.iter().copied(),
                    c.stroke_width(width),
                ))?
                .label(format!("{} {}", l.api.label(), l.strategy))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 24, y)], c.stroke_width(width))
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .label_font(style::font(style::LEGEND_PX))
            .background_style(WHITE.mix(0.9))
            .border_style(style::OUTLINE)
            .draw()?;
        Ok(())
    }
}

/// Write `tune-convergence.png/svg` into `out`.
pub fn write(fig: &Convergence, out: &Path) -> Result<Vec<PathBuf>, PlotError> {
    write_figure(fig, out, "tune-convergence", &Format::ALL)
}
