//! Vendor-library baselines (`baselines.csv`, written by `scripts/baselines.py` beside the run
//! folders of a GPU call) and the ratio of our best kernel to each, as `scripts/report.py`
//! computes them: the best verified, non-swept measurement of the family at the baseline's
//! size, per API, over the baseline's GB/s.

use std::path::Path;

use serde::Deserialize;

use crate::export::csv::read_rows;
use crate::record::{Api, FamilyKind, MeasurementRow, Metric, Status};

use super::ReportError;

/// The file name the GPU scripts give the baselines.
pub const FILE: &str = "baselines.csv";

/// One vendor-library measurement.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct BaselineRow {
    /// `sgemv`, `sum` or `copy`.
    pub baseline: String,
    /// The library and how it was called, e.g. `cuBLAS SGEMV via torch.mv`.
    pub library: String,
    pub size: String,
    pub bytes: u64,
    pub median_ms: f64,
    pub min_ms: f64,
    pub reps: u32,
    pub gbs: f64,
}

pub fn read(path: &Path) -> Result<Vec<BaselineRow>, ReportError> {
    Ok(read_rows(path)?)
}

/// Which of our kernels a baseline stands against: its family, and the variant when only one
/// variant does the same work (a copy is measured against the bandwidth `read` kernel).
fn target(baseline: &str) -> Option<(FamilyKind, Option<&'static str>)> {
    match baseline {
        "sgemv" => Some((FamilyKind::Matvec, None)),
        "sum" => Some((FamilyKind::Reduce, None)),
        "copy" => Some((FamilyKind::Bandwidth, Some("read"))),
        _ => None,
    }
}

/// Our best kernel of one API against one baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct BaselineRatio {
    pub baseline: BaselineRow,
    pub api: Api,
    pub study: String,
    pub comparison: String,
    pub ours_gbs: f64,
    /// `ours_gbs / baseline.gbs`: above 1 our kernel moved bytes faster than the library.
    pub ratio: f64,
}

/// Ratios of the best verified GB/s measurement per (baseline, API) among `rows`.
pub fn ratios(baselines: &[BaselineRow], rows: &[&MeasurementRow]) -> Vec<BaselineRatio> {
    let mut out = Vec::new();
    for b in baselines {
        let Some((family, variant)) = target(&b.baseline) else {
            continue;
        };
        for api in [Api::OpenCl, Api::Cuda] {
            let best = rows
                .iter()
                .filter(|m| {
                    m.status == Status::Ok
                        && m.metric_unit == Metric::Bandwidth
                        && m.api == api
                        && m.family == family
                        && m.size == b.size
                        && m.sweep_param.is_empty()
                        && variant.is_none_or(|v| m.variant == v)
                })
                .max_by(|x, y| x.metric.total_cmp(&y.metric));
            if let Some(m) = best {
                out.push(BaselineRatio {
                    baseline: b.clone(),
                    api,
                    study: m.study.clone(),
                    comparison: m.comparison.clone(),
                    ours_gbs: m.metric,
                    ratio: m.metric / b.gbs,
                });
            }
        }
    }
    out
}
