//! The one seam between the harness and a GPU programming API: [`Backend`] (device, compile,
//! buffers, launch, wait, timer), and a small trait per further ability (`abilities.rs`);
//! [`Runtime`] has them all. No `opencl3` or `cudarc` type crosses this module's surface.
//!
//! The timing contract: every [`Backend::launch`] and [`BufferOps::copy`] is **blocking** and
//! returns a [`Timing`] in [`Seconds`]:
//! * `wall`: `Instant` right before the enqueue to right after the wait for completion
//!   (launch overhead, queueing and synchronisation included, alike for both APIs).
//! * `device`: the device's clock around the command only (OpenCL: profiling END - START;
//!   CUDA: two events recorded around it on the stream); `None` where the API gives none.
//! * `queued_to_start` (the paper's kernel launch time), split at SUBMIT into
//!   `queued_to_submit` and `submit_to_start`: OpenCL profiling only. CUDA's events say only
//!   when the device reached them, so its cells stay empty rather than hold an invented value.
//!
//! The wall clock includes the wait, so the [`WaitMode`] (set by [`Backend::set_wait_mode`]
//! for every later blocking command) is recorded with every result.

mod abilities;
mod compile;
pub mod cuda;
pub mod fake;
mod handles;
pub mod opencl;
pub mod ptx_swap;
pub mod select;
mod types;
pub mod wait;

use std::fmt;

use thiserror::Error;

pub use abilities::{
    BufferOps, ExactLaunch, ForeignCode, HostTransfers, PlainLoops, Programs, Runtime,
};
pub use compile::{CompileRequest, JitOptions, MAX_OPT_LEVEL};
pub use wait::{Direction, HostMemory, WaitMode};

pub use crate::rows::{Api, Seconds, TimerKind};
pub use types::*;

/// A backend's errors, written for the person running the benchmark.
#[derive(Debug, Error)]
pub enum BackendError {
    #[error("{api} unavailable: {reason}")]
    Unavailable { api: Api, reason: String },
    #[error("{api} build failed (options: {options})\n--- build log ---\n{log}")]
    Compile {
        api: Api,
        options: String,
        log: String,
    },
    #[error("{api} driver error in {what}: {detail}")]
    Driver {
        api: Api,
        what: String,
        detail: String,
    },
    /// The reported limits stand beside the driver's refusal, never a check of ours: NVIDIA's
    /// OpenCL reports 256 items per kernel and runs 1024.
    #[error(
        "{api} driver refused a work-group of {requested} work-items on {device}: {detail} \
         (reported limits: device {device_limit}, this kernel {kernel_limit})"
    )]
    WorkGroupRefused {
        api: Api,
        requested: u32,
        device: String,
        device_limit: u32,
        kernel_limit: String,
        detail: String,
    },
    #[error("allocation of {bytes} bytes refused: {device} allows {limit} bytes ({what})")]
    TooLarge {
        bytes: u64,
        limit: u64,
        device: String,
        what: String,
    },
    #[error("{api} cannot do this: {what}")]
    Unsupported { api: Api, what: String },
    #[error("invalid handle: {0}")]
    InvalidHandle(String),
    #[error("no kernel named '{name}' in the program; it defines: {available}")]
    NoSuchKernel { name: String, available: String },
}

impl BackendError {
    pub(crate) fn unavailable(api: Api, reason: impl Into<String>) -> Self {
        BackendError::Unavailable {
            api,
            reason: reason.into(),
        }
    }

    pub(crate) fn unsupported(api: Api, what: impl Into<String>) -> Self {
        BackendError::Unsupported {
            api,
            what: what.into(),
        }
    }

    pub(crate) fn driver(api: Api, what: &str, detail: impl fmt::Display) -> Self {
        BackendError::Driver {
            api,
            what: what.to_string(),
            detail: detail.to_string(),
        }
    }
}

pub type Result<T> = std::result::Result<T, BackendError>;

pub trait Backend {
    fn api(&self) -> Api;

    fn info(&self) -> &DeviceInfo;

    /// A failure is [`BackendError::Compile`], with the log and options.
    fn compile(&mut self, request: &CompileRequest) -> Result<ProgramId>;

    fn kernel(&mut self, program: ProgramId, name: &str) -> Result<KernelId>;

    fn kernel_resources(&self, kernel: KernelId) -> Result<KernelResources>;

    fn alloc(&mut self, len: usize) -> Result<BufferId>;

    fn upload(&mut self, buffer: BufferId, data: &[f32]) -> Result<()>;

    fn download(&mut self, buffer: BufferId, out: &mut [f32]) -> Result<()>;

    fn free(&mut self, buffer: BufferId) -> Result<()>;

    fn launch(&mut self, kernel: KernelId, shape: LaunchShape, args: &[Arg]) -> Result<Timing>;

    fn set_wait_mode(&mut self, mode: WaitMode) -> Result<()>;

    /// With the wall clock alone, later launches carry no device timestamps (OpenCL: a queue
    /// without profiling; CUDA: no start event, an untimed stop event), as a program without a
    /// profiler runs, and their device time is `None`. Transfers and copies are not affected.
    fn set_timer(&mut self, timer: TimerKind) -> Result<()>;
}

/// The `impl Backend` methods every backend writes alike, over its `info`, `timer` and `wait`
/// fields and [`PlainLoops::launch_repeated`].
macro_rules! same_in_every_backend {
    () => {
        fn info(&self) -> &DeviceInfo {
            &self.info
        }

        fn launch(&mut self, kernel: KernelId, shape: LaunchShape, args: &[Arg]) -> Result<Timing> {
            self.launch_repeated(kernel, shape, args, 1)
        }

        fn set_timer(&mut self, timer: TimerKind) -> Result<()> {
            self.timer = timer;
            Ok(())
        }

        fn set_wait_mode(&mut self, mode: WaitMode) -> Result<()> {
            self.wait = mode;
            Ok(())
        }
    };
}
pub(crate) use same_in_every_backend;

/// A failed launch: [`BackendError::WorkGroupRefused`] when the work-group is above a reported
/// limit (the likely reason), else the driver's error as is.
pub fn launch_refusal(
    info: &DeviceInfo,
    api: Api,
    requested: u32,
    kernel_limit: Option<u32>,
    detail: impl fmt::Display,
) -> BackendError {
    let above = |limit: u32| limit > 0 && requested > limit;
    if requested == 0 || above(info.max_work_group_size) || kernel_limit.is_some_and(above) {
        return BackendError::WorkGroupRefused {
            api,
            requested,
            device: info.name.clone(),
            device_limit: info.max_work_group_size,
            kernel_limit: kernel_limit.map_or_else(|| "not reported".into(), |k| k.to_string()),
            detail: detail.to_string(),
        };
    }
    BackendError::driver(api, "launch", detail)
}

/// Driver calls made since the backend was opened: what a test reads to prove that a
/// host-timed launch asks the driver for no event.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallCounts {
    pub launches: u64,
    /// Events asked of the driver (OpenCL: returned by an enqueue; CUDA: recorded on a stream).
    pub events: u64,
}

/// A `Cell`, since the counting paths borrow the backend shared.
#[derive(Default)]
pub(crate) struct CallCounter(std::cell::Cell<CallCounts>);

impl CallCounter {
    pub(crate) fn count(&self, launch: bool, event: bool) {
        let mut c = self.0.get();
        c.launches += u64::from(launch);
        c.events += u64::from(event);
        self.0.set(c);
    }

    pub(crate) fn get(&self) -> CallCounts {
        self.0.get()
    }
}

/// One case of a plain launch loop ([`PlainLoops::plain_launches`]): `batch` launches of one
/// shape (1: one at a time), then one wait in `wait`, repeated `reps` times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlainLoop {
    pub shape: LaunchShape,
    pub wait: WaitMode,
    pub batch: u32,
    pub reps: u32,
    /// Each repetition writes one word into the kernel's first buffer argument before its
    /// launches and reads it back after them, the read being the wait: the calls of one BFS
    /// level (a flag cleared, two kernels, the flag read), as a plain program makes them.
    pub flag_copies: bool,
}

/// The first buffer among a kernel's arguments: the flag of a plain level loop.
pub fn first_buffer(args: &[Arg]) -> Option<BufferId> {
    args.iter().find_map(|a| match a {
        Arg::Buffer(b) => Some(*b),
        _ => None,
    })
}

pub fn check_alloc(info: &DeviceInfo, len: usize) -> Result<()> {
    let bytes = (len as u64).saturating_mul(4);
    let what = if bytes == 0 {
        "an empty buffer is not a valid problem"
    } else if info.max_alloc_bytes > 0 && bytes > info.max_alloc_bytes {
        "largest single allocation"
    } else {
        return Ok(());
    };
    Err(BackendError::TooLarge {
        bytes,
        limit: info.max_alloc_bytes,
        device: info.name.clone(),
        what: what.into(),
    })
}

/// The backends borrow a copy's source shared and its destination mutably.
pub(crate) fn check_distinct(src: BufferId, dst: BufferId) -> Result<()> {
    if src == dst {
        let why = "copy source and destination are the same buffer";
        return Err(BackendError::InvalidHandle(why.into()));
    }
    Ok(())
}

/// Refuses a texture beyond the device's limit: `texture` is what the API makes over the
/// buffer, `limit_name` the attribute that bounds it.
pub(crate) fn check_texels(
    texels: u64,
    limit: u64,
    device: &str,
    (texture, limit_name): (&str, &str),
) -> Result<()> {
    if texels > limit {
        return Err(BackendError::TooLarge {
            bytes: texels.saturating_mul(4),
            limit: limit.saturating_mul(4),
            device: device.to_string(),
            what: format!("{texture} of {texels} texels; {limit_name} is {limit} texels"),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planar_launches_count_both_dimensions() {
        let one_d = LaunchShape::linear(60, 256);
        assert!(!one_d.is_planar());
        assert_eq!((one_d.global(), one_d.group_items()), (15_360, 256));
        assert_eq!(one_d.describe(), "60x256");
        let two_d = LaunchShape::planar((4, 3), (32, 8));
        assert!(two_d.is_planar());
        assert_eq!(two_d.global_dims(), [128, 24]);
        assert_eq!((two_d.global(), two_d.group_items()), (3072, 256));
        assert_eq!(two_d.describe(), "(4, 3)x(32, 8)");
        // The work-group size is the product, not x alone.
        let big = LaunchShape::planar((1, 1), (64, 32));
        assert_eq!(big.group_items(), 2048);
    }

    #[test]
    fn eq2_peak_of_h200_datasheet_numbers() {
        let info = DeviceInfo {
            memory_clock_mhz: Some(3201),
            memory_bus_width_bits: Some(6016),
            ..Default::default()
        };
        let peak = info.theoretical_peak_gbs().unwrap();
        assert!((peak - 4814.3).abs() < 0.1, "{peak}");
    }

    #[test]
    fn peak_unknown_without_bus_width() {
        let info = DeviceInfo {
            memory_clock_mhz: Some(3201),
            ..Default::default()
        };
        assert_eq!(info.theoretical_peak_gbs(), None);
    }

    #[test]
    fn a_refusal_above_a_reported_limit_names_both_limits_and_the_driver() {
        let info = DeviceInfo {
            name: "Dev".into(),
            max_work_group_size: 1024,
            ..Default::default()
        };
        let e = launch_refusal(
            &info,
            Api::OpenCl,
            2048,
            Some(256),
            "CL_INVALID_WORK_GROUP_SIZE",
        );
        let shown = e.to_string();
        for word in [
            "1024",
            "256",
            "2048",
            "Dev",
            "CL_INVALID_WORK_GROUP_SIZE",
            "driver",
        ] {
            assert!(shown.contains(word), "{word}: {shown}");
        }
        // Above the kernel's advisory figure only: still the driver's verdict, with both.
        let e = launch_refusal(&info, Api::OpenCl, 512, Some(256), "-54").to_string();
        assert!(e.contains("512") && e.contains("this kernel 256"), "{e}");
        // Within every reported limit: the driver's error, not a work-group story.
        let e = launch_refusal(
            &info,
            Api::Cuda,
            128,
            Some(1024),
            "CUDA_ERROR_LAUNCH_FAILED",
        );
        assert!(matches!(e, BackendError::Driver { .. }), "{e}");
    }

    #[test]
    fn a_texture_beyond_the_limit_is_refused_naming_it() {
        let cuda = (
            "a linear texture",
            "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH",
        );
        let opencl = ("an image1d_buffer", "CL_DEVICE_IMAGE_MAX_BUFFER_SIZE");
        for (limit, device, names, named) in [
            (
                1 << 28,
                "H100",
                cuda,
                "MAXIMUM_TEXTURE1D_LINEAR_WIDTH is 268435456",
            ),
            (
                1 << 27,
                "GPU",
                opencl,
                "CL_DEVICE_IMAGE_MAX_BUFFER_SIZE is 134217728",
            ),
        ] {
            assert!(check_texels(limit, limit, device, names).is_ok());
            let e = check_texels(limit + 1, limit, device, names)
                .unwrap_err()
                .to_string();
            assert!(e.contains(named) && e.contains(device), "{e}");
        }
    }

    #[test]
    fn options_put_defines_first() {
        let r = CompileRequest {
            source: String::new(),
            defines: vec![("WG_SIZE".into(), "256".into())],
            flags: vec!["-cl-mad-enable".into()],
            jit: JitOptions::default(),
        };
        assert_eq!(r.options(), vec!["-DWG_SIZE=256", "-cl-mad-enable"]);
    }
}

/// Property tests of the user-string parsers of the backends: timer names (study files) and
/// the `--cl-device` / `--cl-device-b` / `--cuda-device` selectors.
#[cfg(test)]
mod fuzz_tests {
    use proptest::prelude::*;

    use super::*;

    const TIMER_NAMES: &[(&str, TimerKind)] = &[
        ("device-event", TimerKind::DeviceEvent),
        ("event", TimerKind::DeviceEvent),
        ("device", TimerKind::DeviceEvent),
        ("wall-clock", TimerKind::WallClock),
        ("wall", TimerKind::WallClock),
        ("host", TimerKind::WallClock),
    ];

    const DEVICE_NAMES: &[&str] = &["NVIDIA H200", "pthread-cpu", "NVIDIA H100 80GB HBM3", ""];

    fn selector() -> impl Strategy<Value = Option<String>> {
        prop::option::weighted(
            0.9,
            prop_oneof![
                "[0-9]{1,2}",
                "[0-9]{1,2}:[0-9]{1,2}",
                "[0-9]{19,22}(:[0-9])?",
                ".{0,10}",
                prop::sample::select(
                    &["", ":", "0:", ":0", "+1", "-1", " 0", "h200", "NVIDIA"][..]
                )
                .prop_map(str::to_string),
            ],
        )
    }

    fn infos(n: usize) -> Vec<DeviceInfo> {
        (0..n)
            .map(|i| DeviceInfo {
                name: DEVICE_NAMES[i % DEVICE_NAMES.len()].into(),
                platform: if i % 2 == 0 {
                    "NVIDIA CUDA"
                } else {
                    "Portable Computing Language"
                }
                .into(),
                ..Default::default()
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn timer_names_parse_exactly(
            text in ".{0,14}|device-event|wall-clock|event|wall|host|device"
        ) {
            let known = TIMER_NAMES.iter().find(|(n, _)| *n == text).map(|(_, k)| *k);
            prop_assert_eq!(TimerKind::parse(&text), known);
            if let Some(k) = known {
                prop_assert_eq!(TimerKind::parse(k.label()), Some(k));
            }
        }

        #[test]
        fn cuda_selectors_pick_a_listed_device_or_explain(sel in selector(), n in 0usize..5) {
            let devices = infos(n);
            match cuda::select(&devices, sel.as_deref()) {
                Ok(i) => {
                    prop_assert!(i < devices.len());
                    if let Some(k) = sel.as_deref().and_then(|s| s.parse::<usize>().ok()) {
                        prop_assert_eq!(i, k);
                    }
                }
                Err(e) => {
                    let shown = e.to_string();
                    if let Some(s) = &sel {
                        let quoted = format!("'{s}'");
                        prop_assert!(shown.contains(&quoted), "{shown}");
                    }
                }
            }
        }

        #[test]
        fn opencl_selectors_pick_a_listed_device_or_explain(sel in selector(), n in 0usize..5) {
            let devices: Vec<opencl::ListedDevice> = infos(n)
                .into_iter()
                .enumerate()
                .map(|(i, info)| opencl::ListedDevice {
                    platform_index: i % 2,
                    device_index: i / 2,
                    id: std::ptr::null_mut(),
                    info,
                })
                .collect();
            match opencl::select(&devices, sel.as_deref()) {
                Ok(d) => {
                    let i = devices.iter().position(|x| std::ptr::eq(x, d));
                    prop_assert!(i.is_some(), "not one of the listed devices");
                    let parts = sel.as_deref().and_then(|s| s.split_once(':')).and_then(|(p, q)| {
                        Some((p.parse::<usize>().ok()?, q.parse::<usize>().ok()?))
                    });
                    if let Some((p, q)) = parts {
                        prop_assert_eq!((d.platform_index, d.device_index), (p, q));
                    } else if let Some(k) = sel.as_deref().and_then(|s| s.parse::<usize>().ok()) {
                        prop_assert_eq!(i, Some(k));
                    }
                }
                Err(e) => {
                    let shown = e.to_string();
                    if let Some(s) = &sel {
                        let quoted = format!("'{s}'");
                        prop_assert!(shown.contains(&quoted), "{shown}");
                    }
                }
            }
        }
    }
}
