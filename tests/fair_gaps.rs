//! results/fair-gaps.md is what `clvscu report --findings` writes from the committed run
//! folders and explain verdicts: a run added without regenerating it, or a cause typed by hand,
//! fails here (`CLVSCU_BLESS=1` rewrites it). Every cause in it is one of explain's.

use std::path::PathBuf;

use clvscu::report::findings::{self, FAIR_GAPS};

fn results() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("results")
}

#[test]
fn the_fair_gaps_table_is_what_the_results_and_explain_give() {
    let f = findings::render(&results()).unwrap();
    let path = results().join(FAIR_GAPS);
    if std::env::var("CLVSCU_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, &f.fair_gaps).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == f.fair_gaps,
        "results/{FAIR_GAPS} is stale: run `clvscu report --findings results --out .`"
    );
}

#[test]
fn every_cause_is_an_explain_verdict_or_says_it_is_not_explained() {
    let verdicts = clvscu::report::why::load_verdicts(&[results()]).unwrap();
    let causes: Vec<String> = verdicts.iter().map(|(_, v)| v.cause.clone()).collect();
    let gaps = clvscu::report::findings::fair_gaps::fair_gaps(&results()).unwrap();
    assert!(!gaps.gpus.is_empty(), "no GPU with fair PRs under results/");
    for (gpu, _, by_cause) in &gaps.gpus {
        for cause in by_cause.keys() {
            let named = cause.split(" (same kernel").next().unwrap();
            assert!(
                named == "not explained yet" || causes.iter().any(|c| c == named),
                "{gpu}: cause {cause} is no explain verdict"
            );
        }
    }
}
