//! The waterfall's bars from explain's rung rows: per target, its PR, then each measured ladder
//! step's effect (the ratio of its rung's PR to the target's, the rung nearest parity), then
//! what remains to parity. `plot::waterfall` draws them.

use crate::plot::waterfall::{Bar, BarKind};
use crate::rows::PrRow;

use super::ladder::{LadderStep, RungKind};
use super::split_rung_id;

/// The bars of every target among `prs` that has its own rung, in first-seen order.
pub fn bars_per_target(prs: &[PrRow]) -> Vec<(String, Vec<Bar>)> {
    let mut targets: Vec<(String, Vec<(RungKind, &PrRow)>)> = Vec::new();
    for row in prs {
        let Some((target, kind)) = split_rung_id(&row.comparison)
            .and_then(|(target, rung)| Some((target, RungKind::parse(rung)?)))
        else {
            continue;
        };
        match targets.iter_mut().find(|(t, _)| t == target) {
            Some((_, rows)) => rows.push((kind, row)),
            None => targets.push((target.to_string(), vec![(kind, row)])),
        }
    }
    targets
        .into_iter()
        .filter_map(|(target, mut rungs)| {
            rungs.sort_by_key(|(k, _)| (k.step(), k.name()));
            Some((target, bars_of(&rungs)?))
        })
        .collect()
}

/// The bars of one target: its PR, one per measured ladder step, the remainder.
fn bars_of(rungs: &[(RungKind, &PrRow)]) -> Option<Vec<Bar>> {
    let own = rungs.iter().find(|(k, _)| *k == RungKind::Own)?.1;
    if !(own.pr.is_finite() && own.pr > 0.0) {
        return None;
    }
    let mut bars = vec![Bar {
        label: format!("target PR ({})", RungKind::Own.describe()),
        from: 0.0,
        to: own.pr,
        kind: BarKind::Target,
        ci: Some((own.pr_ci_lo, own.pr_ci_hi)).filter(|(lo, hi)| lo.is_finite() && hi.is_finite()),
    }];
    let mut level = own.pr;
    for step in rungs.chunk_by(|a, b| a.0.step() == b.0.step()) {
        if step[0].0.step() == LadderStep::Target {
            continue;
        }
        let Some((kind, row)) = nearest_to_parity(step) else {
            continue;
        };
        let next = level * row.pr / own.pr;
        let toward = (row.pr.ln().abs()) < own.pr.ln().abs();
        bars.push(Bar {
            label: format!("{} ({})", kind.name(), kind.describe()),
            from: level,
            to: next,
            kind: if toward {
                BarKind::TowardParity
            } else {
                BarKind::AwayFromParity
            },
            ci: None,
        });
        level = next;
    }
    bars.push(Bar {
        label: "remaining to parity".into(),
        from: level,
        to: 1.0,
        kind: BarKind::Remaining,
        ci: None,
    });
    Some(bars)
}

/// The measured rung of one step whose PR is nearest parity (on a log scale): the step's bar.
fn nearest_to_parity<'r>(step: &[(RungKind, &'r PrRow)]) -> Option<(RungKind, &'r PrRow)> {
    step.iter()
        .filter(|(_, r)| r.pr.is_finite() && r.pr > 0.0)
        .min_by(|a, b| a.1.pr.ln().abs().total_cmp(&b.1.pr.ln().abs()))
        .copied()
}
