//! The vendor baselines' rows (`baselines.csv`, written by the suite's Python script beside a
//! run): the row and its reader, below the report and the charts that both read them.

use std::path::Path;

use serde::Deserialize;

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
    /// GFLOP/s, for the compute-bound baselines (SGEMM); absent in files written before it.
    #[serde(default)]
    pub gflops: Option<f64>,
}

/// Reads the file by column name, so files with and without the `gflops` column both load.
pub fn read(path: &Path) -> std::io::Result<Vec<BaselineRow>> {
    let bad = |e: csv::Error| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string());
    let mut reader = csv::Reader::from_path(path).map_err(bad)?;
    reader
        .deserialize()
        .collect::<Result<Vec<BaselineRow>, _>>()
        .map_err(bad)
}
