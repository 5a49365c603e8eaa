//! The runtime findings of 2026-11-26 from the committed run folders: the harness against a
//! plain loop of each API's driver calls, the cost of each wait, the host-clock runs (launch,
//! small reductions, BFS per level) and the driver's verdict on work-group sizes. The same
//! tables go into `results/2026-11-26-runtime.md` (checked by `tests/runtime_findings.rs`)
//! and into the findings.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};

use crate::calibrate::{CalibrationPr, CalibrationRow};
use crate::export::csv::{read_rows, CsvSchema};
use crate::record::{MeasurementRow, PrRow};

use super::GPUS;

const DATE: &str = "2026-11-26";

fn folder(root: &Path, prefix: &str, what: &str) -> PathBuf {
    root.join(format!("{prefix}-{DATE}-{what}"))
}

fn rows<T: serde::de::DeserializeOwned + CsvSchema>(path: &Path) -> Result<Vec<T>> {
    read_rows(path).with_context(|| format!("reading {}", path.display()))
}

/// The calibration rows and launch PRs of one GPU's runtime run.
pub fn calibration(root: &Path, prefix: &str) -> Result<(Vec<CalibrationRow>, Vec<CalibrationPr>)> {
    let dir = folder(root, prefix, "runtime").join("calibrate");
    Ok((
        rows(&dir.join("calibration.csv"))?,
        rows(&dir.join("calibration-pr.csv"))?,
    ))
}

/// The calibration row of one API, shape, batch and wait mode.
pub fn row<'a>(
    rows: &'a [CalibrationRow],
    api: &str,
    shape: &str,
    batch: u32,
    wait: &str,
) -> Result<&'a CalibrationRow> {
    rows.iter()
        .find(|r| r.api == api && r.shape == shape && r.batch == batch && r.wait == wait)
        .ok_or_else(|| anyhow!("no calibration row {api} {shape} x{batch} {wait}"))
}

fn pr_of<'a>(prs: &'a [PrRow], comparison: &str) -> Result<&'a PrRow> {
    prs.iter()
        .find(|p| p.comparison == comparison)
        .ok_or_else(|| anyhow!("no PR row {comparison}"))
}

/// The launch PR of a calibration case.
pub fn launch_pr<'a>(
    prs: &'a [CalibrationPr],
    shape: &str,
    batch: u32,
    wait: &str,
) -> Result<&'a CalibrationPr> {
    prs.iter()
        .find(|p| p.shape == shape && p.batch == batch && p.wait == wait)
        .ok_or_else(|| anyhow!("no calibration PR {shape} x{batch} {wait}"))
}

/// The harness against the plain loop, one at a time and back to back, in `finish` mode.
fn calibration_table(root: &Path, s: &mut String) -> Result<()> {
    s.push_str(
        "**The harness against a plain loop of the driver's calls, same process** (`clvscu calibrate`, \
         empty kernel, wait `finish`; µs per launch, median):\n\n\
         | GPU | case | OpenCL harness | OpenCL plain | CUDA harness | CUDA plain | launch PR harness | launch PR plain |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for (gpu, prefix) in GPUS {
        let (cal, prs) = calibration(root, prefix)?;
        for (shape, batch, case) in [
            ("1x1", 1, "1×1, one at a time"),
            ("1x1", 1000, "1×1, 1000 back to back"),
            ("135168x256", 1, "135168×256, one at a time"),
        ] {
            let cl = row(&cal, "OpenCL", shape, batch, "finish")?;
            let cu = row(&cal, "CUDA", shape, batch, "finish")?;
            let p = launch_pr(&prs, shape, batch, "finish")?;
            writeln!(
                s,
                "| {gpu} | {case} | {:.2} | {:.2} | {:.2} | {:.2} | {:.3} | {:.3} |",
                cl.harness_us, cl.plain_us, cu.harness_us, cu.plain_us, p.pr_harness, p.pr_plain
            )?;
        }
    }
    s.push('\n');
    Ok(())
}

/// The plain loop's cost per wait mode: which wait is the cheapest on each API.
fn wait_table(root: &Path, s: &mut String) -> Result<()> {
    s.push_str(
        "**What each wait costs a plain program** (1×1, one at a time, plain loop, µs):\n\n\
         | GPU | API | finish | spin | yield | blocking | cheapest |\n|---|---|---|---|---|---|---|\n",
    );
    for (gpu, prefix) in GPUS {
        let (cal, _) = calibration(root, prefix)?;
        for api in ["OpenCL", "CUDA"] {
            let modes = ["finish", "spin", "yield", "blocking"];
            let us: Vec<f64> = modes
                .iter()
                .map(|m| row(&cal, api, "1x1", 1, m).map(|r| r.plain_us))
                .collect::<Result<_>>()?;
            let cheapest = us
                .iter()
                .enumerate()
                .min_by(|a, b| a.1.total_cmp(b.1))
                .map_or("?", |(i, _)| modes[i]);
            writeln!(
                s,
                "| {gpu} | {api} | {:.2} | {:.2} | {:.2} | {:.2} | {cheapest} |",
                us[0], us[1], us[2], us[3]
            )?;
        }
    }
    s.push('\n');
    Ok(())
}

/// Host-clock rows of the runs (launch, small reductions, BFS per level).
fn runtime_table(root: &Path, s: &mut String) -> Result<()> {
    s.push_str(
        "**Host-clock runs** (studies `launch`, `bfs` layered uniform graphs, `reduce/tuned` at \
         2^16–2^20 on the host clock; PR = perf OpenCL / perf CUDA):\n\n\
         | GPU | what | OpenCL | CUDA | PR [95% CI] |\n|---|---|---|---|---|\n",
    );
    for (gpu, prefix) in GPUS {
        // Study data: the committed runtime experiment's folders and comparisons, by name.
        let run = folder(root, prefix, "runtime");
        let launch: Vec<PrRow> = rows(&run.join("launch/prs.csv"))?;
        for (name, what) in [
            ("launch/1x1-finish", "1×1 launch + wait (finish), µs"),
            (
                "launch/back-to-back-1000",
                "1000 launches back to back, µs per launch",
            ),
            (
                "launch/grid-finish@groups=135168",
                "135168×256 launch + wait, µs",
            ),
        ] {
            let p = pr_of(&launch, name)?;
            writeln!(
                s,
                "| {gpu} | {what} | {:.2} | {:.2} | {:.3} [{:.3}, {:.3}] |",
                1e6 / p.metric_a,
                1e6 / p.metric_b,
                p.pr,
                p.pr_ci_lo,
                p.pr_ci_hi
            )?;
        }
        let reduce: Vec<PrRow> = rows(&run.join("reduce-host/prs.csv"))?;
        let reduce_m: Vec<MeasurementRow> = rows(&run.join("reduce-host/measurements.csv"))?;
        for size in ["2^16", "2^20"] {
            let name = format!("reduce/tuned@size={size}");
            let p = pr_of(&reduce, &name)?;
            let t = |api: &str| -> Result<f64> {
                reduce_m
                    .iter()
                    .find(|m| m.comparison == name && m.api.label() == api)
                    .map(|m| m.median_s * 1e6)
                    .ok_or_else(|| anyhow!("no {api} measurement of {name}"))
            };
            writeln!(
                s,
                "| {gpu} | reduction of {size} floats (two launches), µs | {:.2} | {:.2} | {:.3} [{:.3}, {:.3}] |",
                t("OpenCL")?,
                t("CUDA")?,
                p.pr,
                p.pr_ci_lo,
                p.pr_ci_hi
            )?;
        }
        // Study data: the committed runtime experiment's folders, by study name.
        bfs_rows(s, gpu, &run.join("bfs"), "")?;
        let plain_copies = folder(root, prefix, "bfs-plain").join("bfs");
        bfs_rows(s, gpu, &plain_copies, ", flag copies without an event")?;
    }
    s.push('\n');
    Ok(())
}

/// BFS time per level on the layered uniform graphs of one run folder.
fn bfs_rows(s: &mut String, gpu: &str, dir: &Path, how: &str) -> Result<()> {
    let bfs: Vec<PrRow> = rows(&dir.join("prs.csv"))?;
    let bfs_m: Vec<MeasurementRow> = rows(&dir.join("measurements.csv"))?;
    for size in ["2^16", "2^24"] {
        let name = format!("bfs-levels/uniform@size={size}");
        let p = pr_of(&bfs, &name)?;
        let per_level = |api: &str| -> Result<f64> {
            let m = bfs_m
                .iter()
                .find(|m| m.comparison == name && m.api.label() == api)
                .ok_or_else(|| anyhow!("no {api} measurement of {name}"))?;
            let levels = m.levels.ok_or_else(|| anyhow!("{name}: no levels"))?;
            Ok(m.median_s * 1e6 / levels as f64)
        };
        writeln!(
            s,
            "| {gpu} | BFS {size} vertices, µs per level{how} | {:.1} | {:.1} | {:.3} [{:.3}, {:.3}] |",
            per_level("OpenCL")?,
            per_level("CUDA")?,
            p.pr,
            p.pr_ci_lo,
            p.pr_ci_hi
        )?;
    }
    Ok(())
}

/// The tunes: OpenCL's points above 256 work-items and the driver's verdict on them.
fn tune_table(root: &Path, s: &mut String) -> Result<()> {
    s.push_str(
        "**The driver decides the work-group size** (`clvscu tune`, exhaustive, both APIs; OpenCL \
         points above the 256 that `CL_KERNEL_WORK_GROUP_SIZE` reports):\n\n\
         | GPU | target | OpenCL points > 256 | launched and verified | OpenCL's best local | CUDA's best local | best-vs-best PR |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for (gpu, prefix) in GPUS {
        // Study data: the committed tune experiment's folders, one per tuned target.
        for target in [
            "reduce-tuned",
            "matvec-tuned",
            "sgemm-blocked",
            "spmv-vector-local",
        ] {
            let dir = folder(root, prefix, "tune-wg")
                .join(target)
                .join("exhaustive");
            let path = dir.join("evaluations.csv");
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            let mut reader = csv::Reader::from_reader(text.as_bytes());
            let header = reader.headers()?.clone();
            let col = |name: &str| {
                header
                    .iter()
                    .position(|h| h == name)
                    .ok_or_else(|| anyhow!("{}: no column {name}", path.display()))
            };
            let (api, local, status) = (col("api")?, col("local")?, col("status")?);
            let mut above: Vec<String> = Vec::new();
            for r in reader.records() {
                let r = r?;
                if &r[api] == "OpenCL" && r[local].parse::<u32>()? > 256 {
                    above.push(r[status].to_string());
                }
            }
            let ok = above.iter().filter(|s| *s == "ok").count();
            let answer_path = dir.join("answer.md");
            let answer = std::fs::read_to_string(&answer_path)
                .with_context(|| format!("reading {}", answer_path.display()))?;
            let best_local = |api: &str| -> Result<String> {
                answer
                    .lines()
                    .find(|l| l.starts_with(&format!("| {api} | `local=")))
                    .and_then(|l| l.split("local=").nth(1))
                    .and_then(|l| l.split(' ').next())
                    .map(str::to_string)
                    .ok_or_else(|| anyhow!("{}: no best of {api}", answer_path.display()))
            };
            let pr = answer
                .lines()
                .find_map(|l| l.strip_prefix("- best-vs-best PR (OpenCL / CUDA): "))
                .ok_or_else(|| anyhow!("{}: no best-vs-best PR", answer_path.display()))?;
            writeln!(
                s,
                "| {gpu} | {} | {} | {ok} | {} | {} | {pr} |",
                target.replacen('-', "/", 1),
                above.len(),
                best_local("OpenCL")?,
                best_local("CUDA")?
            )?;
        }
    }
    Ok(())
}

/// Every runtime table, from the results under `root`.
pub fn render(root: &Path) -> Result<String> {
    let mut s = String::new();
    calibration_table(root, &mut s)?;
    wait_table(root, &mut s)?;
    runtime_table(root, &mut s)?;
    tune_table(root, &mut s)?;
    Ok(s)
}
