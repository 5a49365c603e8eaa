//! Hardware counters of both front ends' code, where Nsight Compute (`ncu`) is at hand.
//!
//! ncu sees no kernel of NVIDIA's OpenCL, so the `profile` part, a process of its own under ncu,
//! builds each target's CUDA side with NVRTC's PTX and with OpenCL's (the texts under `ptx/`),
//! runs each once and verifies it. Its launches, in order, go to `profile-order.csv`; ncu's rows
//! (`ncu-raw.csv`) are matched to them by position, and a count that differs is said, never
//! guessed around.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::backend::Runtime;
use crate::export::csv::{read_rows, write_rows};
use crate::export::ExportError;
use crate::kernels::KernelSources;
use crate::rows::Api;
use crate::study::Comparison;

use super::code::read_text;

pub const NCU_CSV: &str = "ncu.csv";
pub const ORDER_CSV: &str = "profile-order.csv";
/// ncu's own output of the profile part (`--csv --page raw`).
pub const RAW_FILE: &str = "ncu-raw.csv";

/// Kernel time, DRAM bytes, achieved occupancy and instructions issued.
pub const METRICS: [&str; 4] = [
    "gpu__time_duration.sum",
    "dram__bytes.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "smsp__inst_issued.sum",
];

/// One run of the profile part: whose PTX ran for which target, with how many launches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OrderRow {
    pub target: String,
    /// The front end whose PTX ran (on the CUDA driver).
    pub code: Api,
    pub launches: u64,
    pub verified: bool,
    pub note: String,
}

/// The counters of one target's run of one front end's PTX, summed over its launches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NcuRow {
    pub target: String,
    /// The front end whose PTX ran (on the CUDA driver).
    pub code: Api,
    pub launches: u64,
    pub duration_ns: f64,
    pub dram_bytes: f64,
    /// Duration-weighted over the launches.
    pub achieved_occupancy_pct: f64,
    pub instructions_issued: f64,
    /// `ncu --version`'s last line.
    pub tool: String,
}

/// One kernel launch as ncu reports it: the [`METRICS`] in their order.
#[derive(Debug, Clone, PartialEq)]
pub struct NcuLaunch {
    pub kernel: String,
    pub values: [f64; 4],
}

/// ncu's options for the profile part: the GPU's clocks left alone (as every run leaves
/// them), the counters as CSV into `log`.
pub fn ncu_arguments(log: &Path) -> Vec<String> {
    "--clock-control none --csv --page raw --print-units base --metrics"
        .split(' ')
        .map(str::to_string)
        .chain([
            METRICS.join(","),
            "--log-file".into(),
            log.display().to_string(),
        ])
        .collect()
}

/// The CUDA side of each target, once with each front end's PTX, each run once and
/// verified, in order; the order file tells [`collect`] which launches were whose.
pub fn profile(
    out: &Path,
    targets: &[Comparison],
    sources: &KernelSources,
    cuda: &mut dyn Runtime,
) -> Result<Vec<OrderRow>, ExportError> {
    let mut rows = Vec::new();
    for t in targets {
        for code in [Api::Cuda, Api::OpenCl] {
            let Some((_, text)) = read_text(out, &t.id, code) else {
                continue;
            };
            let before = cuda.calls().launches;
            let ran = crate::session::run_once(cuda, sources, t.b.clone(), Some(&text));
            let (verified, note) = match ran {
                Ok(true) => (true, String::new()),
                Ok(false) => (false, "the result did not verify".into()),
                Err(e) => (false, e.to_string()),
            };
            rows.push(OrderRow {
                target: t.id.clone(),
                code,
                launches: cuda.calls().launches - before,
                verified,
                note,
            });
        }
    }
    write_rows(&out.join(ORDER_CSV), &rows)?;
    Ok(rows)
}

/// A number as ncu prints it (`1,234.5`, `n/a`).
fn number(cell: &str) -> f64 {
    cell.replace(',', "").trim().parse().unwrap_or(f64::NAN)
}

/// Why ncu's output gives no rows.
#[derive(Debug, thiserror::Error)]
pub enum NcuError {
    #[error(transparent)]
    Csv(#[from] csv::Error),
    #[error("ncu's CSV has no column {0}")]
    NoColumn(String),
    #[error(
        "ncu profiled {profiled} launches where the profile part made {made}; its rows cannot \
         be matched to the targets"
    )]
    Mismatch { profiled: usize, made: u64 },
    #[error(transparent)]
    Export(#[from] ExportError),
    #[error("{}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// ncu's output unread, with its first error line (ncu says there why it wrote no CSV).
    #[error("{source} {first}")]
    Unparsed {
        source: Box<NcuError>,
        first: String,
    },
}

/// The launches in ncu's `--csv --page raw` output, in order; lines that are not CSV
/// (`==PROF==` notes) and the units row are skipped.
pub fn parse_ncu(text: &str) -> Result<Vec<NcuLaunch>, NcuError> {
    let csv_text: String = text
        .lines()
        .filter(|l| l.starts_with('"'))
        .map(|l| format!("{l}\n"))
        .collect();
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(csv_text.as_bytes());
    let header = reader.headers()?.clone();
    let column = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| NcuError::NoColumn(name.to_string()))
    };
    let id = column("ID")?;
    let kernel = column("Kernel Name")?;
    let metrics: Vec<usize> = METRICS
        .iter()
        .map(|m| column(m))
        .collect::<Result<_, _>>()?;
    let mut launches = Vec::new();
    for record in reader.records() {
        let record = record?;
        if record.get(id).and_then(|c| c.parse::<u64>().ok()).is_none() {
            continue;
        }
        launches.push(NcuLaunch {
            kernel: record.get(kernel).unwrap_or("").to_string(),
            values: std::array::from_fn(|i| record.get(metrics[i]).map_or(f64::NAN, number)),
        });
    }
    Ok(launches)
}

/// Each order row's launches summed into one row; an error when the counts disagree.
pub fn match_launches(
    order: &[OrderRow],
    launches: &[NcuLaunch],
    tool: &str,
) -> Result<Vec<NcuRow>, NcuError> {
    let made: u64 = order.iter().map(|o| o.launches).sum();
    if made != launches.len() as u64 {
        return Err(NcuError::Mismatch {
            profiled: launches.len(),
            made,
        });
    }
    let mut rest = launches;
    let mut rows = Vec::new();
    for o in order {
        let (mine, later) = rest.split_at(o.launches as usize);
        rest = later;
        if !o.verified || mine.is_empty() {
            continue;
        }
        let sum = |i: usize| mine.iter().map(|l| l.values[i]).sum::<f64>();
        let duration = sum(0);
        let occupancy = mine.iter().map(|l| l.values[2] * l.values[0]).sum::<f64>() / duration;
        rows.push(NcuRow {
            target: o.target.clone(),
            code: o.code,
            launches: o.launches,
            duration_ns: duration,
            dram_bytes: sum(1),
            achieved_occupancy_pct: occupancy,
            instructions_issued: sum(3),
            tool: tool.to_string(),
        });
    }
    Ok(rows)
}

/// Reads the profile part's order and ncu's output under `out` and writes `ncu.csv`.
pub fn collect(out: &Path, tool: &str) -> Result<Vec<NcuRow>, NcuError> {
    let order: Vec<OrderRow> = read_rows(&out.join(ORDER_CSV))?;
    let path = out.join(RAW_FILE);
    let raw = std::fs::read_to_string(&path).map_err(|source| NcuError::Read { path, source })?;
    let launches = parse_ncu(&raw).map_err(|e| NcuError::Unparsed {
        source: Box::new(e),
        first: raw.lines().find(|l| l.contains("ERR")).unwrap_or("").into(),
    })?;
    let rows = match_launches(&order, &launches, tool)?;
    write_rows(&out.join(NCU_CSV), &rows)?;
    Ok(rows)
}

/// "ncu, both PTX texts on the CUDA driver: OpenCL's code 1.07 GB from DRAM, 61% achieved
/// occupancy, 12.3 M instructions issued, 210 µs; NVRTC's 1.07 GB, 75%, 10.1 M, 180 µs" for
/// `target`; `None` without both.
pub fn difference(rows: &[NcuRow], target: &str) -> Option<String> {
    let side = |api| rows.iter().find(|r| r.target == target && r.code == api);
    let (cl, cu) = (side(Api::OpenCl)?, side(Api::Cuda)?);
    let facts = |r: &NcuRow| {
        format!(
            "{:.3} GB from DRAM, {:.1}% achieved occupancy, {:.3} M instructions issued, \
             {:.1} µs",
            r.dram_bytes / 1e9,
            r.achieved_occupancy_pct,
            r.instructions_issued / 1e6,
            r.duration_ns / 1e3
        )
    };
    Some(format!(
        "ncu ({}), both PTX texts run once on the CUDA driver: OpenCL's code {}; NVRTC's {}",
        cl.tool,
        facts(cl),
        facts(cu)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of `ncu --csv --page raw --print-units base` output with `--log-file`.
    const RAW: &str = r#"==PROF== Connected to process 4242
==PROF== Profiling "k": 0%....50%....100% - 3 passes
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","dram__bytes.sum","gpu__time_duration.sum","sm__warps_active.avg.pct_of_peak_sustained_active","smsp__inst_issued.sum"
"","","","","","","","","","","","byte","nsecond","%","inst"
"0","4242","clvscu","h","k","1","7","(256, 1, 1)","(4096, 1, 1)","0","9.0","1,048,576","2,000","50","1,000"
"1","4242","clvscu","h","k","1","7","(256, 1, 1)","(4096, 1, 1)","0","9.0","2097152","1000","80","3000"
"2","4242","clvscu","h","k2","1","7","(256, 1, 1)","(16, 1, 1)","0","9.0","4096","500","10","10"
==PROF== Disconnected from process 4242
"#;

    fn order(code: Api, launches: u64) -> OrderRow {
        OrderRow {
            target: "t".into(),
            code,
            launches,
            verified: true,
            note: String::new(),
        }
    }

    #[test]
    fn launches_are_read_in_order_with_their_metrics() {
        let l = parse_ncu(RAW).unwrap();
        assert_eq!(l.len(), 3, "the units row is no launch");
        assert_eq!(l[0].kernel, "k");
        assert_eq!(l[0].values, [2000.0, 1_048_576.0, 50.0, 1000.0]);
    }

    #[test]
    fn each_run_sums_its_launches_and_weights_occupancy_by_time() {
        let l = parse_ncu(RAW).unwrap();
        let rows =
            match_launches(&[order(Api::Cuda, 1), order(Api::OpenCl, 2)], &l, "ncu 1").unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].dram_bytes, 1_048_576.0);
        assert_eq!(rows[1].launches, 2);
        assert_eq!(rows[1].dram_bytes, 2_101_248.0);
        assert_eq!(rows[1].instructions_issued, 3010.0);
        let occupancy = (80.0 * 1000.0 + 10.0 * 500.0) / 1500.0;
        assert!((rows[1].achieved_occupancy_pct - occupancy).abs() < 1e-9);
        let text = difference(&rows, "t").unwrap();
        assert!(text.contains("OpenCL's code 0.002 GB from DRAM"), "{text}");
    }

    #[test]
    fn counts_that_disagree_are_refused_not_guessed() {
        let l = parse_ncu(RAW).unwrap();
        let e = match_launches(&[order(Api::Cuda, 2)], &l, "")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("ncu profiled 3 launches where the profile part made 2"),
            "{e}"
        );
    }

    #[test]
    fn output_without_the_metrics_says_which_is_missing() {
        let e = parse_ncu("\"ID\",\"Kernel Name\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("gpu__time_duration.sum"), "{e}");
    }
}
