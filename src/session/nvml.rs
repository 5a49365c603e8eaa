//! The GPUs' clocks, temperature and power from NVML (what `nvidia-smi` reads; `libnvidia-ml`
//! loaded at run time): a machine without NVIDIA's driver gets no states and why, never an error.

use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
use nvml_wrapper::Nvml;

use crate::export::json::GpuState;

#[derive(Debug, thiserror::Error)]
pub enum NvmlError {
    #[error("NVML not available: {0}")]
    Unavailable(nvml_wrapper::error::NvmlError),
    #[error("NVML: no device count: {0}")]
    NoDeviceCount(nvml_wrapper::error::NvmlError),
    #[error("NVML: device {index}: {source}")]
    Device {
        index: u32,
        source: nvml_wrapper::error::NvmlError,
    },
}

/// Every GPU's state now, or why there is none; a value the driver does not report stays `None`.
pub fn gpu_states() -> Result<Vec<GpuState>, NvmlError> {
    let nvml = Nvml::init().map_err(NvmlError::Unavailable)?;
    let driver = nvml.sys_driver_version().unwrap_or_default();
    let count = nvml.device_count().map_err(NvmlError::NoDeviceCount)?;
    (0..count)
        .map(|i| {
            let d = nvml
                .device_by_index(i)
                .map_err(|source| NvmlError::Device { index: i, source })?;
            let mhz = |v: Result<u32, _>| v.ok().map(f64::from);
            Ok(GpuState {
                index: Some(i),
                pci_bus_id: d.pci_info().map(|p| p.bus_id).unwrap_or_default(),
                name: d.name().unwrap_or_default(),
                driver: driver.clone(),
                sm_clock_mhz: mhz(d.clock_info(Clock::SM)),
                memory_clock_mhz: mhz(d.clock_info(Clock::Memory)),
                max_sm_clock_mhz: mhz(d.max_clock_info(Clock::SM)),
                max_memory_clock_mhz: mhz(d.max_clock_info(Clock::Memory)),
                temperature_c: mhz(d.temperature(TemperatureSensor::Gpu)),
                power_w: d.power_usage().ok().map(|mw| f64::from(mw) / 1000.0),
            })
        })
        .collect()
}

/// The states as one line per GPU, the text provenance keeps beside the numbers.
pub fn text(states: &Result<Vec<GpuState>, NvmlError>) -> String {
    let states = match states {
        Ok(s) => s,
        Err(why) => return why.to_string(),
    };
    let value = |v: Option<f64>| v.map_or_else(|| "unknown".into(), |v| format!("{v}"));
    let mut lines = vec![
        "index, pci bus, name, driver, SM MHz, memory MHz, max SM MHz, \
                          max memory MHz, temperature C, power W (NVML)"
            .to_string(),
    ];
    lines.extend(states.iter().map(|s| {
        format!(
            "{}, {}, {}, {}, {}, {}, {}, {}, {}, {}",
            s.index.map_or_else(|| "?".into(), |i| i.to_string()),
            s.pci_bus_id,
            s.name,
            s.driver,
            value(s.sm_clock_mhz),
            value(s.memory_clock_mhz),
            value(s.max_sm_clock_mhz),
            value(s.max_memory_clock_mhz),
            value(s.temperature_c),
            value(s.power_w)
        )
    }));
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_values_say_unknown_and_a_missing_library_gives_its_reason() {
        let state = GpuState {
            index: Some(1),
            pci_bus_id: "00000000:3B:00.0".into(),
            name: "NVIDIA H200".into(),
            driver: "580.159.04".into(),
            sm_clock_mhz: Some(1980.0),
            power_w: Some(77.5),
            ..GpuState::default()
        };
        let t = text(&Ok(vec![state]));
        assert!(t.ends_with("1, 00000000:3B:00.0, NVIDIA H200, 580.159.04, 1980, unknown, unknown, unknown, unknown, 77.5"), "{t}");
        let why = NvmlError::Unavailable(nvml_wrapper::error::NvmlError::Uninitialized);
        assert!(text(&Err(why)).starts_with("NVML not available: "));
    }

    #[test]
    fn without_nvidias_driver_there_are_no_states_and_no_panic() {
        // Here (no GPU) the library is absent; on a GPU machine every device is listed.
        match gpu_states() {
            Ok(states) => assert!(states.iter().all(|s| s.index.is_some())),
            Err(why) => assert!(why.to_string().starts_with("NVML"), "{why}"),
        }
    }
}
