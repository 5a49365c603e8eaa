//! Shared gates for tests that need a real runtime: in CI (CI=true) a missing runtime fails
//! loudly; on a developer machine without it the test says so and returns.

#![allow(dead_code)]

pub fn in_ci() -> bool {
    std::env::var("CI")
        .map(|v| v == "true" || v == "1")
        .unwrap_or(false)
}

/// Returns false (and prints why) when the runtime is missing outside CI; panics in CI.
pub fn require(what: &str, available: Result<(), String>) -> bool {
    match available {
        Ok(()) => true,
        Err(reason) if in_ci() => panic!("{what} is required in CI but unavailable: {reason}"),
        Err(reason) => {
            eprintln!("SKIPPED: {what} unavailable: {reason}");
            false
        }
    }
}
