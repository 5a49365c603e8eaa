//! The one parser of device selectors (`--cl-device`, `--cl-device-b`, `--cuda-device`): an
//! index into the listing (`0`), a platform and device index (`1:0`, OpenCL), a case-insensitive
//! substring of the device or platform name (`h200`), a place on the PCI bus (`pci:19:00`, the
//! one name a GPU has in both APIs), or `cpu`: the first device that is not a GPU (PoCL's name
//! for its CPU device varies with the host's processor).

use super::{Api, BackendError, DeviceInfo, Result};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    Index(usize),
    PlatformDevice(usize, usize),
    Name(String),
    /// `pci:BB:DD`: bus and device number in hex, as [`DeviceInfo::pci_bus`] spells them.
    Pci(String),
    Cpu,
}

impl Selector {
    pub fn parse(text: &str) -> Selector {
        if text.eq_ignore_ascii_case(CPU) {
            return Selector::Cpu;
        }
        if let Some(bus) = text.strip_prefix("pci:") {
            return Selector::Pci(bus.to_lowercase());
        }
        if let Some((p, d)) = text.split_once(':') {
            if let (Ok(p), Ok(d)) = (p.parse(), d.parse()) {
                return Selector::PlatformDevice(p, d);
            }
        }
        match text.parse() {
            Ok(i) => Selector::Index(i),
            Err(_) => Selector::Name(text.to_lowercase()),
        }
    }
}

pub const CPU: &str = "cpu";

pub struct Candidate<'a> {
    pub info: &'a DeviceInfo,
    /// `None` where the API has no platforms.
    pub platform_device: Option<(usize, usize)>,
}

/// The device `selector` names; the error lists the devices. Without a selector, the first
/// device, or with `prefer_gpu` the first GPU if any (a machine listing PoCL first benchmarks
/// its GPU).
pub fn pick(
    api: Api,
    candidates: &[Candidate],
    selector: Option<&str>,
    prefer_gpu: bool,
) -> Result<usize> {
    let found = match selector {
        None => candidates
            .iter()
            .position(|c| prefer_gpu && c.info.is_gpu)
            .or((!candidates.is_empty()).then_some(0)),
        Some(text) => find(candidates, &Selector::parse(text)),
    };
    found.ok_or_else(|| not_found(api, candidates, selector))
}

fn find(candidates: &[Candidate], selector: &Selector) -> Option<usize> {
    match selector {
        Selector::Index(i) => (*i < candidates.len()).then_some(*i),
        Selector::PlatformDevice(p, d) => candidates
            .iter()
            .position(|c| c.platform_device == Some((*p, *d))),
        Selector::Pci(bus) => candidates
            .iter()
            .position(|c| c.info.pci_bus.as_deref() == Some(bus.as_str())),
        Selector::Cpu => candidates.iter().position(|c| !c.info.is_gpu),
        Selector::Name(needle) => candidates.iter().position(|c| {
            c.info.name.to_lowercase().contains(needle)
                || c.info.platform.to_lowercase().contains(needle)
        }),
    }
}

fn not_found(api: Api, candidates: &[Candidate], selector: Option<&str>) -> BackendError {
    let reason = match selector {
        None => format!("no {api} device found"),
        Some(text) => {
            let listing = candidates
                .iter()
                .enumerate()
                .map(|(i, c)| match &c.info.pci_bus {
                    Some(bus) => format!("{i}: {} [{}] pci:{bus}", c.info.name, c.info.platform),
                    None => format!("{i}: {} [{}]", c.info.name, c.info.platform),
                })
                .collect::<Vec<_>>()
                .join(", ");
            format!("no {api} device matches '{text}'; devices: {listing}")
        }
    };
    BackendError::Unavailable { api, reason }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_parse_into_their_three_forms() {
        assert_eq!(Selector::parse("2"), Selector::Index(2));
        assert_eq!(Selector::parse("1:0"), Selector::PlatformDevice(1, 0));
        assert_eq!(Selector::parse("H200"), Selector::Name("h200".into()));
        assert_eq!(Selector::parse(":0"), Selector::Name(":0".into()));
        assert_eq!(Selector::parse("Cpu"), Selector::Cpu);
        assert_eq!(Selector::parse("pci:3B:00"), Selector::Pci("3b:00".into()));
    }

    #[test]
    fn a_gpu_is_found_by_its_place_on_the_pci_bus() {
        let on_bus = |name: &str, bus: &str| DeviceInfo {
            name: name.into(),
            is_gpu: true,
            pci_bus: Some(bus.into()),
            ..DeviceInfo::default()
        };
        let (a, b) = (on_bus("H200", "19:00"), on_bus("H200", "3b:00"));
        let c = [
            Candidate {
                info: &a,
                platform_device: Some((1, 0)),
            },
            Candidate {
                info: &b,
                platform_device: Some((1, 1)),
            },
        ];
        assert_eq!(pick(Api::OpenCl, &c, Some("pci:3B:00"), false).unwrap(), 1);
        let e = pick(Api::OpenCl, &c, Some("pci:5e:00"), false).unwrap_err();
        assert!(e.to_string().contains("1: H200 [] pci:3b:00"), "{e}");
    }

    #[test]
    fn no_selector_prefers_a_gpu_where_asked() {
        let cpu = DeviceInfo {
            name: "cpu".into(),
            ..DeviceInfo::default()
        };
        let gpu = DeviceInfo {
            name: "gpu".into(),
            is_gpu: true,
            ..DeviceInfo::default()
        };
        let c = [
            Candidate {
                info: &cpu,
                platform_device: Some((0, 0)),
            },
            Candidate {
                info: &gpu,
                platform_device: Some((1, 0)),
            },
        ];
        assert_eq!(pick(Api::OpenCl, &c, None, true).unwrap(), 1);
        assert_eq!(pick(Api::Cuda, &c, None, false).unwrap(), 0);
        assert_eq!(pick(Api::OpenCl, &c[1..], Some("cpu"), false).ok(), None);
        assert_eq!(pick(Api::OpenCl, &c, Some("CPU"), false).unwrap(), 0);
        assert_eq!(pick(Api::OpenCl, &c, Some("1:0"), false).unwrap(), 1);
        let e = pick(Api::OpenCl, &c, Some("tpu"), false).unwrap_err();
        assert!(e.to_string().contains("'tpu'") && e.to_string().contains("1: gpu"));
        let e = pick(Api::Cuda, &[], None, false).unwrap_err();
        assert!(e.to_string().contains("no CUDA device found"), "{e}");
    }
}
