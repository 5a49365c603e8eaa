//! The committed explain runs: their verdicts rebuild from their rungs' rows (no number in
//! `explain-verdicts.csv` or `explain.md` is typed), and on each GPU explain names, by itself,
//! the causes the one-off studies found by hand for the comparisons of `explain-known`.

use std::path::{Path, PathBuf};

use clvscu::explain::attribute::explain_all;
use clvscu::explain::output::{self, VerdictRow, VERDICTS_CSV};
use clvscu::explain::run::read_folder_rows;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/results");

/// The explain-known folders committed, one per GPU.
fn folders() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(ROOT)
        .unwrap()
        .flatten()
        .map(|e| e.path().join("explain-known"))
        .filter(|p| p.join(VERDICTS_CSV).is_file())
        .collect();
    found.sort();
    found
}

fn rebuilt(dir: &Path) -> Vec<VerdictRow> {
    let (prs, rows) = read_folder_rows(dir).unwrap();
    output::verdict_rows(&explain_all(&prs, &rows))
}

#[test]
fn committed_verdicts_rebuild_from_their_rungs() {
    let dirs = folders();
    assert!(!dirs.is_empty(), "no explain-known folder under results/");
    for dir in dirs {
        let committed: Vec<VerdictRow> =
            clvscu::export::csv::read_rows(&dir.join(VERDICTS_CSV)).unwrap();
        assert_eq!(committed, rebuilt(&dir), "{}", dir.display());
        let (prs, rows) = read_folder_rows(&dir).unwrap();
        let md = std::fs::read_to_string(dir.join(output::EXPLAIN_MD)).unwrap();
        let code = output::CodeFacts::read(&dir).unwrap();
        let launch =
            output::LaunchFacts::read(&dir.join(clvscu::explain::run::LADDER_DIR), &rows).unwrap();
        let again = output::markdown(&explain_all(&prs, &rows), &code, &launch, "");
        // The provenance line aside, the Markdown is the rows' own.
        for line in again
            .lines()
            .filter(|l| l.starts_with('|') || l.starts_with("- ") || l.starts_with("**"))
        {
            assert!(md.contains(line), "{}: {line}", dir.display());
        }
    }
}

/// What the hand studies found (fair-gaps.md, the README's log), as explain's cause names.
const HAND_FOUND: &[(&str, &str)] = &[
    ("matvec-listing4", "front-end"),
    ("math-exp", "front-end"),
    ("sgemm-tiled16", "carveout"),
    ("matvec-row-multi", "front-end"),
    ("matvec-row-item", "front-end"),
    ("spmv-banded-stream-tex", "front-end"),
    ("spmv-powerlaw-vector-tex", "front-end"),
    ("reduce-tuned-2^16", "between-launches"),
];

#[test]
fn explain_names_the_hand_found_causes_on_every_gpu() {
    for dir in folders() {
        let verdicts = rebuilt(&dir);
        for (target, cause) in HAND_FOUND {
            let v = verdicts
                .iter()
                .find(|v| v.target == *target)
                .unwrap_or_else(|| panic!("{}: no verdict for {target}", dir.display()));
            // The small reduction's gap (1.04-1.07 in 2026-11-23's runs, before the harness's
            // own launch path was calibrated) measures inside [0.98, 1.02] now: no gap is the
            // honest verdict there, and the only one accepted in place of the hand's.
            let gone = v.cause == "no-gap" && target.starts_with("reduce");
            let named = v.cause.split('+').any(|c| c == *cause) || gone;
            assert!(
                named,
                "{}: {target}: explain says {} ({}), the hand studies {cause}",
                dir.display(),
                v.cause,
                v.verdict
            );
        }
        let tuned = verdicts
            .iter()
            .find(|v| v.target == "sgemm-blocked-cuda-best")
            .expect("the tuned SGEMM is explained");
        assert_ne!(tuned.cause, "not-measured", "{}", dir.display());
    }
}

/// The register verdicts of the committed folders rested on rungs that took the CUDA driver's
/// linker, a load path that changes OpenCL's code by itself: they are void now, and no
/// verdict names the registers or the linker as a cause.
#[test]
fn verdicts_that_rested_on_linker_rungs_are_void() {
    use clvscu::explain::output::ExplainRow;
    for dir in folders() {
        let rows: Vec<ExplainRow> =
            clvscu::export::csv::read_rows(&dir.join(output::EXPLAIN_CSV)).unwrap();
        let linker = rows
            .iter()
            .filter(|r| r.rung.contains("-held-to-r") || r.rung.starts_with("jit-opt-"));
        let mut seen = 0;
        for r in linker {
            seen += 1;
            assert!(
                r.void.starts_with("void:"),
                "{}: {} {}",
                dir.display(),
                r.target,
                r.rung
            );
        }
        assert!(seen > 0, "{}: the linker rungs are read", dir.display());
        for v in rebuilt(&dir) {
            assert!(
                !v.cause.contains("second-stage-registers") && !v.cause.contains("load-path"),
                "{}: {} still names {}",
                dir.display(),
                v.target,
                v.cause
            );
        }
    }
}
