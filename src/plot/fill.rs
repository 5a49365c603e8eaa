//! Fill chart: the fill study beside the "OpenCL Optimization" article's numbers ([`ARTICLE`]),
//! each panel on its own scale: the GPUs are a decade apart, so the rows' order is what compares.

use super::hbar::{self, HBar, HBarPanel, HBarRow};
use super::layout::{self, Frame, LegendItem, Swatch};
use super::{fmt_sig, group_in_order, run_subtitle, slug, sorted_apis, style, ChartData};
use crate::paper::{FillQuote as ArticleFill, FILL_ARTICLE as ARTICLE};
use crate::rows::{Api, MeasurementRow, Status};

const ARTICLE_LABEL: &str = "article (Intel HD 5000)";

/// Calls the article timed per number.
const CALLS: f64 = 10.0;

/// A group's label: `1d-auto` names what each API's runtime chose (0: not reported).
fn group_label(rs: &[&MeasurementRow]) -> String {
    let r = rs[0];
    if r.variant == "1d-auto" {
        let chosen: Vec<String> = rs
            .iter()
            .map(|r| match r.local_size {
                0 => format!("{} NULL", r.api),
                l => format!("{} {l}", r.api),
            })
            .collect();
        format!("1d-auto wg runtime's ({})", chosen.join(", "))
    } else if r.local_y > 1 {
        format!("{} wg {}x{}", r.variant, r.local_size, r.local_y)
    } else {
        format!("{} wg {}", r.variant, r.local_size)
    }
}

pub(crate) fn figures(data: &ChartData) -> Vec<(String, hbar::HBarFigure)> {
    let rows = data
        .measurements
        .iter()
        .filter(|r| data.catalog.drawn_in("fill", r.family));
    let groups = group_in_order(rows, |r| {
        (r.run_id.clone(), r.study.clone(), r.device.clone())
    });
    let devices = group_in_order(groups.iter(), |((_, _, d), _)| d.clone()).len();
    groups
        .into_iter()
        .filter(|(_, rows)| rows.iter().any(|r| r.status == Status::Ok))
        .map(|((_, study, device), rows)| {
            let name = if devices > 1 {
                slug(&format!("{study}-{device}"))
            } else {
                slug(&study)
            };
            (name, build(&study, &rows))
        })
        .collect()
}

/// Our bar: milliseconds of 10 calls at the median.
fn ours_bar(r: &MeasurementRow) -> Option<HBar> {
    if r.status != Status::Ok || !(r.median_s.is_finite() && r.median_s > 0.0) {
        return None;
    }
    let ms = r.median_s * CALLS * 1e3;
    Some(HBar::of_api(r.api, ms, format!("{} ms", fmt_sig(ms))))
}

fn article_bar(a: &ArticleFill) -> Option<HBar> {
    let (lo, hi) = a.seconds?;
    Some(HBar {
        value: (lo + hi) / 2.0,
        ci: (lo < hi).then_some((lo, hi)),
        color: style::REFERENCE_FILL,
        hatch: Some(style::REFERENCE_HATCH),
        text: Some(a.quoted.to_string()),
    })
}

/// Rows of both panels: ours per (variant, local size), then the article's numbers alone.
fn rows_of(rows: &[&MeasurementRow], apis: &[Api]) -> (Vec<HBarRow>, Vec<HBarRow>) {
    // One row for `1d-auto`, whatever local size each runtime chose.
    let by_config = group_in_order(rows.iter().copied(), |r| {
        let local = if r.variant == "1d-auto" {
            0
        } else {
            r.local_size
        };
        (r.variant.clone(), local, r.local_y)
    });
    let (mut ours, mut article) = (Vec::new(), Vec::new());
    for (_, rs) in &by_config {
        // The article's entry at this many work-items per group (2-D groups multiplied out).
        let (variant, local) = (
            rs[0].variant.as_str(),
            rs[0].local_size * rs[0].local_y.max(1),
        );
        let entry = ARTICLE.iter().find(|a| {
            a.variants.contains(&variant) && (a.locals.is_empty() || a.locals.contains(&local))
        });
        let failed: Vec<String> = rs
            .iter()
            .filter(|r| r.status != Status::Ok)
            .map(|r| format!("{} {}", r.api, r.status))
            .collect();
        let mut label = group_label(rs);
        if !failed.is_empty() {
            label.push_str(&format!(" ({})", failed.join(", ")));
        }
        if entry.is_some_and(|a| a.seconds.is_none()) {
            label.push_str(" (article: crashed)");
        }
        ours.push(HBarRow::new(
            label.clone(),
            apis.iter()
                .map(|a| rs.iter().find(|r| r.api == *a).and_then(|r| ours_bar(r)))
                .collect(),
        ));
        article.push(HBarRow::new(label, vec![entry.and_then(article_bar)]));
    }
    // The article's runtime-chosen launch stands alone when no `1d-auto` row was measured.
    let has_auto = rows.iter().any(|r| r.variant == "1d-auto");
    for a in ARTICLE
        .iter()
        .filter(|a| a.variants == ["1d-auto"] && !has_auto)
    {
        let label = format!("{} (article only)", a.what);
        ours.push(HBarRow::new(label.clone(), vec![None; apis.len()]));
        article.push(HBarRow::new(label, vec![article_bar(a)]));
    }
    (ours, article)
}

fn panel(caption: &str, x_desc: &str, rows: Vec<HBarRow>) -> HBarPanel {
    HBarPanel {
        caption: caption.into(),
        x_desc: x_desc.into(),
        x_max: hbar::rows_axis_max(&rows, 0.0),
        rows,
        band: None,
        ref_line: None,
    }
}

fn build(study: &str, rows: &[&MeasurementRow]) -> hbar::HBarFigure {
    let apis = sorted_apis(rows.iter().map(|r| r.api));
    let (ours, article) = rows_of(rows, &apis);
    let panels = vec![
        panel(
            "Here: 10 calls (median x 10)",
            "milliseconds for 10 calls",
            ours,
        ),
        panel(
            "The article: 10 calls",
            &format!("seconds for 10 calls, {ARTICLE_LABEL}"),
            article,
        ),
    ];
    let mut legend = layout::api_legend(&apis, |a| a.to_string());
    legend.push(LegendItem::new(
        ARTICLE_LABEL,
        Swatch::fill(style::REFERENCE_FILL, Some(style::REFERENCE_HATCH)),
    ));
    let notes = vec![
        "Right: the article's numbers as it quotes them (OpenCL on an Intel HD Graphics 5000; a \
         range drawn at its middle, the whisker spanning it). The panels have their own scales."
            .to_string(),
        "The article launched exactly N work-items (1d-exact); OpenCL 1.2 refuses a local size \
         that does not divide N, which is why its 512 \"crashed\": a failed row carries the \
         driver's answer. 1d-auto leaves the size to the runtime (OpenCL NULL, CUDA's \
         occupancy calculator)."
            .to_string(),
    ];
    hbar::HBarFigure::new(
        Frame {
            title: style::title("Fill against the article", &format!("study {study}")),
            subtitle: run_subtitle(rows.iter().copied()),
            legend,
            notes,
        },
        panels,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::tests::m;

    fn row(api: &str, variant: &str, local: u32, median_s: f64) -> MeasurementRow {
        let mut r = m(api, "H100", "fill", "fill", variant, 3000.0);
        r.local_size = local;
        r.median_s = median_s;
        r.size = "100000000".into();
        r
    }

    fn data() -> ChartData {
        let mut measurements = vec![
            row("OpenCL", "1d", 256, 1.3e-4),
            row("CUDA", "1d", 256, 1.2e-4),
            row("OpenCL", "1d-exact", 512, 0.0),
            row("CUDA", "1d-exact", 512, 1.4e-4),
            row("OpenCL", "float4", 256, 1.1e-4),
        ];
        measurements[2].status = Status::LaunchFailed;
        let mut article = row("CUDA", "2d-article", 16, 9e-4);
        article.local_y = 16;
        measurements.push(article);
        ChartData {
            measurements,
            ..crate::plot::tests::registered()
        }
    }

    #[test]
    #[allow(clippy::approx_constant)] // the article's 0.318 s
    fn ten_calls_beside_the_article() {
        let figs = figures(&data());
        assert_eq!(figs.len(), 1);
        let d = data();
        let refs: Vec<&MeasurementRow> = d.measurements.iter().collect();
        let (ours, article) = rows_of(&refs, &[Api::OpenCl, Api::Cuda]);
        // Four configurations and the article's NULL launch, which has no row of ours.
        assert_eq!(ours.len(), 5);
        assert_eq!(ours[0].label, "1d wg 256");
        let cl = ours[0].bars[0].as_ref().unwrap();
        assert!(
            (cl.value - 1.3e-4 * 10.0 * 1e3).abs() < 1e-9,
            "{}",
            cl.value
        );
        let art = article[0].bars[0].as_ref().unwrap();
        assert_eq!(art.ci, Some((0.318, 0.330)));
        // The refused launch: no OpenCL bar, said in the label, and the article's crash.
        assert!(ours[1].bars[0].is_none());
        assert!(
            ours[1].label.contains("OpenCL launch-failed"),
            "{}",
            ours[1].label
        );
        assert!(ours[1].label.contains("article: crashed"));
        assert!(article[1].bars[0].is_none());
        assert_eq!(article[2].bars[0].as_ref().unwrap().value, 0.283);
        assert_eq!(ours[3].label, "2d-article wg 16x16");
        assert_eq!(article[3].bars[0].as_ref().unwrap().value, 2.018);
        assert!(ours[4].bars.iter().all(Option::is_none));
        crate::plot::tests::keep_figure(&figs[0].1, "fill-example");
        let buf = crate::plot::render_rgb(&figs[0].1).expect("render");
        assert!(buf.iter().any(|&b| b != 255));
    }

    #[test]
    fn the_runtime_choice_is_one_row_beside_the_article_null() {
        let mut d = data();
        d.measurements.push(row("OpenCL", "1d-auto", 0, 1.3e-4));
        d.measurements.push(row("CUDA", "1d-auto", 1024, 1.2e-4));
        let refs: Vec<&MeasurementRow> = d.measurements.iter().collect();
        let (ours, article) = rows_of(&refs, &[Api::OpenCl, Api::Cuda]);
        assert_eq!(ours.len(), 5);
        let auto = ours
            .iter()
            .position(|r| r.label.starts_with("1d-auto"))
            .unwrap();
        assert_eq!(
            ours[auto].label,
            "1d-auto wg runtime's (OpenCL NULL, CUDA 1024)"
        );
        assert!(ours[auto].bars.iter().all(Option::is_some));
        assert_eq!(article[auto].bars[0].as_ref().unwrap().value, 0.353);
    }

    #[test]
    fn not_drawn_without_measured_fill_rows() {
        assert!(figures(&crate::plot::tests::registered()).is_empty());
        let mut d = data();
        d.measurements.retain(|r| r.status != Status::Ok);
        assert!(figures(&d).is_empty());
        assert!(figures(&d).is_empty());
    }
}
