//! Finding CUDA: the driver, every device, and the one a selector names.

use std::sync::Arc;

use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::CudaContext;

use super::nvrtc::{nvrtc_availability, nvrtc_version};
use super::API;
use crate::backend::select::{self, Candidate};
use crate::backend::{BackendError, DeviceInfo, Result};

/// The device count, where the driver loads and reports at least one.
pub fn driver_availability() -> Result<usize> {
    // SAFETY: only tries to dlopen the library by its candidate names.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        let why = "libcuda.so.1 (the NVIDIA driver) could not be loaded";
        return Err(BackendError::unavailable(API, why));
    }
    let why = match CudaContext::device_count() {
        Ok(n) if n > 0 => return Ok(n as usize),
        Ok(_) => "the CUDA driver reports no device".to_string(),
        Err(e) => format!("the CUDA driver could not be initialised: {e:?}"),
    };
    Err(BackendError::unavailable(API, why))
}

pub fn availability() -> Result<usize> {
    let n = driver_availability()?;
    nvrtc_availability()?;
    Ok(n)
}

pub fn arch_name(cc: (i32, i32)) -> &'static str {
    // NVRTC takes a &'static str through cudarc. A capability between or above the listed ones
    // gets the newest target it can run (PTX is JIT-compiled forward, never backward), so an
    // 8.7 device gets compute_86, not a target its driver refuses.
    const TARGETS: [((i32, i32), &str); 8] = [
        ((7, 0), "compute_70"),
        ((7, 5), "compute_75"),
        ((8, 0), "compute_80"),
        ((8, 6), "compute_86"),
        ((8, 9), "compute_89"),
        ((9, 0), "compute_90"),
        ((10, 0), "compute_100"),
        ((12, 0), "compute_120"),
    ];
    TARGETS
        .iter()
        .rev()
        .find(|(target, _)| *target <= cc)
        .map_or(TARGETS[0].1, |(_, name)| name)
}

pub fn list_devices() -> Result<Vec<DeviceInfo>> {
    let n = driver_availability()?;
    (0..n)
        .map(|i| {
            let ctx = CudaContext::new(i).map_err(|e| {
                BackendError::driver(API, &format!("cuCtxCreate({i})"), format!("{e:?}"))
            })?;
            Ok(describe(&ctx))
        })
        .collect()
}

fn describe(ctx: &Arc<CudaContext>) -> DeviceInfo {
    // A device attribute as a count; a negative answer (none is expected) reads as unknown.
    let attr = |a: Attr| ctx.attribute(a).ok().and_then(|v| u32::try_from(v).ok());
    DeviceInfo {
        api: API.label().into(),
        platform: "CUDA".into(),
        name: ctx.name().unwrap_or_else(|_| "?".into()),
        vendor: "NVIDIA".into(),
        driver_version: driver_version(),
        api_version: nvrtc_version()
            .map(|v| format!("NVRTC {v}"))
            .unwrap_or_else(|| "NVRTC unavailable".into()),
        compute_units: attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).unwrap_or(0),
        max_work_group_size: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK).unwrap_or(0),
        local_mem_bytes: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)
            .map_or(0, u64::from),
        global_mem_bytes: ctx.total_mem().map_or(0, |b| b as u64),
        max_alloc_bytes: ctx.total_mem().map_or(0, |b| b as u64),
        // The driver reports kHz.
        core_clock_mhz: attr(Attr::CU_DEVICE_ATTRIBUTE_CLOCK_RATE).map(|k| k / 1000),
        memory_clock_mhz: attr(Attr::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)
            .filter(|k| *k > 0)
            .map(|k| k / 1000),
        memory_bus_width_bits: attr(Attr::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)
            .filter(|b| *b > 0),
        compute_capability: ctx.compute_capability().ok(),
        has_subgroups: true,
        is_gpu: true,
        pci_bus: attr(Attr::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)
            .zip(attr(Attr::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID))
            .map(|(bus, device)| crate::backend::pci_bus_text(bus, device)),
    }
}

/// By default device 0.
pub fn select(devices: &[DeviceInfo], selector: Option<&str>) -> Result<usize> {
    let candidates: Vec<Candidate> = devices
        .iter()
        .map(|info| Candidate {
            info,
            platform_device: None,
        })
        .collect();
    select::pick(API, &candidates, selector, false)
}

/// `580.159.04 (CUDA 13.0)`, naming the driver as NVIDIA's OpenCL does; the CUDA version
/// alone where the kernel module's cannot be read.
fn driver_version() -> String {
    let mut version = 0;
    // SAFETY: the driver library is loaded (a context exists); the out-pointer is valid.
    let r = unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) };
    let cuda = if r == cudarc::driver::sys::CUresult::CUDA_SUCCESS {
        format!("CUDA {}.{}", version / 1000, (version % 1000) / 10)
    } else {
        format!("CUDA unknown (cuDriverGetVersion: {r:?})")
    };
    match std::fs::read_to_string("/proc/driver/nvidia/version")
        .ok()
        .and_then(|t| kernel_module_version(&t))
    {
        Some(nvidia) => format!("{nvidia} ({cuda})"),
        None => cuda,
    }
}

/// The first word of digits and dots (one at least) in `/proc/driver/nvidia/version`.
fn kernel_module_version(text: &str) -> Option<String> {
    text.lines().next()?.split_whitespace().find_map(|w| {
        let looks = w.contains('.') && w.chars().all(|c| c.is_ascii_digit() || c == '.');
        looks.then(|| w.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_module_version_is_read_from_its_line() {
        let text = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct  2 2025\nGCC version:  gcc version 13.3.0\n";
        assert_eq!(kernel_module_version(text).as_deref(), Some("580.159.04"));
        assert_eq!(kernel_module_version("no version here\n"), None);
        assert_eq!(kernel_module_version(""), None);
    }

    #[test]
    fn a_capability_gets_the_newest_target_it_can_run() {
        assert_eq!(arch_name((9, 0)), "compute_90");
        assert_eq!(arch_name((8, 7)), "compute_86");
        assert_eq!(arch_name((12, 1)), "compute_120");
        assert_eq!(arch_name((9, 9)), "compute_90");
        assert_eq!(arch_name((6, 1)), "compute_70");
    }
}
