//! Faults through the binary: a kernel that never ends is stopped by the watchdog and by
//! Ctrl-C, keeping every finished comparison (in `run` and in `tune`); two runs on one
//! folder, a run whose lock is deleted, a resume of another study and a hand-truncated
//! folder are caught; tunes sharing one cache lose nothing; a 200,000-row PR file is charted
//! within a stated memory bound.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use clvscu::backend::opencl;
use clvscu::export::csv::read_rows;
use clvscu::rows::{MeasurementRow, PrRow};

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("clvscu")
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A copy of the shipped kernels in which OpenCL's Listing 2 never ends.
fn hung_kernels(dir: &Path) -> PathBuf {
    hung_kernels_at(dir, "matvec_listing2(")
}

/// A copy of the shipped kernels in which the OpenCL matvec kernel `entry` never ends.
fn hung_kernels_at(dir: &Path, entry: &str) -> PathBuf {
    let kd = dir.join("kernels");
    for (folder, ext) in [("kernels_cl", "cl"), ("kernels_cu", "cu")] {
        std::fs::create_dir_all(kd.join(folder)).unwrap();
        for stem in ["prelude", "matvec", "reduce", "peak"] {
            let name = format!("{stem}.{ext}");
            let mut text = std::fs::read_to_string(Path::new(folder).join(&name)).unwrap();
            if name == "matvec.cl" {
                let at = text.find(entry).unwrap();
                let body = at + text[at..].find('{').unwrap() + 1;
                // A store in the loop keeps the compiler from removing it.
                text.insert_str(body, "\n    for (;;) { W[0] += 1.0f; }\n");
            }
            std::fs::write(kd.join(folder).join(name), text).unwrap();
        }
    }
    kd
}

/// listing6 (finishes), then listing2 (hangs on OpenCL).
const HANG_STUDY: &str = "name = \"hang\"\n[defaults]\nsize = \"64x64\"\nlocal = 64\n\
    warmup = 1\nreps = 2\nmin_time = 0.0\n[[comparison]]\nvariant = \"listing6\"\n\
    [[comparison]]\nvariant = \"listing2\"\n";

fn start_hung_run(dir: &Path, extra: &[&str]) -> (Child, PathBuf) {
    let study = write(dir, "hang.toml", HANG_STUDY);
    let out = dir.join("out");
    let child = Command::new(bin())
        .args(["run", "--pair", "opencl", "--no-plot", "--kernels-dir"])
        .arg(hung_kernels(dir))
        .arg("--study")
        .arg(&study)
        .arg("--out")
        .arg(&out)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    (child, out)
}

fn finish(child: Child, within: Duration) -> (i32, String) {
    let start = Instant::now();
    let mut child = child;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            return (
                status.code().unwrap_or(-1),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            );
        }
        if start.elapsed() > within {
            let _ = child.kill();
            panic!("the run did not stop within {within:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn finished_comparisons(out: &Path) -> Vec<String> {
    let rows: Vec<MeasurementRow> = read_rows(&out.join("measurements.csv")).unwrap();
    rows.into_iter().map(|r| r.comparison).collect()
}

#[test]
#[ignore = "needs OpenCL"]
fn the_watchdog_stops_a_hung_kernel_and_keeps_finished_comparisons() {
    common::need("OpenCL", opencl::availability());
    let dir = tempfile::tempdir().unwrap();
    let (child, out) = start_hung_run(dir.path(), &["--timeout", "3"]);
    let (code, stderr) = finish(child, Duration::from_secs(60));
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.contains("watchdog: the verification of matvec/listing2 on OpenCL"),
        "{stderr}"
    );
    assert!(stderr.contains("past its limit of 3.0 s"), "{stderr}");
    assert_eq!(finished_comparisons(&out), ["matvec/listing6"]);
    assert!(
        !out.join(".clvscu.lock").exists(),
        "the lock outlived its run"
    );
}

#[test]
#[ignore = "needs OpenCL"]
fn ctrl_c_ends_a_run_stuck_in_a_kernel_and_keeps_finished_comparisons() {
    common::need("OpenCL", opencl::availability());
    let dir = tempfile::tempdir().unwrap();
    let (child, out) = start_hung_run(dir.path(), &[]);
    let measurements = out.join("measurements.csv");
    let start = Instant::now();
    while std::fs::read_to_string(&measurements).map_or(0, |t| t.lines().count()) < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "listing6 never finished"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Now inside the stuck verification launch of listing2.
    std::thread::sleep(Duration::from_secs(2));
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let (code, stderr) = finish(child, Duration::from_secs(20));
    assert_eq!(code, 130, "{stderr}");
    assert!(
        stderr.contains("during a launch that had not returned"),
        "{stderr}"
    );
    assert_eq!(finished_comparisons(&out), ["matvec/listing6"]);
    assert!(
        !out.join(".clvscu.lock").exists(),
        "the lock outlived its run"
    );
}

/// A fake-pair study; run with many passes it holds its folder's lock for a while.
const SLOW_FAKE: &str = "name = \"slow\"\n[defaults]\nsize = \"64x40\"\nlocal = 64\n\
    warmup = 0\nreps = 3\nmin_time = 0\n[[comparison]]\nvariant = \"listing6\"\n";

/// A 2000-pass run of [`SLOW_FAKE`] into `out`.
fn slow_fake_run(study: &Path, out: &Path, resume: bool) -> Command {
    let mut c = Command::new(bin());
    c.args([
        "run",
        "--pair",
        "fake",
        "--no-plot",
        "--passes",
        "2000",
        "--study",
    ])
    .arg(study)
    .arg("--out")
    .arg(out)
    .stdout(Stdio::null())
    .stderr(Stdio::piped());
    if resume {
        c.arg("--resume");
    }
    c
}

/// Waits until the run writing `out` holds its lock and has written `rows` measurement rows.
fn wait_for_lock_and_rows(out: &Path, rows: usize) {
    let lock = out.join(".clvscu.lock");
    let measurements = out.join("measurements.csv");
    let start = Instant::now();
    while std::fs::read_to_string(&lock).map_or(true, |t| t.is_empty())
        || std::fs::read_to_string(&measurements).map_or(0, |t| t.lines().count()) <= rows
    {
        assert!(start.elapsed() < Duration::from_secs(30), "no lock taken");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn two_runs_on_one_folder_the_second_is_refused_naming_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let study = write(dir.path(), "slow.toml", SLOW_FAKE);
    let out = dir.path().join("out");
    let run = |resume: bool| slow_fake_run(&study, &out, resume);
    let first = run(false).spawn().unwrap();
    wait_for_lock_and_rows(&out, 0);
    let second = run(true).output().unwrap();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("in use by another clvscu run (pid ")
            && stderr.contains(&format!("pid {}", first.id())),
        "{stderr}"
    );
    let (code, stderr) = finish(first, Duration::from_secs(300));
    assert_eq!(code, 0, "{stderr}");
    let prs: Vec<PrRow> = read_rows(&out.join("prs.csv")).unwrap();
    assert_eq!(prs.len(), 2000, "one PR per pass, none twice");
    assert!(
        !out.join(".clvscu.lock").exists(),
        "the lock outlived its run"
    );
}

#[test]
fn a_run_whose_lock_is_deleted_stops_and_a_resume_finishes_without_a_double_row() {
    let dir = tempfile::tempdir().unwrap();
    let study = write(dir.path(), "slow.toml", SLOW_FAKE);
    let out = dir.path().join("out");
    let first = slow_fake_run(&study, &out, false).spawn().unwrap();
    wait_for_lock_and_rows(&out, 20);
    std::fs::remove_file(out.join(".clvscu.lock")).unwrap();
    // Without its lock the run must stop by itself: a second run could now take the folder.
    let (code, stderr) = finish(first, Duration::from_secs(60));
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("this run's lock was deleted or replaced by another process"),
        "{stderr}"
    );
    let second = slow_fake_run(&study, &out, true).output().unwrap();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(0), "{stderr}");
    let prs: Vec<PrRow> = read_rows(&out.join("prs.csv")).unwrap();
    let names: std::collections::HashSet<_> = prs.iter().map(|p| &p.comparison).collect();
    assert_eq!((prs.len(), names.len()), (2000, 2000), "one PR per pass");
}

/// Tunes on the fake pair's small spaces, whose caches hold these many entries alone.
const FAKE_TUNES: [(&str, usize); 4] = [
    ("matvec/tuned", 32),
    ("matvec/tuned-vec", 4),
    ("reduce/tuned", 32),
    ("spmv/vector", 24),
];

#[test]
fn tunes_sharing_one_cache_lose_no_entry() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("shared.json");
    let tunes: Vec<Child> = FAKE_TUNES
        .iter()
        .enumerate()
        .map(|(i, (target, _))| {
            Command::new(bin())
                .args(["tune", target, "--pair", "fake", "--space", "small"])
                .args(["--no-charts", "--out"])
                .arg(dir.path().join(format!("t{i}")))
                .arg("--cache")
                .arg(&cache)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for t in tunes {
        let (code, stderr) = finish(t, Duration::from_secs(120));
        assert_eq!(code, 0, "{stderr}");
    }
    let text = std::fs::read_to_string(&cache).unwrap();
    let file: serde_json::Value = serde_json::from_str(&text).unwrap();
    let keys: Vec<&String> = file["entries"].as_object().unwrap().keys().collect();
    for (target, alone) in FAKE_TUNES {
        let n = keys
            .iter()
            .filter(|k| k.contains(&format!("| {target} |")))
            .count();
        assert_eq!(n, alone, "{target}: entries lost");
    }
    assert!(!dir.path().join(".shared.json.lock").exists());
}

#[test]
#[ignore = "needs OpenCL"]
fn the_watchdog_and_ctrl_c_stop_a_tune_stuck_in_a_kernel() {
    common::need("OpenCL", opencl::availability());
    let dir = tempfile::tempdir().unwrap();
    let kernels = hung_kernels_at(dir.path(), "matvec_tuned(");
    let tune = |extra: &[&str]| {
        Command::new(bin())
            .args([
                "tune",
                "matvec/tuned",
                "--pair",
                "opencl",
                "--space",
                "small",
            ])
            .args(["--no-charts", "--kernels-dir"])
            .arg(&kernels)
            .arg("--out")
            .arg(dir.path().join("t"))
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (code, stderr) = finish(tune(&["--timeout", "3"]), Duration::from_secs(60));
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.contains("watchdog: the verification of matvec/tuned local="),
        "{stderr}"
    );
    assert!(stderr.contains("past its limit of 3.0 s"), "{stderr}");
    let child = tune(&[]);
    let pid = child.id().to_string();
    // A Ctrl-C during the stuck launch ends the tune; one before it only asks it to stop
    // after the launch, so Ctrl-C is repeated as a person would.
    let interrupter = std::thread::spawn(move || {
        for _ in 0..10 {
            std::thread::sleep(Duration::from_secs(2));
            let _ = Command::new("kill").args(["-INT", &pid]).status();
        }
    });
    let (code, stderr) = finish(child, Duration::from_secs(40));
    assert_eq!(code, 130, "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    drop(interrupter);
}

/// The address space `plot` may use for 200,000 PR rows, enforced with `ulimit -v` (KiB).
const PLOT_MEMORY_BOUND_KIB: u64 = 1 << 20;

/// A PR row as a run writes it, read from CSV text so every column has a real value.
fn template_pr() -> PrRow {
    let text = "run_id,study,comparison,device_a,device_b,api_a,api_b,family,variant,size,local_size,groups,metric_unit,metric_a,metric_b,pr,pr_ci_lo,pr_ci_hi,similar,similar_tight,fair,differing_steps,timer,sweep_param,sweep_value\n\
         r,big,matvec/v,GPU,GPU,OpenCL,CUDA,matvec,v,4096x1100,256,64,GB/s,100,101,0.99,0.98,1.0,true,true,true,,device-event,,\n";
    csv::Reader::from_reader(text.as_bytes())
        .deserialize()
        .next()
        .unwrap()
        .unwrap()
}

fn pr_row(template: &PrRow, i: usize) -> PrRow {
    let mut r = template.clone();
    r.run_id = format!("r{}", i % 3);
    r.comparison = format!("matvec/v{i}");
    r.variant = format!("v{i}");
    r.fair = !i.is_multiple_of(5);
    if !r.fair {
        r.differing_steps = "configuration: 256x64 vs 128x64".into();
    }
    r
}

#[test]
fn a_200k_row_pr_file_is_charted_in_bounded_memory_and_says_what_is_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let template = template_pr();
    let rows: Vec<PrRow> = (0..200_000).map(|i| pr_row(&template, i)).collect();
    let prs = dir.path().join("prs.csv");
    clvscu::export::csv::write_rows(&prs, &rows).unwrap();
    let charts = dir.path().join("charts");
    let started = Instant::now();
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ulimit -v {PLOT_MEMORY_BOUND_KIB} && exec \"$0\" plot \"$1\" --out \"$2\""
        ))
        .arg(bin())
        .arg(&prs)
        .arg(&charts)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("the PR chart draws 1440 of 200000 PR rows"),
        "{stderr}"
    );
    let files = std::fs::read_dir(&charts).unwrap().count();
    assert_eq!(files, 2 * 24, "24 figures, PNG and SVG");
    assert!(started.elapsed() < Duration::from_secs(300));
}
