//! `docs/findings.md` and the README's headline block are exactly what `clvscu report
//! --findings` writes from the committed results: a hand-edited number, or a run added without
//! regenerating them, fails here (`CLVSCU_BLESS=1` rewrites both). And every number-looking
//! token of the README outside that block is either not a measurement (a name, a version, an
//! example argument, a path) or a value this test checks against the code.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use clvscu::report::findings::{self, replace_block, BEGIN, DOC, END};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn bless() -> bool {
    std::env::var("CLVSCU_BLESS").is_ok_and(|v| v == "1")
}

#[test]
fn the_findings_and_the_headline_are_what_the_committed_runs_give() {
    let f = findings::render(&repo().join("results")).unwrap();
    let doc_path = repo().join(DOC);
    let readme_path = repo().join("README.md");
    let readme = std::fs::read_to_string(&readme_path).unwrap();
    let wanted_readme = replace_block(&readme, BEGIN, END, &f.headline)
        .unwrap_or_else(|| panic!("README.md: no headline block ({BEGIN} ... {END})"));
    let wanted_readme = replace_block(
        &wanted_readme,
        findings::explain::BEGIN,
        findings::explain::END,
        &f.explain,
    )
    .unwrap_or_else(|| panic!("README.md: no explain block"));
    if bless() {
        std::fs::write(&doc_path, &f.doc).unwrap();
        std::fs::write(&readme_path, &wanted_readme).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&doc_path).unwrap_or_default();
    assert!(
        committed == f.doc,
        "{DOC} is not what the committed results give: run `clvscu report --findings` (or \
         CLVSCU_BLESS=1 cargo test --test findings) and review the diff"
    );
    assert!(
        readme == wanted_readme,
        "README.md's headline block is not what the committed results give: run `clvscu \
         report --findings` and review the diff"
    );
}

/// Every experiment says what the paper published (or that it is our own question), what we
/// measured or why we cannot, and where each number came from.
#[test]
fn every_experiment_has_the_published_result_ours_and_an_explanation() {
    let f = findings::render(&repo().join("results")).unwrap();
    for e in findings::experiments::EXPERIMENTS {
        let start = f
            .doc
            .find(&format!("### {}\n", e.title))
            .unwrap_or_else(|| panic!("no section for {}", e.id));
        let section = &f.doc[start..];
        let section = &section[..section[4..].find("\n## ").map_or(section.len(), |i| i + 4)];
        let section = &section[..section[4..].find("\n### ").map_or(section.len(), |i| i + 4)];
        assert!(section.contains("**Published"), "{}: {section}", e.id);
        assert!(section.contains("**Ours:**"), "{}", e.id);
        assert!(section.contains("**Explanation:**"), "{}", e.id);
        let measures_something = section.contains("| H100 |") || section.contains("| H100 ");
        let says_why_not = section.contains("Our results cannot answer this");
        assert!(measures_something || says_why_not, "{}: {section}", e.id);
        if measures_something {
            assert!(section.contains("Runs read:"), "{}: no provenance", e.id);
        }
    }
    // No cell lost its data silently: a missing folder or row says so, and there is none.
    assert!(
        !f.doc.contains("no row `"),
        "a measure names a row its folder lacks"
    );
    // The seed papers' numbers are quoted from src/paper.rs, never typed into the experiments.
    for q in clvscu::paper::QUOTES {
        assert!(
            f.doc.contains(q.text),
            "{}: quote not in the findings",
            q.experiment
        );
    }
}

/// `report --findings` through the binary writes the findings and the headline block into the
/// repository it is given, and refuses a README without the block.
#[test]
fn report_findings_writes_the_doc_and_the_readme_block() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("README.md"),
        format!(
            "# x\n\n{BEGIN}\nold\n{END}\n\n{}\nold\n{}\n",
            findings::explain::BEGIN,
            findings::explain::END
        ),
    )
    .unwrap();
    Command::cargo_bin("clvscu")
        .unwrap()
        .args(["report", "--findings"])
        .arg(repo().join("results"))
        .arg("--out")
        .arg(tmp.path())
        .assert()
        .success();
    let f = findings::render(&repo().join("results")).unwrap();
    let doc = std::fs::read_to_string(tmp.path().join(DOC)).unwrap();
    assert_eq!(doc, f.doc);
    let readme = std::fs::read_to_string(tmp.path().join("README.md")).unwrap();
    assert_eq!(
        readme,
        format!(
            "# x\n\n{BEGIN}\n{}{END}\n\n{}\n{}{}\n",
            f.headline,
            findings::explain::BEGIN,
            f.explain,
            findings::explain::END
        )
    );

    std::fs::write(tmp.path().join("README.md"), "# no block\n").unwrap();
    Command::cargo_bin("clvscu")
        .unwrap()
        .args(["report", "--findings"])
        .arg(repo().join("results"))
        .arg("--out")
        .arg(tmp.path())
        .assert()
        .code(1)
        .stderr(predicates::str::contains("no headline block"));
}

/// Tokens of the README that hold a digit and are not measurements, each with the reason.
/// Values that the code defines are checked in [`checked_values`].
const NOT_MEASUREMENTS: &[(&str, &str)] = &[
    ("2011", "the year of Fang, Varbanescu & Sips"),
    ("H100", "a GPU's name"),
    ("L1", "a cache's name"),
    ("H200", "a GPU's name"),
    ("f64", "a type's name"),
    ("python3", "a program's name"),
    ("CLVSCU_BLESS=1", "an environment setting"),
    ("matvec/listing6", "a kernel's name"),
    ("table1", "a study's name"),
    (
        "10",
        "the suite's time budget in minutes (clvscu::suite::FULL_BUDGET_S, checked by its tests)",
    ),
    ("6", "Listing 6, a name of the whitepaper's"),
    (
        "64,128,256",
        "an argument of the quick start's run, which tests/readme.rs runs",
    ),
    (
        "4096x1100",
        "an argument of the quick start's run, which tests/readme.rs runs",
    ),
    ("64..1024", "an example of the range syntax"),
    ("2^10..2^20", "an example of the range syntax"),
];

/// Tokens whose value the code defines, and the check that they still agree.
fn checked_values(token: &str) -> Option<Result<(), String>> {
    use clvscu::stats::{CONFIDENCE, SIMILAR_HI, SIMILAR_LO, TIGHT_HI, TIGHT_LO};
    let agree = |ok: bool, what: &str| {
        Some(if ok {
            Ok(())
        } else {
            Err(format!("`{token}` no longer matches {what}"))
        })
    };
    let stopping = include_str!("../src/stopping.rs");
    let reliability = include_str!("../docs/reliability.md");
    match token {
        "0.9" => agree(format!("{SIMILAR_LO}") == token, "SIMILAR_LO"),
        "1.1" => agree(format!("{SIMILAR_HI}") == token, "SIMILAR_HI"),
        "±5%" => agree(
            (1.0 - TIGHT_LO - 0.05).abs() < 1e-12 && (TIGHT_HI - 1.0 - 0.05).abs() < 1e-12,
            "TIGHT_LO/TIGHT_HI",
        ),
        "95%" => agree((CONFIDENCE - 0.95).abs() < 1e-12, "stats::CONFIDENCE"),
        // PR's reference value, and the error exit code; 2 is clap's usage error.
        "1" | "2" => Some(Ok(())),
        // explain's parity band.
        "0.98" => agree(
            format!("{}", clvscu::explain::PARITY.0) == token,
            "explain::PARITY",
        ),
        "1.02" => agree(
            format!("{}", clvscu::explain::PARITY.1) == token,
            "explain::PARITY",
        ),
        "0" | "3" | "4" | "5" | "130" => agree(
            stopping.contains(&format!(": i32 = {token};")),
            "an exit code of src/stopping.rs",
        ),
        // The graphs the full suite leaves to the bfs study.
        "2^24-vertex" => agree(
            clvscu::suite::STEPS
                .iter()
                .any(|s| s.name == "bfs" && s.skip.contains(&"size=2^24")),
            "the bfs step's skip list in clvscu::suite::STEPS",
        ),
        "138" => agree(
            reliability.contains(&format!("{token} cases:")),
            "the case count of docs/reliability.md (tests/reliability_table.rs)",
        ),
        _ => None,
    }
}

/// The words of `text` that hold a digit, without the punctuation around them.
fn number_tokens(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| w.trim_matches(|c: char| "()[]{}.,;:*\"'|`<>".contains(c)))
        .filter(|w| w.chars().any(|c| c.is_ascii_digit()))
        .map(str::to_string)
        .collect()
}

fn is_path_in(repo: &Path, token: &str) -> bool {
    token.contains('/') && repo.join(token).exists()
}

#[test]
fn every_number_in_the_readme_outside_the_generated_block_is_checked_or_not_a_measurement() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let (Some(b), Some(e)) = (readme.find(BEGIN), readme.find(END)) else {
        panic!("README.md: no headline block");
    };
    let outside = format!("{}{}", &readme[..b], &readme[e..]);
    let (Some(b), Some(e)) = (
        outside.find(findings::explain::BEGIN),
        outside.find(findings::explain::END),
    ) else {
        panic!("README.md: no explain block");
    };
    let outside = format!("{}{}", &outside[..b], &outside[e..]);
    let mut bad = Vec::new();
    for token in number_tokens(&outside) {
        if is_path_in(&repo(), &token) || NOT_MEASUREMENTS.iter().any(|(t, _)| *t == token) {
            continue;
        }
        match checked_values(&token) {
            Some(Ok(())) => {}
            Some(Err(e)) => bad.push(e),
            None => bad.push(format!(
                "`{token}`: a number the README types by hand; generate it into the headline \
                 block, or name why it is not a measurement in tests/findings.rs"
            )),
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn a_typed_measurement_is_caught() {
    let tokens = number_tokens("OpenCL reaches (0.93 of CUDA) at `2^16`, see `results/x`.");
    assert_eq!(tokens, ["0.93", "2^16"]);
    assert!(checked_values("0.93").is_none());
    assert!(!NOT_MEASUREMENTS.iter().any(|(t, _)| *t == "0.93"));
}
