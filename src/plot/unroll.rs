//! Unroll chart (the paper's Fig. 7, in time as it is): each unroll setting's median time per API
//! over CUDA's without pragmas, per (run, study, kernel, size) with a pragma and that baseline.

use super::hbar::{self, HBar, HBarPanel};
use super::layout::{self, Frame, LegendItem, Swatch};
use super::{
    devices_subtitle, fmt_sig, group_in_order, push_pages, slug, sorted_apis, style, ChartData,
    MAX_ROWS_PER_FIGURE,
};
use crate::rows::{Api, MeasurementRow, Status};

fn is_timed(r: &MeasurementRow) -> bool {
    r.status == Status::Ok && r.sweep_param.is_empty() && r.median_s.is_finite() && r.median_s > 0.0
}

/// No pragma at any point: the study writes `none`; rows from older files may leave it empty.
fn no_pragma(r: &MeasurementRow) -> bool {
    r.unroll.is_empty() || r.unroll == "none"
}

/// The baseline of a group: CUDA without pragmas, preferring a comparison whose other side has
/// none either (a fair no-pragma pair).
fn baseline<'a>(rows: &[&'a MeasurementRow]) -> Option<&'a MeasurementRow> {
    let cuda_plain = |r: &&&MeasurementRow| r.api == Api::Cuda && no_pragma(r);
    let fair = rows.iter().filter(cuda_plain).find(|r| {
        rows.iter()
            .filter(|o| o.comparison == r.comparison)
            .all(|o| no_pragma(o))
    });
    fair.or_else(|| rows.iter().find(cuda_plain)).copied()
}

pub(crate) fn figures(data: &ChartData) -> Vec<(String, hbar::HBarFigure)> {
    let rows = data.measurements.iter().filter(|r| is_timed(r));
    let groups = group_in_order(rows, |r| {
        (
            r.run_id.clone(),
            r.study.clone(),
            format!("{}/{}", r.family, r.variant),
            r.size.clone(),
        )
    });
    let mut out = Vec::new();
    for ((run_id, study, kernel, size), rows) in groups {
        if rows.iter().all(|r| no_pragma(r)) {
            continue;
        }
        let Some(base) = baseline(&rows) else {
            continue;
        };
        let name = slug(&format!("{study}-{kernel}-{size}"));
        let subject = format!("{kernel} {size}, study {study}");
        // Two rows (the sides) per comparison, so a page keeps a pair together.
        push_pages(&mut out, &name, &rows, 2 * MAX_ROWS_PER_FIGURE, |page| {
            build(data, &run_id, &subject, base, page)
        });
    }
    out
}

fn bar(r: &MeasurementRow, base: f64) -> HBar {
    let value = r.median_s / base;
    // The pragmas as `A=9 B=4`, or `none`.
    let pragmas = if no_pragma(r) {
        "none".into()
    } else {
        r.unroll.replace(';', " ")
    };
    let text = format!("{} ({pragmas})", fmt_sig(value));
    HBar {
        ci: Some((r.ci_lo_s / base, r.ci_hi_s / base)),
        ..HBar::of_api(r.api, value, text)
    }
}

fn build(
    data: &ChartData,
    run_id: &str,
    subject: &str,
    base: &MeasurementRow,
    rows: &[&MeasurementRow],
) -> hbar::HBarFigure {
    let apis = sorted_apis(rows.iter().map(|r| r.api));
    let hrows = hbar::comparison_rows(rows, &apis, |r| Some(bar(r, base.median_s)));
    let panel = HBarPanel {
        caption: "Median time relative to CUDA without pragmas (lower is faster)".into(),
        x_desc: "time / time of CUDA without pragmas".into(),
        x_max: hbar::rows_axis_max(&hrows, 1.2),
        rows: hrows,
        band: None,
        ref_line: Some(1.0),
    };
    let notes = vec![
        format!(
            "Baseline: the CUDA side of {} (no pragma), median {} ms. Whisker: the bootstrap \
             CI of each median, divided by the baseline median.",
            base.comparison,
            fmt_sig(base.median_s * 1e3)
        ),
        "Each bar's text: the ratio and that side's pragmas (A, B: unroll points; the value is \
         the unroll count)."
            .to_string(),
    ];
    let mut legend: Vec<LegendItem> = layout::api_legend(&apis, |a| a.to_string());
    legend.push(LegendItem::new("1 = CUDA without pragmas", Swatch::RefLine));
    hbar::HBarFigure::new(
        Frame {
            title: style::title("Unroll pragmas: time relative to CUDA without", subject),
            subtitle: devices_subtitle(data, run_id, rows),
            legend,
            notes,
        },
        vec![panel],
    )
}
