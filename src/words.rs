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

crate::names::named_enum! {
    /// Which compiler's program a side runs. `other` loads the program text (PTX on NVIDIA)
    /// that the other side's compiler made for the same configuration, instead of compiling
    /// this side's own source: the other front end's code through this API's runtime, which
    /// tells a compiler cause from a runtime cause in one step.
    #[strum(serialize_all = "lowercase")]
    pub enum ProgramSource {
        Own,
        Other,
    }
}

crate::names::named_enum! {
    /// The width of index arithmetic: OpenCL's work-item functions return a 64-bit `size_t`,
    /// CUDA's built-in index variables are 32-bit. `u32` and `u64` hold one width on both
    /// sides (through the preludes' `CLVSCU_INDEX`); `native` leaves each API its own, which is
    /// unfair by construction.
    #[strum(serialize_all = "lowercase")]
    pub enum IndexWidth {
        U32,
        U64,
        Native,
    }
}

impl IndexWidth {
    /// The value of the preludes' `CLVSCU_INDEX`.
    pub fn define(self) -> &'static str {
        match self {
            IndexWidth::U32 => "32",
            IndexWidth::U64 => "64",
            IndexWidth::Native => "0",
        }
    }

    /// The bits of index arithmetic this setting gives on `api`.
    pub fn bits(self, api: Api) -> u32 {
        match (self, api) {
            (IndexWidth::U32, _) => 32,
            (IndexWidth::U64, _) => 64,
            (IndexWidth::Native, Api::OpenCl) => 64,
            (IndexWidth::Native, Api::Cuda) => 32,
        }
    }
}
