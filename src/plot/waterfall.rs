//! explain's waterfall: per target, from its PR to parity in cumulative steps, each ladder step
//! moving the running PR by its own effect; the last bar is what remains. Effects measured one at
//! a time are stacked as factors, so overlapping causes can overshoot parity: the chart shows it.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::layout::{Frame, LegendItem, Swatch};
use super::style::HouseMesh;
use super::{
    fmt_tick, run_subtitle, slug, style, write_all_figures, DrawError, Figure, Format, PlotError,
};
use crate::rows::MeasurementRow;

/// What a bar stands for, which sets its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarKind {
    Target,
    TowardParity,
    AwayFromParity,
    Remaining,
}

/// One bar: from `from` to `to` on the PR axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub label: String,
    pub from: f64,
    pub to: f64,
    pub kind: BarKind,
    /// The CI of the target's PR (first bar only).
    pub ci: Option<(f64, f64)>,
}

pub(crate) struct Waterfall {
    frame: Frame,
    bars: Vec<Bar>,
    x_max: f64,
}

fn color(kind: BarKind) -> RGBColor {
    match kind {
        BarKind::Target => style::FAIR,
        BarKind::TowardParity => RGBColor(0, 158, 115),
        BarKind::AwayFromParity => style::UNFAIR_HATCH,
        BarKind::Remaining => style::OTHER_API,
    }
}

fn build(target: &str, bars: Vec<Bar>, subtitle: &str) -> Waterfall {
    let fill = |kind| Swatch::fill(color(kind), None);
    let x_max = bars
        .iter()
        .flat_map(|b| [b.from, b.to, b.ci.map_or(0.0, |c| c.1)])
        .fold(1.1f64, f64::max)
        * 1.08;
    Waterfall {
        frame: Frame {
            title: style::title("Explain waterfall", target),
            subtitle: subtitle.to_string(),
            legend: vec![
                LegendItem::new("target PR", fill(BarKind::Target)),
                LegendItem::new("step toward parity", fill(BarKind::TowardParity)),
                LegendItem::new("step away from parity", fill(BarKind::AwayFromParity)),
                LegendItem::new("remaining to parity", fill(BarKind::Remaining)),
                LegendItem::new("PR = 1 (parity)", Swatch::RefLine),
            ],
            notes: vec![
                "Each step moves the running PR by its rung's PR over the target's (the rung of \
                 that ladder step nearest parity),"
                    .into(),
                "measured one at a time and stacked as factors; the last bar is what no step \
                 explains (overlapping causes can overshoot)."
                    .into(),
            ],
        },
        bars,
        x_max,
    }
}

/// Draws `waterfall-<target>.<ext>` (`-2`, ... where targets slug alike) of each of `targets`
/// (bars from `explain::waterfall`); GPU and driver from `measurements` (the rungs' rows).
pub fn draw(
    targets: &[(String, Vec<Bar>)],
    measurements: &[MeasurementRow],
    out_dir: &Path,
    formats: &[Format],
) -> Result<Vec<PathBuf>, PlotError> {
    let subtitle = run_subtitle(measurements);
    let figures: Vec<_> = targets
        .iter()
        .map(|(target, bars)| (slug(target), build(target, bars.clone(), &subtitle)))
        .collect();
    write_all_figures("waterfall", &figures, out_dir, formats)
}

const LABEL_W: u32 = 420;
const BAR_ROW_H: u32 = 44;

impl Figure for Waterfall {
    fn size(&self) -> (u32, u32) {
        let plot_h = self.bars.len() as u32 * BAR_ROW_H + style::X_AXIS_AREA + 40;
        self.frame.size_with_plot(plot_h, style::HEIGHT)
    }

    fn paint<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), DrawError> {
        let area = self.frame.draw(root, style::MARGIN / 2)?;
        let n = self.bars.len() as f64;
        let mut chart = ChartBuilder::on(&area)
            .margin(style::MARGIN)
            .margin_left(LABEL_W + style::MARGIN)
            .x_label_area_size(style::X_AXIS_AREA)
            .build_cartesian_2d(0.0..self.x_max, 0.0..n)?;
        chart
            .configure_mesh()
            .house_style()
            .x_desc("PR (ratio, no unit)")
            .x_label_formatter(&fmt_tick)
            .y_labels(0)
            .draw()?;
        let label_font = style::anchored(style::TICK_PX, HPos::Right, VPos::Center);
        for (i, bar) in self.bars.iter().enumerate() {
            // The first bar on top: rows count down.
            let y = n - i as f64 - 0.5;
            let (lo, hi) = (bar.from.min(bar.to), bar.from.max(bar.to));
            chart.draw_series(std::iter::once(Rectangle::new(
                [(lo, y - 0.3), (hi, y + 0.3)],
                color(bar.kind).filled(),
            )))?;
            if let Some((ci_lo, ci_hi)) = bar.ci {
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(ci_lo, y), (ci_hi, y)],
                    style::WHISKER.stroke_width(2),
                )))?;
            }
            let (px, py) = chart.backend_coord(&(0.0, y));
            let text = super::layout::fit_text(root, &bar.label, style::TICK_PX, LABEL_W - 8)?;
            root.draw_text(&text, &label_font, (px - 8, py))?;
            let value = format!("{} → {}", fmt_tick(&bar.from), fmt_tick(&bar.to));
            let (vx, vy) = chart.backend_coord(&(hi, y));
            let value_font = style::anchored(style::VALUE_PX, HPos::Left, VPos::Center);
            root.draw_text(&value, &value_font, (vx + 4, vy))?;
        }
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(1.0, 0.0), (1.0, n)],
            style::REF_LINE.stroke_width(1),
        )))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_that_slug_alike_keep_their_own_file() {
        let bar = |to| Bar {
            label: "target".into(),
            from: 0.0,
            to,
            kind: BarKind::Target,
            ci: None,
        };
        let targets = [
            ("a/b".to_string(), vec![bar(0.5)]),
            ("a b".into(), vec![bar(0.7)]),
        ];
        let tmp = tempfile::tempdir().unwrap();
        let written = draw(&targets, &[], tmp.path(), &[Format::Svg]).unwrap();
        let names: Vec<_> = written.iter().map(|p| p.file_name().unwrap()).collect();
        assert_eq!(names, ["waterfall-a-b.svg", "waterfall-a-b-2.svg"]);
    }
}
