//! `clvscu explain` through the binary: the parts run in processes of their own and the
//! verdicts come back; `--from` rebuilds a committed folder's verdicts byte for byte; an
//! earlier explain is never overwritten without `--resume`.

mod common;

use assert_cmd::Command;
use predicates::prelude::*;

fn clvscu() -> Command {
    Command::cargo_bin("clvscu").expect("binary built")
}

#[test]
fn explain_over_the_fake_pair_writes_its_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ex");
    clvscu()
        .args([
            "explain",
            "matvec/listing4",
            "--size",
            "64x64",
            "--pair",
            "fake",
        ])
        .args(["--reps", "10", "--min-time", "0", "--quiet", "--out"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("matvec/listing4"))
        .stdout(predicate::str::contains("wrote"));
    for file in ["explain.csv", "explain-verdicts.csv", "explain.md"] {
        assert!(out.join(file).is_file(), "{file}");
    }
    assert!(out.join("ladder").join("prs.csv").is_file());
    // The part list is the parent's scratch: gone once the parts ran.
    assert!(!out.join("pending-swaps.txt").exists());
    // Not again into the same folder without --resume.
    clvscu()
        .args([
            "explain",
            "matvec/listing4",
            "--size",
            "64x64",
            "--pair",
            "fake",
            "--out",
        ])
        .arg(&out)
        .assert()
        .failure()
        .stderr(predicate::str::contains("--resume"));
}

#[test]
fn explain_from_rebuilds_the_committed_verdicts() {
    let (_dir, copy) = copy_of_committed();
    let committed = COMMITTED;
    std::fs::remove_file(copy.join("explain-verdicts.csv")).unwrap();
    clvscu()
        .arg("explain")
        .arg("--from")
        .arg(&copy)
        .assert()
        .success()
        .stdout(predicate::str::contains("sgemm-tiled16"));
    let again = std::fs::read_to_string(copy.join("explain-verdicts.csv")).unwrap();
    let want =
        std::fs::read_to_string(std::path::Path::new(committed).join("explain-verdicts.csv"))
            .unwrap();
    assert_eq!(again, want);
    assert!(copy.join("charts").read_dir().unwrap().count() > 0);
}

/// `--from DIR --out DIR/sub`: a copy of DIR into a folder inside it would copy itself (the
/// copy is part of what it copies) until the path is too long, filling the folder given only
/// to be read; it is refused, and DIR is left as it was.
#[test]
fn explain_from_into_a_folder_inside_the_folder_read_is_refused() {
    let (_dir, copy) = copy_of_committed();
    let before = std::fs::read_dir(&copy).unwrap().count();
    for inside in [copy.join("again"), copy.join("ladder").join("x").join("y")] {
        clvscu()
            .arg("explain")
            .arg("--from")
            .arg(&copy)
            .arg("--out")
            .arg(&inside)
            .assert()
            .code(1)
            .stderr(predicate::str::contains("inside"));
        assert!(!inside.exists(), "{}", inside.display());
    }
    assert_eq!(std::fs::read_dir(&copy).unwrap().count(), before);
}

/// A committed explain folder, read by the tests of `--from`.
const COMMITTED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/results/h100-2026-11-26-explain/explain-known"
);

/// A copy of [`COMMITTED`] in a temporary folder (kept while the first value lives).
fn copy_of_committed() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("explain-known");
    copy_tree(std::path::Path::new(COMMITTED), &copy);
    (dir, copy)
}

fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let path = entry.path();
        let target = to.join(entry.file_name());
        if path.is_dir() {
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

/// An explain killed outright (SIGKILL: none of its handlers runs) takes the part it is
/// running in a process of its own with it within 2 s.
#[test]
fn an_explain_killed_outright_takes_its_running_part_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("killed");
    // A large matrix on the fake pair: its part runs for many seconds.
    let mut explain = std::process::Command::new(assert_cmd::cargo::cargo_bin("clvscu"))
        .args([
            "explain",
            "matvec/listing4",
            "--size",
            "4096x4096",
            "--pair",
            "fake",
        ])
        .args(["--reps", "50", "--min-time", "1", "--quiet", "--out"])
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = explain.id();
    assert!(
        common::within(std::time::Duration::from_secs(20), || {
            !common::processes_naming(&out, pid).is_empty()
        }),
        "the explain started no part"
    );
    explain.kill().unwrap();
    explain.wait().unwrap();
    assert!(
        common::within(std::time::Duration::from_secs(2), || {
            common::processes_naming(&out, pid).is_empty()
        }),
        "still running 2 s after the explain was killed: {:?}",
        common::processes_naming(&out, pid)
    );
}
