//! Process resources between the passes of a repeated run (`run --passes N`). A soak shows
//! whether memory or open handles grow with repetition, which would be a leak in the harness
//! or in a driver; `passes.csv` keeps one row per pass.

/// Resident memory of this process in KiB (Linux).
pub fn resident_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    Some(crate::host_memory::parse_meminfo(&status, "VmRSS:")? / 1024)
}

/// Open file descriptors of this process (Linux).
pub fn open_fds() -> Option<u64> {
    let entries = std::fs::read_dir("/proc/self/fd").ok()?;
    // The directory handle being read is itself one descriptor: not counted.
    Some((entries.count() as u64).saturating_sub(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vm_rss_is_read_from_status_text() {
        let status = "Name:\tclvscu\nVmPeak:\t  200 kB\nVmRSS:\t   12345 kB\nThreads:\t4\n";
        let vm_rss_kib = |s| Some(crate::host_memory::parse_meminfo(s, "VmRSS:")? / 1024);
        assert_eq!(vm_rss_kib(status), Some(12345));
        assert_eq!(vm_rss_kib("Name:\tx\n"), None);
        assert_eq!(vm_rss_kib("VmRSS:\tlots kB\n"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_reports_memory_and_sees_a_new_descriptor() {
        assert!(resident_kib().is_some_and(|k| k > 0));
        let before = open_fds().expect("linux has /proc/self/fd");
        let file = tempfile::tempfile().unwrap();
        assert_eq!(open_fds(), Some(before + 1));
        drop(file);
        assert_eq!(open_fds(), Some(before));
    }
}
