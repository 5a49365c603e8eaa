//! The `peaks` step against both of the paper's theoretical peaks: Eq. 2 (bandwidth, from the
//! memory clock and bus width the device reports; [`crate::backend::DeviceInfo::theoretical_peak_gbs`])
//! and Eq. 3 (single-precision FLOPS), computed here.
//!
//! Eq. 3 in Fang et al. is cores × clock × flops per core per cycle (GTX 280: 240 × 1.296 GHz
//! × 3 = 933.12 GFLOP/s; GTX 480: 480 × 1.401 GHz × 2 = 1344.96). Here, with a fused
//! multiply-add counted as two flops, peak = SMs × FP32 lanes per SM × 2 × clock:
//! - SMs: the device's `CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT` (OpenCL:
//!   `CL_DEVICE_MAX_COMPUTE_UNITS`), as [`DeviceInfo::compute_units`];
//! - FP32 lanes per SM: no API reports them; they follow from the compute capability the device
//!   reports (`CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR/MINOR`) through the CUDA C++
//!   Programming Guide's table of arithmetic throughput ("32-bit floating-point add, multiply,
//!   multiply-add", results per clock cycle per multiprocessor): [`fp32_lanes_per_sm`];
//! - clock: the device's `CU_DEVICE_ATTRIBUTE_CLOCK_RATE`, its highest (boost) SM clock
//!   (OpenCL: `CL_DEVICE_MAX_CLOCK_FREQUENCY`), as [`DeviceInfo::core_clock_mhz`].

use std::fmt::Write;

use crate::backend::DeviceInfo;
use crate::rows::{MeasurementRow, Metric, Status};

pub const FILE: &str = "peaks.md";

/// Eq. 3 with its factors, as the device gave them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Eq3 {
    pub sms: u32,
    pub lanes_per_sm: u32,
    pub clock_mhz: u32,
    pub gflops: f64,
}

/// FP32 results per clock per SM (the Programming Guide's throughput table) for a compute
/// capability; `None` for one the table does not list.
pub fn fp32_lanes_per_sm((major, minor): (i32, i32)) -> Option<u32> {
    match (major, minor) {
        (1, _) => Some(8),
        (2, 0) => Some(32),
        (2, 1) => Some(48),
        (3, _) => Some(192),
        (6, 0) | (7, _) | (8, 0) => Some(64),
        (5 | 6 | 8 | 10 | 12, _) | (9, 0) => Some(128),
        _ => None,
    }
}

/// Eq. 3 for a device that reports its SM count, clock and compute capability.
pub fn eq3(info: &DeviceInfo) -> Option<Eq3> {
    let lanes = fp32_lanes_per_sm(info.compute_capability?)?;
    let clock = info.core_clock_mhz?;
    if info.compute_units == 0 {
        return None;
    }
    let gflops = f64::from(info.compute_units) * f64::from(lanes) * 2.0 * f64::from(clock) / 1e3;
    Some(Eq3 {
        sms: info.compute_units,
        lanes_per_sm: lanes,
        clock_mhz: clock,
        gflops,
    })
}

/// The peaks table: each side's read and copy bandwidth against Eq. 2 (the peak the run
/// recorded per row) and its FMA throughput against Eq. 3.
pub fn markdown(rows: &[MeasurementRow], eq3: Option<&Eq3>) -> String {
    let mut s = String::from("# Peaks against the paper's Eq. 2 and Eq. 3\n\n");
    let eq2 = rows.iter().find_map(|r| r.peak_gbs.filter(|p| *p > 0.0));
    let _ = match eq2 {
        Some(p) => writeln!(
            s,
            "Eq. 2 (memory clock × bus width / 8 × 2, as the CUDA driver reports them): **{p:.1} GB/s**."
        ),
        None => writeln!(s, "Eq. 2: unknown (the device reports no memory clock or bus width)."),
    };
    let _ = match eq3 {
        Some(e) => writeln!(
            s,
            "Eq. 3 ({} SMs × {} FP32 lanes per SM × 2 flops per FMA × {} MHz): **{:.1} GFLOP/s**.",
            e.sms, e.lanes_per_sm, e.clock_mhz, e.gflops
        ),
        None => writeln!(
            s,
            "Eq. 3: unknown (no CUDA device reports its SM count, clock and compute capability here)."
        ),
    };
    s += "\n| kernel | API | metric | unit | share of the peak |\n|---|---|---|---|---|\n";
    for r in rows.iter().filter(|r| r.status == Status::Ok) {
        let kernel = format!("{}/{}", r.family.name(), r.variant);
        // The kernels that measure a peak (`Family::measures_peak`), against its equation.
        if !crate::families::all()
            .iter()
            .any(|f| f.id() == r.family && f.spec().measures_peak)
        {
            continue;
        }
        let peak = match r.metric_unit {
            Metric::Bandwidth => eq2,
            Metric::Flops => eq3.map(|e| e.gflops),
            _ => continue,
        };
        let share = peak
            .filter(|p| *p > 0.0)
            .map(|p| format!("{:.1}%", 100.0 * r.metric / p))
            .unwrap_or_else(|| "-".into());
        let _ = writeln!(
            s,
            "| {kernel} | {} | {:.1} | {} | {share} |",
            r.api.label(),
            r.metric,
            r.metric_unit.unit()
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eq3_of_an_h100_sxm_is_its_datasheet_fp32_peak() {
        // 132 SMs, 1980 MHz boost, compute capability 9.0: NVIDIA's datasheet says 67 TFLOPS.
        let info = DeviceInfo {
            compute_units: 132,
            core_clock_mhz: Some(1980),
            compute_capability: Some((9, 0)),
            ..DeviceInfo::default()
        };
        let e = eq3(&info).unwrap();
        assert_eq!(e.lanes_per_sm, 128);
        assert!((e.gflops - 66_908.16).abs() < 0.01, "{}", e.gflops);
    }

    #[test]
    fn the_papers_gtx_480_gives_its_published_eq3() {
        // GTX 480: 15 SMs of 32 lanes (compute capability 2.0) at 1401 MHz: 1344.96 GFLOP/s.
        let info = DeviceInfo {
            compute_units: 15,
            core_clock_mhz: Some(1401),
            compute_capability: Some((2, 0)),
            ..DeviceInfo::default()
        };
        assert!((eq3(&info).unwrap().gflops - 1344.96).abs() < 1e-9);
    }

    #[test]
    fn eq3_is_unknown_without_a_compute_capability() {
        let info = DeviceInfo {
            compute_units: 8,
            core_clock_mhz: Some(3000),
            ..DeviceInfo::default()
        };
        assert_eq!(eq3(&info), None);
        assert!(markdown(&[], None).contains("Eq. 3: unknown"));
    }
}
