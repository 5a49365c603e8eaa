//! Peak chart: each bandwidth-bound kernel's share of the theoretical peak (the paper's Eq. 2),
//! never reached in practice, and of the measured copy bandwidth (sweep rows count for that).

use super::hbar::{self, HBar, HBarPanel, HBarRow};
use super::layout::{self, Frame, LegendItem, Swatch};
use super::{
    devices_subtitle, distinct, fmt_sig, group_in_order, push_pages, slug, sorted_apis, style,
    ChartData, MAX_ROWS_PER_FIGURE,
};
use std::collections::HashMap;

use crate::rows::{Api, MeasurementRow, Metric, Status};

fn is_ok_gbs(r: &MeasurementRow) -> bool {
    r.status == Status::Ok && r.metric_unit == Metric::Bandwidth && r.metric.is_finite()
}

/// The best copy bandwidth per (run, device, API) and per (device, API), in one pass: a scan
/// per row made 100,000 rows take minutes.
#[derive(Default)]
struct CopyReferences {
    per_run: HashMap<(String, String, Api), f64>,
    any_run: HashMap<(String, Api), f64>,
}

impl CopyReferences {
    fn of(data: &ChartData) -> Self {
        let mut refs = CopyReferences::default();
        let copy = data.catalog.memory_references();
        let is_copy =
            |r: &MeasurementRow| copy.is_some_and(|(f, m)| r.family == f && r.variant == m.copy);
        for r in data
            .measurements
            .iter()
            .filter(|r| is_ok_gbs(r) && is_copy(r) && r.metric > 0.0)
        {
            let run = refs
                .per_run
                .entry((r.run_id.clone(), r.device.clone(), r.api))
                .or_default();
            *run = run.max(r.metric);
            let any = refs.any_run.entry((r.device.clone(), r.api)).or_default();
            *any = any.max(r.metric);
        }
        refs
    }

    /// The best copy bandwidth ("what this GPU can move") of a device and API in this run, or
    /// in any run when this one has none.
    fn get(&self, run_id: &str, device: &str, api: Api) -> Option<f64> {
        self.per_run
            .get(&(run_id.to_string(), device.to_string(), api))
            .or_else(|| self.any_run.get(&(device.to_string(), api)))
            .copied()
    }
}

/// Builds one figure per (run, device): a peak is a property of one GPU.
pub(crate) fn figures(data: &ChartData) -> Vec<(String, hbar::HBarFigure)> {
    let rows = data
        .measurements
        .iter()
        .filter(|r| is_ok_gbs(r) && r.sweep_param.is_empty());
    let groups = group_in_order(rows, |r| (r.run_id.clone(), r.device.clone()));
    let runs = distinct(groups.iter().map(|((run, _), _)| run));
    let copies = CopyReferences::of(data);
    let mut out = Vec::new();
    for ((run_id, device), rows) in groups {
        // No known peak, no copy row (a CPU reports no memory clock): no chart, not an empty one.
        let drawable = rows.iter().any(|r| {
            known_peak(r.peak_gbs).is_some() || copies.get(&run_id, &device, r.api).is_some()
        });
        if !drawable {
            continue;
        }
        let base = if runs.len() > 1 {
            slug(&format!("{run_id}-{device}"))
        } else {
            slug(&device)
        };
        // Two rows (the sides) per comparison, so a page keeps a pair together.
        push_pages(&mut out, &base, &rows, 2 * MAX_ROWS_PER_FIGURE, |page| {
            build(data, &copies, &run_id, &device, page)
        });
    }
    out
}

fn pct(value: f64, of: Option<f64>) -> Option<f64> {
    let of = known_peak(of)?;
    value.is_finite().then(|| value / of * 100.0)
}

/// A peak that is known: present, finite and positive (older files wrote 0 for unknown).
fn known_peak(peak: Option<f64>) -> Option<f64> {
    peak.filter(|p| p.is_finite() && *p > 0.0)
}

fn bar(value: Option<f64>, api: Api) -> Option<HBar> {
    value.map(|v| {
        let digits = if v.abs() >= 10.0 { 0 } else { 1 };
        HBar::of_api(api, v, format!("{v:.digits$}%"))
    })
}

fn build(
    data: &ChartData,
    copies: &CopyReferences,
    run_id: &str,
    device: &str,
    rows: &[&MeasurementRow],
) -> hbar::HBarFigure {
    let apis = sorted_apis(rows.iter().map(|r| r.api));
    let refs: Vec<(Api, Option<f64>)> = apis
        .iter()
        .map(|a| (*a, copies.get(run_id, device, *a)))
        .collect();
    let reference_of = |api: Api| refs.iter().find(|(a, _)| *a == api).and_then(|(_, v)| *v);
    let any_copy = refs.iter().any(|(_, v)| v.is_some());

    // One row per comparison: the OpenCL and CUDA rows of one configuration share its key.
    let categories = group_in_order(rows.iter().copied(), |r| {
        (r.study.clone(), r.comparison.clone())
    });
    let base = |r: &MeasurementRow| format!("{}/{}", r.family, r.variant);
    let mut peak_rows = Vec::new();
    let mut copy_rows = Vec::new();
    for (_, rs) in &categories {
        let Some(first) = rs.first() else { continue };
        let mut label = base(first);
        let same = categories
            .iter()
            .filter(|(_, o)| o.first().is_some_and(|o| base(o) == label))
            .count();
        if same > 1 {
            // The comparison's full name carries its sweep values (`@size=...,local=64`), so
            // two points of one sweep never share a label.
            label = format!("{} [{}]", first.comparison, first.study);
        }
        let find = |api: Api| rs.iter().find(|r| r.api == api);
        peak_rows.push(HBarRow::new(
            label.clone(),
            apis.iter()
                .map(|&a| bar(find(a).and_then(|r| pct(r.metric, r.peak_gbs)), a))
                .collect(),
        ));
        copy_rows.push(HBarRow::new(
            label,
            apis.iter()
                .map(|&a| {
                    let v =
                        find(a).and_then(|r| reference_of(a).and_then(|c| pct(r.metric, Some(c))));
                    bar(v, a)
                })
                .collect(),
        ));
    }

    let x_max = hbar::rows_axis_max(peak_rows.iter().chain(&copy_rows), 110.0);
    let panel = |caption: &str, x_desc: &str, rows| HBarPanel {
        caption: caption.into(),
        x_desc: x_desc.into(),
        x_max,
        rows,
        band: None,
        ref_line: Some(100.0),
    };
    let mut panels = vec![panel(
        "Share of theoretical peak bandwidth (Eq. 2)",
        "achieved / theoretical peak (%)",
        peak_rows,
    )];
    // The practical reference: the copy kernel of the family that measures memory itself.
    let copy_ref = match data.catalog.memory_references() {
        Some((family, m)) => format!("{family}/{}", m.copy),
        None => "copy kernel".into(),
    };

    let peaks = distinct(
        rows.iter()
            .filter_map(|r| known_peak(r.peak_gbs))
            .map(fmt_sig),
    );
    let mut notes = vec![format!(
        "Bandwidth at each kernel's median time. Theoretical peak (paper Eq. 2): {} GB/s.",
        if peaks.is_empty() {
            "unknown".to_string()
        } else {
            peaks.join(", ")
        }
    )];
    if any_copy {
        let used: Vec<String> = refs
            .iter()
            .filter_map(|(a, v)| v.map(|v| format!("{} {} GB/s", a, fmt_sig(v))))
            .collect();
        notes.push(format!(
            "Copy reference: best {copy_ref} result of the same GPU and API: {}.",
            used.join(", ")
        ));
        panels.push(panel(
            "Share of measured copy bandwidth",
            "achieved / measured copy (%)",
            copy_rows,
        ));
        for (a, _) in refs.iter().filter(|(_, v)| v.is_none()) {
            notes.push(format!(
                "No {copy_ref} row for {a} on this GPU: its share of copy bandwidth is not shown."
            ));
        }
    } else {
        notes.push(format!(
            "No {copy_ref} row for this GPU: the share of measured copy bandwidth is not shown."
        ));
    }
    let unknown_peak = distinct(
        rows.iter()
            .filter(|r| known_peak(r.peak_gbs).is_none())
            .map(|r| r.api.to_string()),
    );
    if !unknown_peak.is_empty() {
        notes.push(format!(
            "Theoretical peak unknown (no peak_gbs) for some {} rows: those bars are left out.",
            unknown_peak.join("/")
        ));
    }

    let mut legend: Vec<LegendItem> = layout::api_legend(&apis, |a| a.to_string());
    legend.push(LegendItem::new("100 % (reference)", Swatch::RefLine));

    hbar::HBarFigure::new(
        Frame {
            title: style::title("Achieved bandwidth vs. peak", device),
            subtitle: devices_subtitle(data, run_id, rows),
            legend,
            notes,
        },
        panels,
    )
}
