//! `clvscu suite` end to end over the fake backend (every step a child process, the caps, the
//! resume, the report), on PoCL where OpenCL exists, and the shape of `harness/`: at most 16
//! built-in studies, the one-off experiments under `harness/experiments/`, each loading by path
//! and naming the finding it supports.

mod common;

use std::path::Path;

use assert_cmd::Command;
use clvscu::backend::opencl;
use clvscu::rows::StepStatus;
use clvscu::suite::state;
use predicates::prelude::*;

fn clvscu() -> Command {
    Command::cargo_bin("clvscu").expect("binary built")
}

/// `suite --quick --pair PAIR --steps STEPS --out OUT`, with caps ten times the GPU's: a
/// shared CPU runs the test.
fn suite(pair: &str, steps: &str, out: &Path) -> Command {
    let mut c = clvscu();
    c.args([
        "suite", "--quick", "--pair", pair, "--steps", steps, "--out",
    ])
    .arg(out)
    .args(["--cap-scale", "10"]);
    c
}

fn status_of(out: &Path, step: &str) -> StepStatus {
    let rows = state::read(out).unwrap();
    rows.iter()
        .find(|r| r.step == step)
        .unwrap_or_else(|| panic!("no row for {step}: {rows:?}"))
        .status
}

#[test]
fn the_quick_suite_on_the_fake_backend_writes_one_folder_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("suite");
    suite(
        "fake",
        "table1,peaks,unfair,inspect,baselines,explain",
        &out,
    )
    .assert()
    .success()
    .stdout(predicate::str::contains("Eq. 3"));
    for step in ["table1", "peaks", "unfair"] {
        assert_eq!(status_of(&out, step), StepStatus::Done, "{step}");
        assert!(out.join(step).join("provenance.json").is_file(), "{step}");
        // The quick form of the study is saved where it ran, so the folder says what ran.
        let saved = std::fs::read_to_string(out.join(step).join("study.toml")).unwrap();
        assert!(saved.contains("reps = 3"), "{step}: {saved}");
        assert!(out.join("logs").join(format!("{step}.log")).is_file());
    }
    // The fake compiles no PTX and has no vendor libraries; explain has no fair step here.
    for step in ["inspect", "baselines", "explain"] {
        assert_eq!(status_of(&out, step), StepStatus::Skipped, "{step}");
    }
    for file in [
        "suite.md",
        "suite.csv",
        "peaks.md",
        "report.md",
        "report.html",
    ] {
        assert!(out.join(file).is_file(), "{file} missing");
    }
    let peaks = std::fs::read_to_string(out.join("peaks.md")).unwrap();
    assert!(peaks.contains("| flops/fma | OpenCL |"), "{peaks}");
    // report.md opens with the answer; the runs' rows are in its appendix.
    let report = std::fs::read_to_string(out.join("report-appendix.md")).unwrap();
    assert!(
        report.contains("listing6"),
        "the report holds the runs' rows"
    );

    // A second suite into the same folder is refused; --resume skips what finished.
    suite("fake", "table1", &out)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("--resume"));
    suite("fake", "table1,peaks", &out)
        .arg("--resume")
        .assert()
        .success()
        .stdout(predicate::str::contains("table1: finished before, skipped"));
}

/// A sweep of two matvec variants at the quick shape on both fake sides, each twice: what the
/// plan's own `sweep` step measures at 776 comparisons, small enough for a test. The fake
/// backend names each API's device differently and a device's score of a candidate needs two
/// rows, which on a GPU are its two APIs and here the two runs (as in the quick sweep, where
/// every shape shrinks to this one).
const SMALL_SWEEP: &str = r#"name = "shape-sweep"
description = "two variants at one shape"

[defaults]
local = 256
reps = 3
warmup = 1
min_time = 0.0
timer = "device-event"

[[comparison]]
name = "matvec/row-warp/4096x1100"
family = "matvec"
variant = "row-warp"
size = "4096x1100"

[[comparison]]
name = "matvec/row-item/4096x1100"
family = "matvec"
variant = "row-item"
size = "4096x1100"

[[comparison]]
name = "matvec/row-warp/4096x1100/again"
family = "matvec"
variant = "row-warp"
size = "4096x1100"

[[comparison]]
name = "matvec/row-item/4096x1100/again"
family = "matvec"
variant = "row-item"
size = "4096x1100"
"#;

/// `--plan matvec-rule` after a sweep: the table step writes a table per device into rules/,
/// `auto` runs with that folder (each API's rows say `MV_AUTO_RULE=table`), `auto-builtin`
/// with the binary's own (the hand rule: no built-in table names a fake device), outside the
/// sweep's folder, and the checks land in rules/checks.md and suite.md.
#[test]
fn the_rule_plan_derives_a_table_and_runs_auto_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let (out, study) = (dir.path().join("rule"), dir.path().join("small.toml"));
    std::fs::write(&study, SMALL_SWEEP).unwrap();
    clvscu()
        .args(["run", "--pair", "fake", "--no-plot", "-q", "--study"])
        .arg(&study)
        .arg("--out")
        .arg(out.join("sweep").join("shape-sweep"))
        .assert()
        .success();
    // A table the caller's environment names reaches `auto` but not `auto-builtin`.
    clvscu()
        .env("CLVSCU_MATVEC_RULES", out.join("rules"))
        .args([
            "suite",
            "--plan",
            "matvec-rule",
            "--quick",
            "--pair",
            "fake",
        ])
        .args([
            "--steps",
            "table,auto,auto-builtin,checks",
            "--cap-scale",
            "10",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("matvec-rule plan"));
    for step in ["table", "auto", "auto-builtin", "checks"] {
        assert_eq!(status_of(&out, step), StepStatus::Done, "{step}");
    }
    let tables: Vec<String> = std::fs::read_dir(out.join("rules"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("matvec-auto-"))
        .collect();
    assert_eq!(tables.len(), 2, "one table per fake device: {tables:?}");
    let rule_of = |folder: &Path| -> Vec<(String, String)> {
        let rows: Vec<clvscu::rows::MeasurementRow> =
            clvscu::export::csv::read_rows(&folder.join("measurements.csv")).unwrap();
        rows.into_iter()
            .filter(|r| r.comparison.starts_with("matvec/"))
            .map(|r| {
                let rule = r
                    .flags
                    .split(' ')
                    .find(|f| f.starts_with("-DMV_AUTO_RULE="));
                (format!("{:?}", r.api), rule.unwrap_or("none").to_string())
            })
            .collect()
    };
    let with_table = rule_of(&out.join("sweep").join("shape-sweep-auto"));
    assert!(!with_table.is_empty());
    assert!(
        with_table
            .iter()
            .all(|(_, rule)| rule == "-DMV_AUTO_RULE=table"),
        "{with_table:?}"
    );
    let apis: std::collections::BTreeSet<_> = with_table.iter().map(|(a, _)| a).collect();
    assert_eq!(apis.len(), 2, "both APIs ran with their table");
    let builtin = rule_of(&out.join("auto-builtin"));
    assert!(
        builtin
            .iter()
            .all(|(_, rule)| rule == "-DMV_AUTO_RULE=hand"),
        "{builtin:?}"
    );
    let md = std::fs::read_to_string(out.join("suite.md")).unwrap();
    assert!(
        md.starts_with("# clvscu suite --plan matvec-rule (quick)"),
        "{md}"
    );
    assert!(md.contains("# matvec/auto against its bars"), "{md}");
    assert!(out.join("rules").join("checks.md").is_file());
}

#[test]
fn an_unknown_step_is_refused_naming_the_steps() {
    let dir = tempfile::tempdir().unwrap();
    suite("fake", "table1,nope", &dir.path().join("s"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("nope").and(predicate::str::contains("memory-spaces")));
    assert!(!dir.path().join("s").join("suite.csv").exists());
}

/// The suite's own lines (steps, notes, the files it wrote) name the folder it was given: a
/// name with a right-to-left override or an escape is shown escaped, so it cannot reverse or
/// recolour what the terminal shows after it.
#[test]
fn the_suite_s_own_lines_escape_control_and_bidirectional_characters() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("a\u{202e}b\u{1b}[31mc");
    let done = suite("fake", "table1,inspect", &out).assert().success();
    let output = done.get_output();
    for text in [&output.stdout, &output.stderr] {
        let text = String::from_utf8_lossy(text);
        assert!(
            !text.contains('\u{202e}') && !text.contains('\u{1b}'),
            "a raw control character reached the terminal: {text}"
        );
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("a\\u{202e}b\\u{1b}[31mc"), "{stdout}");
    assert_eq!(status_of(&out, "table1"), StepStatus::Done);
}

#[test]
#[ignore = "needs OpenCL (PoCL in CI)"]
fn the_quick_suite_runs_on_pocl() {
    common::need("OpenCL", opencl::availability());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("suite");
    let assert = suite("opencl-opencl", "table1,peaks,explain", &out).assert();
    let code = assert.get_output().status.code();
    // 0, or 3 when explain ran and some rung could not build on a CPU device.
    assert!(matches!(code, Some(0 | 3)), "{:?}", assert.get_output());
    for step in ["table1", "peaks"] {
        assert_eq!(status_of(&out, step), StepStatus::Done, "{step}");
    }
    assert!(out.join("report.html").is_file());
}

fn harness() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("harness")
}

#[test]
fn harness_holds_at_most_16_studies_and_the_experiments_load_by_path() {
    assert!(
        clvscu::study::BUILTIN.len() <= 16,
        "{} built-in studies",
        clvscu::study::BUILTIN.len()
    );
    let mut experiments = 0;
    for entry in std::fs::read_dir(harness().join("experiments")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let first = text.lines().next().unwrap_or("");
        assert!(
            first.starts_with("# Supports the finding"),
            "{}: the first line names the finding it supports",
            path.display()
        );
        clvscu::study::load(&path.to_string_lossy())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        // Not built in: an experiment runs by its path only.
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        assert!(!clvscu::study::BUILTIN.iter().any(|(n, _)| *n == stem));
        experiments += 1;
    }
    assert!(experiments > 0);
}

/// The full table1 study on the fake backend runs for well over ten seconds: a suite whose
/// step is running, as a plain child process (not through assert_cmd, which waits).
fn start_slow_suite(out: &Path) -> std::process::Child {
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("clvscu"))
        .args(["suite", "--pair", "fake", "--steps", "table1", "--out"])
        .arg(out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    // A step's process, not a copy of the suite forked and not yet turned into the step.
    let is_step = |p: &u32| {
        let cmdline = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
        cmdline.split(|&b| b == 0).nth(1) != Some(b"suite".as_slice())
    };
    assert!(
        common::within(std::time::Duration::from_secs(20), || {
            common::processes_naming(out, pid).iter().any(is_step)
        }),
        "the suite started no step"
    );
    child
}

#[test]
fn a_suite_killed_outright_takes_its_running_step_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("killed");
    let mut suite = start_slow_suite(&out);
    let pid = suite.id();
    suite.kill().unwrap(); // SIGKILL: no handler of the suite runs.
    suite.wait().unwrap();
    assert!(
        common::within(std::time::Duration::from_secs(2), || {
            common::processes_naming(&out, pid).is_empty()
        }),
        "still running 2 s after the suite was killed: {:?}",
        common::processes_naming(&out, pid)
    );
}

#[test]
fn a_suite_told_to_stop_ends_its_step_and_exits_130_resumable() {
    for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("stopped");
        let mut suite = start_slow_suite(&out);
        let pid = suite.id();
        // SAFETY: kill(2) on a child this test started and has not reaped.
        unsafe { libc::kill(pid as libc::pid_t, signal) };
        let mut code = None;
        assert!(
            common::within(std::time::Duration::from_secs(20), || {
                code = suite.try_wait().unwrap().map(|s| s.code());
                code.is_some()
            }),
            "signal {signal}: the suite did not stop"
        );
        assert_eq!(code, Some(Some(130)), "signal {signal}");
        assert!(
            common::processes_naming(&out, pid).is_empty(),
            "signal {signal}: {:?}",
            common::processes_naming(&out, pid)
        );
        assert_eq!(
            status_of(&out, "table1"),
            StepStatus::Interrupted,
            "signal {signal}"
        );
    }
}

/// A step stopped by Ctrl-C and resumed keeps its first attempt's log: the resumed attempt
/// is written after it, under a line that says a resumed attempt starts.
#[test]
fn a_resumed_step_keeps_its_first_attempt_s_log() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("resumed");
    let mut suite = start_slow_suite(&out);
    let log = out.join("logs").join("table1.log");
    // The step writes its log itself: stopped before it has, there is no first attempt to keep.
    assert!(
        common::within(std::time::Duration::from_secs(20), || {
            std::fs::metadata(&log).is_ok_and(|m| m.len() > 0)
        }),
        "the step wrote nothing to its log in 20 s"
    );
    // SAFETY: kill(2) on a child this test started and has not reaped.
    unsafe { libc::kill(suite.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(suite.wait().unwrap().code(), Some(130));
    assert_eq!(status_of(&out, "table1"), StepStatus::Interrupted);
    let first = std::fs::read_to_string(&log).unwrap();
    assert!(!first.is_empty(), "the first attempt wrote no log");
    // The resumed attempt stops at its cap of a second.
    clvscu()
        .args(["suite", "--pair", "fake", "--steps", "table1", "--resume"])
        .args(["--cap-scale", "0.1", "--out"])
        .arg(&out)
        .assert()
        .stdout(predicate::str::contains("[1/1] table1"));
    let both = std::fs::read_to_string(&log).unwrap();
    let second = both
        .strip_prefix(first.as_str())
        .unwrap_or_else(|| panic!("the first attempt's log is gone:\n{first}\n---\n{both}"));
    let (marker, rest) = second
        .trim_start_matches('\n')
        .split_once('\n')
        .unwrap_or_else(|| panic!("no resumed attempt after the first: {second:?}"));
    assert!(marker.contains("resumed attempt"), "{marker}");
    assert!(
        rest.contains("table1"),
        "the resumed attempt wrote nothing: {rest}"
    );
}

/// A folder of the quick suite on the fake pair is resumed only as such: the full suite, or
/// another pair, would mix sizes or devices in one folder.
#[test]
fn a_suite_resumes_only_with_the_mode_and_pair_it_was_made_with() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("suite");
    // The fake compiles no PTX: the inspect step is skipped at once.
    suite("fake", "inspect", &out).assert().success();
    let full = clvscu()
        .args([
            "suite", "--pair", "fake", "--steps", "inspect", "--resume", "--out",
        ])
        .arg(&out)
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&full.get_output().stderr).to_string();
    assert!(
        stderr.contains("was made with --plan paper, --quick, --pair fake; this resume asks for --plan paper, full, --pair fake"),
        "{stderr}"
    );
    let other = clvscu()
        .args([
            "suite", "--quick", "--pair", "opencl", "--steps", "inspect", "--resume", "--out",
        ])
        .arg(&out)
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&other.get_output().stderr).to_string();
    assert!(
        stderr.contains("asks for --plan paper, --quick, --pair opencl"),
        "{stderr}"
    );
    suite("fake", "inspect", &out)
        .arg("--resume")
        .assert()
        .success();
}

/// A CPU step on a machine without an OpenCL CPU device cannot run here: it is skipped, which
/// is not a configuration that failed (exit 0, as for a step skipped for want of torch), and
/// the suite names as written only the files it wrote (no run folder: no report, no findings).
#[test]
fn a_cpu_step_skipped_for_want_of_a_device_is_no_failure_and_no_report_is_claimed() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("suite");
    let no_icd = dir.path().join("no-icd");
    std::fs::create_dir(&no_icd).unwrap();
    let assert = suite("opencl", "cpu", &out)
        .env("OCL_ICD_VENDORS", &no_icd)
        .env("OPENCL_VENDOR_PATH", &no_icd)
        .assert();
    let output = assert.get_output();
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    assert_eq!(status_of(&out, "cpu"), StepStatus::Skipped, "{stdout}");
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    let written = stdout
        .lines()
        .find(|l| l.starts_with("written: "))
        .unwrap_or_else(|| panic!("no written line: {stdout}"));
    for file in ["suite.md", "suite.csv", "peaks.md"] {
        assert!(out.join(file).is_file(), "{file} missing");
        assert!(written.contains(file), "{written}");
    }
    for file in ["report.md", "report.html", "findings.md", "findings.html"] {
        assert!(!out.join(file).exists(), "{file} written");
        assert!(!written.contains(file), "{file} claimed: {written}");
    }
    let md = std::fs::read_to_string(out.join("suite.md")).unwrap();
    assert!(!md.contains("report.html"), "{md}");
}
