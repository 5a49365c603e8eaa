//! What a backend hands back and takes: timings, descriptions, handles, arguments, shapes.

use serde::{Deserialize, Serialize};

use super::{Direction, Seconds, TimerKind};

/// The result of one blocking command (see the timing contract in the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    pub wall: Seconds,
    pub device: Option<Seconds>,
    pub queued_to_start: Option<Seconds>,
    pub queued_to_submit: Option<Seconds>,
    pub submit_to_start: Option<Seconds>,
}

impl Timing {
    /// Host and device clocks only: an API without queue timestamps (CUDA, the fake).
    pub fn clocks(wall: Seconds, device: Option<Seconds>) -> Self {
        Timing {
            wall,
            device,
            queued_to_start: None,
            queued_to_submit: None,
            submit_to_start: None,
        }
    }

    pub fn get(&self, timer: TimerKind) -> Option<Seconds> {
        match timer {
            TimerKind::DeviceEvent => self.device,
            TimerKind::WallClock => Some(self.wall),
        }
    }
}

/// What a device says about itself; `None` where the API does not say.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    pub api: String,
    pub platform: String,
    pub name: String,
    pub vendor: String,
    pub driver_version: String,
    pub api_version: String,
    pub compute_units: u32,
    pub max_work_group_size: u32,
    pub local_mem_bytes: u64,
    pub global_mem_bytes: u64,
    pub max_alloc_bytes: u64,
    pub core_clock_mhz: Option<u32>,
    pub memory_clock_mhz: Option<u32>,
    pub memory_bus_width_bits: Option<u32>,
    /// (9, 0) for an H100/H200; the NVRTC target.
    pub compute_capability: Option<(i32, i32)>,
    /// Sub-group (warp) functions available to OpenCL C.
    pub has_subgroups: bool,
    pub is_gpu: bool,
    /// PCI bus and device number, `19:00` (hex): the same GPU has different indices in
    /// OpenCL and CUDA, but one place on the bus.
    pub pci_bus: Option<String>,
}

pub fn pci_bus_text(bus: u32, device: u32) -> String {
    format!("{bus:02x}:{device:02x}")
}

impl DeviceInfo {
    /// Theoretical peak bandwidth in GB/s by the paper's Eq. 2: MC × MIW/8 × 2 (double data
    /// rate), with the memory clock in MHz and the bus width in bits.
    pub fn theoretical_peak_gbs(&self) -> Option<f64> {
        let mc = self.memory_clock_mhz? as f64 * 1e6;
        let miw = self.memory_bus_width_bits? as f64;
        Some(mc * miw / 8.0 * 2.0 / 1e9)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelResources {
    pub registers: Option<u32>,
    pub shared_bytes: Option<u64>,
    /// Local (spill / private) memory per thread.
    pub local_bytes: Option<u64>,
    pub max_threads_per_group: Option<u32>,
}

/// Opaque handles, meaningful only to the backend that issued them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProgramId(pub usize);
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KernelId(pub usize);
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BufferId(pub usize);
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HostBufferId(pub usize);

/// The first `len` floats between `host` and `buffer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transfer {
    pub host: HostBufferId,
    pub buffer: BufferId,
    pub direction: Direction,
    pub len: usize,
}

/// One kernel argument, in declaration order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arg {
    Buffer(BufferId),
    U32(u32),
    F32(f32),
    /// An OpenCL `__constant float*` parameter; in CUDA no parameter but a `__constant__`
    /// module symbol, filled by [`crate::backend::BufferOps::bind_constant`].
    Constant(BufferId),
    /// A buffer read through the texture path (an OpenCL `image1d_buffer_t`, a CUDA texture
    /// object over its linear memory), made on first use and kept until the buffer is freed.
    /// `channels` floats make one texel (1 or 4).
    Texture {
        buffer: BufferId,
        channels: u32,
    },
}

/// A launch: `groups` work-groups (CUDA blocks) of `local` work-items (threads) in x, and
/// `groups_y` x `local_y` in y (1 and 1 for a 1-D launch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchShape {
    pub groups: u32,
    pub local: u32,
    #[serde(default = "one")]
    pub groups_y: u32,
    #[serde(default = "one")]
    pub local_y: u32,
}

fn one() -> u32 {
    1
}

impl LaunchShape {
    pub const fn linear(groups: u32, local: u32) -> Self {
        LaunchShape {
            groups,
            local,
            groups_y: 1,
            local_y: 1,
        }
    }

    pub const fn planar(groups: (u32, u32), local: (u32, u32)) -> Self {
        LaunchShape {
            groups: groups.0,
            local: local.0,
            groups_y: groups.1,
            local_y: local.1,
        }
    }

    /// Else the launch is given to the API as 1-D.
    pub fn is_planar(&self) -> bool {
        self.groups_y != 1 || self.local_y != 1
    }

    pub fn global(&self) -> u64 {
        let [x, y] = self.global_dims();
        x * y
    }

    /// What the device's work-group limit counts.
    pub fn group_items(&self) -> u32 {
        self.local.saturating_mul(self.local_y)
    }

    /// OpenCL's global size: [x, y].
    pub fn global_dims(&self) -> [u64; 2] {
        [
            u64::from(self.groups) * u64::from(self.local),
            u64::from(self.groups_y) * u64::from(self.local_y),
        ]
    }

    /// `groups x local`, or `(gx, gy) x (lx, ly)` for a 2-D launch.
    pub fn describe(&self) -> String {
        if self.is_planar() {
            format!(
                "({}, {})x({}, {})",
                self.groups, self.groups_y, self.local, self.local_y
            )
        } else {
            format!("{}x{}", self.groups, self.local)
        }
    }
}
