//! `report`, `diff` and the per-GPU chart through the binary, on copies of the committed H100
//! and H200 run folders (no runtime needed: they read CSVs).

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use clvscu::export::csv::read_rows;
use clvscu::report::diff::DiffRow;
use clvscu::rows::PrRow;
use predicates::prelude::*;

fn clvscu() -> Command {
    Command::cargo_bin("clvscu").expect("binary built")
}

const H100: &str = "results/h100-2026-11-22-index";
const H200: &str = "results/h200-2026-11-22-index";

/// A temporary tree `fleet/{h100,h200}` holding copies of both GPUs' folders.
fn fleet() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (a, b) = (dir.path().join("fleet/h100"), dir.path().join("fleet/h200"));
    common::copy_tree(&root.join(H100), &a);
    common::copy_tree(&root.join(H200), &b);
    (dir, a, b)
}

#[test]
fn report_covers_both_gpus_in_markdown_and_html_and_writes_only_its_folder() {
    let (dir, a, _) = fleet();
    let fleet = a.parent().unwrap().to_path_buf();
    let before = common::files_under(&fleet);
    let out = dir.path().join("out");
    clvscu()
        .args(["report", "--html", "--out"])
        .arg(&out)
        .arg(&fleet)
        .assert()
        .success();
    assert_eq!(
        common::files_under(&fleet),
        before,
        "the inputs are untouched"
    );
    let md = fs::read_to_string(out.join("report.md")).unwrap();
    for gpu in ["## NVIDIA H100 80GB HBM3", "## NVIDIA H200"] {
        assert!(md.contains(gpu), "{gpu} missing");
    }
    assert!(md.contains("driver OpenCL 580.159.04, CUDA 13.0"));
    // Every PR of every folder is in the report with its CI to three decimals.
    let mut prs = 0;
    for study in ["default", "index-width", "modern"] {
        for gpu in ["h100", "h200"] {
            let rows: Vec<PrRow> = read_rows(&fleet.join(gpu).join(study).join("prs.csv")).unwrap();
            prs += rows.len();
            let r = &rows[rows.len() / 2];
            let cells = format!("| {:.3} | [{:.3}, {:.3}] |", r.pr, r.pr_ci_lo, r.pr_ci_hi);
            assert!(md.contains(&cells), "{study} on {gpu}: {cells} missing");
        }
    }
    assert!(prs > 150, "{prs}");
    assert!(
        md.contains("| index-width: matvec/listing2@index=u64 |")
            || md.contains("matvec/listing2@index=u64")
    );
    assert!(md.contains("| B: CUDA |"), "side labels");
    assert!(md.contains("#### Fairness") && md.contains("| implementation |"));
    // No table is a header alone: every separator line is followed by a row.
    let lines: Vec<&str> = md.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        if l.starts_with("| ---") {
            assert!(
                lines.get(i + 1).is_some_and(|n| n.starts_with("| ")),
                "empty table at line {i}"
            );
        }
    }
    let index = fs::read_to_string(out.join("index.html")).unwrap();
    assert!(index.starts_with("<!DOCTYPE html>") && index.trim_end().ends_with("</html>"));
    assert!(index.contains("<h2>NVIDIA H100 80GB HBM3") && index.contains("<h2>NVIDIA H200"));
    assert!(
        !out.join("report.html").exists(),
        "one index, no single page"
    );
    // Each folder's tables are on its own page; charts are files, never inline.
    let pages: Vec<String> = fs::read_dir(out.join("pages"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "html"))
        .map(|p| fs::read_to_string(p).unwrap())
        .collect();
    assert_eq!(pages.len(), 6, "three studies on each of two GPUs");
    for page in &pages {
        assert!(!page.contains("<svg") && !page.contains("data:image"));
        assert!(page.contains("<table"), "every folder has tables");
    }
    assert!(
        pages
            .iter()
            .map(|p| p.matches("<table").count())
            .sum::<usize>()
            > 10
    );
}

#[test]
fn the_per_gpu_chart_is_drawn_from_a_fleet() {
    let (dir, a, _) = fleet();
    let out = dir.path().join("out");
    clvscu()
        .args(["report", "--out"])
        .arg(&out)
        .arg(a.parent().unwrap())
        .assert()
        .success();
    for study in ["default", "index-width", "modern"] {
        let svg = out.join(format!("charts/pr-gpus-{study}.svg"));
        let text = fs::read_to_string(&svg).unwrap_or_else(|e| panic!("{}: {e}", svg.display()));
        assert!(
            text.len() > 20_000,
            "{} is {} bytes",
            svg.display(),
            text.len()
        );
        assert!(text.contains("NVIDIA H100 80GB HBM3") && text.contains("NVIDIA H200"));
    }
    let md = fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("](charts/pr-gpus-default.svg)"));
    // `plot` draws it too when given both GPUs' folders.
    let charts = dir.path().join("charts");
    clvscu()
        .arg("plot")
        .arg(a.join("default"))
        .arg(a.parent().unwrap().join("h200/default"))
        .arg("--out")
        .arg(&charts)
        .assert()
        .success();
    let png = fs::metadata(charts.join("pr-gpus-default.png")).unwrap();
    assert!(png.len() > 10_000, "{} bytes", png.len());
}

#[test]
fn a_folder_without_pr_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("one-sided");
    fs::create_dir_all(&run).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(H100)
        .join("default/measurements.csv");
    let text = fs::read_to_string(src).unwrap();
    let kept: Vec<&str> = text
        .lines()
        .enumerate()
        .filter(|(i, l)| *i == 0 || l.contains(",OpenCL,"))
        .map(|(_, l)| l)
        .collect();
    fs::write(run.join("measurements.csv"), kept.join("\n") + "\n").unwrap();
    let out = dir.path().join("out");
    clvscu()
        .args(["report", "--out"])
        .arg(&out)
        .arg(&run)
        .assert()
        .success();
    let md = fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("no PR: one side only (OpenCL)"), "{md}");
    assert!(!md.contains("#### Fairness"));
}

#[test]
fn diff_of_h100_and_h200_gives_every_common_comparison_a_verdict() {
    let (dir, a, b) = fleet();
    let out = dir.path().join("diff");
    let assert = clvscu()
        .arg("diff")
        .arg(&a)
        .arg(&b)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    let rows: Vec<DiffRow> = read_rows(&out.join("diff.csv")).unwrap();
    // Both GPUs ran the same three studies: every comparison is common.
    let mut common = 0;
    for study in ["default", "index-width", "modern"] {
        let prs: Vec<PrRow> = read_rows(&a.join(study).join("prs.csv")).unwrap();
        for p in &prs {
            let mine: Vec<&DiffRow> = rows
                .iter()
                .filter(|r| r.study == p.study && r.comparison == p.comparison)
                .collect();
            let quantities: Vec<&str> = mine.iter().map(|r| r.quantity.as_str()).collect();
            assert_eq!(
                quantities,
                ["A: OpenCL", "B: CUDA", "PR"],
                "{}",
                p.comparison
            );
            for r in mine {
                assert!(
                    [
                        "improved",
                        "regressed",
                        "no change",
                        "no change (within noise)"
                    ]
                    .contains(&r.verdict.as_str()),
                    "{r:?}"
                );
                assert!(r.p_value > 0.0 && r.p_value <= 1.0 && r.ci_lo <= r.ratio * 1.5);
            }
            common += 1;
        }
    }
    assert_eq!(rows.len(), common * 3);
    // The H200 moves more bytes than the H100 (4.8 vs 3.35 TB/s peak): some side improved.
    assert!(rows.iter().any(|r| r.verdict == "improved"));
    assert!(stdout.contains("## Comparisons in both"));
    assert!(!stdout.contains("## Added") && !stdout.contains("## Removed"));
    let md = fs::read_to_string(out.join("diff.md")).unwrap();
    assert_eq!(md, stdout);
}

#[test]
fn diff_lists_added_and_removed_comparisons() {
    let (_dir, a, b) = fleet();
    let assert = clvscu()
        .arg("diff")
        .arg(a.join("default"))
        .arg(b.join("modern"))
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    assert!(
        stdout.contains("## Removed (only in OLD)")
            && stdout.contains("| default: matvec/listing2 |")
    );
    assert!(stdout.contains("## Added (only in NEW)") && stdout.contains("| modern: "));
    assert!(stdout.contains("No comparison is in both OLD and NEW."));
}

#[test]
fn report_refuses_a_tree_without_run_folders() {
    let dir = tempfile::tempdir().unwrap();
    clvscu()
        .args(["report", "--out"])
        .arg(dir.path().join("out"))
        .arg(dir.path())
        .assert()
        .code(1)
        .stderr(predicates::str::contains("no run folder"));
    assert!(!dir.path().join("out").exists());
}

#[test]
fn diff_fails_on_regression_only_when_something_regressed() {
    let (_dir, a, b) = fleet();
    // One study each, which keeps the bootstrap short.
    let (a, b) = (a.join("default"), b.join("default"));
    // From the H200 back to the H100, the side that moves the most bytes got slower.
    let assert = clvscu()
        .arg("diff")
        .arg(&b)
        .arg(&a)
        .arg("--fail-on-regression")
        .assert()
        .code(5);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
    assert!(stderr.contains("regressed: default: "), "{stderr}");
    // A run against itself changed nothing.
    clvscu()
        .arg("diff")
        .arg(&a)
        .arg(&a)
        .arg("--fail-on-regression")
        .assert()
        .code(0)
        .stderr(predicate::str::contains("regressed: ").not());
}

/// Two H100s of one host (`run --cuda-device all`): two GPUs in the report, and both in the
/// per-GPU PR chart, though their names and drivers are the same.
#[test]
fn two_gpus_of_one_host_are_two_gpus() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (_dir, out) = report_of_h100s(
        &root.join("results/2xh100-2026-11-26-default"),
        &["CUDA device 0", "CUDA device 1"],
    );
    let chart = fs::read_dir(out.join("charts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains(clvscu::plot::GPUS_CHART))
        .expect("a per-GPU PR chart");
    let svg = fs::read_to_string(&chart).unwrap();
    for gpu in ["CUDA device 0", "CUDA device 1"] {
        assert!(svg.contains(gpu), "{} lacks {gpu}", chart.display());
    }
}

/// `run --cuda-device all` on two and on four H100s of one host runs every GPU at the same
/// time, one process each, each paired with the OpenCL device on its own PCI bus; the report
/// keys them by that bus.
#[test]
fn every_gpu_runs_at_once_and_the_report_keys_each_by_its_bus() {
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("results");
    for (folder, buses) in [
        ("2xh100-2026-11-26-at-once", &["00:06", "00:07"][..]),
        (
            "4xh100-2026-11-26-at-once",
            &["00:06", "00:07", "00:08", "00:09"][..],
        ),
    ] {
        let runs = results.join(folder).join("every-gpu");
        let mut starts = Vec::new();
        for (i, bus) in buses.iter().enumerate() {
            let dir = runs.join(format!("gpu{i}-nvidia-h100-80gb-hbm3"));
            let p: serde_json::Value =
                serde_json::from_str(&fs::read_to_string(dir.join("provenance.json")).unwrap())
                    .unwrap();
            for d in p["devices"].as_array().unwrap() {
                assert_eq!(d["pci_bus"], *bus, "{folder} gpu{i}: {}", d["api"]);
            }
            let start = p["date_utc"].as_str().unwrap();
            starts.push(chrono::DateTime::parse_from_rfc3339(start).unwrap());
        }
        let spread = starts
            .iter()
            .max()
            .unwrap()
            .signed_duration_since(starts.iter().min().unwrap());
        assert!(
            spread.num_milliseconds() < 1000,
            "{folder}: the GPUs started {spread} apart: not at once"
        );
        let labels: Vec<String> = buses.iter().map(|b| format!("pci {b}")).collect();
        let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
        report_of_h100s(&runs, &labels);
    }
}

/// The report of `runs`, run folders of H100s of one host: one model, and beneath its one
/// heading one GPU per label, each named by it. Returns the report's folder (and the
/// temporary folder that holds it).
fn report_of_h100s(runs: &Path, labels: &[&str]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    clvscu()
        .arg("report")
        .arg(runs)
        .arg("--out")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "on 1 GPU model ({} GPUs by PCI bus and driver)",
            labels.len()
        )));
    let md = fs::read_to_string(out.join("report.md")).unwrap();
    assert_eq!(md.matches("\n## NVIDIA H100 80GB HBM3\n").count(), 1);
    for label in labels {
        assert!(
            md.contains(&format!("This NVIDIA H100 80GB HBM3: {label} · driver")),
            "{label}"
        );
    }
    (dir, out)
}

/// A copy of `old` as `name` beside it, its measurements and PRs changed by the edits.
fn edited_copy(
    old: &Path,
    name: &str,
    measurements: impl Fn(&mut Vec<clvscu::rows::MeasurementRow>),
    prs: impl Fn(&mut Vec<PrRow>),
) -> PathBuf {
    let new = old.parent().unwrap().join(name);
    common::copy_tree(old, &new);
    let file = new.join("measurements.csv");
    let mut rows = read_rows(&file).unwrap();
    measurements(&mut rows);
    clvscu::export::csv::write_rows(&file, &rows).unwrap();
    let file = new.join("prs.csv");
    let mut rows = read_rows(&file).unwrap();
    prs(&mut rows);
    clvscu::export::csv::write_rows(&file, &rows).unwrap();
    new
}

/// `diff OLD NEW --fail-on-regression`: exit 5 with `expected` on stderr.
fn assert_regression(old: &Path, new: &Path, expected: &str) {
    let assert = clvscu()
        .arg("diff")
        .arg(old)
        .arg(new)
        .arg("--fail-on-regression")
        .assert()
        .code(5);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
    assert!(stderr.contains(expected), "{stderr}");
}

/// Not only a slower PR: a kernel that stopped verifying, a comparison that went missing and
/// a new comparison that fails are each a regression.
#[test]
fn diff_fails_on_a_new_failure_and_on_a_missing_comparison() {
    use clvscu::rows::Status;
    let (_dir, a, _) = fleet();
    let old = a.join("default");
    let target = "matvec/listing3";
    let broke = edited_copy(
        &old,
        "broke",
        |rows| {
            let m = rows
                .iter_mut()
                .find(|m| m.comparison == target && m.api.to_string() == "CUDA")
                .unwrap();
            m.status = Status::VerifyFailed;
            m.verified = false;
        },
        |_| {},
    );
    assert_regression(
        &old,
        &broke,
        &format!("regressed: fails now: default: {target}, B: ok → verify-failed"),
    );
    let lost = edited_copy(
        &old,
        "lost",
        |rows| rows.retain(|m| m.comparison != target),
        |rows| rows.retain(|p| p.comparison != target),
    );
    assert_regression(
        &old,
        &lost,
        &format!("regressed: missing from NEW: default: {target}"),
    );
    let added = edited_copy(
        &old,
        "added",
        |rows| {
            let mut m = rows[0].clone();
            m.comparison = "matvec/brand-new".into();
            m.status = Status::BuildFailed;
            rows.push(m);
        },
        |_| {},
    );
    assert_regression(
        &old,
        &added,
        "regressed: fails now: default: matvec/brand-new, A: (new) → build-failed",
    );
    // The same folder copied unchanged: nothing is worse.
    let same = edited_copy(&old, "same", |_| {}, |_| {});
    clvscu()
        .arg("diff")
        .arg(&old)
        .arg(&same)
        .arg("--fail-on-regression")
        .assert()
        .code(0);
}

/// A comparison named as HTML stays text in report.md and report.html: a run on the fake pair
/// whose comparison is `<img src=x onerror=alert(1)>`, then `report` over its folder.
#[test]
fn a_comparison_named_as_html_stays_text_in_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("s.toml");
    fs::write(
        &study,
        "name = \"html\"\n[defaults]\nsize = \"64x40\"\nlocal = 64\nreps = 2\nmin_time = 0\n\
         [[comparison]]\nname = \"<img src=x onerror=alert(1)>\"\nvariant = \"listing2\"\n",
    )
    .unwrap();
    let run = dir.path().join("runs/one");
    clvscu()
        .args(["run", "--pair", "fake", "--quiet", "--no-plot", "--study"])
        .arg(&study)
        .arg("--out")
        .arg(&run)
        .assert()
        .success();
    let out = dir.path().join("report");
    clvscu()
        .args(["report", "--html", "--out"])
        .arg(&out)
        .arg(dir.path().join("runs"))
        .assert()
        .success();
    let md = fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("&lt;img src=x onerror=alert(1)>"), "{md}");
    assert!(!md.contains("<img src=x"), "{md}");
    let html: String = common::files_under(&out)
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "html"))
        .map(|p| fs::read_to_string(out.join(p)).unwrap())
        .collect();
    assert!(
        html.contains("&lt;img src=x"),
        "the HTML report names it: {html}"
    );
    assert!(!html.contains("<img src=x"), "{html}");
}
