//! The report's "why" column: the verdict `clvscu explain` gave a fair PR away from 1 on that
//! GPU, found among the explain folders of the same tree; never a guess from names.

use std::path::PathBuf;

use crate::export::csv::read_rows;
use crate::rows::{Api, PrRow, VerdictRow, RUNG_SEPARATOR, VERDICTS_CSV};
use crate::stats::PARITY;

use super::ReportError;

/// A verdict and the explain folder it came from, named below the parent of its root
/// (`results/<gpu>/explain`).
pub type FoundVerdict = (String, VerdictRow);

/// Every `explain-verdicts.csv` at or below `roots` (`walk`), with its folder.
pub fn load_verdicts(roots: &[PathBuf]) -> Result<Vec<FoundVerdict>, ReportError> {
    let mut found = Vec::new();
    for root in roots {
        let base = root.parent().unwrap_or(root);
        super::walk(root, &mut |dir| {
            let file = dir.join(VERDICTS_CSV);
            if !file.is_file() {
                return Ok(false);
            }
            let label = dir.strip_prefix(base).unwrap_or(dir).display().to_string();
            found.extend(read_rows(&file)?.into_iter().map(|r| (label.clone(), r)));
            Ok(true)
        })?;
    }
    Ok(found)
}

#[derive(Debug, Clone, PartialEq)]
pub enum Why<'v> {
    /// Not a fair OpenCL-against-CUDA PR, or one explain made itself (a rung).
    NotAsked,
    /// The PR's CI touches the parity band: nothing to explain.
    AtParity,
    /// explain's verdict on this comparison (or, `same_target` false, on the same kernel,
    /// variant and size as a target of its own) on this GPU, and its folder.
    Explained {
        verdict: &'v VerdictRow,
        folder: &'v str,
        same_target: bool,
    },
    /// A gap explain has not been run on.
    Open,
}

/// A fair PR between OpenCL and CUDA, not one of explain's own rungs.
fn asked(pr: &PrRow) -> bool {
    pr.fair
        && pr.api_a != pr.api_b
        && [pr.api_a, pr.api_b].contains(&Api::Cuda)
        && !pr.comparison.contains(RUNG_SEPARATOR)
}

/// The verdict that answers `pr` among `verdicts`: the same GPU and comparison first, then
/// the same GPU, family, variant and size.
pub fn why<'v>(verdicts: &'v [FoundVerdict], pr: &PrRow) -> Why<'v> {
    if !asked(pr) {
        return Why::NotAsked;
    }
    if pr.pr_ci_lo <= PARITY.1 && pr.pr_ci_hi >= PARITY.0 {
        return Why::AtParity;
    }
    let on_gpu = |(_, v): &&FoundVerdict| v.device == pr.device_a || v.device == pr.device_b;
    let rows = || verdicts.iter().filter(on_gpu);
    let explained = |(folder, verdict): &'v FoundVerdict, same_target| Why::Explained {
        verdict,
        folder,
        same_target,
    };
    if let Some(v) = rows().find(|(_, v)| v.study == pr.study && v.target == pr.comparison) {
        return explained(v, true);
    }
    let kernel = rows().find(|(_, v)| {
        v.family == pr.family.name() && v.variant == pr.variant && v.size == pr.size
    });
    kernel.map_or(Why::Open, |v| explained(v, false))
}

/// The cause as a gap's table shows it: the verified cause (see [`VerdictRow::verified`]);
/// else that a machine-code difference was counted; else the cause with what it lacks.
fn shown_cause(v: &VerdictRow) -> String {
    if v.verified {
        v.cause.clone()
    } else if !v.machine_code.is_empty() {
        "machine-code difference (no rung proves a cause)".into()
    } else {
        format!("{} (not proven by a verified rung)", v.cause)
    }
}

impl Why<'_> {
    pub fn cell(&self) -> String {
        match self {
            Why::NotAsked | Why::AtParity => String::new(),
            Why::Explained {
                verdict,
                same_target: true,
                ..
            } => shown_cause(verdict),
            Why::Explained {
                verdict, folder, ..
            } => format!(
                "{} (same kernel and size in {folder})",
                shown_cause(verdict)
            ),
            Why::Open => "not explained yet".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::pr;

    fn verdict(study: &str, target: &str, cause: &str) -> FoundVerdict {
        let v = VerdictRow {
            target: target.into(),
            study: study.into(),
            family: "matvec".into(),
            variant: "listing4".into(),
            size: "4096x1100".into(),
            device: "H100".into(),
            pr: Some(0.86),
            pr_ci_lo: Some(0.85),
            pr_ci_hi: Some(0.87),
            cause: cause.into(),
            verdict: "front end".into(),
            verified: true,
            machine_code: String::new(),
            fix: String::new(),
            replay: String::new(),
        };
        ("results/x/explain".into(), v)
    }

    #[test]
    fn a_gap_takes_the_verdict_of_its_own_comparison_first() {
        let verdicts = [
            verdict("other", "t", "registers"),
            verdict("s", "matvec/listing4", "front-end"),
        ];
        let w = why(&verdicts, &pr("matvec/listing4", 0.86, true));
        assert_eq!(w.cell(), "front-end");
    }

    #[test]
    fn else_the_same_kernel_and_size_elsewhere_named_by_its_folder() {
        let verdicts = [verdict("explain-ladder", "listing4", "front-end")];
        let w = why(&verdicts, &pr("matvec/listing4", 0.86, true));
        assert_eq!(
            w.cell(),
            "front-end (same kernel and size in results/x/explain)"
        );
    }

    #[test]
    fn parity_unfair_rungs_and_unexplained_gaps_are_told_apart() {
        let verdicts = [verdict("s", "matvec/listing4", "front-end")];
        assert_eq!(why(&verdicts, &pr("c", 0.99, true)), Why::AtParity);
        assert_eq!(why(&verdicts, &pr("c", 0.86, false)), Why::NotAsked);
        assert_eq!(why(&verdicts, &pr("c::own", 0.86, true)), Why::NotAsked);
        let mut other_gpu = pr("c", 0.86, true);
        other_gpu.device_a = "H200".into();
        other_gpu.device_b = "H200".into();
        assert_eq!(why(&verdicts, &other_gpu), Why::Open);
        assert_eq!(Why::Open.cell(), "not explained yet");
    }

    #[test]
    fn a_verdict_no_verified_rung_proves_says_so_or_names_the_machine_code() {
        let mut v = verdict("s", "t", "second-stage-registers");
        v.1.verified = false;
        assert_eq!(
            shown_cause(&v.1),
            "second-stage-registers (not proven by a verified rung)"
        );
        v.1.machine_code = "OpenCL against CUDA: LDS 512 against 0".into();
        assert!(shown_cause(&v.1).starts_with("machine-code difference"));
    }
}
