//! CUDA backend (`cudarc` only): driver API + NVRTC, both opened at run time.
//!
//! cudarc panics when libcuda or libnvrtc is missing, so every entry point checks for the
//! library first and reports "CUDA unavailable: <reason>" instead.

use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::sys::{CUdevice_attribute as Attr, CUevent_flags};
use cudarc::driver::{
    CudaContext, CudaEvent, CudaFunction, CudaModule, CudaSlice, CudaStream, LaunchConfig,
    PushKernelArg,
};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileError, CompileOptions, Ptx};

use super::{
    check_alloc, check_work_group, Api, Arg, Backend, BackendError, BufferId, BuildCache,
    CompileRequest, DeviceInfo, KernelId, KernelResources, LaunchShape, ProgramId, Result, Seconds,
    Timing,
};

const API: Api = Api::Cuda;

/// Whether NVRTC can be loaded (enough to compile kernels to PTX, no GPU needed).
pub fn nvrtc_availability() -> std::result::Result<(), String> {
    // SAFETY: only tries to dlopen the library by its candidate names.
    if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(
            "libnvrtc (NVRTC, CUDA 13) could not be loaded; install the `nvidia-cuda-nvrtc` \
             wheel or the CUDA toolkit and put its lib directory on LD_LIBRARY_PATH"
                .into(),
        )
    }
}

/// Whether the CUDA driver can be loaded and reports at least one device.
pub fn driver_availability() -> std::result::Result<usize, String> {
    // SAFETY: only tries to dlopen the library by its candidate names.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err("libcuda.so.1 (the NVIDIA driver) could not be loaded".into());
    }
    match CudaContext::device_count() {
        Ok(n) if n > 0 => Ok(n as usize),
        Ok(_) => Err("the CUDA driver reports no device".into()),
        Err(e) => Err(format!("the CUDA driver could not be initialised: {e:?}")),
    }
}

/// Both libraries needed to run kernels.
pub fn availability() -> std::result::Result<usize, String> {
    let n = driver_availability()?;
    nvrtc_availability()?;
    Ok(n)
}

/// NVRTC's version, e.g. "13.0".
pub fn nvrtc_version() -> Option<String> {
    nvrtc_availability().ok()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: library presence checked; out-pointers are valid.
    let r = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    (r == cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS).then(|| format!("{major}.{minor}"))
}

/// Compile CUDA C to PTX with NVRTC, for `arch` (e.g. `compute_90`). Works without a GPU.
pub fn compile_to_ptx(request: &CompileRequest, arch: &str) -> Result<String> {
    nvrtc_availability().map_err(|reason| BackendError::Unavailable { api: API, reason })?;
    let mut options = request.options();
    options.push(format!("--gpu-architecture={arch}"));
    let opts = CompileOptions {
        options: options.clone(),
        ..Default::default()
    };
    match compile_ptx_with_opts(&request.source, opts) {
        Ok(ptx) => Ok(ptx.to_src()),
        Err(e) => Err(compile_error(e, &options)),
    }
}

fn compile_error(e: CompileError, options: &[String]) -> BackendError {
    let log = match e {
        CompileError::CompileError { log, .. } => log.to_string_lossy().into_owned(),
        other => format!("{other:?}"),
    };
    BackendError::Compile {
        api: API,
        options: options.join(" "),
        log,
    }
}

/// The compute capability as an NVRTC virtual architecture name.
pub fn arch_name(cc: (i32, i32)) -> &'static str {
    // NVRTC takes a &'static str through cudarc; the set of Hopper-era targets is small.
    match cc {
        (7, 0) => "compute_70",
        (7, 5) => "compute_75",
        (8, 0) => "compute_80",
        (8, 6) => "compute_86",
        (8, 9) => "compute_89",
        (9, 0) => "compute_90",
        (10, 0) => "compute_100",
        (12, 0) => "compute_120",
        _ => "compute_90",
    }
}

/// Every CUDA device, described; empty with the reason when the driver is missing.
pub fn list_devices() -> Result<Vec<DeviceInfo>> {
    let n =
        driver_availability().map_err(|reason| BackendError::Unavailable { api: API, reason })?;
    (0..n)
        .map(|i| {
            let ctx = CudaContext::new(i).map_err(|e| {
                BackendError::driver(API, &format!("cuCtxCreate({i})"), format!("{e:?}"))
            })?;
            Ok(describe(&ctx))
        })
        .collect()
}

fn describe(ctx: &Arc<CudaContext>) -> DeviceInfo {
    let attr = |a: Attr| ctx.attribute(a).ok();
    let mut driver = 0;
    // SAFETY: the driver library is loaded (a context exists); out-pointer is valid.
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut driver) };
    let driver_version = format!("{}.{}", driver / 1000, (driver % 1000) / 10);
    DeviceInfo {
        api: API.label().into(),
        platform: "CUDA".into(),
        name: ctx.name().unwrap_or_else(|_| "?".into()),
        vendor: "NVIDIA".into(),
        driver_version,
        api_version: nvrtc_version()
            .map(|v| format!("NVRTC {v}"))
            .unwrap_or_else(|| "NVRTC unavailable".into()),
        compute_units: attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).unwrap_or(0) as u32,
        max_work_group_size: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK).unwrap_or(0)
            as u32,
        local_mem_bytes: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK).unwrap_or(0)
            as u64,
        global_mem_bytes: ctx.total_mem().unwrap_or(0) as u64,
        max_alloc_bytes: ctx.total_mem().unwrap_or(0) as u64,
        // The driver reports kHz.
        core_clock_mhz: attr(Attr::CU_DEVICE_ATTRIBUTE_CLOCK_RATE).map(|k| (k / 1000) as u32),
        memory_clock_mhz: attr(Attr::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)
            .filter(|k| *k > 0)
            .map(|k| (k / 1000) as u32),
        memory_bus_width_bits: attr(Attr::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)
            .filter(|b| *b > 0)
            .map(|b| b as u32),
        compute_capability: ctx.compute_capability().ok(),
        has_subgroups: true,
        is_gpu: true,
    }
}

/// Pick a CUDA device by index or case-insensitive name substring (default: device 0).
pub fn select(devices: &[DeviceInfo], selector: Option<&str>) -> Result<usize> {
    let listing = || {
        devices
            .iter()
            .enumerate()
            .map(|(i, d)| format!("{i}: {}", d.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let not_found = |sel: &str| BackendError::Unavailable {
        api: API,
        reason: format!("no CUDA device matches '{sel}'; devices: {}", listing()),
    };
    match selector {
        None if devices.is_empty() => Err(not_found("0")),
        None => Ok(0),
        Some(sel) => {
            if let Ok(i) = sel.parse::<usize>() {
                return if i < devices.len() {
                    Ok(i)
                } else {
                    Err(not_found(sel))
                };
            }
            let needle = sel.to_lowercase();
            devices
                .iter()
                .position(|d| d.name.to_lowercase().contains(&needle))
                .ok_or_else(|| not_found(sel))
        }
    }
}

struct LoadedKernel {
    function: CudaFunction,
}

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
    programs: Vec<LoadedProgram>,
    built: BuildCache,
    kernels: Vec<LoadedKernel>,
    buffers: Vec<Option<CudaSlice<f32>>>,
}

fn drv<E: std::fmt::Debug>(what: &str) -> impl Fn(E) -> BackendError + '_ {
    move |e| BackendError::driver(API, what, format!("{e:?}"))
}

impl CudaBackend {
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
        let info = describe(&ctx);
        let arch = arch_name(info.compute_capability.unwrap_or((9, 0)));
        Ok(CudaBackend {
            info,
            arch,
            ctx,
            stream,
            start,
            stop,
            programs: Vec::new(),
            built: BuildCache::default(),
            kernels: Vec::new(),
            buffers: Vec::new(),
        })
    }

    /// The NVRTC target used for this device, e.g. `compute_90`.
    pub fn arch(&self) -> &'static str {
        self.arch
    }

    /// Load PTX produced elsewhere (e.g. by NVIDIA's OpenCL compiler) through the CUDA driver
    /// and read one kernel's resources: a same-backend check of the other front end's output.
    pub fn resources_of_ptx(&self, ptx: &str, kernel: &str) -> Result<KernelResources> {
        let module = self
            .ctx
            .load_module(Ptx::from_src(ptx.to_string()))
            .map_err(drv("cuModuleLoadData (foreign PTX)"))?;
        let f = module
            .load_function(kernel)
            .map_err(drv("cuModuleGetFunction"))?;
        Ok(KernelResources {
            registers: f.num_regs().ok().map(|v| v as u32),
            shared_bytes: f.shared_size_bytes().ok().map(|v| v as u64),
            local_bytes: f.local_size_bytes().ok().map(|v| v as u64),
            max_threads_per_group: f.max_threads_per_block().ok().map(|v| v as u32),
        })
    }

    fn slice(&self, id: BufferId) -> Result<&CudaSlice<f32>> {
        self.buffers
            .get(id.0)
            .and_then(|b| b.as_ref())
            .ok_or_else(|| BackendError::InvalidHandle(format!("CUDA buffer {}", id.0)))
    }

    fn function(&self, id: KernelId) -> Result<&CudaFunction> {
        self.kernels
            .get(id.0)
            .map(|k| &k.function)
            .ok_or_else(|| BackendError::InvalidHandle(format!("CUDA kernel {}", id.0)))
    }

    fn event_seconds(&self) -> Option<Seconds> {
        self.start
            .elapsed_ms(&self.stop)
            .ok()
            .map(|ms| Seconds(f64::from(ms) * 1e-3))
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
        let module = self
            .ctx
            .load_module(Ptx::from_src(ptx.clone()))
            .map_err(drv("cuModuleLoadData"))?;
        self.programs.push(LoadedProgram { ptx, module });
        let id = ProgramId(self.programs.len() - 1);
        self.built.remember_program(request, id);
        Ok(id)
    }

    fn kernel(&mut self, program: ProgramId, name: &str) -> Result<KernelId> {
        if let Some(id) = self.built.kernel(program, name) {
            return Ok(id);
        }
        let p = self
            .programs
            .get(program.0)
            .ok_or_else(|| BackendError::InvalidHandle(format!("CUDA program {}", program.0)))?;
        let function = p
            .module
            .load_function(name)
            .map_err(|_| BackendError::NoSuchKernel {
                name: name.to_string(),
                available: entry_names(&p.ptx).join(", "),
            })?;
        self.kernels.push(LoadedKernel { function });
        let id = KernelId(self.kernels.len() - 1);
        self.built.remember_kernel(program, name, id);
        Ok(id)
    }

    fn program_text(&self, program: ProgramId) -> Result<Option<String>> {
        self.programs
            .get(program.0)
            .map(|p| Some(p.ptx.clone()))
            .ok_or_else(|| BackendError::InvalidHandle(format!("CUDA program {}", program.0)))
    }

    fn kernel_resources(&self, kernel: KernelId) -> Result<KernelResources> {
        let f = self.function(kernel)?;
        Ok(KernelResources {
            registers: f.num_regs().ok().map(|v| v as u32),
            shared_bytes: f.shared_size_bytes().ok().map(|v| v as u64),
            local_bytes: f.local_size_bytes().ok().map(|v| v as u64),
            max_threads_per_group: f.max_threads_per_block().ok().map(|v| v as u32),
        })
    }

    fn alloc(&mut self, len: usize) -> Result<BufferId> {
        check_alloc(&self.info, len)?;
        let slice = self
            .stream
            .alloc_zeros::<f32>(len)
            .map_err(drv("cuMemAlloc"))?;
        self.buffers.push(Some(slice));
        Ok(BufferId(self.buffers.len() - 1))
    }

    fn upload(&mut self, buffer: BufferId, data: &[f32]) -> Result<()> {
        let stream = self.stream.clone();
        let slot = self.buffers.get_mut(buffer.0).and_then(|b| b.as_mut());
        let dst =
            slot.ok_or_else(|| BackendError::InvalidHandle(format!("CUDA buffer {}", buffer.0)))?;
        stream.memcpy_htod(data, dst).map_err(drv("cuMemcpyHtoD"))?;
        stream.synchronize().map_err(drv("cuStreamSynchronize"))
    }

    fn download(&mut self, buffer: BufferId, out: &mut [f32]) -> Result<()> {
        let src = self.slice(buffer)?;
        self.stream
            .memcpy_dtoh(src, out)
            .map_err(drv("cuMemcpyDtoH"))?;
        self.stream
            .synchronize()
            .map_err(drv("cuStreamSynchronize"))
    }

    fn free(&mut self, buffer: BufferId) -> Result<()> {
        match self.buffers.get_mut(buffer.0) {
            Some(slot) => {
                *slot = None;
                Ok(())
            }
            None => Err(BackendError::InvalidHandle(format!(
                "CUDA buffer {}",
                buffer.0
            ))),
        }
    }

    fn launch(&mut self, kernel: KernelId, shape: LaunchShape, args: &[Arg]) -> Result<Timing> {
        let f = self.function(kernel)?;
        let kernel_limit = f.max_threads_per_block().ok().map(|v| v as u32);
        check_work_group(&self.info, shape.local, kernel_limit)?;
        let mut slices = Vec::new();
        for a in args {
            if let Arg::Buffer(b) = a {
                slices.push(self.slice(*b)?);
            }
        }
        let cfg = LaunchConfig {
            grid_dim: (shape.groups, 1, 1),
            block_dim: (shape.local, 1, 1),
            shared_mem_bytes: 0,
        };
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
        self.start
            .record(&self.stream)
            .map_err(drv("cuEventRecord"))?;
        // SAFETY: argument order and types follow the kernel signatures in the workload
        // tables; buffer sizes are checked by the workload before launch.
        unsafe { builder.launch(cfg) }.map_err(drv("cuLaunchKernel"))?;
        self.stop
            .record(&self.stream)
            .map_err(drv("cuEventRecord"))?;
        self.stream
            .synchronize()
            .map_err(drv("cuStreamSynchronize (kernel)"))?;
        let wall = t0.elapsed().as_secs_f64();
        Ok(Timing {
            wall: Seconds(wall),
            device: self.event_seconds(),
            queued_to_start: None,
        })
    }

    fn copy(&mut self, src: BufferId, dst: BufferId, len: usize) -> Result<Timing> {
        if src == dst {
            return Err(BackendError::InvalidHandle(
                "copy source and destination are the same buffer".into(),
            ));
        }
        let mut d = self
            .buffers
            .get_mut(dst.0)
            .and_then(|b| b.take())
            .ok_or_else(|| BackendError::InvalidHandle(format!("CUDA buffer {}", dst.0)))?;
        let result = (|| {
            let s = self.slice(src)?.slice(0..len);
            let mut dv = d.slice_mut(0..len);
            let t0 = Instant::now();
            self.start
                .record(&self.stream)
                .map_err(drv("cuEventRecord"))?;
            self.stream
                .memcpy_dtod(&s, &mut dv)
                .map_err(drv("cuMemcpyDtoD"))?;
            self.stop
                .record(&self.stream)
                .map_err(drv("cuEventRecord"))?;
            self.stream
                .synchronize()
                .map_err(drv("cuStreamSynchronize (copy)"))?;
            Ok(Timing {
                wall: Seconds(t0.elapsed().as_secs_f64()),
                device: self.event_seconds(),
                queued_to_start: None,
            })
        })();
        self.buffers[dst.0] = Some(d);
        result
    }

    fn sync(&mut self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(drv("cuStreamSynchronize"))
    }
}

/// Kernel names declared in PTX (`.entry name(`), for "no such kernel" messages.
pub fn entry_names(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter_map(|l| {
            let rest = l.split(".entry").nth(1)?;
            let name = rest.trim().split(['(', ' ']).next()?;
            (!name.is_empty()).then(|| name.to_string())
        })
        .collect()
}
