//! The plain CUDA launch loop that `clvscu calibrate` holds the harness against: the driver
//! calls a C program makes, with nothing of cudarc's safe layer or the harness between them.

use std::ffi::c_void;
use std::time::Instant;

use cudarc::driver::sys::{CUdeviceptr, CUstream, CUtexObject};
use cudarc::driver::{result, CudaFunction};

use super::super::{PlainLoop, Result, WaitMode};
use super::{drv, StopEvents};

/// Owned so that its address stays valid.
#[derive(Debug, Clone, Copy)]
pub(super) enum Param {
    Pointer(CUdeviceptr),
    Texture(CUtexObject),
    U32(u32),
    F32(f32),
}

/// Waits for everything enqueued on `stream`.
///
/// # Safety
/// `stream` and the events are live handles of the current context.
pub(super) unsafe fn wait(stream: CUstream, events: &StopEvents, mode: WaitMode) -> Result<()> {
    if mode == WaitMode::Finish {
        return result::stream::synchronize(stream).map_err(drv("cuStreamSynchronize"));
    }
    let event = events.of(mode).cu_event();
    result::event::record(event, stream).map_err(drv("cuEventRecord"))?;
    mode.wait(
        || match result::event::query(event) {
            Ok(()) => Ok(true),
            Err(e) if e.0 == cudarc::driver::sys::cudaError_enum::CUDA_ERROR_NOT_READY => Ok(false),
            Err(e) => Err(drv("cuEventQuery")(e)),
        },
        || result::event::synchronize(event).map_err(drv("cuEventSynchronize")),
    )
}

/// A kernel's parameters packed for `cuLaunchKernel`, reused by a launch with the same `args`.
pub(super) struct Packed {
    args: Vec<crate::backend::Arg>,
    /// Owned values; `pointers` point into this boxed slice, which never moves or grows.
    values: Box<[Param]>,
    pointers: Vec<*mut c_void>,
}

impl Packed {
    pub fn new(args: &[crate::backend::Arg], params: Vec<Param>) -> Self {
        let mut values = params.into_boxed_slice();
        let pointers = values
            .iter_mut()
            .map(|p| match p {
                Param::Pointer(v) | Param::Texture(v) => (v as *mut u64).cast(),
                Param::U32(v) => (v as *mut u32).cast(),
                Param::F32(v) => (v as *mut f32).cast(),
            })
            .collect();
        Packed {
            args: args.to_vec(),
            values,
            pointers,
        }
    }

    pub fn holds(&self, args: &[crate::backend::Arg]) -> bool {
        self.args == args && self.values.len() == self.pointers.len()
    }

    /// # Safety
    /// The parameters follow the kernel's signature (packed from its argument list), and the
    /// function and stream belong to the current context.
    pub unsafe fn launch(
        &mut self,
        f: &CudaFunction,
        stream: CUstream,
        shape: crate::backend::LaunchShape,
    ) -> std::result::Result<(), result::DriverError> {
        let grid = (shape.groups, shape.groups_y, 1);
        let block = (shape.local, shape.local_y, 1);
        result::launch_kernel(f.cu_function(), grid, block, 0, stream, &mut self.pointers)
    }
}

/// `plan.reps` repetitions of `plan.batch` launches and one wait, each timed on the host. With
/// `flag`, each repetition copies one word into it first and back after, and waits for that.
pub(super) fn launch_loop(
    f: &CudaFunction,
    stream: CUstream,
    packed: &mut Packed,
    events: &StopEvents,
    plan: PlainLoop,
    flag: Option<CUdeviceptr>,
) -> Result<Vec<f64>> {
    let mut times = Vec::with_capacity(plan.reps as usize);
    let mut word = [0u32];
    for _ in 0..plan.reps {
        let t0 = Instant::now();
        if let Some(ptr) = flag {
            // SAFETY: the flag buffer holds at least one word and lives in this context; the
            // source outlives the copy, which the wait below completes.
            unsafe { result::memcpy_htod_async(ptr, &word, stream) }
                .map_err(drv("cuMemcpyHtoDAsync (plain level)"))?;
        }
        for _ in 0..plan.batch.max(1) {
            // SAFETY: the caller packed the parameters from the kernel's arguments, and the
            // function and stream belong to the current context.
            unsafe { packed.launch(f, stream, plan.shape) }
                .map_err(drv("cuLaunchKernel (plain loop)"))?;
        }
        match flag {
            // SAFETY: as above; the word is read before the stream is synchronised.
            Some(ptr) => unsafe {
                result::memcpy_dtoh_async(&mut word, ptr, stream)
                    .map_err(drv("cuMemcpyDtoHAsync (plain level)"))?;
                result::stream::synchronize(stream).map_err(drv("cuStreamSynchronize"))?;
            },
            // SAFETY: as above; the events were made in this context.
            None => unsafe { wait(stream, events, plan.wait) }?,
        }
        times.push(t0.elapsed().as_secs_f64());
    }
    Ok(times)
}
