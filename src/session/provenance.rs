//! Where a run's numbers came from: the binary, the command line, the host, the devices, the
//! kernel sources' hashes and the GPU's state before and after.

use super::host;
use crate::backend::DeviceInfo;
use crate::export::folder::{hostname, sha256_prefix};
use crate::export::json::{DeviceProvenance, GpuState, Provenance};
use crate::kernels::{self, KernelSources};
use crate::rows::Api;
use crate::study::Study;

/// The git commit the binary was built from (`-dirty` when the tree had changes).
pub const GIT_COMMIT: &str = env!("CLVSCU_GIT_COMMIT");

/// SHA-256 of the kernel's source file text (prelude excluded), first 12 hex digits.
pub fn source_hash(sources: &KernelSources, api: Api, stem: &str) -> String {
    let text = sources.file(api, stem).unwrap_or_default();
    sha256_prefix(text.as_bytes(), 12)
}

/// The GPUs' state at one moment from NVML: a line per GPU (or why there is none), the numbers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GpuSnapshot {
    pub query: String,
    pub states: Vec<GpuState>,
}

impl GpuSnapshot {
    pub fn now() -> GpuSnapshot {
        let states = super::nvml::gpu_states();
        GpuSnapshot {
            query: super::nvml::text(&states),
            states: states.unwrap_or_default(),
        }
    }
}

/// The sources' origin, then each kernel file's hash on each API, so an edited kernel shows.
fn source_notes(sources: &KernelSources) -> Vec<String> {
    let mut notes = vec![format!("kernel sources: {}", sources.origin())];
    let loaded = kernels::loaded_stems();
    for stem in kernels::stems()
        .into_iter()
        .chain(loaded.iter().map(String::as_str))
    {
        notes.push(format!(
            "kernel source sha256/12 {stem}: OpenCL {} CUDA {}",
            source_hash(sources, Api::OpenCl, stem),
            source_hash(sources, Api::Cuda, stem)
        ));
    }
    notes
}

/// What every command that measures records (binary, command line, host, devices, kernel
/// hashes, GPU state `before`); the caller adds what it measured (a study, a tune).
pub fn common(
    devices: &[&DeviceInfo],
    sources: &KernelSources,
    command_line: &[String],
    before: GpuSnapshot,
) -> Provenance {
    Provenance {
        os: host::operating_system(),
        cpu: host::cpu(),
        environment: host::behaviour_environment(std::env::vars()),
        gpus_before: before.states,
        clvscu_version: env!("CARGO_PKG_VERSION").into(),
        git_commit: GIT_COMMIT.into(),
        command_line: command_line.to_vec(),
        host: hostname(),
        date_utc: chrono::Utc::now().to_rfc3339(),
        devices: devices
            .iter()
            .map(|d| DeviceProvenance {
                api: d.api.clone(),
                platform: d.platform.clone(),
                device: d.name.clone(),
                driver: d.driver_version.clone(),
                api_version: d.api_version.clone(),
                pci_bus: d.pci_bus.clone(),
            })
            .collect(),
        gpu_query_before: before.query,
        notes: source_notes(sources),
        ..Provenance::default()
    }
}

/// Records the GPU state after the work, to spot throttling or interference during it.
pub fn record_after(p: &mut Provenance, after: GpuSnapshot) {
    p.gpu_query_after = after.query;
    p.gpus_after = after.states;
}

/// The provenance of a run of `study` on `devices`, with the GPU state `before` it.
pub fn of_run(
    study: &Study,
    devices: &[&DeviceInfo],
    sources: &KernelSources,
    command_line: &[String],
    before: GpuSnapshot,
) -> Provenance {
    let mut p = common(devices, sources, command_line, before);
    p.study = study.name.clone();
    p.study_sha256 = study.sha256.clone();
    // Right after the sources' origin, where runs have always had it.
    p.notes.insert(1, format!("study file: {}", study.file));
    p
}

/// A line atop a human-readable result (commit, devices, date, command line): its origin.
pub fn summary_line(p: &Provenance) -> String {
    let devices: Vec<String> = p
        .devices
        .iter()
        .map(|d| format!("{} {} (driver {})", d.api, d.device, d.driver))
        .collect();
    // The command line as one shell-like line: arguments with spaces (or none) in quotes.
    let quoted = |a: &String| match a.is_empty() || a.contains(char::is_whitespace) {
        true => format!("'{a}'"),
        false => a.clone(),
    };
    let command: Vec<String> = p.command_line.iter().map(quoted).collect();
    format!(
        "clvscu {} commit {} on {}, {}: `{}`",
        p.clvscu_version,
        p.git_commit,
        if devices.is_empty() {
            "no device".to_string()
        } else {
            devices.join(", ")
        },
        p.date_utc,
        command.join(" ")
    )
}
