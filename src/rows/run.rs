//! A run's rows: one measurement per (configuration, API), one PR per comparison, every raw
//! sample, each comparison's phase times and each pass of a repeated run, with the names of
//! their CSV files. Plain data, so that any past run can be re-read and re-plotted.

use serde::{Deserialize, Serialize};

use super::words::{Api, FamilyId, Metric, Side, Status, TimerKind, WaitMode};

/// The CSV files of a run folder: every reader and the writer take the names from here.
pub const MEASUREMENTS_CSV: &str = "measurements.csv";
pub const PRS_CSV: &str = "prs.csv";
pub const SAMPLES_CSV: &str = "samples.csv";
pub const TIMINGS_CSV: &str = "timings.csv";
pub const PASSES_CSV: &str = "passes.csv";

/// One comparison's rows: a measurement row per side, the timed sides' samples, a PR of two.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ComparisonRows {
    pub measurements: Vec<MeasurementRow>,
    pub samples: Vec<SampleRow>,
    pub pr: Option<PrRow>,
}

/// One row per (configuration, API): everything needed to reproduce and to chart it. A column
/// with a serde default is missing (read as empty, or as stated) in files written before it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasurementRow {
    /// Identifier of the run (date + short commit) that produced the row.
    pub run_id: String,
    /// Study name (`default`, `whitepaper-table1`, ...).
    pub study: String,
    /// Comparison key, unique within a study: `--resume` skips keys already present.
    pub comparison: String,
    pub api: Api,
    pub device: String,
    pub platform: String,
    pub driver: String,
    pub api_version: String,
    pub family: FamilyId,
    pub variant: String,
    /// Human-readable problem size, e.g. `60989x1100` or `268435456`.
    pub size: String,
    /// Number of elements that the problem touches (rows*cols for matvec, n for reductions).
    pub elements: u64,
    pub local_size: u32,
    pub groups: u32,
    pub global_size: u64,
    /// Work-group size in y (1 for a 1-D launch, and read as 1 where missing).
    #[serde(default = "one")]
    pub local_y: u32,
    /// Work-groups in y (1 for a 1-D launch).
    #[serde(default = "one")]
    pub groups_y: u32,
    /// Unroll factors per unroll point, `A=4;B=none`.
    pub unroll: String,
    /// Compiler flags given to this API's compiler.
    pub flags: String,
    pub timer: TimerKind,
    pub warmup: u32,
    pub reps: u32,
    pub median_s: f64,
    pub min_s: f64,
    pub mean_s: f64,
    pub mad_s: f64,
    pub ci_lo_s: f64,
    pub ci_hi_s: f64,
    pub outliers: u32,
    /// Performance metric at the median time (higher is better).
    pub metric: f64,
    pub metric_unit: Metric,
    /// Metric at the CI bounds of the median time (lo from the slow end).
    pub metric_ci_lo: f64,
    pub metric_ci_hi: f64,
    pub bytes: u64,
    pub flops: u64,
    /// Theoretical peak bandwidth of the device (paper Eq. 2), GB/s; empty when unknown (a
    /// CPU device reports no memory clock). Older files wrote 0 for unknown: readers treat a
    /// peak that is not positive as unknown too.
    pub peak_gbs: Option<f64>,
    pub verified: bool,
    pub max_error: f64,
    pub status: Status,
    /// Error text for failed rows (build log, limit, max error), empty otherwise.
    pub error: String,
    /// Sweep parameter name (`local_size`, `groups`, `size`, `unroll`), empty outside sweeps.
    pub sweep_param: String,
    pub sweep_value: String,
    /// How the host waited for completion: inside the wall clock.
    #[serde(default)]
    pub wait_mode: Option<WaitMode>,
    /// OpenCL profiling, median `SUBMIT - QUEUED` and `START - SUBMIT` in seconds (the
    /// first launch of a multi-launch run). Empty for CUDA, which has no such timestamps.
    #[serde(default)]
    pub queued_to_submit_s: Option<f64>,
    #[serde(default)]
    pub submit_to_start_s: Option<f64>,
    /// Timed repetitions this side ran in a row before the runner turned to the other side
    /// (the first of each turn untimed when above 1).
    #[serde(default)]
    pub turn: Option<u32>,
    /// Levels of one run of a level-by-level family (BFS: the depth of the search, the source's
    /// level included), from the CPU reference the run matched; empty for other families.
    #[serde(default)]
    pub levels: Option<u64>,
    /// Whose front end made the program this side ran (`CUDA`: NVRTC): the side's own API, or
    /// the other one's with study key `program = "other"`.
    #[serde(default)]
    pub front_end: Option<Api>,
    /// The API's work-group limit for this kernel (`CL_KERNEL_WORK_GROUP_SIZE`,
    /// `CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`): recorded, never checked (the driver alone
    /// refuses a launch). Empty where the kernel was not built.
    #[serde(default)]
    pub kernel_work_group_limit: Option<u32>,
    /// Registers per work-item of the side's kernel as its second stage assembled it (CUDA:
    /// the driver's attribute; NVIDIA's OpenCL: ptxas's line in the build log); empty where
    /// the API does not say.
    #[serde(default)]
    pub registers: Option<u32>,
    /// Local (spill / private) memory per work-item and static shared (OpenCL: local) memory
    /// per work-group, in bytes, as the API reports them.
    #[serde(default)]
    pub spill_bytes: Option<u64>,
    #[serde(default)]
    pub shared_bytes: Option<u64>,
}

impl MeasurementRow {
    /// The row's metric for a time of `seconds` (its work over the time; NaN for no time).
    pub fn metric_at(&self, seconds: f64) -> f64 {
        if seconds > 0.0 {
            self.metric_unit.work(self.bytes, self.flops) / seconds
        } else {
            f64::NAN
        }
    }
}

/// One row per comparison: the Performance Ratio and the fairness verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrRow {
    pub run_id: String,
    pub study: String,
    pub comparison: String,
    /// The device of side A (OpenCL) and side B (CUDA or a second OpenCL device).
    pub device_a: String,
    pub device_b: String,
    pub api_a: Api,
    pub api_b: Api,
    pub family: FamilyId,
    pub variant: String,
    pub size: String,
    pub local_size: u32,
    pub groups: u32,
    pub metric_unit: Metric,
    pub metric_a: f64,
    pub metric_b: f64,
    /// PR = perf(A) / perf(B), with A = OpenCL and B = CUDA in an OpenCL-vs-CUDA study.
    pub pr: f64,
    pub pr_ci_lo: f64,
    pub pr_ci_hi: f64,
    /// The CI of PR lies inside [0.9, 1.1] (the paper's band).
    pub similar: bool,
    /// The CI of PR lies inside [0.95, 1.05].
    pub similar_tight: bool,
    /// All eight steps were held equal.
    pub fair: bool,
    /// `step: a vs b` entries for every differing step, `;`-separated; empty when fair.
    pub differing_steps: String,
    /// The timer of both sides, or `a vs b` where they differ (an unfair timing step).
    pub timer: String,
    pub sweep_param: String,
    pub sweep_value: String,
}

impl PrRow {
    /// The entries of `differing_steps` (`step: a vs b`), trimmed, empty ones dropped.
    pub fn steps(&self) -> impl Iterator<Item = &str> {
        self.differing_steps
            .split(';')
            .map(str::trim)
            .filter(|s| !s.is_empty())
    }
}

/// One raw timing sample, kept so statistics and charts can always be recomputed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleRow {
    pub run_id: String,
    pub comparison: String,
    /// `A` or `B`: which side of the comparison (both can be the same API and device).
    pub side: Side,
    pub api: Api,
    pub timer: TimerKind,
    pub rep: u32,
    pub seconds: f64,
}

/// What `merge` checks before it writes anything: a row's identity within a set of runs (two
/// rows with one key are one row twice), and every value no real run writes, named.
pub trait RowCheck {
    fn key(&self) -> String;
    fn problems(&self) -> Vec<String>;
}

/// Each named value that is not a positive number, as `name = value`.
fn not_positive(values: &[(&str, f64)]) -> Vec<String> {
    values
        .iter()
        .filter(|(_, v)| !(v.is_finite() && *v > 0.0))
        .map(|(name, v)| format!("{name} = {v}"))
        .collect()
}

impl RowCheck for MeasurementRow {
    fn key(&self) -> String {
        // Rows carry no side: two sides of one API and device differ in their timings.
        format!(
            "run {} comparison {} {} on {} (median {:e} s)",
            self.run_id, self.comparison, self.api, self.device, self.median_s
        )
    }

    fn problems(&self) -> Vec<String> {
        if self.status != Status::Ok {
            return Vec::new();
        }
        let mut out = not_positive(&[("metric", self.metric), ("median_s", self.median_s)]);
        if !self.verified {
            out.push("status ok but verified = false".into());
        }
        out
    }
}

impl RowCheck for PrRow {
    fn key(&self) -> String {
        format!("run {} comparison {}", self.run_id, self.comparison)
    }

    fn problems(&self) -> Vec<String> {
        let mut out = not_positive(&[
            ("pr", self.pr),
            ("metric_a", self.metric_a),
            ("metric_b", self.metric_b),
        ]);
        if self.pr.is_finite() && !(self.pr_ci_lo <= self.pr && self.pr <= self.pr_ci_hi) {
            out.push(format!(
                "pr {} outside its CI [{}, {}]",
                self.pr, self.pr_ci_lo, self.pr_ci_hi
            ));
        }
        out
    }
}

impl RowCheck for SampleRow {
    fn key(&self) -> String {
        format!(
            "run {} comparison {} side {} {} rep {}",
            self.run_id, self.comparison, self.side, self.timer, self.rep
        )
    }

    fn problems(&self) -> Vec<String> {
        not_positive(&[("seconds", self.seconds)])
    }
}

/// The y extent of a 1-D launch, for columns older files lack.
fn one() -> u32 {
    1
}

/// One comparison's phases, as `timings.csv` holds them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimingRow {
    pub comparison: String,
    pub inputs_s: f64,
    pub build_s: f64,
    pub verify_s: f64,
    pub warmup_s: f64,
    pub timed_s: f64,
    pub total_s: f64,
}

/// One pass of a repeated run and the process's resources right after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PassRow {
    pub pass: u32,
    pub seconds: f64,
    pub measurements_ok: usize,
    pub failed: usize,
    /// Resident set size in KiB (Linux `/proc/self/status` VmRSS) and open file descriptors
    /// (`/proc/self/fd`); empty elsewhere.
    pub resident_kib: Option<u64>,
    pub open_fds: Option<u64>,
}
