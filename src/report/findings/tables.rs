//! The experiments' own tables (Table V's classes, the whitepaper's Table 1, the runtime,
//! SGEMM against cuBLAS, shapes against the vendor libraries), each computed from the CSVs of
//! the run folders [`super::experiments`] names for it.

use std::fmt::Write as _;

use anyhow::{Context, Result};

use super::{folder_for, num, pr_row, pr_text, Ctx, GPUS};
use crate::record::Api;

/// The run folders the experiments' own tables read (`{gpu}` is each GPU's prefix).
pub(super) const TABLE1: &str = "{gpu}-2026-11-23-fairness/whitepaper-table1";
pub(super) const COMPILER: &str = "{gpu}-2026-11-22-compiler";
pub(super) const RUNTIME: &str = "{gpu}-2026-11-26-runtime";

/// Table V's classes: the paper's rows and ours from each GPU's `inspect/table-v.csv`.
pub(super) fn table_v(ctx: &Ctx, s: &mut String) -> Result<()> {
    s.push_str(
        "PTX instructions of the FFT forward kernel by class (static counts):\n\n\
         | source | API | index | arithmetic | logic/shift | flow control |\n|---|---|---|---|---|---|\n",
    );
    for (api, ar, lo, fl, ..) in crate::paper::FANG_TABLE_V {
        writeln!(
            s,
            "| paper (GTX 280 era) | {api} | native | {ar} | {lo} | {fl} |"
        )?;
    }
    for (gpu, prefix) in GPUS {
        let rel = folder_for(COMPILER, prefix);
        let path = ctx.root().join(&rel).join("inspect/table-v.csv");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        ctx.note(&format!("{rel}/fft"));
        let mut r = csv::Reader::from_reader(text.as_bytes());
        let h = r.headers()?.clone();
        let col = |n: &str| h.iter().position(|x| x == n).context(n.to_string());
        let (src, api, index, ar, lo, fl) = (
            col("source")?,
            col("api")?,
            col("index")?,
            col("arithmetic")?,
            col("logic_shift")?,
            col("flow_control")?,
        );
        for rec in r.records() {
            let rec = rec?;
            if &rec[src] != "clvscu" {
                continue;
            }
            writeln!(
                s,
                "| ours, {gpu} | {} | {} | {} | {} | {} |",
                &rec[api], &rec[index], &rec[ar], &rec[lo], &rec[fl]
            )?;
        }
    }
    s.push('\n');
    Ok(())
}

/// The whitepaper's Table 1 beside ours: time per listing and the fair PR.
pub(super) fn table1(ctx: &Ctx, s: &mut String) -> Result<()> {
    s.push_str(
        "Kernel times (device events, median) at the whitepaper's shape: 60989 × 1100, \
         work-group 256, 239 groups for Listing 2 and 60 for the others.\n\n\
         | listing | GTX 285 OpenCL (whitepaper), ms | H100 OpenCL / CUDA, ms | H100 PR | H200 OpenCL / CUDA, ms | H200 PR |\n\
         |---|---|---|---|---|---|\n",
    );
    let folders: Vec<_> = GPUS
        .iter()
        .map(|(_, p)| ctx.folder(&folder_for(TABLE1, p)))
        .collect::<Result<_>>()?;
    for (listing, ms) in crate::paper::WHITEPAPER_TABLE1_MS {
        // Study data: the whitepaper's Table 1 rows are the committed run's matvec listings.
        let comparison = format!("matvec/listing{listing}");
        let mut cells = Vec::new();
        for f in &folders {
            let Some(f) = f else {
                cells.extend(["no run".to_string(), "—".to_string()]);
                continue;
            };
            let t = |api| super::measurement(f, &comparison, api).map(|m| num(m.median_s * 1e3));
            match (t(Api::OpenCl), t(Api::Cuda)) {
                (Some(a), Some(b)) => cells.push(format!("{a} / {b}")),
                _ => cells.push("—".into()),
            }
            cells.push(pr_row(f, &comparison).map_or("—".into(), pr_text));
        }
        writeln!(s, "| Listing {listing} | {ms} | {} |", cells.join(" | "))?;
    }
    s.push('\n');
    Ok(())
}

pub(super) fn runtime_tables(ctx: &Ctx, s: &mut String) -> Result<()> {
    s.push_str(&super::runtime::render(ctx.root())?);
    for (_, prefix) in GPUS {
        // Study data: the committed runtime and tune experiments' folders.
        for sub in ["calibrate", "launch", "reduce-host", "bfs"] {
            ctx.note(&format!("{}/{sub}", folder_for(RUNTIME, prefix)));
        }
        ctx.note(&format!("{prefix}-2026-11-26-bfs-plain/bfs"));
        for target in [
            "reduce-tuned",
            "matvec-tuned",
            "sgemm-blocked",
            "spmv-vector-local",
        ] {
            ctx.note(&format!("{prefix}-2026-11-26-tune-wg/{target}/exhaustive"));
        }
    }
    s.push('\n');
    Ok(())
}

pub(super) fn sgemm_tables(ctx: &Ctx, s: &mut String) -> Result<()> {
    let mut t = String::new();
    super::speed::sgemm_table(ctx.root(), &mut t)?;
    // The speed document's own heading is a level too high here.
    s.push_str(t.trim_start_matches("## SGEMM against cuBLAS\n\n"));
    for (_, prefix) in GPUS {
        ctx.note(&format!("{prefix}-2026-11-26-sgemm-cublas/sgemm"));
    }
    // The register and waves experiments, a level down; each notes the runs it read.
    let mut more = String::new();
    super::speed::registers_table(ctx.root(), &mut more)?;
    super::speed::waves_table(ctx.root(), &mut more)?;
    super::speed::tune_table(ctx.root(), &mut more)?;
    s.push_str(&more.replace("\n## ", "\n#### ").replacen("## ", "#### ", 1));
    for (_, prefix) in GPUS {
        for (what, run) in [
            ("sgemm-registers", "sgemm-registers"),
            ("sgemm-waves", "sgemm-waves"),
        ] {
            let rel = format!("{prefix}-2026-11-26-{what}/{run}");
            if ctx.root().join(&rel).is_dir() {
                ctx.note(&rel);
            }
        }
    }
    Ok(())
}

/// Our best verified kernel of each API against the vendor library at every size of
/// `shapes3`'s runs (cuBLAS SGEMV per matrix shape, the CUB-backed sum per length), through
/// the report's own baseline ratios.
pub(super) fn shapes_table(ctx: &Ctx, s: &mut String) -> Result<()> {
    s.push_str(
        "Our best verified variant of each API over the vendor library at the same size, \
         measured in the same call, GB/s over GB/s (above 1: ours is faster): cuBLAS SGEMV \
         (`torch.mv`) per matrix shape (rows×cols), the CUB-backed sum (`torch.sum`) per \
         number of floats.\n\n\
         | library | size | H100 OpenCL | H100 CUDA | H200 OpenCL | H200 CUDA |\n\
         |---|---|---|---|---|---|\n",
    );
    let mut table: std::collections::BTreeMap<(String, String), [String; 4]> = Default::default();
    let mut order: Vec<(String, String)> = Vec::new();
    for (g, (_, prefix)) in GPUS.iter().enumerate() {
        let rel = format!("{prefix}-2026-11-23-shapes3-fence/shapes3");
        let Some(f) = ctx.folder(&rel)? else {
            continue;
        };
        let Some((_, baselines)) = &f.baselines else {
            continue;
        };
        let rows: Vec<_> = f.measurements().iter().collect();
        for r in crate::report::baseline::ratios(baselines, &rows) {
            let library = match r.baseline.baseline.as_str() {
                "sgemv" => "cuBLAS SGEMV",
                "sum" => "CUB sum",
                _ => continue,
            };
            let size = r.baseline.size.clone();
            let key = (library.to_string(), size.clone());
            if !order.contains(&key) {
                order.push(key.clone());
            }
            let variant = r
                .comparison
                .split('/')
                .nth(1)
                .unwrap_or(&r.comparison)
                .split('@')
                .next()
                .unwrap_or("");
            let col = 2 * g + usize::from(r.api == Api::Cuda);
            table.entry(key).or_default()[col] = format!("{:.2}× (`{variant}`)", r.ratio);
        }
    }
    for key in &order {
        let c = &table[key];
        let cell = |x: &String| {
            if x.is_empty() {
                "—".to_string()
            } else {
                x.clone()
            }
        };
        writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} |",
            key.0,
            key.1,
            cell(&c[0]),
            cell(&c[1]),
            cell(&c[2]),
            cell(&c[3])
        )?;
    }
    s.push('\n');
    Ok(())
}
