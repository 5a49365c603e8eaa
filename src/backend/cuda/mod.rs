//! CUDA backend (`cudarc` only): driver API + NVRTC, both opened at run time.
//!
//! cudarc panics when libcuda or libnvrtc is missing, so every entry point checks for the
//! library first and reports "CUDA unavailable: <reason>" instead. `probe` finds devices,
//! `nvrtc` compiles, and this file drives one device through the [`Backend`] trait.

mod jit;
mod nvrtc;
mod probe;

use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{
    CudaContext, CudaEvent, CudaFunction, CudaModule, CudaSlice, CudaStream, LaunchConfig,
    PushKernelArg,
};
use cudarc::nvrtc::Ptx;

pub use nvrtc::{compile_to_ptx, entry_names, nvrtc_availability, nvrtc_version};
pub use probe::{arch_name, availability, driver_availability, list_devices, select};

use super::handles::Handles;
use super::{
    check_alloc, check_work_group, Api, Arg, Backend, BackendError, BufferId, BuildCache,
    CompileRequest, DeviceInfo, JitOptions, KernelId, KernelResources, LaunchShape, ProgramId,
    Result, Seconds, Timing,
};

const API: Api = Api::Cuda;

struct LoadedProgram {
    ptx: String,
    module: Arc<CudaModule>,
}

/// A CUDA device with one stream and a reusable pair of timing-enabled events.
pub struct CudaBackend {
    info: DeviceInfo,
    arch: &'static str,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    start: CudaEvent,
    stop: CudaEvent,
    programs: Handles<ProgramId, LoadedProgram>,
    kernels: Handles<KernelId, CudaFunction>,
    buffers: Handles<BufferId, CudaSlice<f32>>,
    built: BuildCache,
}

fn drv<E: std::fmt::Debug>(what: &str) -> impl Fn(E) -> BackendError + '_ {
    move |e| BackendError::driver(API, what, format!("{e:?}"))
}

/// A function's resources as the driver reports them.
fn resources_of(f: &CudaFunction) -> KernelResources {
    let count = |v: std::result::Result<i32, _>| v.ok().and_then(|v| u32::try_from(v).ok());
    KernelResources {
        registers: count(f.num_regs()),
        shared_bytes: count(f.shared_size_bytes()).map(u64::from),
        local_bytes: count(f.local_size_bytes()).map(u64::from),
        max_threads_per_group: count(f.max_threads_per_block()),
    }
}

impl CudaBackend {
    /// Loads PTX as a module. With default second-stage options the driver assembles it as it
    /// loads (cuModuleLoadData); with options, the PTX is assembled by hand first
    /// ([`jit::assemble`]) and the machine code loaded.
    fn load(&self, ptx: &str, options: &JitOptions) -> Result<Arc<CudaModule>> {
        if options.is_default() {
            return self
                .ctx
                .load_module(Ptx::from_src(ptx.to_string()))
                .map_err(drv("cuModuleLoadData"));
        }
        let cubin = jit::assemble(&self.ctx, ptx, options)?;
        self.ctx
            .load_module(Ptx::from_binary(cubin))
            .map_err(drv("cuModuleLoadData (assembled with JIT options)"))
    }

    pub fn open(selector: Option<&str>) -> Result<Self> {
        availability().map_err(|reason| BackendError::Unavailable { api: API, reason })?;
        let devices = list_devices()?;
        let index = select(&devices, selector)?;
        let ctx = CudaContext::new(index).map_err(drv("cuCtxCreate"))?;
        // cudarc records extra events around every launch to track buffer use across streams.
        // We use one stream, and OpenCL pays no such cost, so turn it off for a fair launch.
        // SAFETY: single stream; we synchronise explicitly after every command.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.default_stream();
        // Events must be created *with* timing: cudarc's default disables it.
        let start = ctx
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(drv("cuEventCreate"))?;
        let stop = ctx
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(drv("cuEventCreate"))?;
        let info = devices[index].clone();
        let arch = arch_name(info.compute_capability.unwrap_or((9, 0)));
        Ok(CudaBackend {
            info,
            arch,
            ctx,
            stream,
            start,
            stop,
            programs: Handles::new(API),
            kernels: Handles::new(API),
            buffers: Handles::new(API),
            built: BuildCache::default(),
        })
    }

    fn event_seconds(&self) -> Option<Seconds> {
        self.start
            .elapsed_ms(&self.stop)
            .ok()
            .map(|ms| Seconds(f64::from(ms) * 1e-3))
    }

    /// Records the start event, runs `command` on the stream, records the stop event and
    /// waits: the one timing window of every launch and copy. The host clock started at `t0`,
    /// before any host-side preparation that belongs to the command.
    fn timed(
        &self,
        t0: Instant,
        what: &str,
        command: impl FnOnce() -> Result<()>,
    ) -> Result<Timing> {
        self.start
            .record(&self.stream)
            .map_err(drv("cuEventRecord"))?;
        command()?;
        self.stop
            .record(&self.stream)
            .map_err(drv("cuEventRecord"))?;
        self.stream.synchronize().map_err(drv(what))?;
        Ok(Timing {
            wall: Seconds(t0.elapsed().as_secs_f64()),
            device: self.event_seconds(),
            queued_to_start: None,
        })
    }
}

impl Backend for CudaBackend {
    fn api(&self) -> Api {
        API
    }

    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn compile(&mut self, request: &CompileRequest) -> Result<ProgramId> {
        if let Some(id) = self.built.program(request) {
            return Ok(id);
        }
        let ptx = compile_to_ptx(request, self.arch)?;
        let module = self.load(&ptx, &request.jit)?;
        let id = self.programs.insert(LoadedProgram { ptx, module });
        self.built.remember_program(request, id);
        Ok(id)
    }

    fn kernel(&mut self, program: ProgramId, name: &str) -> Result<KernelId> {
        if let Some(id) = self.built.kernel(program, name) {
            return Ok(id);
        }
        let p = self.programs.get(program)?;
        let function = p
            .module
            .load_function(name)
            .map_err(|_| BackendError::NoSuchKernel {
                name: name.to_string(),
                available: entry_names(&p.ptx).join(", "),
            })?;
        let id = self.kernels.insert(function);
        self.built.remember_kernel(program, name, id);
        Ok(id)
    }

    fn program_text(&self, program: ProgramId) -> Result<Option<String>> {
        Ok(Some(self.programs.get(program)?.ptx.clone()))
    }

    fn target(&self) -> Option<String> {
        Some(self.arch.to_string())
    }

    /// Loads PTX produced elsewhere (e.g. by NVIDIA's OpenCL compiler) through the CUDA
    /// driver and reads one kernel's resources: a same-backend check of the other front end.
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

    fn kernel_resources(&self, kernel: KernelId) -> Result<KernelResources> {
        Ok(resources_of(self.kernels.get(kernel)?))
    }

    fn alloc(&mut self, len: usize) -> Result<BufferId> {
        check_alloc(&self.info, len)?;
        let slice = self
            .stream
            .alloc_zeros::<f32>(len)
            .map_err(drv("cuMemAlloc"))?;
        Ok(self.buffers.insert(slice))
    }

    fn upload(&mut self, buffer: BufferId, data: &[f32]) -> Result<()> {
        let stream = self.stream.clone();
        let dst = self.buffers.get_mut(buffer)?;
        stream.memcpy_htod(data, dst).map_err(drv("cuMemcpyHtoD"))?;
        stream.synchronize().map_err(drv("cuStreamSynchronize"))
    }

    fn download(&mut self, buffer: BufferId, out: &mut [f32]) -> Result<()> {
        let src = self.buffers.get(buffer)?;
        self.stream
            .memcpy_dtoh(src, out)
            .map_err(drv("cuMemcpyDtoH"))?;
        self.stream
            .synchronize()
            .map_err(drv("cuStreamSynchronize"))
    }

    fn free(&mut self, buffer: BufferId) -> Result<()> {
        self.buffers.remove(buffer)
    }

    fn launch(&mut self, kernel: KernelId, shape: LaunchShape, args: &[Arg]) -> Result<Timing> {
        let f = self.kernels.get(kernel)?;
        check_work_group(
            &self.info,
            shape.group_items(),
            resources_of(f).max_threads_per_group,
        )?;
        let mut slices = Vec::new();
        for a in args {
            if let Arg::Buffer(b) = a {
                slices.push(self.buffers.get(*b)?);
            }
        }
        let cfg = LaunchConfig {
            grid_dim: (shape.groups, check_grid_y(shape.groups_y)?, 1),
            block_dim: (shape.local, shape.local_y, 1),
            shared_mem_bytes: 0,
        };
        // Argument marshalling is inside the wall window (as OpenCL's clSetKernelArg is) and
        // outside the event window, which holds the kernel only.
        let t0 = Instant::now();
        let mut builder = self.stream.launch_builder(f);
        let mut next_slice = slices.iter();
        for a in args {
            match a {
                Arg::Buffer(_) => {
                    if let Some(s) = next_slice.next() {
                        builder.arg(*s);
                    }
                }
                Arg::U32(v) => {
                    builder.arg(v);
                }
                Arg::F32(v) => {
                    builder.arg(v);
                }
            }
        }
        self.timed(t0, "cuStreamSynchronize (kernel)", || {
            // SAFETY: argument order and types follow the kernel signatures in the workload
            // tables; buffer sizes are checked by the workload before launch.
            unsafe { builder.launch(cfg) }
                .map(drop)
                .map_err(drv("cuLaunchKernel"))
        })
    }

    fn copy(&mut self, src: BufferId, dst: BufferId, len: usize) -> Result<Timing> {
        if src == dst {
            return Err(BackendError::InvalidHandle(
                "copy source and destination are the same buffer".into(),
            ));
        }
        let mut d = self.buffers.take(dst)?;
        let result = self.buffers.get(src).and_then(|s| {
            let s = s.slice(0..len);
            let mut dv = d.slice_mut(0..len);
            self.timed(Instant::now(), "cuStreamSynchronize (copy)", || {
                self.stream
                    .memcpy_dtod(&s, &mut dv)
                    .map_err(drv("cuMemcpyDtoD"))
            })
        });
        self.buffers.put_back(dst, d);
        result
    }

    fn sync(&mut self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(drv("cuStreamSynchronize"))
    }
}

/// CUDA's grid is limited to 65535 blocks in y (x allows 2^31 - 1); OpenCL has no such
/// limit, so a taller launch is refused here by name rather than by the driver's code.
fn check_grid_y(groups_y: u32) -> Result<u32> {
    const MAX_GRID_Y: u32 = 65_535;
    if groups_y > MAX_GRID_Y {
        return Err(BackendError::Unsupported {
            api: API,
            what: format!("{groups_y} blocks in y (CUDA's grid allows at most {MAX_GRID_Y})"),
        });
    }
    Ok(groups_y)
}
