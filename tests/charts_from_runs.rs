//! Charts drawn from rows a real run wrote (the binary over the fake pair, or PoCL), not from
//! hand-made rows: a hand-made row can spell a column the way the chart expects while the run
//! spells it another way (the sweep's `local` against `local_size`).

mod common;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use clvscu::backend::opencl;
use clvscu::plot::{self, Format};

/// A sweep over the work-group size and a `matvec/auto` comparison, small enough for PoCL.
const STUDY: &str = r#"
name = "charts"
[defaults]
family = "matvec"
size = "300x257"
warmup = 1
reps = 3
min_time = 0.0
[[sweep]]
variant = "listing6"
param = "local"
values = [32, 64]
[[comparison]]
variant = "auto"
local = 64
"#;

/// Runs `STUDY` on `pair` into `dir/out`, draws its charts as SVG and returns them by file name.
fn run_and_draw(pair: &str, dir: &Path) -> Vec<(String, String)> {
    let study = dir.join("charts.toml");
    std::fs::write(&study, STUDY).unwrap();
    let out = dir.join("out");
    Command::cargo_bin("clvscu")
        .expect("binary built")
        .args(["run", "--pair", pair, "--no-plot", "--study"])
        .arg(&study)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let data = plot::input::load(&[out], clvscu::families::catalog()).unwrap();
    let written: Vec<PathBuf> = plot::draw_all(&data, &dir.join("charts"), &[Format::Svg]).unwrap();
    written
        .iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(p).unwrap())
        })
        .collect()
}

/// The one chart whose file name starts with `kind`.
fn chart<'a>(charts: &'a [(String, String)], kind: &str) -> &'a str {
    let found: Vec<&(String, String)> =
        charts.iter().filter(|(n, _)| n.starts_with(kind)).collect();
    let names: Vec<&String> = charts.iter().map(|(n, _)| n).collect();
    assert_eq!(found.len(), 1, "one {kind} chart expected among {names:?}");
    &found[0].1
}

#[test]
fn the_sweep_axis_names_the_swept_local_size_and_auto_is_labelled_auto() {
    let dir = tempfile::tempdir().unwrap();
    let charts = run_and_draw("fake", dir.path());
    let sweep = chart(&charts, "sweep");
    assert!(
        sweep.contains("local (work-items per work-group, log2 scale)"),
        "the sweep axis names what `local` counts"
    );
    assert!(!sweep.contains("(value"), "no placeholder axis unit");
    assert_eq!(sweep.matches("(median)").count(), 2, "one line per side");
    assert!(sweep.contains("OpenCL") && sweep.contains("CUDA"));
    let pr = chart(&charts, "pr");
    assert!(
        pr.contains("matvec/auto (picked "),
        "matvec/auto is labelled as auto with what it picked"
    );
    assert!(pr.contains("1: OpenCL faster"), "the legend names OpenCL");
}

#[test]
#[ignore = "needs PoCL"]
fn a_same_api_pair_draws_both_sides_and_its_legend_names_them() {
    common::need("OpenCL", opencl::availability());
    let dir = tempfile::tempdir().unwrap();
    let charts = run_and_draw("opencl-opencl", dir.path());
    let sweep = chart(&charts, "sweep");
    assert!(sweep.contains("OpenCL side A (median)"), "side A is drawn");
    assert!(sweep.contains("OpenCL side B (median)"), "side B is drawn");
    let pr = chart(&charts, "pr");
    assert!(
        pr.contains("1: OpenCL side A faster"),
        "the legend names side A"
    );
    assert!(!pr.contains("1: OpenCL faster"), "not the cross-API words");
    assert!(pr.contains("Performance Ratio OpenCL side A / OpenCL side B"));
}

#[test]
fn the_explain_waterfall_steps_to_parity_and_names_the_driver() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ex");
    Command::cargo_bin("clvscu")
        .expect("binary built")
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
        .success();
    let svgs: Vec<String> = std::fs::read_dir(out.join("charts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "svg"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert_eq!(svgs.len(), 1, "one target, one waterfall");
    let svg = &svgs[0];
    assert!(svg.contains("target PR") && svg.contains("remaining to parity"));
    assert!(svg.contains("Explain waterfall"));
    assert!(
        svg.contains("driver: fake"),
        "the driver from the rungs' rows"
    );
    assert!(!svg.contains("driver: unknown"));
}

/// The colours of an SVG's polylines (`stroke="#RRGGBB"`), greys (grid and axes) left out.
fn line_colours(svg: &str) -> std::collections::BTreeSet<String> {
    let grey = |c: &str| c[1..3] == c[3..5] && c[3..5] == c[5..7];
    svg.split("<polyline")
        .skip(1)
        .filter_map(|part| {
            let at = part.find("stroke=\"#")? + "stroke=\"".len();
            Some(part.get(at..at + 7)?.to_string())
        })
        .filter(|c| !grey(c))
        .collect()
}

/// A tune of five strategies over the fake pair: its convergence chart draws each strategy in
/// a colour of its own (a review found three strategies in one colour).
#[test]
fn the_tune_convergence_chart_gives_each_strategy_its_own_colour() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tune");
    Command::cargo_bin("clvscu")
        .expect("binary built")
        .args(["tune", "matvec/tuned", "--pair", "fake", "--space", "small"])
        .args([
            "--strategy",
            "exhaustive,random,anneal,genetic,bayes",
            "--budget",
            "6",
        ])
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let svgs: Vec<(String, String)> = walk_svgs(&out);
    let (name, svg) = svgs
        .iter()
        .find(|(n, _)| n.contains("convergence"))
        .unwrap_or_else(|| panic!("no convergence chart among {svgs:?}", svgs = names(&svgs)));
    for strategy in ["random", "anneal", "genetic", "bayes"] {
        assert!(svg.contains(strategy), "{name}: {strategy} in the legend");
    }
    let colours = line_colours(svg);
    assert!(
        colours.len() >= 4,
        "{name}: {} line colours ({colours:?}) for four strategies",
        colours.len()
    );
}

fn names(svgs: &[(String, String)]) -> Vec<&str> {
    svgs.iter().map(|(n, _)| n.as_str()).collect()
}

/// Every SVG under `dir`, by file name.
fn walk_svgs(dir: &Path) -> Vec<(String, String)> {
    common::files_under(dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "svg"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            (name, std::fs::read_to_string(dir.join(&p)).unwrap())
        })
        .collect()
}
