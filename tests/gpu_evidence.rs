//! The GPU runs that the families and the user-kernel work rest on are committed for both GPUs
//! (an H100 and an H200), each measured on the GPU its folder names, with every side verified
//! and a PR with its CI: the new families (transpose, the 2D stencil, the prefix sum, the
//! whitepaper's guidance, Table VI) and the user's own kernel pair run, tuned and explained.

use std::path::{Path, PathBuf};

use clvscu::rows::{MeasurementRow, PrRow};

fn results() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("results")
}

/// (folder under `results/<gpu>-2026-11-26-…`, run folders inside it that must hold PRs)
const EVIDENCE: &[(&str, &[&str])] = &[
    ("new-families", &["transpose", "stencil2d"]),
    ("scan-guidance", &["scan", "table-vi"]),
    ("userpair", &["run", "explain/ladder"]),
];

const GPUS: &[(&str, &str)] = &[("h100", "H100"), ("h200", "H200")];

fn check_run_folder(dir: &Path, gpu_name: &str) {
    let prs: Vec<PrRow> = clvscu::export::csv::read_rows(&dir.join("prs.csv"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let rows: Vec<MeasurementRow> = clvscu::export::csv::read_rows(&dir.join("measurements.csv"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    assert!(!prs.is_empty(), "{}: no PR", dir.display());
    for r in &rows {
        assert!(
            r.device.contains(gpu_name),
            "{}: {}",
            dir.display(),
            r.device
        );
        assert!(r.verified, "{}: {} unverified", dir.display(), r.comparison);
    }
    for p in &prs {
        assert!(
            p.pr_ci_lo <= p.pr && p.pr <= p.pr_ci_hi && p.pr > 0.0,
            "{}: {} PR {} outside its CI",
            dir.display(),
            p.comparison,
            p.pr
        );
    }
}

#[test]
fn every_new_family_and_the_user_pair_ran_verified_on_both_gpus() {
    for (gpu, name) in GPUS {
        for (folder, runs) in EVIDENCE {
            let base = results().join(format!("{gpu}-2026-11-26-{folder}"));
            for run in *runs {
                check_run_folder(&base.join(run), name);
            }
        }
        let tuned = results().join(format!("{gpu}-2026-11-26-userpair/tune/answer.md"));
        let answer =
            std::fs::read_to_string(&tuned).unwrap_or_else(|e| panic!("{}: {e}", tuned.display()));
        assert!(
            answer.contains("OpenCL") && answer.contains("CUDA"),
            "{answer}"
        );
    }
}

#[test]
fn the_guidance_family_ran_on_both_gpus() {
    for (gpu, name) in GPUS {
        let base = results().join(format!("{gpu}-2026-11-26-scan-guidance"));
        let runs: Vec<PathBuf> = ["guidance", "guidance-index", "guidance-branch"]
            .iter()
            .map(|r| base.join(r))
            .filter(|d| d.join("prs.csv").is_file())
            .collect();
        assert!(!runs.is_empty(), "{}: no guidance run", base.display());
        for dir in runs {
            check_run_folder(&dir, name);
        }
    }
}
