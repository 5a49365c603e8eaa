//! Every output goes through one safe writer: exports, merge, findings and explain refuse a
//! target that is a link, a FIFO, a device node or a hard-linked file, refuse to overwrite a
//! file the run owns or the study being read, and never write into a folder given only as
//! input. Runs on the hidden fake pair: no device needed.

mod common;

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::Command;
use clvscu::export::csv::read_rows;
use clvscu::rows::PrRow;
use predicates::prelude::*;

/// Two small comparisons: a run takes a fraction of a second.
const SMALL: &str = "name = \"small\"\n[defaults]\nsize = \"64x40\"\nlocal = 64\n\
                     warmup = 1\nreps = 3\nmin_time = 0\n[[comparison]]\n\
                     variant = \"listing2\"\n[[comparison]]\nvariant = \"tuned\"\n";

fn clvscu() -> Command {
    let mut cmd = Command::cargo_bin("clvscu").unwrap();
    cmd.timeout(Duration::from_secs(120));
    cmd
}

fn study(dir: &Path) -> PathBuf {
    let path = dir.join("small.toml");
    std::fs::write(&path, SMALL).unwrap();
    path
}

/// `run --pair fake` of the small study into `out`, with `extra` arguments.
fn fake_run(study: &Path, out: &Path, extra: &[&str]) -> Command {
    let mut cmd = clvscu();
    cmd.args(["run", "--pair", "fake", "--no-plot", "--quiet", "--study"])
        .arg(study)
        .arg("--out")
        .arg(out)
        .args(extra);
    cmd
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// A finished fake run in `dir/run`, and the study it read.
fn finished_run(dir: &Path) -> (PathBuf, PathBuf) {
    let study = study(dir);
    let out = dir.join("run");
    fake_run(&study, &out, &[]).assert().success();
    (study, out)
}

#[test]
fn exports_onto_the_runs_own_files_or_the_study_are_refused_and_nothing_changes() {
    let dir = tempfile::tempdir().unwrap();
    let (study, out) = finished_run(dir.path());
    for (option, name) in [
        ("--export-json", "folder.json"),
        ("--export-csv", "measurements.csv"),
        ("--export-markdown", "prs.csv"),
        // The run's record of its devices and its summary: an export there replaced them.
        ("--export-json", "provenance.json"),
        ("--export-markdown", "summary.md"),
    ] {
        let before = std::fs::read(out.join(name)).unwrap();
        let target = out.join(".").join(name);
        fake_run(
            &study,
            &out,
            &["--resume", option, target.to_str().unwrap()],
        )
        .assert()
        .failure()
        .stderr(predicate::str::contains("which this command reads or owns"));
        assert_eq!(std::fs::read(out.join(name)).unwrap(), before, "{name}");
    }
    fake_run(
        &study,
        &dir.path().join("other"),
        &["--export-csv", study.to_str().unwrap()],
    )
    .assert()
    .failure()
    .stderr(predicate::str::contains("which this command reads or owns"));
    assert_eq!(std::fs::read_to_string(&study).unwrap(), SMALL);
}

#[test]
fn exports_onto_a_link_a_fifo_a_hard_link_or_a_device_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let study = study(dir.path());
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "keep").unwrap();
    let link = dir.path().join("link.csv");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let twin = dir.path().join("twin.csv");
    std::fs::hard_link(&victim, &twin).unwrap();
    let fifo = dir.path().join("fifo.csv");
    mkfifo(&fifo);
    let cases = [
        (&link, "is a symbolic link"),
        (&twin, "hard links"),
        (&fifo, "is not a regular file"),
        (&PathBuf::from("/dev/null"), "is not a regular file"),
    ];
    for (i, (target, says)) in cases.iter().enumerate() {
        let out = dir.path().join(format!("out{i}"));
        fake_run(&study, &out, &["--export-csv", target.to_str().unwrap()])
            .assert()
            .failure()
            .stderr(predicate::str::contains(*says));
        // Refused before anything was measured.
        assert!(
            !out.join("measurements.csv").exists(),
            "{}",
            target.display()
        );
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    let null = std::fs::metadata("/dev/null").unwrap();
    assert!(null.file_type().is_char_device());
}

#[test]
fn merge_onto_a_device_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let study = study(dir.path());
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    fake_run(&study, &a, &[]).assert().success();
    fake_run(&study, &b, &[]).assert().success();
    clvscu()
        .args(["merge", "-o", "/dev/null"])
        .arg(a.join("prs.csv"))
        .arg(b.join("prs.csv"))
        .assert()
        .failure()
        .stderr(predicate::str::contains("is not a regular file"));
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
}

#[test]
fn an_export_after_a_resume_holds_the_whole_folder() {
    let dir = tempfile::tempdir().unwrap();
    let study = study(dir.path());
    let out = dir.path().join("run");
    fake_run(&study, &out, &["--only", "listing2"])
        .assert()
        .success();
    let export = dir.path().join("all.csv");
    // The resume finds everything done: the export still holds the folder's row.
    fake_run(
        &study,
        &out,
        &[
            "--only",
            "listing2",
            "--resume",
            "--export-csv",
            export.to_str().unwrap(),
        ],
    )
    .assert()
    .success();
    let exported: Vec<PrRow> = read_rows(&export).unwrap();
    let folder: Vec<PrRow> = read_rows(&out.join("prs.csv")).unwrap();
    assert_eq!(folder.len(), 1);
    assert_eq!(exported.len(), folder.len());
}

#[test]
fn a_hard_linked_measurements_csv_in_the_folder_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let study = study(dir.path());
    let out = dir.path().join("run");
    std::fs::create_dir(&out).unwrap();
    let twin = dir.path().join("twin.csv");
    std::fs::write(&twin, "").unwrap();
    std::fs::hard_link(&twin, out.join("measurements.csv")).unwrap();
    fake_run(&study, &out, &[])
        .assert()
        .failure()
        .stderr(predicate::str::contains("measurements.csv"));
    assert_eq!(std::fs::read(&twin).unwrap(), b"");
}

fn committed_explain() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("results/h100-2026-11-26-explain/explain-known")
}

#[test]
fn explain_from_with_out_writes_only_into_out() {
    let dir = tempfile::tempdir().unwrap();
    let before = common::files_under(&committed_explain());
    let out = dir.path().join("again");
    clvscu()
        .arg("explain")
        .arg("--from")
        .arg(committed_explain())
        .arg("--out")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("sgemm-tiled16"));
    assert_eq!(common::files_under(&committed_explain()), before);
    let want = std::fs::read(committed_explain().join("explain-verdicts.csv")).unwrap();
    assert_eq!(
        std::fs::read(out.join("explain-verdicts.csv")).unwrap(),
        want
    );
    assert!(out.join("charts").read_dir().unwrap().count() > 0);
}

#[test]
fn explain_from_a_missing_empty_or_plain_run_folder_is_an_error_that_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let (_, plain) = finished_run(dir.path());
    let plain_before = common::files_under(&plain);
    for (from, says) in [
        (dir.path().join("missing"), "no such folder"),
        (empty.clone(), "holds no explain ladder"),
        (plain.clone(), "holds no explain ladder"),
    ] {
        clvscu()
            .arg("explain")
            .arg("--from")
            .arg(&from)
            .assert()
            .failure()
            .stderr(predicate::str::contains(says));
    }
    assert_eq!(std::fs::read_dir(&empty).unwrap().count(), 0);
    assert_eq!(common::files_under(&plain), plain_before);
}

#[test]
fn explain_refuses_an_export_it_would_ignore() {
    clvscu()
        .args(["explain", "--from", "x", "--export-csv", "y.csv"])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "explain does not take --export-csv",
        ));
    assert!(!Path::new("y.csv").exists());
}
