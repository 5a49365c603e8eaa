//! The speed findings of 2026-11-26, generated from the committed run folders: the SGEMM table
//! against cuBLAS on both GPUs with the PTX swap at each API's best tiling, and where the
//! `modern` study's wall time goes. `results/2026-11-26-speed.md` is exactly what
//! `clvscu::report::findings::speed` writes from the CSVs (the findings take the same tables),
//! so no number in it is typed by hand (CLVSCU_BLESS=1 rewrites it).

use std::path::PathBuf;

const DOC: &str = "results/2026-11-26-speed.md";

#[test]
fn the_speed_findings_are_what_the_committed_runs_give() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let doc = clvscu::report::findings::speed::document(&repo.join("results")).unwrap();
    let path = repo.join(DOC);
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
