//! The child command line of each `clvscu suite` step, from the suite's own arguments.

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, Result};
use clap::ValueEnum;

use clvscu::families::rule_tables;
use clvscu::rows::{MEASUREMENTS_CSV, PRS_CSV};
use clvscu::suite::{self, Step, StepKind};

use crate::cli::args::{Pairing, SuiteArgs};

/// The vendor-baseline scripts, carried in the binary so the suite needs no checkout; written
/// into the suite's folder (beside each other, as the first imports the second) to run.
const BASELINES_PY: &str = include_str!("../../baselines/baselines.py");
const SPMV_MATRICES_PY: &str = include_str!("../../baselines/spmv_matrices.py");

/// The step's command, or why it cannot run here.
pub(super) fn step_command(
    args: &SuiteArgs,
    out: &Path,
    step: &Step,
) -> Result<std::result::Result<Command, String>> {
    let exe = std::env::current_exe().context("finding this program to run it again")?;
    let dir = out.join(step.dir);
    let mut c = Command::new(&exe);
    match step.kind {
        StepKind::Study(name) => study_command(&mut c, args, &dir, step, name)?,
        // `run_cpu_step` runs a CPU step, a child per comparison.
        StepKind::CpuStudy(_) => {
            return Ok(Err("a CPU step runs one child per comparison".into()));
        }
        StepKind::StudyWithTable { study, table_dir } => {
            let tables = out.join(table_dir);
            if !tables.is_dir() || rule_tables::table_files(&tables)?.is_empty() {
                return Ok(Err(format!("no table in {table_dir}/ to run with")));
            }
            // Each API's device finds its own table (`shapes-rule`'s) in the folder.
            c.env(rule_tables::RULES_ENV, tables);
            study_command(&mut c, args, &dir, step, study)?;
        }
        StepKind::StudyWithBuiltinTables(study) => {
            c.env_remove(rule_tables::RULES_ENV);
            study_command(&mut c, args, &dir, step, study)?;
        }
        StepKind::Calibrate => {
            c.arg("calibrate").arg("--out").arg(&dir);
            if args.quick {
                c.arg("--quick");
            }
            c.args(side_args(args, true, false));
        }
        StepKind::Inspect => {
            if args.pair == Some(Pairing::Fake) {
                return Ok(Err("the fake backend compiles no PTX".into()));
            }
            c.arg("inspect").arg("--out").arg(&dir);
            c.args(side_args(args, false, false));
        }
        StepKind::Baselines { study, only, csv } => {
            return Ok(baselines_command(args, out, step.dir, study, only, csv))
        }
        StepKind::Explain(of) => {
            let target = out.join(of);
            if let Some(why) = nothing_to_explain(&target, of)? {
                return Ok(Err(why));
            }
            c.arg("explain")
                .arg(&target)
                .args(["-q", "--out"])
                .arg(&dir);
            if args.quick {
                // The quick pass's gaps are many (few repetitions), each NVRTC-PTX rung a process:
                // a ladder for the farthest two, the rest their code (5 s) and replays in the cap.
                c.args(["--max-targets", "2", "--code-budget", "5", "--no-profile"]);
            } else {
                // Rungs of a millisecond or less: 0.1 s a side is hundreds of repetitions, and
                // the fair study's ladders fit the cap.
                c.args(["--min-time", "0.1"]);
            }
            if dir.exists() {
                c.arg("--resume");
            }
            // Every gap of the other study steps carries its largest machine-code difference.
            for s in suite::STEPS.iter() {
                let other = out.join(s.dir);
                let study = matches!(
                    s.kind,
                    StepKind::Study(_)
                        | StepKind::StudyWithTable { .. }
                        | StepKind::StudyWithBuiltinTables(_)
                );
                if study && !other.ends_with(of) && other.join(PRS_CSV).is_file() {
                    c.arg("--machine-code-for").arg(other);
                }
            }
            c.args(side_args(args, true, true));
        }
        StepKind::ShapesRule { sweep } => {
            c.arg("shapes-rule")
                .arg(out.join(sweep))
                .arg("--out")
                .arg(&dir);
        }
    }
    Ok(Ok(c))
}

/// `run --study …` into `dir`: by name where the full suite's study is built in, else its text
/// saved in the run folder as study.toml, so the folder says what ran and `explain` finds it.
pub(super) fn study_command(
    c: &mut Command,
    args: &SuiteArgs,
    dir: &Path,
    step: &Step,
    name: &str,
) -> Result<()> {
    let study = if args.quick || !suite::is_builtin(name) {
        let text = suite::study_text(name, args.quick).map_err(anyhow::Error::msg)?;
        let file = dir.join(clvscu::session::run::STUDY_FILE);
        clvscu::export::safe::prepare_dir(dir, false)?;
        clvscu::export::write_atomic(&file, text.as_bytes())?;
        file.display().to_string()
    } else {
        name.to_string()
    };
    c.args(["run", "--study", &study, "--no-plot", "-q", "--out"])
        .arg(dir);
    if !args.quick {
        for text in step.skip {
            c.args(["--skip", text]);
        }
    }
    if dir.join(MEASUREMENTS_CSV).exists() {
        c.arg("--resume");
    }
    c.args(side_args(args, true, true));
    Ok(())
}

/// Why `explain` has no target in the step's folder: no PRs, or every fair PR within parity.
fn nothing_to_explain(target: &Path, of: &str) -> Result<Option<String>> {
    let file = target.join(PRS_CSV);
    if !file.is_file() {
        return Ok(Some(format!("no PRs of the {of} step to explain")));
    }
    let prs: Vec<clvscu::rows::PrRow> = clvscu::export::csv::read_rows(&file)?;
    let (lo, hi) = clvscu::explain::PARITY;
    if prs.iter().any(|r| r.fair && !(lo..=hi).contains(&r.pr)) {
        return Ok(None);
    }
    let (narrow_lo, narrow_hi) = (clvscu::stats::SIMILAR_LO, clvscu::stats::SIMILAR_HI);
    let wide = prs
        .iter()
        .filter(|r| r.fair && (r.pr_ci_lo < narrow_lo || r.pr_ci_hi > narrow_hi))
        .count();
    // "No gap" needs a CI narrow enough to rule one out; a wide one only fails to show it.
    Ok(Some(if wide == 0 {
        format!("every fair PR of the {of} step is within [{lo}, {hi}]: no gap to explain")
    } else {
        format!(
            "every fair PR of the {of} step is within [{lo}, {hi}], but {wide} CI(s) are wider \
             than [{narrow_lo}, {narrow_hi}]: inconclusive, nothing for explain to attribute"
        )
    }))
}

/// Why a CPU step's child found no OpenCL CPU device, from its log. The suite lists no devices
/// itself: a process that opened NVIDIA's OpenCL hides the GPU from later steps (on an H200 they
/// fell back to PoCL).
pub(super) fn no_opencl_cpu(log: &str) -> Option<String> {
    let line = log
        .lines()
        .find(|l| l.starts_with("error: OpenCL unavailable:"))?;
    let why = line.trim_start_matches("error: ");
    Some(
        if why.contains(&format!("matches '{}'", clvscu::backend::select::CPU)) {
            "no OpenCL CPU device is listed here (PoCL or a vendor's CPU runtime would run it)"
                .into()
        } else {
            format!("no OpenCL CPU device: {}", clvscu::terminal::printable(why))
        },
    )
}

/// A CPU step's options: OpenCL alone on the first device that is not a GPU (the fake pair
/// stays fake); the kernels folder and timeout stay.
pub(super) fn on_the_cpu(args: &SuiteArgs) -> SuiteArgs {
    let mut cpu = args.clone();
    if cpu.pair != Some(Pairing::Fake) {
        cpu.pair = Some(Pairing::Opencl);
        cpu.devices.cl_device = Some(clvscu::backend::select::CPU.into());
        cpu.devices.cuda_device = None;
    }
    cpu
}

/// Whether the suite's pair runs CUDA (the default pair does).
pub(super) fn uses_cuda(args: &SuiteArgs) -> bool {
    !matches!(
        args.pair,
        Some(Pairing::Fake | Pairing::Opencl | Pairing::OpenclOpencl)
    )
}

/// The device options, passed on to a child, after `--pair` (`with_pair`) and `--timeout`
/// (`with_timeout`).
fn side_args(args: &SuiteArgs, with_pair: bool, with_timeout: bool) -> Vec<String> {
    let d = &args.devices;
    let pair = args.pair.filter(|_| with_pair);
    let pair = pair.and_then(|p| p.to_possible_value());
    let kernels_dir = d.kernels_dir.as_ref().map(|k| k.display().to_string());
    [
        ("--pair", pair.map(|p| p.get_name().to_string())),
        (
            "--timeout",
            args.timeout.filter(|_| with_timeout).map(|t| t.to_string()),
        ),
        ("--cl-device", d.cl_device.clone()),
        ("--cuda-device", d.cuda_device.clone()),
        ("--kernels-dir", kernels_dir),
    ]
    .into_iter()
    .filter_map(|(flag, value)| Some([flag.to_string(), value?]))
    .flatten()
    .collect()
}

/// `python3 baselines.py OUT/CSV STUDY.toml` (the scripts in OUT/DIR) where python3 with a
/// CUDA torch exists; `only` the groups it names (`BASELINES_ONLY`), all when `None`.
fn baselines_command(
    args: &SuiteArgs,
    out: &Path,
    dir: &str,
    study: &str,
    only: Option<&str>,
    csv: &str,
) -> std::result::Result<Command, String> {
    if !uses_cuda(args) {
        return Err("the vendor libraries run on CUDA, which this suite does not use".into());
    }
    let probe = Command::new("python3")
        .args([
            "-c",
            "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        return Err("no python3 with a CUDA build of torch here".into());
    }
    let dir = out.join(dir);
    let write = |name: &str, text: &str| {
        clvscu::export::safe::prepare_dir(&dir, false)
            .and_then(|()| clvscu::export::write_atomic(&dir.join(name), text.as_bytes()))
            .map_err(|e| e.to_string())
    };
    write("baselines.py", BASELINES_PY)?;
    write("spmv_matrices.py", SPMV_MATRICES_PY)?;
    let spec = format!("{study}.toml");
    let text = suite::study_text(study, args.quick).map_err(|e| e.to_string())?;
    write(&spec, &text)?;
    let mut c = Command::new("python3");
    c.arg(dir.join("baselines.py"))
        .arg(out.join(csv))
        .arg(dir.join(&spec));
    if let Some(only) = only.or(args.quick.then_some("sgemv,sum,copy,shapes")) {
        c.env("BASELINES_ONLY", only);
    }
    Ok(c)
}
