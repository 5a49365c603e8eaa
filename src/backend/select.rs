//! The one parser of device selectors (`--cl-device`, `--cl-device-b`, `--cuda-device`): an
//! index into the listing (`0`), a platform and device index (`1:0`, OpenCL), a case-insensitive
//! substring of the device or platform name (`h200`), a place on the PCI bus (`pci:19:00`, the
//! one name a GPU has in both APIs), or `cpu`: the first device that is not a GPU (PoCL's name
//! for its CPU device varies with the host's processor).

use super::{Api, BackendError, DeviceInfo, Result};

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
        Some(text) => find(candidates, text),
    };
    found.ok_or_else(|| not_found(api, candidates, selector))
}

fn find(candidates: &[Candidate], text: &str) -> Option<usize> {
    let position = |hit: &dyn Fn(&Candidate) -> bool| candidates.iter().position(hit);
    if text.eq_ignore_ascii_case(CPU) {
        return position(&|c| !c.info.is_gpu);
    }
    // `pci:BB:DD`: bus and device number in hex, as [`DeviceInfo::pci_bus`] spells them.
    if let Some(bus) = text.strip_prefix("pci:").map(str::to_lowercase) {
        return position(&|c| c.info.pci_bus.as_deref() == Some(bus.as_str()));
    }
    if let Some((Ok(p), Ok(d))) = text.split_once(':').map(|(p, d)| (p.parse(), d.parse())) {
        return position(&|c| c.platform_device == Some((p, d)));
    }
    if let Ok(i) = text.parse::<usize>() {
        return (i < candidates.len()).then_some(i);
    }
    let needle = text.to_lowercase();
    position(&|c| {
        c.info.name.to_lowercase().contains(&needle)
            || c.info.platform.to_lowercase().contains(&needle)
    })
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
    fn selectors_are_read_in_each_of_their_forms() {
        let dev = |name: &str, is_gpu: bool, bus: &str| DeviceInfo {
            name: name.into(),
            is_gpu,
            pci_bus: Some(bus.into()),
            ..DeviceInfo::default()
        };
        let infos = [dev("a:0", false, "19:00"), dev("H200", true, "3b:00")];
        let c: Vec<Candidate> = infos
            .iter()
            .enumerate()
            .map(|(i, info)| Candidate {
                info,
                platform_device: Some((i, 2)),
            })
            .collect();
        for (text, found) in [
            ("1", Some(1)),
            ("1:2", Some(1)),
            ("h200", Some(1)),
            (":0", Some(0)),
            ("Cpu", Some(0)),
            ("pci:3B:00", Some(1)),
            ("2", None),
            ("PCI:3b:00", None),
        ] {
            assert_eq!(find(&c, text), found, "{text}");
        }
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
