//! Constant-memory chart, in the style of the paper's Fig. 8 (Sobel with and without constant
//! memory): for one image size, each placement of the filter's performance relative to the
//! constant-memory version of the same API (1 = as fast as it, higher is faster), one bar per
//! API; and the PR (OpenCL / CUDA) before (the paper's pair: constant memory on the OpenCL
//! side only) and after (each fair placement).
//!
//! It is drawn for every (run, study, size) whose sobel rows hold a fair constant-memory
//! comparison: that comparison is the baseline of each API, and the footnote names it.
//! Performance, not time, because the family's metric (GB/s) is what the study reports; the
//! ratio of metrics is the inverse of the ratio of times.

use super::layout::{self, Frame, HBar, HBarPanel, HBarRow, LegendItem, Swatch};
use super::{fmt_sig, group_in_order, push_api, slug, style, ChartData, RunInfo};
use crate::record::{Api, MeasurementRow, PrRow, Status};
use crate::workload::FamilyKind;

chart_kind!(
    /// The constant-memory chart; one file per (run, study, image size) with a fair
    /// constant-memory Sobel.
    ConstantChart, "constant", |data: &ChartData| !figures(data).is_empty());

/// The variant whose filter is in constant memory.
const CONSTANT: &str = "constant";

fn usable(r: &MeasurementRow) -> bool {
    r.family == FamilyKind::Sobel
        && r.status == Status::Ok
        && r.sweep_param.is_empty()
        && r.metric.is_finite()
        && r.metric > 0.0
}

/// Both sides of `comparison` run the constant variant.
fn fair_constant(rows: &[&MeasurementRow], comparison: &str) -> bool {
    let sides: Vec<_> = rows.iter().filter(|r| r.comparison == comparison).collect();
    sides.len() == 2 && sides.iter().all(|r| r.variant == CONSTANT)
}

/// Each API's constant-memory row of a fair constant comparison.
fn baselines<'a>(rows: &[&'a MeasurementRow]) -> Vec<&'a MeasurementRow> {
    let Some(first) = rows
        .iter()
        .find(|r| r.variant == CONSTANT && fair_constant(rows, &r.comparison))
    else {
        return Vec::new();
    };
    rows.iter()
        .filter(|r| r.comparison == first.comparison)
        .copied()
        .collect()
}

/// A laid-out constant-memory chart.
pub(crate) type ConstantFigure = layout::HBarFigure;

/// Builds one figure per (run, study, size) with a fair constant-memory Sobel.
pub(crate) fn figures(data: &ChartData) -> Vec<(String, ConstantFigure)> {
    let rows = data.measurements.iter().filter(|r| usable(r));
    let groups = group_in_order(rows, |r| {
        (r.run_id.clone(), r.study.clone(), r.size.clone())
    });
    let mut out = Vec::new();
    for ((run_id, study, size), rows) in groups {
        let base = baselines(&rows);
        if base.is_empty() {
            continue;
        }
        let prs: Vec<&PrRow> = data
            .prs
            .iter()
            .filter(|p| p.run_id == run_id && p.study == study && p.size == size)
            .filter(|p| rows.iter().any(|r| r.comparison == p.comparison))
            .collect();
        let name = slug(&format!("{study}-sobel-{size}"));
        let subject = format!("sobel {size}, study {study}");
        out.push((name, build(data, &run_id, &subject, &base, &rows, &prs)));
    }
    out
}

fn relative_bar(r: &MeasurementRow, base: f64) -> HBar {
    let st = style::api_style(r.api);
    let value = r.metric / base;
    HBar {
        value,
        ci: None,
        color: st.color,
        hatch: st.hatch,
        text: Some(format!("{} ({})", fmt_sig(value), r.variant)),
    }
}

fn relative_panel(base: &[&MeasurementRow], rows: &[&MeasurementRow], apis: &[Api]) -> HBarPanel {
    let comparisons = group_in_order(rows.iter().copied(), |r| r.comparison.clone());
    let hrows: Vec<HBarRow> = comparisons
        .iter()
        .map(|(name, rs)| HBarRow {
            label: name.clone(),
            bars: apis
                .iter()
                .map(|a| {
                    let b = base.iter().find(|b| b.api == *a)?;
                    rs.iter()
                        .find(|r| r.api == *a)
                        .map(|r| relative_bar(r, b.metric))
                })
                .collect(),
            annotation: None,
        })
        .collect();
    let values = hrows
        .iter()
        .flat_map(|r| r.bars.iter().flatten().map(|b| b.value));
    HBarPanel {
        caption: "Relative to the same API's constant version".into(),
        x_desc: "GB/s / GB/s of the constant-memory version".into(),
        x_max: layout::axis_max(values, 1.2),
        slots: apis.len(),
        rows: hrows,
        band: None,
        ref_line: Some(1.0),
    }
}

/// PR rows in the order of the first panel's (the panels share the row labels): hatched for
/// before (unfair: constant memory on one side only), solid for after (fair).
fn pr_panel(rows: &[&MeasurementRow], prs: &[&PrRow]) -> HBarPanel {
    let comparisons = group_in_order(rows.iter().copied(), |r| r.comparison.clone());
    let hrows: Vec<HBarRow> = comparisons
        .iter()
        .map(|(name, _)| {
            let bar = prs
                .iter()
                .find(|p| &p.comparison == name && p.pr.is_finite() && p.pr >= 0.0)
                .map(|p| {
                    let (color, hatch, when) = if p.fair {
                        (style::FAIR, None, "after")
                    } else {
                        (style::UNFAIR_FILL, Some(style::UNFAIR_HATCH), "before")
                    };
                    HBar {
                        value: p.pr,
                        ci: (p.pr_ci_lo <= p.pr_ci_hi).then_some((p.pr_ci_lo, p.pr_ci_hi)),
                        color,
                        hatch,
                        text: Some(format!("{} ({when})", fmt_sig(p.pr))),
                    }
                });
            HBarRow {
                label: name.clone(),
                bars: vec![bar],
                annotation: None,
            }
        })
        .collect();
    let values = hrows.iter().flat_map(|r| {
        r.bars
            .iter()
            .flatten()
            .map(|b| b.ci.map_or(b.value, |c| c.1))
    });
    HBarPanel {
        caption: "PR = OpenCL / CUDA (hatched: before)".into(),
        x_desc: "PR (OpenCL / CUDA performance)".into(),
        x_max: layout::axis_max(values, 1.2),
        slots: 1,
        rows: hrows,
        band: Some((0.95, 1.05)),
        ref_line: Some(1.0),
    }
}

fn build(
    data: &ChartData,
    run_id: &str,
    subject: &str,
    base: &[&MeasurementRow],
    rows: &[&MeasurementRow],
    prs: &[&PrRow],
) -> ConstantFigure {
    let mut apis: Vec<Api> = Vec::new();
    for r in rows {
        push_api(&mut apis, r.api);
    }
    apis.sort();
    let mut panels = vec![relative_panel(base, rows, &apis)];
    if !prs.is_empty() {
        panels.push(pr_panel(rows, prs));
    }
    let baseline_text: Vec<String> = base
        .iter()
        .map(|b| format!("{} {} GB/s", b.api, fmt_sig(b.metric)))
        .collect();
    let notes = vec![
        format!(
            "Left: GB/s over each API's side of {} ({}). Right: PR, hatched = before.",
            base[0].comparison,
            baseline_text.join(", ")
        ),
        "Paper (Fang et al. 2011, Figs. 3 and 8; GTX 280 / GTX 480): PR 3.2 / 0.83 with \
         constant memory on the OpenCL side only; without it, the two APIs performed alike."
            .to_string(),
    ];
    let mut legend: Vec<LegendItem> = layout::api_legend(&apis, |a| a.to_string());
    legend.push(LegendItem::new(
        "1 = constant-memory version / PR 1",
        Swatch::RefLine,
    ));
    let info = RunInfo::from_measurements(
        data.measurements
            .iter()
            .filter(|m| m.run_id == run_id && rows.iter().any(|r| r.device == m.device)),
    );
    layout::HBarFigure::new(
        Frame {
            title: style::title("Constant memory: performance relative to it", subject),
            subtitle: info.subtitle(),
            legend,
            notes,
        },
        panels,
    )
}
