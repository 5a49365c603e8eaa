//! The findings as the templates see them: one view for one suite folder (the suite's own
//! findings) or for several side by side (the repository's `docs/findings.md`).

use serde::Serialize;

use crate::paper::{self, Source};

use super::answer::{answer, metric_cell};
use super::experiments::{Experiment, Measure, Rule, EXPERIMENTS, WHY};
use super::folder::SuiteFolder;
use super::outcome::Outcome;
use super::summary::{summary, Summary};

/// One GPU's column: its name, folder, provenance and one-page answer.
#[derive(Debug, Clone, Default, Serialize)]
pub struct GpuView {
    pub name: String,
    /// The folder as given on the command line (or the suite's own, `.`).
    pub folder: String,
    pub provenance: String,
    /// Steps that did not finish, from suite.csv.
    pub unfinished: Vec<String>,
    pub summary: Summary,
    /// The seeds' conclusions by what this GPU's data says of them.
    pub holds: Vec<String>,
    pub fails: Vec<String>,
    /// Measured, but the seed published a number no rule can hold ours against (an absolute
    /// time on other hardware).
    pub measured: Vec<String>,
    pub cannot: Vec<String>,
    /// Where the seed and this GPU differ: the experiments whose measured explanation
    /// ([`WHY`]) this folder shows, does not show, and cannot answer.
    pub why_shown: Vec<String>,
    pub why_not_shown: Vec<String>,
    pub why_cannot: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CellView {
    pub value: String,
    /// "agrees", "does not agree", "no rule" or "cannot answer".
    pub verdict: String,
    pub causes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CheckView {
    pub what: String,
    pub rule: String,
    pub cells: Vec<CellView>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ExperimentView {
    pub id: String,
    pub title: String,
    pub question: String,
    pub published: Vec<String>,
    pub checks: Vec<CheckView>,
    pub why: Option<WhyView>,
}

/// The measured explanation of a difference from a seed: its claim and checks.
#[derive(Debug, Clone, Serialize)]
pub struct WhyView {
    pub claim: String,
    pub checks: Vec<CheckView>,
}

/// Another benchmark's published run beside each GPU's numbers of the same comparisons.
#[derive(Debug, Clone, Serialize)]
pub struct ReferenceView {
    #[serde(flatten)]
    pub reference: paper::Reference,
    pub rows: Vec<ReferenceRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ReferenceRow {
    pub comparison: String,
    pub published: String,
    /// Per GPU: each API's metric with its CI, or why the folder has none.
    pub cells: Vec<String>,
}

fn reference_view(r: &paper::Reference, folders: &[SuiteFolder]) -> ReferenceView {
    let rows = r
        .figures
        .iter()
        .map(|(comparison, value)| ReferenceRow {
            comparison: comparison.to_string(),
            published: format!("{value:.1}"),
            cells: folders
                .iter()
                .map(|f| {
                    metric_cell(f, r.step, comparison)
                        .unwrap_or_else(|why| format!("cannot answer: {why}"))
                })
                .collect(),
        })
        .collect();
    ReferenceView {
        reference: *r,
        rows,
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct SectionView {
    pub title: String,
    pub experiments: Vec<ExperimentView>,
}

/// A chart file, relative to the page.
#[derive(Debug, Clone, Serialize)]
pub struct ChartView {
    pub src: String,
    pub caption: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct View {
    pub title: String,
    pub gpus: Vec<GpuView>,
    pub charts: Vec<ChartView>,
    pub sections: Vec<SectionView>,
    /// Other benchmarks' published runs beside ours.
    pub references: Vec<ReferenceView>,
    /// The appendix (the suite's per-folder report), when there is one.
    pub appendix: Option<String>,
    pub similar_band: String,
    pub count: usize,
}

fn what(m: &Measure) -> String {
    match *m {
        Measure::Pr { step, comparison } => format!("PR of `{comparison}` (step `{step}`)"),
        Measure::FairRows { step } => format!("every fair PR of step `{step}`"),
        Measure::AllRows { step } => format!("every PR of step `{step}`, fair or not"),
        Measure::Speedup { step, from, to } => {
            format!("time of `{from}` over time of `{to}`, per API (step `{step}`)")
        }
        Measure::PeakShare { step, comparison } => {
            format!("`{comparison}` against the Eq. 2 peak (step `{step}`)")
        }
        Measure::Time {
            step,
            comparison,
            calls,
        } => format!("time of {calls} calls of `{comparison}`, per API (step `{step}`)"),
        Measure::TableV { step } => format!("the FFT's PTX by instruction class (step `{step}`)"),
        Measure::Twins { .. } => "applications with a fair row in any step".into(),
        Measure::MemoryCode { step, comparison } => {
            format!("`{comparison}`'s PTX loads and stores, OpenCL / CUDA (step `{step}`)")
        }
        Measure::GroupCost { step, sweep, up_to } => format!(
            "time per call of `{sweep}` against its work-groups, up to local {up_to}, per API \
             (step `{step}`)"
        ),
    }
}

/// The words of a seed's check, or of an explanation's: its verdict when it agrees, when it
/// does not, and how its rule begins.
type Words = [&'static str; 3];
const SEED: Words = ["agrees", "does not agree", "agrees when"];
const EXPLANATION: Words = ["shown", "not shown", "shown when"];

fn cell(o: &Outcome, words: Words) -> CellView {
    match o {
        Ok(a) => CellView {
            value: a.value.clone(),
            verdict: match a.agrees {
                Some(true) => words[0],
                Some(false) => words[1],
                None => "no rule",
            }
            .into(),
            causes: a
                .causes
                .iter()
                .map(|c| {
                    let how = if c.verified {
                        "explained"
                    } else {
                        "not verified"
                    };
                    format!("`{}` ({how}): {}", c.comparison, c.verdict)
                })
                .collect(),
        },
        Err(why) => CellView {
            value: format!("cannot answer: {why}"),
            verdict: "cannot answer".into(),
            causes: Vec::new(),
        },
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Conclusion {
    /// Every ruled check agrees.
    Holds,
    /// A ruled check does not agree.
    Fails,
    /// Every check answered, none with a rule.
    Measured,
    /// A check could not be answered.
    Cannot,
}

fn conclusion(outcomes: &[(Outcome, Rule)]) -> Conclusion {
    let mut any = false;
    for (o, rule) in outcomes {
        match o {
            Err(_) => return Conclusion::Cannot,
            Ok(a) => match a.agrees {
                Some(false) => return Conclusion::Fails,
                Some(true) => any = true,
                None if *rule == Rule::NoRule => {}
                None => return Conclusion::Cannot,
            },
        }
    }
    if any {
        Conclusion::Holds
    } else {
        Conclusion::Measured
    }
}

fn published(e: &Experiment) -> Vec<String> {
    let quotes =
        paper::quotes(e.id).map(|q| format!("{} ({}): {}", q.source.cite(), q.place, q.text));
    let fills = paper::fill_quotes(e.id).map(|q| {
        let calls = q.seconds.map_or("", |_| " for ten calls");
        format!(
            "{} ({}): {}{calls}",
            Source::FillArticle.cite(),
            q.what,
            q.quoted
        )
    });
    quotes.chain(fills).collect()
}

/// Each folder's answer to each check, with the check's rule.
fn answers(folders: &[SuiteFolder], checks: &[(Measure, Rule)]) -> Vec<Vec<(Outcome, Rule)>> {
    folders
        .iter()
        .map(|f| checks.iter().map(|(m, r)| (answer(f, m, *r), *r)).collect())
        .collect()
}

fn check_views(
    checks: &[(Measure, Rule)],
    per_gpu: &[Vec<(Outcome, Rule)>],
    words: Words,
) -> Vec<CheckView> {
    checks
        .iter()
        .enumerate()
        .map(|(i, (m, r))| CheckView {
            what: what(m),
            rule: r.text().replacen(SEED[2], words[2], 1),
            cells: per_gpu.iter().map(|o| cell(&o[i].0, words)).collect(),
        })
        .collect()
}

/// The view of `folders`, each named by `labels`.
pub fn view(
    folders: &[SuiteFolder],
    labels: &[String],
    charts: Vec<ChartView>,
    appendix: Option<String>,
) -> View {
    let mut gpus: Vec<GpuView> = folders
        .iter()
        .zip(labels)
        .map(|(f, label)| gpu_head(f, label))
        .collect();
    let mut sections: Vec<SectionView> = Vec::new();
    for e in EXPERIMENTS {
        let line = format!("{} (`{}`)", e.title, e.id);
        let per_gpu = answers(folders, e.checks);
        for (g, outcomes) in gpus.iter_mut().zip(&per_gpu) {
            match conclusion(outcomes) {
                Conclusion::Holds => g.holds.push(line.clone()),
                Conclusion::Fails => g.fails.push(line.clone()),
                Conclusion::Measured => g.measured.push(line.clone()),
                Conclusion::Cannot => g.cannot.push(line.clone()),
            }
        }
        let checks = check_views(e.checks, &per_gpu, SEED);
        let why = WHY.iter().find(|w| w.id == e.id).map(|w| {
            let per_gpu = answers(folders, w.checks);
            for (g, outcomes) in gpus.iter_mut().zip(&per_gpu) {
                match conclusion(outcomes) {
                    Conclusion::Holds => g.why_shown.push(line.clone()),
                    Conclusion::Fails => g.why_not_shown.push(line.clone()),
                    Conclusion::Measured | Conclusion::Cannot => g.why_cannot.push(line.clone()),
                }
            }
            WhyView {
                claim: w.claim.into(),
                checks: check_views(w.checks, &per_gpu, EXPLANATION),
            }
        });
        let view = ExperimentView {
            id: e.id.into(),
            title: e.title.into(),
            question: e.question.into(),
            published: published(e),
            checks,
            why,
        };
        // The section's heading: the source's citation without its Markdown emphasis.
        let title = e.source.cite().replace('*', "");
        match sections.last_mut() {
            Some(s) if s.title == title => s.experiments.push(view),
            _ => sections.push(SectionView {
                title,
                experiments: vec![view],
            }),
        }
    }
    let names: Vec<&str> = gpus.iter().map(|g| g.name.as_str()).collect();
    View {
        title: format!(
            "Findings: the seed papers' experiments on {}",
            names.join(" and ")
        ),
        gpus,
        charts,
        sections,
        references: paper::REFERENCES
            .iter()
            .map(|r| reference_view(r, folders))
            .collect(),
        appendix,
        similar_band: format!(
            "[{}, {}]",
            crate::stats::SIMILAR_LO,
            crate::stats::SIMILAR_HI
        ),
        count: EXPERIMENTS.len(),
    }
}

fn gpu_head(f: &SuiteFolder, label: &str) -> GpuView {
    let provenance = match &f.provenance {
        Some(p) => format!(
            "commit `{}`, {} (driver {}), {} (from `{}/provenance.json`)",
            p.commit, p.device, p.driver, p.date, p.step
        ),
        None => "no step of the folder has a provenance.json".into(),
    };
    let unfinished = f
        .steps
        .iter()
        .filter(|s| s.status != crate::rows::StepStatus::Done)
        .map(|s| {
            format!(
                "`{}` {}{}",
                s.step,
                s.status,
                super::around(": ", &s.note, "")
            )
        })
        .collect();
    GpuView {
        name: f.gpu.clone(),
        folder: label.to_string(),
        provenance,
        unfinished,
        summary: summary(f),
        ..GpuView::default()
    }
}
