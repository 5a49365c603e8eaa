//! Command-line interface (clap derive).

use std::path::PathBuf;

use clap::builder::TypedValueParser;
use clap::{Args, Parser, Subcommand};
use clvscu::kernels::KernelSources;
use clvscu::suite::Plan;

/// Exit codes, documented in `--help` and the README.
pub const EXIT_HELP: &str = "Exit codes: 0 success; 1 error (bad input, missing device, I/O); \
2 usage error; 3 finished, but some configuration failed to build, launch or verify; \
4 a launch hung past its watchdog limit (--timeout) and the run was stopped; \
5 diff --fail-on-regression found a regression; \
130 interrupted (finished comparisons are kept on disk; rerun with --resume). \
With --cuda-device all, the most serious of the GPUs' codes: 1 (a GPU's error, or its process \
killed), then 2, 4, 130, 5, 3, 0.";

#[derive(Debug, Parser)]
#[command(name = "clvscu", version, about = "Is OpenCL slower than CUDA on this GPU, and if so, why? \
A fair-comparison harness after Fang, Varbanescu & Sips (2011).", after_help = EXIT_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args, Clone, Default)]
pub struct DeviceArgs {
    /// OpenCL device: index in `clvscu devices`, `PLATFORM:DEVICE`, `pci:BUS`, `cpu` (the
    /// first device that is not a GPU) or a name substring (default: the first GPU, else the
    /// first device).
    #[arg(long, value_parser = device_selector)]
    pub cl_device: Option<String>,
    /// CUDA device: index or name substring (default: 0); `all` runs the command (`run` or
    /// `suite`) on every CUDA GPU at the same time, one process each, each paired with the
    /// OpenCL device at its PCI bus, into one folder per GPU under --out, then one report
    /// over every GPU there (report.md, index.html).
    #[arg(long, value_parser = device_selector)]
    pub cuda_device: Option<String>,
    /// Read kernels from DIR/kernels_cl and DIR/kernels_cu instead of the embedded copies.
    #[arg(long, value_name = "DIR")]
    pub kernels_dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Pairing {
    /// Side A OpenCL, side B CUDA (the default).
    OpenclCuda,
    /// Both sides OpenCL (two devices, or one device against itself): a check of the harness.
    OpenclOpencl,
    /// OpenCL only: no PR.
    Opencl,
    /// CUDA only: no PR.
    Cuda,
    /// Two fake devices with scripted timings and no GPU: for demos and tests of the
    /// harness itself; every row names the fake device.
    #[value(hide = true)]
    Fake,
}

/// The APIs `tune` can tune: each API's best of a space, so never OpenCL against OpenCL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TunePairing {
    /// Both APIs (the default; one alone when the other is missing).
    OpenclCuda,
    /// OpenCL only.
    Opencl,
    /// CUDA only.
    Cuda,
    /// Two fake devices with scripted timings (tests of the harness itself).
    #[value(hide = true)]
    Fake,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List every OpenCL platform/device and CUDA device, with the Eq. 2 peak bandwidth.
    Devices,
    /// List the built-in studies.
    Studies,
    /// List every kernel family and its variants: kernel name, work-group range, default
    /// work-group count, unroll points and what each variant is.
    Families,
    /// Run a study (default: the short `default` study) and write CSV, JSON, Markdown, charts.
    Run(Box<RunArgs>),
    /// The harness's own launch cost on each API, held against a plain loop of the driver's
    /// calls in the same process: per wait mode, one at a time and back to back, 1 x 1 and a
    /// grid sweep; writes calibration.csv, calibration-pr.csv and calibration.md.
    Calibrate(CalibrateArgs),
    /// `matvec/auto`'s decision table from a shape sweep (the `shape-sweep` study's folder,
    /// baselines.csv beside it): per device, the variant that won each measured shape, written
    /// as OUT/matvec-auto-<device>.toml (harness/rules/ builds it into the binary; the
    /// CLVSCU_MATVEC_RULES variable names one to read at run time), and auto's checks against
    /// cuBLAS SGEMV beyond the L2 and the read kernel at 2^28 floats (checks.md).
    ShapesRule {
        /// The sweep folder (run folders below it are read too).
        sweep: PathBuf,
        /// Folder the tables and checks.md are written to (created).
        #[arg(long, default_value = "harness/rules")]
        out: PathBuf,
    },
    /// Search each API's best configuration of a kernel; best-vs-best beside same-config PR.
    Tune(Box<TuneArgs>),
    /// Why a fair PR is away from 1: runs each target's ladder of one-step experiments (PTX
    /// swap, register limit, carveout, index width, unroll, fast math, the other clock) on the
    /// same GPU and names the cause; writes explain.csv, explain-verdicts.csv, explain.md and
    /// a waterfall chart per target.
    Explain(Box<ExplainArgs>),
    /// Reproduce the papers on the GPU at hand: the curated studies (whitepaper Table 1, peaks
    /// against Eq. 2 and Eq. 3, every application fair, one step at a time, compiler, memory
    /// spaces, runtime, BFS, transfers, sweeps, fill, shapes), calibration, Table V's PTX,
    /// vendor baselines (python3 with torch), `explain` of the fair gaps, then one report;
    /// each step a child process under a time cap (the caps and the report fit in ten minutes on
    /// an H100, where every step finishes inside its cap; a step may also use what the steps
    /// before it left of theirs; a step stopped at its cap keeps what finished and `--resume`
    /// goes on). The full suite leaves BFS's 2^24-vertex graphs to
    /// `clvscu run --study bfs`.
    Suite(SuiteArgs),
    /// Diff every OpenCL kernel against its CUDA twin after normalising API spellings.
    Parity {
        #[command(flatten)]
        devices: DeviceArgs,
    },
    /// Draw every chart the data allows from result CSVs.
    Plot {
        /// measurements.csv / prs.csv files (or directories holding them).
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Folder the charts are written to (created).
        #[arg(long, default_value = "charts")]
        out: PathBuf,
    },
    /// Join result CSVs of the same kind from several runs or machines: files, or folders
    /// (trees of run folders, one per node or GPU) whose files named like the output are joined.
    Merge {
        /// CSV files of one kind, or folders of run folders.
        #[arg(required = true, num_args = 1..)]
        inputs: Vec<PathBuf>,
        /// The joined file; with folders as inputs its name (measurements.csv, prs.csv or
        /// samples.csv) says which file of each run folder is joined.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// PTX of both sides for every kernel pair, instruction classes side by side (Table V).
    Inspect(InspectArgs),
    /// report.md (and an HTML report) from every run folder under DIRs, grouped per GPU:
    /// measurements, PR with CI, fairness, vendor-baseline ratios, charts.
    Report(ReportArgs),
    /// How the PR and each side's metric moved from the runs under OLD to those under NEW,
    /// with significance from the raw samples (Markdown; --out also writes diff.md, diff.csv).
    Diff(DiffArgs),
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Run folders, or trees of them (one per node or GPU); with --findings, the suite
    /// folders (`clvscu suite --out DIR`) to set side by side.
    #[arg(required = true, value_name = "DIR")]
    pub inputs: Vec<PathBuf>,
    /// Folder report.md (and the HTML report) and its charts are written to (default:
    /// clvscu-report); with --findings, the folder findings.md and its headline chart are
    /// written to (default: docs), never one of the inputs.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Also write index.html, linking one page per run folder with its tables and charts
    /// (SVG files beside the pages).
    #[arg(long, conflicts_with = "findings")]
    pub html: bool,
    /// Write findings.md: every experiment of the seed papers with the published result
    /// and each suite folder's answer, side by side, and a headline PR chart of them.
    #[arg(long)]
    pub findings: bool,
    /// With --findings: also regenerate the headline block of this README.
    #[arg(long, requires = "findings", value_name = "README")]
    pub readme: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The earlier run folder, or a tree of them.
    pub old: PathBuf,
    /// The later run folder, or a tree of them.
    pub new: PathBuf,
    /// Also write diff.md and diff.csv into this folder.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Relative changes within this many percent are no change.
    #[arg(long, default_value_t = 2.0, value_name = "PERCENT")]
    pub noise: f64,
    /// Exit with code 5 when NEW is worse than OLD (for CI jobs): a PR or side's metric
    /// regressed, a side fails that did not (ok → verify-failed, or a new comparison that
    /// fails), or a comparison of OLD is missing from NEW.
    #[arg(long)]
    pub fail_on_regression: bool,
}

#[derive(Debug, Args, Clone)]
pub struct SuiteArgs {
    /// Output folder (default: clvscu-results/suite-<UTC timestamp>): a run folder per step,
    /// suite.csv (each step's outcome), peaks.md, report.md, report.html, logs/.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The same studies at small sizes with few repetitions: about two minutes on a GPU.
    #[arg(long)]
    pub quick: bool,
    /// Continue a suite in --out: finished steps are skipped, a step stopped at its cap or by
    /// Ctrl-C goes on from its last finished comparison.
    #[arg(long, requires = "out")]
    pub resume: bool,
    /// What the suite runs: `paper`, the papers' experiments; `matvec-rule`, matvec/auto's
    /// decision table measured on this GPU (the shape sweep, cuBLAS SGEMV at its shapes, the
    /// table, auto with it and with the binary's own, the checks; about five minutes on an
    /// H100), in the layout `clvscu shapes-rule` reads.
    #[arg(long, default_value = "paper", value_parser = plan_parser())]
    pub plan: Plan,
    // The help lists each plan's steps from the plan itself ([`steps_help`]).
    #[arg(long, value_delimiter = ',', value_name = "LIST", help = steps_help())]
    pub steps: Vec<String>,
    /// Which APIs form the two sides, as for `run`.
    #[arg(long, value_enum)]
    pub pair: Option<Pairing>,
    /// Multiply every step's time cap by this (the caps are set for an H100: a slower device,
    /// such as a CPU's OpenCL, needs more).
    #[arg(long, default_value_t = 1.0, value_name = "FACTOR", value_parser = positive_factor)]
    pub cap_scale: f64,
    /// The watchdog's limit for any one launch, in seconds, as for `run`.
    #[arg(long, value_name = "SECONDS", value_parser = positive_seconds)]
    pub timeout: Option<f64>,
    #[command(flatten)]
    pub devices: DeviceArgs,
}

/// The help of `suite --steps`: each plan's steps, in the order the plan runs them.
fn steps_help() -> String {
    let list = |plan: Plan| {
        let names: Vec<&str> = plan.steps().iter().map(|s| s.name).collect();
        format!("{} plan's: {}", plan.name(), names.join(", "))
    };
    let (paper, rule) = (list(Plan::Paper), list(Plan::MatvecRule));
    format!("Run only these steps (comma-separated). The {paper}; the {rule}.")
}

fn plan_parser() -> impl TypedValueParser<Value = Plan> {
    const PLANS: [Plan; 2] = [Plan::Paper, Plan::MatvecRule];
    clap::builder::PossibleValuesParser::new(PLANS.map(Plan::name)).map(|name| {
        PLANS
            .into_iter()
            .find(|p| p.name() == name)
            .unwrap_or_default()
    })
}

#[derive(Debug, Args, Clone)]
pub struct CalibrateArgs {
    /// Output folder (created; nothing is written outside it).
    #[arg(long, default_value = "clvscu-calibration")]
    pub out: PathBuf,
    /// 1 x 1 only, fewer repetitions: a pass of seconds, and what a CPU device can afford.
    #[arg(long)]
    pub quick: bool,
    /// Which APIs to calibrate (default: both; one side alone when the other is missing).
    #[arg(long, value_enum, default_value = "opencl-cuda")]
    pub pair: Pairing,
    #[command(flatten)]
    pub devices: DeviceArgs,
}

#[derive(Debug, Args, Clone)]
pub struct ExplainArgs {
    /// What runs: TARGET (FAMILY/VARIANT with --size and the other options, a study's name or
    /// file, or a run folder: its fair PRs outside [0.98, 1.02], all of them with --all) or
    /// --study; --out, --resume, --only, --timeout and the device options as for `run`.
    #[command(flatten)]
    pub run: RunArgs,
    /// With a run folder as TARGET: every fair comparison in it, not only those outside
    /// [0.98, 1.02].
    #[arg(long)]
    pub all: bool,
    /// Run nothing: the verdicts again from an explain folder's rungs (its ladder and
    /// follow-up folders).
    #[arg(long, value_name = "DIR", conflicts_with = "all")]
    pub from: Option<PathBuf>,
    /// The part of the ladder this process runs: `ladder` (every pass but the NVRTC-PTX rungs)
    /// or one NVRTC-PTX-on-OpenCL rung. explain runs each part in a process of its own and
    /// holds no device itself: NVIDIA's OpenCL can break a process's context for good, and
    /// hides its device from other processes while one holds it.
    #[arg(long, hide = true, requires = "out", value_name = "PART")]
    pub part: Option<String>,
    /// Run folders whose fair gaps get the machine code each runtime runs read and compared,
    /// without rungs: every gap of a suite gets at least its largest machine-code difference
    /// (repeatable).
    #[arg(long, value_name = "DIR", conflicts_with = "from")]
    pub machine_code_for: Vec<PathBuf>,
    /// With a run folder as TARGET: run the ladder on the N gaps farthest from parity only;
    /// the others get their machine code read and their calls replayed, without rungs
    /// (1 to 10000).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub max_targets: Option<u32>,
    /// Seconds the machine-code part may spend building before it records the remaining
    /// targets as not read (1 to 3600; default 40).
    #[arg(long, value_name = "S", value_parser = clap::value_parser!(u32).range(1..=3600))]
    pub code_budget: Option<u32>,
    /// Leave out ncu's hardware counters (the profile part), where ncu is at hand.
    #[arg(long)]
    pub no_profile: bool,
}

#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// Run one kernel (FAMILY/VARIANT) or a family's variants (FAMILY) from the command line
    /// instead of a study; the options below set its parameters, and the study this makes is
    /// saved as study.toml in the output folder.
    #[arg(value_name = "FAMILY/VARIANT", conflicts_with = "study")]
    pub target: Option<String>,
    /// A built-in study name (see `clvscu studies`) or a path to a study .toml file
    /// (default: the study `default`).
    #[arg(long)]
    pub study: Option<String>,
    /// Work-group sizes: a list (64,128,256) or a doubling range (64..1024).
    #[arg(long, requires = "target", value_name = "LIST")]
    pub local: Option<String>,
    /// Problem sizes: ROWSxCOLS, N or 2^K; a list or a doubling range (2^10..2^20).
    #[arg(long, requires = "target", value_name = "LIST")]
    pub size: Option<String>,
    /// Work-group counts: a list or a doubling range (default: the variant's rule).
    #[arg(long, requires = "target", value_name = "LIST")]
    pub groups: Option<String>,
    /// Index widths: u32, u64, native (a list).
    #[arg(long, requires = "target", value_name = "LIST")]
    pub index: Option<String>,
    /// Timed repetitions at least.
    #[arg(long, requires = "target")]
    pub reps: Option<u32>,
    /// Warm-up runs before timing.
    #[arg(long, requires = "target")]
    pub warmup: Option<u32>,
    /// Seconds of timing per side at least.
    #[arg(long, requires = "target", value_name = "SECONDS", value_parser = a_number)]
    pub min_time: Option<f64>,
    /// device-event or wall-clock.
    #[arg(long, requires = "target")]
    pub timer: Option<String>,
    /// Seconds of timing a comparison may add past its minimum while its PR's CI is too
    /// wide to decide (default 2; overrides the study's `max_time`).
    #[arg(long, value_name = "SECONDS", value_parser = a_number)]
    pub max_time: Option<f64>,
    /// The PR's CI half-width, as a share of the PR, that ends the timing once the CI
    /// decides (default 0.05; 0: stop at the minimum; overrides the study's `target_ci`).
    #[arg(long, value_name = "SHARE", value_parser = a_number)]
    pub target_ci: Option<f64>,
    /// Output directory (default: clvscu-results/<study>-<UTC timestamp>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Also write the run's PR and measurement rows as one JSON document to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// Also write the run's PR rows as CSV (the columns of prs.csv) to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,
    /// Also write the run's PR and measurement tables as Markdown to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,
    /// Also show one-step experiments (single launches of a multi-launch kernel) in the
    /// table printed at the end; the files always hold them.
    #[arg(long)]
    pub show_experiments: bool,
    /// Continue an interrupted run in --out: skip comparisons already on disk.
    #[arg(long, requires = "out")]
    pub resume: bool,
    /// Start afresh in --out: the run folder there (and its results) is deleted first, as
    /// `report` and `plot` replace what they write. Only a folder a run wrote is deleted.
    #[arg(long, requires = "out", conflicts_with = "resume")]
    pub force: bool,
    /// Do not draw charts at the end.
    #[arg(long)]
    pub no_plot: bool,
    /// No progress bar and no line per comparison; the tables at the end still print.
    #[arg(long, short)]
    pub quiet: bool,
    /// Which APIs form the two sides [default: opencl-cuda; without CUDA, OpenCL against
    /// itself on the one OpenCL device: the harness's noise floor].
    #[arg(long, value_enum)]
    pub pair: Option<Pairing>,
    /// Side B's OpenCL device with --pair opencl-opencl (default: the same as side A).
    #[arg(long, value_parser = device_selector)]
    pub cl_device_b: Option<String>,
    /// Run only comparisons whose name contains this text.
    #[arg(long)]
    pub only: Option<String>,
    /// Leave out comparisons whose name contains this text (repeatable; after --only).
    #[arg(long, value_name = "TEXT")]
    pub skip: Vec<String>,
    /// Also run the study this many times in one process (soak; rows of every pass kept),
    /// at most 1000000 (the most repetitions a study may ask for).
    #[arg(long, default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(clvscu::study::MAX_REPS)))]
    pub passes: u32,
    /// The watchdog's limit for any one launch, in seconds, over the study's `timeout`
    /// (default: 120 s for a configuration's first launch, then 100 times what it took, at
    /// least 10 s). A launch past it ends the run with exit code 4.
    #[arg(long, value_name = "SECONDS", value_parser = positive_seconds)]
    pub timeout: Option<f64>,
    #[command(flatten)]
    pub devices: DeviceArgs,
}

impl RunArgs {
    pub fn exports(&self) -> impl Iterator<Item = (&'static str, &Option<PathBuf>)> {
        [
            ("--export-json", &self.export_json),
            ("--export-csv", &self.export_csv),
            ("--export-markdown", &self.export_markdown),
        ]
        .into_iter()
    }
}

/// A device selector: an empty one would match every device as a name substring.
fn device_selector(text: &str) -> Result<String, &'static str> {
    match text.trim() {
        "" => Err(
            "an empty device selector matches every device; give an index, \
                   PLATFORM:DEVICE, pci:BUS or part of a name (see `clvscu devices`)",
        ),
        _ => Ok(text.to_string()),
    }
}

/// A week in seconds: the longest search budget, and the most `--cap-scale` multiplies the caps
/// by (the bound it had when read as seconds).
const WEEK_S: f64 = 7.0 * 24.0 * 3600.0;

/// A search budget in seconds: positive and at most a week (`--budget-s`).
fn budget_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= WEEK_S => Ok(v),
        Ok(v) if v > WEEK_S => Err(format!(
            "{v:e} s is more than a week ({WEEK_S} s), the longest search budget"
        )),
        _ => Err(format!("'{text}' is not a positive number of seconds")),
    }
}

fn positive_factor(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= WEEK_S => Ok(v),
        _ => Err(format!(
            "'{text}' is not a factor above 0 and at most {WEEK_S}"
        )),
    }
}

/// A number, NaN refused: written into a command-line run's study text, a NaN would fail there
/// as a line of TOML the user never saw; the study's own checks name every other bad value.
fn a_number(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if !v.is_nan() => Ok(v),
        _ => Err(format!("'{text}' is not a number")),
    }
}

pub(crate) fn positive_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => clvscu::study::check_timeout(v)
            .map(|()| v)
            .map_err(|e| e.to_string()),
        _ => Err(format!("'{text}' is not a positive number of seconds")),
    }
}

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// Output directory for PTX files and the class tables.
    #[arg(long, default_value = "clvscu-inspect")]
    pub out: PathBuf,
    /// NVRTC target when no CUDA device is present.
    #[arg(long, default_value = "compute_90")]
    pub arch: String,
    /// Work-group size define used for compilation.
    // 0 would compile kernels with zero-length shared arrays: refused here, as a usage error.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..))]
    pub local: u32,
    /// Also assemble both sides' PTX with the CUDA driver's JIT and count the machine code
    /// (SASS, through cuobjdump) by class: needs a CUDA device and the CUDA toolkit's cuobjdump.
    #[arg(long)]
    pub sass: bool,
    #[command(flatten)]
    pub devices: DeviceArgs,
}

#[derive(Debug, Args)]
pub struct TuneArgs {
    /// `family/name` of a tunable space (matvec/tuned, matvec/tuned-vec, reduce/tuned,
    /// sgemm/blocked, sgemm/blocked-waves, spmv/vector, spmv/vector-local, stencil/fdtd3d), or
    /// of a kernel pair that --study declares (default there: the study's first comparison).
    #[arg(required_unless_present = "study")]
    pub target: Option<String>,
    /// A study file whose own kernel pairs (`kernels = { cl = ..., cu = ... }`) become
    /// tunable over what its `tune = { local = [...], defines = {...}, restrictions = [...] }`
    /// declares.
    #[arg(long)]
    pub study: Option<String>,
    /// Strategies, run in this order against one cache: exhaustive, random, anneal, genetic,
    /// bayes. A
    /// strategy after the exhaustive one is measured against the cached exhaustive results.
    #[arg(long, value_delimiter = ',', default_value = "exhaustive")]
    pub strategy: Vec<String>,
    /// Evaluations each non-exhaustive strategy may ask for per API (default: a fifth of
    /// the space).
    #[arg(long)]
    pub budget: Option<usize>,
    /// Seconds each non-exhaustive strategy may run (positive, at most a week).
    #[arg(long, value_parser = budget_seconds)]
    pub budget_s: Option<f64>,
    /// Seed of the random and annealing strategies.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output folder: evaluations, best configurations, charts and the cache.
    #[arg(long, default_value = "clvscu-results/tune")]
    pub out: PathBuf,
    /// Problem size (default: the space's own).
    #[arg(long)]
    pub size: Option<String>,
    /// The cache file (default: OUT/tune-cache.json); reused and extended by later runs.
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// `full` (the GPU space) or `small` (default on a CPU device such as PoCL).
    #[arg(long)]
    pub space: Option<String>,
    /// Timed repetitions of one evaluation (device-event timer): 1 to 1000000, the most a
    /// study may ask for.
    #[arg(long, default_value_t = 7,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(clvscu::study::MAX_REPS)))]
    pub reps: u32,
    /// Untimed runs before each evaluation's timed repetitions: 0 to 1000000.
    #[arg(long, default_value_t = 2,
          value_parser = clap::value_parser!(u32).range(0..=i64::from(clvscu::study::MAX_REPS)))]
    pub warmup: u32,
    /// Which APIs to tune (default: both; OpenCL alone when CUDA is missing, and the
    /// reverse).
    #[arg(long, value_enum, default_value = "opencl-cuda")]
    pub pair: TunePairing,
    /// Do not draw charts.
    #[arg(long)]
    pub no_charts: bool,
    /// The watchdog's limit for any one launch, in seconds (default: 120 s for a
    /// configuration's first launch, then 100 times what it took, at least 10 s). A launch
    /// past it ends the tune with exit code 4; every finished evaluation is in the cache.
    #[arg(long, value_name = "SECONDS", value_parser = positive_seconds)]
    pub timeout: Option<f64>,
    #[command(flatten)]
    pub devices: DeviceArgs,
}

impl DeviceArgs {
    pub fn is_every_gpu(&self) -> bool {
        self.cuda_device.as_deref() == Some("all")
    }

    /// Refuses `--cuda-device all` for a command that works on one GPU, saying which do
    /// more (without this, `all` would be taken for a device name and match none).
    pub fn one_cuda_device(&self, command: &str) -> anyhow::Result<()> {
        anyhow::ensure!(
            !self.is_every_gpu(),
            "`{command}` works on one GPU: give --cuda-device N (an index or a name); \
             --cuda-device all is for `run` and `suite`"
        );
        Ok(())
    }

    /// The kernel sources: the embedded twins, or a folder the user names, which must hold
    /// both APIs' folders (a missing one is bad input, exit 1, in every command).
    pub fn sources(&self) -> anyhow::Result<KernelSources> {
        let Some(d) = &self.kernels_dir else {
            return Ok(KernelSources::embedded());
        };
        for sub in ["kernels_cl", "kernels_cu"] {
            if !d.join(sub).is_dir() {
                anyhow::bail!(
                    "--kernels-dir {}: no folder {sub} in it (it must hold kernels_cl/ and kernels_cu/)",
                    d.display()
                );
            }
        }
        Ok(KernelSources::from_dir(d))
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;

    use clap::{CommandFactory, Parser};
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn clap_definition_is_consistent() {
        // clap's own checks (conflicting names, bad defaults...), which otherwise run only in
        // debug builds, and only for the arguments a parse happens to touch.
        Cli::command().debug_assert();
    }

    /// Every argument and subcommand the user can see, with the help text it lacks.
    fn without_help(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
        if !cmd.is_hide_set() && cmd.get_about().is_none() && !path.is_empty() {
            missing.push(format!("{path} (the subcommand)"));
        }
        for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
            if arg.get_help().is_none() && arg.get_long_help().is_none() {
                missing.push(format!("{path} {}", arg.get_id()));
            }
        }
        for sub in cmd.get_subcommands() {
            without_help(sub, &format!("{path} {}", sub.get_name()), missing);
        }
    }

    #[test]
    fn every_subcommand_and_argument_has_help() {
        let mut cmd = Cli::command();
        // Built, the tree holds what clap adds (help, version): the walk sees what users see.
        cmd.build();
        let mut missing = Vec::new();
        without_help(&cmd, "", &mut missing);
        assert!(missing.is_empty(), "no help text: {missing:#?}");
        // The walk reaches the arguments of nested subcommands.
        let run = cmd.find_subcommand("run").unwrap();
        assert!(run.get_arguments().any(|a| a.get_id() == "cl_device"));
    }

    #[test]
    fn inspect_refuses_a_zero_work_group() {
        let e = Cli::try_parse_from(["clvscu", "inspect", "--local", "0"]).unwrap_err();
        assert_eq!(e.exit_code(), 2, "{e}");
        assert!(Cli::try_parse_from(["clvscu", "inspect", "--local", "1"]).is_ok());
    }

    /// `--cap-scale` is a factor, not seconds: a small one is a scale like any other, and a
    /// bad one is refused in a factor's words.
    #[test]
    fn cap_scale_is_read_as_a_factor() {
        let parse = |v: &str| Cli::try_parse_from(["clvscu", "suite", "--cap-scale", v]);
        assert!(parse("0.01").is_ok());
        assert!(parse("10").is_ok());
        for bad in ["0", "nan", "inf", "x"] {
            let e = parse(bad).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad}: {e}");
            let text = e.to_string();
            assert!(text.contains("factor"), "{bad}: {text}");
            assert!(
                !text.contains("watchdog") && !text.contains(" s "),
                "{bad}: {text}"
            );
        }
    }

    /// Every subcommand and flag `Cli` defines, with values of each kind and edge values.
    const VOCABULARY: &[&str] = &[
        "devices",
        "studies",
        "run",
        "parity",
        "plot",
        "merge",
        "inspect",
        "report",
        "diff",
        "tune",
        "help",
        "--html",
        "--findings",
        "--study",
        "--out",
        "--resume",
        "--no-plot",
        "--pair",
        "--cl-device-b",
        "--only",
        "--passes",
        "--cl-device",
        "--cuda-device",
        "--kernels-dir",
        "--arch",
        "--local",
        "--output",
        "-o",
        "--help",
        "-h",
        "--version",
        "-V",
        "--",
        "-",
        "default",
        "table1",
        "opencl-cuda",
        "opencl-opencl",
        "opencl",
        "cuda",
        "0",
        "1",
        "-1",
        "4294967295",
        "4294967296",
        "",
        " ",
        "=",
        "a.csv",
        "b.csv",
        "dir/",
        "é",
        "--study=x.toml",
        "--passes=0",
        "--pair=bogus",
        "--local=-1",
        "-oout.csv",
        "-o=",
        "--out=",
    ];

    /// A flag with a value that suits it.
    const FLAG_VALUES: &[(&str, &str)] = &[
        ("--study", "default"),
        ("--out", "results"),
        ("--pair", "opencl-opencl"),
        ("--cl-device-b", "1:0"),
        ("--only", "listing"),
        ("--passes", "3"),
        ("--cl-device", "0"),
        ("--cuda-device", "H200"),
        ("--kernels-dir", "."),
        ("--arch", "compute_90"),
        ("--local", "256"),
        ("--local", "0"),
        ("-o", "merged.csv"),
        ("--output", "merged.csv"),
    ];

    /// A few arguments: a token from the vocabulary, a flag with a fitting value, a path-like
    /// positional, random text or flag-like text, or bytes that are not UTF-8.
    fn arg() -> impl Strategy<Value = Vec<OsString>> {
        prop_oneof![
            6 => prop::sample::select(VOCABULARY).prop_map(|a| vec![a.into()]),
            3 => prop::sample::select(FLAG_VALUES).prop_map(|(f, v)| vec![f.into(), v.into()]),
            3 => "[a-z]{1,6}\\.csv".prop_map(|a| vec![a.into()]),
            1 => ".{0,12}".prop_map(|a| vec![a.into()]),
            1 => "--?[a-z-]{0,14}(=.{0,6})?".prop_map(|a| vec![a.into()]),
            1 => prop::collection::vec(any::<u8>(), 0..8).prop_map(|b| vec![OsString::from_vec(b)]),
        ]
    }

    const SUBCOMMANDS: &[&str] = &[
        "devices",
        "studies",
        "families",
        "run",
        "parity",
        "plot",
        "merge",
        "inspect",
        "report",
        "diff",
        "tune",
        "calibrate",
        "explain",
        "suite",
        "help",
    ];

    /// Argument vectors: usually a subcommand first (else nothing gets past the top level),
    /// then anything.
    fn args() -> impl Strategy<Value = Vec<OsString>> {
        (
            prop::option::weighted(0.9, prop::sample::select(SUBCOMMANDS)),
            prop::collection::vec(arg(), 0..8),
        )
            .prop_map(|(sub, rest)| {
                sub.map(OsString::from)
                    .into_iter()
                    .chain(rest.into_iter().flatten())
                    .collect()
            })
    }

    fn argv(args: Vec<OsString>) -> impl Iterator<Item = OsString> {
        std::iter::once(OsString::from("clvscu")).chain(args)
    }

    /// The generator must reach every subcommand with a successful parse, or the properties
    /// below check little.
    #[test]
    fn generated_arguments_reach_every_subcommand() {
        use proptest::strategy::ValueTree;
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let strategy = args();
        let mut seen = std::collections::BTreeSet::new();
        let mut errors = 0;
        for _ in 0..3000 {
            let args = strategy.new_tree(&mut runner).unwrap().current();
            match Cli::try_parse_from(argv(args)) {
                Ok(cli) => {
                    seen.insert(match cli.command {
                        Command::Devices => "devices",
                        Command::Studies => "studies",
                        Command::Families => "families",
                        Command::Run(_) => "run",
                        Command::Parity { .. } => "parity",
                        Command::Plot { .. } => "plot",
                        Command::Merge { .. } => "merge",
                        Command::Inspect(_) => "inspect",
                        Command::Report(_) => "report",
                        Command::Diff(_) => "diff",
                        Command::Tune(_) => "tune",
                        Command::Explain(_) => "explain",
                        Command::Calibrate(_) => "calibrate",
                        Command::ShapesRule { .. } => "shapes-rule",
                        Command::Suite(_) => "suite",
                    });
                }
                Err(_) => errors += 1,
            }
        }
        let all = [
            "calibrate",
            "devices",
            "diff",
            "explain",
            "families",
            "inspect",
            "merge",
            "parity",
            "plot",
            "report",
            "run",
            "studies",
            "suite",
            "tune",
        ];
        assert_eq!(seen.into_iter().collect::<Vec<_>>(), all);
        assert!(errors > 100, "{errors} errors in 3000");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(6000))]

        #[test]
        fn argument_vectors_never_panic(args in args()) {
            match Cli::try_parse_from(argv(args)) {
                // What `commands` relies on without checking again.
                Ok(cli) => match cli.command {
                    Command::Merge { inputs, .. } => prop_assert!(!inputs.is_empty()),
                    Command::Plot { inputs, .. } => prop_assert!(!inputs.is_empty()),
                    Command::Run(r) => prop_assert!(!r.resume || r.out.is_some()),
                    Command::Inspect(i) => prop_assert!(i.local >= 1),
                    _ => {}
                },
                Err(e) => {
                    // Help and version exit 0; everything else is the documented usage error 2.
                    prop_assert!(matches!(e.exit_code(), 0 | 2), "{e:?}");
                    prop_assert!(!e.to_string().trim().is_empty());
                }
            }
        }
    }
}
