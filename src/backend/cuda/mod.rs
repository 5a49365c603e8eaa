//! CUDA backend (`cudarc` only): driver API + NVRTC, both opened at run time. cudarc panics
//! when libcuda or libnvrtc is missing, so every entry point checks for the library first and
//! reports `CUDA unavailable: <reason>` instead.

mod device;
mod jit;
mod nvrtc;
mod plain;
mod probe;
mod texture;
mod transfer;

use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::sys::{self, CUevent_flags, CUfunction_attribute_enum};
use cudarc::driver::{
    CudaContext, CudaEvent, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr,
};
use cudarc::nvrtc::Ptx;

pub use nvrtc::{compile_to_ptx, entry_names, nvrtc_availability, nvrtc_version};
pub use probe::{arch_name, availability, driver_availability, list_devices, select};

use super::handles::Owned;
use super::*;
use transfer::HostBuf;

const API: Api = Api::Cuda;

struct LoadedKernel {
    function: CudaFunction,
    packed: std::cell::RefCell<Option<plain::Packed>>,
}

struct LoadedProgram {
    ptx: String,
    module: Arc<CudaModule>,
    /// No assembler option: set on each kernel after loading.
    carveout: Option<u32>,
}

impl LoadedProgram {
    /// PTX loaded into `ctx`, through the driver's linker only where
    /// [`JitOptions::needs_linker`]: the linker, cudarc's only path with JIT options, may make
    /// other machine code from the same PTX. So a register cap is written into the PTX itself
    /// ([`ptx_swap::cap_registers`]) and still loads through `cuModuleLoadData`.
    fn load(ctx: &Arc<CudaContext>, ptx: String, jit: &JitOptions) -> Result<Self> {
        let module = if jit.needs_linker() {
            let cubin = jit::assemble(ctx, &ptx, jit)?;
            ctx.load_module(Ptx::from_binary(cubin))
                .map_err(drv("cuModuleLoadData (assembled with JIT options)"))?
        } else {
            let text = match jit.max_registers {
                Some(cap) => ptx_swap::cap_registers(&ptx, cap),
                None => ptx.clone(),
            };
            ctx.load_module(Ptx::from_src(text))
                .map_err(drv("cuModuleLoadData"))?
        };
        Ok(LoadedProgram {
            ptx,
            module,
            carveout: jit.carveout,
        })
    }
}

/// Stop events of one stream: one to poll (untimed for launches timed by the wall clock
/// alone) and one made with `CU_EVENT_BLOCKING_SYNC` to sleep on.
struct StopEvents {
    polled: CudaEvent,
    blocking: CudaEvent,
}

impl StopEvents {
    fn new(ctx: &Arc<CudaContext>, timing: bool) -> Result<Self> {
        let polled = if timing {
            CUevent_flags::CU_EVENT_DEFAULT
        } else {
            CUevent_flags::CU_EVENT_DISABLE_TIMING
        };
        Ok(StopEvents {
            polled: ctx.new_event(Some(polled)).map_err(drv("cuEventCreate"))?,
            // cudarc creates an event from one flag, so the sleeping event keeps its timing
            // even where the polled one drops it.
            blocking: ctx
                .new_event(Some(CUevent_flags::CU_EVENT_BLOCKING_SYNC))
                .map_err(drv("cuEventCreate (CU_EVENT_BLOCKING_SYNC)"))?,
        })
    }

    fn of(&self, mode: WaitMode) -> &CudaEvent {
        if sleeps_on_blocking_event(mode) {
            &self.blocking
        } else {
            &self.polled
        }
    }
}

/// Whether a wait in `mode` sleeps on the `CU_EVENT_BLOCKING_SYNC` event (a polled wait
/// does not, to keep one event per behaviour).
fn sleeps_on_blocking_event(mode: WaitMode) -> bool {
    mode == WaitMode::Blocking
}

/// A CUDA device with one stream, reusable events, and a second stream for a transfer beside
/// a kernel.
pub struct CudaBackend {
    info: DeviceInfo,
    arch: &'static str,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    start: CudaEvent,
    stop: StopEvents,
    /// For launches timed by the wall clock alone.
    untimed_stop: StopEvents,
    side_stream: Arc<CudaStream>,
    side_stop: StopEvents,
    wait: WaitMode,
    timer: TimerKind,
    own: Owned<HostBuf, LoadedProgram, LoadedKernel, CudaSlice<f32>>,
    textures: texture::Textures,
    calls: CallCounter,
}

fn drv<E: std::fmt::Debug>(what: &str) -> impl Fn(E) -> BackendError + '_ {
    move |e| BackendError::driver(API, what, format!("{e:?}"))
}

fn resources_of(f: &CudaFunction) -> KernelResources {
    let count = |v: std::result::Result<i32, _>| v.ok().and_then(|v| u32::try_from(v).ok());
    KernelResources {
        registers: count(f.num_regs()),
        shared_bytes: count(f.shared_size_bytes()).map(u64::from),
        local_bytes: count(f.local_size_bytes()).map(u64::from),
        max_threads_per_group: count(f.max_threads_per_block()),
    }
}

impl Backend for CudaBackend {
    fn api(&self) -> Api {
        API
    }

    super::same_in_every_backend!();

    fn compile(&mut self, request: &CompileRequest) -> Result<ProgramId> {
        if let Some(id) = self.own.built(request) {
            return Ok(id);
        }
        let ptx = compile_to_ptx(request, self.arch)?;
        let program = LoadedProgram::load(&self.ctx, ptx, &request.jit)?;
        Ok(self.own.keep_program(request, program))
    }

    fn kernel(&mut self, program: ProgramId, name: &str) -> Result<KernelId> {
        self.own.kernel_or(program, name, |p| {
            let function =
                p.module
                    .load_function(name)
                    .map_err(|_| BackendError::NoSuchKernel {
                        name: name.to_string(),
                        available: entry_names(&p.ptx).join(", "),
                    })?;
            if let Some(percent) = p.carveout {
                function
                .set_attribute(
                    CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                    percent as i32,
                )
                .map_err(drv("cuFuncSetAttribute (shared-memory carveout)"))?;
            }
            Ok(LoadedKernel {
                function,
                packed: std::cell::RefCell::new(None),
            })
        })
    }

    fn kernel_resources(&self, kernel: KernelId) -> Result<KernelResources> {
        Ok(resources_of(&self.own.kernels.get(kernel)?.function))
    }

    fn alloc(&mut self, len: usize) -> Result<BufferId> {
        check_alloc(&self.info, len)?;
        let slice = self
            .stream
            .alloc_zeros::<f32>(len)
            .map_err(drv("cuMemAlloc"))?;
        Ok(self.own.buffers.insert(slice))
    }

    fn upload(&mut self, buffer: BufferId, data: &[f32]) -> Result<()> {
        let stream = self.stream.clone();
        let dst = self.own.buffers.get_mut(buffer)?;
        stream.memcpy_htod(data, dst).map_err(drv("cuMemcpyHtoD"))?;
        self.sync()
    }

    fn download(&mut self, buffer: BufferId, out: &mut [f32]) -> Result<()> {
        let src = self.own.buffers.get(buffer)?;
        self.stream
            .memcpy_dtoh(src, out)
            .map_err(drv("cuMemcpyDtoH"))?;
        self.sync()
    }

    fn free(&mut self, buffer: BufferId) -> Result<()> {
        self.textures.forget(buffer);
        self.own.buffers.remove(buffer)
    }
}

impl BufferOps for CudaBackend {
    fn poison(&mut self, buffer: BufferId, len: usize) -> Result<()> {
        let stream = self.stream.clone();
        let dst = self.own.buffers.get_mut(buffer)?;
        if len > dst.len() {
            return Err(BackendError::InvalidHandle(format!(
                "a fill of {len} floats into a buffer of {} floats",
                dst.len()
            )));
        }
        let (ptr, _sync) = cudarc::driver::DevicePtrMut::device_ptr_mut(dst, &stream);
        // SAFETY: `ptr` is a live allocation of at least `len` floats on this stream's
        // context (checked above), and any bit pattern is a valid f32.
        unsafe { sys::cuMemsetD32Async(ptr, f32::NAN.to_bits(), len, stream.cu_stream()) }
            .result()
            .map_err(drv("cuMemsetD32Async"))?;
        stream.synchronize().map_err(drv("cuStreamSynchronize"))
    }

    fn bind_constant(&mut self, program: ProgramId, symbol: &str, buffer: BufferId) -> Result<()> {
        let module = self.own.programs.get(program)?.module.clone();
        let src = self.own.buffers.get(buffer)?;
        let mut global = module
            .get_global(symbol, &self.stream)
            .map_err(drv("cuModuleGetGlobal"))?;
        let floats = global.len() / 4;
        if src.len() > floats {
            let detail = format!(
                "{} floats do not fit the __constant__ symbol {symbol} of {floats} floats",
                src.len()
            );
            return Err(BackendError::driver(API, "bind_constant", detail));
        }
        // SAFETY: the symbol holds `floats` f32 values (its size in bytes / 4); only the first
        // `src.len()` of them are written.
        let mut dst = unsafe { global.transmute_mut::<f32>(floats) }
            .ok_or_else(|| BackendError::driver(API, "bind_constant", "symbol view"))?;
        let mut dst = dst.slice_mut(0..src.len());
        self.stream
            .memcpy_dtod(src, &mut dst)
            .map_err(drv("cuMemcpyDtoD (constant symbol)"))?;
        self.sync()
    }

    fn copy(&mut self, src: BufferId, dst: BufferId, len: usize) -> Result<Timing> {
        check_distinct(src, dst)?;
        let mut d = self.own.buffers.take(dst)?;
        let result = self.own.buffers.get(src).and_then(|s| {
            // A range past either buffer is the driver's CUDA_ERROR_INVALID_VALUE, not a panic.
            let (Some(s), Some(mut dv)) = (s.try_slice(0..len), d.try_slice_mut(0..len)) else {
                let detail =
                    format!("a copy of {len} floats is longer than its source or destination");
                return Err(BackendError::driver(API, "cuMemcpyDtoD", detail));
            };
            self.timed(Instant::now(), "cuStreamSynchronize (copy)", || {
                self.stream
                    .memcpy_dtod(&s, &mut dv)
                    .map_err(drv("cuMemcpyDtoD"))
            })
        });
        self.own.buffers.put_back(dst, d);
        result
    }
}

impl Programs for CudaBackend {
    /// On the pool's threads: NVRTC and the driver allow it.
    fn prebuild(&mut self, requests: &[CompileRequest]) -> usize {
        use rayon::prelude::*;
        let (ctx, arch) = (&self.ctx, self.arch);
        let made: Vec<_> = self
            .own
            .not_built(requests)
            .into_par_iter()
            .filter_map(|request| {
                let ptx = compile_to_ptx(&request, arch).ok()?;
                let program = LoadedProgram::load(ctx, ptx, &request.jit).ok()?;
                Some((request, program))
            })
            .collect();
        let count = made.len();
        for (request, program) in made {
            self.own.keep_program(&request, program);
        }
        count
    }

    fn program_text(&self, program: ProgramId) -> Result<Option<String>> {
        Ok(Some(self.own.programs.get(program)?.ptx.clone()))
    }

    fn target(&self) -> Option<String> {
        Some(self.arch.to_string())
    }
}

impl ForeignCode for CudaBackend {
    fn load_foreign_program(&mut self, text: &str, jit: &JitOptions) -> Result<ProgramId> {
        let ptx = ptx_swap::adapt(text, ptx_swap::Target::CudaDriver)
            .map_err(|why| BackendError::unsupported(API, format!("run OpenCL's PTX: {why}")))?;
        let program = LoadedProgram::load(&self.ctx, ptx, jit)?;
        Ok(self.own.programs.insert(program))
    }

    fn resources_of_foreign_program(&self, text: &str, kernel: &str) -> Result<KernelResources> {
        let module = self
            .ctx
            .load_module(Ptx::from_src(text.to_string()))
            .map_err(drv("cuModuleLoadData (foreign PTX)"))?;
        let f = module
            .load_function(kernel)
            .map_err(drv("cuModuleGetFunction"))?;
        Ok(resources_of(&f))
    }

    fn machine_code(&self, ptx: &str, jit: &JitOptions) -> Result<Option<Vec<u8>>> {
        jit::assemble(&self.ctx, ptx, jit).map(Some)
    }
}

impl HostTransfers for CudaBackend {
    fn alloc_host(&mut self, len: usize, memory: HostMemory) -> Result<HostBufferId> {
        check_alloc(&self.info, len)?;
        let host = HostBuf::new(&self.ctx, len, memory)?;
        Ok(self.own.hosts.insert(host))
    }

    fn host_data(&mut self, host: HostBufferId) -> Result<&mut [f32]> {
        self.own.hosts.get_mut(host)?.data()
    }

    fn free_host(&mut self, host: HostBufferId) -> Result<()> {
        self.own.hosts.remove(host)
    }

    fn transfer(&mut self, copy: Transfer) -> Result<Timing> {
        let mut h = self.own.hosts.take(copy.host)?;
        let result = self.own.buffers.get(copy.buffer).and_then(|d| {
            // Refused before the start event: a refused transfer records nothing.
            transfer::checked(&mut h, d, copy.len)?;
            self.timed(
                Instant::now(),
                "cuEventQuery/cuEventSynchronize (transfer)",
                || transfer::enqueue(&self.stream, &mut h, d, copy),
            )
        });
        self.own.hosts.put_back(copy.host, h);
        result
    }

    fn transfer_beside_kernel(
        &mut self,
        copy: Transfer,
        kernel: KernelId,
        shape: LaunchShape,
        args: &[Arg],
        concurrent: bool,
    ) -> Result<Timing> {
        let objects = self.texture_objects(args)?;
        self.ctx.bind_to_thread().map_err(drv("cuCtxSetCurrent"))?;
        let mut h = self.own.hosts.take(copy.host)?;
        let copy_stream = if concurrent {
            &self.side_stream
        } else {
            &self.stream
        };
        let t0 = Instant::now();
        let result = self
            .own
            .buffers
            .get(copy.buffer)
            .and_then(|d| transfer::enqueue(copy_stream, &mut h, d, copy))
            .and_then(|()| self.enqueue_kernel(&self.stream, kernel, (shape, args, &objects), 1))
            .and_then(|()| {
                let what = "cuEventQuery/cuEventSynchronize (transfer beside a kernel)";
                if concurrent {
                    self.wait_stream(&self.side_stream, &self.side_stop, what)?;
                }
                // On one stream the kernel's completion implies the transfer's.
                self.wait_stream(&self.stream, &self.stop, what)
            })
            .map(|()| Timing::clocks(Seconds(t0.elapsed().as_secs_f64()), None));
        self.own.hosts.put_back(copy.host, h);
        result
    }
}

impl PlainLoops for CudaBackend {
    fn launch_repeated(
        &mut self,
        kernel: KernelId,
        shape: LaunchShape,
        args: &[Arg],
        count: u32,
    ) -> Result<Timing> {
        let objects = self.texture_objects(args)?;
        // The raw launches and waits need the context current (bound untimed, as in the plain loop).
        self.ctx.bind_to_thread().map_err(drv("cuCtxSetCurrent"))?;
        // Argument marshalling is inside the wall window (as OpenCL's clSetKernelArg is) and
        // outside the event window, which holds the kernels only.
        let t0 = Instant::now();
        let what = "cuStreamSynchronize/cuEventQuery/cuEventSynchronize (kernel)";
        let launch = || self.enqueue_kernel(&self.stream, kernel, (shape, args, &objects), count);
        match self.timer {
            TimerKind::DeviceEvent => self.timed(t0, what, launch),
            TimerKind::WallClock => {
                launch()?;
                self.wait_stream(&self.stream, &self.untimed_stop, what)?;
                Ok(Timing::clocks(Seconds(t0.elapsed().as_secs_f64()), None))
            }
        }
    }

    fn plain_launches(
        &mut self,
        kernel: KernelId,
        args: &[Arg],
        plan: PlainLoop,
    ) -> Result<Vec<f64>> {
        let objects = self.texture_objects(args)?;
        // Its own packing, apart from the harness's cache: the loop shares no state with it.
        let mut packed = plain::Packed::new(args, self.params(args, &objects)?);
        let flag = match (plan.flag_copies, first_buffer(args)) {
            (true, Some(b)) => Some(self.own.buffers.get(b)?.device_ptr(&self.stream).0),
            _ => None,
        };
        let k = self.own.kernels.get(kernel)?;
        self.ctx.bind_to_thread().map_err(drv("cuCtxSetCurrent"))?;
        plain::launch_loop(
            &k.function,
            self.stream.cu_stream(),
            &mut packed,
            &self.untimed_stop,
            plan,
            flag,
        )
    }

    fn plain_transfers(&mut self, copy: Transfer, reps: u32) -> Result<Vec<f64>> {
        let mut h = self.own.hosts.take(copy.host)?;
        self.ctx.bind_to_thread().map_err(drv("cuCtxSetCurrent"))?;
        let result = self
            .own
            .buffers
            .get(copy.buffer)
            .and_then(|d| transfer::copy_loop(&self.stream, &mut h, d, copy, reps));
        self.own.hosts.put_back(copy.host, h);
        result
    }

    fn calls(&self) -> CallCounts {
        self.calls.get()
    }
}

impl ExactLaunch for CudaBackend {
    fn runtime_local(&mut self, kernel: KernelId) -> Result<Option<u32>> {
        // No dynamic shared memory (no kernel asks for any), no block limit below the device's.
        extern "C" fn no_dynamic_smem(_block: std::ffi::c_int) -> usize {
            0
        }
        let f = self.own.kernels.get(kernel)?;
        let (_, block) = f
            .function
            .occupancy_max_potential_block_size(no_dynamic_smem, 0, 0, None)
            .map_err(drv("cuOccupancyMaxPotentialBlockSize"))?;
        Ok(Some(block))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_blocking_wait_sleeps_on_the_blocking_sync_event() {
        assert!(sleeps_on_blocking_event(WaitMode::Blocking));
        assert!(!sleeps_on_blocking_event(WaitMode::Spin));
        assert!(!sleeps_on_blocking_event(WaitMode::Yield));
    }
}
