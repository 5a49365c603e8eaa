//! The binary, end to end: the run writes valid CSV and PR rows on OpenCL (PoCL in CI, paired
//! with itself), resumes, and every bad input gets a clear error and the documented exit code.

mod common;

use std::path::Path;

use assert_cmd::Command;
use clvscu::backend::{opencl, Api};
use clvscu::export::csv::read_rows;
use clvscu::rows::{MeasurementRow, PrRow, Status};
use predicates::prelude::*;

fn clvscu() -> Command {
    Command::cargo_bin("clvscu").expect("binary built")
}

fn need_opencl() {
    common::need("OpenCL", opencl::availability());
}

/// `clvscu run --pair PAIR --no-plot --study STUDY --out OUT`, ready for more arguments.
fn run_cmd(pair: &str, study: &Path, out: &Path) -> Command {
    let mut cmd = clvscu();
    cmd.args(["run", "--pair", pair, "--no-plot", "--study"])
        .arg(study)
        .arg("--out")
        .arg(out);
    cmd
}

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

const SMALL_STUDY: &str = r#"
name = "small"
[defaults]
family = "matvec"
size = "300x257"
local = 64
warmup = 1
reps = 3
min_time = 0.0
[[comparison]]
variant = "listing2"
[[comparison]]
variant = "listing6"
[[comparison]]
family = "reduce"
variant = "tuned"
size = "100003"
"#;

#[test]
#[ignore = "needs OpenCL"]
fn run_pairs_opencl_with_itself_and_writes_valid_csv() {
    need_opencl();
    let dir = tempfile::tempdir().unwrap();
    let study = write(dir.path(), "small.toml", SMALL_STUDY);
    let out = dir.path().join("out");
    clvscu()
        .args(["run", "--study"])
        .arg(&study)
        .args(["--pair", "opencl-opencl", "--out"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("Performance Ratio"));
    let m: Vec<MeasurementRow> = read_rows(&out.join("measurements.csv")).unwrap();
    assert_eq!(m.len(), 6);
    assert!(m
        .iter()
        .all(|r| r.status == Status::Ok && r.verified && r.median_s > 0.0 && r.metric > 0.0));
    let prs: Vec<PrRow> = read_rows(&out.join("prs.csv")).unwrap();
    assert_eq!(prs.len(), 3);
    assert!(prs
        .iter()
        .all(|p| p.fair && p.pr > 0.0 && p.pr_ci_lo <= p.pr && p.pr <= p.pr_ci_hi));
    let prov = std::fs::read_to_string(out.join("provenance.json")).unwrap();
    assert!(prov.contains("git_commit") && prov.contains("small"));
    assert!(
        out.join("charts").read_dir().unwrap().count() > 0,
        "charts drawn"
    );

    // Resume: nothing is measured twice.
    clvscu()
        .args(["run", "--study"])
        .arg(&study)
        .args(["--pair", "opencl-opencl", "--resume", "--no-plot", "--out"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("3 skipped"));
    let again: Vec<MeasurementRow> = read_rows(&out.join("measurements.csv")).unwrap();
    assert_eq!(again.len(), 6);

    // Without --resume an existing output is refused, not overwritten.
    clvscu()
        .args(["run", "--study"])
        .arg(&study)
        .args(["--pair", "opencl", "--out"])
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("--resume"));
}

#[test]
#[ignore = "needs OpenCL"]
fn too_large_work_group_is_the_drivers_refusal_recorded_with_the_reported_limits() {
    need_opencl();
    let dir = tempfile::tempdir().unwrap();
    let study = write(
        dir.path(),
        "wg.toml",
        "name = \"wg\"\n[[comparison]]\nvariant = \"listing2\"\nsize = \"64x64\"\nlocal = 1048576\nreps = 1\nmin_time = 0.0\n",
    );
    let out = dir.path().join("out");
    run_cmd("opencl", &study, &out)
        .assert()
        .code(3)
        .stderr(predicate::str::contains(
            "driver refused a work-group of 1048576",
        ))
        .stderr(predicate::str::contains("reported limits: device"));
    let m: Vec<MeasurementRow> = read_rows(&out.join("measurements.csv")).unwrap();
    assert_eq!(m[0].status, Status::LaunchFailed);
    // The kernel's reported limit is a fact of the row, not a check of the harness's.
    assert!(
        m[0].kernel_work_group_limit.is_some_and(|l| l > 0),
        "{:?}",
        m[0]
    );
}

#[test]
#[ignore = "needs OpenCL"]
fn kernel_that_fails_to_build_shows_its_log_and_the_run_continues() {
    need_opencl();
    let dir = tempfile::tempdir().unwrap();
    let kd = dir.path().join("k");
    let mut broken_line = 0;
    for (folder, ext) in [("kernels_cl", "cl"), ("kernels_cu", "cu")] {
        std::fs::create_dir_all(kd.join(folder)).unwrap();
        for stem in ["prelude", "matvec", "reduce", "peak"] {
            let text =
                std::fs::read_to_string(Path::new(folder).join(format!("{stem}.{ext}"))).unwrap();
            let text = if stem == "matvec" {
                // The text ends with a newline: one empty line, then the broken kernel.
                broken_line = text.lines().count() + 2;
                format!("{text}\n__kernel void broken() {{ this_is_not_defined(); }}\n")
            } else {
                text
            };
            std::fs::write(kd.join(folder).join(format!("{stem}.{ext}")), text).unwrap();
        }
    }
    let study = write(
        dir.path(),
        "b.toml",
        "name = \"b\"\n[defaults]\nreps = 2\nmin_time = 0.0\nlocal = 64\n[[comparison]]\nvariant = \"listing2\"\nsize = \"64x64\"\n[[comparison]]\nfamily = \"reduce\"\nvariant = \"sequential\"\nsize = \"1000\"\n",
    );
    let out = dir.path().join("out");
    clvscu()
        .args(["run", "--pair", "opencl", "--no-plot", "--kernels-dir"])
        .arg(&kd)
        .arg("--study")
        .arg(&study)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(3)
        .stderr(predicate::str::contains("build-failed"))
        // The log is on the terminal, naming the user's file and line, not a temporary copy.
        .stderr(predicate::str::contains(format!(
            "{}:{broken_line}:",
            kd.join("kernels_cl/matvec.cl").display()
        )));
    let m: Vec<MeasurementRow> = read_rows(&out.join("measurements.csv")).unwrap();
    assert_eq!(m.len(), 2);
    assert_eq!(m[0].status, Status::BuildFailed);
    assert!(
        m[0].error.contains("this_is_not_defined"),
        "build log kept: {}",
        m[0].error
    );
    assert_eq!(m[1].status, Status::Ok, "the rest of the run continues");
}

#[test]
fn unknown_study_lists_the_valid_ones() {
    clvscu()
        .args(["run", "--study", "nonexistent-study"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("table1"));
}

#[test]
fn study_typo_names_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let study = write(
        dir.path(),
        "typo.toml",
        "name = \"t\"\n[defaults]\nwarmpu = 3\n",
    );
    clvscu()
        .args(["run", "--study"])
        .arg(&study)
        .assert()
        .code(1)
        .stderr(
            predicate::str::contains("typo.toml")
                .and(predicate::str::contains("line 3"))
                .and(predicate::str::contains("warmpu")),
        );
}

#[test]
fn non_power_of_two_work_group_is_refused_naming_the_variant() {
    let dir = tempfile::tempdir().unwrap();
    let study = write(
        dir.path(),
        "p.toml",
        "name = \"p\"\n[[comparison]]\nvariant = \"listing7\"\nlocal = 96\n",
    );
    clvscu()
        .args(["run", "--study"])
        .arg(&study)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("listing7").and(predicate::str::contains("power of two")));
}

#[test]
fn empty_problem_is_refused_with_the_size() {
    let dir = tempfile::tempdir().unwrap();
    let study = write(
        dir.path(),
        "z.toml",
        "name = \"z\"\n[[comparison]]\nvariant = \"listing2\"\nsize = \"0x1100\"\n",
    );
    clvscu()
        .args(["run", "--study"])
        .arg(&study)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("0x1100"));
}

/// A NaN given for a timing flag of a command-line run is refused naming the flag, not as a
/// line of the study text the command line writes (which the user never saw).
#[test]
fn a_nan_timing_flag_is_refused_naming_the_flag() {
    for flag in ["--min-time", "--max-time", "--target-ci"] {
        let dir = tempfile::tempdir().unwrap();
        let out = clvscu()
            .args([
                "run",
                "reduce/tuned",
                "--pair",
                "fake",
                "--no-plot",
                flag,
                "nan",
            ])
            .arg("--out")
            .arg(dir.path().join("r"))
            .assert()
            .failure();
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(stderr.contains(flag), "{flag}: {stderr}");
        assert!(!stderr.contains("line 7"), "{flag}: {stderr}");
        assert!(!dir.path().join("r").exists(), "{flag}: a folder was made");
    }
}

#[test]
fn malformed_csv_is_refused_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let foreign = write(dir.path(), "foreign.csv", "a,b,c\n1,2,3\n");
    clvscu()
        .args(["plot"])
        .arg(&foreign)
        .args(["--out"])
        .arg(dir.path().join("charts"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("foreign.csv").and(predicate::str::contains("line 1")));
    let other = write(dir.path(), "other.csv", "x\n1\n");
    clvscu()
        .args(["merge"])
        .arg(&foreign)
        .arg(&other)
        .arg("-o")
        .arg(dir.path().join("all.csv"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("not a clvscu CSV"));
}

#[test]
fn unwritable_output_fails_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = write(dir.path(), "file", "not a directory");
    clvscu()
        .args(["run", "--pair", "opencl", "--out"])
        .arg(blocker.join("sub"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("output directory"));
}

#[test]
fn devices_never_panics_and_names_missing_pieces() {
    let out = clvscu().arg("devices").assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("OpenCL:") && text.contains("CUDA:"));
    assert!(!text.contains("panicked"));
}

#[test]
fn parity_passes_on_the_shipped_kernels() {
    clvscu()
        .arg("parity")
        .assert()
        .success()
        .stdout(predicate::str::contains("PASS"));
}

#[test]
fn help_documents_exit_codes() {
    clvscu()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("Exit codes"));
}

#[test]
#[ignore = "needs NVRTC"]
fn inspect_counts_nvrtc_ptx_and_says_pocl_gives_none() {
    common::need("NVRTC", clvscu::backend::cuda::nvrtc_availability());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("inspect");
    let run = clvscu()
        .arg("inspect")
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&run.get_output().stdout).to_string();
    assert!(
        stdout.contains("no PTX"),
        "the output says where PTX is missing: {stdout}"
    );
    // Progress: a line as each kernel file starts compiling.
    assert!(
        stdout.contains("[1/") && stdout.contains(": compiling both twins, "),
        "{stdout}"
    );
    let rows: Vec<clvscu::rows::ClassCountRow> = read_rows(&out.join("ptx_classes.csv")).unwrap();
    // Every kernel of every family is parsed and counted on the CUDA side.
    for v in clvscu::families::all_variants()
        .iter()
        .filter(|v| !v.kernel.is_empty())
    {
        let total: u64 = rows
            .iter()
            .filter(|r| r.kernel == v.kernel && r.api == "CUDA")
            .map(|r| r.count)
            .sum();
        assert!(total > 0, "{} has no counted CUDA PTX", v.kernel);
    }
    assert!(out.join("matvec.cuda.ptx").exists());
}

#[test]
fn fake_pair_runs_a_study_end_to_end_without_any_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let study = write(dir.path(), "small.toml", SMALL_STUDY);
    let out = dir.path().join("out");
    run_cmd("fake", &study, &out)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("fake OpenCL device"));
    let rows: Vec<MeasurementRow> = read_rows(&out.join("measurements.csv")).unwrap();
    assert_eq!(rows.len(), 6);
    assert!(rows.iter().all(|r| r.status == Status::Ok));
    let prs: Vec<PrRow> = read_rows(&out.join("prs.csv")).unwrap();
    assert_eq!(prs.len(), 3);
    // Where the time went: a row per comparison, and a sentence in the provenance.
    let times: Vec<clvscu::rows::TimingRow> = read_rows(&out.join("timings.csv")).unwrap();
    assert_eq!(times.len(), 3);
    for t in &times {
        let phases = t.inputs_s + t.build_s + t.verify_s + t.warmup_s + t.timed_s;
        assert!(
            t.timed_s > 0.0 && (phases - t.total_s).abs() < 1e-9,
            "{t:?}"
        );
    }
    let prov = std::fs::read_to_string(out.join("provenance.json")).unwrap();
    assert!(prov.contains("wall over 3 comparison(s)"), "{prov}");
    // A second run into the same folder needs --resume; with it, everything is skipped.
    run_cmd("fake", &study, &out)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("--resume"));
    clvscu()
        .args(["run", "--pair", "fake", "--no-plot", "--resume", "--study"])
        .arg(&study)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("3 skipped"));
}

#[test]
fn the_fake_pair_is_hidden_from_help() {
    clvscu()
        .args(["run", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("opencl-cuda"))
        .stdout(predicate::str::contains("fake").not());
}

#[test]
#[ignore = "needs OpenCL"]
fn an_unusable_pocl_cache_is_named_as_the_cause() {
    need_opencl();
    let dir = tempfile::tempdir().unwrap();
    // A cache folder below a file can never be created, even by root.
    let blocker = write(dir.path(), "file", "not a folder");
    let out = clvscu()
        .arg("devices")
        .env("POCL_CACHE_DIR", blocker.join("cache"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    // PoCL lists no device without a usable cache; the message must say why.
    assert!(
        text.contains("PoCL's kernel cache") && text.contains("POCL_CACHE_DIR"),
        "{text}"
    );
}

#[test]
fn a_command_line_run_is_a_saved_study_with_progress_lines() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("quick");
    let args = ["run", "matvec/listing6", "--pair", "fake", "--no-plot"];
    let grid = ["--local", "64,128", "--size", "64x40,128x40", "--reps", "3"];
    let assert = clvscu()
        .args(args)
        .args(grid)
        .args(["--min-time", "0", "--out"])
        .arg(&out)
        .assert()
        .code(0);
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    // Without a terminal, one line per finished comparison, with its full name.
    assert!(
        stdout.contains("[1/4] matvec/listing6@size=64x40,local=64 64×"),
        "{stdout}"
    );
    assert!(
        stdout.contains("[4/4] matvec/listing6@size=128x40,local=128"),
        "{stdout}"
    );
    let prs: Vec<PrRow> = read_rows(&out.join("prs.csv")).unwrap();
    assert_eq!(prs.len(), 4);
    // The saved study repeats the run.
    let again = dir.path().join("again");
    clvscu()
        .args(["run", "--pair", "fake", "--no-plot", "--study"])
        .arg(out.join("study.toml"))
        .arg("--out")
        .arg(&again)
        .assert()
        .code(0);
    let prs_again: Vec<PrRow> = read_rows(&again.join("prs.csv")).unwrap();
    let ids = |rows: &[PrRow]| {
        rows.iter()
            .map(|r| r.comparison.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&prs_again), ids(&prs));
}

#[test]
fn command_line_parameters_need_a_kernel_and_exclude_a_study() {
    clvscu()
        .args(["run", "--local", "64"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("FAMILY/VARIANT"));
    clvscu()
        .args(["run", "matvec/listing6", "--study", "default"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot be used with"));
    clvscu()
        .args([
            "run",
            "matvec/listing6",
            "--pair",
            "fake",
            "--local",
            "512..64",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "--local: the range 512..64 is empty",
        ));
}

#[test]
fn every_gpu_pairs_by_the_pci_bus_so_a_hand_picked_opencl_device_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    clvscu()
        .args(["run", "--cuda-device", "all", "--cl-device", "0", "--out"])
        .arg(dir.path().join("out"))
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "--cuda-device all finds each GPU's OpenCL device by its PCI bus",
        ));
    assert!(!dir.path().join("out").join("study.toml").exists());
}

#[test]
fn a_suite_on_every_gpu_also_pairs_by_the_pci_bus() {
    let dir = tempfile::tempdir().unwrap();
    clvscu()
        .args(["suite", "--cuda-device", "all", "--cl-device", "0", "--out"])
        .arg(dir.path().join("out"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "--cuda-device all finds each GPU's OpenCL device by its PCI bus",
        ));
    assert!(!dir.path().join("out").join("suite.csv").exists());
}

#[test]
fn a_one_gpu_command_refuses_every_gpu_and_names_the_commands_that_take_it() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["tune", "matvec/tuned", "--cuda-device", "all", "--out"][..],
        &["calibrate", "--cuda-device", "all", "--out"][..],
        &["inspect", "--cuda-device", "all", "--out"][..],
        &["explain", "matvec/tuned", "--cuda-device", "all", "--out"][..],
    ] {
        clvscu()
            .args(args)
            .arg(dir.path().join("out"))
            .assert()
            .code(1)
            .stderr(predicate::str::contains(format!(
                "`{}` works on one GPU",
                args[0]
            )))
            .stderr(predicate::str::contains(
                "--cuda-device all is for `run` and `suite`",
            ));
    }
    assert!(!dir.path().join("out").exists(), "nothing written");
}

#[test]
fn every_gpu_refuses_an_export_that_would_hold_only_the_last_gpu() {
    let dir = tempfile::tempdir().unwrap();
    clvscu()
        .args(["run", "--cuda-device", "all", "--export-json"])
        .arg(dir.path().join("run.json"))
        .arg("--out")
        .arg(dir.path().join("out"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("--export-json").and(predicate::str::contains("merge")));
    assert!(!dir.path().join("run.json").exists());
}

/// `--force` with `--cuda-device all`: `--out` holds a folder per GPU, not a run, and each
/// GPU's run starts afresh in its own folder (the children get `--force`); the parent folder
/// of an earlier every-GPU run is no reason to refuse.
#[test]
fn every_gpu_with_force_does_not_refuse_the_folder_of_the_gpus() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(out.join("gpu0-nvidia-h200")).unwrap();
    std::fs::write(
        out.join("report.md"),
        "# an earlier report over every GPU\n",
    )
    .unwrap();
    let assert = clvscu()
        .args([
            "run",
            "--pair",
            "fake",
            "--cuda-device",
            "all",
            "--force",
            "--out",
        ])
        .arg(&out)
        .assert();
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
    assert!(!stderr.contains("is not a run folder"), "{stderr}");
    assert!(
        out.join("gpu0-nvidia-h200").is_dir(),
        "nothing of it deleted"
    );
}

/// A first run with no `--pair`: without CUDA, OpenCL against itself on the one OpenCL device,
/// so there are PRs (the harness's noise floor) and a PR chart, and the run says where PRs
/// between the APIs come from; with CUDA, OpenCL against CUDA and no such note.
#[test]
#[ignore = "needs OpenCL"]
fn a_default_first_run_without_cuda_is_opencl_against_itself_with_a_pr_chart() {
    need_opencl();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("first");
    let run = clvscu()
        .args([
            "run",
            "matvec/listing6",
            "--local",
            "32,64",
            "--size",
            "64x40",
        ])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&run.stdout);
    let rows: Vec<PrRow> = read_rows(&out.join("prs.csv")).unwrap();
    assert_eq!(rows.len(), 2, "one PR per work-group size: {stdout}");
    let charts: Vec<String> = std::fs::read_dir(out.join("charts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        charts.iter().any(|c| c == "pr-quick-matvec-listing6.png"),
        "{charts:?}"
    );
    let noise_floor = "OpenCL against OpenCL on one device (the harness's noise floor)";
    if clvscu::backend::cuda::availability().is_ok() {
        assert!(rows.iter().all(|r| r.api_b == Api::Cuda), "{stdout}");
        assert!(!stdout.contains(noise_floor), "{stdout}");
    } else {
        assert!(rows.iter().all(|r| r.api_b == Api::OpenCl), "{stdout}");
        assert!(stdout.contains(noise_floor), "{stdout}");
        // The folders it points to are committed results of both GPUs.
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let named: Vec<&str> = stdout
            .split([' ', ',', '\n'])
            .map(|w| w.trim_end_matches('.'))
            .filter(|w| w.starts_with("results/h"))
            .collect();
        assert!(named.contains(&"results/h100"), "{stdout}");
        assert!(named.contains(&"results/h200"), "{stdout}");
        for folder in named {
            assert!(repo.join(folder).join("suite.csv").is_file(), "{folder}");
        }
    }
}

/// A first run asked for one side (`--pair opencl`: a CPU device with no known peak): the
/// tables name each point of the grid in full, there is a hint for what to do next, and no
/// empty chart is drawn.
#[test]
#[ignore = "needs OpenCL"]
fn a_cpu_only_first_run_has_full_names_a_hint_and_no_empty_chart() {
    need_opencl();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("first");
    let run = clvscu()
        .args([
            "run",
            "matvec/listing6",
            "--pair",
            "opencl",
            "--local",
            "32,64",
            "--size",
            "64x40",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        stdout.contains("matvec/listing6@size=64x40,local=32"),
        "{stdout}"
    );
    assert!(
        stdout.contains("matvec/listing6@size=64x40,local=64"),
        "{stdout}"
    );
    assert!(stdout.contains("hint:"), "{stdout}");
    assert!(stdout.contains("charts: none, nothing to draw"), "{stdout}");
    assert!(
        !out.join("charts").exists(),
        "no chart folder without a chart"
    );
    let rows: Vec<MeasurementRow> = read_rows(&out.join("measurements.csv")).unwrap();
    assert!(
        rows.iter().all(|r| r.peak_gbs.is_none()),
        "unknown peak is empty, never 0"
    );
}

/// `merge` takes a tree of run folders (one per node or GPU, as `--cuda-device all` and the
/// Slurm script write them): the files named like the output are joined; without a name that
/// says which, a folder is refused.
#[test]
fn merge_takes_a_tree_of_run_folders() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let tree = repo.join("results/h200x2-2026-11-22-every-gpu/all");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("prs.csv");
    clvscu()
        .args(["merge"])
        .arg(&tree)
        .arg("-o")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("merged 2 rows"));
    let rows: Vec<PrRow> = read_rows(&out).unwrap();
    assert_eq!(rows.len(), 2, "one PR per GPU");
    clvscu()
        .args(["merge"])
        .arg(&tree)
        .arg("-o")
        .arg(dir.path().join("all.csv"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "name the output measurements.csv, prs.csv or samples.csv",
        ));
}

/// An error whose context already quotes its cause is printed once, not followed by the same
/// cause again; a timeout past what the watchdog can hold is refused by name.
#[test]
fn an_error_is_printed_once_and_an_absurd_timeout_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.toml");
    let out = clvscu()
        .args(["run", "--pair", "fake", "--no-plot", "--study"])
        .arg(&missing)
        .arg("--out")
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.matches("No such file").count(), 1, "{stderr}");
    clvscu()
        .args(["run", "--pair", "fake", "--no-plot", "--timeout", "1e308"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("longest watchdog limit"));
}

#[test]
fn families_lists_every_variant_with_its_parameters_and_marks() {
    let out = clvscu().arg("families").assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    // The cells of `name`'s row in `family`'s table (the table follows the family's heading):
    // variant, mark, kernel, work-group size, work-groups, unroll points, about.
    let row = |family: &str, name: &str| -> Vec<String> {
        let table = text
            .split("\n\n")
            .find(|t| t.starts_with(&format!("{family} (")))
            .unwrap_or_else(|| panic!("no table for {family}:\n{text}"));
        table
            .lines()
            .find(|l| l.starts_with(&format!("| {name} ")))
            .unwrap_or_else(|| panic!("no row for {family}/{name}:\n{table}"))
            .split('|')
            .map(|c| c.trim().to_string())
            .collect::<Vec<_>>()[1..8]
            .to_vec()
    };
    for v in clvscu::families::all_variants() {
        let r = row(v.family.name(), v.name);
        let kernel = if v.kernel.is_empty() { "-" } else { v.kernel };
        let mark = if !v.safe {
            "unsafe"
        } else if v.experiment {
            "experiment"
        } else {
            ""
        };
        assert_eq!((r[1].as_str(), r[2].as_str()), (mark, kernel), "{r:?}");
        assert_eq!(r[6], v.about, "{r:?}");
    }
    let listing7 = row("matvec", "listing7");
    assert_eq!(listing7[3], "64..512, powers of two");
    assert_eq!(listing7[4], "8 per compute unit");
    assert_eq!(row("matvec", "listing4")[5], "A, B");
    assert_eq!(row("reduce", "first-pass")[1], "experiment");
}

#[test]
fn every_harness_study_resolves_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let harness = Path::new(env!("CARGO_MANIFEST_DIR")).join("harness");
    let names: Vec<String> = std::fs::read_dir(harness)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    // Every built-in study, at most 16 (one-off experiments live under harness/experiments/).
    assert!(!names.is_empty() && names.len() <= 16, "{names:?}");
    let listed = clvscu().arg("studies").assert().success();
    let listed = String::from_utf8_lossy(&listed.get_output().stdout).to_string();
    for name in &names {
        assert!(
            listed
                .lines()
                .any(|l| l.split_whitespace().next() == Some(name)),
            "`clvscu studies` leaves out {name}:\n{listed}"
        );
        // `run` loads and resolves the study before it opens a device; a filter that matches
        // nothing then stops it there, so each name is checked without measuring.
        clvscu()
            .args(["run", "--pair", "fake", "--no-plot", "--study", name])
            .args(["--only", "no comparison has this in its name"])
            .arg("--out")
            .arg(dir.path().join(name))
            .assert()
            .code(1)
            .stderr(predicate::str::contains("matches no comparison of study"));
    }
}

const EXPERIMENT_STUDY: &str = r#"
name = "with-experiment"
[defaults]
family = "reduce"
size = "4096"
local = 64
warmup = 1
reps = 3
min_time = 0.0
[[comparison]]
name = "sum\u001b[2J"
variant = "tuned"
[[comparison]]
variant = "first-pass"
"#;

#[test]
fn the_end_of_run_table_names_sides_gives_verdicts_and_hides_experiments() {
    let dir = tempfile::tempdir().unwrap();
    let study = write(dir.path(), "exp.toml", EXPERIMENT_STUDY);
    let out = run_cmd("fake", &study, &dir.path().join("a"))
        .assert()
        .code(0);
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        !text.contains("perf A") && !text.contains("perf B"),
        "{text}"
    );
    assert!(text.contains("PR = perf(OpenCL) / perf(CUDA)"), "{text}");
    let header: Vec<&str> = text
        .lines()
        .find(|l| l.starts_with("| comparison") && l.contains("side"))
        .unwrap_or_else(|| panic!("no measurement table: {text}"))
        .split('|')
        .map(str::trim)
        .collect();
    for column in ["side", "median", "95% CI", "MAD", "N"] {
        assert!(
            header.iter().any(|h| h.starts_with(column)),
            "{column}: {header:?}"
        );
    }
    // The devices are named once, in the run's first lines; the tables name the sides by API.
    assert!(text.contains("\n  OpenCL: fake OpenCL device\n"), "{text}");
    assert!(text.contains("\n  CUDA: fake CUDA device\n"), "{text}");
    assert!(text.contains("| OpenCL |"), "{text}");
    assert!(text.contains("| CUDA   |"), "{text}");
    // Aligned: every line of a table is as wide as its header.
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("| comparison"))
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert!(table.len() >= 4, "{text}");
    let width = table[0].chars().count();
    assert!(table.iter().all(|l| l.chars().count() == width), "{text}");
    // A verdict per comparison in hyperfine's words; the fake sides run alike.
    assert!(
        text.contains("OpenCL and CUDA ran similarly") || text.contains(" times "),
        "{text}"
    );
    // The study's comparison name reaches the terminal with its escape sequence disarmed.
    assert!(!text.contains('\u{1b}'), "{text:?}");
    assert!(text.contains("sum\\u{1b}[2J"), "{text}");
    // The one-step experiment is measured and saved, but left out of the table.
    assert!(!text.contains("| reduce/first-pass "), "{text}");
    assert!(text.contains("--show-experiments"), "{text}");
    let rows: Vec<MeasurementRow> = read_rows(&dir.path().join("a/measurements.csv")).unwrap();
    assert!(rows.iter().any(|r| r.variant == "first-pass"));
    let out = run_cmd("fake", &study, &dir.path().join("b"))
        .arg("--show-experiments")
        .assert()
        .code(0);
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("| reduce/first-pass "), "{text}");
}

#[test]
fn run_exports_its_rows_as_json_csv_and_markdown() {
    use clvscu::export::json::RunResults;
    let dir = tempfile::tempdir().unwrap();
    let study = write(dir.path(), "small.toml", SMALL_STUDY);
    let out = dir.path().join("out");
    let (json, csv, md) = (
        dir.path().join("exports/run.json"),
        dir.path().join("run.csv"),
        dir.path().join("run.md"),
    );
    run_cmd("fake", &study, &out)
        .arg("--export-json")
        .arg(&json)
        .arg("--export-csv")
        .arg(&csv)
        .arg("--export-markdown")
        .arg(&md)
        .assert()
        .code(0);
    let doc: RunResults = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let prs: Vec<PrRow> = read_rows(&out.join("prs.csv")).unwrap();
    let measurements: Vec<MeasurementRow> = read_rows(&out.join("measurements.csv")).unwrap();
    // The files on disk went through a decimal text once more than the JSON: equal to the
    // last bit or two.
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-12 * x.abs().max(y.abs());
    assert_eq!(doc.prs.len(), 3);
    for (j, c) in doc.prs.iter().zip(&prs) {
        assert_eq!(
            (&j.comparison, j.api_a, j.api_b),
            (&c.comparison, c.api_a, c.api_b)
        );
        assert!(
            close(j.pr, c.pr) && close(j.pr_ci_lo, c.pr_ci_lo) && close(j.pr_ci_hi, c.pr_ci_hi)
        );
    }
    assert_eq!(doc.measurements.len(), measurements.len());
    for (j, c) in doc.measurements.iter().zip(&measurements) {
        assert_eq!(
            (&j.comparison, j.api, j.reps),
            (&c.comparison, c.api, c.reps)
        );
        assert!(close(j.metric, c.metric), "{} {}", j.metric, c.metric);
    }
    // The CSV export has the columns and text of prs.csv.
    assert_eq!(
        std::fs::read_to_string(&csv).unwrap(),
        std::fs::read_to_string(out.join("prs.csv")).unwrap()
    );
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains("## Performance Ratio") && md.contains("| matvec/listing6 |"));
    // Written whole through a temporary file, which is gone.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("exports"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers, ["run.json"]);
}

/// A range on the command line, alone, is a sweep: rows carry the swept parameter and the run
/// draws the sweep chart, not a PR bar per value. Fake pair, so no runtime is needed.
#[test]
fn a_command_line_range_is_a_sweep_with_its_sweep_chart() {
    for (flag, range, fixed, param) in [
        ("--size", "2^12..2^14", ["--local", "64"], "size"),
        ("--local", "64..256", ["--size", "4096"], "local"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("sweep");
        clvscu()
            .args(["run", "reduce/tuned", "--pair", "fake", flag, range])
            .args(fixed)
            .args(["--reps", "3", "--min-time", "0", "--out"])
            .arg(&out)
            .assert()
            .success();
        let rows: Vec<PrRow> = read_rows(&out.join("prs.csv")).unwrap();
        assert_eq!(rows.len(), 3, "{flag} {range}");
        assert!(rows.iter().all(|r| r.sweep_param == param), "{flag}");
        let charts: Vec<String> = std::fs::read_dir(out.join("charts"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        let sweep = format!("sweep-quick-reduce-tuned-reduce-tuned-{param}.svg");
        assert!(charts.contains(&sweep), "{charts:?}");
        assert!(
            !charts.iter().any(|c| c.starts_with("pr-")),
            "a sweep is drawn once, as a sweep: {charts:?}"
        );
    }
}

/// `inspect` in a shell with neither the NVRTC wheel (no python3 on PATH) nor LD_LIBRARY_PATH:
/// one line that says NVRTC is missing, a non-zero exit and no empty tables. Where NVRTC is
/// installed for the whole system it is found there, and inspect writes its tables.
#[test]
fn inspect_without_nvrtc_says_so_once_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("inspect");
    let clean = |cmd: &mut Command| {
        cmd.env_clear()
            .env("PATH", dir.path())
            .env("HOME", dir.path());
    };
    let mut devices = clvscu();
    clean(&mut devices);
    let listed = devices.arg("devices").output().unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    let mut inspect = clvscu();
    clean(&mut inspect);
    let run = inspect
        .arg("inspect")
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    if listed.contains("NVRTC unavailable") {
        assert_ne!(run.status.code(), Some(0), "{stderr}");
        assert_eq!(stderr.matches("libnvrtc").count(), 1, "{stderr}");
        assert!(!out.exists(), "nothing written without NVRTC");
    } else {
        assert!(listed.contains("NVRTC 1"), "{listed}");
        assert_eq!(run.status.code(), Some(0), "{stderr}");
        assert!(out.join("ptx_classes.csv").is_file());
    }
}

/// `min_time` counts the host time of a whole repetition: a repetition of 1000 back-to-back
/// launches (whose sample is the time of one launch) stops after a few, not at `max_reps`.
#[test]
#[ignore = "needs OpenCL"]
fn a_minimum_time_counts_a_back_to_back_repetition_whole() {
    need_opencl();
    let dir = tempfile::tempdir().unwrap();
    let study = write(
        dir.path(),
        "b2b.toml",
        "name = \"b2b\"\n[[comparison]]\nname = \"b2b\"\nfamily = \"launch\"\n\
         variant = \"back-to-back\"\nsize = \"1000\"\nwarmup = 1\nreps = 2\n\
         min_time = 0.05\nmax_time = 0\nmax_reps = 400\ntimer = \"wall-clock\"\n",
    );
    let out = dir.path().join("out");
    let began = std::time::Instant::now();
    run_cmd("opencl-opencl", &study, &out).assert().success();
    let m: Vec<MeasurementRow> = read_rows(&out.join("measurements.csv")).unwrap();
    assert_eq!(m.len(), 2);
    // Each repetition is 1000 launches (milliseconds at least), so 0.05 s takes a few dozen
    // at most; counting one launch's time per repetition would run all 400.
    assert!(
        m.iter().all(|r| r.reps >= 2 && r.reps < 100),
        "{:?}",
        m.iter().map(|r| r.reps).collect::<Vec<_>>()
    );
    assert!(began.elapsed().as_secs() < 60, "{:?}", began.elapsed());
}

/// A resume after a `--kernels-dir` kernel file was edited is refused naming that file, and
/// only it.
#[test]
fn a_resume_after_a_kernel_file_changed_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let kernels = dir.path().join("k");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for folder in ["kernels_cl", "kernels_cu"] {
        std::fs::create_dir_all(kernels.join(folder)).unwrap();
        for f in std::fs::read_dir(root.join(folder)).unwrap() {
            let f = f.unwrap().path();
            std::fs::copy(&f, kernels.join(folder).join(f.file_name().unwrap())).unwrap();
        }
    }
    let out = dir.path().join("out");
    let run = |resume: bool| {
        let mut c = clvscu();
        c.args([
            "run",
            "matvec/listing2",
            "--pair",
            "fake",
            "--size",
            "64x40",
        ])
        .args(["--reps", "2", "--min-time", "0", "--quiet", "--no-plot"])
        .arg("--kernels-dir")
        .arg(&kernels)
        .arg("--out")
        .arg(&out);
        if resume {
            c.arg("--resume");
        }
        c.assert()
    };
    run(false).success();
    run(true).success();
    let edited = kernels.join("kernels_cl/matvec.cl");
    let text = std::fs::read_to_string(&edited).unwrap() + "\n// edited\n";
    std::fs::write(&edited, text).unwrap();
    let refused = run(true).code(1);
    let stderr = String::from_utf8_lossy(&refused.get_output().stderr).to_string();
    assert!(
        stderr.contains("kernel file kernels_cl/matvec.cl: the folder has hash"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("kernel file ").count(), 1, "{stderr}");
}

/// `suite --help` lists each plan's steps as the plan has them, in its order: a step missing
/// from the list (stream and cpu were) cannot be found by reading the help.
#[test]
fn suite_help_lists_every_step_of_each_plan() {
    let out = clvscu().args(["suite", "--help"]).assert().success();
    let help = String::from_utf8_lossy(&out.get_output().stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for plan in [clvscu::suite::Plan::Paper, clvscu::suite::Plan::MatvecRule] {
        let names: Vec<&str> = plan.steps().iter().map(|s| s.name).collect();
        let list = format!("the {} plan's: {}", plan.name(), names.join(", "));
        assert!(
            help.to_lowercase().contains(&list),
            "{list:?} not in the help:\n{help}"
        );
    }
}
