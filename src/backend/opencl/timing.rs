//! A finished command's timing from its profiling event: device time between START and END,
//! and the launch time (QUEUED to START) split at SUBMIT.

use opencl3::event::Event;

use crate::backend::{Seconds, Timing};

/// Profiling timestamps (ns), where both were read and in order.
pub(super) fn span(a: Option<u64>, b: Option<u64>) -> Option<Seconds> {
    match (a, b) {
        (Some(a), Some(b)) if b >= a => Some(Seconds((b - a) as f64 * 1e-9)),
        _ => None,
    }
}

pub(super) fn event_timing(event: &Event, wall: f64) -> Timing {
    let queued = event.profiling_command_queued().ok();
    let submit = event.profiling_command_submit().ok();
    let start = event.profiling_command_start().ok();
    let end = event.profiling_command_end().ok();
    Timing {
        wall: Seconds(wall),
        device: span(start, end),
        queued_to_start: span(queued, start),
        queued_to_submit: span(queued, submit),
        submit_to_start: span(submit, start),
    }
}
