//! `clvscu devices`, `studies`, `calibrate` and `parity`: the commands that need no run folder.

use anyhow::Result;

use clvscu::backend::{cuda, opencl, BackendError, DeviceInfo, Runtime};
use clvscu::session::provenance::{self, GpuSnapshot};
use clvscu::study;

use crate::cli::args::{CalibrateArgs, DeviceArgs};

use crate::cli::setup::{open_pair, RUNNING};
use crate::cli::stopping::EXIT_OK;

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
    let or_na = |v: Option<u32>, unit: &str| v.map_or("n/a".into(), |v| format!("{v} {unit}"));
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
        or_na(d.core_clock_mhz, "MHz"),
        or_na(d.memory_clock_mhz, "MHz"),
        or_na(d.memory_bus_width_bits, "bit"),
        peak
    );
    if let Some((ma, mi)) = d.compute_capability {
        say!("      compute capability {ma}.{mi}");
    }
    if d.api == "OpenCL" {
        let subgroups = if d.has_subgroups { "yes" } else { "no" };
        say!("      sub-groups: {subgroups}");
    }
}

pub(crate) fn devices() -> Result<i32> {
    say!("OpenCL:");
    match opencl::list_devices() {
        Ok(list) if list.is_empty() => say!("  no OpenCL device"),
        Ok(list) => {
            for (i, d) in list.iter().enumerate() {
                let at = format!("  [{i}] {}:{}", d.platform_index, d.device_index);
                print_device(&at, &d.info);
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
        None => match cuda::nvrtc_availability() {
            Err(BackendError::Unavailable { reason, .. }) => say!("NVRTC unavailable: {reason}"),
            _ => say!("NVRTC unavailable"),
        },
    }
    Ok(EXIT_OK)
}

pub(crate) fn studies() -> Result<i32> {
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

pub(crate) fn calibrate(args: &CalibrateArgs) -> Result<i32> {
    args.devices.one_cuda_device("calibrate")?;
    let mut sides = open_pair(&args.devices, args.pair, None, RUNNING)?;
    let sources = args.devices.sources()?;
    let plan = if args.quick {
        clvscu::calibrate::CalibrationPlan::quick()
    } else {
        clvscu::calibrate::CalibrationPlan::full()
    };
    clvscu::export::safe::prepare_dir(&args.out, true)?;
    let mut backends: Vec<&mut dyn Runtime> = vec![sides.a.as_mut()];
    if let Some(b) = sides.b.as_mut() {
        backends.push(b.as_mut());
    }
    let describe = |d: &DeviceInfo| format!("{} {} ({})", d.api, d.name, d.driver_version);
    let names: Vec<String> = backends.iter().map(|b| describe(b.info())).collect();
    say!("calibrating {} ...", names.join(" and "));
    let found = clvscu::calibrate::calibrate(&mut backends, &sources, &plan)?;
    let title = format!("clvscu calibrate: {}", names.join(" / "));
    clvscu::calibrate::write(&args.out, &found, &title)?;
    let command_line: Vec<String> = std::env::args().collect();
    let infos: Vec<&DeviceInfo> = backends.iter().map(|b| b.info()).collect();
    let mut prov = provenance::common(&infos, &sources, &command_line, GpuSnapshot::now());
    prov.study = "calibrate".into();
    clvscu::export::json::write_json_atomic(&args.out.join("provenance.json"), &prov)?;
    say!("{}", clvscu::calibrate::markdown(&found));
    say!("written: {}", args.out.display());
    Ok(EXIT_OK)
}

pub(crate) fn parity(args: &DeviceArgs) -> Result<i32> {
    args.one_cuda_device("parity")?;
    let allow = clvscu::parity::load_allow_list(clvscu::parity::EMBEDDED_ALLOW_LIST)?;
    let report = clvscu::parity::check(&args.sources()?, &allow);
    say!("{}", report.render());
    Ok(if report.passed() { EXIT_OK } else { 1 })
}
