//! The words every layer shares, on the ground floor: which API, which clock, and the one unit
//! of time. The backends speak them and the rows record them; nothing here depends on either.

use serde::{Deserialize, Serialize};

/// A duration in seconds. One unit for every timer of every backend.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
pub struct Seconds(pub f64);

crate::names::named_enum! {
    /// Which programming model a backend drives. Written as `OpenCL` / `CUDA` in every record.
    pub enum Api {
        #[strum(serialize = "OpenCL")]
        OpenCl,
        #[strum(serialize = "CUDA")]
        Cuda,
    }
}

impl Api {
    pub fn label(self) -> &'static str {
        self.into()
    }
}

crate::names::named_enum! {
    /// Which clock produced a measurement. Study files may use the short aliases.
    pub enum TimerKind {
        /// OpenCL profiling events / CUDA events: kernel execution only.
        #[strum(to_string = "device-event", serialize = "event", serialize = "device")]
        DeviceEvent,
        /// Host monotonic clock around enqueue + synchronisation.
        #[strum(to_string = "wall-clock", serialize = "wall", serialize = "host")]
        WallClock,
    }
}

impl TimerKind {
    pub fn label(self) -> &'static str {
        self.into()
    }

    pub fn parse(text: &str) -> Option<Self> {
        text.parse().ok()
    }
}
