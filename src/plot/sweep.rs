//! Sweep chart: the metric against the swept parameter, one line per API (and device) with its
//! CI as a shaded band. The x axis is log2 for powers of two, linear for other numbers and
//! categorical otherwise (`A=4;B=none`), so no sweep is ever refused.

use std::collections::{HashMap, HashSet};

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::layout::{self, Frame, LegendItem, Swatch};
use super::style::{self, HouseMesh, Marker};
use super::{
    distinct, group_in_order, run_subtitle, slug, unique, ChartData, DrawError, Figure,
    MAX_FIGURES_PER_CHART,
};
use crate::rows::{Api, FamilyId, MeasurementRow, Metric, Status};

#[derive(Debug, Clone, PartialEq)]
enum XAxis {
    /// x = log2(value); every value is a power of two.
    Log2,
    /// x = value.
    Linear,
    /// x = index into these labels, in first-seen order.
    Categorical(Vec<String>),
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Point {
    x: f64,
    y: f64,
    lo: f64,
    hi: f64,
}

#[derive(Debug, Clone, PartialEq)]
struct Series {
    label: String,
    color: RGBColor,
    marker: Marker,
    dashed: bool,
    points: Vec<Point>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SweepFigure {
    frame: Frame,
    x_axis: XAxis,
    /// x over every point, y from 0 to above every median and CI bound.
    x: (f64, f64),
    y_hi: f64,
    x_desc: String,
    y_desc: String,
    series: Vec<Series>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    run_id: String,
    study: String,
    family: FamilyId,
    variant: String,
    param: String,
}

/// A sweep figure's rows by what tells figures apart: run, study, family, variant, swept
/// parameter and, for a sweep over something else, the fixed size; ok points with a metric
/// only. The chart and its "left out" count both read this.
pub(crate) fn groups(data: &ChartData) -> Vec<((Key, String), Vec<&MeasurementRow>)> {
    let points = data
        .measurements
        .iter()
        .filter(|r| !r.sweep_param.is_empty() && r.status == Status::Ok && r.metric.is_finite());
    group_in_order(points, |r| {
        let key = Key {
            run_id: r.run_id.clone(),
            study: r.study.clone(),
            family: r.family,
            variant: r.variant.clone(),
            param: r.sweep_param.clone(),
        };
        // The fixed problem size of a sweep over something else; empty for size sweeps.
        let size = if r.sweep_param == "size" { "" } else { &r.size };
        (key, size.to_string())
    })
}

pub(crate) fn figures(data: &ChartData) -> Vec<(String, SweepFigure)> {
    let mut groups = groups(data);
    let runs = distinct(groups.iter().map(|((k, _), _)| &k.run_id));
    groups.truncate(MAX_FIGURES_PER_CHART);
    let slugs: Vec<String> = groups
        .iter()
        .map(|((k, size), _)| {
            let mut parts = vec![k.study.as_str(), k.family.name(), &k.variant, &k.param];
            // Name the size or the run only where it is needed to tell two charts apart.
            if groups.iter().filter(|((o, _), _)| o == k).count() > 1 {
                parts.push(size);
            }
            if runs.len() > 1 {
                parts.push(&k.run_id);
            }
            slug(&parts.join("-"))
        })
        .collect();
    groups
        .into_iter()
        .zip(slugs)
        .map(|(((key, size), rows), s)| (s, build(&key, &size, &rows)))
        .collect()
}

fn build(key: &Key, size: &str, rows: &[&MeasurementRow]) -> SweepFigure {
    let x_axis = x_axis_for(rows.iter().map(|r| r.sweep_value.as_str()));
    let x_of = x_lookup(&x_axis);
    let devices = distinct(rows.iter().map(|r| &r.device));
    let sides = side_of_each(rows);
    let mut keys: Vec<(usize, Api, String)> = unique(
        rows.iter()
            .zip(&sides)
            .map(|(r, side)| (*side, r.api, r.device.clone())),
    );
    keys.sort_by_key(|(side, api, dev)| (devices.iter().position(|d| d == dev), *api, *side));
    // A same-API pair on one device has two series with one API and device: name the side.
    let shared = |api: Api, dev: &str| {
        keys.iter()
            .filter(|(_, a, d)| *a == api && d == dev)
            .count()
            > 1
    };
    let mut series: Vec<Series> = keys
        .iter()
        .map(|(side, api, dev)| {
            let dev_index = devices.iter().position(|d| d == dev).unwrap_or(0);
            let st = style::api_style(*api);
            let mut points: Vec<Point> = Vec::new();
            let mut seen = HashSet::new();
            let mine = rows
                .iter()
                .zip(&sides)
                .filter(|(r, s)| r.api == *api && r.device == *dev && *s == side);
            for (r, _) in mine {
                let Some(x) = x_of(&r.sweep_value) else {
                    continue;
                };
                // A repeated sweep value keeps its first measurement: one point per x.
                if !seen.insert(x.to_bits()) {
                    continue;
                }
                let (lo, hi) = ci_of(r);
                points.push(Point {
                    x,
                    y: r.metric,
                    lo,
                    hi,
                });
            }
            points.sort_by(|a, b| a.x.total_cmp(&b.x));
            let mut label = if devices.len() > 1 {
                format!("{api} · {dev}")
            } else {
                api.to_string()
            };
            let second_of_two = shared(*api, dev) && *side > 0;
            if shared(*api, dev) {
                label.push_str(if *side == 0 { " side A" } else { " side B" });
            }
            // Side B of a same-API pair is grey and dashed so both lines stay visible.
            let (color, marker) = if second_of_two {
                (style::OTHER_API, Marker::Square)
            } else {
                (st.color, style::device_marker(*api, dev_index))
            };
            Series {
                label,
                color,
                marker,
                dashed: st.dashed || second_of_two,
                points,
            }
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    drop(x_of); // it borrows the axis, which the figure takes below

    let mut legend: Vec<LegendItem> = series
        .iter()
        .map(|s| {
            LegendItem::new(
                format!("{} (median)", s.label),
                Swatch::Line {
                    color: s.color,
                    dashed: s.dashed,
                    marker: Some(s.marker),
                    band: true,
                },
            )
        })
        .collect();
    legend.push(LegendItem::new(
        "shaded: CI of the median",
        Swatch::Band {
            color: style::OTHER_API,
            alpha: style::CI_BAND_ALPHA,
        },
    ));

    let unit = rows.first().map_or(Metric::Bandwidth, |r| r.metric_unit);
    let scale = match x_axis {
        XAxis::Log2 => ", log2 scale",
        XAxis::Linear | XAxis::Categorical(_) => "",
    };
    let mut subject = format!("{}/{} over {}", key.family, key.variant, key.param);
    if !size.is_empty() {
        subject.push_str(&format!(" (size {size})"));
    }
    subject.push_str(&format!(", study {}", key.study));
    let (x, y_hi) = axes_for(&x_axis, &series);
    let mut notes = vec![format!(
        "Lines join the median {} at each {} value; shaded bands span the metric at the CI \
         bounds of the median time.",
        metric_name(unit).to_lowercase(),
        key.param
    )];
    // Points moved onto the edge of the plot: their place is not their value.
    let moved = pin_all(&mut series, x, y_hi);
    if moved > 0 {
        notes.push(format!(
            "{moved} point(s) beyond what the axes can show (below 0, or too far out to plot) \
             are drawn at the edge of the plot."
        ));
    }
    SweepFigure {
        frame: Frame {
            title: style::title("Sweep", &subject),
            subtitle: run_subtitle(rows.iter().copied()),
            legend,
            notes,
        },
        x_desc: format!("{} ({}{scale})", key.param, param_unit(&key.param)),
        y_desc: format!("{} ({unit})", metric_name(unit)),
        x_axis,
        x,
        y_hi,
        series,
    }
}

/// Each row's side, 0 (A) or 1 (B): a run writes side A of a (comparison, sweep value) first.
/// The API alone cannot tell the sides of an OpenCL-against-OpenCL pair apart.
fn side_of_each(rows: &[&MeasurementRow]) -> Vec<usize> {
    let mut seen: HashMap<(&str, &str, &str), usize> = HashMap::new();
    rows.iter()
        .map(|r| {
            let n = seen
                .entry((
                    r.run_id.as_str(),
                    r.comparison.as_str(),
                    r.sweep_value.as_str(),
                ))
                .or_insert(0);
            *n += 1;
            (*n - 1).min(1)
        })
        .collect()
}

/// The axes over every point. Values near f64::MAX (a hand-edited CSV) can make the padded x
/// span infinite, where plotters' tick search never ends: x then falls back to the unpadded
/// range, then to a unit one ([`pin_all`] pins the points off it).
fn axes_for(x_axis: &XAxis, series: &[Series]) -> ((f64, f64), f64) {
    let all = series.iter().flat_map(|s| s.points.iter());
    let (mut x_lo, mut x_hi, mut y_hi) = (f64::INFINITY, f64::NEG_INFINITY, 0f64);
    for p in all {
        x_lo = x_lo.min(p.x);
        x_hi = x_hi.max(p.x);
        y_hi = y_hi.max(p.hi).max(p.y);
    }
    if !x_lo.is_finite() || !x_hi.is_finite() {
        (x_lo, x_hi) = (0.0, 1.0);
    }
    let pad = match x_axis {
        XAxis::Linear => ((x_hi - x_lo) * 0.04).max(0.5),
        XAxis::Log2 => 0.3,
        XAxis::Categorical(_) => 0.5,
    };
    let x = [(x_lo - pad, x_hi + pad), (x_lo, x_hi)]
        .into_iter()
        // A finite span has finite bounds: what plotters can lay out.
        .find(|&(lo, hi)| (hi - lo).is_finite() && lo < hi)
        .unwrap_or((0.0, 1.0));
    (x, super::axis_top(y_hi, 1.08))
}

/// Moves every point and CI bound off the axes onto their edge; returns the points moved.
/// plotters' pixel (a saturating `as i32` plus the origin) overflows far off the axis (a metric
/// of -1e308): a debug build panicked, a release build drew the point off canvas.
fn pin_all(series: &mut [Series], (x_lo, x_hi): (f64, f64), y_hi: f64) -> usize {
    let on_y = |v: f64| v.clamp(0.0, y_hi);
    let mut moved = 0;
    for p in series.iter_mut().flat_map(|s| s.points.iter_mut()) {
        let pinned = Point {
            x: p.x.clamp(x_lo, x_hi),
            y: on_y(p.y),
            lo: on_y(p.lo),
            hi: on_y(p.hi),
        };
        if pinned != *p {
            moved += 1;
            *p = pinned;
        }
    }
    moved
}

/// The metric's CI, or the median itself when the CI is unusable.
fn ci_of(r: &MeasurementRow) -> (f64, f64) {
    let (lo, hi) = (
        r.metric_ci_lo.min(r.metric_ci_hi),
        r.metric_ci_lo.max(r.metric_ci_hi),
    );
    if lo.is_finite() && hi.is_finite() {
        (lo, hi)
    } else {
        (r.metric, r.metric)
    }
}

/// The axis of a sweep's values, in first-seen order; a set of the values seen keeps 100,000
/// rows linear.
fn x_axis_for<'a>(values: impl Iterator<Item = &'a str>) -> XAxis {
    let mut labels: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    for v in values.map(str::trim) {
        if !v.is_empty() && seen.insert(v) {
            labels.push(v.to_string());
        }
    }
    let nums: Vec<f64> = labels
        .iter()
        .filter_map(|v| number(v))
        .filter(|v| v.is_finite())
        .collect();
    if nums.len() != labels.len() || labels.is_empty() {
        return XAxis::Categorical(labels);
    }
    let pow2 = nums
        .iter()
        .all(|&v| v >= 1.0 && v.fract() == 0.0 && (v as u64).is_power_of_two());
    if pow2 && nums.len() > 1 {
        XAxis::Log2
    } else {
        XAxis::Linear
    }
}

/// A sweep value as a number: `4096`, or `2^12` as a command-line range writes sizes.
fn number(value: &str) -> Option<f64> {
    match value.strip_prefix("2^") {
        Some(k) => k.parse::<i32>().ok().map(|k| 2f64.powi(k)),
        None => value.parse::<f64>().ok(),
    }
}

/// The x position of a sweep value on `axis`; a categorical axis indexes its labels once.
fn x_lookup(axis: &XAxis) -> impl Fn(&str) -> Option<f64> + '_ {
    let index: HashMap<&str, usize> = match axis {
        XAxis::Categorical(labels) => labels
            .iter()
            .enumerate()
            .map(|(i, l)| (l.as_str(), i))
            .collect(),
        _ => HashMap::new(),
    };
    move |value| {
        let value = value.trim();
        match axis {
            XAxis::Log2 => number(value).map(f64::log2),
            XAxis::Linear => number(value),
            XAxis::Categorical(_) => index.get(value).map(|&i| i as f64),
        }
    }
}

/// What the swept quantity counts, for the axis description.
fn param_unit(param: &str) -> &'static str {
    match param {
        // The study's sweep key is `local`; older rows and hand-made ones say `local_size`.
        "local" | "local_size" => "work-items per work-group",
        "local_y" => "work-items per work-group in y",
        "groups" => "work-groups",
        "size" => "elements",
        "unroll" => "unroll factors",
        "index" => "index type",
        p if p.starts_with("unroll.") => "unroll factor",
        _ => "value",
    }
}

fn metric_name(metric: Metric) -> &'static str {
    match metric {
        Metric::Bandwidth => "Bandwidth",
        Metric::Flops | Metric::Evaluations | Metric::Reads => "Throughput",
        Metric::Rate => "Performance",
        Metric::Teps => "Traversal rate",
    }
}

/// Tick label of a log2 axis position: the power of two, exact, as `2^k` when large.
fn pow2_label(x: f64, use_exponent: bool) -> String {
    if (x - x.round()).abs() > 1e-6 || !(0.0..=62.0).contains(&x.round()) {
        return String::new();
    }
    let k = x.round() as u32;
    if use_exponent {
        format!("2^{k}")
    } else {
        (1u64 << k).to_string()
    }
}

impl Figure for SweepFigure {
    fn size(&self) -> (u32, u32) {
        self.frame.size_with_plot(520, style::HEIGHT)
    }

    fn paint<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), DrawError> {
        let plot_area = self.frame.draw(root, style::MARGIN / 2)?;

        let ((x_lo, x_hi), y_hi) = (self.x, self.y_hi);

        let exponent = x_hi > 16.5; // beyond 2^16 exact integers get too long to read
        let log2_fmt = |x: &f64| pow2_label(*x, exponent);
        let mut chart = layout::line_chart(&plot_area, (x_lo, x_hi), y_hi)?;
        {
            let mut mesh = chart.configure_mesh();
            mesh.house_style()
                .x_desc(self.x_desc.as_str())
                .y_desc(self.y_desc.as_str())
                .max_light_lines(style::MAX_LIGHT_LINES)
                .y_label_formatter(&super::fmt_tick)
                .y_labels(8);
            match &self.x_axis {
                XAxis::Log2 => {
                    let steps = (x_hi - x_lo).ceil() as usize + 1;
                    mesh.x_labels(steps.min(14)).x_label_formatter(&log2_fmt);
                }
                XAxis::Linear => {
                    mesh.x_labels(10).x_label_formatter(&super::fmt_tick);
                }
                XAxis::Categorical(_) => {
                    mesh.x_labels(0).disable_x_mesh();
                }
            }
            mesh.draw()?;
        }

        for s in &self.series {
            if s.points.len() > 1 {
                let band: Vec<(f64, f64)> = s
                    .points
                    .iter()
                    .map(|p| (p.x, p.hi))
                    .chain(s.points.iter().rev().map(|p| (p.x, p.lo)))
                    .collect();
                chart.draw_series(std::iter::once(Polygon::new(
                    band,
                    s.color.mix(style::CI_BAND_ALPHA).filled(),
                )))?;
            } else if let Some(p) = s.points.first() {
                let (a, b) = (
                    chart.backend_coord(&(p.x, p.lo)),
                    chart.backend_coord(&(p.x, p.hi)),
                );
                root.draw(&Rectangle::new(
                    [(a.0 - 6, a.1), (b.0 + 6, b.1)],
                    s.color.mix(style::CI_BAND_ALPHA).filled(),
                ))?;
            }
        }
        for s in &self.series {
            let pts = s.points.iter().map(|p| (p.x, p.y));
            layout::draw_line(&mut chart, pts, s.color.stroke_width(2), s.dashed)?;
        }
        for s in &self.series {
            for p in &s.points {
                let px = chart.backend_coord(&(p.x, p.y));
                layout::draw_marker(root, px, s.marker, s.color)?;
            }
        }

        if let XAxis::Categorical(labels) = &self.x_axis {
            let max_w = {
                let (l, _) = chart.backend_coord(&(0.0, 0.0));
                let (r, _) = chart.backend_coord(&(1.0, 0.0));
                (r - l).unsigned_abs().saturating_sub(6)
            };
            let font = style::anchored(style::TICK_PX, HPos::Center, VPos::Top);
            for (i, label) in labels.iter().enumerate() {
                let (x, y) = chart.backend_coord(&(i as f64, 0.0));
                let text = layout::fit_text(root, label, style::TICK_PX, max_w)?;
                root.draw_text(&text, &font, (x, y + 8))?;
            }
        }
        Ok(())
    }
}
