//! `plot`, `merge`, `inspect`, `report` (and its findings) and `diff`.

use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Result};

use clvscu::backend::cuda::{self, CudaBackend};
use clvscu::backend::opencl::OpenClBackend;
use clvscu::backend::{BackendError, Runtime};
use clvscu::export::csv::merge_files;
use clvscu::plot::input::CsvKind;
use clvscu::rows::{MeasurementRow, PrRow, SampleRow};
use clvscu::terminal::{printable, printable_lines};
use clvscu::{inspect, plot};

use crate::cli::args::{DiffArgs, InspectArgs, ReportArgs};

use crate::cli::stopping::{EXIT_INTERRUPTED, EXIT_OK, EXIT_REGRESSED};

pub(crate) fn plot_cmd(inputs: &[PathBuf], out: &Path) -> Result<i32> {
    let data = plot::input::load(inputs, clvscu::families::catalog())?;
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
        ensure!(input.exists(), "merge: {} does not exist", input.display());
        if !input.is_dir() {
            files.push(input.clone());
            continue;
        }
        ensure!(
            matches!(name, "measurements.csv" | "prs.csv" | "samples.csv"),
            "{} is a folder: name the output measurements.csv, prs.csv or samples.csv to \
             say which file of each run folder to merge",
            input.display()
        );
        let folders = clvscu::report::load::find_run_folders(std::slice::from_ref(input))?;
        files.extend(folders.iter().map(|f| f.join(name)).filter(|f| f.is_file()));
    }
    ensure!(
        files.len() >= 2,
        "merge needs at least two {} files; found {}",
        if name.is_empty() { "CSV" } else { name },
        files.len()
    );
    Ok(files)
}

pub(crate) fn merge(inputs: &[PathBuf], output: &Path) -> Result<i32> {
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

pub(crate) fn inspect_cmd(args: InspectArgs) -> Result<i32> {
    use clvscu::inspect::cache::PRIVATE_CACHE_ENV;
    args.devices.one_cuda_device("inspect")?;
    // With --sass, OpenCL's SASS is read from a private compute cache: the driver reads
    // CUDA_CACHE_PATH once, at start, so this runs again in a process of its own with it set.
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
    let d = &args.devices;
    let mut cl = optional(
        OpenClBackend::open(d.cl_device.as_deref()),
        &d.cl_device,
        "",
    )?;
    let nvrtc_alone = format!("; CUDA PTX comes from NVRTC alone (target {})", args.arch);
    let mut cu = optional(
        CudaBackend::open(d.cuda_device.as_deref()),
        &d.cuda_device,
        &nvrtc_alone,
    )?;
    let report = inspect::run(
        &sources,
        cl.as_mut().map(|b| b as &mut dyn Runtime),
        cu.as_mut().map(|b| b as &mut dyn Runtime),
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

/// The backend `opened`: one the user named (`selector`) must exist; without a selector a
/// missing API is a note, its error followed by `then`.
fn optional<B>(
    opened: Result<B, BackendError>,
    selector: &Option<String>,
    then: &str,
) -> Result<Option<B>> {
    match opened {
        Ok(b) => Ok(Some(b)),
        Err(e) if selector.is_some() => Err(e.into()),
        Err(e) => {
            say_err!("note: {e}{then}");
            Ok(None)
        }
    }
}

pub(crate) fn report(args: ReportArgs) -> Result<i32> {
    if args.findings {
        let out = args.out.as_deref().unwrap_or(Path::new("docs"));
        for f in clvscu::report::findings::write_docs(&args.inputs, out, args.readme.as_deref())? {
            say!("{}", f.display());
        }
        return Ok(EXIT_OK);
    }
    let (out, html) = (args.out.as_deref(), args.html);
    let out = out.unwrap_or(Path::new("clvscu-report"));
    let written =
        clvscu::report::write_report(&args.inputs, out, html, &clvscu::families::catalog())?;
    say!(
        "{} run folders on {}:",
        written.folders,
        written.gpus_text()
    );
    // Named: the files a reader opens; counted: the charts and pages below (hundreds, at times).
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

pub(crate) fn diff(args: &DiffArgs) -> Result<i32> {
    use clvscu::report::{diff, markdown};
    let (old, new, out, noise_pct) = (&args.old, &args.new, args.out.as_deref(), args.noise);
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
    let d = diff::diff(std::slice::from_ref(old), std::slice::from_ref(new), &test)?;
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
    if !args.fail_on_regression {
        return Ok(EXIT_OK);
    }
    // NEW is worse than OLD in any way, each named on stderr: a quantity that regressed, a side
    // that fails now, or a comparison missing from NEW (lost work).
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
    let whole = rows.is_empty() && d.new_failures.is_empty() && d.removed.is_empty();
    Ok(if whole { EXIT_OK } else { EXIT_REGRESSED })
}
