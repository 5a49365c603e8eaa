//! The paper's "relative to the reference version, PR before and after" figure (Figs. 4, 5
//! and 8), shared by the constant-memory and texture charts. Left: each row's performance over
//! the same API's reference version of the same algorithm (the variant of a fair comparison in
//! which both sides read through the reference's space). Right: the PR of each row's comparison,
//! hatched before (the reference's space on one side only), solid after (fair). Performance, not
//! time, because the family's metric is what the studies report.

use super::hbar::{self, HBar, HBarPanel, HBarRow};
use super::layout::{self, Frame, LegendItem, Swatch};
use super::{fmt_sig, group_in_order, run_subtitle, sorted_apis, style, ChartData};
use crate::rows::{Api, Catalog, MeasurementRow, PrRow, Status};

/// What makes one chart kind of this figure.
pub(crate) struct Reference {
    /// The reference, in words: "constant-memory", "texture".
    pub name: &'static str,
    /// Whether a variant reads through the reference's memory space.
    pub is_reference: fn(&str) -> bool,
    /// The title's first part.
    pub title: &'static str,
    /// The paper's numbers for this case, quoted from [`crate::paper`].
    pub paper: &'static crate::paper::Quote,
}

/// Both sides of `comparison` read through the reference space.
fn fair_reference(spec: &Reference, rows: &[&MeasurementRow], comparison: &str) -> bool {
    let sides: Vec<_> = rows.iter().filter(|r| r.comparison == comparison).collect();
    sides.len() == 2 && sides.iter().all(|r| (spec.is_reference)(&r.variant))
}

/// The reference row of `r`: the same API and algorithm, from the first fair reference
/// comparison among `rows`.
pub(crate) fn reference_of<'a>(
    catalog: &Catalog,
    spec: &Reference,
    rows: &[&'a MeasurementRow],
    r: &MeasurementRow,
) -> Option<&'a MeasurementRow> {
    let algo = catalog.algorithm(r.family, &r.variant);
    rows.iter()
        .find(|x| {
            x.api == r.api
                && (spec.is_reference)(&x.variant)
                && catalog.algorithm(x.family, &x.variant) == algo
                && fair_reference(spec, rows, &x.comparison)
        })
        .copied()
}

/// Whether `rows` hold at least one fair reference comparison: the figure has a baseline.
pub(crate) fn has_reference(spec: &Reference, rows: &[&MeasurementRow]) -> bool {
    rows.iter()
        .any(|r| (spec.is_reference)(&r.variant) && fair_reference(spec, rows, &r.comparison))
}

/// The rows the chart `chart` reads: of the families it draws, measured, not swept, with a
/// positive metric.
pub(crate) fn usable(catalog: &Catalog, chart: &str, r: &MeasurementRow) -> bool {
    catalog.drawn_in(chart, r.family)
        && r.status == Status::Ok
        && r.sweep_param.is_empty()
        && r.metric.is_finite()
        && r.metric > 0.0
}

fn relative_bar(r: &MeasurementRow, base: f64) -> HBar {
    let value = r.metric / base;
    HBar::of_api(r.api, value, format!("{} ({})", fmt_sig(value), r.variant))
}

fn relative_panel(
    catalog: &Catalog,
    spec: &Reference,
    rows: &[&MeasurementRow],
    apis: &[Api],
) -> HBarPanel {
    let hrows = hbar::comparison_rows(rows, apis, |r| {
        Some(relative_bar(
            r,
            reference_of(catalog, spec, rows, r)?.metric,
        ))
    });
    HBarPanel {
        caption: format!("Relative to the same API's {} version", spec.name),
        x_desc: format!("performance / performance of the {} version", spec.name),
        x_max: hbar::rows_axis_max(&hrows, 1.2),
        rows: hrows,
        band: None,
        ref_line: Some(1.0),
    }
}

/// PR rows in the order of the first panel's (the panels share the row labels): hatched for
/// before (unfair: the reference space on one side only), solid for after (fair).
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
            HBarRow::new(name.clone(), vec![bar])
        })
        .collect();
    HBarPanel {
        caption: "PR = OpenCL / CUDA (hatched: before)".into(),
        x_desc: "PR (OpenCL / CUDA performance)".into(),
        x_max: hbar::rows_axis_max(&hrows, 1.2),
        rows: hrows,
        band: Some(super::pr::SIMILAR_BAND),
        ref_line: Some(1.0),
    }
}

/// The references' own numbers, for the footnote: `scalar-tex: OpenCL 12.3, CUDA 12.5 GFLOP/s`.
fn reference_text(spec: &Reference, rows: &[&MeasurementRow]) -> String {
    let refs = rows
        .iter()
        .filter(|r| (spec.is_reference)(&r.variant) && fair_reference(spec, rows, &r.comparison));
    let by_comparison = group_in_order(refs, |r| r.comparison.clone());
    let parts: Vec<String> = by_comparison
        .iter()
        .map(|(name, rs)| {
            let sides: Vec<String> = rs
                .iter()
                .map(|r| format!("{} {}", r.api, fmt_sig(r.metric)))
                .collect();
            let unit = rs
                .first()
                .map(|r| r.metric_unit.to_string())
                .unwrap_or_default();
            format!("{name}: {} {unit}", sides.join(", "))
        })
        .collect();
    parts.join("; ")
}

/// The figure for `rows` (one run, study and input) and their PR rows; `None` without a fair
/// reference comparison (no baseline, no chart).
pub(crate) fn figure(
    spec: &Reference,
    data: &ChartData,
    run_id: &str,
    subject: &str,
    rows: &[&MeasurementRow],
    prs: &[&PrRow],
) -> Option<hbar::HBarFigure> {
    if !has_reference(spec, rows) {
        return None;
    }
    let apis = sorted_apis(rows.iter().map(|r| r.api));
    let mut panels = vec![relative_panel(&data.catalog, spec, rows, &apis)];
    if !prs.is_empty() {
        panels.push(pr_panel(rows, prs));
    }
    let notes = vec![
        format!(
            "Left: performance over each API's side of {}. Right: PR, hatched = before.",
            reference_text(spec, rows)
        ),
        format!(
            "Paper (Fang et al. 2011, {}): {}.",
            spec.paper.place, spec.paper.text
        ),
    ];
    let mut legend: Vec<LegendItem> = layout::api_legend(&apis, |a| a.to_string());
    legend.push(LegendItem::new(
        format!("1 = {} version / PR 1", spec.name),
        Swatch::RefLine,
    ));
    Some(hbar::HBarFigure::new(
        Frame {
            title: style::title(spec.title, subject),
            subtitle: run_subtitle(
                data.measurements
                    .iter()
                    .filter(|m| m.run_id == run_id && rows.iter().any(|r| r.device == m.device)),
            ),
            legend,
            notes,
        },
        panels,
    ))
}

/// The PR rows of `rows`' comparisons in one run and study.
pub(crate) fn prs_of<'a>(
    data: &'a ChartData,
    run_id: &str,
    study: &str,
    rows: &[&MeasurementRow],
) -> Vec<&'a PrRow> {
    data.prs
        .iter()
        .filter(|p| p.run_id == run_id && p.study == study)
        .filter(|p| rows.iter().any(|r| r.comparison == p.comparison))
        .collect()
}
