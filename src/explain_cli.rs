//! `clvscu explain`: resolve the targets, open the sides, run the ladder through the library
//! (`clvscu::explain::run`), draw the waterfalls and print the verdicts.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use anyhow::{bail, Context, Result};

use clvscu::explain::ladder::not_a_target;
use clvscu::explain::run::{self as explain_run, ExplainPlan, SwapRungs};
use clvscu::explain::{TargetExplanation, PARITY};
use clvscu::record::PrRow;
use clvscu::session::provenance::GIT_COMMIT;
use clvscu::session::store::CsvStore;
use clvscu::study::{self, Comparison};
use clvscu::terminal::printable;

use crate::cli::ExplainArgs;
use crate::commands::{
    claim_default_folder, load_study, open_sides, print_progress, show_event, EXIT_INTERRUPTED,
    EXIT_OK,
};
use crate::stopping::{interrupt_flag, start_watchdog};

pub fn run(args: ExplainArgs) -> Result<i32> {
    if let Some(dir) = &args.from {
        let (explanations, files) = explain_run::write_outputs(dir)
            .with_context(|| format!("reading the rungs under {}", dir.display()))?;
        let charts = draw_charts(dir)?;
        print_verdicts(&explanations, &files, charts);
        return Ok(EXIT_OK);
    }
    let targets = targets(&args)?;
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string();
    let out = match &args.run.out {
        Some(out) => out.clone(),
        None => claim_default_folder("explain", &stamp)?,
    };
    let kept = format!(
        "every finished rung is in {}; continue with --resume --out {}",
        out.display(),
        out.display()
    );
    let watchdog = start_watchdog(format!("{kept} (or raise --timeout)"));
    let interrupted = interrupt_flag(&watchdog, kept);
    let sources = args.run.devices.sources()?;
    let mut sides = open_sides(&args.run)?;
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let plan = ExplainPlan {
        targets,
        out: out.clone(),
        resume: args.run.resume,
        sources: &sources,
        interrupted: &interrupted,
        progress: terminal && !args.run.quiet,
        command_line: std::env::args().collect(),
        run_id: format!("{stamp}-{GIT_COMMIT}"),
        watchdog: Some(&watchdog),
        timeout_s: args.run.timeout,
        on_comparison: (!terminal && !args.run.quiet)
            .then_some(&print_progress as &clvscu::session::OnComparison),
        swaps: match &args.swap_only {
            Some(id) => SwapRungs::Only(id.clone()),
            None => SwapRungs::Deferred,
        },
    };
    let report = explain_run::run(&plan, &mut sides, &mut show_event)?;
    if args.swap_only.is_some() {
        return Ok(EXIT_OK);
    }
    // Each in a process of its own, this one's devices closed meanwhile: a context NVIDIA's
    // OpenCL breaks takes its process's OpenCL with it, and hides the device from others
    // while that process lives.
    drop(sides);
    for id in &report.pending_swaps {
        if interrupted.load(Ordering::SeqCst) {
            break;
        }
        run_swap_process(&out, id)?;
    }
    let (explanations, files) = explain_run::write_outputs(&out)?;
    let charts = draw_charts(&out)?;
    print_verdicts(&explanations, &files, charts);
    if !report.summary.failed.is_empty() {
        println!(
            "{} rung side(s) could not run (a rung without a PR is named in explain.md with \
             why); the verdicts use the rungs that ran",
            report.summary.failed.len()
        );
    }
    if report.summary.interrupted || interrupted.load(Ordering::SeqCst) {
        eprintln!(
            "interrupted: every finished rung is in {}; continue with --resume --out {}",
            out.display(),
            out.display()
        );
        return Ok(EXIT_INTERRUPTED);
    }
    Ok(EXIT_OK)
}

/// Runs this command again for the one swap rung `id`, resuming `out`, and waits for it.
fn run_swap_process(out: &Path, id: &str) -> Result<()> {
    let exe = std::env::current_exe().context("finding this program to run it again")?;
    let mut args = resume_arguments(std::env::args().skip(1), out);
    args.extend(["--swap-only".into(), id.to_string()]);
    let status = std::process::Command::new(&exe)
        .args(&args)
        .status()
        .with_context(|| format!("running {} for {id}", exe.display()))?;
    if !status.success() {
        println!("{}: its process ended with {status}", printable(id));
    }
    Ok(())
}

/// The command line again, resuming `out`: its own `--out` and `--resume` replaced.
fn resume_arguments(args: impl Iterator<Item = String>, out: &Path) -> Vec<String> {
    let mut kept = Vec::new();
    let mut args = args.peekable();
    while let Some(a) = args.next() {
        if a == "--out" {
            args.next();
        } else if a == "--swap-only" {
            args.next();
        } else if !(a.starts_with("--out=") || a.starts_with("--swap-only=") || a == "--resume") {
            kept.push(a);
        }
    }
    kept.extend(["--resume".into(), "--out".into(), out.display().to_string()]);
    kept
}

/// The comparisons to explain: a run folder's fair PRs, a study's fair comparisons, or the
/// one comparison the command line describes.
fn targets(args: &ExplainArgs) -> Result<Vec<Comparison>> {
    let folder = args
        .run
        .target
        .as_deref()
        .map(PathBuf::from)
        .filter(|p| p.join(CsvStore::PRS).is_file());
    let comparisons = match folder {
        Some(dir) => folder_targets(&dir, args.all)?,
        None => {
            let mut run = args.run.clone();
            // A study named as TARGET is a study, not a kernel.
            if let Some(t) = run.target.clone().filter(|t| study::load(t).is_ok()) {
                run.target = None;
                run.study = Some(t);
            }
            load_study(&run)?.0.comparisons
        }
    };
    let mut targets = Vec::new();
    for c in comparisons {
        match not_a_target(&c) {
            None if !targets.iter().any(|t: &Comparison| t.id == c.id) => targets.push(c),
            None => {}
            Some(why) => println!("skipped {}", printable(&why)),
        }
    }
    if targets.is_empty() {
        bail!("nothing to explain: no fair comparison among the targets");
    }
    Ok(targets)
}

/// The fair comparisons of a run folder, found again in their studies: those outside the
/// parity band, or all of them.
fn folder_targets(dir: &Path, all: bool) -> Result<Vec<Comparison>> {
    let prs: Vec<PrRow> = clvscu::export::csv::read_rows(&dir.join(CsvStore::PRS))?;
    let saved = dir.join(clvscu::session::run::STUDY_FILE);
    let mut found = Vec::new();
    for row in prs.iter().filter(|r| r.fair) {
        if !all && (PARITY.0..=PARITY.1).contains(&row.pr) {
            continue;
        }
        let study = if saved.is_file() {
            study::load(&saved.to_string_lossy())
        } else {
            study::load(&row.study)
        }
        .with_context(|| {
            format!(
                "{}: the study '{}' of its rows is neither built in nor saved as study.toml",
                dir.display(),
                row.study
            )
        })?;
        match study
            .comparisons
            .into_iter()
            .find(|c| c.id == row.comparison)
        {
            Some(c) => found.push(c),
            None => println!(
                "skipped {}: study '{}' has no comparison of that name now",
                printable(&row.comparison),
                printable(&row.study)
            ),
        }
    }
    Ok(found)
}

fn draw_charts(out: &Path) -> Result<Vec<PathBuf>> {
    let (prs, _) = explain_run::read_folder_rows(out)?;
    let dir = out.join("charts");
    clvscu::export::safe::prepare_dir(&dir, true)?;
    Ok(clvscu::plot::waterfall::draw(
        &prs,
        &dir,
        &[clvscu::plot::Format::Png, clvscu::plot::Format::Svg],
    )?)
}

fn fmt_pr(t: &TargetExplanation) -> String {
    t.pr.map_or_else(
        || "—".into(),
        |p| format!("{:.3} [{:.3}, {:.3}]", p.value, p.lo, p.hi),
    )
}

fn print_verdicts(all: &[TargetExplanation], files: &[PathBuf], charts: Vec<PathBuf>) {
    let mut table = crate::tables::table(&["target", "device", "PR [CI]", "verdict"], &[2]);
    for t in all {
        table.add_row(vec![
            printable(&t.target).into_owned(),
            t.device.clone(),
            fmt_pr(t),
            t.verdict.describe(),
        ]);
    }
    println!("{table}");
    for f in files {
        println!("wrote {}", f.display());
    }
    println!("charts: {} waterfall files", charts.len());
}

#[cfg(test)]
mod tests {
    use super::resume_arguments;
    use std::path::Path;

    #[test]
    fn the_new_process_resumes_the_same_folder() {
        let args = [
            "explain",
            "explain-known",
            "--out",
            "x",
            "--cl-device",
            "NVIDIA",
        ];
        assert_eq!(
            resume_arguments(args.iter().map(|s| s.to_string()), Path::new("x")),
            [
                "explain",
                "explain-known",
                "--cl-device",
                "NVIDIA",
                "--resume",
                "--out",
                "x"
            ]
        );
        let args = ["explain", "--resume", "--out=y", "m/v"];
        assert_eq!(
            resume_arguments(args.iter().map(|s| s.to_string()), Path::new("y")),
            ["explain", "m/v", "--resume", "--out", "y"]
        );
    }
}
