//! BFS chart: the time of one level per graph and API, split into the kernels (device clock)
//! and launch + wait (host minus device clock): the share of the runtime the paper blamed.

use super::hbar::{self, HBar, HBarPanel, HBarRow};
use super::layout::{Frame, LegendItem, Swatch};
use super::{fmt_sig, group_in_order, run_subtitle, slug, style, ChartData};
use crate::rows::TimerKind;
use crate::rows::{Api, Catalog, MeasurementRow, Status};

/// Whether a row is one this chart draws: a level-by-level search's (`Family::charts`).
pub(crate) fn drawn(catalog: &Catalog, m: &MeasurementRow) -> bool {
    catalog.drawn_in("bfs", m.family)
}

/// One graph on one API: medians of a whole search by each clock.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Split {
    pub label: String,
    pub api: Api,
    /// The rows' own levels, or a layered graph's known depth; `None` for a random graph in
    /// rows written before levels were recorded: its bars are then whole searches.
    pub levels: Option<u64>,
    pub kernels_s: f64,
    pub total_s: f64,
}

impl Split {
    /// Launch + wait of one search: what the host clock saw beyond the kernels.
    pub fn overhead_s(&self) -> f64 {
        (self.total_s - self.kernels_s).max(0.0)
    }
}

/// The (device clock, host clock) pairs of rows of every graph and API, in row order.
pub(crate) fn splits(catalog: &Catalog, rows: &[&MeasurementRow]) -> Vec<Split> {
    let ok = |m: &&&MeasurementRow| drawn(catalog, m) && m.status == Status::Ok;
    let mut out = Vec::new();
    for dev in rows
        .iter()
        .filter(ok)
        .filter(|m| m.timer == TimerKind::DeviceEvent)
    {
        let host = rows.iter().filter(ok).find(|m| {
            m.timer == TimerKind::WallClock
                && m.api == dev.api
                && m.device == dev.device
                && m.variant == dev.variant
                && m.size == dev.size
        });
        if let Some(host) = host {
            out.push(Split {
                label: format!("{} vertices, {}", dev.size, dev.api),
                api: dev.api,
                levels: dev
                    .levels
                    .or_else(|| catalog.levels_of_size(dev.family, &dev.variant, dev.elements)),
                kernels_s: dev.median_s,
                total_s: host.median_s,
            });
        }
    }
    out
}

pub(crate) fn figures(data: &ChartData) -> Vec<(String, hbar::HBarFigure)> {
    let subtitle = run_subtitle(&data.measurements);
    group_in_order(&data.measurements, |m| m.variant.clone())
        .into_iter()
        .filter_map(|(variant, rows)| {
            let s = splits(&data.catalog, &rows);
            (!s.is_empty()).then(|| (slug(&variant), build(&variant, &s, &subtitle)))
        })
        .collect()
}

fn bar(value_us: f64, api: Api, hatched: bool) -> Option<HBar> {
    let text = format!("{} µs", fmt_sig(value_us));
    let hatch = hatched.then_some(style::REFERENCE_HATCH);
    Some(HBar {
        hatch,
        ..HBar::of_api(api, value_us, text)
    })
}

fn build(variant: &str, splits: &[Split], subtitle: &str) -> hbar::HBarFigure {
    let per_level_us = |s: f64, l: Option<u64>| s / l.unwrap_or(1).max(1) as f64 * 1e6;
    let per_search = splits.iter().any(|s| s.levels.is_none());
    let rows: Vec<HBarRow> = splits
        .iter()
        .map(|s| HBarRow {
            label: s.label.clone(),
            bars: vec![
                bar(per_level_us(s.kernels_s, s.levels), s.api, false),
                bar(per_level_us(s.overhead_s(), s.levels), s.api, true),
            ],
            annotation: Some(format!(
                "{}{:.0}% launch+wait",
                s.levels.map_or(String::new(), |l| format!("{l} levels, ")),
                100.0 * s.overhead_s() / s.total_s.max(f64::MIN_POSITIVE)
            )),
        })
        .collect();
    let x_max = hbar::rows_axis_max(&rows, 1.0);
    let panel = HBarPanel {
        caption: format!("BFS on {variant} graphs: one level"),
        x_desc: if per_search {
            "microseconds per search (median; these rows carry no level count)".into()
        } else {
            "microseconds per level (median of whole searches / levels)".into()
        },
        x_max,
        rows,
        band: None,
        ref_line: None,
    };
    let fill = |hatch| Swatch::fill(style::REFERENCE_FILL, hatch);
    let legend = vec![
        LegendItem::new("expand + update kernels (device clock)", fill(None)),
        LegendItem::new(
            "launch + wait + flag transfers (host − device clock)",
            fill(Some(style::REFERENCE_HATCH)),
        ),
    ];
    let notes = vec![
        "Each level: clear the flag (1 word up), expand, update, read the flag (1 word down). \
         Bar colour is the API."
            .to_string(),
        "The paper (Fang et al. 2011) found OpenCL's launch time longer than CUDA's, the gap \
         depending on the problem size."
            .to_string(),
    ];
    hbar::HBarFigure::new(
        Frame {
            title: style::title("BFS time per level", variant),
            subtitle: subtitle.to_string(),
            legend,
            notes,
        },
        vec![panel],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::tests::m;

    #[test]
    fn pairs_device_and_host_rows_of_one_graph() {
        let mut dev = m("CUDA", "GPU", "bfs", "bfs", "uniform", 1.0);
        dev.median_s = 0.010;
        dev.size = "65536".into();
        dev.elements = 65536;
        let mut host = dev.clone();
        host.timer = TimerKind::WallClock;
        host.median_s = 0.013;
        let mut other = host.clone();
        other.size = "1024".into();
        let rows = [&dev, &host, &other];
        let catalog = crate::plot::tests::registered().catalog;
        let s = splits(&catalog, &rows);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].levels, Some(9));
        let mut random = dev.clone();
        random.variant = "random-uniform".into();
        let mut random_host = host.clone();
        random_host.variant = random.variant.clone();
        assert_eq!(splits(&catalog, &[&random, &random_host])[0].levels, None);
        // A row that carries its measured depth is divided by it, layered or not.
        random.levels = Some(14);
        assert_eq!(
            splits(&catalog, &[&random, &random_host])[0].levels,
            Some(14)
        );
        assert!((s[0].overhead_s() - 0.003).abs() < 1e-12);
        let figs = figures(&ChartData {
            measurements: vec![dev, host],
            ..crate::plot::tests::registered()
        });
        assert_eq!(figs.len(), 1);
    }
}
