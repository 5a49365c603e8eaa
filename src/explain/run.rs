//! Running a ladder: the first pass's rungs as one study through the session into
//! `OUT/ladder`, the second pass's (made from the first's rows) into `OUT/follow-up`, then the
//! verdicts from their rows into `explain.csv`, `explain-verdicts.csv`, `explain.md` and a
//! waterfall chart per target. The rung folders' provenance, samples and resume are the session's.

use std::path::{Path, PathBuf};

use crate::export::csv::{read_rows, write_rows};
use crate::export::{write_atomic, ExportError};
use crate::rows::{Api, MeasurementRow, PrRow, EXPLAIN_CSV, VERDICTS_CSV};
use crate::session::run::{execute, Event, RunPlan, SessionError, Sides};
use crate::session::{RunContext, RunSummary};
use crate::study::{Comparison, Study};

use super::attribute::{explain_all, TargetExplanation};
use super::ladder::{first_pass, second_pass, Rung, RungKind};
use super::output::{self, CodeFacts, EXPLAIN_MD};

pub use super::output::{read_folder_rows, FOLLOW_UP_DIR, LADDER_DIR, SWAP_DIR};

#[derive(Debug, thiserror::Error)]
pub enum ExplainError {
    #[error(
        "explain needs two sides to form a PR (found {0} only); run it where OpenCL and CUDA \
         (or two OpenCL devices) are both present"
    )]
    OneSide(Api),
    #[error("nothing to explain: {0}")]
    NoTargets(String),
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error(transparent)]
    Export(#[from] ExportError),
}

pub struct ExplainPlan<'a> {
    pub targets: Vec<Comparison>,
    pub out: PathBuf,
    pub resume: bool,
    pub command_line: Vec<String>,
    pub context: RunContext<'a>,
    pub swaps: SwapRungs,
}

/// Where the NVRTC-PTX-on-OpenCL rungs run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SwapRungs {
    /// In this process, after the other passes (a broken context skips the rest).
    InProcess,
    /// Not here: their ids are handed back to be run one process each.
    Deferred,
    /// Only this one (a process of its own), nothing else.
    Only(String),
}

#[derive(Default)]
pub struct ExplainReport {
    pub explanations: Vec<TargetExplanation>,
    pub summary: RunSummary,
    pub files: Vec<PathBuf>,
    /// The NVRTC-PTX-on-OpenCL rungs left for processes of their own ([`SwapRungs::Deferred`]):
    /// one can break NVIDIA's OpenCL for the rest of its process, and of others while it lives.
    pub pending_swaps: Vec<String>,
}

fn ladder_study(name: &str, rungs: Vec<Rung>) -> Study {
    Study {
        name: name.to_string(),
        description: "explain: each target's fair comparison with one thing changed per rung"
            .into(),
        file: format!("explain ({name})"),
        comparisons: rungs.into_iter().map(|r| r.comparison).collect(),
        sha256: String::new(),
    }
}

fn run_pass(
    plan: &ExplainPlan,
    study: Study,
    dir: &Path,
    sides: &mut Sides,
    on_event: &mut dyn FnMut(Event),
) -> Result<RunSummary, ExplainError> {
    let run = RunPlan {
        study,
        out: dir.to_path_buf(),
        resume: plan.resume,
        passes: 1,
        command_line: plan.command_line.clone(),
        study_text: None,
        context: plan.context.clone(),
    };
    Ok(execute(&run, sides, on_event)?.summary)
}

/// Runs every pass of every target's ladder and writes the verdicts; see the module docs.
pub fn run(
    plan: &ExplainPlan,
    sides: &mut Sides,
    on_event: &mut dyn FnMut(Event),
) -> Result<ExplainReport, ExplainError> {
    let b = sides
        .b
        .as_ref()
        .ok_or_else(|| ExplainError::OneSide(sides.a.api()))?;
    let apis = (sides.a.api(), b.api());
    if plan.targets.is_empty() {
        return Err(ExplainError::NoTargets(
            "no fair comparison among the targets".into(),
        ));
    }
    // NVRTC's PTX on OpenCL's runtime can break NVIDIA's OpenCL context for the rest of the
    // process: those rungs run last, each in a folder of its own, and where the plan says so
    // each in a process of its own (`SwapRungs`).
    let (swaps, first): (Vec<Rung>, Vec<Rung>) = plan
        .targets
        .iter()
        .flat_map(|t| first_pass(t, apis))
        .partition(|r| r.kind == RungKind::NvrtcPtx);
    if let SwapRungs::Only(id) = &plan.swaps {
        let rung = swaps
            .into_iter()
            .find(|r| &r.comparison.id == id)
            .ok_or_else(|| ExplainError::NoTargets(format!("no swap rung named {id}")))?;
        let summary = run_swap(plan, rung, sides, on_event)?;
        return Ok(ExplainReport {
            summary,
            ..ExplainReport::default()
        });
    }
    let mut summary = run_ladder(plan, first, apis, sides, on_event)?;
    let pending_swaps = run_swaps(plan, swaps, sides, on_event, &mut summary)?;
    let (explanations, files) = write_outputs(&plan.out)?;
    Ok(ExplainReport {
        explanations,
        summary,
        files,
        pending_swaps,
    })
}

/// The first pass (`first`), each target's code, then the second pass the first's rows call
/// for, unless the first was interrupted.
fn run_ladder(
    plan: &ExplainPlan,
    first: Vec<Rung>,
    apis: (Api, Api),
    sides: &mut Sides,
    on_event: &mut dyn FnMut(Event),
) -> Result<RunSummary, ExplainError> {
    let ladder = plan.out.join(LADDER_DIR);
    let study = ladder_study("explain-ladder", first);
    let mut summary = run_pass(plan, study, &ladder, sides, on_event)?;
    for note in super::code::write_code(&plan.targets, &plan.out, plan.context.sources, sides)? {
        on_event(Event::Note(note));
    }
    let first_rows: Vec<MeasurementRow> =
        read_rows(&ladder.join(crate::rows::MEASUREMENTS_CSV)).unwrap_or_default();
    let second: Vec<Rung> = plan
        .targets
        .iter()
        .flat_map(|t| second_pass(t, apis, &first_rows))
        .collect();
    if !second.is_empty() && !summary.interrupted {
        let study = ladder_study("explain-follow-up", second);
        let dir = plan.out.join(FOLLOW_UP_DIR);
        summary.absorb(run_pass(plan, study, &dir, sides, on_event)?);
    }
    Ok(summary)
}

/// The NVRTC-PTX-on-OpenCL rungs not tried before: run here ([`SwapRungs::InProcess`]), or
/// their ids handed back to be run one process each.
fn run_swaps(
    plan: &ExplainPlan,
    swaps: Vec<Rung>,
    sides: &mut Sides,
    on_event: &mut dyn FnMut(Event),
    summary: &mut RunSummary,
) -> Result<Vec<String>, ExplainError> {
    let mut pending_swaps = Vec::new();
    for rung in swaps {
        if summary.interrupted {
            break;
        }
        if plan.resume
            && swap_dir(plan, &rung)
                .join(crate::rows::MEASUREMENTS_CSV)
                .is_file()
        {
            // Tried before: a rung that broke the context would only break it again.
            continue;
        }
        match plan.swaps {
            SwapRungs::InProcess => summary.absorb(run_swap(plan, rung, sides, on_event)?),
            _ => pending_swaps.push(rung.comparison.id),
        }
    }
    Ok(pending_swaps)
}

fn swap_dir(plan: &ExplainPlan, rung: &Rung) -> PathBuf {
    plan.out
        .join(SWAP_DIR)
        .join(crate::plot::slug(&rung.comparison.id))
}

/// One NVRTC-PTX-on-OpenCL rung into its own folder; nothing if side A is broken already.
fn run_swap(
    plan: &ExplainPlan,
    rung: Rung,
    sides: &mut Sides,
    on_event: &mut dyn FnMut(Event),
) -> Result<RunSummary, ExplainError> {
    if let Some(cause) = sides.a.broken() {
        on_event(Event::Note(format!(
            "{} not run: {}'s context is broken ({cause})",
            rung.comparison.id,
            sides.a.api()
        )));
        return Ok(RunSummary::default());
    }
    let dir = swap_dir(plan, &rung);
    let study = ladder_study("explain-nvrtc-ptx", vec![rung]);
    run_pass(plan, study, &dir, sides, on_event)
}

/// Every target's explanation (the rungs' verdicts, the gaps whose machine code alone was read)
/// from the rows under an explain folder, held against the machine code; with those rows.
pub fn explanations_of(
    out: &Path,
) -> Result<(Vec<TargetExplanation>, Vec<MeasurementRow>), ExportError> {
    let (prs, rows) = read_folder_rows(out)?;
    let mut explanations = explain_all(&prs, &rows);
    let gaps: Vec<PrRow> =
        crate::export::csv::read_rows_if_file(&out.join(super::machine_code::CODE_ONLY_CSV))?;
    explanations.extend(gaps.iter().map(super::attribute::code_only));
    super::verify::annotate(&mut explanations, &super::machine_code::read(out)?);
    super::replay::annotate(&mut explanations, &super::replay::read(out)?);
    Ok((explanations, rows))
}

/// Reads the rungs' rows under `out` and writes the verdicts beside them: what `run` does
/// last, and all `explain --from` does.
pub fn write_outputs(out: &Path) -> Result<(Vec<TargetExplanation>, Vec<PathBuf>), ExportError> {
    let (explanations, rows) = explanations_of(out)?;
    let provenance = provenance_line(&rows);
    let code = CodeFacts::read(out)?;
    let launch = output::LaunchFacts::read(&out.join(LADDER_DIR), &rows)?;
    let files = vec![
        out.join(EXPLAIN_CSV),
        out.join(VERDICTS_CSV),
        out.join(EXPLAIN_MD),
    ];
    write_rows(&files[0], &output::explain_rows(&explanations))?;
    write_rows(&files[1], &output::verdict_rows(&explanations))?;
    write_atomic(
        &files[2],
        output::markdown(&explanations, &code, &launch, &provenance).as_bytes(),
    )?;
    Ok((explanations, files))
}

/// Where the rows come from, for the Markdown: the devices, drivers and run ids.
fn provenance_line(rows: &[MeasurementRow]) -> String {
    let mut seen: Vec<String> = Vec::new();
    for r in rows {
        let s = format!("{} ({}, driver {})", r.device, r.api.label(), r.driver);
        if !seen.contains(&s) {
            seen.push(s);
        }
    }
    let runs: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.run_id.as_str()).collect();
    if seen.is_empty() {
        return String::new();
    }
    format!(
        "Measured on {}; runs {} (each pass's `provenance.json` holds the commit, command line \
         and date).",
        seen.join(", "),
        runs.into_iter().collect::<Vec<_>>().join(", ")
    )
}
