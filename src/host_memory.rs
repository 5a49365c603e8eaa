//! Host memory: what a new allocation can take now, and the refusal of a problem that needs
//! more (a reader or generator asks before it reserves anything).

#[derive(Debug, thiserror::Error)]
#[error("{what} needs about {needed} bytes of host memory; {limit} bytes are available")]
pub struct HostMemoryError {
    pub what: String,
    pub needed: u64,
    pub limit: u64,
}

/// Refuses `needed` host bytes above the memory available now, when the system says.
pub fn check_host(needed: u64, what: &str) -> Result<(), HostMemoryError> {
    available_host_bytes().map_or(Ok(()), |limit| check_host_against(needed, limit, what))
}

pub(crate) fn check_host_against(
    needed: u64,
    limit: u64,
    what: &str,
) -> Result<(), HostMemoryError> {
    if needed > limit {
        return Err(HostMemoryError {
            what: what.to_string(),
            needed,
            limit,
        });
    }
    Ok(())
}

/// `MemAvailable` of /proc/meminfo: what a new allocation can take without swapping.
pub fn available_host_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_meminfo(&text, "MemAvailable:").or_else(|| parse_meminfo(&text, "MemTotal:"))
}

pub(crate) fn parse_meminfo(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line[key.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib.saturating_mul(1024))
}
