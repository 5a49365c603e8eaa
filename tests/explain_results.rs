//! The committed explain runs: their verdicts rebuild from their rungs' rows (no number in
//! `explain-verdicts.csv` or `explain.md` is typed), and on each GPU explain names, by itself,
//! the causes the one-off studies found by hand for the comparisons of `explain-known`.

use std::path::{Path, PathBuf};

use clvscu::explain::output;
use clvscu::explain::run::explanations_of;
use clvscu::rows::{VerdictRow, EXPLAIN_CSV, VERDICTS_CSV};

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
    output::verdict_rows(&explanations_of(dir).unwrap().0)
}

#[test]
fn committed_verdicts_rebuild_from_their_rungs() {
    let dirs = folders();
    assert!(!dirs.is_empty(), "no explain-known folder under results/");
    for dir in dirs {
        let committed: Vec<VerdictRow> =
            clvscu::export::csv::read_rows(&dir.join(VERDICTS_CSV)).unwrap();
        assert_eq!(committed, rebuilt(&dir), "{}", dir.display());
        let (explanations, rows) = explanations_of(&dir).unwrap();
        let md = std::fs::read_to_string(dir.join(output::EXPLAIN_MD)).unwrap();
        let code = output::CodeFacts::read(&dir).unwrap();
        let launch =
            output::LaunchFacts::read(&dir.join(clvscu::explain::run::LADDER_DIR), &rows).unwrap();
        let again = output::markdown(&explanations, &code, &launch, "");
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
    // `sgemm-tiled16`'s "carveout" rested on carveout sweeps through the CUDA driver's
    // linker, a path that changes the code by itself: it is no finding to hold explain to.
    ("matvec-row-multi", "front-end"),
    ("matvec-row-item", "front-end"),
    ("spmv-banded-stream-tex", "front-end"),
    ("spmv-powerlaw-vector-tex", "front-end"),
    // `reduce-tuned-2^16`'s "between launches" (the first launch alone at parity) did not
    // reproduce on the H200 of 2026-11-28: its first launch alone measured 0.979 there with a
    // CI of one point (kernels of a few microseconds at the device timer's resolution), just
    // outside [0.98, 1.02]; so it is no finding to hold every run to.
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
    use clvscu::rows::ExplainRow;
    let mut seen = 0;
    for dir in folders() {
        let rows: Vec<ExplainRow> = clvscu::export::csv::read_rows(&dir.join(EXPLAIN_CSV)).unwrap();
        let linker = rows
            .iter()
            .filter(|r| r.rung.contains("-held-to-r") || r.rung.starts_with("jit-opt-"));
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
        for v in rebuilt(&dir) {
            assert!(
                !v.cause.contains("load-path"),
                "{}: {}",
                dir.display(),
                v.target
            );
            // A register cause stands only on a capped rung of the target's own load path
            // that closes the gap and is not void.
            let proven = rows.iter().any(|r| {
                r.target == v.target
                    && r.rung.contains("-capped-to-r")
                    && !r.rung.contains("-capped-to-own-r")
                    && r.void.is_empty()
                    && r.at_parity
            });
            assert!(
                !v.cause.contains("second-stage-registers") || proven,
                "{}: {} names {} without a valid register rung",
                dir.display(),
                v.target,
                v.cause
            );
        }
    }
    assert!(seen > 0, "the committed folders' linker rungs are read");
}
