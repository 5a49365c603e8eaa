//! Small things a new user meets first, each through the binary: a mistyped study name, an
//! experiment asked for by name, a pair `tune` cannot tune, a missing merge input, a size
//! too large to count, and the Quick start run twice into one folder.

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;

fn clvscu(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("clvscu").expect("binary built");
    cmd.current_dir(dir);
    cmd
}

#[test]
fn a_mistyped_study_name_gets_a_did_you_mean() {
    let dir = tempfile::tempdir().unwrap();
    clvscu(dir.path())
        .args(["run", "--pair", "fake", "--study", "defualt", "--out", "o"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("did you mean 'default'?"));
    assert!(!dir.path().join("o").exists());
}

#[test]
fn an_experiment_asked_for_by_name_points_to_its_file() {
    let dir = tempfile::tempdir().unwrap();
    clvscu(dir.path())
        .args([
            "run",
            "--pair",
            "fake",
            "--study",
            "flat-auto",
            "--out",
            "o",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "--study harness/experiments/flat-auto.toml",
        ));
}

#[test]
fn tune_offers_only_the_pairs_it_tunes() {
    let dir = tempfile::tempdir().unwrap();
    clvscu(dir.path())
        .args(["tune", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("opencl-opencl").not());
    clvscu(dir.path())
        .args(["tune", "reduce/tuned", "--pair", "opencl-opencl"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "possible values: opencl-cuda, opencl, cuda",
        ));
}

#[test]
fn merge_names_an_input_that_does_not_exist() {
    let dir = tempfile::tempdir().unwrap();
    let prs = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/prs.csv");
    clvscu(dir.path())
        .arg("merge")
        .arg(&prs)
        .args(["missing.csv", "-o", "merged.csv"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("missing.csv does not exist"))
        .stderr(predicate::str::contains("at least two").not());
    assert!(!dir.path().join("merged.csv").exists());
}

#[test]
fn a_size_too_large_to_count_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    clvscu(dir.path())
        .args([
            "run",
            "matvec/listing6",
            "--pair",
            "fake",
            "--size",
            "2^40x2^40",
        ])
        .args(["--out", "o"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("more than 2^64 - 1 elements"))
        .stderr(predicate::str::contains("18446744073709551615").not());
}

#[test]
fn a_run_into_a_used_folder_says_how_and_force_starts_afresh() {
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let mut cmd = clvscu(dir.path());
        cmd.args([
            "run",
            "matvec/listing6",
            "--pair",
            "fake",
            "--no-plot",
            "--size",
            "64x40",
        ])
        .args(["--out", "quick"])
        .args(extra);
        cmd
    };
    run(&[]).assert().success();
    run(&[])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("--force to start afresh"));
    run(&["--force"]).assert().success();
    // The folder holds one run's rows, not two.
    let prs = std::fs::read_to_string(dir.path().join("quick/prs.csv")).unwrap();
    assert_eq!(prs.lines().count(), 2, "{prs}");
}

#[test]
fn force_never_deletes_a_folder_no_run_wrote() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("notes")).unwrap();
    std::fs::write(dir.path().join("notes/keep.txt"), "mine").unwrap();
    clvscu(dir.path())
        .args([
            "run",
            "matvec/listing6",
            "--pair",
            "fake",
            "--no-plot",
            "--size",
            "64x40",
        ])
        .args(["--out", "notes", "--force"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("is not a run folder"));
    assert!(dir.path().join("notes/keep.txt").exists());
}
