//! From the rungs' PR rows to a verdict. Pure: the rows in, the cause (or "unexplained") out.
//!
//! A gap is a target PR whose CI lies wholly outside [`PARITY`](super::PARITY); a rung
//! *closes* it when its CI touches the band, and *moved* it when its CI and the target's do
//! not overlap. The PTX swap splits the gap in logarithms (the parts multiply back to the PR):
//! with one front end's PTX on both runtimes the PR is the runtimes' (the geometric mean of the
//! two swaps), the target's PR over it the front ends'. A runtime part is named by the runtime
//! rung that closes it; a gap no rung closes is "unexplained", with the PR that remains and the
//! rung that moved it most.

use crate::rows::{MeasurementRow, PrRow};

use super::ladder::{rung_rows, LadderStep, RungKind};
use super::split_rung_id;

pub use super::verdict::{Cause, Interval, RungOutcome, SideShape, TargetExplanation, Verdict};

/// The share of the target's gap `rung` removed, in logarithms.
fn closed_fraction(target: &Interval, rung: &Interval) -> Option<f64> {
    let gap = target.value.ln();
    (gap.abs() > f64::EPSILON && rung.value > 0.0).then(|| 1.0 - rung.value.ln() / gap)
}

/// The last PR of `kind`'s rung of `target` among `prs`.
fn rung_pr(prs: &[PrRow], target: &str, kind: RungKind) -> Option<Interval> {
    let id = super::rung_id(target, &kind.name());
    prs.iter().rfind(|p| p.comparison == id).map(Interval::of)
}

fn registers_note(kind: RungKind, target: &str, rows: &[MeasurementRow]) -> String {
    let regs: Vec<String> = rung_rows(rows, target, kind)
        .filter_map(|r| r.registers.map(|n| format!("{} {n}", r.api.label())))
        .collect();
    if regs.is_empty() {
        String::new()
    } else {
        format!("registers: {}", regs.join(", "))
    }
}

fn failure_note(kind: RungKind, target: &str, rows: &[MeasurementRow]) -> String {
    let failures: Vec<String> = rung_rows(rows, target, kind)
        .filter(|r| r.status != crate::rows::Status::Ok)
        .map(|r| {
            format!(
                "{} {}: {}",
                r.api.label(),
                r.status,
                r.error.lines().next().unwrap_or("")
            )
        })
        .collect();
    if failures.is_empty() {
        "no PR (not run)".into()
    } else {
        failures.join("; ")
    }
}

/// The rungs of `target` found among `prs` and `rows`, in ladder order.
fn outcomes(
    target: &str,
    own: &Interval,
    prs: &[PrRow],
    rows: &[MeasurementRow],
) -> Vec<RungOutcome> {
    let mut kinds: Vec<RungKind> = rows
        .iter()
        .map(|r| r.comparison.as_str())
        .chain(prs.iter().map(|p| p.comparison.as_str()))
        .filter_map(split_rung_id)
        .filter(|(t, _)| *t == target)
        .filter_map(|(_, rung)| RungKind::parse(rung))
        .collect();
    kinds.sort_by_key(|k| (k.step(), k.name()));
    kinds.dedup();
    let mut outcomes: Vec<RungOutcome> = kinds
        .into_iter()
        .map(|kind| {
            let pr = rung_pr(prs, target, kind);
            let note = match pr {
                Some(_) => registers_note(kind, target, rows),
                None => failure_note(kind, target, rows),
            };
            RungOutcome {
                kind,
                pr,
                closed: pr.and_then(|p| closed_fraction(own, &p)),
                moved: pr.is_some_and(|p| p.apart_from(own)),
                closes: pr.is_some_and(|p| p.at_parity()),
                void: kind.void_by_design().map(str::to_string),
                note,
            }
        })
        .collect();
    mark_void(&mut outcomes, target, rows);
    outcomes
}

/// Marks each register rung void whose control ([`RungKind::CapControl`]) moved the PR from the
/// `opencl-ptx` rung's or the register count: the cap's path changes the code by itself.
pub fn mark_void(outcomes: &mut [RungOutcome], target: &str, rows: &[MeasurementRow]) {
    let reference = find(outcomes, RungKind::OpenclPtx).and_then(|r| r.pr);
    let controls: Vec<(RungKind, Option<Interval>)> = outcomes
        .iter()
        .filter(|r| matches!(r.kind, RungKind::CapControl { .. }))
        .map(|r| (r.kind, r.pr))
        .collect();
    for o in outcomes.iter_mut() {
        let RungKind::RegistersHeld { held, .. } = o.kind else {
            continue;
        };
        let control = controls
            .iter()
            .find(|(k, _)| matches!(k, RungKind::CapControl { held: h, .. } if *h == held));
        o.void = match (control, reference) {
            (None, _) | (Some((_, None)), _) => {
                Some("void: its control (the same PTX and path, no lower cap) has no PR".into())
            }
            (_, None) => Some("void: the opencl-ptx rung it is read against has no PR".into()),
            (Some((kind, Some(c))), Some(r)) => control_fault(*kind, c, &r, target, rows),
        };
    }
}

fn control_fault(
    control: RungKind,
    pr: &Interval,
    reference: &Interval,
    target: &str,
    rows: &[MeasurementRow],
) -> Option<String> {
    let RungKind::CapControl { registers, held } = control else {
        return None;
    };
    if pr.apart_from(reference) {
        return Some(format!(
            "void: its control moved the PR from {:.3} (opencl-ptx) to {:.3}: the cap's path \
             changes the code by itself",
            reference.value, pr.value
        ));
    }
    let used = rung_rows(rows, target, control).find(|r| r.api == held);
    match used.and_then(|r| r.registers) {
        Some(n) if n != registers => Some(format!(
            "void: its control's cap at {registers} registers gave {n}: the cap's path changes \
             the code by itself"
        )),
        _ => None,
    }
}

fn find(rungs: &[RungOutcome], kind: RungKind) -> Option<&RungOutcome> {
    rungs.iter().find(|r| r.kind == kind && r.pr.is_some())
}

/// The cause a runtime or compiler-step rung names when it closes the gap.
pub(super) fn cause_of(kind: RungKind) -> Option<Cause> {
    Some(match kind {
        RungKind::RegistersHeld { registers, held } => Cause::Registers { registers, held },
        RungKind::Carveout(p) => Cause::Carveout(p),
        RungKind::DeviceTimer => Cause::LaunchAndWait,
        RungKind::FirstLaunchAlone => Cause::BetweenLaunches,
        k if k.step() == LadderStep::CompilerStep => Cause::CompilerStep(k),
        _ => return None,
    })
}

/// The cause of the valid closing rung nearest parity among the compiler steps (`compiler`)
/// or among the runtime rungs; void rungs name none.
fn closing_cause(rungs: &[RungOutcome], compiler: bool) -> Option<Cause> {
    rungs
        .iter()
        .filter(|r| r.closes_validly() && (r.kind.step() == LadderStep::CompilerStep) == compiler)
        .filter_map(|r| Some((r.pr?.value.ln().abs(), cause_of(r.kind)?)))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// The smallest share a cause needs to be named beside another.
const MIN_SHARE: f64 = 0.15;

pub fn verdict(own: &Interval, rungs: &[RungOutcome]) -> Verdict {
    if own.at_parity() {
        return if own.is_narrow() {
            Verdict::NoGap
        } else {
            Verdict::Inconclusive(*own)
        };
    }
    let swaps: Vec<Interval> = [RungKind::NvrtcPtx, RungKind::OpenclPtx]
        .into_iter()
        .filter_map(|k| find(rungs, k).and_then(|r| r.pr))
        .collect();
    let runtime = match swaps.as_slice() {
        [one] => Some(*one),
        [n, o] => Some(n.geometric_mean(o)),
        _ => None,
    };
    if let Some(runtime) = runtime {
        if swaps.iter().all(Interval::at_parity) {
            return Verdict::Explained(vec![(Cause::FrontEnd, 1.0)]);
        }
        let front_share = closed_fraction(own, &runtime)
            .unwrap_or(0.0)
            .clamp(0.0, 1.0);
        if front_share >= 1.0 - MIN_SHARE {
            return Verdict::Explained(vec![(Cause::FrontEnd, 1.0)]);
        }
        if front_share >= MIN_SHARE {
            let runtime_part = closing_cause(rungs, false).unwrap_or(Cause::Runtime);
            return Verdict::Explained(vec![
                (Cause::FrontEnd, front_share),
                (runtime_part, 1.0 - front_share),
            ]);
        }
    }
    // A gap wholly in the runtime (or with no swap).
    if let Some(cause) = closing_cause(rungs, false).or_else(|| closing_cause(rungs, true)) {
        return Verdict::Explained(vec![(cause, 1.0)]);
    }
    let largest = rungs
        .iter()
        .filter(|r| r.kind != RungKind::Own && r.void.is_none())
        .filter(|r| !matches!(r.kind, RungKind::CapControl { .. } | RungKind::Alternative))
        .filter_map(|r| Some((r.kind, r.pr?.value, r.closed?)))
        .max_by(|a, b| a.2.total_cmp(&b.2))
        .filter(|(_, _, closed)| *closed > 0.0)
        .map(|(k, pr, _)| (k, pr));
    Verdict::Unexplained {
        residual: own.value,
        largest,
    }
}

/// Every target found among `prs` and `rows` (its `own` rung names it), explained.
pub fn explain_all(prs: &[PrRow], rows: &[MeasurementRow]) -> Vec<TargetExplanation> {
    let mut seen = std::collections::HashSet::new();
    rows.iter()
        .filter_map(|r| split_rung_id(&r.comparison))
        .filter(|(t, rung)| *rung == RungKind::Own.name() && seen.insert(*t))
        .map(|(t, _)| explain_target(t, prs, rows))
        .collect()
}

/// The explanation of a gap no rung was run on: its PR row, for the machine code alone.
pub fn code_only(row: &PrRow) -> TargetExplanation {
    TargetExplanation {
        target: row.comparison.clone(),
        study: row.study.clone(),
        family: row.family.name().to_string(),
        variant: row.variant.clone(),
        size: row.size.clone(),
        device: row.device_b.clone(),
        pr: Some(Interval::of(row)),
        verdict: Verdict::CodeOnly,
        ..TargetExplanation::default()
    }
}

pub fn explain_target(target: &str, prs: &[PrRow], rows: &[MeasurementRow]) -> TargetExplanation {
    let own_row = rung_rows(rows, target, RungKind::Own).next();
    let pr = rung_pr(prs, target, RungKind::Own);
    let (verdict, rungs) = match pr {
        Some(own) => {
            let rungs = outcomes(target, &own, prs, rows);
            (verdict(&own, &rungs), rungs)
        }
        None => {
            let why = failure_note(RungKind::Own, target, rows);
            (Verdict::NotMeasured(why), Vec::new())
        }
    };
    let shapes = rung_rows(rows, target, RungKind::Own)
        .filter(|r| r.status == crate::rows::Status::Ok)
        .map(SideShape::of)
        .collect();
    let field = |f: fn(&MeasurementRow) -> String| own_row.map(f).unwrap_or_default();
    TargetExplanation {
        target: target.to_string(),
        study: field(|r| r.study.clone()),
        family: field(|r| r.family.name().to_string()),
        variant: field(|r| r.variant.clone()),
        size: field(|r| r.size.clone()),
        device: field(|r| r.device.clone()),
        pr,
        rungs,
        verdict,
        fix: fix_sentence(target, pr, prs, rows),
        shapes,
        ..TargetExplanation::default()
    }
}

/// Each side's speed in `kind`'s rung of `target`, as "OpenCL 31.4, CUDA 42.8 GFLOP/s".
fn speeds(rows: &[MeasurementRow], target: &str, kind: RungKind) -> Option<String> {
    let sides: Vec<&MeasurementRow> = rung_rows(rows, target, kind)
        .filter(|r| r.status == crate::rows::Status::Ok)
        .collect();
    let unit = sides.first()?.metric_unit.unit();
    let each: Vec<String> = sides
        .iter()
        .map(|r| format!("{} {:.4}", r.api.label(), r.metric))
        .collect();
    Some(format!("{} {unit}", each.join(", ")))
}

/// What the family's declared alternative gives, measured on both sides, beside the target.
fn fix_sentence(
    target: &str,
    own: Option<Interval>,
    prs: &[PrRow],
    rows: &[MeasurementRow],
) -> Option<String> {
    let row = rung_rows(rows, target, RungKind::Alternative).next()?;
    let Some(pr) = rung_pr(prs, target, RungKind::Alternative) else {
        return Some(format!(
            "the alternative `{}` did not run on both sides: {}",
            row.variant,
            failure_note(RungKind::Alternative, target, rows)
        ));
    };
    let before = own.map_or_else(String::new, |o| format!(" (the target: {:.3})", o.value));
    Some(format!(
        "the family's alternative `{}` on both sides: PR {pr}{before}; {} (the target: {})",
        row.variant,
        speeds(rows, target, RungKind::Alternative).unwrap_or_default(),
        speeds(rows, target, RungKind::Own).unwrap_or_default(),
    ))
}
