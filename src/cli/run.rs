//! `clvscu run`: one study (or kernel) into a run folder, with its exports and the end table.

use std::path::{Path, PathBuf};

use anyhow::{ensure, Context, Result};

use clvscu::plot;
use clvscu::rows::Status;
use clvscu::session::provenance::GIT_COMMIT;
use clvscu::session::run::RunPlan;
use clvscu::session::{self, Outcome, RunContext, RunSummary};
use clvscu::terminal::{printable, printable_lines};

use crate::cli::args::RunArgs;
use crate::cli::every_gpu;
use crate::cli::progress::ProgressView;
use crate::cli::tables::end_of_run;

use crate::cli::setup::{
    load_study, noise_floor_note, open_sides, out_folder, show_event, stamp_now,
};
use crate::cli::stopping::{interrupt_flag, start_watchdog};
use crate::cli::stopping::{EXIT_FAILED_CONFIGS, EXIT_INTERRUPTED, EXIT_OK};

/// What a run that stops early keeps, and how to continue it.
fn run_kept(out: &Path) -> String {
    let out = out.display();
    format!("every finished comparison is in {out}; continue with --resume --out {out}")
}

pub(crate) fn run(args: RunArgs) -> Result<i32> {
    let (study, _) = load_study(&args)?;
    let stamp = stamp_now();
    // The study's name is the user's text: as a slug it cannot leave the folder.
    let out = out_folder(args.out.as_deref(), &plot::slug(&study.name), &stamp)?;
    let every_gpu = every_gpu::wanted(&args.devices)?;
    // With every GPU, each GPU's run gets `--force` and starts afresh in its own folder. Only a
    // folder a run wrote and no run holds now is deleted: a mistyped --out costs no one's files.
    if args.force && !every_gpu && out.exists() {
        ensure!(
            out.join(clvscu::export::folder::IDENTITY_FILE).is_file(),
            "--force: {} is not a run folder (it holds no {}); refusing to delete it: choose \
             another --out",
            out.display(),
            clvscu::export::folder::IDENTITY_FILE
        );
        drop(
            clvscu::export::folder::lock(&out)
                .with_context(|| format!("--force: {}", out.display()))?,
        );
        std::fs::remove_dir_all(&out)
            .with_context(|| format!("--force: cannot delete {}", out.display()))?;
    }
    let result = if !every_gpu {
        run_one(&args, &out, &stamp)
    } else if args.exports().any(|(_, path)| path.is_some()) {
        Err(anyhow::anyhow!(
            "--cuda-device all writes one folder per GPU; --export-json, --export-csv and \
             --export-markdown take one run: join the folders' CSVs with `clvscu merge` instead"
        ))
    } else {
        every_gpu::run_command(&out)
    };
    if result.is_err() && args.out.is_none() {
        // A default folder never written to is not left behind (only an empty one can go).
        let _ = std::fs::remove_dir(&out);
    }
    result
}

fn run_one(args: &RunArgs, out: &Path, stamp: &str) -> Result<i32> {
    let shown = out.display();
    let watchdog = start_watchdog(format!(
        "Every finished comparison is in {shown}; fix the kernel or raise --timeout, then \
         continue with --resume --out {shown}"
    ));
    let interrupted = interrupt_flag(&watchdog, run_kept(out));
    check_exports(args, out)?;
    let (study, study_text) = load_study(args)?;
    let sources = args.devices.sources()?;
    let mut sides = open_sides(args)?;
    let on_cpu = !sides.a.info().is_gpu || sides.b.as_ref().is_some_and(|b| !b.info().is_gpu);
    if on_cpu {
        let count = 1 + usize::from(sides.b.is_some());
        if let Some(note) = clvscu::session::sizing::cpu_note(&study, count) {
            say_err!("note: {}", printable(&note));
        }
    }
    let view = ProgressView::new(args.quiet);
    let plan = RunPlan {
        study,
        out: out.to_path_buf(),
        resume: args.resume,
        passes: args.passes,
        command_line: std::env::args().collect(),
        study_text,
        context: RunContext {
            watchdog: Some(&watchdog),
            timeout_s: args.timeout,
            on_progress: Some(&|p| view.tell(p)),
            ..RunContext::new(format!("{stamp}-{GIT_COMMIT}"), &sources, &interrupted)
        },
    };
    let report = session::run::execute(&plan, &mut sides, &mut show_event)?;
    for note in &report.remeasured {
        say!("resume: {}", printable_lines(note));
    }
    let all = &report.summary;
    let table = end_of_run(
        &all.measurements,
        &all.prs,
        &sides.infos(),
        args.show_experiments,
    );
    say_text!("{table}");
    say!(
        "\n{} measurement(s) verified and timed, {} PR(s), {} skipped (resume), {} failed; results in {}",
        all.measurements.iter().filter(|m| m.status == Status::Ok).count(),
        all.prs.len(),
        all.skipped,
        all.failed.len(),
        shown
    );
    if !all.refused_as_expected.is_empty() {
        say!(
            "{} launch(es) refused by the driver as the study expects (recorded as refused, in no PR):",
            all.refused_as_expected.len()
        );
        for r in &all.refused_as_expected {
            say!("  {}", printable_lines(r));
        }
    }
    if all.prs.is_empty() && !all.measurements.is_empty() {
        say!(
            "hint: one side only, so no Performance Ratio. With an NVIDIA GPU (OpenCL and CUDA) \
             the same command compares both; --pair opencl-opencl checks the harness on one device."
        );
    }
    say!(
        "next: {shown}/summary.md has these tables; clvscu plot {shown} --out {shown}/charts \
         redraws the charts; clvscu run FAMILY/VARIANT --local 64,128,256 compares one kernel."
    );
    if args.pair.is_none() && sides.b.as_ref().is_some_and(|b| b.api() == sides.a.api()) {
        say!("{}", noise_floor_note());
    }
    export(args, out)?;
    if !args.no_plot && !report.summary.interrupted {
        match draw_charts(out) {
            Ok(files) if files.is_empty() => say!(
                "charts: none, nothing to draw (no PR, no sweep, no known peak or copy \
                 measurement)"
            ),
            Ok(files) => say!(
                "charts: {} files in {}",
                files.len(),
                out.join("charts").display()
            ),
            Err(e) => say_err!("warning: charts not drawn: {e}"),
        }
    }
    Ok(exit_code(&report.summary, out))
}

/// The exit code of a finished run, with what the user should know about it.
pub(crate) fn exit_code(summary: &RunSummary, out: &Path) -> i32 {
    match summary.outcome() {
        Outcome::Interrupted => {
            say_err!("interrupted: {}", run_kept(out));
            EXIT_INTERRUPTED
        }
        Outcome::FailedConfigs => {
            say_err!(
                "{} configuration(s) failed and were excluded from every PR:",
                summary.failed.len()
            );
            for f in &summary.failed {
                say_err!("  {}", printable_lines(f));
            }
            // The compiler's words for each distinct build failure, at the user's lines (`#line`).
            let mut shown: Vec<&str> = Vec::new();
            for m in &summary.measurements {
                if m.status == Status::BuildFailed && !shown.contains(&m.error.as_str()) {
                    shown.push(&m.error);
                    say_err!(
                        "\n{} [{}]: {}",
                        printable(&m.comparison),
                        m.api,
                        printable_lines(m.error.trim_end())
                    );
                }
            }
            EXIT_FAILED_CONFIGS
        }
        Outcome::Complete => EXIT_OK,
    }
}

/// Refuses, before anything is measured, an export that would overwrite a file the run owns or
/// the study being read, or that is no plain file of its own.
fn check_exports(args: &RunArgs, out: &Path) -> Result<()> {
    use clvscu::calibrate::REPORT_MD;
    use clvscu::export::folder::{IDENTITY_FILE, LOCK_FILE};
    use clvscu::rows::{CALIBRATION_CSV, CALIBRATION_PR_CSV, PASSES_CSV, TIMINGS_CSV};
    use clvscu::rows::{MEASUREMENTS_CSV, PRS_CSV, SAMPLES_CSV};
    use clvscu::session::run::STUDY_FILE;
    let mut owned: Vec<PathBuf> = [
        IDENTITY_FILE,
        LOCK_FILE,
        STUDY_FILE,
        MEASUREMENTS_CSV,
        PRS_CSV,
        SAMPLES_CSV,
        TIMINGS_CSV,
        "provenance.json",
        "summary.md",
        PASSES_CSV,
        CALIBRATION_CSV,
        CALIBRATION_PR_CSV,
        REPORT_MD,
    ]
    .iter()
    .map(|name| out.join(name))
    .collect();
    // Each resume's provenance, and the one this run writes if it resumes.
    let resumed = |n: u32| out.join(format!("provenance-resume-{n}.json"));
    let next = (1..).find(|&n| !resumed(n).exists()).unwrap_or(1);
    owned.extend((1..=next).map(resumed));
    owned.extend(args.study.as_ref().map(PathBuf::from));
    for (option, path) in args.exports() {
        if let Some(path) = path {
            clvscu::export::safe::check_target(path)
                .and_then(|()| clvscu::export::safe::refuse_owned(path, &owned))
                .with_context(|| format!("{option} {}", path.display()))?;
        }
    }
    Ok(())
}

/// The `--export-*` files: the whole folder's rows (a `--resume`'s earlier ones too), atomically.
fn export(args: &RunArgs, out: &Path) -> Result<()> {
    use clvscu::export::csv::{read_rows_if_file, write_rows};
    use clvscu::export::{json::RunResults, markdown, write_atomic};
    let all = RunResults {
        prs: read_rows_if_file(&out.join(clvscu::rows::PRS_CSV))?,
        measurements: read_rows_if_file(&out.join(clvscu::rows::MEASUREMENTS_CSV))?,
    };
    if let Some(path) = &args.export_json {
        clvscu::export::json::write_json_atomic(path, &all)
            .with_context(|| format!("--export-json {}", path.display()))?;
    }
    if let Some(path) = &args.export_csv {
        write_rows(path, &all.prs).with_context(|| format!("--export-csv {}", path.display()))?;
    }
    if let Some(path) = &args.export_markdown {
        let mut text = String::from("## Measurements\n\n");
        text += &markdown::measurement_table(&all.measurements);
        if !all.prs.is_empty() {
            text += "\n## Performance Ratio\n\n";
            text += &markdown::pr_table(&all.prs);
        }
        write_atomic(path, text.as_bytes())
            .with_context(|| format!("--export-markdown {}", path.display()))?;
    }
    Ok(())
}

/// Charts of the run folder's CSVs into its `charts/`; a failure is reported, not fatal.
fn draw_charts(out: &Path) -> Result<Vec<PathBuf>> {
    let dir = out.join("charts");
    clvscu::export::safe::check_dir(&dir, false)?;
    let data = clvscu::plot::input::load(&[out.to_path_buf()], clvscu::families::catalog())?;
    let formats = [clvscu::plot::Format::Png, clvscu::plot::Format::Svg];
    Ok(clvscu::plot::draw_all(&data, &dir, &formats)?)
}
