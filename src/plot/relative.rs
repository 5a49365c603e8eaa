//! The paper's "relative to the reference version, PR before and after" figure: constant
//! memory (Fig. 8) and texture (Figs. 4, 5). Left: each row's metric over the same API's and
//! algorithm's reference (a fair pair, both sides in the reference's space). Right: each PR,
//! hatched before (that space on one side only), solid after (fair).

use super::hbar::{self, HBar, HBarPanel, HBarRow};
use super::layout::{self, Frame, LegendItem, Swatch};
use super::{devices_subtitle, fmt_sig, group_in_order, slug, sorted_apis, style, ChartData};
use crate::rows::{Api, Catalog, MeasurementRow, PrRow, ReadPath, Status};

/// What makes one chart kind of this figure.
pub(crate) struct Reference {
    /// The chart's name in the catalog and in its file names.
    chart: &'static str,
    /// "constant-memory", "texture".
    name: &'static str,
    /// Whether a variant reads through the reference's memory space.
    is_reference: fn(&str) -> bool,
    /// The title's first part.
    title: &'static str,
    /// The paper's numbers for this case, quoted from [`crate::paper`].
    paper: &'static crate::paper::Quote,
    /// The input a row ran on, besides its size: in the title and in the file name.
    input: fn(&MeasurementRow) -> (String, String),
}

/// For one image size, the filter in constant memory is the reference.
pub(crate) const CONSTANT: Reference = Reference {
    chart: "constant",
    name: "constant-memory",
    is_reference: |variant| variant == "constant",
    title: "Constant memory: performance relative to it",
    paper: &crate::paper::FANG_SOBEL_CONSTANT_PR,
    input: |_| ("sobel".into(), "sobel".into()),
};

/// The texture version of each kernel is the reference. SpMV rows of one size may come from
/// different matrices, which the rows do not record: the input is the comparison name's stem
/// (`spmv-uniform` of `spmv-uniform/scalar-tex`), else the size.
pub(crate) const TEXTURE: Reference = Reference {
    chart: "texture",
    name: "texture",
    is_reference: |variant| ReadPath::of(variant) == ReadPath::Tex,
    title: "Texture path: performance relative to it",
    paper: &crate::paper::FANG_TEXTURE,
    input: |r| {
        let input = r
            .comparison
            .rsplit_once('/')
            .map_or_else(|| r.size.clone(), |(stem, _)| stem.to_string());
        (format!("{} {input}", r.family.name()), input)
    },
};

/// The figures of one chart kind, one per run, study, size and input, named by the last three.
pub(crate) fn figures(spec: &Reference, data: &ChartData) -> Vec<(String, hbar::HBarFigure)> {
    let rows = data
        .measurements
        .iter()
        .filter(|r| usable(&data.catalog, spec.chart, r));
    let groups = group_in_order(rows, |r| {
        (
            r.run_id.clone(),
            r.study.clone(),
            r.size.clone(),
            (spec.input)(r),
        )
    });
    let mut out = Vec::new();
    for ((run_id, study, size, (subject, input)), rows) in groups {
        // The same comparison may run at several sizes: only this size's PR rows.
        let prs: Vec<&PrRow> = data
            .prs
            .iter()
            .filter(|p| p.run_id == run_id && p.study == study && p.size == size)
            .filter(|p| rows.iter().any(|r| r.comparison == p.comparison))
            .collect();
        let subject = format!("{subject} {size}, study {study}");
        if let Some(fig) = figure(spec, data, &run_id, &subject, &rows, &prs) {
            out.push((slug(&format!("{study}-{input}-{size}")), fig));
        }
    }
    out
}

/// Both sides of `comparison` read through the reference space.
fn fair_reference(spec: &Reference, rows: &[&MeasurementRow], comparison: &str) -> bool {
    let sides: Vec<_> = rows.iter().filter(|r| r.comparison == comparison).collect();
    sides.len() == 2 && sides.iter().all(|r| (spec.is_reference)(&r.variant))
}

/// The reference row of `r`: the same API and algorithm, of the first fair reference comparison.
fn reference_of<'a>(
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

/// A row of a family `chart` draws, measured, not swept, with a positive metric.
fn usable(catalog: &Catalog, chart: &str, r: &MeasurementRow) -> bool {
    catalog.drawn_in(chart, r.family)
        && r.status == Status::Ok
        && r.sweep_param.is_empty()
        && r.metric.is_finite()
        && r.metric > 0.0
}

fn relative_panel(
    catalog: &Catalog,
    spec: &Reference,
    rows: &[&MeasurementRow],
    apis: &[Api],
) -> HBarPanel {
    let hrows = hbar::comparison_rows(rows, apis, |r| {
        let value = r.metric / reference_of(catalog, spec, rows, r)?.metric;
        let text = format!("{} ({})", fmt_sig(value), r.variant);
        Some(HBar::of_api(r.api, value, text))
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

/// PR rows in the first panel's order (the panels share the row labels).
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
fn reference_text(refs: Vec<&MeasurementRow>) -> String {
    let by_comparison = group_in_order(refs, |r| r.comparison.clone());
    let parts: Vec<String> = by_comparison
        .iter()
        .map(|(name, rs)| {
            let sides: Vec<String> = rs
                .iter()
                .map(|r| format!("{} {}", r.api, fmt_sig(r.metric)))
                .collect();
            format!("{name}: {} {}", sides.join(", "), rs[0].metric_unit)
        })
        .collect();
    parts.join("; ")
}

/// The figure of `rows` (one run, study and input); `None` without a fair reference pair.
fn figure(
    spec: &Reference,
    data: &ChartData,
    run_id: &str,
    subject: &str,
    rows: &[&MeasurementRow],
    prs: &[&PrRow],
) -> Option<hbar::HBarFigure> {
    let refs: Vec<&MeasurementRow> = rows
        .iter()
        .copied()
        .filter(|r| (spec.is_reference)(&r.variant) && fair_reference(spec, rows, &r.comparison))
        .collect();
    if refs.is_empty() {
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
            reference_text(refs)
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
            subtitle: devices_subtitle(data, run_id, rows),
            legend,
            notes,
        },
        panels,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::tests::m;

    fn texture(data: &ChartData) -> Vec<(String, hbar::HBarFigure)> {
        figures(&TEXTURE, data)
    }

    /// Both sides of `comparison`, OpenCL running `cl` and CUDA `cu`.
    fn pair(comparison: &str, cl: (&str, f64), cu: (&str, f64)) -> Vec<MeasurementRow> {
        [("OpenCL", cl), ("CUDA", cu)]
            .into_iter()
            .map(|(api, (variant, metric))| {
                let mut r = m(api, "H100", "texture", "spmv", variant, metric);
                r.comparison = comparison.into();
                r.size = "2^24x2^28".into();
                r
            })
            .collect()
    }

    fn pr_of(rows: &[MeasurementRow], fair: bool) -> PrRow {
        let (a, b) = (&rows[0], &rows[1]);
        PrRow {
            run_id: a.run_id.clone(),
            study: a.study.clone(),
            comparison: a.comparison.clone(),
            device_a: a.device.clone(),
            device_b: b.device.clone(),
            api_a: Api::OpenCl,
            api_b: Api::Cuda,
            family: a.family,
            variant: a.variant.clone(),
            size: a.size.clone(),
            local_size: 256,
            groups: 1,
            metric_unit: a.metric_unit,
            metric_a: a.metric,
            metric_b: b.metric,
            pr: a.metric / b.metric,
            pr_ci_lo: a.metric / b.metric * 0.98,
            pr_ci_hi: a.metric / b.metric * 1.02,
            similar: true,
            similar_tight: true,
            fair,
            differing_steps: String::new(),
            timer: "device-event".into(),
            sweep_param: String::new(),
            sweep_value: String::new(),
        }
    }

    fn data(with_tex: bool) -> ChartData {
        let mut groups = vec![
            pair("spmv-uniform/scalar", ("scalar", 40.0), ("scalar", 41.0)),
            pair(
                "spmv-uniform/scalar-ro",
                ("scalar-ro", 45.0),
                ("scalar-ro", 46.0),
            ),
            pair("spmv-uniform/vector", ("vector", 60.0), ("vector", 62.0)),
            pair(
                "spmv-uniform/vector-tex-cuda-only",
                ("vector", 60.0),
                ("vector-tex", 80.0),
            ),
            pair(
                "spmv-banded/scalar-tex",
                ("scalar-tex", 90.0),
                ("scalar-tex", 92.0),
            ),
        ];
        if with_tex {
            groups.push(pair(
                "spmv-uniform/scalar-tex",
                ("scalar-tex", 50.0),
                ("scalar-tex", 50.0),
            ));
            groups.push(pair(
                "spmv-uniform/vector-tex",
                ("vector-tex", 75.0),
                ("vector-tex", 80.0),
            ));
        }
        let prs = groups
            .iter()
            .map(|g| pr_of(g, !g[0].comparison.ends_with("cuda-only")))
            .collect();
        ChartData {
            measurements: groups.into_iter().flatten().collect(),
            prs,
            ..crate::plot::tests::registered()
        }
    }

    #[test]
    fn relative_to_the_texture_version_of_the_same_kernel_per_input() {
        let figs = texture(&data(true));
        // spmv-uniform, and spmv-banded (its fair scalar-tex is its own reference).
        let names: Vec<&str> = figs.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "texture-spmv-uniform-2-24x2-28",
                "texture-spmv-banded-2-24x2-28"
            ]
        );
        let d = data(true);
        let rows: Vec<&MeasurementRow> = d
            .measurements
            .iter()
            .filter(|r| r.comparison.starts_with("spmv-uniform"))
            .collect();
        // scalar over scalar-tex, vector over vector-tex: per API and per algorithm.
        let find = |cmp: &str, api: Api| {
            rows.iter()
                .find(|r| r.comparison == cmp && r.api == api)
                .copied()
                .unwrap()
        };
        let spec = &TEXTURE;
        let rel = |cmp: &str, api: Api| {
            let r = find(cmp, api);
            r.metric / reference_of(&d.catalog, spec, &rows, r).unwrap().metric
        };
        assert_eq!(rel("spmv-uniform/scalar", Api::OpenCl), 40.0 / 50.0);
        assert_eq!(rel("spmv-uniform/scalar-ro", Api::Cuda), 46.0 / 50.0);
        assert_eq!(rel("spmv-uniform/vector", Api::OpenCl), 60.0 / 75.0);
        // The paper's unfair pair: CUDA's texture side is 1, OpenCL's plain side 0.8.
        assert_eq!(rel("spmv-uniform/vector-tex-cuda-only", Api::Cuda), 1.0);
        crate::plot::tests::keep_figure(&figs[0].1, "texture-example");
        let buf = crate::plot::render_rgb(&figs[0].1).expect("render");
        assert!(buf.iter().any(|&b| b != 255));
    }

    #[test]
    fn not_drawn_without_a_fair_texture_comparison() {
        let d = data(false);
        // Only the banded input has a fair texture pair; the uniform one has none (the
        // CUDA-only texture is no baseline).
        let figs = texture(&d);
        assert_eq!(figs.len(), 1);
        assert!(figs[0].0.contains("banded"));
        let mut d = d;
        d.measurements
            .retain(|r| !r.comparison.starts_with("spmv-banded"));
        assert!(texture(&d).is_empty());
        assert!(texture(&crate::plot::tests::registered()).is_empty());
    }

    fn side(api: &str, comparison: &str, variant: &str, metric: f64) -> MeasurementRow {
        let mut r = m(api, "H100", "constant", "sobel", variant, metric);
        r.comparison = comparison.into();
        r.size = "4096x4096".into();
        r
    }

    #[test]
    fn drawn_only_with_a_fair_constant_pair() {
        let mut rows = vec![
            side("OpenCL", "sobel/global", "global", 500.0),
            side("CUDA", "sobel/global", "global", 520.0),
            side("OpenCL", "sobel/constant-opencl-only", "constant", 700.0),
            side("CUDA", "sobel/constant-opencl-only", "global", 520.0),
        ];
        let data = |rows: &[MeasurementRow]| ChartData {
            measurements: rows.to_vec(),
            ..crate::plot::tests::registered()
        };
        assert!(figures(&CONSTANT, &data(&rows)).is_empty());
        rows.push(side("OpenCL", "sobel/constant", "constant", 700.0));
        rows.push(side("CUDA", "sobel/constant", "constant", 650.0));
        let figs = figures(&CONSTANT, &data(&rows));
        assert_eq!(figs.len(), 1);
        assert_eq!(figs[0].0, "constant-sobel-4096x4096");
    }

    #[test]
    fn each_size_shows_its_own_pr() {
        // The same comparisons at two sizes, with other PRs at the second: each size's figure
        // is the one drawn from its rows alone.
        let at = |size: &str, scale: f64| {
            let mut d = data(true);
            for r in &mut d.measurements {
                r.size = size.into();
                r.metric *= if r.api == Api::Cuda { scale } else { 1.0 };
            }
            for (p, g) in d.prs.iter_mut().zip(d.measurements.chunks(2)) {
                *p = pr_of(g, p.fair);
            }
            d
        };
        let (small, big) = (at("2^20x2^24", 1.0), at("2^24x2^28", 2.0));
        let mut both = small.clone();
        both.measurements.extend(big.measurements.clone());
        both.prs.extend(big.prs.clone());
        let mixed = texture(&both);
        assert_eq!(mixed.len(), 4);
        assert_eq!(mixed[0], texture(&small)[0]);
        assert_eq!(mixed[2], texture(&big)[0]);
    }
}
