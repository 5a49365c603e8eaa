//! Vendor-library baselines (`baselines.csv`, written by `baselines/baselines.py` beside the run
//! folders of a GPU call) and the ratio of our best kernel to each, as `scripts/report.py`
//! computes them: the best verified, non-swept measurement of the family at the baseline's
//! size, per API, over the baseline's GB/s.

use crate::rows::{Api, BaselineRow, Catalog, MeasurementRow, Metric, Status};

/// Our best kernel of one API against one baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct BaselineRatio {
    pub baseline: BaselineRow,
    pub api: Api,
    pub study: String,
    pub comparison: String,
    /// Our best metric, in `unit`.
    pub ours: f64,
    /// The library's, in `unit` (GB/s, or GFLOP/s for SGEMM).
    pub theirs: f64,
    pub unit: Metric,
    /// `ours / theirs`: above 1 our kernel was faster than the library.
    pub ratio: f64,
}

/// Ratios of the best verified GB/s measurement per (baseline, API) among `rows`. Which of our
/// kernels a baseline stands against is the catalog's word: its family, and the variant when
/// only one does the same work (a copy against the bandwidth `read` kernel).
pub fn ratios(
    catalog: &Catalog,
    baselines: &[BaselineRow],
    rows: &[&MeasurementRow],
) -> Vec<BaselineRatio> {
    let mut out = Vec::new();
    for b in baselines {
        let Some((family, variant)) = catalog.vendor_target(&b.baseline) else {
            continue;
        };
        // A compute-bound baseline is compared in GFLOP/s, the others in GB/s.
        let (metric, theirs) = match b.gflops {
            Some(g) if family.metric() == Metric::Flops => (Metric::Flops, g),
            _ => (Metric::Bandwidth, b.gbs),
        };
        for api in [Api::OpenCl, Api::Cuda] {
            let best = rows
                .iter()
                .filter(|m| {
                    m.status == Status::Ok
                        && m.metric_unit == metric
                        && m.api == api
                        && m.family == family
                        && m.size == b.size
                        && m.sweep_param.is_empty()
                        && variant.is_none_or(|v| m.variant == v)
                        // A one-launch experiment on part of a variant (reduce's first pass
                        // leaves partial sums) is not a whole operation, so never the
                        // family's best against a library's.
                        && !catalog.is_experiment(m.family, &m.variant)
                })
                .max_by(|x, y| x.metric.total_cmp(&y.metric));
            if let Some(m) = best {
                out.push(BaselineRatio {
                    baseline: b.clone(),
                    api,
                    study: m.study.clone(),
                    comparison: m.comparison.clone(),
                    ours: m.metric,
                    theirs,
                    unit: metric,
                    ratio: m.metric / theirs,
                });
            }
        }
    }
    out
}
