//! Texture chart (the paper's Figs. 4 and 5): per input, each read path's performance relative
//! to the same API's texture version, and the PR before and after, drawn by [`super::relative`].
//! SpMV rows of one size may come from different matrices, which the rows do not record: the
//! input is the comparison name's stem (`spmv-uniform` of `spmv-uniform/scalar-tex`).

use super::relative::{self, Reference};
use super::{group_in_order, slug, ChartData};
use crate::rows::{MeasurementRow, ReadPath};

/// The texture version of each kernel is the reference.
const SPEC: Reference = Reference {
    name: "texture",
    is_reference: |variant| ReadPath::of(variant) == ReadPath::Tex,
    title: "Texture path: performance relative to it",
    paper: &crate::paper::FANG_TEXTURE,
};

/// The input a comparison ran on: its name before the last `/`, else its size.
fn input_of(r: &MeasurementRow) -> String {
    r.comparison
        .rsplit_once('/')
        .map_or_else(|| r.size.clone(), |(stem, _)| stem.to_string())
}

pub(crate) fn figures(data: &ChartData) -> Vec<(String, super::hbar::HBarFigure)> {
    let rows = data
        .measurements
        .iter()
        .filter(|r| relative::usable(&data.catalog, "texture", r));
    let groups = group_in_order(rows, |r| {
        (
            r.run_id.clone(),
            r.study.clone(),
            r.family,
            r.size.clone(),
            input_of(r),
        )
    });
    let mut out = Vec::new();
    for ((run_id, study, family, size, input), rows) in groups {
        let prs = relative::prs_of(data, &run_id, &study, &rows);
        let subject = format!("{} {input} {size}, study {study}", family.name());
        if let Some(fig) = relative::figure(&SPEC, data, &run_id, &subject, &rows, &prs) {
            out.push((slug(&format!("{study}-{input}-{size}")), fig));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::tests::m;
    use crate::rows::{Api, PrRow};

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
        let figs = figures(&data(true));
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
        let spec = &SPEC;
        let rel = |cmp: &str, api: Api| {
            let r = find(cmp, api);
            r.metric
                / relative::reference_of(&d.catalog, spec, &rows, r)
                    .unwrap()
                    .metric
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
        let figs = figures(&d);
        assert_eq!(figs.len(), 1);
        assert!(figs[0].0.contains("banded"));
        let mut d = d;
        d.measurements
            .retain(|r| !r.comparison.starts_with("spmv-banded"));
        assert!(figures(&d).is_empty());
        assert!(figures(&crate::plot::tests::registered()).is_empty());
    }
}
