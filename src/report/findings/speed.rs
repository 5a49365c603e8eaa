//! The speed findings of 2026-11-26 from the committed run folders: the SGEMM table against
//! cuBLAS on both GPUs with the PTX swap at each API's best tiling, and where the `modern`
//! study's wall time goes. `results/2026-11-26-speed.md` is [`document`] (checked by
//! `tests/speed_findings.rs`); the findings take [`sgemm_table`].

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};

use crate::export::csv::read_rows;
use crate::record::{MeasurementRow, PrRow, Status};
use crate::session::timings::TimingRow;

use super::GPUS;

const DATE: &str = "2026-11-26";

fn folder(root: &Path, prefix: &str, what: &str) -> PathBuf {
    root.join(format!("{prefix}-{DATE}-{what}"))
}

fn prs(path: &Path) -> Result<Vec<PrRow>> {
    read_rows(path).with_context(|| format!("reading {}", path.display()))
}

/// A small CSV file as text fields under its header: the baselines and tuning evaluations,
/// whose columns these tables pick by name.
struct Table {
    path: PathBuf,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn read(path: &Path) -> Result<Table> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let mut lines = text.lines();
        let split = |l: &str| l.split(',').map(str::to_string).collect::<Vec<_>>();
        Ok(Table {
            path: path.to_path_buf(),
            header: split(lines.next().unwrap_or("")),
            rows: lines.map(split).collect(),
        })
    }

    fn col(&self, name: &str) -> Result<usize> {
        self.header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| anyhow!("{}: no column {name}", self.path.display()))
    }
}

/// cuBLAS SGEMM GFLOP/s by size, from the run's `baselines.csv`.
fn cublas(dir: &Path) -> Result<BTreeMap<String, f64>> {
    let t = Table::read(&dir.join("baselines.csv"))?;
    let (kind, size, gflops) = (t.col("baseline")?, t.col("size")?, t.col("gflops")?);
    let mut out = BTreeMap::new();
    for f in &t.rows {
        // Study data: the cuBLAS SGEMM rows of the committed `baselines.csv`.
        if f.get(kind).map(String::as_str) == Some("sgemm") {
            out.insert(f[size].clone(), f[gflops].parse()?);
        }
    }
    Ok(out)
}

/// Every PR row of the SGEMM run and of its one-comparison swap runs.
fn sgemm_rows(root: &Path, prefix: &str) -> Result<Vec<PrRow>> {
    // Study data: the committed sgemm-cublas experiment's folder.
    let dir = folder(root, prefix, "sgemm-cublas");
    let mut rows = prs(&dir.join("sgemm/prs.csv"))?;
    for i in 1..=4 {
        let p = dir.join(format!("swap{i}/prs.csv"));
        if p.exists() {
            rows.extend(prs(&p)?);
        }
    }
    Ok(rows)
}

/// The sides of the swap runs that did not verify and time, with the driver's words.
fn failed_sides(root: &Path, prefix: &str) -> Result<Vec<MeasurementRow>> {
    // Study data: the committed sgemm-cublas experiment's folder.
    let dir = folder(root, prefix, "sgemm-cublas");
    let mut out = Vec::new();
    for i in 1..=4 {
        let p = dir.join(format!("swap{i}/measurements.csv"));
        if p.exists() {
            let rows: Vec<MeasurementRow> =
                read_rows(&p).with_context(|| format!("reading {}", p.display()))?;
            out.extend(rows.into_iter().filter(|m| m.status != Status::Ok));
        }
    }
    Ok(out)
}

/// The SGEMM table against cuBLAS, with the failed swap sides and cuBLAS by size.
pub fn sgemm_table(root: &Path, s: &mut String) -> Result<()> {
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
        // Study data: the committed sgemm-cublas experiment's folder.
        let base = cublas(&folder(root, prefix, "sgemm-cublas").join("sgemm"))?;
        for r in sgemm_rows(root, prefix)? {
            let c = *base
                .get(&r.size)
                .ok_or_else(|| anyhow!("{gpu}: no cuBLAS row at {}", r.size))?;
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
            )?;
        }
    }
    s.push('\n');
    for (gpu, prefix) in GPUS {
        for m in failed_sides(root, prefix)? {
            writeln!(
                s,
                "- {gpu}, {} [{}]: {}: {}",
                m.comparison,
                m.api,
                m.status,
                m.error.lines().next().unwrap_or("")
            )?;
        }
    }
    s.push('\n');
    for (gpu, prefix) in GPUS {
        // Study data: the committed sgemm-cublas experiment's folder.
        let base = cublas(&folder(root, prefix, "sgemm-cublas").join("sgemm"))?;
        let sizes: Vec<String> = base.iter().map(|(n, g)| format!("{n}: {g:.0}")).collect();
        writeln!(
            s,
            "cuBLAS on the {gpu}, GFLOP/s by size: {}.",
            sizes.join(", ")
        )?;
    }
    s.push('\n');
    Ok(())
}

/// One row per comparison of a register or waves run (its measurements come in OpenCL, CUDA
/// pairs): GFLOP/s, registers and share of `cublas` per API. Returns each row's (comparison,
/// size, OpenCL share, CUDA share).
fn register_rows(
    gpu: &str,
    path: &Path,
    cublas: &BTreeMap<String, f64>,
    s: &mut String,
) -> Result<Vec<(String, String, f64, f64)>> {
    let rows: Vec<MeasurementRow> =
        read_rows(path).with_context(|| format!("reading {}", path.display()))?;
    let mut out = Vec::new();
    for pair in rows.chunks(2) {
        let [a, b] = pair else { continue };
        let c = *cublas
            .get(&a.size)
            .ok_or_else(|| anyhow!("{gpu}: no cuBLAS row at {}", a.size))?;
        let regs = |m: &MeasurementRow| m.registers.map_or("—".into(), |r| r.to_string());
        writeln!(
            s,
            "| {gpu} | {} | {:.0} | {} | {:.0} | {} | {:.3} | {:.3} |",
            a.comparison,
            a.metric,
            regs(a),
            b.metric,
            regs(b),
            a.metric / c,
            b.metric / c
        )?;
        out.push((
            a.comparison.clone(),
            a.size.clone(),
            a.metric / c,
            b.metric / c,
        ));
    }
    Ok(out)
}

const REGISTER_HEADER: &str =
    "| GPU | comparison | OpenCL | registers | CUDA | registers | OpenCL / cuBLAS | CUDA / cuBLAS |\n\
     |---|---|---|---|---|---|---|---|\n";

/// Blocked SGEMM's second-stage settings (`harness/experiments/sgemm-registers.toml`): the
/// work-group size told to both compilers and the register ceiling raised, at both APIs' best
/// tilings, with each side's registers and its share of cuBLAS; then OpenCL's best share.
/// Only the GPUs with such a run have rows.
pub fn registers_table(root: &Path, s: &mut String) -> Result<()> {
    s.push_str(
        "## What caps OpenCL's SGEMM: registers the second stage will not give\n\n\
         `REQD_WG=1` tells both compilers the work-group size (`reqd_work_group_size`, \
         `__launch_bounds__`); `r255` raises both register ceilings to 255 \
         (`-cl-nv-maxrregcount`, the CUDA JIT's `CU_JIT_MAX_REGISTERS`). GFLOP/s (median, \
         device-event timer), registers per work-item as each driver reports them, and the \
         share of the same GPU's cuBLAS SGEMM at that size.\n\n",
    );
    s.push_str(REGISTER_HEADER);
    let mut best: Option<(f64, String)> = None;
    for (gpu, prefix) in GPUS {
        // Study data: the committed sgemm-registers experiment's folder.
        let dir = folder(root, prefix, "sgemm-registers").join("sgemm-registers");
        if !dir.is_dir() {
            continue;
        }
        let base = cublas(&folder(root, prefix, "sgemm-cublas").join("sgemm"))?;
        for (comparison, _, opencl, _) in
            register_rows(gpu, &dir.join("measurements.csv"), &base, s)?
        {
            if best.as_ref().is_none_or(|(share, _)| opencl > *share) {
                best = Some((opencl, format!("{gpu} {comparison}")));
            }
        }
    }
    if let Some((share, at)) = best {
        let verdict = if share < 0.9 {
            "none of these settings brings it to 0.9"
        } else {
            "at or above 0.9"
        };
        writeln!(
            s,
            "\nOpenCL's best here is {share:.3} of cuBLAS ({at}): {verdict}.\n"
        )?;
    }
    Ok(())
}

/// Blocked SGEMM's waves (`harness/experiments/sgemm-waves.toml`): register ceilings and tiles
/// that change how many work-groups fit an SM, at 2048-8192, against cuBLAS timed in the same
/// run; then each API's best share at each size and whether it reaches 0.9. Only the GPUs with
/// such a run have rows.
pub fn waves_table(root: &Path, s: &mut String) -> Result<()> {
    s.push_str(
        "## SGEMM at 2048: the last wave of work-groups holds CUDA back\n\n\
         `rN` caps both APIs' registers at N a work-item (`-cl-nv-maxrregcount`, \
         `CU_JIT_MAX_REGISTERS`); `tileMxN` names the work-group's tile of C (8 x 8 a \
         work-item); `cuda-best` and `opencl-best` are each API's best tiling of the 4096 tune \
         (64 x 128 and 128 x 128). At 2048, `cuda-best`'s work-groups fill the SMs about one \
         and a third times, so the last wave runs mostly empty; 128 x 128 tiles capped at 128 \
         registers fit two work-groups an SM, and 2048's 16 x 16 of them make one wave. \
         GFLOP/s (median, device-event timer), registers as each driver reports them, and \
         the share of cuBLAS SGEMM (FP32, TF32 off) timed in the same run.\n\n",
    );
    s.push_str(REGISTER_HEADER);
    let mut best: BTreeMap<(&str, u64, &str), (f64, String)> = BTreeMap::new();
    for (gpu, prefix) in GPUS {
        // Study data: the committed sgemm-waves experiment's folder.
        let dir = folder(root, prefix, "sgemm-waves");
        if !dir.is_dir() {
            continue;
        }
        let base = cublas(&dir)?;
        let rows = register_rows(gpu, &dir.join("sgemm-waves/measurements.csv"), &base, s)?;
        for (comparison, size, opencl, cuda) in rows {
            let n: u64 = size.parse()?;
            for (api, share) in [("OpenCL", opencl), ("CUDA", cuda)] {
                let slot = best.entry((gpu, n, api)).or_insert((0.0, String::new()));
                if share > slot.0 {
                    *slot = (share, comparison.clone());
                }
            }
        }
    }
    s.push('\n');
    for (gpu, _) in GPUS {
        for api in ["OpenCL", "CUDA"] {
            let at: Vec<String> = best
                .iter()
                .filter(|((g, _, a), _)| *g == gpu && *a == api)
                .map(|((_, n, _), (share, c))| format!("{n}: {share:.3} (`{c}`)"))
                .collect();
            if at.is_empty() {
                continue;
            }
            let all = best
                .iter()
                .filter(|((g, _, a), _)| *g == gpu && *a == api)
                .all(|(_, (share, _))| *share >= 0.9);
            let verdict = if all {
                "at least 0.9 at every size"
            } else {
                "below 0.9 at some size"
            };
            writeln!(
                s,
                "- {gpu}, {api}'s best share of cuBLAS by size: {}; {verdict}.",
                at.join(", ")
            )?;
        }
    }
    s.push('\n');
    Ok(())
}

/// One API's best evaluation of a tuning run: (configuration, GFLOP/s), from its
/// `evaluations.csv` (the verified, timed rows only).
fn tuned_bests(path: &Path) -> Result<BTreeMap<String, (String, f64)>> {
    let t = Table::read(path)?;
    let (api, status, metric) = (t.col("api")?, t.col("status")?, t.col("metric")?);
    let (local, unroll, knobs) = (t.col("local")?, t.col("unroll")?, t.col("knobs")?);
    let mut best: BTreeMap<String, (String, f64)> = BTreeMap::new();
    for f in t
        .rows
        .iter()
        .filter(|f| f.get(status).map(String::as_str) == Some("ok"))
    {
        let gflops: f64 = f[metric].parse()?;
        let config = format!(
            "local={} unroll.{} {}",
            f[local],
            f[unroll],
            f[knobs].replace(';', " ")
        );
        let slot = best.entry(f[api].clone()).or_insert((String::new(), 0.0));
        if gflops > slot.1 {
            *slot = (config, gflops);
        }
    }
    Ok(best)
}

/// `clvscu tune sgemm/blocked-waves` at 2048, 4096 and 8192: each API's best configuration
/// and its share of cuBLAS SGEMM timed in the same call. Only the GPUs with such a run have
/// rows.
pub fn tune_table(root: &Path, s: &mut String) -> Result<()> {
    s.push_str(
        "## Each API's tuned best against cuBLAS\n\n\
         `clvscu tune sgemm/blocked-waves --size N` (block tiles 64 or 128 each way, the K loop \
         unrolled or not, the register ceiling free or 128), exhaustive on both APIs; GFLOP/s \
         of each API's best (median, device-event timer) and its share of cuBLAS SGEMM (FP32, \
         TF32 off) timed in the same call.\n\n\
         | GPU | N | OpenCL's best | GFLOP/s | OpenCL / cuBLAS | CUDA's best | GFLOP/s | CUDA / cuBLAS |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for (gpu, prefix) in GPUS {
        // Study data: the committed tuning runs' folder.
        let dir = folder(root, prefix, "sgemm-tune-waves");
        if !dir.is_dir() {
            continue;
        }
        let base = cublas(&dir)?;
        for (n, c) in &base {
            let bests = tuned_bests(&dir.join(format!("tune-{n}/evaluations.csv")))?;
            let (Some((cl, cl_g)), Some((cu, cu_g))) = (bests.get("OpenCL"), bests.get("CUDA"))
            else {
                continue;
            };
            writeln!(
                s,
                "| {gpu} | {n} | `{cl}` | {cl_g:.0} | {:.3} | `{cu}` | {cu_g:.0} | {:.3} |",
                cl_g / c,
                cu_g / c
            )?;
        }
    }
    s.push('\n');
    Ok(())
}

/// The sentence the run wrote into its provenance: wall time and phases.
fn time_note(dir: &Path) -> Result<String> {
    let path = dir.join("provenance.json");
    let prov =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&prov)?;
    v["notes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n.as_str())
        .find(|n| n.starts_with("time:"))
        .map(str::to_string)
        .ok_or_else(|| anyhow!("{}: no time note", path.display()))
}

fn modern_table(root: &Path, s: &mut String) -> Result<()> {
    s.push_str(
        "## Where the `modern` study's time goes\n\n\
         One `clvscu run --study modern` per GPU; the process's wall time as the shell measured \
         it, and the run's own account (`timings.csv`, summed in `provenance.json`).\n\n\
         | GPU | process wall (s) | the run's account | three slowest comparisons (s) |\n\
         |---|---|---|---|\n",
    );
    for (gpu, prefix) in GPUS {
        let dir = folder(root, prefix, "modern-time");
        let wall_path = dir.join("wall.txt");
        let wall = std::fs::read_to_string(&wall_path)
            .with_context(|| format!("reading {}", wall_path.display()))?;
        let wall = wall.trim().trim_start_matches("modern wall:").trim();
        let timings = dir.join("modern/timings.csv");
        let mut rows: Vec<TimingRow> =
            read_rows(&timings).with_context(|| format!("reading {}", timings.display()))?;
        rows.sort_by(|a, b| b.total_s.total_cmp(&a.total_s));
        let slowest: Vec<String> = rows
            .iter()
            .take(3)
            .map(|r| format!("{} {:.2}", r.comparison, r.total_s))
            .collect();
        writeln!(
            s,
            "| {gpu} | {wall} | {} | {} |",
            time_note(&dir.join("modern"))?,
            slowest.join(", ")
        )?;
    }
    Ok(())
}

/// The folder of the build-ahead comparison: each study run in turn by the binary before it
/// (`old`, programs built one at a time) and after (`new`), twice, NVIDIA's caches off.
const BUILD_AHEAD: &str = "h100-2026-11-26-build-ahead";

fn build_ahead_table(root: &Path, s: &mut String) -> Result<()> {
    let dir = root.join(BUILD_AHEAD);
    s.push_str(
        "## Programs built ahead, several at once\n\n\
         Each study run four times in turn on one H100 with `CUDA_CACHE_DISABLE=1`: `old` \
         builds each comparison's programs as it comes to it, `new` builds the programs of the \
         next stretch of comparisons at once on each side first. The process's wall time as \
         the shell measured it, the binary's commit, and the run's own account.\n\n\
         | run | commit | process wall (s) | builds in comparisons (s) | the run's account |\n\
         |---|---|---|---|---|\n",
    );
    let walls_path = dir.join("walls.txt");
    let walls = std::fs::read_to_string(&walls_path)
        .with_context(|| format!("reading {}", walls_path.display()))?;
    let mut seen: Vec<String> = Vec::new();
    for line in walls.lines().filter(|l| !l.trim().is_empty()) {
        // "STUDY BINARY rc N wall SECONDS", one line per run in the order they ran.
        let words: Vec<&str> = line.split_whitespace().collect();
        let [study, binary, "rc", _, "wall", wall] = words[..] else {
            return Err(anyhow!(
                "{}: unexpected line {line:?}",
                walls_path.display()
            ));
        };
        let first = format!("{binary}-{study}");
        let name = if seen.contains(&first) {
            format!("{first}-2")
        } else {
            first
        };
        seen.push(name.clone());
        let run = dir.join(&name);
        let prov: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(run.join("provenance.json"))?)?;
        let rows: Vec<TimingRow> = read_rows(&run.join("timings.csv"))
            .with_context(|| format!("reading {}", run.display()))?;
        let builds: f64 = rows.iter().map(|r| r.build_s).sum();
        writeln!(
            s,
            "| `{name}` | {} | {wall} | {builds:.2} | {} |",
            prov["git_commit"].as_str().unwrap_or("?"),
            time_note(&run)?
        )?;
    }
    s.push('\n');
    Ok(())
}

/// `results/2026-11-26-speed.md`, from the results under `root`.
pub fn document(root: &Path) -> Result<String> {
    let mut s = String::from(
        "# Speed: SGEMM against cuBLAS, and the harness's own time (2026-11-26)\n\n\
         Generated by `tests/speed_findings.rs` from `results/{h100,h200}-2026-11-26-sgemm-cublas`, \
         `results/h100-2026-11-26-sgemm-registers`, `results/h100-2026-11-26-sgemm-waves`, `results/h100-2026-11-26-sgemm-tune-waves`, `results/{h100,h200}-2026-11-26-modern-time` and `results/h100-2026-11-26-build-ahead` (their `provenance.json` and \
         `gpu.csv` give commit, GPU, driver, command line and date).\n\n",
    );
    sgemm_table(root, &mut s)?;
    registers_table(root, &mut s)?;
    waves_table(root, &mut s)?;
    tune_table(root, &mut s)?;
    modern_table(root, &mut s)?;
    build_ahead_table(root, &mut s)?;
    Ok(s)
}
