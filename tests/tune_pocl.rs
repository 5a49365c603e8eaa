//! `clvscu tune` on PoCL: the default (small) space of matvec/tuned and reduce/tuned is
//! tuned exhaustively and by annealing on the OpenCL CPU device in under two minutes, writes
//! every evaluation, and a second run measures nothing again.

mod common;

use std::time::{Duration, Instant};

use assert_cmd::Command;

fn tune(target: &str, out: &std::path::Path, strategy: &str) -> String {
    let o = Command::cargo_bin("clvscu")
        .unwrap()
        .args([
            "tune",
            target,
            "--pair",
            "opencl",
            "--strategy",
            strategy,
            "--reps",
            "3",
        ])
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    text
}

#[test]
#[ignore = "needs OpenCL"]
fn the_default_space_tunes_on_pocl_in_under_two_minutes() {
    common::need("OpenCL", clvscu::backend::opencl::availability());
    let dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    for target in ["matvec/tuned", "reduce/tuned"] {
        let out = dir.path().join(target.replace('/', "-"));
        let text = tune(target, &out, "exhaustive,anneal");
        assert!(text.contains("| exhaustive | OpenCL |"), "{text}");
        let csv = std::fs::read_to_string(out.join("evaluations.csv")).unwrap();
        // Header, and every point of the small space at least once, all verified.
        assert!(csv.lines().count() > 8, "{csv}");
        assert!(csv.lines().skip(1).all(|l| l.contains(",ok,")), "{csv}");
        // Resume: every evaluation of the second run comes from the cache.
        tune(target, &out, "random");
        let csv = std::fs::read_to_string(out.join("evaluations.csv")).unwrap();
        assert!(csv.lines().skip(1).all(|l| l.contains(",true,")), "{csv}");
    }
    assert!(
        start.elapsed() < Duration::from_secs(120),
        "{:?}",
        start.elapsed()
    );
}
