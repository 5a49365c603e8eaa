//! Whitepaper Table 1 chart: time per matvec for each listing, ours beside NVIDIA's published
//! GTX 285 figures, on a log axis: the listings span a decade and a modern GPU is one or two below.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::hbar::HBar;
use super::layout::{self, Frame, LegendItem, Swatch};
use super::style::HouseMesh;
use super::{
    distinct, fmt_sig, group_in_order, run_slug, run_subtitle, style, unique, ChartData, DrawError,
    Figure, MAX_FIGURES_PER_CHART,
};
use crate::rows::{Api, MeasurementRow, Status};

pub const STUDY: &str = "table1";
/// The study's former name (before studies were named by their question), in committed runs.
const FORMER_STUDY: &str = "whitepaper-table1";

const WHITEPAPER_LABEL: &str = "GTX 285 OpenCL (whitepaper Table 1)";
const WHITEPAPER_NOTE: &str = "Whitepaper: NVIDIA \"OpenCL Programming for the CUDA \
    Architecture\", Table 1: GeForce GTX 285, 60989×1100 matrix, work-group size 256, 239 \
    groups (Listing 2) / 60 groups (Listings 3–7).";

/// Listing number of a variant named like `listing4` (or `Listing 4`, `l4`).
pub fn listing_number(variant: &str) -> Option<u32> {
    let stem = variant.trim_end_matches(|c: char| c.is_ascii_digit());
    variant[stem.len()..].parse().ok()
}

/// The whitepaper's time for a listing on a GTX 285 with OpenCL, if it published one.
pub fn whitepaper_ms(listing: u32) -> Option<f64> {
    crate::paper::WHITEPAPER_TABLE1_MS
        .iter()
        .find(|(l, _)| *l == listing)
        .map(|(_, ms)| *ms)
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Table1Figure {
    frame: Frame,
    categories: Vec<String>,
    /// Per series, a bar or none per category, its text a published figure as printed ("9.6").
    series: Vec<Vec<Option<HBar>>>,
}

pub(crate) fn figures(data: &ChartData) -> Vec<(String, Table1Figure)> {
    let rows = data.measurements.iter().filter(|r| {
        (r.study == STUDY || r.study == FORMER_STUDY)
            && r.status == Status::Ok
            && r.sweep_param.is_empty()
            && r.median_s.is_finite()
            && r.median_s > 0.0
    });
    group_in_order(rows, |r| r.run_id.clone())
        .into_iter()
        .take(MAX_FIGURES_PER_CHART)
        .map(|(_, rows)| {
            let name = run_slug(&rows[0].study, rows.iter().map(|r| r.comparison.as_str()));
            (name, build(&rows))
        })
        .collect()
}

fn build(rows: &[&MeasurementRow]) -> Table1Figure {
    let mut variants = distinct(rows.iter().map(|r| &r.variant));
    let devices = distinct(rows.iter().map(|r| &r.device));
    let sizes = distinct(rows.iter().map(|r| &r.size));
    let shapes = distinct(
        rows.iter()
            .map(|r| format!("{}×{}", r.local_size, r.groups)),
    );
    // Listings in numeric order; anything not named like a listing after them.
    variants.sort_by_key(|v| (listing_number(v).unwrap_or(u32::MAX), v.clone()));
    let categories = variants
        .iter()
        .map(|v| match listing_number(v) {
            Some(n) => format!("Listing {n}"),
            None => v.clone(),
        })
        .collect();

    let mut keys: Vec<(Api, String)> = unique(rows.iter().map(|r| (r.api, r.device.clone())));
    keys.sort_by_key(|(api, dev)| (devices.iter().position(|d| d == dev), *api));

    let mut series = Vec::new();
    let mut legend = Vec::new();
    for (api, dev) in &keys {
        let st = style::api_style(*api);
        let dev_index = devices.iter().position(|d| d == dev).unwrap_or(0);
        // A second GPU keeps the API colour but is hatched, so the two stay apart in grey.
        let hatch = (dev_index > 0).then_some(style::OUTLINE);
        let bars = variants
            .iter()
            .map(|v| {
                rows.iter()
                    .find(|r| r.api == *api && r.device == *dev && r.variant == *v)
                    .map(|r| HBar {
                        ci: (r.ci_lo_s.is_finite()
                            && r.ci_hi_s.is_finite()
                            && r.ci_lo_s > 0.0
                            && r.ci_lo_s <= r.ci_hi_s)
                            .then_some((r.ci_lo_s * 1e3, r.ci_hi_s * 1e3)),
                        hatch,
                        ..HBar::of_api(*api, r.median_s * 1e3, fmt_sig(r.median_s * 1e3))
                    })
            })
            .collect();
        series.push(bars);
        legend.push(LegendItem::new(
            format!("{api} on {dev} (this run)"),
            Swatch::fill(st.color, hatch),
        ));
    }
    let reference: Vec<Option<HBar>> = variants
        .iter()
        .map(|v| {
            listing_number(v).and_then(whitepaper_ms).map(|ms| HBar {
                value: ms,
                ci: None,
                color: style::REFERENCE_FILL,
                hatch: Some(style::REFERENCE_HATCH),
                text: Some(ms.to_string()),
            })
        })
        .collect();
    if reference.iter().any(Option::is_some) {
        series.push(reference);
        legend.push(LegendItem::new(
            WHITEPAPER_LABEL,
            Swatch::fill(style::REFERENCE_FILL, Some(style::REFERENCE_HATCH)),
        ));
    }
    legend.push(LegendItem::new("CI of the median time", Swatch::Whisker));

    Table1Figure {
        frame: Frame {
            title: style::title(
                "Whitepaper Table 1: MatrixVectorMul time per listing",
                &format!("size {}", sizes.join(", ")),
            ),
            subtitle: run_subtitle(rows.iter().copied()),
            legend,
            notes: vec![
                format!(
                    "This run: median kernel time per matvec, work-group size × groups: {}.",
                    shapes.join(", ")
                ),
                WHITEPAPER_NOTE.to_string(),
            ],
        },
        categories,
        series,
    }
}

impl Figure for Table1Figure {
    fn size(&self) -> (u32, u32) {
        self.frame.size_with_plot(520, style::HEIGHT)
    }

    fn paint<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), DrawError> {
        let plot_area = self.frame.draw(root, style::MARGIN / 2)?;

        let (mut lo, mut hi) = (f64::INFINITY, 0f64);
        for b in self.series.iter().flatten().flatten() {
            let (l, h) = b.ci.unwrap_or((b.value, b.value));
            lo = lo.min(b.value).min(l);
            hi = hi.max(b.value).max(h);
        }
        if !(lo.is_finite() && hi.is_finite() && lo > 0.0 && hi >= lo) {
            (lo, hi) = (1.0, 10.0);
        }
        // Bars grow from just below a whole decade, so the axis base is labelled (exactly 10^k
        // may round out of the range); the top leaves room for the tallest bar's value label.
        let decade_below = |x: f64| 10f64.powf((x / 1.5).log10().floor()) * 0.999;
        let y_hi = (hi * 1.6).min(f64::MAX);
        // At most 12 decades below the top: a hand-edited CSV's 5e-324 s or 1e308 s would
        // underflow the bottom or overflow the bounds' ratio, where plotters' ticks never end.
        let y_lo = decade_below(lo).max(decade_below(y_hi * 1e-12));
        let (y_lo, y_hi) = if y_lo > 0.0 && y_lo < y_hi {
            (y_lo, y_hi)
        } else {
            (decade_below(1.0), 16.0)
        };
        let n = self.categories.len().max(1);

        let mut chart = ChartBuilder::on(&plot_area)
            .margin_left(style::MARGIN)
            .margin_right(style::MARGIN * 2)
            .margin_top(style::MARGIN)
            .x_label_area_size(style::X_AXIS_AREA + 8)
            .y_label_area_size(90)
            .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), (y_lo..y_hi).log_scale())?;
        chart
            .configure_mesh()
            .house_style()
            .disable_x_mesh()
            .x_labels(0)
            .y_labels(12)
            .y_label_formatter(&super::fmt_tick)
            .x_desc("MatrixVectorMul implementation (whitepaper listing)")
            .y_desc("Time per matvec (ms, log scale)")
            .max_light_lines(style::MAX_LIGHT_LINES + 3)
            .draw()?;

        let k = self.series.len().max(1);
        let slot = style::BAR_FILL / k as f64;
        let value_font = style::anchored(style::VALUE_PX, HPos::Center, VPos::Bottom);
        for (s, bars) in self.series.iter().enumerate() {
            for (i, bar) in bars.iter().enumerate() {
                let Some(bar) = bar else { continue };
                let x0 = i as f64 - style::BAR_FILL / 2.0 + s as f64 * slot;
                let x1 = x0 + slot;
                let a = chart.backend_coord(&(x0, y_lo));
                let b = chart.backend_coord(&(x1, bar.value.clamp(y_lo, y_hi)));
                let (a1, b1) = ((a.0 + 1, a.1), (b.0 - 1, b.1));
                layout::filled_box(root, a1, b1, bar.color, bar.hatch)?;
                let cx = (a.0 + b.0) / 2;
                let mut top = b.1;
                if let Some((l, h)) = bar.ci {
                    let (_, yl) = chart.backend_coord(&(0.0, l.clamp(y_lo, y_hi)));
                    let (_, yh) = chart.backend_coord(&(0.0, h.clamp(y_lo, y_hi)));
                    let st = style::WHISKER.stroke_width(1);
                    layout::whisker(root, (cx, yl), (cx, yh), (5, 0), st)?;
                    top = top.min(yh);
                }
                let text = bar.text.clone().unwrap_or_default();
                root.draw(&Text::new(text, (cx, top - 3), value_font.clone()))?;
            }
        }
        let label_font = style::anchored(style::TICK_PX, HPos::Center, VPos::Top);
        for (i, label) in self.categories.iter().enumerate() {
            let (x, y) = chart.backend_coord(&(i as f64, y_lo));
            root.draw(&Text::new(label.clone(), (x, y + 8), label_font.clone()))?;
        }
        Ok(())
    }
}
