//! The vendor baselines' rows (`baselines.csv`, written by the suite's Python script beside a
//! run), which the report and the charts both read.

use serde::{Deserialize, Serialize};

/// The file name the GPU scripts give the baselines.
pub const BASELINES_CSV: &str = "baselines.csv";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// GFLOP/s, for the compute-bound baselines (SGEMM); absent in files written before it.
    #[serde(default)]
    pub gflops: Option<f64>,
}
