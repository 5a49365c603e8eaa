//! The terminal's tables (families, end of a run), in Markdown's layout to paste into notes.

use comfy_table::{
    presets::ASCII_MARKDOWN, CellAlignment, ColumnConstraint, ContentArrangement, Table,
};

use clvscu::backend::DeviceInfo;
use clvscu::export::markdown::format_sig;
use clvscu::families::{self, FamilyId, GroupRule, Variant};
use clvscu::rows::{MeasurementRow, PrRow, Status};
use clvscu::stats::{SIMILAR_HI, SIMILAR_LO};
use clvscu::terminal::printable;

/// Significant digits of a metric and of a ratio.
const VALUE_DIGITS: usize = 4;
const RATIO_DIGITS: usize = 3;

/// Below this many timed repetitions a wide CI is put down to their number.
const FEW_REPS: u32 = 10;
/// A side with more than this share of outliers among its repetitions is called noisy.
const MANY_OUTLIERS: f64 = 0.1;
/// A CI whose half-width is more than this share of the PR is too wide to conclude from.
const WIDE_CI: f64 = 0.1;

/// A table with `header`, the columns at `right` aligned right (numbers); on a terminal it keeps
/// to the terminal's width by wrapping its words, never its numbers.
pub(crate) fn table(header: &[&str], right: &[usize]) -> Table {
    let mut t = Table::new();
    t.load_style(ASCII_MARKDOWN).set_header(header.to_vec());
    if let Some(width) = clvscu::terminal::width() {
        t.set_content_arrangement(ContentArrangement::Dynamic)
            .set_width(u16::try_from(width).unwrap_or(u16::MAX));
    }
    for &i in right {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
            c.set_constraint(ColumnConstraint::ContentWidth);
        }
    }
    t
}

/// The unit every row shares, if one: it then goes in the header, not in each cell.
fn shared_unit<'r>(mut units: impl Iterator<Item = &'r str>) -> Option<&'r str> {
    let first = units.next()?;
    units.all(|u| u == first).then_some(first)
}

fn interval(lo: f64, hi: f64, digits: usize) -> String {
    format!("[{}, {}]", format_sig(lo, digits), format_sig(hi, digits))
}

fn pr_with_ci(pr: f64, lo: f64, hi: f64) -> String {
    format!(
        "{} {}",
        format_sig(pr, RATIO_DIGITS),
        interval(lo, hi, RATIO_DIGITS)
    )
}

/// A metric with its unit, or without where the header carries it.
fn metric_cell(value: f64, unit: &str, shared: bool) -> String {
    if shared {
        format_sig(value, VALUE_DIGITS)
    } else {
        format!("{} {unit}", format_sig(value, VALUE_DIGITS))
    }
}

/// `clvscu families`: one table per family, a row per variant, then what the marks mean.
pub fn families() -> String {
    let mut out = String::new();
    for &family in FamilyId::all() {
        let variants = families::variants_of(family, true);
        if variants.is_empty() {
            continue;
        }
        out += &format!(
            "{} ({}; kernels/{}.cl and .cu)\n",
            family.name(),
            family.metric().unit(),
            family.file()
        );
        let mut t = table(
            &[
                "variant",
                "mark",
                "kernel",
                "work-group size",
                "work-groups by default",
                "unroll points",
                "about",
            ],
            &[],
        );
        let dash = |s: String| if s.is_empty() { "-".into() } else { s };
        for v in variants {
            t.add_row(vec![
                v.name.to_string(),
                mark(v).to_string(),
                // No kernel of its own: the API's copy command, or a rule's pick (the about says).
                dash(v.kernel.to_string()),
                local_range(v),
                group_rule(v.default_groups),
                dash(v.unroll_points.join(", ")),
                v.about.to_string(),
            ]);
        }
        out += &format!("{t}\n\n");
    }
    out += "marks: experiment = one step of a multi-launch kernel, run only when a study names \
            it (never by all_variants); unsafe = the racy form as printed, run only when named.\n";
    out
}

fn mark(v: &Variant) -> &'static str {
    match (v.safe, v.experiment) {
        (false, _) => "unsafe",
        (true, true) => "experiment",
        (true, false) => "",
    }
}

/// The work-group sizes a variant accepts: one size, a range, "any".
fn local_range(v: &Variant) -> String {
    if v.min_local == v.max_local {
        return v.min_local.to_string();
    }
    let hi = if v.max_local == u32::MAX {
        "device limit".to_string()
    } else {
        v.max_local.to_string()
    };
    match (v.pow2_local, v.min_local) {
        (false, 1) if v.max_local == u32::MAX => "any".into(),
        (true, lo) => format!("{lo}..{hi}, powers of two"),
        (false, lo) => format!("{lo}..{hi}"),
    }
}

fn group_rule(rule: GroupRule) -> String {
    match rule {
        GroupRule::Cover { per_item: 1 } => "one work-item per element".into(),
        GroupRule::Cover { per_item } => format!("one work-item per {per_item} elements"),
        GroupRule::Fixed(n) => format!("{n}"),
        GroupRule::PerComputeUnit(k) => format!("{k} per compute unit"),
        GroupRule::Tiles => "one per output tile".into(),
        GroupRule::Columns => "one work-item per (x, y) column".into(),
        GroupRule::Cover2D => "one work-item per element, 2-D".into(),
        GroupRule::Grid => "one work-item per point of the launch grid".into(),
    }
}

/// The tables printed at the end of a run: the measurements, the PRs, then the [`verdicts`].
pub fn end_of_run(
    measurements: &[MeasurementRow],
    prs: &[PrRow],
    sides: &[&DeviceInfo],
    show_experiments: bool,
) -> String {
    // One-step experiments (internal passes of a larger kernel) only with `show_experiments`.
    let shown = |family, variant: &str| {
        show_experiments || !families::find_variant(family, variant).is_ok_and(|v| v.experiment)
    };
    let ms: Vec<&MeasurementRow> = measurements
        .iter()
        .filter(|m| shown(m.family, &m.variant))
        .collect();
    let ps: Vec<&PrRow> = prs.iter().filter(|p| shown(p.family, &p.variant)).collect();
    let same_api = sides.len() == 2 && sides[0].api == sides[1].api;
    let mut out = format!(
        "\n## Measurements\n\n{}\n",
        measurement_table(&ms, same_api)
    );
    if let Some(first) = ps.first() {
        let (a, b) = side_names(first);
        let unit = shared_unit(ps.iter().map(|p| p.metric_unit.unit()))
            .map(|u| format!(", perf in {u}"))
            .unwrap_or_default();
        out += &format!(
            "\n## Performance Ratio (PR = perf({a}) / perf({b}){unit})\n\n{}\n\n",
            pr_table(&ps)
        );
        out += &verdicts(&ps, &ms, sides);
    }
    let hidden = measurements.len() - ms.len();
    if hidden > 0 {
        out += &format!(
            "\n{hidden} measurement(s) of one-step experiments not shown (--show-experiments \
             shows them; the files hold them)\n"
        );
    }
    out
}

/// "ran similarly" once for all that did, a sentence for each other, a warning per too wide CI.
fn verdicts(ps: &[&PrRow], ms: &[&MeasurementRow], sides: &[&DeviceInfo]) -> String {
    let similar = ps.iter().filter(|p| p.similar).count();
    let (a, b) = side_names(ps[0]);
    let mut out = format!(
        "{a} and {b} ran similarly in {similar} of {} comparisons: the PR's whole 95% CI lies \
         in the similar band [{SIMILAR_LO}, {SIMILAR_HI}].\n",
        ps.len()
    );
    for p in ps {
        if !p.similar {
            out += &format!("{}: {}\n", printable(&p.comparison), verdict(p));
        }
        if let Some(why) = too_wide(p) {
            let mine: Vec<&MeasurementRow> = ms
                .iter()
                .copied()
                .filter(|m| m.comparison == p.comparison)
                .collect();
            out += &format!(
                "  warning: {}: {why}; {}\n",
                printable(&p.comparison),
                causes(&mine, sides)
            );
        }
    }
    out
}

fn measurement_table(rows: &[&MeasurementRow], same_api: bool) -> Table {
    let unit = shared_unit(rows.iter().map(|m| m.metric_unit.unit()));
    let median = unit.map_or("median".to_string(), |u| format!("median ({u})"));
    // Failures are listed after the run: a status column only where one is not ok.
    let with_status = rows.iter().any(|m| m.status != Status::Ok);
    let mut header = vec![
        "comparison",
        "side",
        &median,
        "95% CI",
        "MAD",
        "N",
        "outliers",
    ];
    if with_status {
        header.push("status");
    }
    let mut t = table(&header, &[2, 3, 4, 5, 6]);
    let mut previous: Option<&str> = None;
    for m in rows {
        // A comparison's rows come side A first: a repeated name is its side B.
        let letter = if previous == Some(m.comparison.as_str()) {
            " B"
        } else {
            " A"
        };
        previous = Some(&m.comparison);
        let side = format!("{}{}", m.api.label(), if same_api { letter } else { "" });
        let ok = m.status == Status::Ok;
        let cells = [
            ok.then(|| metric_cell(m.metric, m.metric_unit.unit(), unit.is_some())),
            ok.then(|| interval(m.metric_ci_lo, m.metric_ci_hi, VALUE_DIGITS)),
            // The MAD of the times, relative: the same share of the metric.
            (ok && m.median_s > 0.0).then(|| format!("±{:.1}%", m.mad_s / m.median_s * 100.0)),
        ];
        let mut row = vec![printable(&m.comparison).into_owned(), side];
        row.extend(cells.map(|c| c.unwrap_or_else(|| "-".into())));
        row.extend([m.reps.to_string(), m.outliers.to_string()]);
        if with_status {
            row.push(m.status.to_string());
        }
        t.add_row(row);
    }
    t
}

/// The two sides of a PR row by API, and by side where both run the same API.
fn side_names(p: &PrRow) -> (String, String) {
    if p.api_a == p.api_b {
        (format!("{} A", p.api_a), format!("{} B", p.api_b))
    } else {
        (p.api_a.to_string(), p.api_b.to_string())
    }
}

fn pr_table(rows: &[&PrRow]) -> Table {
    let (a, b) = side_names(rows[0]);
    let unit = shared_unit(rows.iter().map(|p| p.metric_unit.unit()));
    // The launch shape is on each comparison's progress line and in summary.md.
    let mut t = table(
        &["comparison", &a, &b, "PR [95% CI]", "verdict", "fair"],
        &[1, 2, 3],
    );
    for p in rows {
        t.add_row(vec![
            printable(&p.comparison).into_owned(),
            metric_cell(p.metric_a, p.metric_unit.unit(), unit.is_some()),
            metric_cell(p.metric_b, p.metric_unit.unit(), unit.is_some()),
            pr_with_ci(p.pr, p.pr_ci_lo, p.pr_ci_hi),
            clvscu::stats::verdict_word(p.pr, p.pr_ci_lo, p.pr_ci_hi),
            if p.fair {
                "yes".into()
            } else {
                format!("no: {}", p.differing_steps)
            },
        ]);
    }
    t
}

/// "OpenCL ran 1.08 ± 0.01 times slower than CUDA": the factor and its CI's half-width, with
/// "similar" where the whole CI lies in the similar band.
pub fn verdict(p: &PrRow) -> String {
    let (a, b) = side_names(p);
    let (pr, lo, hi) = (p.pr, p.pr_ci_lo, p.pr_ci_hi);
    if !(pr.is_finite() && lo.is_finite() && hi.is_finite() && lo > 0.0) {
        return format!("no verdict: the PR or its CI is not a number ({pr}, [{lo}, {hi}])");
    }
    let band = format!("[{SIMILAR_LO}, {SIMILAR_HI}]");
    if (SIMILAR_LO..=SIMILAR_HI).contains(&lo) && (SIMILAR_LO..=SIMILAR_HI).contains(&hi) {
        return format!(
            "{a} and {b} ran similarly: PR {} lies in the similar band {band}",
            pr_with_ci(pr, lo, hi)
        );
    }
    // Higher performance is better: PR above 1 means side A is faster by PR, below 1 slower
    // by 1 / PR, whose CI is [1 / hi, 1 / lo].
    let (factor, spread, word) = if lo > 1.0 {
        (pr, (hi - lo) / 2.0, "faster")
    } else if hi < 1.0 {
        (1.0 / pr, (1.0 / lo - 1.0 / hi) / 2.0, "slower")
    } else {
        return format!(
            "no clear difference: PR {} includes 1 but reaches outside the similar band {band}",
            pr_with_ci(pr, lo, hi)
        );
    };
    format!("{a} ran {factor:.2} ± {spread:.2} times {word} than {b}")
}

/// Why a PR's CI is too wide to conclude from: over ±10% of the PR, across an edge of the similar
/// band (cannot tell similar from different), or none (a side timed once has none).
fn too_wide(p: &PrRow) -> Option<String> {
    let (pr, lo, hi) = (p.pr, p.pr_ci_lo, p.pr_ci_hi);
    if lo.is_nan() || hi.is_nan() {
        return Some(
            "the PR has no 95% CI (a side has fewer than 2 samples) to conclude from".into(),
        );
    }
    let ci = format!("the 95% CI {}", interval(lo, hi, RATIO_DIGITS));
    let half = (hi - lo) / 2.0 / pr;
    if !half.is_finite() || half > WIDE_CI {
        return Some(format!(
            "{ci} spans ±{:.0}% of the PR, too wide to conclude",
            half * 100.0
        ));
    }
    let crosses = |edge: f64| lo < edge && edge < hi;
    if crosses(SIMILAR_LO) || crosses(SIMILAR_HI) {
        return Some(format!(
            "{ci} crosses an edge of the similar band [{SIMILAR_LO}, {SIMILAR_HI}], too wide to \
             conclude"
        ));
    }
    None
}

/// What widened a CI, from its comparison's measurements and the run's devices, each cause once.
fn causes(ms: &[&MeasurementRow], sides: &[&DeviceInfo]) -> String {
    let mut found: Vec<String> = Vec::new();
    for m in ms {
        // The run's first line names the devices: the API is enough here.
        let side = m.api.label();
        let mut add = |cause: String| {
            if !found.contains(&cause) {
                found.push(cause);
            }
        };
        // The run goes on past its minimum until the CI decides or its time budget is
        // spent: few repetitions mean the budget (or `max_reps`) ended it.
        if m.reps < FEW_REPS {
            add(format!(
                "only {} repetitions on {side} fit the time budget",
                m.reps
            ));
        }
        if m.reps > 0 && f64::from(m.outliers) > MANY_OUTLIERS * f64::from(m.reps) {
            add(format!(
                "many outliers ({} of {} on {side})",
                m.outliers, m.reps
            ));
        }
        let cpu = sides
            .iter()
            .any(|s| !s.is_gpu && s.api == m.api.label() && s.name == m.device);
        if cpu {
            add("a CPU device, whose timings vary".to_string());
        }
    }
    let cause = if found.is_empty() {
        "cause unknown".to_string()
    } else {
        format!("likely cause: {}", found.join("; "))
    };
    format!("{cause}; a longer --max-time narrows it")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clvscu::rows::Api;

    fn pr(pr: f64, lo: f64, hi: f64) -> PrRow {
        PrRow {
            run_id: "r".into(),
            study: "s".into(),
            comparison: "matvec/listing2".into(),
            device_a: "gpu".into(),
            device_b: "gpu".into(),
            api_a: Api::OpenCl,
            api_b: Api::Cuda,
            family: FamilyId::Matvec,
            variant: "listing2".into(),
            size: "64x40".into(),
            local_size: 64,
            groups: 1,
            metric_unit: FamilyId::Matvec.metric(),
            metric_a: 1.0,
            metric_b: 1.0,
            pr,
            pr_ci_lo: lo,
            pr_ci_hi: hi,
            similar: false,
            similar_tight: false,
            fair: true,
            differing_steps: String::new(),
            timer: String::new(),
            sweep_param: String::new(),
            sweep_value: String::new(),
        }
    }

    #[test]
    fn verdicts_read_like_hyperfine() {
        assert_eq!(
            verdict(&pr(1.5, 1.4, 1.6)),
            "OpenCL ran 1.50 ± 0.10 times faster than CUDA"
        );
        // PR 0.5 [0.4, 0.625]: slower by 2, whose CI is [1.6, 2.5].
        assert_eq!(
            verdict(&pr(0.5, 0.4, 0.625)),
            "OpenCL ran 2.00 ± 0.45 times slower than CUDA"
        );
        assert!(verdict(&pr(1.02, 0.95, 1.08)).contains("ran similarly"));
        assert!(verdict(&pr(1.0, 0.8, 1.3)).contains("no clear difference"));
        // Same API on both sides: the sides are told apart.
        let mut same = pr(1.5, 1.4, 1.6);
        same.api_b = Api::OpenCl;
        assert_eq!(
            verdict(&same),
            "OpenCL A ran 1.50 ± 0.10 times faster than OpenCL B"
        );
    }

    #[test]
    fn a_pr_without_a_ci_is_flagged_as_having_none() {
        let why = too_wide(&pr(1.0, f64::NAN, f64::NAN)).unwrap();
        assert!(why.contains("no 95% CI"), "{why}");
        assert!(!why.contains("spans"), "{why}");
    }

    #[test]
    fn wide_or_band_crossing_cis_are_flagged() {
        assert!(too_wide(&pr(1.5, 1.4, 1.6)).is_none());
        assert!(too_wide(&pr(1.0, 0.98, 1.02)).is_none());
        assert!(too_wide(&pr(1.0, 0.7, 1.3)).unwrap().contains("±30%"));
        assert!(too_wide(&pr(1.1, 1.05, 1.15))
            .unwrap()
            .contains("similar band"));
    }

    /// A measured row of the golden fake run, with `reps` and `outliers`.
    fn measured(reps: u32, outliers: u32) -> MeasurementRow {
        let golden = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/measurements.csv");
        let rows: Vec<MeasurementRow> =
            clvscu::export::csv::read_rows(std::path::Path::new(golden)).unwrap();
        let mut m = rows.into_iter().find(|m| m.status == Status::Ok).unwrap();
        (m.reps, m.outliers) = (reps, outliers);
        m
    }

    #[test]
    fn a_wide_ci_is_put_down_to_its_causes() {
        let gpu = |m: &MeasurementRow, is_gpu| DeviceInfo {
            api: m.api.label().to_string(),
            name: m.device.clone(),
            is_gpu,
            ..Default::default()
        };
        let calm = measured(100, 0);
        assert!(causes(&[&calm], &[&gpu(&calm, true)]).contains("cause unknown"));
        let few = measured(3, 0);
        assert!(causes(&[&few], &[&gpu(&few, true)]).contains("only 3 repetitions on "));
        let noisy = measured(100, 20);
        assert!(causes(&[&noisy], &[&gpu(&noisy, true)]).contains("many outliers (20 of 100"));
        let text = causes(&[&calm], &[&gpu(&calm, false)]);
        assert!(text.contains("a CPU device"), "{text}");
        // Two sides on one CPU device (OpenCL against itself) name each cause once.
        let text = causes(&[&few, &few], &[&gpu(&few, false)]);
        assert_eq!(text.matches("a CPU device").count(), 1, "{text}");
        assert_eq!(text.matches("only 3 repetitions").count(), 1, "{text}");
    }

    #[test]
    fn variant_ranges_and_marks_are_described() {
        let find = |f, n| families::find_variant(f, n).unwrap();
        assert_eq!(mark(find(FamilyId::Matvec, "listing7-unsafe")), "unsafe");
        assert_eq!(mark(find(FamilyId::Matvec, "listing2")), "");
        assert_eq!(local_range(find(FamilyId::Matvec, "listing2")), "any");
        assert_eq!(
            local_range(find(FamilyId::Matvec, "listing7")),
            "64..512, powers of two"
        );
    }
}
