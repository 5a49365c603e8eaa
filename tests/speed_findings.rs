//! The speed findings of 2026-11-26, generated from the committed run folders: the SGEMM table
//! against cuBLAS on both GPUs with the PTX swap at each API's best tiling, and where the
//! `modern` study's wall time goes. `results/2026-11-26-speed.md` is exactly what this test
//! writes from the CSVs, so no number in it is typed by hand (CLVSCU_BLESS=1 rewrites it).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clvscu::export::csv::read_rows;
use clvscu::record::{MeasurementRow, PrRow, Status};
use clvscu::session::timings::TimingRow;

const GPUS: [(&str, &str); 2] = [("H100", "h100"), ("H200", "h200")];
const DATE: &str = "2026-11-26";
const DOC: &str = "results/2026-11-26-speed.md";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn folder(prefix: &str, what: &str) -> PathBuf {
    repo().join(format!("results/{prefix}-{DATE}-{what}"))
}

fn prs(path: &Path) -> Vec<PrRow> {
    read_rows(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// cuBLAS SGEMM GFLOP/s by size, from the run's `baselines.csv`.
fn cublas(dir: &Path) -> BTreeMap<String, f64> {
    let text = std::fs::read_to_string(dir.join("baselines.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (kind, size, gflops) = (col("baseline"), col("size"), col("gflops"));
    lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[kind] == "sgemm")
        .map(|f| (f[size].to_string(), f[gflops].parse().unwrap()))
        .collect()
}

/// Every PR row of the SGEMM run and of its one-comparison swap runs.
fn sgemm_rows(prefix: &str) -> Vec<PrRow> {
    let root = folder(prefix, "sgemm-cublas");
    let mut rows = prs(&root.join("sgemm/prs.csv"));
    for i in 1..=4 {
        let p = root.join(format!("swap{i}/prs.csv"));
        if p.exists() {
            rows.extend(prs(&p));
        }
    }
    rows
}

/// The sides of the swap runs that did not verify and time, with the driver's words.
fn failed_sides(prefix: &str) -> Vec<MeasurementRow> {
    let root = folder(prefix, "sgemm-cublas");
    (1..=4)
        .map(|i| root.join(format!("swap{i}/measurements.csv")))
        .filter(|p| p.exists())
        .flat_map(|p| read_rows::<MeasurementRow>(&p).unwrap())
        .filter(|m| m.status != Status::Ok)
        .collect()
}

fn sgemm_table(s: &mut String) {
    s.push_str(
        "## SGEMM against cuBLAS\n\n\
         GFLOP/s (median, device-event timer) and the share of cuBLAS SGEMM in true FP32 \
         (`torch.matmul`, TF32 off) at the same size on the same GPU. `opencl-best` and \
         `cuda-best` are each API's best tiling from the 4096 tune; `X-ptx-on-both` runs X's \
         PTX on both runtimes (only the comparisons whose both sides verified have a row; the sides that failed are \
         listed under the table).\n\n\
         | GPU | comparison | OpenCL | CUDA | PR | OpenCL / cuBLAS | CUDA / cuBLAS |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for (gpu, prefix) in GPUS {
        let base = cublas(&folder(prefix, "sgemm-cublas").join("sgemm"));
        for r in sgemm_rows(prefix) {
            let c = base[&r.size];
            writeln!(
                s,
                "| {gpu} | {} | {:.0} | {:.0} | {:.3} [{:.3}, {:.3}] | {:.3} | {:.3} |",
                r.comparison,
                r.metric_a,
                r.metric_b,
                r.pr,
                r.pr_ci_lo,
                r.pr_ci_hi,
                r.metric_a / c,
                r.metric_b / c
            )
            .unwrap();
        }
    }
    s.push('\n');
    for (gpu, prefix) in GPUS {
        for m in failed_sides(prefix) {
            writeln!(
                s,
                "- {gpu}, {} [{}]: {}: {}",
                m.comparison,
                m.api,
                m.status,
                m.error.lines().next().unwrap_or("")
            )
            .unwrap();
        }
    }
    s.push('\n');
    for (gpu, prefix) in GPUS {
        let base = cublas(&folder(prefix, "sgemm-cublas").join("sgemm"));
        let sizes: Vec<String> = base.iter().map(|(n, g)| format!("{n}: {g:.0}")).collect();
        writeln!(
            s,
            "cuBLAS on the {gpu}, GFLOP/s by size: {}.",
            sizes.join(", ")
        )
        .unwrap();
    }
    s.push('\n');
}

/// The sentence the run wrote into its provenance: wall time and phases.
fn time_note(dir: &Path) -> String {
    let prov = std::fs::read_to_string(dir.join("provenance.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&prov).unwrap();
    v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .find(|n| n.starts_with("time:"))
        .expect("a time note")
        .to_string()
}

fn modern_table(s: &mut String) {
    s.push_str(
        "## Where the `modern` study's time goes\n\n\
         One `clvscu run --study modern` per GPU; the process's wall time as the shell measured \
         it, and the run's own account (`timings.csv`, summed in `provenance.json`).\n\n\
         | GPU | process wall (s) | the run's account | three slowest comparisons (s) |\n\
         |---|---|---|---|\n",
    );
    for (gpu, prefix) in GPUS {
        let dir = folder(prefix, "modern-time");
        let wall = std::fs::read_to_string(dir.join("wall.txt")).unwrap();
        let wall = wall.trim().trim_start_matches("modern wall:").trim();
        let mut rows: Vec<TimingRow> = read_rows(&dir.join("modern/timings.csv")).unwrap();
        rows.sort_by(|a, b| b.total_s.total_cmp(&a.total_s));
        let slowest: Vec<String> = rows
            .iter()
            .take(3)
            .map(|r| format!("{} {:.2}", r.comparison, r.total_s))
            .collect();
        writeln!(
            s,
            "| {gpu} | {wall} | {} | {} |",
            time_note(&dir.join("modern")),
            slowest.join(", ")
        )
        .unwrap();
    }
}

fn document() -> String {
    let mut s = String::from(
        "# Speed: SGEMM against cuBLAS, and the harness's own time (2026-11-26)\n\n\
         Generated by `tests/speed_findings.rs` from `results/{h100,h200}-2026-11-26-sgemm-cublas` \
         and `results/{h100,h200}-2026-11-26-modern-time` (their `provenance.json` and \
         `gpu.csv` give commit, GPU, driver, command line and date).\n\n",
    );
    sgemm_table(&mut s);
    modern_table(&mut s);
    s
}

#[test]
fn the_speed_findings_are_what_the_committed_runs_give() {
    let doc = document();
    let path = repo().join(DOC);
    if std::env::var("CLVSCU_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, &doc).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == doc,
        "{DOC} is not what the run folders give; rerun with CLVSCU_BLESS=1"
    );
}
