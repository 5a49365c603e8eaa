//! explain's typed rows and its Markdown: one row per target and rung (`explain.csv`), one per
//! target with its verdict (`explain-verdicts.csv`), and a waterfall per target
//! (`explain.md`), every figure taken from the rows.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::export::csv::read_rows_if_file;
use crate::export::ExportError;
use crate::rows::{ExplainRow, MeasurementRow, PrRow, VerdictRow};

use super::attribute::{Interval, RungOutcome, TargetExplanation};
use super::code::CodeClassRow;

pub const EXPLAIN_MD: &str = "explain.md";

fn split(i: Option<Interval>) -> (Option<f64>, Option<f64>, Option<f64>) {
    (i.map(|i| i.value), i.map(|i| i.lo), i.map(|i| i.hi))
}

pub fn explain_rows(all: &[TargetExplanation]) -> Vec<ExplainRow> {
    all.iter()
        .flat_map(|t| {
            t.rungs.iter().map(move |r| {
                let (pr, pr_ci_lo, pr_ci_hi) = split(r.pr);
                ExplainRow {
                    target: t.target.clone(),
                    study: t.study.clone(),
                    family: t.family.clone(),
                    variant: t.variant.clone(),
                    size: t.size.clone(),
                    device: t.device.clone(),
                    step: r.kind.step().name().into(),
                    rung: r.kind.name(),
                    what: r.kind.describe(),
                    pr,
                    pr_ci_lo,
                    pr_ci_hi,
                    gap_closed: r.closed,
                    moved: r.moved,
                    at_parity: r.closes,
                    void: r.void.clone().unwrap_or_default(),
                    note: r.note.clone(),
                }
            })
        })
        .collect()
}

pub fn verdict_rows(all: &[TargetExplanation]) -> Vec<VerdictRow> {
    all.iter()
        .map(|t| {
            let (pr, pr_ci_lo, pr_ci_hi) = split(t.pr);
            VerdictRow {
                target: t.target.clone(),
                study: t.study.clone(),
                family: t.family.clone(),
                variant: t.variant.clone(),
                size: t.size.clone(),
                device: t.device.clone(),
                pr,
                pr_ci_lo,
                pr_ci_hi,
                cause: t.verdict.slug(),
                verdict: t.verdict_text(),
                verified: t.verified,
                machine_code: t.machine_code.clone().unwrap_or_default(),
                fix: t.fix.clone().unwrap_or_default(),
                replay: t.replay.clone().unwrap_or_default(),
            }
        })
        .collect()
}

/// What the code of each target's two sides is like, beside the rungs: its instructions by
/// class in PTX and SASS, and ncu's counters, each where it was measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CodeFacts {
    pub ptx: Vec<CodeClassRow>,
    pub sass: Vec<CodeClassRow>,
    pub ncu: Vec<super::profile::NcuRow>,
}

impl CodeFacts {
    /// The files under an explain folder, those that exist.
    pub fn read(out: &Path) -> Result<CodeFacts, ExportError> {
        Ok(CodeFacts {
            ptx: read_rows_if_file(&out.join(super::code::PTX_CLASSES_CSV))?,
            sass: read_rows_if_file(&out.join(super::code::SASS_CLASSES_CSV))?,
            ncu: read_rows_if_file(&out.join(super::profile::NCU_CSV))?,
        })
    }
}

/// The fifth step's inputs beside the rungs: the rows with their clocks, and the plain loops.
pub struct LaunchFacts<'a> {
    pub rows: &'a [MeasurementRow],
    pub plain: Vec<crate::calibrate::CalibrationRow>,
}

impl<'a> LaunchFacts<'a> {
    /// The clocks of `rows` (an explain folder's) and the plain loops calibrated in its
    /// `ladder` folder.
    pub fn read(ladder: &Path, rows: &'a [MeasurementRow]) -> Result<Self, ExportError> {
        Ok(LaunchFacts {
            rows,
            plain: super::launch::plain_loops(ladder)?,
        })
    }
}

/// The rung that decided the verdict, among those at parity: the rung a cause of the verdict
/// names (a PTX swap for the front end, the runtime or compiler rung named for any other);
/// `None` when nothing was explained.
fn deciding_rung(t: &TargetExplanation) -> Option<(&RungOutcome, Interval)> {
    use super::attribute::{cause_of, Cause};
    use super::ladder::LadderStep;
    let super::Verdict::Explained(causes) = &t.verdict else {
        return None;
    };
    let named = |r: &RungOutcome| {
        causes.iter().any(|(c, _)| match c {
            Cause::FrontEnd => r.kind.step() == LadderStep::FrontEndOrRuntime,
            c => cause_of(r.kind).as_ref() == Some(c),
        })
    };
    t.rungs
        .iter()
        .filter(|r| r.closes_validly() && r.kind.step() != LadderStep::Target && named(r))
        .filter_map(|r| Some((r, r.pr?)))
        .min_by(|a, b| a.1.value.ln().abs().total_cmp(&b.1.value.ln().abs()))
}

/// The one sentence of a target: the PR, where the rung that closes most takes it, and the
/// verdict.
pub fn headline(t: &TargetExplanation) -> String {
    let Some(own) = t.pr else {
        return format!("{}: {}", t.target, t.verdict.describe());
    };
    let with = deciding_rung(t).map_or_else(String::new, |(r, pr)| {
        format!(" → {:.3} with {}", pr.value, r.kind.describe())
    });
    format!(
        "{}: PR {:.3}{with}: {}",
        t.target,
        own.value,
        t.verdict.describe()
    )
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "not reported".into(), |v| v.to_string())
}

/// The sixth step's facts: each side's work-group, the limit its driver reports for the
/// kernel, registers, spill and shared memory, and the work-groups an SM holds by registers.
fn shape_text(shapes: &[super::attribute::SideShape]) -> Option<String> {
    if shapes.is_empty() {
        return None;
    }
    let sides: Vec<String> = shapes
        .iter()
        .map(|s| {
            format!(
                "{} {} work-items (the driver's limit for the kernel {}), {} registers, {} B \
                 spill, {} B shared; {} work-groups per SM by registers",
                s.api.label(),
                s.local,
                opt(s.limit),
                opt(s.registers),
                opt(s.spill_bytes),
                opt(s.shared_bytes),
                opt(s.groups_per_sm_by_registers())
            )
        })
        .collect();
    Some(format!(
        "{} (an SM of 65536 registers and 2048 work-items, as on Hopper)",
        sides.join("; ")
    ))
}

/// `explain.md`: a headline and a waterfall table per target.
pub fn markdown(
    all: &[TargetExplanation],
    code: &CodeFacts,
    launch: &LaunchFacts<'_>,
    provenance: &str,
) -> String {
    let mut md = String::from(
        "# Why the PRs are where they are\n\nEach target is a fair comparison; each rung is the \
         same comparison with one thing changed, run on the same GPU, verified and interleaved. \
         A rung *closes* the gap when its CI touches [0.98, 1.02]; \"gap closed\" is the share \
         of the target's gap (in logarithms) it removed.\n\n",
    );
    if !provenance.is_empty() {
        let _ = writeln!(md, "{provenance}\n");
    }
    let _ = writeln!(md, "## Verdicts\n");
    for t in all {
        let front_end = t.verdict.slug().split('+').any(|c| c == "front-end");
        let ptx = super::code::difference(&code.ptx, &t.target, "PTX").filter(|_| front_end);
        let ptx = ptx.map(|text| format!("; {text}")).unwrap_or_default();
        let _ = writeln!(md, "- {}{ptx}", headline(t));
    }
    for t in all {
        target_heading(&mut md, t);
        target_facts(&mut md, t, code, launch);
        rungs_table(&mut md, &t.rungs);
    }
    md
}

/// What a target is, its verdict, and whether the verdict is verified.
fn target_heading(md: &mut String, t: &TargetExplanation) {
    let _ = writeln!(
        md,
        "\n## {}\n\n{} {} {} on {}; PR {}.\n\n**Verdict:** {}\n",
        t.target,
        t.family,
        t.variant,
        t.size,
        t.device,
        t.pr.map_or_else(|| "not measured".into(), |p| p.to_string()),
        t.verdict_text()
    );
    fact(md, "Verified", Some(verified_text(t)));
}

/// Whether the verdict is verified, and if not, which causes a rung proved: a split verdict's
/// front-end part is proven by the PTX swap even when no rung proves its runtime part.
fn verified_text(t: &TargetExplanation) -> String {
    use super::attribute::Cause;
    if t.verified {
        return "yes: every cause comes from a rung whose control held (and, for a second-stage \
                cause, whose machine code reproduces the slower side's)"
            .into();
    }
    let super::Verdict::Explained(causes) = &t.verdict else {
        return "no: the verdict names no cause proven by a rung and its control".into();
    };
    let (open, proven): (Vec<&Cause>, Vec<&Cause>) = causes
        .iter()
        .map(|(c, _)| c)
        .partition(|c| matches!(c, Cause::Runtime | Cause::Registers { .. }));
    let open: Vec<String> = open
        .iter()
        .map(|c| match c {
            Cause::Runtime => "the runtime part, which no runtime rung closes".to_string(),
            c => format!(
                "the {} part, which its machine code does not confirm",
                c.slug()
            ),
        })
        .collect();
    if open.is_empty() {
        // Only before `verify::annotate` has held the causes against the machine code.
        return "no: not yet held against the machine code".into();
    }
    let mut text = format!("no: not proven: {}", open.join("; "));
    if !proven.is_empty() {
        let proven: Vec<String> = proven.iter().map(|c| c.slug()).collect();
        text += &format!(
            "; proven by a rung whose control held: the {} part",
            proven.join(", ")
        );
    }
    text
}

/// The facts beside a target's verdict, each where it has one.
fn target_facts(md: &mut String, t: &TargetExplanation, code: &CodeFacts, launch: &LaunchFacts) {
    fact(md, "The fix offered", t.fix.as_ref());
    fact(md, "Replayed as a plain program", t.replay.as_ref());
    let machine_code = t.machine_code.as_deref().unwrap_or(
        "not read (`machine-code.csv` says why); the SASS counts below, where present, are \
         the CUDA driver's code for both PTX texts",
    );
    fact(md, "Machine code each runtime runs", Some(machine_code));
    for (rows, language) in [(&code.ptx, "PTX"), (&code.sass, "SASS")] {
        fact(
            md,
            "Code",
            super::code::difference(rows, &t.target, language),
        );
    }
    fact(
        md,
        "Counters",
        super::profile::difference(&code.ncu, &t.target),
    );
    let clocks = super::launch::clocks(launch.rows, &t.target);
    let launch_and_wait = super::launch::sentence(&clocks, &launch.plain);
    fact(md, "Launch and wait", launch_and_wait);
    fact(md, "Work-group and registers", shape_text(&t.shapes));
}

/// One `**label:** text.` paragraph of a target's section, where there is a text.
fn fact(md: &mut String, label: &str, text: Option<impl std::fmt::Display>) {
    if let Some(text) = text {
        let _ = writeln!(md, "**{label}:** {text}.\n");
    }
}

/// The waterfall table of a target's rungs.
fn rungs_table(md: &mut String, rungs: &[RungOutcome]) {
    md.push_str("| step | rung | what it holds | PR [CI] | gap closed | at parity | note |\n");
    md.push_str("|---|---|---|---|---|---|---|\n");
    for r in rungs {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} |",
            r.kind.step().name(),
            r.kind.name(),
            r.kind.describe(),
            r.pr.map_or_else(|| "—".into(), |p| p.to_string()),
            r.closed
                .map_or_else(|| "—".into(), |c| format!("{:.0}%", c * 100.0)),
            if r.closes { "yes" } else { "no" },
            r.void
                .as_ref()
                .map_or_else(|| r.note.clone(), |v| format!("{v}; {}", r.note))
                .replace('|', "/")
        );
    }
}

/// The first pass's run folder inside explain's output folder.
pub const LADDER_DIR: &str = "ladder";
/// The second pass's.
pub const FOLLOW_UP_DIR: &str = "follow-up";
/// The last pass's: each target's NVRTC-PTX-on-OpenCL rung in a folder of its own.
pub const SWAP_DIR: &str = "nvrtc-ptx";

/// The rows of the run folders under `out`: the ladder, the follow-up, and the swap folders
/// that exist.
pub fn read_folder_rows(out: &Path) -> Result<(Vec<PrRow>, Vec<MeasurementRow>), ExportError> {
    let mut swaps: Vec<PathBuf> = std::fs::read_dir(out.join(SWAP_DIR))
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    swaps.sort();
    let (mut prs, mut rows) = (Vec::new(), Vec::new());
    for dir in [out.join(LADDER_DIR), out.join(FOLLOW_UP_DIR)]
        .into_iter()
        .chain(swaps.into_iter().filter(|p| p.is_dir()))
    {
        prs.extend(read_rows_if_file::<PrRow>(&dir.join(crate::rows::PRS_CSV))?);
        rows.extend(read_rows_if_file::<MeasurementRow>(
            &dir.join(crate::rows::MEASUREMENTS_CSV),
        )?);
    }
    Ok((prs, rows))
}

#[cfg(test)]
mod tests {
    use super::super::attribute::{Cause, Interval, RungOutcome, Verdict};
    use super::super::ladder::RungKind;
    use super::*;

    fn rung(kind: RungKind, value: f64) -> RungOutcome {
        RungOutcome {
            kind,
            pr: Some(Interval {
                value,
                lo: value - 0.005,
                hi: value + 0.005,
            }),
            closed: Some(1.0),
            moved: true,
            closes: (0.98..=1.02).contains(&value),
            void: None,
            note: String::new(),
        }
    }

    /// A split verdict as the committed SGEMM runs gave it: the front end's part proven by
    /// the PTX swaps, the runtime's by no rung, and a rung no cause names at parity.
    fn split() -> TargetExplanation {
        TargetExplanation {
            target: "sgemm-blocked".into(),
            study: String::new(),
            family: String::new(),
            variant: String::new(),
            size: String::new(),
            device: String::new(),
            pr: Some(Interval {
                value: 0.9,
                lo: 0.89,
                hi: 0.91,
            }),
            rungs: vec![
                rung(RungKind::NvrtcPtx, 0.93),
                rung(RungKind::OpenclPtx, 0.95),
                rung(RungKind::FirstLaunchAlone, 1.0),
            ],
            verdict: Verdict::Explained(vec![(Cause::FrontEnd, 0.2), (Cause::Runtime, 0.8)]),
            verified: false,
            machine_code: None,
            fix: None,
            replay: None,
            shapes: Vec::new(),
        }
    }

    #[test]
    fn an_unverified_split_verdict_says_which_part_a_rung_proved() {
        let text = verified_text(&split());
        assert!(!text.contains("names no cause"), "{text}");
        assert!(
            text.contains("not proven: the runtime part")
                && text.contains("proven by a rung whose control held: the front-end part"),
            "{text}"
        );
    }

    #[test]
    fn the_headline_credits_only_a_rung_the_verdict_names() {
        let t = split();
        // The first launch alone is at parity, but the verdict names no between-launches
        // cause, and neither swap is at parity: no rung decided it.
        assert!(!headline(&t).contains('→'), "{}", headline(&t));
        let mut named = t.clone();
        named.rungs[0] = rung(RungKind::NvrtcPtx, 0.995);
        assert!(
            headline(&named).contains("→ 0.995 with"),
            "{}",
            headline(&named)
        );
    }
}
