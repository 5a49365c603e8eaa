//! results/fair-gaps.md is what scripts/fair-gaps.py writes from the committed result CSVs: a
//! run added to results/ without rewriting the table (or a table edited by hand) fails here.

use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

#[test]
fn the_fair_gaps_table_is_what_the_script_writes_from_the_results() {
    let out = Command::new("python3")
        .args(["scripts/fair-gaps.py", "results"])
        .current_dir(ROOT)
        .output()
        .expect("python3 runs scripts/fair-gaps.py");
    assert!(
        out.status.success(),
        "fair-gaps.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = String::from_utf8(out.stdout).expect("UTF-8");
    let committed = std::fs::read_to_string(format!("{ROOT}/results/fair-gaps.md")).unwrap();
    assert!(
        written == committed,
        "results/fair-gaps.md is stale: run python3 scripts/fair-gaps.py > results/fair-gaps.md"
    );
    // Every row outside [0.98, 1.02] is grouped under a cause; the table says how many.
    assert!(written.contains("outside, grouped by cause"));
}
