//! A study's own kernel pair (`examples/saxpy/`) through the binary: run, tuned and explained
//! on PoCL from a study file outside the repository; a wrongly declared argument refused by
//! name; a result that does not match never timed into a PR; a build error shown with its log.

mod common;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;

fn clvscu() -> Command {
    Command::cargo_bin("clvscu").expect("binary built")
}

/// The example's three files copied into `dir` (a folder outside the repository), the study
/// text changed by `edit`; returns the study's path.
fn example_in(dir: &Path, edit: impl Fn(String) -> String) -> PathBuf {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/saxpy");
    for f in ["saxpy.cl", "saxpy.cu"] {
        std::fs::copy(example.join(f), dir.join(f)).unwrap();
    }
    let study = std::fs::read_to_string(example.join("saxpy.toml")).unwrap();
    let path = dir.join("saxpy.toml");
    std::fs::write(&path, edit(study)).unwrap();
    path
}

/// The example at a size PoCL runs in a blink.
fn small(study: String) -> String {
    study.replace("size = \"2^24\"", "size = \"2^16\"")
}

#[test]
#[ignore = "needs OpenCL"]
fn the_saxpy_example_runs_tunes_and_explains_on_pocl() {
    common::need("OpenCL", clvscu::backend::opencl::availability());
    let home = tempfile::tempdir().unwrap();
    let study = example_in(home.path(), small);
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    clvscu()
        .current_dir(work.path())
        .args(["run", "--pair", "opencl-opencl", "--quiet", "--study"])
        .arg(&study)
        .arg("--out")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("saxpy/saxpy"));
    let prs = std::fs::read_to_string(out.join("prs.csv")).unwrap();
    assert_eq!(prs.lines().count(), 2, "{prs}");
    assert!(prs.contains("saxpy/saxpy"), "{prs}");
    let m = std::fs::read_to_string(out.join("measurements.csv")).unwrap();
    assert!(
        m.lines().skip(1).all(|l| l.contains(",saxpy,saxpy,")),
        "{m}"
    );
    assert!(m.contains("GB/s"), "{m}");
    let provenance = std::fs::read_to_string(out.join("provenance.json")).unwrap();
    assert!(
        provenance.contains("kernel source sha256/12 saxpy: OpenCL"),
        "the pair's files are hashed into the provenance"
    );

    clvscu()
        .current_dir(work.path())
        .args(["tune", "--pair", "opencl", "--reps", "3", "--study"])
        .arg(&study)
        .arg("--out")
        .arg(out.join("tune"))
        .assert()
        .success()
        .stdout(predicate::str::contains("Tuning saxpy/saxpy"));
    let evals = std::fs::read_to_string(out.join("tune/evaluations.csv")).unwrap();
    // The five work-group sizes the study lists, each verified.
    assert_eq!(evals.lines().count(), 6, "{evals}");
    assert!(evals.lines().skip(1).all(|l| l.contains(",ok,")), "{evals}");

    clvscu()
        .current_dir(work.path())
        .args(["explain", "--pair", "opencl-opencl", "--quiet", "--study"])
        .arg(&study)
        .arg("--out")
        .arg(out.join("explain"))
        .args(["--timeout", "60"])
        .assert()
        .success()
        .stdout(predicate::str::contains("saxpy/saxpy"));
    let md = std::fs::read_to_string(out.join("explain/explain.md")).unwrap();
    assert!(md.contains("saxpy/saxpy"), "{md}");

    // Another process reads the folder without the study: its family is known from its rows.
    clvscu()
        .args(["report"])
        .arg(&out)
        .arg("--out")
        .arg(out.join("report"))
        .assert()
        .success();
    clvscu()
        .args(["plot"])
        .arg(&out)
        .arg("--out")
        .arg(out.join("charts-again"))
        .assert()
        .success()
        .stdout(predicate::str::contains("pr-saxpy"));

    // Nothing was written beside the study or in the working folder but the output folder.
    assert_eq!(
        common::files_under(home.path()),
        ["saxpy.cl", "saxpy.cu", "saxpy.toml"].map(PathBuf::from)
    );
    assert!(std::fs::read_dir(work.path())
        .unwrap()
        .all(|e| e.unwrap().file_name() == "out"));
}

#[test]
fn a_wrongly_declared_argument_is_refused_by_name() {
    let home = tempfile::tempdir().unwrap();
    let study = example_in(home.path(), |s| {
        s.replace(
            r#"{ name = "a", scalar = "f32", value = 2.5 }"#,
            r#"{ name = "a", buffer = "f32", len = "N" }"#,
        )
    });
    let out = home.path().join("out");
    clvscu()
        .args(["run", "--pair", "fake", "--study"])
        .arg(&study)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "argument 'a' (parameter 2 of kernel 'saxpy', 'a' in the source) is declared \
             buffer f32, but the kernel takes a scalar f32",
        ));
    assert!(!out.exists());
    // One argument too few: both counts and names.
    let study = example_in(home.path(), |s| {
        s.replace(r#"    { name = "n", scalar = "u32", value = "N" },"#, "")
    });
    clvscu()
        .args(["run", "--pair", "fake", "--study"])
        .arg(&study)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "kernel 'saxpy' has 4 parameter(s) (n, a, x, y); the study declares 3 (a, x, y)",
        ));
}

#[test]
#[ignore = "needs OpenCL"]
fn a_result_that_does_not_match_is_never_timed_into_a_pr() {
    common::need("OpenCL", clvscu::backend::opencl::availability());
    let home = tempfile::tempdir().unwrap();
    let study = example_in(home.path(), |s| {
        small(s).replace(
            r#"reference = "a * x + y""#,
            r#"reference = "a * x + y + 0.001""#,
        )
    });
    let out = home.path().join("out");
    clvscu()
        .args(["run", "--pair", "opencl-opencl", "--quiet", "--study"])
        .arg(&study)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(3)
        .stderr(predicate::str::contains("verify-failed max error 1.000e-3"));
    let prs = std::fs::read_to_string(out.join("prs.csv")).unwrap();
    assert_eq!(prs.lines().count(), 1, "only the header: {prs}");
    let m = std::fs::read_to_string(out.join("measurements.csv")).unwrap();
    assert_eq!(m.matches(",verify-failed,").count(), 2, "{m}");
}

#[test]
#[ignore = "needs OpenCL"]
fn a_build_error_shows_its_log() {
    common::need("OpenCL", clvscu::backend::opencl::availability());
    let home = tempfile::tempdir().unwrap();
    let study = example_in(home.path(), small);
    let cl = home.path().join("saxpy.cl");
    let text = std::fs::read_to_string(&cl).unwrap();
    std::fs::write(&cl, text.replace("+ y[i];", "+ undeclared_zz;")).unwrap();
    clvscu()
        .args(["run", "--pair", "opencl-opencl", "--quiet", "--study"])
        .arg(&study)
        .arg("--out")
        .arg(home.path().join("out"))
        .assert()
        .code(3)
        .stderr(predicate::str::contains("build log"))
        .stderr(predicate::str::contains("saxpy.cl:"))
        .stderr(predicate::str::contains("undeclared_zz"));
}

/// A scalar its type cannot hold is an error naming the argument and the range, not a value
/// saturated into it (infinity was 4294967295, -1 was 0); a launch grid of 0 is an error too.
#[test]
fn a_scalar_out_of_its_range_and_an_empty_grid_are_refused() {
    let home = tempfile::tempdir().unwrap();
    // An expression nested 100 levels deep: refused by its depth, not by a stack overflow.
    let deep = format!(
        r#"{{ name = "a", scalar = "f32", value = "{}1{}" }}"#,
        "(".repeat(100),
        ")".repeat(100)
    );
    let cases = [
        (
            r#"{ name = "a", scalar = "f32", value = 2.5 }"#,
            deep.as_str(),
            "nested more than 64 levels deep",
        ),
        (
            r#"{ name = "n", scalar = "u32", value = "N" }"#,
            r#"{ name = "n", scalar = "u32", value = "-1" }"#,
            "argument 'n' = '-1': -1 is not a u32, 0 to 4294967295",
        ),
        (
            r#"{ name = "n", scalar = "u32", value = "N" }"#,
            r#"{ name = "n", scalar = "u32", value = "1/0" }"#,
            "argument 'n' = '1/0': inf is not a u32, 0 to 4294967295",
        ),
        (
            r#"{ name = "a", scalar = "f32", value = 2.5 }"#,
            r#"{ name = "a", scalar = "f32", value = "10^39" }"#,
            "argument 'a' = '10^39': 1000000000000000000000000000000000000000 is not a finite f32",
        ),
        (
            r#"global = "N""#,
            r#"global = "0""#,
            "global '0' is 0 at size 65536: a launch needs at least one work-item",
        ),
    ];
    for (from, to, expected) in cases {
        let study = example_in(home.path(), |s| small(s).replace(from, to));
        let out = home.path().join("out");
        let assert = clvscu()
            .args(["run", "--pair", "fake", "--quiet", "--study"])
            .arg(&study)
            .arg("--out")
            .arg(&out)
            .assert()
            .failure();
        let output = assert.get_output();
        let text = String::from_utf8_lossy(&output.stderr).to_string()
            + &String::from_utf8_lossy(&output.stdout);
        assert!(text.contains(expected), "{to}: {text}");
        let _ = std::fs::remove_dir_all(&out);
    }
}

/// The study's own kernel files are part of what a folder holds: after one is edited, a
/// resume is refused naming it; unchanged, the resume goes on.
#[test]
fn a_resume_after_the_kernel_file_changed_is_refused_naming_it() {
    let home = tempfile::tempdir().unwrap();
    let study = example_in(home.path(), small);
    let out = home.path().join("out");
    let run = |resume: bool| {
        let mut c = clvscu();
        c.args(["run", "--pair", "fake", "--quiet", "--no-plot", "--study"])
            .arg(&study)
            .arg("--out")
            .arg(&out);
        if resume {
            c.arg("--resume");
        }
        c.assert()
    };
    // The fake backend cannot run a user's kernel (no host emulation): every row fails
    // (exit 3), but the folder records its sources as for any run.
    run(false).code(3);
    run(true).code(3);
    let cl = home.path().join("saxpy.cl");
    let text = std::fs::read_to_string(&cl).unwrap() + "\n// edited\n";
    std::fs::write(&cl, text).unwrap();
    let refused = run(true).code(1);
    let stderr = String::from_utf8_lossy(&refused.get_output().stderr).to_string();
    assert!(
        stderr.contains("source file ") && stderr.contains("saxpy.cl: the folder has hash"),
        "{stderr}"
    );
}
