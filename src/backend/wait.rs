//! How the host waits for a command to finish, held equal in a fair comparison and recorded
//! in every row: a blocking wait's wake-up (tens to hundreds of µs) dwarfs a launch of about
//! 10 µs, so a comparison that mixes spinning and blocking misleads. [`WaitMode::how`] names
//! each mode's calls per API. `finish`, what a plain program writes (no event), is the
//! default: the cheapest correct wait on both APIs (`clvscu calibrate`). CUDA's
//! `CU_CTX_SCHED_*` flags are not used: they hold one mode for the whole process and OpenCL
//! has no equivalent.

pub use crate::rows::WaitMode;

impl WaitMode {
    /// `done` polls the command's status (spin, yield); `block` sleeps until it completes
    /// (blocking) or finishes the queue (`finish`). The one polling loop of the harness and of
    /// both plain loops: a bare loop, as a plain program spins, so no side pauses between polls.
    pub fn wait<E>(
        self,
        mut done: impl FnMut() -> std::result::Result<bool, E>,
        block: impl FnOnce() -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        match self {
            WaitMode::Blocking | WaitMode::Finish => block(),
            WaitMode::Spin | WaitMode::Yield => {
                while !done()? {
                    if self == WaitMode::Yield {
                        std::thread::yield_now();
                    }
                }
                Ok(())
            }
        }
    }
}

crate::names::named_enum! {
    /// Host memory of a transfer: pageable, or page-locked for DMA (OpenCL: a mapped
    /// `CL_MEM_ALLOC_HOST_PTR` buffer; CUDA: `cuMemAllocHost`).
    #[strum(serialize_all = "lowercase")]
    pub enum HostMemory {
        Pageable,
        Pinned,
    }
}

crate::names::named_enum! {
    #[strum(serialize_all = "lowercase")]
    pub enum Direction {
        /// Host to device (`clEnqueueWriteBuffer` / `cuMemcpyHtoDAsync`).
        H2d,
        /// Device to host (`clEnqueueReadBuffer` / `cuMemcpyDtoHAsync`).
        D2h,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{Api, BackendError};

    #[test]
    fn modes_parse_and_default_to_finish() {
        for (text, mode) in [
            ("finish", WaitMode::Finish),
            ("spin", WaitMode::Spin),
            ("yield", WaitMode::Yield),
            ("blocking", WaitMode::Blocking),
        ] {
            assert_eq!(crate::names::parse::<WaitMode>(text).unwrap(), mode);
            assert_eq!(mode.label(), text);
        }
        assert!(crate::names::parse::<WaitMode>("sleep").is_err());
        assert_eq!(WaitMode::default(), WaitMode::Finish);
        assert!(!WaitMode::Finish.needs_event());
        assert!(WaitMode::ALL[1..].iter().all(|m| m.needs_event()));
    }

    #[test]
    fn every_mode_maps_to_different_calls_per_api() {
        for api in [Api::OpenCl, Api::Cuda] {
            let calls: std::collections::BTreeSet<_> =
                WaitMode::ALL.iter().map(|m| m.how(api)).collect();
            assert_eq!(calls.len(), WaitMode::ALL.len(), "{calls:?}");
        }
        assert_eq!(WaitMode::Blocking.how(Api::OpenCl), "clWaitForEvents");
        assert!(WaitMode::Blocking.how(Api::Cuda).contains("BLOCKING_SYNC"));
        assert!(WaitMode::Spin.how(Api::Cuda).contains("cuEventQuery"));
    }

    #[test]
    fn polling_modes_poll_until_done_and_never_block() {
        for mode in [WaitMode::Spin, WaitMode::Yield] {
            let mut polls = 0;
            mode.wait(
                || {
                    polls += 1;
                    Ok::<_, BackendError>(polls == 3)
                },
                || panic!("{mode} must not block"),
            )
            .unwrap();
            assert_eq!(polls, 3, "{mode}");
        }
        let mut blocked = false;
        WaitMode::Blocking
            .wait(
                || panic!("blocking must not poll"),
                || {
                    blocked = true;
                    Ok::<_, BackendError>(())
                },
            )
            .unwrap();
        assert!(blocked);
    }

    #[test]
    fn a_failed_poll_ends_the_wait() {
        let e = WaitMode::Spin
            .wait(
                || Err(BackendError::InvalidHandle("event".into())),
                || Ok(()),
            )
            .unwrap_err();
        assert!(e.to_string().contains("event"), "{e}");
    }
}
