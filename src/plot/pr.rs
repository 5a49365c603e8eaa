//! PR chart, the paper's Fig. 3: a bar per (study, variant) with its PR and bootstrap CI, the
//! similar band and PR = 1; a panel per device pair, on one axis. Unfair comparisons are hatched,
//! marked `†` and spelled out in footnotes, never passing for fair. Sweeps: the sweep chart.

use plotters::prelude::*;

use super::hbar::{self, HBar, HBarFigure, HBarPanel, HBarRow};
use super::layout::{Frame, LegendItem, Swatch};
use super::{
    distinct, drivers, fmt_sig, group_in_order, push_pages, run_slug, style, ChartData,
    MAX_ROWS_PER_FIGURE,
};
use crate::rows::{Api, MeasurementRow, PrRow};

/// The paper's "similar performance" band of a PR, as [`crate::stats`] defines it.
pub const SIMILAR_BAND: (f64, f64) = (crate::stats::SIMILAR_LO, crate::stats::SIMILAR_HI);

/// The legend entry of the band, "similar: 0.9 ≤ PR ≤ 1.1", shaded in `color` at `alpha`.
pub(crate) fn similar_item(color: RGBColor, alpha: f64) -> LegendItem {
    let label = format!("similar: {} ≤ PR ≤ {}", SIMILAR_BAND.0, SIMILAR_BAND.1);
    LegendItem::new(label, Swatch::Band { color, alpha })
}

/// Right-hand column for "PR [CI]" values, wider when unfair steps must be listed too.
const ANNOT_W_FAIR: u32 = 170;
const ANNOT_W_UNFAIR: u32 = 300;
/// At most this many footnotes detailing unfair comparisons.
const MAX_UNFAIR_NOTES: usize = 8;

/// Builds one figure per run id, named by its study (and comparison, when it has one).
pub(crate) fn figures(data: &ChartData) -> Vec<(String, HBarFigure)> {
    let rows = data.prs.iter().filter(|r| r.sweep_param.is_empty());
    let mut out = Vec::new();
    for (run_id, rows) in group_in_order(rows, |r| r.run_id.clone()) {
        let base = run_slug(&rows[0].study, rows.iter().map(|r| r.comparison.as_str()));
        push_pages(&mut out, &base, &rows, MAX_ROWS_PER_FIGURE, |page| {
            build(data, &run_id, page)
        });
    }
    out
}

fn build(data: &ChartData, run_id: &str, rows: &[&PrRow]) -> HBarFigure {
    let studies = distinct(rows.iter().map(|r| &r.study));
    let devices = distinct(rows.iter().flat_map(|r| [&r.device_a, &r.device_b]));
    let multi_study = studies.len() > 1;
    let any_unfair = rows.iter().any(|r| !r.fair);

    let x_max = hbar::axis_max(
        rows.iter().flat_map(|r| [r.pr, r.pr_ci_hi]),
        SIMILAR_BAND.1 + 0.15,
    );
    let groups = group_in_order(rows.iter().copied(), |r| {
        (r.device_a.clone(), r.device_b.clone())
    });
    let panels: Vec<HBarPanel> = groups
        .iter()
        .map(|((dev_a, dev_b), rows)| panel(dev_a, dev_b, rows, multi_study, x_max))
        .collect();
    let unfair = unfair_notes(&groups, groups.len() > 1, multi_study);

    // Drivers are not in the PR rows: take them from this run's measurements on these GPUs.
    let measured: Vec<&MeasurementRow> = data
        .measurements
        .iter()
        .filter(|m| m.run_id == run_id && devices.contains(&m.device))
        .collect();
    let subtitle = style::subtitle(&devices, &drivers(&measured), &[run_id.to_string()]);

    let (side_a, side_b) = side_names(rows);
    let legend = vec![
        LegendItem::new("fair comparison", Swatch::fill(style::FAIR, None)),
        LegendItem::new(
            "unfair † (differing steps below)",
            Swatch::fill(style::UNFAIR_FILL, Some(style::UNFAIR_HATCH)),
        ),
        LegendItem::new("bootstrap CI", Swatch::Whisker),
        similar_item(style::BAND, style::BAND_ALPHA),
        LegendItem::new(
            format!("PR = 1 (parity; > 1: {side_a} faster)"),
            Swatch::RefLine,
        ),
    ];
    let mut notes = vec![
        "PR from median times of both sides; whisker: bootstrap confidence interval of the PR; \
         values at right: PR [CI low, CI high]."
            .to_string(),
        format!(
            "A comparison counts as similar when its whole CI lies inside {}–{}.",
            SIMILAR_BAND.0, SIMILAR_BAND.1
        ),
    ];
    if !unfair.is_empty() {
        notes.push(
            "† unfair: at least one of the eight fairness steps differs (side A vs side B):"
                .to_string(),
        );
        notes.extend(unfair);
    }
    let annot_w = if any_unfair {
        ANNOT_W_UNFAIR
    } else {
        ANNOT_W_FAIR
    };
    let subject = if studies.is_empty() {
        String::new()
    } else {
        format!("study {}", studies.join(", "))
    };
    HBarFigure::stacked(
        Frame {
            // An OpenCL-vs-OpenCL run is not titled OpenCL / CUDA.
            title: style::title(
                &format!("Performance Ratio {side_a} / {side_b} (PR)"),
                &subject,
            ),
            subtitle,
            legend,
            notes,
        },
        panels,
        annot_w,
    )
}

/// What the two sides are called in titles and legends: the APIs where they differ, else
/// "OpenCL side A" and "OpenCL side B", so a same-API pair never reads "> 1: OpenCL faster".
pub(crate) fn side_names(rows: &[&PrRow]) -> (String, String) {
    let (a, b) = rows
        .first()
        .map_or((Api::OpenCl, Api::Cuda), |r| (r.api_a, r.api_b));
    if a == b {
        (format!("{a} side A"), format!("{b} side B"))
    } else {
        (a.to_string(), b.to_string())
    }
}

fn panel(dev_a: &str, dev_b: &str, rows: &[&PrRow], multi_study: bool, x_max: f64) -> HBarPanel {
    let (api_a, api_b) = side_names(rows);
    let caption = if dev_a == dev_b || dev_b.is_empty() {
        format!("{dev_a}: {api_a} vs {api_b}")
    } else {
        format!("{api_a} on {dev_a} vs {api_b} on {dev_b}")
    };
    let bases: Vec<String> = rows.iter().map(|r| base_label(r, multi_study)).collect();
    let bar_rows = rows
        .iter()
        .zip(&bases)
        .map(|(r, base)| {
            let mut label = base.clone();
            // Two comparisons of one variant (different sizes or shapes) need telling apart.
            if bases.iter().filter(|b| *b == base).count() > 1 {
                label = format!("{label} [{}, ls {}]", r.size, r.local_size);
            }
            if !r.fair {
                label.push_str(" †");
            }
            bar_row(r, label)
        })
        .collect();
    HBarPanel {
        caption,
        x_desc: format!(
            "PR = perf({api_a}) / perf({api_b})   (ratio, no unit; > 1: {api_a} faster)"
        ),
        x_max,
        rows: bar_rows,
        band: Some(SIMILAR_BAND),
        ref_line: Some(1.0),
    }
}

fn base_label(r: &PrRow, multi_study: bool) -> String {
    let kernel = if let Some(picked) = auto_pick(r) {
        format!("{}/auto (picked {picked})", r.family)
    } else if r.variant.starts_with(r.family.name()) {
        r.variant.clone()
    } else {
        format!("{}/{}", r.family, r.variant)
    };
    if multi_study {
        format!("{}: {kernel}", r.study)
    } else {
        kernel
    }
}

/// The variant an `auto` comparison resolved to: its rows name the algorithm that ran, so
/// without this `matvec/auto` would be drawn as a second bar of the variant it picked.
pub(crate) fn auto_pick(r: &PrRow) -> Option<&str> {
    let mut parts = r.comparison.split('/');
    let named_auto = parts.next() == Some(r.family.name()) && parts.next() == Some("auto");
    (named_auto && r.variant != "auto").then_some(r.variant.as_str())
}

fn bar_row(r: &PrRow, label: String) -> HBarRow {
    let valid = r.pr.is_finite() && r.pr >= 0.0;
    let ci = (r.pr_ci_lo.is_finite() && r.pr_ci_hi.is_finite() && r.pr_ci_lo <= r.pr_ci_hi)
        .then_some((r.pr_ci_lo, r.pr_ci_hi));
    let (color, hatch) = if r.fair {
        (style::FAIR, None)
    } else {
        (style::UNFAIR_FILL, Some(style::UNFAIR_HATCH))
    };
    let mut annotation = if valid {
        match ci {
            Some((lo, hi)) => format!("{} [{}, {}]", fmt_pr(r.pr), fmt_pr(lo), fmt_pr(hi)),
            None => fmt_pr(r.pr),
        }
    } else {
        "PR n/a".to_string()
    };
    if !r.fair {
        // Just the names of the steps: short enough for the column beside the bars.
        let names: Vec<&str> = r
            .steps()
            .map(|e| e.split(':').next().unwrap_or(e).trim())
            .collect();
        if names.is_empty() {
            annotation.push_str(" · unfair");
        } else {
            annotation.push_str(&format!(" · unfair: {}", names.join(", ")));
        }
    }
    HBarRow {
        label,
        bars: vec![valid.then_some(HBar {
            value: r.pr,
            ci,
            color,
            hatch,
            text: None,
        })],
        annotation: Some(annotation),
    }
}

/// Footnotes spelling out what differs in each unfair comparison (the column beside the bars
/// has room for the step names only), capped.
fn unfair_notes(
    panels: &[((String, String), Vec<&PrRow>)],
    multi_panel: bool,
    multi_study: bool,
) -> Vec<String> {
    let mut notes = Vec::new();
    let mut skipped = 0usize;
    for ((device, _), rows) in panels {
        for r in rows.iter().filter(|r| !r.fair) {
            if notes.len() >= MAX_UNFAIR_NOTES {
                skipped += 1;
                continue;
            }
            let mut who = base_label(r, multi_study);
            if multi_panel {
                who = format!("{who} on {device}");
            }
            let steps: Vec<&str> = r.steps().collect();
            let what = if steps.is_empty() {
                "differing steps not recorded".to_string()
            } else {
                steps.join("; ")
            };
            notes.push(format!("† {who}: {what}"));
        }
    }
    if skipped > 0 {
        notes.push(format!(
            "† … and {skipped} more unfair comparisons: see differing_steps in the PR table."
        ));
    }
    notes
}

/// PRs near 1 need two decimals to tell 0.97 from 1.03.
fn fmt_pr(v: f64) -> String {
    if v.is_finite() && v.abs() < 10.0 {
        format!("{v:.2}")
    } else {
        fmt_sig(v)
    }
}
