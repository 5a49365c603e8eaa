//! The host around a run, for provenance: operating system, CPU, the environment variables
//! that change what the runtimes do (the GPUs' clocks, temperature and power: `super::nvml`).

use std::collections::BTreeMap;

/// Variables that change how the runtimes behave (device choice, caches, JIT, libraries loaded).
const BEHAVIOUR_PREFIXES: &[&str] = &["POCL_", "CUDA_", "OCL_", "NVIDIA_", "CLVSCU_"];
const BEHAVIOUR_NAMES: &[&str] = &["LD_LIBRARY_PATH", "OPENCL_VENDOR_PATH", "OCL_ICD_VENDORS"];

/// The variables of `vars` that change behaviour, sorted by name.
pub fn behaviour_environment(
    vars: impl Iterator<Item = (String, String)>,
) -> BTreeMap<String, String> {
    vars.filter(|(k, _)| {
        BEHAVIOUR_NAMES.contains(&k.as_str()) || BEHAVIOUR_PREFIXES.iter().any(|p| k.starts_with(p))
    })
    .collect()
}

/// `PRETTY_NAME` of os-release and the kernel release, e.g. `Ubuntu 24.04.1 LTS, Linux 6.8.0`.
pub fn operating_system() -> String {
    let name = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|t| os_release_name(&t))
        .unwrap_or_else(|| std::env::consts::OS.to_string());
    match std::fs::read_to_string("/proc/sys/kernel/osrelease") {
        Ok(kernel) => format!("{name}, Linux {}", kernel.trim()),
        Err(_) => name,
    }
}

fn os_release_name(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim().trim_matches('"').to_string())
}

/// The CPU model and the number of logical CPUs, e.g. `AMD EPYC 9654 96-Core Processor x 16`.
pub fn cpu() -> String {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| cpu_model(&t))
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    format!("{model} x {threads}")
}

fn cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo.lines().find_map(|l| {
        let (key, value) = l.split_once(':')?;
        (key.trim() == "model name").then(|| value.trim().to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_variables_that_change_behaviour_are_kept() {
        let vars = [
            ("POCL_CACHE_DIR", "/tmp/p"),
            ("CUDA_VISIBLE_DEVICES", "1"),
            ("LD_LIBRARY_PATH", "/lib"),
            ("HOME", "/root"),
            ("SECRET_TOKEN", "x"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        let kept = behaviour_environment(vars.into_iter());
        assert_eq!(
            kept.keys().collect::<Vec<_>>(),
            ["CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "POCL_CACHE_DIR"]
        );
    }

    #[test]
    fn os_and_cpu_names_are_read_from_their_files() {
        assert_eq!(
            os_release_name("NAME=\"Ubuntu\"\nPRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\n").as_deref(),
            Some("Ubuntu 24.04.1 LTS")
        );
        assert_eq!(
            cpu_model("processor\t: 0\nmodel name\t: AMD EPYC 9654 96-Core Processor\n").as_deref(),
            Some("AMD EPYC 9654 96-Core Processor")
        );
        assert_eq!(cpu_model("processor : 0\n"), None);
    }
}
