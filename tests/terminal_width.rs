//! Output in 100 columns: with a width to keep to (a terminal's, or `COLUMNS` off one), no
//! line that `run`, `tune`, `explain --from` or `suite --quick` writes is wider than 100
//! columns, and progress says how far each is. Piped without `COLUMNS`, lines stay whole.

use std::path::Path;

use assert_cmd::Command;

const WIDTH: usize = 100;

/// Runs `args` with `COLUMNS` (or without it) and returns stdout and stderr together.
fn output(args: &[&str], out: &Path, columns: Option<usize>) -> String {
    let mut cmd = Command::cargo_bin("clvscu").expect("binary built");
    cmd.args(args).arg("--out").arg(out).env_remove("COLUMNS");
    if let Some(c) = columns {
        cmd.env("COLUMNS", c.to_string());
    }
    let done = cmd.output().unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&done.stdout),
        String::from_utf8_lossy(&done.stderr)
    )
}

/// The lines of `text` wider than [`WIDTH`] columns.
fn too_wide(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| clvscu::terminal::columns_of(l) > WIDTH)
        .collect()
}

fn assert_fits(what: &str, text: &str) {
    let wide = too_wide(text);
    assert!(
        wide.is_empty(),
        "{what}: lines over {WIDTH} columns: {wide:#?}\n{text}"
    );
}

#[test]
fn run_keeps_to_100_columns_and_names_the_devices_once() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "run",
        "matvec/listing6",
        "--pair",
        "fake",
        "--size",
        "64x40",
        "--local",
        "32,64",
        "--reps",
        "3",
        "--min-time",
        "0",
        "--no-plot",
    ];
    let text = output(&args, &dir.path().join("a"), Some(WIDTH));
    assert_fits("run", &text);
    assert_eq!(text.matches("fake OpenCL device").count(), 1, "{text}");
    assert!(text.contains("[2/2] matvec/listing6"), "{text}");
    // Without a width the long lines are whole: a log keeps each on one line.
    let piped = output(&args, &dir.path().join("b"), None);
    assert!(!too_wide(&piped).is_empty(), "{piped}");
}

#[test]
fn tune_keeps_to_100_columns_and_tells_each_strategy_as_it_ends() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "tune",
        "matvec/tuned",
        "--pair",
        "fake",
        "--space",
        "small",
        "--strategy",
        "exhaustive,random,genetic,bayes,anneal",
        "--budget",
        "6",
        "--no-charts",
    ];
    let text = output(&args, &dir.path().join("t"), Some(WIDTH));
    assert_fits("tune", &text);
    for (i, name) in ["exhaustive", "random", "genetic", "bayes", "anneal"]
        .iter()
        .enumerate()
    {
        assert!(text.contains(&format!("[{}/5] {name}: ", i + 1)), "{text}");
    }
    // The strategies' table was laid out again to fit, with no word broken.
    assert!(text.contains("| exhaustive |"), "{text}");
}

#[test]
fn explain_from_a_committed_folder_keeps_to_100_columns() {
    let dir = tempfile::tempdir().unwrap();
    let from = concat!(env!("CARGO_MANIFEST_DIR"), "/results/h200/explain");
    let text = output(
        &["explain", "--from", from],
        &dir.path().join("e"),
        Some(WIDTH),
    );
    assert_fits("explain --from", &text);
    assert!(text.contains("| target"), "{text}");
}

#[test]
fn suite_quick_keeps_to_100_columns_and_counts_its_steps() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "suite",
        "--quick",
        "--pair",
        "fake",
        "--steps",
        "table1,peaks",
    ];
    let text = output(&args, &dir.path().join("s"), Some(WIDTH));
    assert_fits("suite --quick", &text);
    assert!(text.contains("== [1/2] table1 (at most "), "{text}");
    assert!(text.contains("== [2/2] peaks (at most "), "{text}");
    assert!(text.contains(" s to go): "), "{text}");
}
