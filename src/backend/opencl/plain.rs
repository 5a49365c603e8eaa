//! Launches as a plain OpenCL program writes them, and the plain launch loop that `clvscu
//! calibrate` holds the harness against. opencl3 always asks the driver for an event, which
//! costs NVIDIA's OpenCL about a microsecond; a launch nothing waits on or times goes through
//! cl3's loaded runtime with a NULL event pointer, as a C program's does.

use std::ptr;
use std::time::Instant;

use opencl3::command_queue::CommandQueue;
use opencl3::event::{Event, CL_COMPLETE};
use opencl3::kernel::Kernel;
use opencl3::types::{cl_event, cl_int, cl_uint};

use super::super::{BackendError, Direction, LaunchShape, PlainLoop, Result, WaitMode};
use super::API;

/// One `clEnqueueNDRangeKernel` of `kernel` (arguments set).
pub(super) fn enqueue(
    queue: &CommandQueue,
    kernel: &Kernel,
    shape: LaunchShape,
    with_event: bool,
) -> std::result::Result<Option<Event>, cl_int> {
    let [gx, gy] = shape.global_dims();
    let global: [usize; 2] = [gx as usize, gy as usize];
    let local: [usize; 2] = [shape.local as usize, shape.local_y as usize];
    // A 1-D launch stays 1-D: the kernels' get_global_size(1) etc. are then 1, as in CUDA.
    let dims: cl_uint = if shape.is_planar() { 2 } else { 1 };
    let mut event: cl_event = ptr::null_mut();
    let event_out = if with_event {
        &raw mut event
    } else {
        ptr::null_mut()
    };
    // The loaded entry point is typed as a safe fn, but the contract is C's: queue and
    // kernel are live handles owned by the backend, the size arrays outlive the call and
    // hold `dims` entries, and the caller set the kernel's arguments to match its signature.
    call(|runtime| {
        runtime.clEnqueueNDRangeKernel(
            queue.get(),
            kernel.get(),
            dims,
            ptr::null(),
            global.as_ptr(),
            local.as_ptr(),
            0,
            ptr::null(),
            event_out,
        )
    })?;
    Ok(with_event.then(|| Event::new(event)))
}

fn call(f: impl FnOnce(&cl3::OpenClRuntime) -> Option<cl_int>) -> std::result::Result<(), cl_int> {
    let runtime = cl3::load_library()
        .as_ref()
        .map_err(|_| cl3::error_codes::DLOPEN_RUNTIME_LOAD_FAILED)?;
    match f(runtime).ok_or(cl3::error_codes::DLOPEN_FUNCTION_NOT_AVAILABLE)? {
        0 => Ok(()),
        status => Err(status),
    }
}

/// `CL_INVALID_WORK_GROUP_SIZE (-54)`.
pub(super) fn status_text(status: cl_int) -> String {
    format!("{} ({status})", cl3::error_codes::ClError(status))
}

pub(super) fn failed(what: &str) -> impl Fn(cl_int) -> BackendError + '_ {
    move |status| BackendError::driver(API, what, status_text(status))
}

/// Waits as a plain program does in `mode`: `clFinish`, or the event (flushed first when
/// polled, since a driver may hold an unflushed command back).
pub(super) fn wait(
    queue: &CommandQueue,
    event: Option<&Event>,
    mode: WaitMode,
) -> std::result::Result<(), cl_int> {
    let Some(event) = event.filter(|_| mode.needs_event()) else {
        return queue.finish().map_err(|e| e.0);
    };
    if mode != WaitMode::Blocking {
        queue.flush().map_err(|e| e.0)?;
    }
    mode.wait(
        || {
            let status = event.command_execution_status().map_err(|e| e.0)?;
            if status.0 < 0 {
                return Err(status.0);
            }
            Ok(status.0 == CL_COMPLETE)
        },
        || event.wait().map_err(|e| e.0),
    )
}

/// [`crate::backend::PlainLoops::plain_launches`] on a queue without profiling: `batch`
/// enqueues, the last with an event where the wait mode needs one, one wait. With `flag`, a
/// word written into it first and read back after (both blocking) is the wait instead.
pub(super) fn launch_loop(
    queue: &CommandQueue,
    kernel: &Kernel,
    plan: PlainLoop,
    flag: Option<opencl3::types::cl_mem>,
) -> Result<Vec<f64>> {
    let mut times = Vec::with_capacity(plan.reps as usize);
    let mut word = 0u32;
    let word_ptr: *mut std::ffi::c_void = (&mut word as *mut u32).cast();
    let batch = plan.batch.max(1);
    let what = match flag {
        Some(_) => "clEnqueueNDRangeKernel (plain level)",
        None => "clEnqueueNDRangeKernel (plain loop)",
    };
    for _ in 0..plan.reps {
        let t0 = Instant::now();
        if let Some(buffer) = flag {
            // SAFETY: `word` outlives the blocking call; the flag buffer holds a word.
            unsafe { blocking_copy(queue, buffer, true, word_ptr, 4) }
                .map_err(failed("clEnqueueWriteBuffer (plain level)"))?;
        }
        let mut last = None;
        for i in 1..=batch {
            // Only the last launch of a loop without a flag asks for the event it waits on.
            let event = flag.is_none() && i == batch && plan.wait.needs_event();
            last = enqueue(queue, kernel, plan.shape, event).map_err(failed(what))?;
        }
        match flag {
            // SAFETY: as above.
            Some(buffer) => unsafe { blocking_copy(queue, buffer, false, word_ptr, 4) }
                .map_err(failed("clEnqueueReadBuffer (plain level)"))?,
            None => wait(queue, last.as_ref(), plan.wait).map_err(failed("wait (plain loop)"))?,
        }
        times.push(t0.elapsed().as_secs_f64());
    }
    Ok(times)
}

/// No event is asked of the driver.
///
/// # Safety
/// `host` points to at least `bytes` bytes that stay valid for the call (it blocks), and
/// `buffer` holds at least `bytes` bytes.
pub(super) unsafe fn blocking_copy(
    queue: &CommandQueue,
    buffer: opencl3::types::cl_mem,
    to_device: bool,
    host: *mut std::ffi::c_void,
    bytes: usize,
) -> std::result::Result<(), cl_int> {
    const BLOCKING: opencl3::types::cl_bool = 1;
    call(|runtime| {
        if to_device {
            runtime.clEnqueueWriteBuffer(
                queue.get(),
                buffer,
                BLOCKING,
                0,
                bytes,
                host.cast_const(),
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        } else {
            runtime.clEnqueueReadBuffer(
                queue.get(),
                buffer,
                BLOCKING,
                0,
                bytes,
                host,
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        }
    })
}

pub(super) fn copy_loop(
    queue: &CommandQueue,
    buffer: opencl3::types::cl_mem,
    direction: Direction,
    data: &mut [f32],
    reps: u32,
) -> Result<Vec<f64>> {
    let to_device = direction == Direction::H2d;
    let bytes = std::mem::size_of_val(data);
    let host: *mut std::ffi::c_void = data.as_mut_ptr().cast();
    let mut times = Vec::with_capacity(reps as usize);
    for _ in 0..reps {
        let t0 = Instant::now();
        // SAFETY: `data` holds `bytes` bytes and outlives the blocking call; the caller checked
        // that the buffer holds as many.
        unsafe { blocking_copy(queue, buffer, to_device, host, bytes) }
            .map_err(failed("clEnqueueWriteBuffer/ReadBuffer (plain copy)"))?;
        times.push(t0.elapsed().as_secs_f64());
    }
    Ok(times)
}
