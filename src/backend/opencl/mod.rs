//! OpenCL backend (`opencl3` only). libOpenCL is opened at run time, so a machine without an
//! ICD loader gets a clear "OpenCL unavailable" instead of a crash.

mod binary;
mod device;
mod image;
mod log;
mod options;
mod plain;
mod probe;
mod timing;
mod transfer;

use std::cell::RefCell;
use std::ptr;
use std::time::Instant;

use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::Device;
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::program::Program;
use opencl3::types::{cl_float, cl_uint, CL_NON_BLOCKING};

pub use probe::{availability, list_devices, select, ListedDevice};

use super::handles::Owned;
use super::*;
use timing::event_timing;
use transfer::HostBuf;

const API: Api = Api::OpenCl;

struct BuiltProgram {
    program: Program,
    /// Empty unless the compiler was asked to talk (NVIDIA's `-cl-nv-verbose`).
    build_log: String,
}

struct BuiltKernel {
    kernel: Kernel,
    /// As the build log reports them.
    registers: Option<u32>,
    /// The arguments last set: a plain program sets them once, and OpenCL keeps them.
    args_set: RefCell<Vec<Arg>>,
}

/// An OpenCL device with three in-order queues.
pub struct OpenClBackend {
    info: DeviceInfo,
    device: Device,
    context: Context,
    /// With profiling, as `side_queue` (for a transfer beside a kernel).
    queue: CommandQueue,
    side_queue: CommandQueue,
    /// Without profiling, for launches timed by the wall clock alone.
    plain_queue: CommandQueue,
    wait: WaitMode,
    timer: TimerKind,
    own: Owned<HostBuf, BuiltProgram, BuiltKernel, Buffer<cl_float>>,
    images: image::Images,
    calls: CallCounter,
    /// Why this context is lost, once a wait has failed: NVIDIA's OpenCL then fails every
    /// later command of the process, and those failures are reported as this one.
    lost: std::cell::OnceCell<String>,
}

fn drv<E: std::fmt::Display>(what: &str) -> impl Fn(E) -> BackendError + '_ {
    move |e| BackendError::driver(API, what, e)
}

fn check_fits(
    bytes: std::result::Result<usize, opencl3::error_codes::ClError>,
    floats: usize,
) -> Result<()> {
    let bytes = bytes.map_err(drv("CL_MEM_SIZE"))?;
    if floats * 4 > bytes {
        return Err(BackendError::InvalidHandle(format!(
            "a copy of {floats} floats into a buffer of {} floats",
            bytes / 4
        )));
    }
    Ok(())
}

impl Backend for OpenClBackend {
    fn api(&self) -> Api {
        API
    }

    super::same_in_every_backend!();

    fn compile(&mut self, request: &CompileRequest) -> Result<ProgramId> {
        self.alive()?;
        if let Some(id) = self.own.built(request) {
            return Ok(id);
        }
        let options = self.build_options(request.options(), &request.jit)?;
        let program =
            Program::create_and_build_from_source(&self.context, &request.source, &options)
                .map_err(|log| BackendError::Compile {
                    api: API,
                    options: options.clone(),
                    log,
                })?;
        Ok(self.keep(request, program))
    }

    fn kernel(&mut self, program: ProgramId, name: &str) -> Result<KernelId> {
        self.own.kernel_or(program, name, |built| {
            let kernel =
                Kernel::create(&built.program, name).map_err(|_| BackendError::NoSuchKernel {
                    name: name.to_string(),
                    available: built.program.kernel_names().to_string(),
                })?;
            let registers = log::ptxas_registers(&built.build_log, name);
            Ok(BuiltKernel {
                kernel,
                registers,
                args_set: RefCell::new(Vec::new()),
            })
        })
    }

    fn kernel_resources(&self, kernel: KernelId) -> Result<KernelResources> {
        let k = self.own.kernels.get(kernel)?;
        let id = self.device.id();
        Ok(KernelResources {
            registers: k.registers,
            shared_bytes: k.kernel.get_local_mem_size(id).ok(),
            local_bytes: k.kernel.get_private_mem_size(id).ok(),
            max_threads_per_group: self.kernel_limit(&k.kernel),
        })
    }

    fn alloc(&mut self, len: usize) -> Result<BufferId> {
        check_alloc(&self.info, len)?;
        // SAFETY: no host pointer is passed; the buffer is uninitialised device memory that
        // is always written (upload or poison) before a kernel reads it.
        let buffer = unsafe {
            Buffer::<cl_float>::create(&self.context, CL_MEM_READ_WRITE, len, ptr::null_mut())
        }
        .map_err(|e| BackendError::driver(API, &format!("clCreateBuffer({len} floats)"), e))?;
        Ok(self.own.buffers.insert(buffer))
    }

    fn upload(&mut self, buffer: BufferId, data: &[f32]) -> Result<()> {
        // SAFETY: `data` outlives the blocking call, and the driver only reads it.
        unsafe { self.blocking_copy(buffer, true, data.as_ptr().cast_mut(), data.len()) }
    }

    fn download(&mut self, buffer: BufferId, out: &mut [f32]) -> Result<()> {
        // SAFETY: `out` outlives the blocking call and is borrowed mutably for it.
        unsafe { self.blocking_copy(buffer, false, out.as_mut_ptr(), out.len()) }
    }

    fn free(&mut self, buffer: BufferId) -> Result<()> {
        self.images.forget(buffer);
        self.own.buffers.remove(buffer)
    }
}

impl BufferOps for OpenClBackend {
    fn poison(&mut self, buffer: BufferId, len: usize) -> Result<()> {
        self.alive()?;
        let b = self.own.buffers.get_mut(buffer)?;
        check_fits(b.size(), len)?;
        // SAFETY: the pattern is one float and the range lies inside the buffer (checked
        // above); the wait below keeps the call blocking like an upload.
        let event = unsafe {
            self.queue
                .enqueue_fill_buffer(b, &[f32::NAN], 0, len * 4, &[])
        }
        .map_err(drv("clEnqueueFillBuffer"))?;
        event.wait().map_err(drv("clWaitForEvents (fill)"))
    }

    fn bind_constant(&mut self, program: ProgramId, _symbol: &str, buffer: BufferId) -> Result<()> {
        // The buffer is the kernel's `__constant` argument: nothing to copy.
        self.own.programs.get(program)?;
        self.own.buffers.get(buffer).map(drop)
    }

    fn copy(&mut self, src: BufferId, dst: BufferId, len: usize) -> Result<Timing> {
        check_distinct(src, dst)?;
        self.own.buffers.get(src)?;
        let mut d = self.own.buffers.take(dst)?;
        let result = self.timed_copy(src, &mut d, len);
        self.own.buffers.put_back(dst, d);
        result
    }
}

impl Programs for OpenClBackend {
    fn prebuild(&mut self, requests: &[CompileRequest]) -> usize {
        use rayon::prelude::*;
        if self.alive().is_err() {
            return 0;
        }
        let todo: Vec<(CompileRequest, String)> = self
            .own
            .not_built(requests)
            .into_iter()
            .filter_map(|r| self.build_options(r.options(), &r.jit).ok().map(|o| (r, o)))
            .collect();
        // A GPU driver builds distinct programs of one context at once. A CPU device's
        // compiler runs LLVM inside this process, and on a 16-core host PoCL 5.0 aborted
        // parallel builds on an assertion, so there they are built one after another.
        let context = &self.context;
        let build = |(request, options): (CompileRequest, String)| {
            Program::create_and_build_from_source(context, &request.source, &options)
                .ok()
                .map(|p| (request, p))
        };
        let made: Vec<(CompileRequest, Program)> = if self.info.is_gpu {
            todo.into_par_iter().filter_map(build).collect()
        } else {
            todo.into_iter().filter_map(build).collect()
        };
        let count = made.len();
        for (request, program) in made {
            self.keep(&request, program);
        }
        count
    }

    fn broken(&self) -> Option<String> {
        self.lost.get().cloned()
    }

    fn program_text(&self, program: ProgramId) -> Result<Option<String>> {
        let built = self.own.programs.get(program)?;
        let binaries = built
            .program
            .get_binaries()
            .map_err(drv("CL_PROGRAM_BINARIES"))?;
        // NVIDIA returns PTX text; PoCL returns its own binary container, which is not text.
        Ok(binaries.into_iter().next().and_then(|bytes| {
            let text = String::from_utf8(bytes).ok()?;
            let text = text.trim_end_matches('\0').to_string();
            text.contains(".entry").then_some(text)
        }))
    }

    fn build_log(&self, program: ProgramId) -> Option<String> {
        self.own
            .programs
            .get(program)
            .ok()
            .map(|p| p.build_log.clone())
    }
}

impl ForeignCode for OpenClBackend {
    fn load_foreign_program(&mut self, text: &str, jit: &JitOptions) -> Result<ProgramId> {
        self.alive()?;
        self.load_ptx_binary(text, jit)
    }
}

impl HostTransfers for OpenClBackend {
    fn alloc_host(&mut self, len: usize, memory: HostMemory) -> Result<HostBufferId> {
        check_alloc(&self.info, len)?;
        let host = HostBuf::new(&self.context, &self.queue, len, memory)?;
        Ok(self.own.hosts.insert(host))
    }

    fn host_data(&mut self, host: HostBufferId) -> Result<&mut [f32]> {
        Ok(self.own.hosts.get_mut(host)?.data())
    }

    fn free_host(&mut self, host: HostBufferId) -> Result<()> {
        self.own.hosts.take(host)?.release(&self.queue)?;
        Ok(())
    }

    fn transfer(&mut self, transfer: Transfer) -> Result<Timing> {
        let t0 = Instant::now();
        let event = self.enqueue_transfer(false, transfer)?;
        self.wait_for(&self.queue, Some(&event), "transfer")?;
        Ok(event_timing(&event, t0.elapsed().as_secs_f64()))
    }

    fn transfer_beside_kernel(
        &mut self,
        transfer: Transfer,
        kernel: KernelId,
        shape: LaunchShape,
        args: &[Arg],
        concurrent: bool,
    ) -> Result<Timing> {
        self.make_images(args)?;
        self.set_args(kernel, args)?;
        let t0 = Instant::now();
        let copy = self.enqueue_transfer(concurrent, transfer)?;
        let k = &self.own.kernels.get(kernel)?.kernel;
        let run = self.enqueue_kernel(&self.queue, k, shape, true)?;
        if concurrent {
            self.wait_for(&self.side_queue, Some(&copy), "transfer beside a kernel")?;
        }
        // On one in-order queue the kernel's completion implies the transfer's.
        self.wait_for(&self.queue, run.as_ref(), "kernel beside a transfer")?;
        Ok(Timing::clocks(Seconds(t0.elapsed().as_secs_f64()), None))
    }
}

impl PlainLoops for OpenClBackend {
    fn launch_repeated(
        &mut self,
        kernel: KernelId,
        shape: LaunchShape,
        args: &[Arg],
        count: u32,
    ) -> Result<Timing> {
        self.make_images(args)?;
        // The device clock needs the first and last launches' events on the profiling queue,
        // the host clock only the last one's where the wait mode waits on it. Every launch
        // waits for its completion, so switching queues never reorders work.
        let on_device = self.timer == TimerKind::DeviceEvent;
        let queue = if on_device {
            &self.queue
        } else {
            &self.plain_queue
        };
        let with_event = |i: u32| {
            let first = i == 0 && on_device;
            let last = i + 1 == count.max(1) && (on_device || self.wait.needs_event());
            first || last
        };
        // Argument setting is inside the wall window: CUDA marshals arguments inside
        // cuLaunchKernel, so both sides pay for "everything needed to launch".
        let t0 = Instant::now();
        self.set_args(kernel, args)?;
        let k = &self.own.kernels.get(kernel)?.kernel;
        let mut first = None;
        let mut last = None;
        for i in 0..count.max(1) {
            let event = self.enqueue_kernel(queue, k, shape, with_event(i))?;
            if i == 0 {
                first = event;
            } else if event.is_some() {
                last = event;
            }
        }
        let last = last.as_ref().or(first.as_ref());
        self.wait_for(queue, last, "kernel")?;
        let wall = t0.elapsed().as_secs_f64();
        let (Some(first), Some(last), true) = (first.as_ref(), last, on_device) else {
            return Ok(Timing::clocks(Seconds(wall), None));
        };
        let mut timing = event_timing(first, wall);
        if count > 1 {
            // First start to last end: the device time of all `count` launches.
            timing.device = timing::span(
                first.profiling_command_start().ok(),
                last.profiling_command_end().ok(),
            );
        }
        Ok(timing)
    }

    fn plain_launches(
        &mut self,
        kernel: KernelId,
        args: &[Arg],
        plan: PlainLoop,
    ) -> Result<Vec<f64>> {
        self.make_images(args)?;
        self.set_args(kernel, args)?;
        let flag = match (plan.flag_copies, crate::backend::first_buffer(args)) {
            (true, Some(b)) => Some(self.own.buffers.get(b)?.get()),
            _ => None,
        };
        let k = &self.own.kernels.get(kernel)?.kernel;
        plain::launch_loop(&self.plain_queue, k, plan, flag)
    }

    fn plain_transfers(&mut self, transfer: Transfer, reps: u32) -> Result<Vec<f64>> {
        self.alive()?;
        let mem = self.own.buffers.get(transfer.buffer)?.get();
        let host = self.own.hosts.get_mut(transfer.host)?;
        let data = host.prefix(transfer.len)?;
        plain::copy_loop(&self.plain_queue, mem, transfer.direction, data, reps)
    }

    fn calls(&self) -> CallCounts {
        self.calls.get()
    }
}

impl ExactLaunch for OpenClBackend {
    fn launch_exact(
        &mut self,
        kernel: KernelId,
        global: u64,
        local: Option<u32>,
        args: &[Arg],
    ) -> Result<Timing> {
        self.make_images(args)?;
        let t0 = Instant::now();
        self.set_args(kernel, args)?;
        let k = &self.own.kernels.get(kernel)?.kernel;
        let global = [global as usize];
        let local = local.map(|l| [l as usize]);
        // `global` as is and `local` or NULL, with no check of our own: the driver's answer, a
        // refusal included, is what is recorded.
        // SAFETY: arguments were set above to match the kernel signature; a NULL local size
        // is the API's documented "let the runtime choose".
        let event = unsafe {
            self.queue.enqueue_nd_range_kernel(
                k.get(),
                1,
                ptr::null(),
                global.as_ptr(),
                local.as_ref().map_or(ptr::null(), |l| l.as_ptr()),
                &[],
            )
        }
        .map_err(drv("clEnqueueNDRangeKernel"))?;
        self.calls.count(true, true);
        self.wait_for(&self.queue, Some(&event), "kernel")?;
        Ok(event_timing(&event, t0.elapsed().as_secs_f64()))
    }
}
