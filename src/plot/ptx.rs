//! PTX chart: static instruction counts per class for each kernel pair, OpenCL and CUDA side by
//! side, so a PR away from 1 can be traced to code the two compilers emitted differently.

use super::hbar::{self, HBar, HBarPanel, HBarRow};
use super::layout::{self, Frame, LegendItem};
use super::{
    distinct, group_in_order, run_subtitle, slug, sorted_apis, style, ChartData,
    MAX_FIGURES_PER_CHART,
};
use crate::rows::{Api, ClassCountRow};

pub(crate) fn figures(data: &ChartData) -> Vec<(String, hbar::HBarFigure)> {
    // PTX is compiled, not measured: the run's GPU and driver still tell which compilers.
    let subtitle = run_subtitle(&data.measurements);
    group_in_order(&data.ptx_classes, |c| c.pair.clone())
        .into_iter()
        .take(MAX_FIGURES_PER_CHART)
        .map(|(pair, counts)| (slug(&pair), build(&pair, &counts, &subtitle)))
        .collect()
}

fn build(pair: &str, counts: &[&ClassCountRow], subtitle: &str) -> hbar::HBarFigure {
    let api_of = |c: &ClassCountRow| c.api.parse::<Api>().ok();
    let apis = sorted_apis(counts.iter().filter_map(|c| api_of(c)));
    let classes = distinct(counts.iter().map(|c| &c.class));
    // Sum duplicates (an inspector may list a class once per kernel of the pair). A class
    // absent from one API's listing is a count of 0 there, drawn as such.
    let count_of = |api: Api, class: &str| -> u64 {
        counts
            .iter()
            .filter(|c| api_of(c) == Some(api) && c.class == class)
            .map(|c| c.count)
            .sum()
    };
    let rows: Vec<HBarRow> = classes
        .iter()
        .map(|class| {
            HBarRow::new(
                class.clone(),
                apis.iter()
                    .map(|a| {
                        let n = count_of(*a, class);
                        Some(HBar::of_api(*a, n as f64, n.to_string()))
                    })
                    .collect(),
            )
        })
        .collect();
    let x_max = hbar::rows_axis_max(&rows, 5.0);
    let panel = HBarPanel {
        caption: format!("Kernel pair {pair}"),
        x_desc: "instructions in the PTX (static count)".to_string(),
        x_max,
        rows,
        band: None,
        ref_line: None,
    };
    let legend: Vec<LegendItem> = layout::api_legend(&apis, |a| format!("{a} PTX"));
    let notes = vec![
        "Counts are static (instructions in the listing, not executed instructions); \
         a class absent from one API's PTX is shown as 0."
            .to_string(),
    ];
    hbar::HBarFigure::new(
        Frame {
            title: style::title("PTX instruction classes", pair),
            subtitle: subtitle.to_string(),
            legend,
            notes,
        },
        vec![panel],
    )
}
