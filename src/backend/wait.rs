//! How the host waits for a command to finish: a step of "running" that both APIs offer in
//! three forms, held equal in a fair comparison and recorded in every row.
//!
//! A blocking wait puts the host thread to sleep until the driver wakes it; on an idle
//! machine the wake-up (tens to hundreds of microseconds) is then inside the host-clock time
//! and dwarfs a launch of about 10 µs. Spinning measures the launch; blocking measures the
//! launch plus the wake-up. Neither is wrong, but a comparison that mixes them, or a launch
//! number that does not say which it is, misleads.
//!
//! Per API (see [`WaitMode::how`]):
//!
//! | mode | OpenCL | CUDA |
//! |---|---|---|
//! | `finish` | `clFinish` on the queue | `cuStreamSynchronize` on the stream |
//! | `spin` | `clFlush`, then poll `CL_EVENT_COMMAND_EXECUTION_STATUS` until `CL_COMPLETE` | poll `cuEventQuery` on the stop event |
//! | `yield` | as spin, with `sched_yield` between polls | as spin, with `sched_yield` between polls |
//! | `blocking` | `clWaitForEvents` | `cuEventSynchronize` on an event made with `CU_EVENT_BLOCKING_SYNC` |
//!
//! `finish` is what a plain program writes: it needs no event at all, so a host-timed launch
//! in this mode is one enqueue and one call that returns when the queue is empty, on both
//! sides. It is the default because it is the cheapest correct wait on both APIs (measured
//! by `clvscu calibrate` against the other modes; see the runtime findings). The event
//! modes stay for what they show: polling an event (`spin`, `yield`) and sleeping on one
//! (`blocking`).
//!
//! CUDA's other knob, the context's `CU_CTX_SCHED_SPIN/YIELD/BLOCKING_SYNC`, is not used: it
//! belongs to the whole (primary) context, so one process could hold only one mode, and
//! OpenCL has no per-context equivalent. The context stays at the driver's default
//! (`CU_CTX_SCHED_AUTO`), which is what `cuStreamSynchronize` consults in `finish` mode.

pub use crate::rows::WaitMode;

use super::Result;

impl WaitMode {
    /// Waits in this mode: `done` polls the command's status (spin, yield), `block` sleeps
    /// until it completes (blocking) or, in `finish` mode, waits for the whole queue (the
    /// caller's `block` is then its finish call). An error of either ends the wait.
    pub fn wait(
        self,
        mut done: impl FnMut() -> Result<bool>,
        block: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        match self {
            WaitMode::Blocking | WaitMode::Finish => block(),
            WaitMode::Spin | WaitMode::Yield => {
                while !done()? {
                    if self == WaitMode::Yield {
                        std::thread::yield_now();
                    } else {
                        std::hint::spin_loop();
                    }
                }
                Ok(())
            }
        }
    }
}

crate::names::named_enum! {
    /// Host memory of a transfer: ordinary (pageable) memory, or page-locked memory the
    /// device can reach by DMA (OpenCL: a `CL_MEM_ALLOC_HOST_PTR` buffer, mapped; CUDA:
    /// `cuMemAllocHost`).
    #[strum(serialize_all = "lowercase")]
    pub enum HostMemory {
        Pageable,
        Pinned,
    }
}

crate::names::named_enum! {
    /// The direction of a host transfer.
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
    fn modes_parse_and_default_to_spin() {
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
                    Ok(polls == 3)
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
                    Ok(())
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
