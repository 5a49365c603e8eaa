//! What a suite folder answers to one check of an experiment: its number, whether it agrees
//! with the seed by the check's rule, explain's causes, or, where it cannot answer, why, in
//! words computed from what the folder holds.

use crate::rows::{Api, MeasurementRow, PrRow, Status, StepStatus};
use crate::stats::{SIMILAR_HI, SIMILAR_LO};

use super::around;
use super::experiments::{Measure, Rule};
use super::folder::SuiteFolder;
use super::inspected;
use super::outcome::{Answer, Cause, Outcome};
use crate::report::ReportError::{self, Findings as Missing};

/// A PR in the findings' form: `0.997 [0.996, 0.998]`.
pub fn pr_text(p: &PrRow) -> String {
    format!("{:.3} [{:.3}, {:.3}]", p.pr, p.pr_ci_lo, p.pr_ci_hi)
}

fn in_band(lo: f64, hi: f64) -> bool {
    lo >= SIMILAR_LO && hi <= SIMILAR_HI
}

pub fn opencl_vs_cuda(p: &PrRow) -> bool {
    p.api_a == Api::OpenCl && p.api_b == Api::Cuda
}

/// The newest OpenCL-against-CUDA PR of `comparison`.
pub fn pr_row<'a>(prs: &'a [PrRow], comparison: &str) -> Option<&'a PrRow> {
    prs.iter()
        .rfind(|p| p.comparison == comparison && opencl_vs_cuda(p))
}

/// The newest row of each comparison among `rows` that `keep` keeps, in first-seen order.
pub fn newest(rows: &[PrRow], keep: impl Fn(&PrRow) -> bool) -> Vec<&PrRow> {
    let mut out: Vec<&PrRow> = Vec::new();
    for p in rows.iter().filter(|p| keep(p)) {
        match out.iter_mut().find(|q| q.comparison == p.comparison) {
            Some(q) => *q = p,
            None => out.push(p),
        }
    }
    out
}

/// Every fair OpenCL-against-CUDA row of a step, newest per comparison.
pub fn fair_rows(prs: &[PrRow]) -> Vec<&PrRow> {
    newest(prs, |p| {
        p.fair && opencl_vs_cuda(p) && p.sweep_param.is_empty()
    })
}

pub fn answer(s: &SuiteFolder, measure: &Measure, rule: Rule) -> Outcome {
    if let Some(why) = measure.step().and_then(|step| step_absent(s, step)) {
        return Err(Missing(why));
    }
    match *measure {
        Measure::Pr { step, comparison } => pr(s, step, comparison, rule),
        Measure::FairRows { step } => rows(s, step, rule, true),
        Measure::AllRows { step } => rows(s, step, rule, false),
        Measure::Speedup { step, from, to } => speedup(s, step, from, to, rule),
        Measure::PeakShare { step, comparison } => peak_share(s, step, comparison, rule),
        Measure::Time {
            step,
            comparison,
            calls,
        } => time(s, step, comparison, calls),
        Measure::TableV { step } => inspected::table_v(s, step, rule),
        Measure::Twins { apps } => Ok(twins(s, apps)),
        Measure::MemoryCode { step, comparison } => inspected::memory_code(s, step, comparison),
        Measure::GroupCost { step, sweep, up_to } => group_cost(s, step, sweep, up_to, rule),
    }
}

/// Each API's metric of one comparison with its CI (`OpenCL 3425.3 [3420.1, 3430.2] GB/s`),
/// or why the folder has none: a cell beside another tool's published figure.
pub fn metric_cell(s: &SuiteFolder, step: &str, comparison: &str) -> Result<String, ReportError> {
    if let Some(why) = step_absent(s, step) {
        return Err(Missing(why));
    }
    Ok(sides(s, step, comparison)?
        .iter()
        .map(|m| {
            format!(
                "{} {:.1} [{:.1}, {:.1}] {}",
                m.api.label(),
                m.metric,
                m.metric_ci_lo,
                m.metric_ci_hi,
                m.metric_unit
            )
        })
        .collect::<Vec<_>>()
        .join(", "))
}

/// Why a step has nothing to read, from `suite.csv` and the folder; `None` when it has.
fn step_absent(s: &SuiteFolder, step: &str) -> Option<String> {
    let Some(row) = s.step(step) else {
        return Some(format!("suite.csv has no step `{step}`"));
    };
    if s.run(step).is_some() || s.dir.join(step).is_dir() {
        return None;
    }
    Some(format!(
        "step `{step}` holds no results: status `{}` in suite.csv{}",
        row.status,
        around(" (", &row.note, ")")
    ))
}

fn comparison_absent(s: &SuiteFolder, step: &str, comparison: &str) -> String {
    let failed = s
        .measurements(step)
        .iter()
        .rfind(|m| m.comparison == comparison && m.status != Status::Ok);
    if let Some(m) = failed {
        return format!(
            "comparison `{comparison}` of step `{step}` failed: {} on {}{}",
            m.status,
            m.api.label(),
            around(" (", m.error.lines().next().unwrap_or(""), ")")
        );
    }
    match s.step(step).map(|r| r.status) {
        Some(StepStatus::Done) | None => {
            format!("step `{step}` finished without comparison `{comparison}`")
        }
        Some(status) => format!(
            "step `{step}` has no comparison `{comparison}`: status `{status}` in suite.csv"
        ),
    }
}

fn causes(s: &SuiteFolder, comparisons: &[&str]) -> Vec<Cause> {
    comparisons
        .iter()
        .flat_map(|c| s.verdicts_on(c))
        .map(|v| Cause {
            comparison: v.target.clone(),
            verdict: v.verdict.clone(),
            verified: v.verified,
        })
        .collect()
}

/// [`causes`] where `step` has PRs to explain: explain's verdicts are of OpenCL-against-CUDA
/// gaps, and a step with none (the CPU step, OpenCL alone) shares their comparison names only.
fn causes_in(s: &SuiteFolder, step: &str, comparisons: &[&str]) -> Vec<Cause> {
    match s.prs(step) {
        [] => Vec::new(),
        _ => causes(s, comparisons),
    }
}

fn pr(s: &SuiteFolder, step: &str, comparison: &str, rule: Rule) -> Result<Answer, ReportError> {
    let p = pr_row(s.prs(step), comparison)
        .ok_or_else(|| Missing(comparison_absent(s, step, comparison)))?;
    let agrees = match rule {
        Rule::Similar => Some(in_band(p.pr_ci_lo, p.pr_ci_hi)),
        Rule::OpenClFaster => Some(p.pr_ci_lo > 1.0),
        Rule::OpenClSlower => Some(p.pr_ci_hi < SIMILAR_LO),
        _ => None,
    };
    Ok(Answer {
        value: format!("PR {}", pr_text(p)),
        agrees,
        causes: causes(s, &[comparison]),
    })
}

fn rows(s: &SuiteFolder, step: &str, rule: Rule, fair_only: bool) -> Result<Answer, ReportError> {
    let rows = newest(s.prs(step), |p| {
        (p.fair || !fair_only) && opencl_vs_cuda(p) && p.sweep_param.is_empty()
    });
    if rows.is_empty() {
        let what = if fair_only { "fair " } else { "" };
        return Err(Missing(format!(
            "step `{step}` has no {what}OpenCL-against-CUDA PR"
        )));
    }
    let n = rows.len();
    let similar = rows.iter().filter(|p| p.similar).count();
    let lo = rows.iter().map(|p| p.pr).fold(f64::INFINITY, f64::min);
    let hi = rows.iter().map(|p| p.pr).fold(f64::NEG_INFINITY, f64::max);
    let agrees = match rule {
        Rule::MostSimilar => Some(2 * similar > n),
        Rule::MostAtLeast(x) => Some(2 * rows.iter().filter(|p| p.pr >= x).count() > n),
        Rule::SomeNotSimilar => Some(similar < n),
        _ => None,
    };
    let gaps: Vec<&str> = rows
        .iter()
        .filter(|p| !p.similar)
        .map(|p| p.comparison.as_str())
        .collect();
    Ok(Answer {
        value: format!("{similar} of {n} similar; PR {lo:.3}–{hi:.3}"),
        agrees,
        causes: causes(s, &gaps),
    })
}

/// The newest verified measurement of `comparison` on each API, in API order; why there is
/// none when neither API has one.
fn sides<'a>(
    s: &'a SuiteFolder,
    step: &str,
    comparison: &str,
) -> Result<Vec<&'a MeasurementRow>, ReportError> {
    let rows = s.measurements(step);
    let sides: Vec<_> = [Api::OpenCl, Api::Cuda]
        .into_iter()
        .filter_map(|api| {
            rows.iter()
                .rfind(|m| m.comparison == comparison && m.api == api && m.status == Status::Ok)
        })
        .collect();
    if sides.is_empty() {
        return Err(Missing(comparison_absent(s, step, comparison)));
    }
    Ok(sides)
}

fn speedup(
    s: &SuiteFolder,
    step: &str,
    from: &str,
    to: &str,
    rule: Rule,
) -> Result<Answer, ReportError> {
    let (a, b) = (sides(s, step, from)?, sides(s, step, to)?);
    let mut parts = Vec::new();
    let mut cis = Vec::new();
    for m in &a {
        let Some(n) = b.iter().find(|n| n.api == m.api) else {
            continue;
        };
        let x = m.median_s / n.median_s;
        let (lo, hi) = (m.ci_lo_s / n.ci_hi_s, m.ci_hi_s / n.ci_lo_s);
        parts.push(format!("{} {x:.2}× [{lo:.2}, {hi:.2}]", m.api.label()));
        cis.push((lo, hi));
    }
    if cis.is_empty() {
        return Err(Missing(format!(
            "step `{step}` measured `{from}` and `{to}` on no common API"
        )));
    }
    let agrees = match rule {
        Rule::Faster => Some(cis.iter().all(|(lo, _)| *lo > 1.0)),
        Rule::NoGain => Some(cis.iter().all(|(lo, hi)| in_band(*lo, *hi))),
        Rule::Below(x) => Some(cis.iter().all(|(_, hi)| *hi < x)),
        _ => None,
    };
    Ok(Answer {
        value: format!("speedup {}", parts.join(", ")),
        agrees,
        causes: causes_in(s, step, &[from, to]),
    })
}

/// Per API, `calls` times the median of one call, with its CI, the size and the device: the
/// form of a seed that published an absolute time.
fn time(s: &SuiteFolder, step: &str, comparison: &str, calls: u32) -> Result<Answer, ReportError> {
    let sides = sides(s, step, comparison)?;
    let n = f64::from(calls);
    let parts: Vec<String> = sides
        .iter()
        .map(|m| {
            format!(
                "{} {:.3} s for {calls} calls [{:.3}, {:.3}] at {} on {}",
                m.api.label(),
                n * m.median_s,
                n * m.ci_lo_s,
                n * m.ci_hi_s,
                m.size,
                crate::terminal::printable(&m.device),
            )
        })
        .collect();
    Ok(Answer {
        value: parts.join("; "),
        agrees: None,
        causes: causes_in(s, step, &[comparison]),
    })
}

fn peak_share(
    s: &SuiteFolder,
    step: &str,
    comparison: &str,
    rule: Rule,
) -> Result<Answer, ReportError> {
    let sides = sides(s, step, comparison)?;
    // One peak for the one GPU: a side that did not record it shares the other's.
    let Some(peak) = sides.iter().find_map(|m| m.peak_gbs) else {
        return Err(Missing(format!(
            "step `{step}` recorded no Eq. 2 peak for `{comparison}`"
        )));
    };
    let shares: Vec<(Api, f64)> = sides
        .iter()
        .map(|m| (m.api, m.metric / m.peak_gbs.unwrap_or(peak)))
        .collect();
    let parts: Vec<String> = shares
        .iter()
        .map(|(api, x)| format!("{} {:.1}%", api.label(), 100.0 * x))
        .collect();
    let agrees = match rule {
        Rule::NearPeak(least) => Some(shares.iter().all(|(_, x)| *x >= least)),
        _ => None,
    };
    Ok(Answer {
        value: format!("{} of {peak:.0} GB/s", parts.join(", ")),
        agrees,
        causes: Vec::new(),
    })
}

/// Per API, time per call against work-groups over `sweep`'s points up to `up_to` work-items,
/// fitted as `c × groups`: c in ns per group, R², and the fastest point of the whole sweep.
fn group_cost(
    s: &SuiteFolder,
    step: &str,
    sweep: &str,
    up_to: u32,
    rule: Rule,
) -> Result<Answer, ReportError> {
    let rows = s.measurements(step);
    let prefix = format!("{sweep}@");
    let mut parts = Vec::new();
    let mut fits = Vec::new();
    for api in [Api::OpenCl, Api::Cuda] {
        let points: Vec<&MeasurementRow> = rows
            .iter()
            .filter(|m| m.api == api && m.status == Status::Ok)
            .filter(|m| m.comparison.starts_with(&prefix) && m.groups > 0)
            .collect();
        let fitted: Vec<(f64, f64)> = points
            .iter()
            .filter(|m| m.local_size <= up_to)
            .map(|m| (f64::from(m.groups), m.median_s))
            .collect();
        if fitted.len() < 3 {
            continue;
        }
        let (c, r2) = crate::stats::fit_through_origin(&fitted);
        let fastest = points
            .iter()
            .min_by(|a, b| a.median_s.total_cmp(&b.median_s))
            .map_or(0, |m| m.local_size);
        parts.push(format!(
            "{} {:.2} ns per group (R² {r2:.4}, {} points); fastest at local {fastest}",
            api.label(),
            c * 1e9,
            fitted.len()
        ));
        fits.push(r2);
    }
    if fits.is_empty() {
        return Err(Missing(format!(
            "step `{step}` has fewer than 3 verified points of `{sweep}` up to local {up_to} on \
             every API"
        )));
    }
    let agrees = match rule {
        Rule::FollowsGroups(least) => Some(fits.iter().all(|r2| *r2 >= least)),
        _ => None,
    };
    Ok(Answer {
        value: format!("local 1 to {up_to}: {}", parts.join("; ")),
        agrees,
        causes: Vec::new(),
    })
}

fn twins(s: &SuiteFolder, apps: &[(&str, &str)]) -> Answer {
    let has_fair = |family: &str| {
        s.step_runs().any(|(_, r)| {
            r.prs()
                .iter()
                .any(|p| p.fair && opencl_vs_cuda(p) && p.family.to_string() == family)
        })
    };
    let missing: Vec<&str> = apps
        .iter()
        .filter(|(_, f)| !has_fair(f))
        .map(|(name, _)| *name)
        .collect();
    Answer {
        value: format!(
            "{} of {} applications with a fair row{}",
            apps.len() - missing.len(),
            apps.len(),
            around("; none for ", &missing.join(", "), "")
        ),
        agrees: Some(missing.is_empty()),
        causes: Vec::new(),
    }
}
