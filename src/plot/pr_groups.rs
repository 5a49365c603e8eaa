//! PR dot chart of one kernel group: one row per comparison, one dot with its 95% CI per GPU,
//! the similar band shaded and a line at PR = 1.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::layout::{Frame, LegendItem, Swatch};
use super::pr::SIMILAR_BAND;
use super::style::HouseMesh;
use super::{style, DrawError, Figure};

/// One comparison: its label and, per series, its PR and CI (`None`: not measured there).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub label: String,
    pub values: Vec<Option<(f64, f64, f64)>>,
}

/// A chart of series (GPUs, by name) and rows.
#[derive(Debug, Clone, PartialEq)]
pub struct PrGroups {
    pub title: String,
    pub subtitle: String,
    pub series: Vec<String>,
    pub rows: Vec<Row>,
}

/// Series colours: the first GPU dark, the second light, as the API colours are.
const COLORS: [RGBColor; 3] = [style::OPENCL, style::CUDA, style::OTHER_API];
/// The similar band, opaque and pale: the dots and whiskers sit on it.
const BAND: RGBColor = RGBColor(225, 235, 225);
const LABEL_W: u32 = 330;
const ROW_H: u32 = 22;

impl PrGroups {
    fn frame(&self) -> Frame {
        let mut legend: Vec<LegendItem> = self
            .series
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let swatch =
                    Swatch::line(COLORS[i % COLORS.len()], false, Some(style::Marker::Circle));
                LegendItem::new(name.clone(), swatch)
            })
            .collect();
        legend.push(super::pr::similar_item(BAND, 1.0));
        Frame {
            title: self.title.clone(),
            subtitle: self.subtitle.clone(),
            legend,
            notes: vec!["PR = perf(OpenCL) / perf(CUDA); whiskers: 95% CI.".into()],
        }
    }

    /// The PR axis over the band and every finite CI bound (plotters' ticks never end on an
    /// infinite axis), with a little room.
    fn x_range(&self) -> (f64, f64) {
        let bounds = self.rows.iter().flat_map(|r| r.values.iter().flatten());
        let finite = bounds
            .flat_map(|v| [v.0, v.1, v.2])
            .filter(|b| b.is_finite());
        let (lo, hi) = finite.fold((SIMILAR_BAND.0, SIMILAR_BAND.1), |(lo, hi), b| {
            (lo.min(b), hi.max(b))
        });
        let pad = (hi - lo) * 0.05;
        (lo - pad, hi + pad)
    }
}

impl Figure for PrGroups {
    fn size(&self) -> (u32, u32) {
        let plot_h = ROW_H * self.rows.len().max(1) as u32 + style::X_AXIS_AREA;
        self.frame().size_with_plot(plot_h, style::HEIGHT)
    }

    fn paint<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), DrawError> {
        let area = self.frame().draw(root, style::MARGIN / 2)?;
        let (x_lo, x_hi) = self.x_range();
        let n = self.rows.len().max(1) as f64;
        let mut chart = ChartBuilder::on(&area)
            .margin(style::MARGIN)
            .x_label_area_size(style::X_AXIS_AREA)
            .y_label_area_size(LABEL_W)
            .build_cartesian_2d(x_lo..x_hi, n - 0.5..-0.5)?;
        chart
            .configure_mesh()
            .house_style()
            .x_desc("PR")
            .disable_y_mesh()
            .y_labels(0)
            .draw()?;
        chart.draw_series(std::iter::once(Rectangle::new(
            [(SIMILAR_BAND.0, -0.5), (SIMILAR_BAND.1, n - 0.5)],
            BAND.filled(),
        )))?;
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(1.0, -0.5), (1.0, n - 0.5)],
            style::OUTLINE,
        )))?;
        let k = self.series.len().max(1) as f64;
        for (i, row) in self.rows.iter().enumerate() {
            for (j, v) in row.values.iter().enumerate() {
                let Some((pr, lo, hi)) = *v else { continue };
                // A whisker without a finite end runs to the axis's edge.
                let (lo, hi) = (lo.max(x_lo), hi.min(x_hi));
                let y = i as f64 + (j as f64 - (k - 1.0) / 2.0) * 0.3;
                let c = COLORS[j % COLORS.len()];
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(lo, y), (hi, y)],
                    c.stroke_width(2),
                )))?;
                chart.draw_series(std::iter::once(Circle::new((pr, y), 4, c.filled())))?;
            }
            let (px, py) = chart.backend_coord(&(x_lo, i as f64));
            let label = style::anchored(style::TICK_PX, HPos::Right, VPos::Center);
            root.draw_text(&row.label, &label, (px - 8, py))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_label_and_series_is_drawn() {
        let fig = PrGroups {
            title: "PR of matvec".into(),
            subtitle: "two GPUs".into(),
            series: vec!["GPU A".into(), "GPU B".into()],
            rows: vec![
                Row {
                    label: "matvec/listing4".into(),
                    values: vec![Some((0.86, 0.85, 0.87)), None],
                },
                Row {
                    label: "matvec/tuned".into(),
                    values: vec![Some((1.0, 0.99, 1.01)), Some((1.02, 1.01, 1.03))],
                },
            ],
        };
        let svg = crate::plot::render_svg(&fig).unwrap();
        for text in ["matvec/listing4", "matvec/tuned", "GPU A", "GPU B"] {
            assert!(svg.contains(text), "{text} missing");
        }
    }

    #[test]
    fn an_infinite_or_undefined_ci_keeps_the_axis_finite() {
        let fig = PrGroups {
            title: "PR".into(),
            subtitle: String::new(),
            series: vec!["GPU A".into()],
            rows: vec![
                Row {
                    label: "open above".into(),
                    values: vec![Some((1.1, 0.9, f64::INFINITY))],
                },
                Row {
                    label: "undefined".into(),
                    values: vec![Some((f64::NAN, f64::NEG_INFINITY, f64::NAN))],
                },
            ],
        };
        let (lo, hi) = fig.x_range();
        assert!(
            lo.is_finite() && hi.is_finite() && lo < 0.9 && hi > 1.1,
            "{lo} {hi}"
        );
        let svg = crate::plot::render_svg(&fig).unwrap();
        assert!(svg.contains("open above"));
    }
}
