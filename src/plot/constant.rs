//! Constant-memory chart (the paper's Fig. 8): for one image size, each filter placement's
//! performance relative to the same API's constant-memory version, and the PR before and after,
//! drawn by [`super::relative`].

use super::relative::{self, Reference};
use super::{group_in_order, slug, ChartData};

/// The filter in constant memory is the reference.
const SPEC: Reference = Reference {
    name: "constant-memory",
    is_reference: |variant| variant == "constant",
    title: "Constant memory: performance relative to it",
    paper: &crate::paper::FANG_SOBEL_CONSTANT_PR,
};

pub(crate) fn figures(data: &ChartData) -> Vec<(String, super::hbar::HBarFigure)> {
    let rows = data
        .measurements
        .iter()
        .filter(|r| relative::usable(&data.catalog, "constant", r));
    let groups = group_in_order(rows, |r| {
        (r.run_id.clone(), r.study.clone(), r.size.clone())
    });
    let mut out = Vec::new();
    for ((run_id, study, size), rows) in groups {
        let prs = relative::prs_of(data, &run_id, &study, &rows);
        let prs: Vec<_> = prs.into_iter().filter(|p| p.size == size).collect();
        let subject = format!("sobel {size}, study {study}");
        if let Some(fig) = relative::figure(&SPEC, data, &run_id, &subject, &rows, &prs) {
            out.push((slug(&format!("{study}-sobel-{size}")), fig));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::tests::m;
    use crate::rows::MeasurementRow;

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
        assert!(figures(&data(&rows)).is_empty());
        rows.push(side("OpenCL", "sobel/constant", "constant", 700.0));
        rows.push(side("CUDA", "sobel/constant", "constant", 650.0));
        let figs = figures(&data(&rows));
        assert_eq!(figs.len(), 1);
        assert_eq!(figs[0].0, "constant-sobel-4096x4096");
    }
}
