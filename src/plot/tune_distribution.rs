//! Tuning distribution: every evaluated configuration's metric from best to worst, one curve per
//! API, so a flat top (tuning matters little) or a sharp peak (it matters a lot) shows.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::layout::{Frame, LegendItem, Swatch};
use super::{style, DrawError, Figure};
use crate::rows::Api;

pub struct Distribution {
    pub title: String,
    /// The devices and drivers tuned (see [`style::subtitle`]), as every chart names them.
    pub subtitle: String,
    pub unit: String,
    /// Per API: the metrics of its distinct evaluated configurations, and failures.
    pub series: Vec<(Api, Vec<f64>, usize)>,
}

impl Distribution {
    fn frame(&self) -> Frame {
        let legend = self
            .series
            .iter()
            .map(|(api, scores, failed)| {
                let swatch = Swatch::line(
                    style::api_style(*api).color,
                    false,
                    Some(style::Marker::Circle),
                );
                let label = format!("{} ({} ok, {failed} failed)", api.label(), scores.len());
                LegendItem::new(label, swatch)
            })
            .collect();
        Frame {
            title: self.title.clone(),
            subtitle: self.subtitle.clone(),
            legend,
            notes: vec!["Failed configurations are counted in the legend, not drawn.".into()],
        }
    }
}

impl Figure for Distribution {
    fn size(&self) -> (u32, u32) {
        self.frame().size_with_plot(420, style::HEIGHT)
    }

    fn paint<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), DrawError> {
        let plot_area = self.frame().draw(root, style::MARGIN / 2)?;
        let n = self
            .series
            .iter()
            .map(|s| s.1.len())
            .max()
            .unwrap_or(1)
            .max(1) as i64;
        let y_hi = self
            .series
            .iter()
            .flat_map(|s| s.1.first().copied())
            .fold(1e-9, f64::max);
        let descs = ("configurations, ranked from best", self.unit.as_str());
        let mut chart = super::layout::counted_chart(&plot_area, n, 0.0..y_hi * 1.05, descs)?;
        for (api, scores, _) in &self.series {
            let c = style::api_style(*api).color;
            let pts = scores.iter().enumerate().map(|(i, s)| (i as i64 + 1, *s));
            chart.draw_series(pts.map(|p| Circle::new(p, 3, c.filled())))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ranks read as integers, and the chart names its GPU.
    #[test]
    fn integer_axis_and_a_device_subtitle() {
        let fig = Distribution {
            title: "reduce/tree at 1000: every evaluated configuration".into(),
            subtitle: style::subtitle(&["H100 test".into()], &["drv".into()], &["now".into()]),
            unit: "GB/s".into(),
            series: vec![(Api::Cuda, vec![700.0, 600.0, 500.0, 400.0, 300.0], 1)],
        };
        let svg = crate::plot::render_svg(&fig).unwrap();
        crate::plot::tune_convergence::tests::assert_subtitle_and_integer_ticks(&svg, "5");
    }
}
