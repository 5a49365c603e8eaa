//! `clvscu tune --study examples/saxpy_items/saxpy_items.toml` on PoCL: a user pair's
//! declared define (`ITEMS`) and work-group size, under a declared restriction, searched by each
//! of the five strategies; every launched point verifies, the restriction's point is counted
//! and never launched, and `tuned.toml` holds the best with its define though one API ran.

mod common;

use std::path::Path;

use assert_cmd::Command;

const STRATEGIES: [&str; 5] = ["exhaustive", "random", "anneal", "genetic", "bayes"];

/// The example's files copied into `dir` at a size PoCL runs in a blink.
fn example_in(dir: &Path) -> std::path::PathBuf {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/saxpy_items");
    for f in ["saxpy_items.cl", "saxpy_items.cu"] {
        std::fs::copy(example.join(f), dir.join(f)).unwrap();
    }
    let study = std::fs::read_to_string(example.join("saxpy_items.toml")).unwrap();
    let path = dir.join("saxpy_items.toml");
    std::fs::write(&path, study.replace("size = \"2^22\"", "size = \"2^16\"")).unwrap();
    path
}

#[test]
#[ignore = "needs PoCL"]
fn a_user_define_is_tuned_by_each_of_five_strategies_on_pocl() {
    common::need("OpenCL", clvscu::backend::opencl::availability());
    let dir = tempfile::tempdir().unwrap();
    let study = example_in(dir.path());
    let out = dir.path().join("tune");
    let run = Command::cargo_bin("clvscu")
        .unwrap()
        .args(["tune", "--pair", "opencl", "--reps", "3", "--budget", "8"])
        .args(["--strategy", &STRATEGIES.join(",")])
        .arg("--study")
        .arg(&study)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stdout}\n{stderr}");

    // 4 sizes x 5 values = 20 points; 256 x 16 breaks `local * ITEMS <= 2048`.
    assert!(
        stdout.contains("19 valid configurations") && stdout.contains("1 restriction"),
        "{stdout}"
    );
    for s in STRATEGIES {
        assert!(
            stdout.contains(&format!("| {s} | OpenCL |")),
            "{s}: {stdout}"
        );
    }
    let evals = std::fs::read_to_string(out.join("evaluations.csv")).unwrap();
    let rows: Vec<&str> = evals.lines().skip(1).collect();
    assert!(rows.iter().all(|l| l.contains(",ok,")), "{evals}");
    // The define reaches every evaluation, with each of its values somewhere.
    for items in [1, 2, 4, 8, 16] {
        assert!(evals.contains(&format!("ITEMS={items}")), "{evals}");
    }
    let local_column = evals
        .lines()
        .next()
        .unwrap()
        .split(',')
        .position(|c| c == "local")
        .unwrap();
    let broken = rows
        .iter()
        .filter(|l| l.contains("ITEMS=16"))
        .any(|l| l.split(',').nth(local_column) == Some("256"));
    assert!(!broken, "a point breaking the restriction ran: {evals}");

    let tuned = std::fs::read_to_string(out.join("tuned.toml")).unwrap();
    assert!(tuned.contains("only OpenCL was tuned"), "{tuned}");
    assert!(tuned.contains("defines = { ITEMS = \""), "{tuned}");
    // The tuned study is TOML with its comparison.
    let parsed: toml::Value = toml::from_str(&tuned).unwrap();
    assert!(parsed.get("comparison").is_some(), "{tuned}");
}
