//! A calibration's rows: each API's harness path against its plain loop, and the launch PR
//! through each (`calibration.csv`, `calibration-pr.csv`).

use serde::{Deserialize, Serialize};

/// The files a calibration writes into its folder (`clvscu calibrate`, or a runtime-bound run).
pub const CALIBRATION_CSV: &str = "calibration.csv";
pub const CALIBRATION_PR_CSV: &str = "calibration-pr.csv";

/// How far the APIs' overheads may differ before a runtime row is called into question.
pub const OVERHEAD_DIFF_LIMIT_US: f64 = 0.3;

/// One case across the two APIs: the launch PR (perf OpenCL / perf CUDA = time CUDA / time
/// OpenCL) through each path, and whether the harness puts more on one side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationPr {
    pub shape: String,
    pub batch: u32,
    pub wait: String,
    pub pr_harness: f64,
    pub pr_plain: f64,
    pub overhead_opencl_us: f64,
    pub overhead_cuda_us: f64,
    /// |OpenCL's overhead - CUDA's| above [`OVERHEAD_DIFF_LIMIT_US`].
    pub flagged: bool,
}

/// One API's case: the harness path and the plain loop, per launch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationRow {
    pub api: String,
    pub device: String,
    pub driver: String,
    pub shape: String,
    pub batch: u32,
    pub wait: String,
    /// The driver calls of the wait on this API.
    pub wait_calls: String,
    pub reps: usize,
    /// Median microseconds per launch, and the 95% bootstrap CI of the median.
    pub harness_us: f64,
    pub harness_ci_lo_us: f64,
    pub harness_ci_hi_us: f64,
    pub plain_us: f64,
    pub plain_ci_lo_us: f64,
    pub plain_ci_hi_us: f64,
    /// Harness minus plain, per launch.
    pub overhead_us: f64,
    /// Events the harness path asked the driver for, per launch (counted, not assumed).
    pub harness_events_per_launch: f64,
}
