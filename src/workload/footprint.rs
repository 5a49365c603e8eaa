//! Bytes a problem takes on the host (inputs, the f64 reference and its tolerances, the result
//! read back) and on the device (inputs and outputs), per family, so a size that cannot fit is
//! refused before anything is allocated: the host aborts the process on a failed allocation,
//! which no error path can turn into a message.
//!
//! The counts are upper estimates of what the generators and buffers hold at their peak, not
//! exact: they exist to tell "fits" from "cannot fit", and err towards refusing only sizes
//! far past what a measurement needs.

pub use super::host_memory::{available_host_bytes, check_host};
use super::{bfs, constmem, md, stencil, FamilyKind, Size};
use crate::backend::DeviceInfo;

/// Host and device bytes of one problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footprint {
    pub host: u64,
    pub device: u64,
}

/// Saturating sums and products, so an absurd size pins at `u64::MAX` (refused) rather than
/// wrapping to something that fits.
fn mul(a: u64, b: u64) -> u64 {
    a.saturating_mul(b)
}

fn add(a: u64, b: u64) -> u64 {
    a.saturating_add(b)
}

/// `inputs` floats in, `outputs` floats out, `checked` outputs with an f64 reference and its
/// tolerance (16 bytes each), plus `extra` host bytes a generator holds while it works.
fn plain(inputs: u64, outputs: u64, checked: u64, extra: u64) -> Footprint {
    let device = mul(add(inputs, outputs), 4);
    let host = add(add(device, mul(checked, 16)), extra);
    Footprint { host, device }
}

/// The footprint of `family` at `size`.
pub fn of(family: FamilyKind, size: Size) -> Footprint {
    use FamilyKind::*;
    let n = size.rows;
    match family {
        Matvec => plain(add(mul(n, size.cols), size.cols), n, mul(n, 2), 0),
        Reduce | Flops | Math => plain(n, n, 1, 0),
        Bandwidth | Fill => plain(n, n, 0, 0),
        // Pinned or pageable host buffers beside the device copy.
        Transfer => plain(n, n, 0, mul(n, 8)),
        Fft => plain(mul(n, 2), mul(n, 2), mul(n, 2), 0),
        Stencil => {
            let p = stencil::Grid::of(size).points();
            // The reference step keeps the magnitudes (f64) beside the values.
            plain(p, p, p, mul(p, 8))
        }
        Sobel => {
            let p = constmem::Image::of(size).pixels();
            plain(p, p, p, 0)
        }
        Broadcast => plain(n, n, n, 0),
        Spmv => {
            let (rows, nnz) = (n, size.cols);
            // Values and columns (8 per entry), the row pointers, x and y; the generator's
            // row lengths (8 bytes a row).
            plain(add(mul(nnz, 2), mul(rows, 3)), rows, rows, mul(rows, 8))
        }
        Md => {
            let atoms = n;
            let list = mul(atoms, md::NEIGHBOURS as u64);
            plain(add(mul(atoms, 4), list), mul(atoms, 4), mul(atoms, 4), 0)
        }
        Bfs => {
            let edges = bfs::edges(n);
            // CSR offsets and edges, the frontier, visited and cost words; on the host the
            // generator's source and destination lists (8 bytes an edge) and the levels.
            let fp = plain(add(n, edges), mul(n, 6), n, 0);
            Footprint {
                host: add(fp.host, mul(edges, 8)),
                device: fp.device,
            }
        }
        Sgemm => plain(mul(mul(n, n), 2), mul(n, n), 0, 0),
        Launch => plain(1, 1, 1, 0),
    }
}

/// Refuses `needed` device bytes above what `device` reports (when it reports anything).
pub fn check_device(needed: u64, device: &DeviceInfo, what: &str) -> Result<(), String> {
    let limit = device.global_mem_bytes;
    if limit > 0 && needed > limit {
        return Err(format!(
            "{what} needs about {needed} bytes of device memory; {} has {limit} bytes",
            device.name
        ));
    }
    Ok(())
}

/// Both checks for one side: the device's first, as the device is the usual limit.
pub fn check(family: FamilyKind, size: Size, device: &DeviceInfo) -> Result<(), String> {
    let fp = of(family, size);
    let what = format!("{} size {size}", family.name());
    check_device(fp.device, device, &what)?;
    check_host(fp.host, &what)
}

#[cfg(test)]
mod tests {
    use super::super::host_memory::{check_host_against, parse_meminfo};
    use super::*;

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
            (FamilyKind::Bfs, Size::vector(1 << 31)),
            (FamilyKind::Stencil, Size::vector(1600)),
            (FamilyKind::Matvec, Size::matrix(65536, 65535)),
            (FamilyKind::Sobel, Size::matrix(60000, 60000)),
        ];
        for (family, size) in cases {
            let fp = of(family, size);
            let e = check_device(fp.device, &device(eight), "x").unwrap_err();
            assert!(e.contains(&format!("dev has {eight} bytes")), "{e}");
            let e = check_host_against(fp.host, eight, "x").unwrap_err();
            assert!(e.contains(&format!("{eight} bytes are available")), "{e}");
        }
    }

    #[test]
    fn a_study_size_fits_and_an_absurd_one_saturates() {
        let fp = of(FamilyKind::Matvec, Size::matrix(60989, 1100));
        assert!(fp.device < 1 << 30 && fp.host < 2 << 30, "{fp:?}");
        assert_eq!(
            of(FamilyKind::Sgemm, Size::vector(u64::MAX)).device,
            u64::MAX
        );
    }

    #[test]
    fn the_host_limit_is_named() {
        let e = check_host_against(2000, 1000, "matvec size 10x10").unwrap_err();
        assert!(e.contains("2000 bytes of host memory; 1000 bytes are available"));
    }

    #[test]
    fn meminfo_reads_kib() {
        let t = "MemTotal:       16000 kB\nMemAvailable:    8000 kB\n";
        assert_eq!(parse_meminfo(t, "MemAvailable:"), Some(8000 * 1024));
    }
}
