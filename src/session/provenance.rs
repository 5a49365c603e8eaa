//! Where a run's numbers came from: the binary, the command line, the host, the devices, the
//! kernel sources' hashes and the GPU's state before and after.

use sha2::{Digest, Sha256};

use super::host;
use crate::backend::{Api, DeviceInfo};
use crate::export::json::{DeviceProvenance, Provenance};
use crate::kernels::{self, KernelSources};
use crate::study::Study;

/// The git commit the binary was built from (`-dirty` when the tree had changes).
pub const GIT_COMMIT: &str = env!("CLVSCU_GIT_COMMIT");

/// GPU clocks, temperature and power from `nvidia-smi`, or why there are none.
pub fn gpu_query() -> String {
    std::process::Command::new("nvidia-smi")
        .args([
            "--query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw",
            "--format=csv",
        ])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "nvidia-smi not available".into())
}

pub(crate) fn hostname() -> String {
    std::fs::read_to_string("/etc/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// SHA-256 of the kernel's source file text (prelude excluded), first 12 hex digits.
pub fn source_hash(sources: &KernelSources, api: Api, stem: &str) -> String {
    let text = sources.file(api, stem).unwrap_or_default();
    let h = Sha256::digest(text.as_bytes());
    h.iter().take(6).map(|b| format!("{b:02x}")).collect()
}

fn device_provenance(d: &DeviceInfo) -> DeviceProvenance {
    DeviceProvenance {
        api: d.api.clone(),
        platform: d.platform.clone(),
        device: d.name.clone(),
        driver: d.driver_version.clone(),
        api_version: d.api_version.clone(),
    }
}

/// The provenance of a run of `study` on `devices`, with the GPU state `before` it.
pub fn of_run(
    study: &Study,
    devices: &[&DeviceInfo],
    sources: &KernelSources,
    command_line: &[String],
    before: String,
) -> Provenance {
    let mut notes = vec![
        format!("kernel sources: {}", sources.origin()),
        format!("study file: {}", study.file),
    ];
    for stem in kernels::stems() {
        notes.push(format!(
            "kernel source sha256/12 {stem}: OpenCL {} CUDA {}",
            source_hash(sources, Api::OpenCl, stem),
            source_hash(sources, Api::Cuda, stem)
        ));
    }
    Provenance {
        study_sha256: study.sha256.clone(),
        os: host::operating_system(),
        cpu: host::cpu(),
        environment: host::behaviour_environment(std::env::vars()),
        gpus_before: host::gpu_states(),
        gpus_after: Vec::new(),
        clvscu_version: env!("CARGO_PKG_VERSION").into(),
        git_commit: GIT_COMMIT.into(),
        command_line: command_line.to_vec(),
        host: hostname(),
        date_utc: chrono::Utc::now().to_rfc3339(),
        study: study.name.clone(),
        devices: devices.iter().map(|d| device_provenance(d)).collect(),
        gpu_query_before: before,
        gpu_query_after: String::new(),
        notes,
    }
}
