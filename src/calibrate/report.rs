//! What a calibration says: the checks of the harness against the plain loop, the headline
//! launch PR, the Markdown page and the files `clvscu calibrate` writes.

use std::fmt::Write as _;
use std::path::Path;

use super::*;
use crate::export::csv::write_rows;
use crate::export::{write_atomic, ExportError};

/// A check of the harness against the plain loop, with the figures it rests on.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub what: String,
    pub passed: bool,
}

/// The criteria a calibrated harness meets, on the default wait mode: one at a time within
/// [`SINGLE_WITHIN_US`] of the plain loop on each API, the launch PR within [`PR_WITHIN`] of
/// the plain loops', back to back within [`BACK_TO_BACK_WITHIN`] per launch.
pub fn checks(c: &Calibration) -> Vec<Check> {
    let default = WaitMode::default().label();
    let rows = c.rows.iter().filter(|r| r.wait == default).map(|r| {
        let what = format!("{} {} x{} ({})", r.api, r.shape, r.batch, r.wait);
        if r.batch == 1 {
            return Check {
                what: format!(
                    "{what}: harness {:.2} µs vs plain {:.2} µs, within {SINGLE_WITHIN_US} µs",
                    r.harness_us, r.plain_us
                ),
                passed: r.overhead_us.abs() <= SINGLE_WITHIN_US,
            };
        }
        let rel = r.overhead_us / r.plain_us;
        Check {
            what: format!(
                "{what}: harness {:.3} µs vs plain {:.3} µs a launch ({:+.1}%), within {:.0}%",
                r.harness_us,
                r.plain_us,
                100.0 * rel,
                100.0 * BACK_TO_BACK_WITHIN
            ),
            passed: rel.abs() <= BACK_TO_BACK_WITHIN,
        }
    });
    let prs = c.prs.iter().filter(|p| p.wait == default && p.batch == 1);
    let prs = prs.map(|p| Check {
        what: format!(
            "launch PR {} x1 ({}): harness {:.3} vs plain {:.3}, within ±{PR_WITHIN}",
            p.shape, p.wait, p.pr_harness, p.pr_plain
        ),
        passed: (p.pr_harness - p.pr_plain).abs() <= PR_WITHIN,
    });
    rows.chain(prs).collect()
}

/// The case (default wait, one at a time, 1 x 1) whose overhead gap a runtime study records
/// and flags rows by; `None` with fewer than two APIs.
pub fn headline(c: &Calibration) -> Option<&CalibrationPr> {
    c.prs
        .iter()
        .find(|p| p.wait == WaitMode::default().label() && p.batch == 1 && p.shape == "1x1")
}

/// One sentence (for a run's provenance and summary) on whether the harness's own launch cost
/// is the same on both sides.
pub fn verdict(c: &Calibration) -> String {
    let Some(h) = headline(c) else {
        return match c.rows.iter().find(|r| r.batch == 1) {
            Some(r) => format!(
                "one API ({}): the harness's 1x1 launch costs {:+.2} µs over the plain loop's",
                r.api, r.overhead_us
            ),
            None => "nothing calibrated".into(),
        };
    };
    let gap = (h.overhead_opencl_us - h.overhead_cuda_us).abs();
    let (flag, bound, meaning) = if h.flagged {
        (
            "FLAGGED: ",
            "more than",
            "the launch, BFS and small-reduction rows of this folder carry part of it on one side",
        )
    } else {
        ("", "within", "the runtime rows are the APIs' own")
    };
    format!(
        "{flag}the harness's own overhead per 1x1 launch ({} wait) is {:+.2} µs on OpenCL and \
         {:+.2} µs on CUDA, {gap:.2} µs apart ({bound} {OVERHEAD_DIFF_LIMIT_US} µs): {meaning} \
         (launch PR {:.3} through the harness, {:.3} through the plain loops)",
        h.wait, h.overhead_opencl_us, h.overhead_cuda_us, h.pr_harness, h.pr_plain
    )
}

/// The Markdown report: both paths per API and case, the PRs, the checks.
pub fn markdown(c: &Calibration) -> String {
    let mut s = String::from(
        "## Harness against a plain program\n\n\
         Per launch, median µs [95% CI]; overhead = harness - plain.\n\n\
         | API | shape | launches/wait | wait | harness µs | plain µs | overhead µs | events/launch |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for r in &c.rows {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} ({}) | {:.3} [{:.3}, {:.3}] | {:.3} [{:.3}, {:.3}] | {:+.3} | {:.2} |",
            r.api,
            r.shape,
            r.batch,
            r.wait,
            r.wait_calls,
            r.harness_us,
            r.harness_ci_lo_us,
            r.harness_ci_hi_us,
            r.plain_us,
            r.plain_ci_lo_us,
            r.plain_ci_hi_us,
            r.overhead_us,
            r.harness_events_per_launch
        );
    }
    if !c.prs.is_empty() {
        s.push_str(
            "\n## Launch PR (perf OpenCL / perf CUDA) through each path\n\n\
             | shape | launches/wait | wait | PR harness | PR plain | overhead OpenCL µs | overhead CUDA µs | flag |\n\
             |---|---|---|---|---|---|---|---|\n",
        );
        for p in &c.prs {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {:.3} | {:.3} | {:+.3} | {:+.3} | {} |",
                p.shape,
                p.batch,
                p.wait,
                p.pr_harness,
                p.pr_plain,
                p.overhead_opencl_us,
                p.overhead_cuda_us,
                if p.flagged {
                    "overheads differ by more than 0.3 µs"
                } else {
                    ""
                }
            );
        }
    }
    s.push_str("\n## Checks (default wait mode)\n\n");
    for check in checks(c) {
        let mark = if check.passed { "pass" } else { "FAIL" };
        let _ = writeln!(s, "- {mark}: {}", check.what);
    }
    s
}

pub const REPORT_MD: &str = "calibration.md";

/// Writes the CSVs and the Markdown report (under `title`) into `out`.
pub fn write(out: &Path, c: &Calibration, title: &str) -> Result<(), ExportError> {
    write_rows(&out.join(CALIBRATION_CSV), &c.rows)?;
    write_rows(&out.join(CALIBRATION_PR_CSV), &c.prs)?;
    let text = format!("# {title}\n\n{}", markdown(c));
    write_atomic(&out.join(REPORT_MD), text.as_bytes())
}
