//! Whether a problem's [`Footprint`] fits a side's device and the host, checked before anything is
//! allocated: the host aborts the process on a failed allocation, which no error path can turn into
//! a message. The counts err towards refusing only sizes far past a measurement's needs.

use crate::backend::DeviceInfo;
use crate::families::{self, FamilyId, Footprint, Size};
use crate::host_memory::{available_host_bytes, HostMemoryError};

/// A problem too large for a side's device or for the host.
#[derive(Debug, thiserror::Error)]
pub enum FitError {
    #[error("{what} needs about {needed} bytes of device memory; {device} has {limit} bytes")]
    Device {
        what: String,
        needed: u64,
        device: String,
        limit: u64,
    },
    #[error(
        "{what} needs one buffer of about {largest} bytes; {device} allows {limit} bytes in one \
         allocation"
    )]
    Largest {
        what: String,
        largest: u64,
        device: String,
        limit: u64,
    },
    #[error(transparent)]
    Host(#[from] HostMemoryError),
}

pub fn of(family: FamilyId, size: Size) -> Footprint {
    families::get(family).footprint(size)
}

/// The checks for one side, before anything is made: the device's memory and largest
/// allocation first (the usual limit), then the host's. A device that is not a GPU (PoCL's
/// CPU device) shares the host's memory, so its buffers and the host's copies count together.
pub fn check(family: FamilyId, size: Size, device: &DeviceInfo) -> Result<(), FitError> {
    let what = format!("{} size {size}", family.name());
    check_footprint(of(family, size), device, available_host_bytes(), &what)
}

/// [`check`]'s device half, for inputs already made: what preparing a run checks again before
/// it allocates. The footprint's device bytes are raised to the `uploaded` bytes of the inputs
/// where a size alone undercounts them: a Matrix Market file's size is its rows and entries,
/// and its x vector as long as its columns. The host is not held again: a runner checks it
/// before the inputs are made, and they now hold their share of it.
pub fn check_device(
    family: FamilyId,
    size: Size,
    device: &DeviceInfo,
    uploaded: u64,
) -> Result<(), FitError> {
    let fp = of(family, size);
    let fp = Footprint {
        device: fp.device.max(uploaded),
        ..fp
    };
    let what = format!("{} size {size}", family.name());
    check_footprint(fp, device, None, &what)
}

/// [`check`] against `host_available` bytes (none: the system does not say).
pub fn check_footprint(
    fp: Footprint,
    device: &DeviceInfo,
    host_available: Option<u64>,
    what: &str,
) -> Result<(), FitError> {
    // Each limit only where the device reports one; the largest allocation is the refusal the
    // buffer would meet later, before its inputs are made.
    let limit = device.global_mem_bytes;
    if limit > 0 && fp.device > limit {
        return Err(FitError::Device {
            what: what.to_string(),
            needed: fp.device,
            device: device.name.clone(),
            limit,
        });
    }
    let limit = device.max_alloc_bytes;
    if limit > 0 && fp.largest > limit {
        return Err(FitError::Largest {
            what: what.to_string(),
            largest: fp.largest,
            device: device.name.clone(),
            limit,
        });
    }
    let host = if device.is_gpu {
        fp.host
    } else {
        fp.host.saturating_add(fp.device)
    };
    match host_available {
        Some(limit) => Ok(crate::host_memory::check_host_against(host, limit, what)?),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host_memory::{check_host_against, parse_meminfo};
    use crate::rows::FamilyId;

    fn device(bytes: u64) -> DeviceInfo {
        DeviceInfo {
            name: "dev".into(),
            global_mem_bytes: bytes,
            ..Default::default()
        }
    }

    /// The sizes that took 14 GB to 16 GB of host memory before a refusal, or aborted, on a
    /// machine with PoCL's CPU device: each needs more than 8 GiB on both sides.
    #[test]
    fn sizes_the_probe_found_are_refused_naming_bytes_and_limit() {
        let eight = 8u64 << 30;
        let cases = [
            (FamilyId::Bfs, Size::vector(1 << 31)),
            (FamilyId::Stencil, Size::vector(1600)),
            (FamilyId::Matvec, Size::matrix(65536, 65535)),
            (FamilyId::Sobel, Size::matrix(60000, 60000)),
        ];
        for (family, size) in cases {
            let fp = of(family, size);
            let e = check_footprint(fp, &device(eight), None, "x")
                .unwrap_err()
                .to_string();
            assert!(e.contains(&format!("dev has {eight} bytes")), "{e}");
            let e = check_host_against(fp.host, eight, "x")
                .unwrap_err()
                .to_string();
            assert!(e.contains(&format!("{eight} bytes are available")), "{e}");
        }
    }

    /// PoCL's CPU device has the host's memory: its buffers and the host's copies are one
    /// pool, while a GPU's are two.
    #[test]
    fn a_cpu_device_counts_device_and_host_bytes_as_one_pool() {
        let fp = Footprint {
            host: 60,
            device: 50,
            largest: 40,
        };
        let gpu = DeviceInfo {
            is_gpu: true,
            ..device(100)
        };
        assert!(check_footprint(fp, &gpu, Some(100), "x").is_ok());
        let e = check_footprint(fp, &device(100), Some(100), "x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("needs about 110 bytes of host memory"), "{e}");
        assert!(check_footprint(fp, &device(100), Some(110), "x").is_ok());
    }

    #[test]
    fn the_largest_buffer_is_held_against_the_largest_allocation() {
        let fp = of(FamilyId::Matvec, Size::matrix(40000, 40000));
        assert_eq!(fp.largest, 40000 * 40000 * 4);
        let small_alloc = DeviceInfo {
            is_gpu: true,
            max_alloc_bytes: 4 << 30,
            ..device(u64::MAX)
        };
        let e = check_footprint(fp, &small_alloc, None, "m")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("one buffer of about 6400000000 bytes")
                && e.contains("allows 4294967296 bytes in one allocation"),
            "{e}"
        );
    }

    #[test]
    fn a_study_size_fits_and_an_absurd_one_saturates() {
        let fp = of(FamilyId::Matvec, Size::matrix(60989, 1100));
        assert!(fp.device < 1 << 30 && fp.host < 2 << 30, "{fp:?}");
        assert_eq!(of(FamilyId::Sgemm, Size::vector(u64::MAX)).device, u64::MAX);
    }

    #[test]
    fn the_host_limit_is_named() {
        let e = check_host_against(2000, 1000, "matvec size 10x10")
            .unwrap_err()
            .to_string();
        assert!(e.contains("2000 bytes of host memory; 1000 bytes are available"));
    }

    #[test]
    fn meminfo_reads_kib() {
        let t = "MemTotal:       16000 kB\nMemAvailable:    8000 kB\n";
        assert_eq!(parse_meminfo(t, "MemAvailable:"), Some(8000 * 1024));
    }
}
