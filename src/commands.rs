//! The subcommands, at the edge: `anyhow` errors with context, human-readable output.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{bail, Context, Result};

use clvscu::backend::cuda::{self, CudaBackend};
use clvscu::backend::opencl::{self, OpenClBackend};
use clvscu::backend::{Api, Backend, DeviceInfo};
use clvscu::export::csv::{merge_files, read_rows, write_rows, CsvSchema};
use clvscu::export::json::{write_json_atomic, DeviceProvenance, Provenance};
use clvscu::export::markdown;
use clvscu::inspect;
use clvscu::kernels::KernelSources;
use clvscu::plot;
use clvscu::record::{MeasurementRow, PrRow, SampleRow, Status};
use clvscu::runner::{self, RunContext, Sinks};
use clvscu::soak;
use clvscu::study;

use crate::cli::{Cli, Command, DeviceArgs, InspectArgs, Pairing, RunArgs};

pub const EXIT_OK: i32 = 0;
pub const EXIT_FAILED_CONFIGS: i32 = 3;
pub const EXIT_INTERRUPTED: i32 = 130;

pub fn dispatch(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Devices => devices(),
        Command::Studies => studies(),
        Command::Run(args) => run(args),
        Command::Parity { devices } => parity(&devices),
        Command::Plot { inputs, out } => plot_cmd(&inputs, &out),
        Command::Merge { inputs, output } => merge(&inputs, &output),
        Command::Inspect(args) => inspect_cmd(args),
    }
}

pub fn sources(args: &DeviceArgs) -> KernelSources {
    match &args.kernels_dir {
        Some(d) => KernelSources::from_dir(d),
        None => KernelSources::embedded(),
    }
}

fn print_device(prefix: &str, d: &DeviceInfo) {
    println!("{prefix} {} [{}]", d.name, d.platform);
    println!(
        "      vendor {} | driver {} | {}",
        d.vendor, d.driver_version, d.api_version
    );
    println!(
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
    println!(
        "      core clock {} | memory clock {} | bus width {} | peak bandwidth {}",
        clock(d.core_clock_mhz),
        clock(d.memory_clock_mhz),
        d.memory_bus_width_bits
            .map(|b| format!("{b} bit"))
            .unwrap_or_else(|| "n/a".into()),
        peak
    );
    if let Some((ma, mi)) = d.compute_capability {
        println!("      compute capability {ma}.{mi}");
    }
    if d.api == "OpenCL" {
        println!(
            "      sub-groups: {}",
            if d.has_subgroups { "yes" } else { "no" }
        );
    }
}

fn devices() -> Result<i32> {
    println!("OpenCL:");
    match opencl::list_devices() {
        Ok(list) if list.is_empty() => println!("  no OpenCL device"),
        Ok(list) => {
            for (i, d) in list.iter().enumerate() {
                print_device(
                    &format!("  [{i}] {}:{}", d.platform_index, d.device_index),
                    &d.info,
                );
            }
        }
        Err(e) => println!("  {e}"),
    }
    println!("CUDA:");
    match cuda::list_devices() {
        Ok(list) => {
            for (i, d) in list.iter().enumerate() {
                print_device(&format!("  [{i}]"), d);
            }
        }
        Err(e) => println!("  {e}"),
    }
    match cuda::nvrtc_version() {
        Some(v) => println!("NVRTC {v}: CUDA kernels can be compiled to PTX"),
        None => println!(
            "NVRTC unavailable: {}",
            cuda::nvrtc_availability().err().unwrap_or_default()
        ),
    }
    Ok(EXIT_OK)
}

fn studies() -> Result<i32> {
    for (name, _) in study::BUILTIN {
        let s = study::load(name)?;
        println!(
            "{name:<20} {:>4} comparisons  {}",
            s.comparisons.len(),
            s.description
        );
    }
    Ok(EXIT_OK)
}

/// The backends of a run; a missing API disables its side with a message, never a panic.
struct Sides {
    a: Box<dyn Backend>,
    b: Option<Box<dyn Backend>>,
}

fn open_sides(args: &RunArgs) -> Result<Sides> {
    let d = &args.devices;
    let open_cl =
        |sel: Option<&str>| OpenClBackend::open(sel).map(|b| Box::new(b) as Box<dyn Backend>);
    let open_cuda =
        || CudaBackend::open(d.cuda_device.as_deref()).map(|b| Box::new(b) as Box<dyn Backend>);
    match args.pair {
        Pairing::Opencl => Ok(Sides {
            a: open_cl(d.cl_device.as_deref())?,
            b: None,
        }),
        Pairing::Cuda => Ok(Sides {
            a: open_cuda()?,
            b: None,
        }),
        Pairing::OpenclOpencl => {
            let a = open_cl(d.cl_device.as_deref())?;
            let b = open_cl(args.cl_device_b.as_deref().or(d.cl_device.as_deref()))?;
            Ok(Sides { a, b: Some(b) })
        }
        Pairing::OpenclCuda => match (open_cl(d.cl_device.as_deref()), open_cuda()) {
            (Ok(a), Ok(b)) => Ok(Sides { a, b: Some(b) }),
            (Ok(a), Err(e)) => {
                eprintln!("note: {e}");
                eprintln!("note: running OpenCL only; no Performance Ratio can be formed");
                Ok(Sides { a, b: None })
            }
            (Err(e), Ok(b)) => {
                eprintln!("note: {e}");
                eprintln!("note: running CUDA only; no Performance Ratio can be formed");
                Ok(Sides { a: b, b: None })
            }
            (Err(ea), Err(eb)) => bail!("no backend can run:\n  {ea}\n  {eb}"),
        },
    }
}

fn gpu_query() -> String {
    std::process::Command::new("nvidia-smi")
        .args([
            "--query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw",
            "--format=csv",
        ])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "nvidia-smi not available".into())
}

fn provenance(
    study: &study::Study,
    sides: &Sides,
    sources: &KernelSources,
    before: &str,
) -> Provenance {
    let mut devices = vec![device_provenance(sides.a.info())];
    if let Some(b) = &sides.b {
        devices.push(device_provenance(b.info()));
    }
    let mut notes = vec![
        format!("kernel sources: {}", sources.origin()),
        format!("study file: {}", study.file),
    ];
    for stem in clvscu::kernels::stems() {
        notes.push(format!(
            "kernel source sha256/12 {stem}: OpenCL {} CUDA {}",
            runner::source_hash(sources, Api::OpenCl, stem),
            runner::source_hash(sources, Api::Cuda, stem)
        ));
    }
    Provenance {
        clvscu_version: env!("CARGO_PKG_VERSION").into(),
        git_commit: env!("CLVSCU_GIT_COMMIT").into(),
        command_line: std::env::args().collect(),
        host: hostname(),
        date_utc: chrono::Utc::now().to_rfc3339(),
        study: study.name.clone(),
        devices,
        gpu_query_before: before.to_string(),
        gpu_query_after: String::new(),
        notes,
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/etc/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

fn device_provenance(d: &DeviceInfo) -> DeviceProvenance {
    DeviceProvenance {
        api: d.api.clone(),
        platform: d.platform.clone(),
        device: d.name.clone(),
        driver: d.driver_version.clone(),
        api_version: d.api_version.clone(),
    }
}

fn run(args: RunArgs) -> Result<i32> {
    let mut study = study::load(&args.study)?;
    if let Some(only) = &args.only {
        study.comparisons.retain(|c| c.id.contains(only.as_str()));
        if study.comparisons.is_empty() {
            bail!(
                "--only '{only}' matches no comparison of study {}",
                study.name
            );
        }
    }
    let sources = sources(&args.devices);
    let mut sides = open_sides(&args)?;
    let out = args.out.clone().unwrap_or_else(|| {
        PathBuf::from("clvscu-results").join(format!(
            "{}-{}",
            study.name,
            chrono::Utc::now().format("%Y%m%dT%H%M%SZ")
        ))
    });
    let mut sinks = Sinks::open(&out, args.resume)
        .with_context(|| format!("cannot use output directory {}", out.display()))?;
    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let flag = interrupted.clone();
        // A second Ctrl-C while the current comparison finishes is ignored; rows on disk are
        // complete either way, since each is flushed as it is written.
        let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
    }
    let before = gpu_query();
    let mut prov = provenance(&study, &sides, &sources, &before);
    let prov_path = out.join("provenance.json");
    write_json_atomic(&prov_path, &prov)?;
    println!(
        "clvscu {} ({}) study '{}': {} comparisons; side A {} [{}]{}",
        env!("CARGO_PKG_VERSION"),
        env!("CLVSCU_GIT_COMMIT"),
        study.name,
        study.comparisons.len(),
        sides.a.info().name,
        sides.a.api(),
        sides
            .b
            .as_ref()
            .map(|b| format!(", side B {} [{}]", b.info().name, b.api()))
            .unwrap_or_default()
    );
    let ctx = RunContext {
        run_id: format!(
            "{}-{}",
            chrono::Utc::now().format("%Y%m%dT%H%M%SZ"),
            env!("CLVSCU_GIT_COMMIT")
        ),
        sources: &sources,
        interrupted: &interrupted,
        progress: std::io::IsTerminal::is_terminal(&std::io::stderr()),
    };
    let mut all = runner::RunSummary::default();
    let mut pass_rows = Vec::new();
    for pass in 0..args.passes.max(1) {
        let pass_start = std::time::Instant::now();
        let mut pass_study = study.clone();
        if args.passes > 1 {
            pass_study.name = format!("{}#pass{}", study.name, pass + 1);
            for c in &mut pass_study.comparisons {
                c.id = format!("{}#pass{}", c.id, pass + 1);
            }
        }
        let b: Option<&mut dyn Backend> = match &mut sides.b {
            Some(x) => Some(&mut **x),
            None => None,
        };
        let summary = runner::run_study(&pass_study, sides.a.as_mut(), b, &mut sinks, &ctx)?;
        if args.passes > 1 {
            let row = soak::PassRow {
                pass: pass + 1,
                seconds: pass_start.elapsed().as_secs_f64(),
                measurements_ok: summary
                    .measurements
                    .iter()
                    .filter(|m| m.status == Status::Ok)
                    .count(),
                failed: summary.failed.len(),
                resident_kib: soak::resident_kib(),
                open_fds: soak::open_fds(),
            };
            println!(
                "pass {}/{}: {:.1} s, resident {} KiB, {} open files",
                row.pass,
                args.passes,
                row.seconds,
                row.resident_kib.map_or("?".into(), |k| k.to_string()),
                row.open_fds.map_or("?".into(), |n| n.to_string())
            );
            pass_rows.push(row);
            write_rows(&out.join(soak::PASSES_CSV), &pass_rows)?;
        }
        all.measurements.extend(summary.measurements);
        all.prs.extend(summary.prs);
        all.skipped += summary.skipped;
        all.failed.extend(summary.failed);
        if summary.interrupted {
            all.interrupted = true;
            break;
        }
    }
    prov.gpu_query_after = gpu_query();
    write_json_atomic(&prov_path, &prov)?;
    report(&all, &out);
    let summary_md = format!(
        "# clvscu run: {}\n\n{}\n\n## Measurements\n\n{}\n\n## Performance Ratio\n\n{}\n",
        study.name,
        study.description,
        markdown::measurement_table(&all.measurements),
        markdown::pr_table(&all.prs)
    );
    clvscu::export::write_atomic(&out.join("summary.md"), summary_md.as_bytes())?;
    if !args.no_plot && !all.interrupted {
        match draw_from_dir(&out, &out.join("charts")) {
            Ok(files) => println!(
                "charts: {} files in {}",
                files.len(),
                out.join("charts").display()
            ),
            Err(e) => eprintln!("warning: charts not drawn: {e:#}"),
        }
    }
    if all.interrupted {
        eprintln!(
            "interrupted: every finished comparison is in {}; continue with --resume --out {}",
            out.display(),
            out.display()
        );
        return Ok(EXIT_INTERRUPTED);
    }
    if !all.failed.is_empty() {
        eprintln!(
            "{} configuration(s) failed and were excluded from every PR:",
            all.failed.len()
        );
        for f in &all.failed {
            eprintln!("  {f}");
        }
        return Ok(EXIT_FAILED_CONFIGS);
    }
    Ok(EXIT_OK)
}

fn report(all: &runner::RunSummary, out: &Path) {
    let ok = all
        .measurements
        .iter()
        .filter(|m| m.status == Status::Ok)
        .count();
    println!(
        "\n## Measurements\n\n{}",
        markdown::measurement_table(&all.measurements)
    );
    if !all.prs.is_empty() {
        println!(
            "\n## Performance Ratio (PR = perf(A) / perf(B))\n\n{}",
            markdown::pr_table(&all.prs)
        );
    }
    println!(
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
    let report = clvscu::parity::check(&sources(args), &allow);
    println!("{}", report.render());
    Ok(if report.passed() { EXIT_OK } else { 1 })
}

/// Collect measurement/PR/PTX-class CSVs from files or directories.
fn chart_data(inputs: &[PathBuf]) -> Result<plot::ChartData> {
    let mut data = plot::ChartData::default();
    let mut files = Vec::new();
    for input in inputs {
        if input.is_dir() {
            for name in [Sinks::MEASUREMENTS, Sinks::PRS, inspect::CLASSES_CSV] {
                let p = input.join(name);
                if p.exists() {
                    files.push(p);
                }
            }
        } else {
            files.push(input.clone());
        }
    }
    if files.is_empty() {
        bail!(
            "no result CSV found in {}",
            inputs
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    for f in files {
        let header = first_line_of(&f)?;
        if header == MeasurementRow::COLUMNS.join(",") {
            data.measurements.extend(read_rows::<MeasurementRow>(&f)?);
        } else if header == PrRow::COLUMNS.join(",") {
            data.prs.extend(read_rows::<PrRow>(&f)?);
        } else if header == inspect::ClassRow::COLUMNS.join(",") {
            let rows: Vec<inspect::ClassRow> = read_rows(&f)?;
            data.ptx_classes
                .extend(rows.into_iter().map(|r| plot::PtxClassCount {
                    pair: r.pair,
                    api: r.api,
                    class: r.class,
                    count: r.count,
                }));
        } else if header == SampleRow::COLUMNS.join(",") {
            continue;
        } else {
            bail!(
                "{}: line 1: not a clvscu CSV (header '{}')",
                f.display(),
                header
            );
        }
    }
    Ok(data)
}

fn first_line_of(path: &Path) -> Result<String> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(text
        .lines()
        .next()
        .unwrap_or("")
        .trim_start_matches('\u{feff}')
        .to_string())
}

fn draw_from_dir(dir: &Path, out: &Path) -> Result<Vec<PathBuf>> {
    let data = chart_data(&[dir.to_path_buf()])?;
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    Ok(plot::draw_all(
        &data,
        out,
        &[plot::Format::Png, plot::Format::Svg],
    )?)
}

fn plot_cmd(inputs: &[PathBuf], out: &Path) -> Result<i32> {
    let data = chart_data(inputs)?;
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let files = plot::draw_all(&data, out, &[plot::Format::Png, plot::Format::Svg])?;
    if files.is_empty() {
        println!("the data allows no chart (no verified measurement or PR)");
    }
    for f in files {
        println!("{}", f.display());
    }
    Ok(EXIT_OK)
}

fn merge(inputs: &[PathBuf], output: &Path) -> Result<i32> {
    let header = first_line_of(&inputs[0])?;
    let n = if header == MeasurementRow::COLUMNS.join(",") {
        merge_files::<MeasurementRow>(inputs, output)?
    } else if header == PrRow::COLUMNS.join(",") {
        merge_files::<PrRow>(inputs, output)?
    } else if header == SampleRow::COLUMNS.join(",") {
        merge_files::<SampleRow>(inputs, output)?
    } else {
        bail!(
            "{}: line 1: not a clvscu CSV (header '{}')",
            inputs[0].display(),
            header
        );
    };
    println!("merged {n} rows into {}", output.display());
    Ok(EXIT_OK)
}

fn inspect_cmd(args: InspectArgs) -> Result<i32> {
    let sources = sources(&args.devices);
    let mut cl = match OpenClBackend::open(args.devices.cl_device.as_deref()) {
        Ok(b) => Some(b),
        Err(e) => {
            eprintln!("note: {e}");
            None
        }
    };
    let mut cu = match CudaBackend::open(args.devices.cuda_device.as_deref()) {
        Ok(b) => Some(b),
        Err(e) => {
            eprintln!(
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
        &args.arch,
        args.local,
        &args.out,
    )?;
    println!("{}", report.markdown);
    for note in &report.notes {
        println!("note: {note}");
    }
    println!(
        "wrote {} files in {}",
        report.files.len(),
        args.out.display()
    );
    Ok(EXIT_OK)
}
