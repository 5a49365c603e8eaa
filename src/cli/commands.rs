//! The subcommands, at the edge: `anyhow` errors with context, human-readable output.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::{bail, Context, Result};

use clvscu::backend::cuda::{self, CudaBackend};
use clvscu::backend::opencl::{self, OpenClBackend};
use clvscu::backend::{Backend, DeviceInfo};
use clvscu::export::csv::merge_files;
use clvscu::inspect;
use clvscu::plot;
use clvscu::plot::input::CsvKind;
use clvscu::record::{MeasurementRow, PrRow, SampleRow, Status};
use clvscu::session::provenance::GIT_COMMIT;
use clvscu::session::run::{RunPlan, Sides};
use clvscu::session::watchdog::Watchdog;
use clvscu::session::{self, OnComparison, Outcome, RunSummary};
use clvscu::study;
use clvscu::terminal::{printable, printable_lines};

use crate::cli::args::{CalibrateArgs, Cli, Command, DeviceArgs, InspectArgs, RunArgs};
use crate::cli::every_gpu;

use crate::cli::setup::{
    claim_default_folder, load_study, noise_floor_note, open_pair, open_sides, print_progress,
    show_event,
};
use crate::cli::stopping::{interrupt_flag, start_watchdog};
pub use crate::cli::stopping::{EXIT_FAILED_CONFIGS, EXIT_INTERRUPTED, EXIT_OK, EXIT_REGRESSED};

pub fn dispatch(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Devices => devices(),
        Command::Studies => studies(),
        Command::Families => {
            say_text!("{}", crate::cli::tables::families());
            Ok(EXIT_OK)
        }
        Command::Run(args) => run(*args),
        Command::Calibrate(args) => {
            args.devices.one_cuda_device("calibrate")?;
            calibrate(&args)
        }
        Command::ShapesRule { sweep, out } => crate::cli::shapes_rule::run(&sweep, &out),
        Command::Tune(args) => {
            args.devices.one_cuda_device("tune")?;
            crate::cli::tune::run(*args)
        }
        Command::Explain(args) => {
            args.run.devices.one_cuda_device("explain")?;
            crate::cli::explain::run(*args)
        }
        Command::Suite(args) => crate::cli::suite::run(args),
        Command::Parity { devices } => {
            devices.one_cuda_device("parity")?;
            parity(&devices)
        }
        Command::Plot { inputs, out } => plot_cmd(&inputs, &out),
        Command::Merge { inputs, output } => merge(&inputs, &output),
        Command::Inspect(args) => {
            args.devices.one_cuda_device("inspect")?;
            inspect_cmd(args)
        }
        Command::Report {
            inputs,
            out,
            html,
            findings,
            readme,
        } => {
            if findings {
                findings_cmd(&inputs, out.as_deref(), readme.as_deref())
            } else {
                let out = out.unwrap_or_else(|| PathBuf::from("clvscu-report"));
                report(&inputs, &out, html)
            }
        }
        Command::Diff {
            old,
            new,
            out,
            noise,
            fail_on_regression,
        } => diff(&old, &new, out.as_deref(), noise, fail_on_regression),
    }
}

fn print_device(prefix: &str, d: &DeviceInfo) {
    say!("{prefix} {} [{}]", d.name, d.platform);
    say!(
        "      vendor {} | driver {} | {}",
        d.vendor,
        d.driver_version,
        d.api_version
    );
    say!(
        "      compute units {} | max work-group {} | local mem {} KiB | global mem {:.1} GiB | max alloc {:.1} GiB",
        d.compute_units,
        d.max_work_group_size,
        d.local_mem_bytes / 1024,
        d.global_mem_bytes as f64 / (1u64 << 30) as f64,
        d.max_alloc_bytes as f64 / (1u64 << 30) as f64
    );
    let clock = |c: Option<u32>| {
        c.map(|v| format!("{v} MHz"))
            .unwrap_or_else(|| "n/a".into())
    };
    let peak = match d.theoretical_peak_gbs() {
        Some(p) => format!(
            "{p:.1} GB/s (Eq. 2: {} MHz x {} bit / 8 x 2)",
            d.memory_clock_mhz.unwrap_or(0),
            d.memory_bus_width_bits.unwrap_or(0)
        ),
        None => "n/a (the API exposes no memory clock / bus width)".into(),
    };
    say!(
        "      core clock {} | memory clock {} | bus width {} | peak bandwidth {}",
        clock(d.core_clock_mhz),
        clock(d.memory_clock_mhz),
        d.memory_bus_width_bits
            .map(|b| format!("{b} bit"))
            .unwrap_or_else(|| "n/a".into()),
        peak
    );
    if let Some((ma, mi)) = d.compute_capability {
        say!("      compute capability {ma}.{mi}");
    }
    if d.api == "OpenCL" {
        say!(
            "      sub-groups: {}",
            if d.has_subgroups { "yes" } else { "no" }
        );
    }
}

fn devices() -> Result<i32> {
    say!("OpenCL:");
    match opencl::list_devices() {
        Ok(list) if list.is_empty() => say!("  no OpenCL device"),
        Ok(list) => {
            for (i, d) in list.iter().enumerate() {
                print_device(
                    &format!("  [{i}] {}:{}", d.platform_index, d.device_index),
                    &d.info,
                );
            }
        }
        Err(e) => say!("  {e}"),
    }
    say!("CUDA:");
    match cuda::list_devices() {
        Ok(list) => {
            for (i, d) in list.iter().enumerate() {
                print_device(&format!("  [{i}]"), d);
            }
        }
        Err(e) => say!("  {e}"),
    }
    match cuda::nvrtc_version() {
        Some(v) => say!("NVRTC {v}: CUDA kernels can be compiled to PTX"),
        None => say!(
            "NVRTC unavailable: {}",
            cuda::nvrtc_availability().err().unwrap_or_default()
        ),
    }
    Ok(EXIT_OK)
}

fn studies() -> Result<i32> {
    for (name, _) in study::BUILTIN {
        let s = study::load(name)?;
        say!(
            "{name:<20} {:>4} comparisons  {}",
            s.comparisons.len(),
            s.description
        );
    }
    Ok(EXIT_OK)
}

/// `clvscu calibrate`: the harness's launch path against the plain loop, on each API.
fn calibrate(args: &CalibrateArgs) -> Result<i32> {
    let mut sides = open_pair(&args.devices, args.pair, None)?;
    let sources = args.devices.sources()?;
    let plan = if args.quick {
        clvscu::calibrate::CalibrationPlan::quick()
    } else {
        clvscu::calibrate::CalibrationPlan::full()
    };
    clvscu::export::safe::prepare_dir(&args.out, true)?;
    let mut backends: Vec<&mut dyn Backend> = vec![sides.a.as_mut()];
    if let Some(b) = sides.b.as_mut() {
        backends.push(b.as_mut());
    }
    let names: Vec<String> = backends.iter().map(|b| describe(b.info())).collect();
    say!("calibrating {} ...", names.join(" and "));
    let found = clvscu::calibrate::calibrate(&mut backends, &sources, &plan)?;
    let title = format!("clvscu calibrate: {}", names.join(" / "));
    clvscu::calibrate::write(&args.out, &found, &title)?;
    let command_line: Vec<String> = std::env::args().collect();
    let infos: Vec<&DeviceInfo> = backends.iter().map(|b| b.info()).collect();
    let mut prov = session::provenance::common(
        &infos,
        &sources,
        &command_line,
        session::provenance::GpuSnapshot::now(),
    );
    prov.study = "calibrate".into();
    clvscu::export::json::write_json_atomic(&args.out.join("provenance.json"), &prov)?;
    say!("{}", clvscu::calibrate::markdown(&found));
    say!("written: {}", args.out.display());
    Ok(EXIT_OK)
}

fn describe(d: &DeviceInfo) -> String {
    format!("{} {} ({})", d.api, d.name, d.driver_version)
}

/// What a run that stops early keeps, and how to continue it.
fn run_kept(out: &Path) -> String {
    let out = out.display();
    format!("every finished comparison is in {out}; continue with --resume --out {out}")
}

fn run(args: RunArgs) -> Result<i32> {
    let (study, _) = load_study(&args)?;
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string();
    let out = match &args.out {
        Some(out) => out.clone(),
        // The study's name is the user's text: as a slug it cannot leave the folder.
        None => claim_default_folder(&plot::slug(&study.name), &stamp)?,
    };
    if args.force {
        clear_run_folder(&out)?;
    }
    let result = if every_gpu::wanted(&args.devices)? {
        run_every_gpu(&args, &out)
    } else {
        run_here(&args, &out, &stamp)
    };
    if result.is_err() && args.out.is_none() {
        // A default folder the run never wrote to is not left behind (only an empty one
        // can be removed).
        let _ = std::fs::remove_dir(&out);
    }
    result
}

/// `--force`: deletes the run folder `out`, so the run starts afresh there. Only a folder a
/// run wrote (it holds folder.json) and that no run holds now (its lock is free) is deleted:
/// a mistyped --out never costs anyone's files.
fn clear_run_folder(out: &Path) -> Result<()> {
    if !out.exists() {
        return Ok(());
    }
    if !out.join(session::folder::IDENTITY_FILE).is_file() {
        bail!(
            "--force: {} is not a run folder (it holds no {}); refusing to delete it: choose \
             another --out",
            out.display(),
            session::folder::IDENTITY_FILE
        );
    }
    drop(session::folder::lock(out).with_context(|| format!("--force: {}", out.display()))?);
    std::fs::remove_dir_all(out)
        .with_context(|| format!("--force: cannot delete {}", out.display()))
}

/// The study on the one pair of devices selected, under a watchdog and a Ctrl-C handler.
fn run_here(args: &RunArgs, out: &Path, stamp: &str) -> Result<i32> {
    let watchdog = start_watchdog(format!(
        "Every finished comparison is in {}; fix the kernel or raise --timeout, then \
         continue with --resume --out {}",
        out.display(),
        out.display()
    ));
    let interrupted = interrupt_flag(&watchdog, run_kept(out));
    run_one(args, out, stamp, &watchdog, &interrupted)
}

/// `--cuda-device all`: the study on every CUDA GPU at the same time, one process each (see
/// [`every_gpu`]), each into its own folder under `out`.
fn run_every_gpu(args: &RunArgs, out: &Path) -> Result<i32> {
    // Each GPU's run would replace the last one's file: one file cannot hold them apart.
    let exports = [&args.export_json, &args.export_csv, &args.export_markdown];
    if exports.iter().any(|e| e.is_some()) {
        bail!(
            "--cuda-device all writes one folder per GPU; --export-json, --export-csv and \
             --export-markdown take one run: join the folders' CSVs with `clvscu merge` instead"
        );
    }
    every_gpu::run_command(out)
}

fn run_one(
    args: &RunArgs,
    out: &Path,
    stamp: &str,
    watchdog: &Watchdog,
    interrupted: &Arc<AtomicBool>,
) -> Result<i32> {
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
    let out = out.to_path_buf();
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let progress = terminal && !args.quiet;
    let plan = RunPlan {
        study,
        out: out.clone(),
        resume: args.resume,
        passes: args.passes,
        charts: !args.no_plot,
        sources: &sources,
        interrupted,
        progress,
        command_line: std::env::args().collect(),
        run_id: format!("{stamp}-{GIT_COMMIT}"),
        watchdog: Some(watchdog),
        timeout_s: args.timeout,
        study_text,
        // Without a terminal there is no progress bar: a line per comparison instead.
        on_comparison: (!terminal && !args.quiet).then_some(&print_progress as &OnComparison),
    };
    let report = session::run::execute(&plan, &mut sides, &mut show_event)?;
    for note in &report.remeasured {
        say!("resume: {}", printable_lines(note));
    }
    print_report(
        &report.summary,
        &side_names(&sides),
        args.show_experiments,
        &out,
    );
    print_expected_refusals(&report.summary);
    print_hint(&report.summary, &out);
    if args.pair.is_none() && sides.b.as_ref().is_some_and(|b| b.api() == sides.a.api()) {
        say!("{}", noise_floor_note());
    }
    export(args, &out)?;
    match &report.charts {
        Some(Ok(files)) if files.is_empty() => say!(
            "charts: none, nothing to draw (no PR, no sweep, no known peak or copy measurement)"
        ),
        Some(Ok(files)) => say!(
            "charts: {} files in {}",
            files.len(),
            out.join("charts").display()
        ),
        Some(Err(e)) => say_err!("warning: charts not drawn: {e}"),
        None => {}
    }
    Ok(exit_code(&report.summary, &out))
}

/// The exit code of a finished run, with what the user should know about it.
pub(crate) fn exit_code(summary: &RunSummary, out: &Path) -> i32 {
    match summary.outcome() {
        Outcome::Interrupted => {
            say_err!(
                "interrupted: every finished comparison is in {}; continue with --resume --out {}",
                out.display(),
                out.display()
            );
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
            print_build_logs(summary);
            EXIT_FAILED_CONFIGS
        }
        Outcome::Complete => EXIT_OK,
    }
}

/// The launches the driver refused as the study expects: recorded, in no PR, no failure.
fn print_expected_refusals(summary: &RunSummary) {
    if summary.refused_as_expected.is_empty() {
        return;
    }
    say!(
        "{} launch(es) refused by the driver as the study expects (recorded as refused, in no PR):",
        summary.refused_as_expected.len()
    );
    for r in &summary.refused_as_expected {
        say!("  {}", printable_lines(r));
    }
}

/// The compiler's own words for each distinct build failure, with the user's file names and
/// line numbers (the sources carry `#line` directives).
fn print_build_logs(summary: &RunSummary) {
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
}

/// What to do next, said once the run is done.
fn print_hint(all: &RunSummary, out: &Path) {
    let shown = out.display();
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
}

/// The run's sides as the end-of-run tables name them.
fn side_names(sides: &Sides) -> Vec<crate::cli::tables::SideName> {
    std::iter::once(sides.a.as_ref())
        .chain(sides.b.as_deref())
        .map(|b| crate::cli::tables::SideName {
            api: b.api().label().to_string(),
            device: b.info().name.clone(),
            is_gpu: b.info().is_gpu,
        })
        .collect()
}

/// Refuses, before anything is measured, an export that would overwrite a file the run owns
/// (its identity, CSVs, lock, saved study) or the study file being read, or that is no
/// plain file of its own ([`clvscu::export::safe::check_target`]).
fn check_exports(args: &RunArgs, out: &Path) -> Result<()> {
    use clvscu::session::{folder::IDENTITY_FILE, folder::LOCK_FILE, run::STUDY_FILE};
    use clvscu::session::{store::CsvStore, timings::TIMINGS_CSV};
    let mut owned: Vec<PathBuf> = [
        IDENTITY_FILE,
        LOCK_FILE,
        STUDY_FILE,
        CsvStore::MEASUREMENTS,
        CsvStore::PRS,
        CsvStore::SAMPLES,
        TIMINGS_CSV,
    ]
    .iter()
    .map(|name| out.join(name))
    .collect();
    owned.extend(args.study.as_ref().map(PathBuf::from));
    let exports = [
        ("--export-json", &args.export_json),
        ("--export-csv", &args.export_csv),
        ("--export-markdown", &args.export_markdown),
    ];
    for (option, path) in exports {
        if let Some(path) = path {
            clvscu::export::safe::check_target(path)
                .and_then(|()| clvscu::export::safe::refuse_owned(path, &owned))
                .with_context(|| format!("{option} {}", path.display()))?;
        }
    }
    Ok(())
}

/// The rows of one of a run folder's CSVs; none when the run wrote no such file.
fn folder_rows<T: serde::de::DeserializeOwned + clvscu::export::csv::CsvSchema>(
    path: &Path,
) -> Result<Vec<T>> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    Ok(clvscu::export::csv::read_rows(path)?)
}

/// `--export-json`, `--export-csv`, `--export-markdown`: the rows of the whole folder (after a
/// `--resume`, those of earlier invocations too: the CSVs are the record), each file written
/// whole or not at all.
fn export(args: &RunArgs, out: &Path) -> Result<()> {
    use clvscu::export::{csv::CsvExporter, json::RunResults, markdown::MarkdownExporter};
    use clvscu::export::{write_atomic, Exporter};
    use clvscu::session::store::CsvStore;
    let all = RunResults {
        prs: folder_rows(&out.join(CsvStore::PRS))?,
        measurements: folder_rows(&out.join(CsvStore::MEASUREMENTS))?,
    };
    if let Some(path) = &args.export_json {
        clvscu::export::json::write_json_atomic(path, &all)
            .with_context(|| format!("--export-json {}", path.display()))?;
    }
    if let Some(path) = &args.export_csv {
        let bytes = CsvExporter.render(&all.prs)?;
        write_atomic(path, &bytes).with_context(|| format!("--export-csv {}", path.display()))?;
    }
    if let Some(path) = &args.export_markdown {
        let mut text = String::from("## Measurements\n\n");
        text += std::str::from_utf8(&MarkdownExporter.render(&all.measurements)?)?;
        if !all.prs.is_empty() {
            text += "\n## Performance Ratio\n\n";
            text += std::str::from_utf8(&MarkdownExporter.render(&all.prs)?)?;
        }
        write_atomic(path, text.as_bytes())
            .with_context(|| format!("--export-markdown {}", path.display()))?;
    }
    Ok(())
}

fn print_report(
    all: &RunSummary,
    sides: &[crate::cli::tables::SideName],
    show_experiments: bool,
    out: &Path,
) {
    let ok = all
        .measurements
        .iter()
        .filter(|m| m.status == Status::Ok)
        .count();
    say_text!(
        "{}",
        crate::cli::tables::end_of_run(&all.measurements, &all.prs, sides, show_experiments)
    );
    say!(
        "\n{} measurement(s) verified and timed, {} PR(s), {} skipped (resume), {} failed; results in {}",
        ok,
        all.prs.len(),
        all.skipped,
        all.failed.len(),
        out.display()
    );
}

fn parity(args: &DeviceArgs) -> Result<i32> {
    let allow = clvscu::parity::load_allow_list(clvscu::parity::EMBEDDED_ALLOW_LIST)?;
    let report = clvscu::parity::check(&args.sources()?, &allow);
    say!("{}", report.render());
    Ok(if report.passed() { EXIT_OK } else { 1 })
}

fn plot_cmd(inputs: &[PathBuf], out: &Path) -> Result<i32> {
    let data = plot::input::load(inputs)?;
    for w in plot::input::warnings(&data) {
        say_err!("warning: {}", printable_lines(&w.to_string()));
    }
    clvscu::export::safe::prepare_dir(out, true)?;
    let files = plot::draw_all(&data, out, &[plot::Format::Png, plot::Format::Svg])?;
    if files.is_empty() {
        say!("the data allows no chart (no PR, no sweep, no known peak or copy measurement, no PTX table)");
    }
    for f in files {
        say!("{}", f.display());
    }
    Ok(EXIT_OK)
}

/// The CSV files a merge reads: files as given; for a folder (a run folder, or a tree of them,
/// one per node or GPU), the file of every run folder under it that has the output's name.
fn merge_inputs(inputs: &[PathBuf], output: &Path) -> Result<Vec<PathBuf>> {
    let name = output.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let mut files = Vec::new();
    for input in inputs {
        if !input.exists() {
            bail!("merge: {} does not exist", input.display());
        }
        if !input.is_dir() {
            files.push(input.clone());
            continue;
        }
        if !matches!(name, "measurements.csv" | "prs.csv" | "samples.csv") {
            bail!(
                "{} is a folder: name the output measurements.csv, prs.csv or samples.csv to \
                 say which file of each run folder to merge",
                input.display()
            );
        }
        let folders = clvscu::report::load::find_run_folders(std::slice::from_ref(input))?;
        files.extend(folders.iter().map(|f| f.join(name)).filter(|f| f.is_file()));
    }
    if files.len() < 2 {
        bail!(
            "merge needs at least two {} files; found {}",
            if name.is_empty() { "CSV" } else { name },
            files.len()
        );
    }
    Ok(files)
}

fn merge(inputs: &[PathBuf], output: &Path) -> Result<i32> {
    let inputs = &merge_inputs(inputs, output)?;
    let n = match plot::input::kind_of(&inputs[0])? {
        CsvKind::Measurements => merge_files::<MeasurementRow>(inputs, output)?,
        CsvKind::Prs => merge_files::<PrRow>(inputs, output)?,
        CsvKind::Samples => merge_files::<SampleRow>(inputs, output)?,
        CsvKind::PtxClasses => bail!(
            "{}: PTX class tables are not merged; name each in `plot`",
            inputs[0].display()
        ),
    };
    say!("merged {n} rows into {}", output.display());
    Ok(EXIT_OK)
}

fn inspect_cmd(args: InspectArgs) -> Result<i32> {
    use clvscu::inspect::cache::PRIVATE_CACHE_ENV;
    // With --sass, OpenCL's SASS is the code NVIDIA's OpenCL built itself, taken from a
    // private compute cache: the driver reads CUDA_CACHE_PATH once, at start, so this runs
    // again in a process of its own with the cache folder set.
    if args.sass && std::env::var_os(PRIVATE_CACHE_ENV).is_none() {
        let cache = args.out.join(".compute-cache");
        clvscu::export::safe::prepare_dir(&args.out, true)?;
        let _ = std::fs::remove_dir_all(&cache);
        std::fs::create_dir_all(&cache)?;
        let status = std::process::Command::new(std::env::current_exe()?)
            .args(std::env::args_os().skip(1))
            .env("CUDA_CACHE_PATH", &cache)
            .env("CUDA_CACHE_DISABLE", "0")
            .env(PRIVATE_CACHE_ENV, &cache)
            .status()?;
        let _ = std::fs::remove_dir_all(&cache);
        return Ok(status.code().unwrap_or(EXIT_INTERRUPTED));
    }
    // Every table sets CUDA's PTX beside OpenCL's: without NVRTC each kernel would repeat the
    // same note and the tables would be empty, so say it once and write nothing.
    let sources = args.devices.sources()?;
    if let Err(reason) = cuda::nvrtc_availability() {
        bail!("inspect compiles every CUDA kernel with NVRTC: {reason}");
    }
    // A device the user named must exist; without a selector a missing API is a note.
    let mut cl = match OpenClBackend::open(args.devices.cl_device.as_deref()) {
        Ok(b) => Some(b),
        Err(e) if args.devices.cl_device.is_some() => return Err(e.into()),
        Err(e) => {
            say_err!("note: {e}");
            None
        }
    };
    let mut cu = match CudaBackend::open(args.devices.cuda_device.as_deref()) {
        Ok(b) => Some(b),
        Err(e) if args.devices.cuda_device.is_some() => return Err(e.into()),
        Err(e) => {
            say_err!(
                "note: {e}; CUDA PTX comes from NVRTC alone (target {})",
                args.arch
            );
            None
        }
    };
    let report = inspect::run(
        &sources,
        cl.as_mut().map(|b| b as &mut dyn Backend),
        cu.as_mut().map(|b| b as &mut dyn Backend),
        &cuda::compile_to_ptx,
        &inspect::Options {
            arch: &args.arch,
            local: args.local,
            sass: args.sass,
            progress: Some(&|line: String| say!("{line}")),
        },
        &args.out,
    )?;
    say!("{}", printable_lines(&report.markdown));
    for note in &report.notes {
        say!("note: {note}");
    }
    say!(
        "wrote {} files in {}",
        report.files.len(),
        args.out.display()
    );
    Ok(EXIT_OK)
}

fn report(inputs: &[PathBuf], out: &Path, html: bool) -> Result<i32> {
    let written = clvscu::report::write_report(inputs, out, html)?;
    say!(
        "{} run folders on {}:",
        written.folders,
        written.gpus_text()
    );
    // The files a reader opens are named; the charts and pages below them (hundreds for a
    // large tree) are counted, and the index leads to them.
    let (top, below): (Vec<&PathBuf>, Vec<&PathBuf>) =
        written.files.iter().partition(|f| f.parent() == Some(out));
    for f in top {
        say!("{}", f.display());
    }
    if !below.is_empty() {
        let what = if html { "charts and pages" } else { "charts" };
        say!(
            "and {} more files in {}: {what}",
            below.len(),
            out.display()
        );
    }
    Ok(EXIT_OK)
}

/// `report --findings`: findings.md and the headline chart of the suite folders side by side,
/// into `--out` (default docs), and the headline block of `--readme`.
fn findings_cmd(inputs: &[PathBuf], out: Option<&Path>, readme: Option<&Path>) -> Result<i32> {
    let out = out.unwrap_or(Path::new("docs"));
    let written = clvscu::report::findings::write_docs(inputs, out, readme)?;
    for f in written {
        say!("{}", f.display());
    }
    Ok(EXIT_OK)
}

fn diff(
    old: &Path,
    new: &Path,
    out: Option<&Path>,
    noise_pct: f64,
    fail_on_regression: bool,
) -> Result<i32> {
    use clvscu::report::{diff, markdown};
    if !(noise_pct.is_finite() && noise_pct >= 0.0) {
        bail!("--noise {noise_pct}: expected a percentage of 0 or more");
    }
    if let Some(dir) = out {
        // Like every output folder: one holding a link is refused by name, before any work.
        clvscu::export::safe::check_dir(dir, true)?;
    }
    let test = clvscu::stats::change::ChangeTest {
        noise: noise_pct / 100.0,
        ..Default::default()
    };
    let d = diff::diff(&[old.to_path_buf()], &[new.to_path_buf()], &test)?;
    let md = markdown::render(&diff::doc(
        &d,
        &old.display().to_string(),
        &new.display().to_string(),
    ));
    say_text!("{}", printable_lines(&md));
    if let Some(dir) = out {
        clvscu::export::write_atomic(&dir.join("diff.md"), md.as_bytes())?;
        clvscu::export::write_atomic(&dir.join("diff.csv"), &diff::csv(&d)?)?;
        say_err!("wrote diff.md and diff.csv in {}", dir.display());
    }
    Ok(if fail_on_regression {
        regression_code(&d)
    } else {
        EXIT_OK
    })
}

/// [`EXIT_REGRESSED`] when NEW is worse than OLD in any way, each way named on stderr: a
/// quantity that regressed, a side that fails in NEW but did not in OLD (a kernel that
/// stopped verifying is worse than a slower one), or a comparison of OLD missing from NEW
/// (a run that lost work must not pass as one without regressions); else 0.
fn regression_code(d: &clvscu::report::diff::Diff) -> i32 {
    let regressed = clvscu::stats::change::Verdict::Regressed.as_str();
    let rows: Vec<_> = d.rows.iter().filter(|r| r.verdict == regressed).collect();
    for r in &rows {
        say_err!(
            "regressed: {}: {} {} ({:+.1}%)",
            printable(&r.study),
            printable(&r.comparison),
            r.quantity,
            r.change_pct
        );
    }
    for f in &d.new_failures {
        say_err!("regressed: fails now: {}", printable(f));
    }
    for r in &d.removed {
        say_err!("regressed: missing from NEW: {}", printable(r));
    }
    if rows.is_empty() && d.new_failures.is_empty() && d.removed.is_empty() {
        EXIT_OK
    } else {
        EXIT_REGRESSED
    }
}
