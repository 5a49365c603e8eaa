//! The one page first: for one suite folder, how many fair comparisons are similar, where
//! OpenCL is slower and by how much, the causes explain verified with their shares, and which
//! of the seeds' conclusions hold here. Every figure is counted from the folder.

use serde::Serialize;

use crate::rows::{PrRow, VerdictRow};
use crate::stats::SIMILAR_LO;

use super::answer::{fair_rows, pr_text};
use super::folder::SuiteFolder;

/// The step whose fair comparisons the summary counts.
pub const FAIR_STEP: &str = "fair";

/// The kinds of cause the summary counts, and the cause ids of explain each takes in.
const CAUSE_KINDS: [(&str, &[&str]); 4] = [
    ("front end", &["front-end"]),
    ("second stage", &["second-stage"]),
    (
        "runtime",
        &[
            "runtime",
            "cuda-load-path",
            "between-launches",
            "host-timer",
            "launch",
        ],
    ),
    ("memory system", &["memory", "carveout", "cache", "coalesc"]),
];

/// One kind of cause and how many verified gaps it explains.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CauseShare {
    pub kind: String,
    pub gaps: usize,
    /// Its share of the verified gaps, in percent.
    pub share: String,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Summary {
    /// "25 of 33 fair comparisons similar" or why there are none.
    pub similar: String,
    /// The fair comparisons whose CI lies below the band, slowest first.
    pub slower: Vec<String>,
    /// How many fair comparisons lie below the band, and their median shortfall.
    pub slower_line: String,
    pub causes: Vec<CauseShare>,
    /// The verdicts explain gave, verified or not, in words.
    pub explained_line: String,
    pub fixes: Vec<String>,
}

pub fn summary(s: &SuiteFolder) -> Summary {
    let rows = fair_rows(s.prs(FAIR_STEP));
    let similar = if rows.is_empty() {
        match s.step(FAIR_STEP) {
            Some(r) => format!(
                "no fair comparison: step `{FAIR_STEP}` has none (status `{}` in suite.csv)",
                r.status
            ),
            None => format!("no fair comparison: suite.csv has no step `{FAIR_STEP}`"),
        }
    } else {
        format!(
            "{} of {} fair comparisons similar (95% CI of the PR inside the band)",
            rows.iter().filter(|p| p.similar).count(),
            rows.len()
        )
    };
    let mut slower: Vec<&PrRow> = rows
        .iter()
        .copied()
        .filter(|p| p.pr_ci_hi < SIMILAR_LO)
        .collect();
    slower.sort_by(|a, b| a.pr.total_cmp(&b.pr));
    let slower_line = slower_line(&slower, rows.len());
    let verified: Vec<&VerdictRow> = s.verdicts.iter().filter(|v| v.verified).collect();
    Summary {
        similar,
        slower: slower
            .iter()
            .map(|p| format!("`{}`: PR {}", p.comparison, pr_text(p)))
            .collect(),
        slower_line,
        causes: shares(&verified),
        explained_line: explained_line(s),
        fixes: s
            .verdicts
            .iter()
            .filter(|v| v.verified && !v.fix.is_empty())
            .map(|v| format!("`{}`: {}", v.target, v.fix))
            .collect(),
    }
}

fn slower_line(slower: &[&PrRow], n: usize) -> String {
    if n == 0 {
        return String::new();
    }
    if slower.is_empty() {
        return format!("OpenCL is below the band in none of the {n} fair comparisons.");
    }
    let mut gaps: Vec<f64> = slower.iter().map(|p| 100.0 * (1.0 - p.pr)).collect();
    gaps.sort_by(f64::total_cmp);
    // `slower` is not empty, so there is a median.
    let median = crate::stats::median(&gaps).unwrap_or(gaps[0]);
    format!(
        "OpenCL is below the band in {} of the {n} fair comparisons, by {:.1}% to {:.1}% \
         (median {median:.1}%) less performance than CUDA:",
        slower.len(),
        gaps[0],
        gaps[gaps.len() - 1]
    )
}

fn kind_of(cause: &str) -> Vec<&'static str> {
    CAUSE_KINDS
        .iter()
        .filter(|(_, ids)| {
            cause
                .split('+')
                .any(|c| ids.iter().any(|id| c.starts_with(id)))
        })
        .map(|(kind, _)| *kind)
        .collect()
}

/// The share of verified gaps per kind of cause; a gap with two causes counts for both.
fn shares(verified: &[&VerdictRow]) -> Vec<CauseShare> {
    CAUSE_KINDS
        .iter()
        .map(|(kind, _)| {
            let gaps = verified
                .iter()
                .filter(|v| kind_of(&v.cause).contains(kind))
                .count();
            let share = if verified.is_empty() {
                "—".to_string()
            } else {
                format!("{:.0}%", 100.0 * gaps as f64 / verified.len() as f64)
            };
            CauseShare {
                kind: kind.to_string(),
                gaps,
                share,
            }
        })
        .collect()
}

fn explained_line(s: &SuiteFolder) -> String {
    if s.verdicts.is_empty() {
        let why = match s.step("explain") {
            Some(r) => format!(
                "status `{}` in suite.csv{}",
                r.status,
                super::around(": ", &r.note, "")
            ),
            None => "suite.csv has no step `explain`".to_string(),
        };
        return format!("explain gave no verdict ({why}).");
    }
    super::gaps::coverage_line(&super::gaps::fair_gaps(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pr(comparison: &str, value: f64) -> PrRow {
        crate::report::fixtures::pr(comparison, value, true)
    }

    #[test]
    fn the_median_shortfall_of_an_even_count_is_the_mean_of_the_two_middle_ones() {
        let (a, b) = (pr("a", 0.8), pr("b", 0.6));
        let line = slower_line(&[&b, &a], 10);
        assert!(line.contains("by 20.0% to 40.0% (median 30.0%)"), "{line}");
        let c = pr("c", 0.7);
        let line = slower_line(&[&b, &c, &a], 10);
        assert!(line.contains("(median 30.0%)"), "{line}");
    }
}
