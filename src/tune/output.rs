//! What a tuning run writes: `evaluations.csv`, `answer.md` (the answer and the strategy
//! table), `tuned.toml` (a study that `clvscu run --study` re-measures as an ordinary
//! comparison) and `provenance.json`.

use std::fmt::Write as _;
use std::path::Path;

use super::provenance::PROVENANCE_FILE;
use super::run::Evaluation;
use super::space::Config;
use super::{TuneError, TuneReport};
use crate::export::csv::write_rows;
use crate::export::json::{to_json_pretty, Provenance};
use crate::export::write_atomic;
use crate::plot::tune_convergence::Line;
use crate::rows::{Api, EvaluationRow, EVALUATIONS_CSV};
use crate::session::provenance::summary_line;

fn write_error(path: &Path, e: impl std::fmt::Display) -> TuneError {
    TuneError::Write {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

fn write(path: &Path, bytes: impl AsRef<[u8]>) -> Result<(), TuneError> {
    write_atomic(path, bytes.as_ref()).map_err(|e| write_error(path, e))
}

pub fn evaluation_rows(evals: &[Evaluation], unit: &str) -> Vec<EvaluationRow> {
    evals
        .iter()
        .map(|e| {
            let times = e.outcome.times().unwrap_or(&[]);
            let c = &e.config;
            let unroll: Vec<String> = c.unroll.iter().map(|(p, f)| format!("{p}={f}")).collect();
            EvaluationRow {
                strategy: e.strategy,
                api: e.api,
                n: e.n,
                point: e.point,
                local: c.local,
                groups: c.groups,
                unroll: unroll.join(";"),
                index: c.index.to_string(),
                knobs: c.knobs_text(),
                status: e.outcome.status().to_string(),
                cached: e.cached,
                reps: times.len(),
                median_s: crate::stats::median(times),
                metric: e.score,
                unit: unit.to_string(),
                message: e.outcome.message().to_string(),
            }
        })
        .collect()
}

/// `answer.md`; with `provenance` it says under its title where it came from, so the file
/// still says so when copied away from `provenance.json`.
pub fn answer_markdown(
    report: &TuneReport,
    title: &str,
    provenance: Option<&Provenance>,
) -> String {
    let from = provenance.map_or(String::new(), |p| {
        format!(
            "Provenance: {} (details in {PROVENANCE_FILE}).\n\n",
            summary_line(p)
        )
    });
    let unit = report.space.def.family.metric().unit();
    let mut s = format!("# Tuning {title}\n\n{from}");
    let invalid = report.space.invalid.iter().map(|(k, v)| format!("{v} {k}"));
    let invalid = invalid.collect::<Vec<_>>().join(", ");
    let invalid = if invalid.is_empty() {
        invalid
    } else {
        format!(": {invalid}")
    };
    let _ = writeln!(
        s,
        "Space: {} valid configurations at size {}, {} invalid (not launched{invalid}).\n",
        report.space.len(),
        report.space.size,
        report.space.invalid_count(),
    );
    s.push_str("| API | best configuration | metric | 95% CI | unit |\n|---|---|---|---|---|\n");
    for b in &report.bests {
        let _ = writeln!(
            s,
            "| {} | `{}` | {:.2} | [{:.2}, {:.2}] | {unit} |",
            b.api.label(),
            b.config.text(),
            b.metric,
            b.ci.0,
            b.ci.1
        );
    }
    if let Some(a) = &report.answer {
        s.push('\n');
        for (what, ratio) in [
            ("best-vs-best PR (OpenCL / CUDA)", &a.best_vs_best),
            ("same-config PR at OpenCL's best", &a.same_at_opencl_best),
            ("same-config PR at CUDA's best", &a.same_at_cuda_best),
        ] {
            let text = match ratio {
                Some(r) => format!("{:.3} [{:.3}, {:.3}]", r.value, r.ci_lo, r.ci_hi),
                None => "n/a (failed on one side)".into(),
            };
            let _ = writeln!(s, "- {what}: {text}");
        }
        if a.differing.is_empty() {
            s.push_str("- the two bests are the same configuration\n");
        } else {
            let d: Vec<String> = a
                .differing
                .iter()
                .map(|(k, cl, cu)| format!("{k} (OpenCL {cl}, CUDA {cu})"))
                .collect();
            let _ = writeln!(s, "- the bests differ in: {}", d.join("; "));
        }
    }
    let _ = write!(
        s,
        "\n## Strategies\n\n| strategy | API | evaluations asked | measured here | best found \
         ({unit}) | exhaustive best | ratio | asked to within 2% | share of space \
         |\n|---|---|---|---|---|---|---|---|---|\n"
    );
    let num = |v: Option<f64>| v.map_or("n/a".into(), |v| format!("{v:.2}"));
    for l in &report.lines {
        let share = l.to_within.map_or("n/a".into(), |n| {
            format!("{:.1}%", 100.0 * n as f64 / l.space.max(1) as f64)
        });
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            l.strategy,
            l.api.label(),
            l.asked,
            l.measured,
            num(l.best_found),
            num(l.exhaustive_best),
            l.ratio().map_or("n/a".into(), |r| format!("{r:.4}")),
            l.to_within.map_or("n/a".into(), |n| n.to_string()),
            share
        );
    }
    s
}

pub(super) fn side_toml(c: &Config) -> String {
    let unroll: Vec<String> = c.unroll.iter().map(|(p, f)| format!("{p} = {f}")).collect();
    let mut s = format!(
        "local = {}\ngroups = {}\nunroll = {{ {} }}\nindex = \"u{}\"\n",
        c.local,
        c.groups,
        unroll.join(", "),
        c.index
    );
    if let Some(v) = c.variant {
        let _ = writeln!(s, "variant = \"{v}\"");
    }
    if !c.defines.is_empty() {
        let d: Vec<String> = c
            .defines
            .iter()
            .map(|(k, v)| format!("{k} = \"{v}\""))
            .collect();
        let _ = writeln!(s, "defines = {{ {} }}", d.join(", "));
    }
    if c.max_registers > 0 {
        let _ = writeln!(s, "jit = {{ max_registers = {} }}", c.max_registers);
    }
    s
}

/// The best-so-far lines of every (API, strategy) in `evals`.
fn lines_of(evals: &[Evaluation]) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::new();
    for e in evals {
        let i = out
            .iter()
            .position(|l| l.api == e.api && l.strategy == e.strategy)
            .unwrap_or_else(|| {
                out.push(Line {
                    api: e.api,
                    strategy: e.strategy,
                    points: Vec::new(),
                });
                out.len() - 1
            });
        let last = out[i].points.last().map(|p| p.1);
        if let Some(b) = [last, e.score].into_iter().flatten().reduce(f64::max) {
            out[i].points.push((e.n as f64, b));
        }
    }
    out
}

/// The distinct configurations' metrics of every API in `evals`, best first.
fn series_of(evals: &[Evaluation]) -> Vec<(Api, Vec<f64>, usize)> {
    let mut out = Vec::new();
    for api in [Api::OpenCl, Api::Cuda] {
        let mut seen = std::collections::HashSet::new();
        let distinct: Vec<&Evaluation> = evals
            .iter()
            .filter(|e| e.api == api && seen.insert(e.point))
            .collect();
        let mut scores: Vec<f64> = distinct.iter().filter_map(|e| e.score).collect();
        let failed = distinct.len() - scores.len();
        if !scores.is_empty() || failed > 0 {
            scores.sort_by(|a, b| b.total_cmp(a));
            out.push((api, scores, failed));
        }
    }
    out
}

/// `tuned.toml`'s name, description and defaults.
fn tuned_header(report: &TuneReport, what: &str) -> String {
    let def = report.space.def;
    let (f, t, v) = (def.family.name(), def.name, def.variant);
    let (size, units) = (report.space.size, report.space.compute_units);
    format!(
        "# Written by `clvscu tune {f}/{t}`: {what} on {units} compute units.\n\
         # Re-measure with `clvscu run --study THIS_FILE`.\n\
         name = \"tuned-{f}-{t}\"\n\
         description = \"Tuned {f}/{t}: {what}\"\n\n[defaults]\nfamily = \"{f}\"\n\
         variant = \"{v}\"\nsize = \"{size}\"\n\
         warmup = 3\nreps = 20\nmin_time = 0.2\ntimer = \"device-event\"\n\n"
    )
}

/// The `tuned` study: with an answer, best-vs-best (each side its own best: unfair in the
/// configuration step by construction, and labelled so by the run) and same-config at each
/// side's best; with one API tuned, its best on both sides, for `run` to re-measure (against
/// itself, or against the other API where there is one).
fn tuned_study(report: &TuneReport) -> Option<String> {
    let v = report.space.def.variant;
    let Some(answer) = &report.answer else {
        let [best] = report.bests.as_slice() else {
            return None;
        };
        let api = best.api.label();
        let what = format!("the best configuration of {api} (only {api} was tuned)");
        let mut s = tuned_header(report, &what);
        let (who, side) = (api.to_lowercase(), side_toml(&best.config));
        let _ = write!(s, "[[comparison]]\nname = \"{who}-best/{v}\"\n{side}");
        return Some(s);
    };
    let (cl, cu) = (&answer.opencl.config, &answer.cuda.config);
    let what = "best against best, and the same configuration at each side's best";
    let mut s = tuned_header(report, what);
    let _ = write!(
        s,
        "[[comparison]]\nname = \"best-vs-best/{v}\"\n[comparison.opencl]\n{}[comparison.cuda]\n{}\n",
        side_toml(cl),
        side_toml(cu),
    );
    for (who, c) in [("opencl", cl), ("cuda", cu)] {
        let side = side_toml(c);
        let _ = write!(
            s,
            "[[comparison]]\nname = \"same-config@{who}-best/{v}\"\n{side}\n"
        );
    }
    Some(s)
}

/// Writes every file of the module docs into `out`.
pub fn write_all(
    report: &TuneReport,
    out: &Path,
    title: &str,
    provenance: &Provenance,
) -> Result<(), TuneError> {
    let path = out.join(PROVENANCE_FILE);
    write(
        &path,
        to_json_pretty(provenance).map_err(|e| write_error(&path, e))?,
    )?;
    let unit = report.space.def.family.metric().unit();
    let path = out.join(EVALUATIONS_CSV);
    write_rows(&path, &evaluation_rows(&report.evaluations, unit))
        .map_err(|e| write_error(&path, e))?;
    write(
        &out.join("answer.md"),
        answer_markdown(report, title, Some(provenance)),
    )?;
    match tuned_study(report) {
        Some(study) => write(&out.join("tuned.toml"), study),
        None => Ok(()),
    }
}

/// The convergence and distribution charts; `subtitle` names the devices tuned, as every
/// chart's does.
pub fn draw_charts(
    report: &TuneReport,
    out: &Path,
    title: &str,
    subtitle: &str,
) -> Result<Vec<std::path::PathBuf>, TuneError> {
    use crate::plot::{tune_convergence as conv, tune_distribution as dist, write_figure, Format};
    let unit = report.space.def.family.metric().unit().to_string();
    let failed = |e: crate::plot::PlotError| write_error(e.path(), &e);
    let convergence = conv::Convergence {
        title: format!("{title}: best so far"),
        subtitle: subtitle.to_string(),
        unit: unit.clone(),
        lines: lines_of(&report.evaluations),
    };
    let distribution = dist::Distribution {
        title: format!("{title}: every evaluated configuration"),
        subtitle: subtitle.to_string(),
        unit,
        series: series_of(&report.evaluations),
    };
    let all = &Format::ALL;
    let mut files = write_figure(&convergence, out, "tune-convergence", all).map_err(failed)?;
    files.extend(write_figure(&distribution, out, "tune-distribution", all).map_err(failed)?);
    Ok(files)
}
