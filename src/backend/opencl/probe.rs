//! Finding OpenCL: the ICD loader, every device of every platform, the one a selector names.

use opencl3::device::{Device, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_GPU};
use opencl3::platform::get_platforms;
use opencl3::types::cl_device_id;

use super::{drv, API};
use crate::backend::select::{self, Candidate};
use crate::backend::{BackendError, DeviceInfo, Result};

pub fn availability() -> Result<()> {
    if !cl3::is_opencl_runtime_available() {
        let why = "the OpenCL ICD loader (libOpenCL.so.1) could not be loaded; install \
                   ocl-icd-libopencl1 and a driver such as pocl-opencl-icd";
        return Err(BackendError::unavailable(API, why));
    }
    let why = match get_platforms() {
        Ok(p) if p.is_empty() => "no OpenCL platform is installed (no ICD found)".to_string(),
        Ok(_) => return Ok(()),
        Err(e) => format!("no OpenCL platform could be listed: {e}"),
    };
    Err(BackendError::unavailable(API, why))
}

#[derive(Debug, Clone)]
pub struct ListedDevice {
    pub platform_index: usize,
    pub device_index: usize,
    /// The driver's handle; never leaves the backend.
    pub(in crate::backend) id: cl_device_id,
    pub info: DeviceInfo,
}

pub fn list_devices() -> Result<Vec<ListedDevice>> {
    availability()?;
    let platforms = get_platforms().map_err(drv("clGetPlatformIDs"))?;
    let mut out = Vec::new();
    let mut empty = Vec::new();
    for (pi, platform) in platforms.iter().enumerate() {
        let platform_name = platform.name().unwrap_or_else(|_| "?".into());
        let platform_version = platform.version().unwrap_or_default();
        // A platform with no device answers with an error code: note it, do not fail.
        let ids = match platform.get_devices(CL_DEVICE_TYPE_ALL) {
            Ok(ids) if !ids.is_empty() => ids,
            other => {
                let why = other.err().map(|e| format!(" ({e})")).unwrap_or_default();
                empty.push(format!("platform '{platform_name}' lists no device{why}"));
                continue;
            }
        };
        for (di, id) in ids.into_iter().enumerate() {
            let info = describe(id, &platform_name, &platform_version);
            out.push(ListedDevice {
                platform_index: pi,
                device_index: di,
                id,
                info,
            });
        }
    }
    if out.is_empty() && !empty.is_empty() {
        let mut reason = format!("no OpenCL device found: {}", empty.join("; "));
        if let Some(cause) = pocl_cache_problem() {
            reason.push_str(&format!("; the likely cause: {cause}"));
        }
        return Err(BackendError::Unavailable { api: API, reason });
    }
    Ok(out)
}

/// PoCL lists no device when it cannot use its kernel cache; name the folder and why.
fn pocl_cache_problem() -> Option<String> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    let (dir, from) = if let Some(d) = var("POCL_CACHE_DIR") {
        (std::path::PathBuf::from(d), "POCL_CACHE_DIR")
    } else if let Some(d) = var("XDG_CACHE_HOME") {
        (std::path::PathBuf::from(d).join("pocl"), "XDG_CACHE_HOME")
    } else {
        (
            std::path::PathBuf::from(var("HOME")?).join(".cache/pocl"),
            "HOME",
        )
    };
    // An anonymous temporary: nothing planted in the cache folder is written through.
    let usable = std::fs::create_dir_all(&dir).and_then(|_| tempfile::tempfile_in(&dir));
    usable.err().map(|e| {
        format!(
            "PoCL's kernel cache {} (from {from}) cannot be written: {e}; set POCL_CACHE_DIR \
             to a writable folder",
            dir.display()
        )
    })
}

fn describe(id: cl_device_id, platform: &str, platform_version: &str) -> DeviceInfo {
    let d = Device::new(id);
    let extensions = d.extensions().unwrap_or_default();
    let c_version = d.opencl_c_version().unwrap_or_default();
    let has_subgroups = extensions.contains("cl_khr_subgroups")
        || (c_version.contains("3.0") && extensions.contains("__opencl_c_subgroups"));
    let is_gpu = d.dev_type().is_ok_and(|t| t & CL_DEVICE_TYPE_GPU != 0);
    DeviceInfo {
        api: API.label().into(),
        platform: platform.to_string(),
        name: d.name().unwrap_or_else(|_| "?".into()).trim().to_string(),
        vendor: d.vendor().unwrap_or_default(),
        driver_version: d.driver_version().unwrap_or_default(),
        api_version: if platform_version.is_empty() {
            d.version().unwrap_or_default()
        } else {
            platform_version.to_string()
        },
        compute_units: d.max_compute_units().unwrap_or(0),
        max_work_group_size: saturate_u32(d.max_work_group_size().unwrap_or(0)),
        local_mem_bytes: d.local_mem_size().unwrap_or(0),
        global_mem_bytes: d.global_mem_size().unwrap_or(0),
        max_alloc_bytes: d.max_mem_alloc_size().unwrap_or(0),
        core_clock_mhz: d.max_clock_frequency().ok(),
        has_subgroups,
        is_gpu,
        // NVIDIA's attribute query (cl_nv_device_attribute_query); other platforms say
        // nothing, and a device without a place on the bus matches no CUDA device.
        pci_bus: extensions
            .contains("cl_nv_device_attribute_query")
            .then(|| d.pci_bus_id_nv().ok().zip(d.pci_slot_id_nv().ok()))
            .flatten()
            .map(|(bus, slot)| crate::backend::pci_bus_text(bus, slot)),
        // OpenCL has no standard query for the memory clock or bus width, so Eq. 2 cannot be
        // evaluated from OpenCL alone; the CUDA side of the same GPU supplies it.
        ..DeviceInfo::default()
    }
}

/// By default the first GPU.
pub fn select<'a>(devices: &'a [ListedDevice], selector: Option<&str>) -> Result<&'a ListedDevice> {
    let candidates: Vec<Candidate> = devices
        .iter()
        .map(|d| Candidate {
            info: &d.info,
            platform_device: Some((d.platform_index, d.device_index)),
        })
        .collect();
    let i = select::pick(API, &candidates, selector, true)?;
    Ok(&devices[i])
}

/// Saturated rather than wrapped to a small, wrong limit.
pub(super) fn saturate_u32(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}
