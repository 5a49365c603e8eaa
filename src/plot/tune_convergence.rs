//! Tuning convergence: the best metric so far against the evaluations asked for, one line per
//! API and strategy (the strategy by colour, the API by line style).

use plotters::coord::Shift;
use plotters::prelude::*;

use super::layout::{Frame, LegendItem, Swatch};
use super::{style, DrawError, Figure};
use crate::rows::Api;
use crate::rows::StrategyKind;

/// One line: (evaluations asked, best so far).
pub struct Line {
    pub api: Api,
    pub strategy: StrategyKind,
    pub points: Vec<(f64, f64)>,
}

pub struct Convergence {
    pub title: String,
    /// The devices and drivers tuned (see [`style::subtitle`]), as every chart names them.
    pub subtitle: String,
    pub unit: String,
    pub lines: Vec<Line>,
}

/// One colour per strategy, from the Okabe-Ito palette (told apart by colour-blind readers).
fn color(strategy: StrategyKind) -> RGBColor {
    match strategy {
        StrategyKind::Exhaustive => RGBColor(0, 114, 178),
        StrategyKind::Random => RGBColor(230, 159, 0),
        StrategyKind::Anneal => RGBColor(0, 158, 115),
        StrategyKind::Genetic => RGBColor(204, 121, 167),
        StrategyKind::Bayes => RGBColor(213, 94, 0),
    }
}

impl Convergence {
    fn frame(&self) -> Frame {
        let legend = self
            .lines
            .iter()
            .map(|l| {
                // CUDA's lines are dashed, OpenCL's solid, as in the other line charts.
                let swatch = Swatch::line(color(l.strategy), style::api_style(l.api).dashed, None);
                LegendItem::new(format!("{} {}", l.api.label(), l.strategy), swatch)
            })
            .collect();
        Frame {
            title: self.title.clone(),
            subtitle: self.subtitle.clone(),
            legend,
            notes: vec![
                "Colour: the strategy; solid OpenCL, dashed CUDA. Evaluations are counted per \
                 strategy and API."
                    .into(),
            ],
        }
    }
}

impl Figure for Convergence {
    fn size(&self) -> (u32, u32) {
        self.frame().size_with_plot(420, style::HEIGHT)
    }

    fn paint<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), DrawError> {
        let plot_area = self.frame().draw(root, style::MARGIN / 2)?;
        let all = self.lines.iter().flat_map(|l| l.points.iter());
        // Evaluations are counted: an integer axis, so no tick reads 2.5 evaluations.
        let x_hi = all.clone().map(|p| p.0.round() as i64).fold(1, i64::max);
        let y_hi = all.clone().map(|p| p.1).fold(0.0, f64::max);
        let y_lo = all.map(|p| p.1).fold(y_hi, f64::min);
        let pad = ((y_hi - y_lo) * 0.05).max(y_hi * 0.01).max(1e-9);
        let y_desc = format!("best so far ({})", self.unit);
        let descs = ("evaluations asked for", y_desc.as_str());
        let y = (y_lo - pad).max(0.0)..y_hi + pad;
        let mut chart = super::layout::counted_chart(&plot_area, x_hi, y, descs)?;
        for l in &self.lines {
            let pts = l.points.iter().map(|p| (p.0.round() as i64, p.1));
            let line = color(l.strategy).stroke_width(2);
            super::layout::draw_line(&mut chart, pts, line, style::api_style(l.api).dashed)?;
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The text of every `<text>` element of `svg`.
    pub(crate) fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                Some(
                    t.split_once('>')?
                        .1
                        .split_once("</text>")?
                        .0
                        .trim()
                        .to_string(),
                )
            })
            .collect()
    }

    #[cfg(test)]
    /// Counted axes read as integers (no "2.5" evaluations), and the chart names its GPU.
    #[test]
    fn integer_axis_and_a_device_subtitle() {
        let fig = Convergence {
            title: "reduce/tree at 1000: best so far".into(),
            subtitle: style::subtitle(&["H100 test".into()], &["drv".into()], &["now".into()]),
            unit: "GB/s".into(),
            lines: vec![Line {
                api: Api::OpenCl,
                strategy: StrategyKind::Random,
                points: (1..=7).map(|n| (n as f64, 100.0 * n as f64)).collect(),
            }],
        };
        let svg = crate::plot::render_svg(&fig).unwrap();
        assert_subtitle_and_integer_ticks(&svg, "7");
    }

    /// The chart names its GPU and its x ticks are whole numbers, up to `last`.
    pub(crate) fn assert_subtitle_and_integer_ticks(svg: &str, last: &str) {
        let texts = texts(svg);
        assert!(
            texts.iter().any(|t| t.contains("GPU: H100 test")),
            "{texts:?}"
        );
        assert!(texts.iter().any(|t| t == last), "{texts:?}");
        let decimal =
            |t: &String| t.chars().all(|c| c.is_ascii_digit() || c == '.') && t.contains('.');
        assert!(!texts.iter().any(decimal), "{texts:?}");
    }
}
