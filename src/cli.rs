//! Command-line interface (clap derive).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Exit codes, documented in `--help` and the README.
pub const EXIT_HELP: &str = "Exit codes: 0 success; 1 error (bad input, missing device, I/O); \
2 usage error; 3 finished, but some configuration failed to build, launch or verify; \
130 interrupted (finished comparisons are kept on disk; rerun with --resume).";

#[derive(Debug, Parser)]
#[command(name = "clvscu", version, about = "Is OpenCL slower than CUDA on this GPU, and if so, why? \
A fair-comparison harness after Fang, Varbanescu & Sips (2011).", after_help = EXIT_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args, Clone, Default)]
pub struct DeviceArgs {
    /// OpenCL device: index in `clvscu devices`, `PLATFORM:DEVICE`, or a name substring
    /// (default: the first GPU, else the first device).
    #[arg(long)]
    pub cl_device: Option<String>,
    /// CUDA device: index or name substring (default: 0).
    #[arg(long)]
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
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List every OpenCL platform/device and CUDA device, with the Eq. 2 peak bandwidth.
    Devices,
    /// List the built-in studies.
    Studies,
    /// Run a study (default: the short `default` study) and write CSV, JSON, Markdown, charts.
    Run(RunArgs),
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
        #[arg(long, default_value = "charts")]
        out: PathBuf,
    },
    /// Join result CSVs of the same kind from several runs or machines.
    Merge {
        #[arg(required = true, num_args = 2..)]
        inputs: Vec<PathBuf>,
        #[arg(short, long)]
        output: PathBuf,
    },
    /// PTX of both sides for every kernel pair, instruction classes side by side (Table V).
    Inspect(InspectArgs),
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// A built-in study name (see `clvscu studies`) or a path to a study .toml file.
    #[arg(long, default_value = "default")]
    pub study: String,
    /// Output directory (default: clvscu-results/<study>-<UTC timestamp>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Continue an interrupted run in --out: skip comparisons already on disk.
    #[arg(long, requires = "out")]
    pub resume: bool,
    /// Do not draw charts at the end.
    #[arg(long)]
    pub no_plot: bool,
    /// Which APIs form the two sides.
    #[arg(long, value_enum, default_value = "opencl-cuda")]
    pub pair: Pairing,
    /// Side B's OpenCL device with --pair opencl-opencl (default: the same as side A).
    #[arg(long)]
    pub cl_device_b: Option<String>,
    /// Run only comparisons whose name contains this text.
    #[arg(long)]
    pub only: Option<String>,
    /// Also run the study this many times in one process (soak; rows of every pass kept).
    #[arg(long, default_value_t = 1)]
    pub passes: u32,
    #[command(flatten)]
    pub devices: DeviceArgs,
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
    #[arg(long, default_value_t = 256)]
    pub local: u32,
    #[command(flatten)]
    pub devices: DeviceArgs,
}
