//! Per-GPU PR chart: per comparison of a study, a point per GPU (and driver) with its CI. Points,
//! as the axis is zoomed around the similar band; a PR beyond it is an arrow with its value.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::layout::{draw_marker, fit_text, ref_line_px, whisker, Frame, LegendItem, Swatch};
use super::style::{self, HouseMesh, Marker};
use super::MAX_ROWS_PER_FIGURE;
use super::{distinct, group_in_order, push_pages, slug, ChartData, DrawError, Figure};
use crate::rows::PrRow;

pub const NAME: &str = "pr-gpus";

/// The axis never shows less than this around PR = 1, and never more than the outer range.
const MIN_RANGE: (f64, f64) = (0.8, 1.2);
const MAX_RANGE: (f64, f64) = (0.5, 1.5);
/// Series colours, one per GPU; shapes repeat the distinction for greyscale.
const COLORS: [RGBColor; 6] = [
    RGBColor(31, 64, 140),
    RGBColor(220, 110, 30),
    RGBColor(40, 140, 70),
    RGBColor(150, 50, 140),
    RGBColor(120, 120, 120),
    RGBColor(180, 40, 40),
];
const MARKERS: [Marker; 4] = [
    Marker::Circle,
    Marker::Triangle,
    Marker::Square,
    Marker::Diamond,
];

/// A PR row's GPU: its device(s) and the drivers its run's measurements name.
fn gpu_key(data: &ChartData, r: &PrRow) -> String {
    let drivers = distinct(
        data.measurements
            .iter()
            .filter(|m| m.run_id == r.run_id)
            .map(|m| format!("{} {}", m.api, m.driver)),
    );
    let gpu = if r.device_a == r.device_b || r.device_b.is_empty() {
        r.device_a.clone()
    } else {
        format!("{} vs {}", r.device_a, r.device_b)
    };
    if drivers.is_empty() {
        gpu
    } else {
        format!("{gpu} ({})", drivers.join(", "))
    }
}

/// `series` indexes the GPUs.
#[derive(Debug, Clone, PartialEq)]
struct Point {
    series: usize,
    pr: f64,
    ci: (f64, f64),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GpusFigure {
    frame: Frame,
    /// Label and points of each comparison, top to bottom.
    rows: Vec<(String, Vec<Point>)>,
    series: usize,
    x: (f64, f64),
}

/// One figure per study whose PR rows come from two GPUs (or drivers) or more.
pub(crate) fn figures(data: &ChartData) -> Vec<(String, GpusFigure)> {
    let mut out = Vec::new();
    for (study, rows) in group_in_order(data.prs.iter(), |r| r.study.clone()) {
        // A GPU that ran the study more than once is one series per run.
        let keyed: Vec<(String, &PrRow)> = rows.iter().map(|r| (gpu_key(data, r), *r)).collect();
        let runs = group_in_order(keyed.iter(), |(k, r)| (k.clone(), r.run_id.clone()));
        let gpus = group_in_order(runs.iter(), |((k, _), _)| k.clone());
        if gpus.len() < 2 {
            continue;
        }
        let names: Vec<String> = runs
            .iter()
            .map(|((k, run), _)| {
                let repeated = runs.iter().filter(|((k2, _), _)| k2 == k).count() > 1;
                if repeated {
                    format!("{k} run {run}")
                } else {
                    k.clone()
                }
            })
            .collect();
        let by_name = group_in_order(keyed.iter(), |(_, r)| r.comparison.clone());
        let base = slug(&study);
        push_pages(&mut out, &base, &by_name, MAX_ROWS_PER_FIGURE, |page| {
            let rows = page
                .iter()
                .map(|(name, list)| {
                    let points = list
                        .iter()
                        .map(|(k, r)| Point {
                            series: runs
                                .iter()
                                .position(|((k2, run), _)| k2 == k && *run == r.run_id)
                                .unwrap_or(0),
                            pr: r.pr,
                            ci: (r.pr_ci_lo, r.pr_ci_hi),
                        })
                        .collect();
                    (name.clone(), points)
                })
                .collect();
            build(&study, &names, rows)
        });
    }
    out
}

/// The zoomed axis: [`MIN_RANGE`] widened to the data, within [`MAX_RANGE`].
fn x_range(rows: &[(String, Vec<Point>)]) -> (f64, f64) {
    let values = rows
        .iter()
        .flat_map(|(_, p)| p.iter().flat_map(|p| [p.pr, p.ci.0, p.ci.1]))
        .filter(|v| v.is_finite());
    let (lo, hi) = values.fold(MIN_RANGE, |(lo, hi), v| (lo.min(v), hi.max(v)));
    let pad = (hi - lo) * 0.03;
    ((lo - pad).max(MAX_RANGE.0), (hi + pad).min(MAX_RANGE.1))
}

fn build(study: &str, names: &[String], rows: Vec<(String, Vec<Point>)>) -> GpusFigure {
    let legend: Vec<LegendItem> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            LegendItem::new(
                n.clone(),
                Swatch::line(
                    COLORS[i % COLORS.len()],
                    false,
                    Some(MARKERS[i % MARKERS.len()]),
                ),
            )
        })
        .chain([
            super::pr::similar_item(style::BAND, style::BAND_ALPHA),
            LegendItem::new("PR = 1", Swatch::RefLine),
        ])
        .collect();
    let x = x_range(&rows);
    let frame = Frame {
        title: style::title("Performance Ratio per GPU", &format!("study {study}")),
        subtitle: format!("{} GPU/driver series; PR = perf(A) / perf(B)", names.len()),
        legend,
        notes: vec![
            format!(
                "Point: PR from median times; line: its bootstrap 95% CI. The axis is zoomed \
                 around the {}–{} band.",
                super::pr::SIMILAR_BAND.0,
                super::pr::SIMILAR_BAND.1
            ),
            format!(
                "A PR outside {:.2}–{:.2} is an arrow at the edge with its value.",
                x.0, x.1
            ),
        ],
    };
    GpusFigure {
        frame,
        rows,
        series: names.len(),
        x,
    }
}

impl Figure for GpusFigure {
    fn size(&self) -> (u32, u32) {
        let row_h = style::ROW_H.max(self.series as u32 * 10 + 10);
        let plot_h = self.rows.len().max(1) as u32 * row_h + style::X_AXIS_AREA + style::PANEL_GAP;
        self.frame
            .size_with_plot(plot_h + style::MARGIN, style::MIN_HEIGHT)
    }

    fn paint<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), DrawError> {
        let area = self.frame.draw(root, style::MARGIN)?;
        let labels = self.rows.iter().map(|(l, _)| l.as_str());
        let label_w = super::hbar::labels_width(labels, style::WIDTH);
        let n = self.rows.len().max(1);
        let (x0, x1) = self.x;
        let y_top = n as f64 - 0.5;
        let mut chart = ChartBuilder::on(&area)
            .margin_top(style::PANEL_GAP)
            .margin_left(label_w + style::MARGIN)
            .margin_right(style::MARGIN * 5)
            .x_label_area_size(style::X_AXIS_AREA)
            .build_cartesian_2d(x0..x1, -0.5f64..y_top)?;
        let row_y = |i: usize| (n - 1 - i) as f64;
        let band = Some(super::pr::SIMILAR_BAND);
        super::hbar::draw_ground(&mut chart, self.rows.len(), self.x, band)?;
        chart
            .configure_mesh()
            .house_style()
            .disable_y_mesh()
            .y_labels(0)
            .x_labels(10)
            .x_label_formatter(&super::fmt_tick)
            .x_desc("PR = perf(A) / perf(B)   (> 1: side A faster)")
            .draw()?;
        ref_line_px(
            root,
            chart.backend_coord(&(1.0, y_top)),
            chart.backend_coord(&(1.0, -0.5)),
        )?;
        let slot = 0.8 / self.series.max(1) as f64;
        let value_font = style::anchored(style::VALUE_PX, HPos::Left, VPos::Center);
        let label_font = style::anchored(style::TICK_PX, HPos::Right, VPos::Center);
        for (i, (label, points)) in self.rows.iter().enumerate() {
            let (left, cy) = chart.backend_coord(&(x0, row_y(i)));
            let text = fit_text(root, label, style::TICK_PX, label_w)?;
            root.draw(&Text::new(text, (left - 8, cy), label_font.clone()))?;
            for p in points {
                if !p.pr.is_finite() {
                    continue;
                }
                let y = row_y(i) + 0.4 - slot * (p.series as f64 + 0.5);
                let color = COLORS[p.series % COLORS.len()];
                let clamp = |v: f64| v.clamp(x0, x1);
                if p.ci.0.is_finite() && p.ci.1.is_finite() {
                    let a = chart.backend_coord(&(clamp(p.ci.0), y));
                    let b = chart.backend_coord(&(clamp(p.ci.1), y));
                    whisker(root, a, b, (0, 4), color.stroke_width(2))?;
                }
                let at = chart.backend_coord(&(clamp(p.pr), y));
                if p.pr < x0 || p.pr > x1 {
                    let dir = if p.pr < x0 { -1 } else { 1 };
                    let tip = (at.0 + 8 * dir, at.1);
                    root.draw(&Polygon::new(
                        vec![tip, (at.0, at.1 - 6), (at.0, at.1 + 6)],
                        color.filled(),
                    ))?;
                    let tx = if dir < 0 { at.0 + 12 } else { at.0 - 60 };
                    root.draw_text(&format!("{:.3}", p.pr), &value_font, (tx, at.1))?;
                } else {
                    draw_marker(root, at, MARKERS[p.series % MARKERS.len()], color)?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pr(run: &str, device: &str, comparison: &str, pr: f64) -> PrRow {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("results/h100/fair/prs.csv");
        let rows: Vec<PrRow> = crate::export::csv::read_rows(&dir).unwrap();
        PrRow {
            run_id: run.into(),
            device_a: device.into(),
            device_b: device.into(),
            comparison: comparison.into(),
            pr,
            pr_ci_lo: pr * 0.99,
            pr_ci_hi: pr * 1.01,
            ..rows[0].clone()
        }
    }

    #[test]
    fn one_figure_per_study_with_two_gpus_and_points_per_gpu() {
        let mut data = crate::plot::tests::registered();
        assert!(figures(&data).is_empty());
        data.prs = vec![pr("r1", "H100", "x", 1.0), pr("r1", "H100", "y", 0.3)];
        assert!(figures(&data).is_empty(), "one GPU: no chart");
        data.prs.push(pr("r2", "H200", "x", 1.05));
        let figs = figures(&data);
        assert_eq!(figs.len(), 1);
        let fig = &figs[0].1;
        assert_eq!(fig.series, 2);
        assert_eq!(fig.rows.len(), 2);
        assert_eq!(fig.rows[0].1.len(), 2, "x on both GPUs");
        assert_eq!(fig.rows[1].1.len(), 1, "y on the H100 only");
        // 0.3 lies outside the zoom: the axis stops at its floor.
        assert_eq!(fig.x.0, MAX_RANGE.0);
        assert!(fig.x.1 >= MIN_RANGE.1 && fig.x.1 < MAX_RANGE.1);
    }
}
