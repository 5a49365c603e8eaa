//! The one rule for tests that need a real runtime: they are `#[ignore = "needs OpenCL"]` (or
//! NVRTC, or a GPU), so a plain `cargo test` lists them as ignored instead of passing them
//! unseen, and the test command runs them with `--include-ignored`. There they call [`need`],
//! which fails the test, loudly and with the reason, when the runtime is missing.

#![allow(dead_code)]

/// Panics with the reason when `what` is unavailable: a test that needs it cannot pass
/// without it.
pub fn need(what: &str, available: Result<(), String>) {
    if let Err(reason) = available {
        panic!("{what} is needed by this test but unavailable: {reason}");
    }
}
