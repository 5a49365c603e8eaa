//! OpenCL backend (`opencl3` only). libOpenCL is opened at run time, so a machine without an
//! ICD loader gets a clear "OpenCL unavailable" instead of a crash.

use std::ptr;
use std::time::Instant;

use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{Device, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_GPU};
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::platform::get_platforms;
use opencl3::program::Program;
use opencl3::types::{cl_device_id, cl_float, cl_uint, CL_BLOCKING};

use super::{
    check_alloc, check_work_group, Api, Arg, Backend, BackendError, BufferId, BuildCache,
    CompileRequest, DeviceInfo, KernelId, KernelResources, LaunchShape, ProgramId, Result, Seconds,
    Timing,
};

const API: Api = Api::OpenCl;

/// Whether an OpenCL ICD loader can be opened at all, with the reason when not.
pub fn availability() -> std::result::Result<(), String> {
    if !cl3::is_opencl_runtime_available() {
        return Err(
            "the OpenCL ICD loader (libOpenCL.so.1) could not be loaded; install \
                    ocl-icd-libopencl1 and a driver such as pocl-opencl-icd"
                .into(),
        );
    }
    match get_platforms() {
        Ok(p) if p.is_empty() => Err("no OpenCL platform is installed (no ICD found)".into()),
        Ok(_) => Ok(()),
        Err(e) => Err(format!("no OpenCL platform could be listed: {e}")),
    }
}

/// A device as listed by `devices`: platform index, device index within it, and its info.
#[derive(Debug, Clone)]
pub struct ListedDevice {
    pub platform_index: usize,
    pub device_index: usize,
    pub id: cl_device_id,
    pub info: DeviceInfo,
}

/// Every device of every platform, in platform order.
pub fn list_devices() -> Result<Vec<ListedDevice>> {
    availability().map_err(|reason| BackendError::Unavailable { api: API, reason })?;
    let platforms =
        get_platforms().map_err(|e| BackendError::driver(API, "clGetPlatformIDs", e))?;
    let mut out = Vec::new();
    for (pi, platform) in platforms.iter().enumerate() {
        let platform_name = platform.name().unwrap_or_else(|_| "?".into());
        let platform_version = platform.version().unwrap_or_default();
        // A platform with no device answers with an error code: skip it, do not fail.
        let ids = platform.get_devices(CL_DEVICE_TYPE_ALL).unwrap_or_default();
        for (di, id) in ids.into_iter().enumerate() {
            let info = describe(id, &platform_name, &platform_version);
            out.push(ListedDevice {
                platform_index: pi,
                device_index: di,
                id,
                info,
            });
        }
    }
    Ok(out)
}

fn describe(id: cl_device_id, platform: &str, platform_version: &str) -> DeviceInfo {
    let d = Device::new(id);
    let extensions = d.extensions().unwrap_or_default();
    let c_version = d.opencl_c_version().unwrap_or_default();
    let has_subgroups = extensions.contains("cl_khr_subgroups")
        || (c_version.contains("3.0") && extensions.contains("__opencl_c_subgroups"));
    let is_gpu = d
        .dev_type()
        .map(|t| t & CL_DEVICE_TYPE_GPU != 0)
        .unwrap_or(false);
    DeviceInfo {
        api: API.label().into(),
        platform: platform.to_string(),
        name: d.name().unwrap_or_else(|_| "?".into()).trim().to_string(),
        vendor: d.vendor().unwrap_or_default(),
        driver_version: d.driver_version().unwrap_or_default(),
        api_version: if platform_version.is_empty() {
            d.version().unwrap_or_default()
        } else {
            platform_version.to_string()
        },
        compute_units: d.max_compute_units().unwrap_or(0),
        max_work_group_size: d.max_work_group_size().unwrap_or(0) as u32,
        local_mem_bytes: d.local_mem_size().unwrap_or(0),
        global_mem_bytes: d.global_mem_size().unwrap_or(0),
        max_alloc_bytes: d.max_mem_alloc_size().unwrap_or(0),
        core_clock_mhz: d.max_clock_frequency().ok(),
        // OpenCL has no standard query for the memory clock or bus width, so Eq. 2 cannot be
        // evaluated from OpenCL alone; the CUDA side of the same GPU supplies it.
        memory_clock_mhz: None,
        memory_bus_width_bits: None,
        compute_capability: None,
        has_subgroups,
        is_gpu,
    }
}

/// Pick a device by index (`0`, or `platform:device` like `1:0`) or by a case-insensitive
/// substring of its platform or device name. With no selector, prefer the first GPU, so that a
/// machine listing PoCL first still benchmarks its GPU.
pub fn select<'a>(devices: &'a [ListedDevice], selector: Option<&str>) -> Result<&'a ListedDevice> {
    let names = || {
        devices
            .iter()
            .enumerate()
            .map(|(i, d)| format!("{i}: {} [{}]", d.info.name, d.info.platform))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let not_found = |sel: &str| BackendError::Unavailable {
        api: API,
        reason: format!("no OpenCL device matches '{sel}'; devices: {}", names()),
    };
    match selector {
        None => devices
            .iter()
            .find(|d| d.info.is_gpu)
            .or_else(|| devices.first())
            .ok_or_else(|| BackendError::Unavailable {
                api: API,
                reason: "no OpenCL device found".into(),
            }),
        Some(sel) => {
            if let Some((p, d)) = sel.split_once(':') {
                if let (Ok(p), Ok(d)) = (p.parse::<usize>(), d.parse::<usize>()) {
                    return devices
                        .iter()
                        .find(|x| x.platform_index == p && x.device_index == d)
                        .ok_or_else(|| not_found(sel));
                }
            }
            if let Ok(i) = sel.parse::<usize>() {
                return devices.get(i).ok_or_else(|| not_found(sel));
            }
            let needle = sel.to_lowercase();
            devices
                .iter()
                .find(|d| {
                    d.info.name.to_lowercase().contains(&needle)
                        || d.info.platform.to_lowercase().contains(&needle)
                })
                .ok_or_else(|| not_found(sel))
        }
    }
}

struct BuiltProgram {
    program: Program,
    /// The build log of a successful build: empty unless the compiler was asked to talk,
    /// e.g. NVIDIA's `-cl-nv-verbose`, which adds ptxas's register counts.
    build_log: String,
}

/// An OpenCL device with a profiling-enabled in-order queue.
pub struct OpenClBackend {
    info: DeviceInfo,
    device: Device,
    context: Context,
    queue: CommandQueue,
    programs: Vec<BuiltProgram>,
    kernels: Vec<Kernel>,
    built: BuildCache,
    /// Registers per kernel as the build log reports them (NVIDIA with `-cl-nv-verbose`).
    kernel_registers: Vec<Option<u32>>,
    buffers: Vec<Option<Buffer<cl_float>>>,
}

impl OpenClBackend {
    /// Open the device chosen by `selector` (see [`select`]).
    pub fn open(selector: Option<&str>) -> Result<Self> {
        let devices = list_devices()?;
        let chosen = select(&devices, selector)?;
        let device = Device::new(chosen.id);
        let context = Context::from_device(&device)
            .map_err(|e| BackendError::driver(API, "clCreateContext", e))?;
        #[allow(deprecated)]
        let queue =
            CommandQueue::create_default(&context, CL_QUEUE_PROFILING_ENABLE).map_err(|e| {
                BackendError::driver(API, "clCreateCommandQueue (profiling enabled)", e)
            })?;
        Ok(OpenClBackend {
            info: chosen.info.clone(),
            device,
            context,
            queue,
            programs: Vec::new(),
            kernels: Vec::new(),
            built: BuildCache::default(),
            kernel_registers: Vec::new(),
            buffers: Vec::new(),
        })
    }

    fn buffer(&self, id: BufferId) -> Result<&Buffer<cl_float>> {
        self.buffers
            .get(id.0)
            .and_then(|b| b.as_ref())
            .ok_or_else(|| BackendError::InvalidHandle(format!("OpenCL buffer {}", id.0)))
    }

    /// The log of a successful build; empty unless the compiler was asked to talk.
    pub fn build_log(&self, program: ProgramId) -> Option<&str> {
        self.programs.get(program.0).map(|p| p.build_log.as_str())
    }

    fn kernel_ref(&self, id: KernelId) -> Result<&Kernel> {
        self.kernels
            .get(id.0)
            .ok_or_else(|| BackendError::InvalidHandle(format!("OpenCL kernel {}", id.0)))
    }

    fn set_args(&self, kernel: &Kernel, args: &[Arg]) -> Result<()> {
        for (i, arg) in args.iter().enumerate() {
            let index = i as cl_uint;
            // SAFETY: the value types match the kernel signatures declared in the workload
            // tables (float*, uint, float); OpenCL copies the value during the call.
            let r = unsafe {
                match arg {
                    Arg::Buffer(b) => kernel.set_arg(index, &self.buffer(*b)?.get()),
                    Arg::U32(v) => kernel.set_arg(index, v),
                    Arg::F32(v) => kernel.set_arg(index, v),
                }
            };
            r.map_err(|e| BackendError::driver(API, &format!("clSetKernelArg({i})"), e))?;
        }
        Ok(())
    }
}

impl OpenClBackend {
    fn timed_copy(&self, src: BufferId, dst: &mut Buffer<cl_float>, len: usize) -> Result<Timing> {
        let s = self.buffer(src)?;
        let t0 = Instant::now();
        // SAFETY: both buffers hold at least `len` floats (allocated by the caller for it).
        let event = unsafe { self.queue.enqueue_copy_buffer(s, dst, 0, 0, len * 4, &[]) }
            .map_err(|e| BackendError::driver(API, "clEnqueueCopyBuffer", e))?;
        event
            .wait()
            .map_err(|e| BackendError::driver(API, "clWaitForEvents (copy)", e))?;
        Ok(event_timing(&event, t0.elapsed().as_secs_f64()))
    }
}

fn event_timing(event: &Event, wall: f64) -> Timing {
    let ns = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(a), Some(b)) if b >= a => Some(Seconds((b - a) as f64 * 1e-9)),
        _ => None,
    };
    let queued = event.profiling_command_queued().ok();
    let start = event.profiling_command_start().ok();
    let end = event.profiling_command_end().ok();
    Timing {
        wall: Seconds(wall),
        device: ns(start, end),
        queued_to_start: ns(queued, start),
    }
}

impl Backend for OpenClBackend {
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
        let options = request.options().join(" ");
        let program =
            Program::create_and_build_from_source(&self.context, &request.source, &options)
                .map_err(|log| BackendError::Compile {
                    api: API,
                    options: options.clone(),
                    log,
                })?;
        // A log that cannot be read only costs the register count, never the build.
        let build_log = program.get_build_log(self.device.id()).unwrap_or_default();
        self.programs.push(BuiltProgram { program, build_log });
        let id = ProgramId(self.programs.len() - 1);
        self.built.remember_program(request, id);
        Ok(id)
    }

    fn kernel(&mut self, program: ProgramId, name: &str) -> Result<KernelId> {
        if let Some(id) = self.built.kernel(program, name) {
            return Ok(id);
        }
        let built = self
            .programs
            .get(program.0)
            .ok_or_else(|| BackendError::InvalidHandle(format!("OpenCL program {}", program.0)))?;
        let kernel =
            Kernel::create(&built.program, name).map_err(|_| BackendError::NoSuchKernel {
                name: name.to_string(),
                available: built.program.kernel_names().to_string(),
            })?;
        self.kernels.push(kernel);
        self.kernel_registers
            .push(ptxas_registers(&built.build_log, name));
        let id = KernelId(self.kernels.len() - 1);
        self.built.remember_kernel(program, name, id);
        Ok(id)
    }

    fn program_text(&self, program: ProgramId) -> Result<Option<String>> {
        let built = self
            .programs
            .get(program.0)
            .ok_or_else(|| BackendError::InvalidHandle(format!("OpenCL program {}", program.0)))?;
        let binaries = built
            .program
            .get_binaries()
            .map_err(|e| BackendError::driver(API, "CL_PROGRAM_BINARIES", e))?;
        // NVIDIA returns PTX text; PoCL returns its own binary container, which is not text.
        Ok(binaries.into_iter().next().and_then(|bytes| {
            let text = String::from_utf8(bytes).ok()?;
            let text = text.trim_end_matches('\0').to_string();
            text.contains(".entry").then_some(text)
        }))
    }

    fn kernel_resources(&self, kernel: KernelId) -> Result<KernelResources> {
        let k = self.kernel_ref(kernel)?;
        let id = self.device.id();
        Ok(KernelResources {
            registers: self.kernel_registers.get(kernel.0).copied().flatten(),
            shared_bytes: k.get_local_mem_size(id).ok(),
            local_bytes: k.get_private_mem_size(id).ok(),
            max_threads_per_group: k.get_work_group_size(id).ok().map(|v| v as u32),
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
        self.buffers.push(Some(buffer));
        Ok(BufferId(self.buffers.len() - 1))
    }

    fn upload(&mut self, buffer: BufferId, data: &[f32]) -> Result<()> {
        let queue = &self.queue;
        let b = self.buffers.get_mut(buffer.0).and_then(|b| b.as_mut());
        let b =
            b.ok_or_else(|| BackendError::InvalidHandle(format!("OpenCL buffer {}", buffer.0)))?;
        // SAFETY: blocking write; `data` outlives the call.
        unsafe { queue.enqueue_write_buffer(b, CL_BLOCKING, 0, data, &[]) }
            .map_err(|e| BackendError::driver(API, "clEnqueueWriteBuffer", e))?;
        Ok(())
    }

    fn download(&mut self, buffer: BufferId, out: &mut [f32]) -> Result<()> {
        let b = self.buffer(buffer)?;
        // SAFETY: blocking read into a host slice that outlives the call.
        unsafe { self.queue.enqueue_read_buffer(b, CL_BLOCKING, 0, out, &[]) }
            .map_err(|e| BackendError::driver(API, "clEnqueueReadBuffer", e))?;
        Ok(())
    }

    fn free(&mut self, buffer: BufferId) -> Result<()> {
        match self.buffers.get_mut(buffer.0) {
            Some(slot) => {
                *slot = None;
                Ok(())
            }
            None => Err(BackendError::InvalidHandle(format!(
                "OpenCL buffer {}",
                buffer.0
            ))),
        }
    }

    fn launch(&mut self, kernel: KernelId, shape: LaunchShape, args: &[Arg]) -> Result<Timing> {
        let k = self.kernel_ref(kernel)?;
        let kernel_limit = k
            .get_work_group_size(self.device.id())
            .ok()
            .map(|v| v as u32);
        check_work_group(&self.info, shape.local, kernel_limit)?;
        let global = [shape.global() as usize];
        let local = [shape.local as usize];
        // Argument setting is inside the wall window: CUDA marshals arguments inside
        // cuLaunchKernel, so both sides pay for "everything needed to launch".
        let t0 = Instant::now();
        self.set_args(k, args)?;
        // SAFETY: arguments were set above to match the kernel signature; sizes are checked.
        let event = unsafe {
            self.queue.enqueue_nd_range_kernel(
                k.get(),
                1,
                ptr::null(),
                global.as_ptr(),
                local.as_ptr(),
                &[],
            )
        }
        .map_err(|e| BackendError::driver(API, "clEnqueueNDRangeKernel", e))?;
        event
            .wait()
            .map_err(|e| BackendError::driver(API, "clWaitForEvents (kernel)", e))?;
        let wall = t0.elapsed().as_secs_f64();
        Ok(event_timing(&event, wall))
    }

    fn copy(&mut self, src: BufferId, dst: BufferId, len: usize) -> Result<Timing> {
        if src == dst {
            return Err(BackendError::InvalidHandle(
                "copy source and destination are the same buffer".into(),
            ));
        }
        self.buffer(src)?;
        // Take the destination out of its slot for the duration of the copy, so that the
        // source can be borrowed shared and the destination mutably.
        let mut d = self
            .buffers
            .get_mut(dst.0)
            .and_then(|b| b.take())
            .ok_or_else(|| BackendError::InvalidHandle(format!("OpenCL buffer {}", dst.0)))?;
        let result = self.timed_copy(src, &mut d, len);
        self.buffers[dst.0] = Some(d);
        result
    }

    fn sync(&mut self) -> Result<()> {
        self.queue
            .finish()
            .map_err(|e| BackendError::driver(API, "clFinish", e))
    }
}

/// Registers of `kernel` from a ptxas-style build log (NVIDIA's `-cl-nv-verbose`):
/// "Compiling entry function 'NAME'" followed, a few lines on, by "Used N registers".
/// `None` when the log does not mention the kernel, so a silent compiler reports "n/a".
fn ptxas_registers(log: &str, kernel: &str) -> Option<u32> {
    let header = format!("entry function '{kernel}'");
    let mut lines = log.lines().skip_while(|l| !l.contains(&header)).skip(1);
    lines
        .by_ref()
        .take_while(|l| !l.contains("entry function '"))
        .find_map(|l| {
            let rest = &l[l.find("Used ")? + "Used ".len()..];
            let (n, unit) = rest.split_once(' ')?;
            unit.starts_with("register")
                .then(|| n.parse().ok())
                .flatten()
        })
}

#[cfg(test)]
mod tests {
    use super::ptxas_registers;

    const LOG: &str = "ptxas info    : 0 bytes gmem\n\
ptxas info    : Compiling entry function 'matvec_listing4' for 'sm_90'\n\
ptxas info    : Function properties for matvec_listing4\n    \
0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
ptxas info    : Used 18 registers, used 1 barriers, 1024 bytes smem, 400 bytes cmem[0]\n\
ptxas info    : Compiling entry function 'matvec_tuned' for 'sm_90'\n\
ptxas info    : Function properties for matvec_tuned\n\
ptxas info    : Used 40 registers, 1024 bytes smem\n";

    #[test]
    fn registers_are_read_per_kernel() {
        assert_eq!(ptxas_registers(LOG, "matvec_listing4"), Some(18));
        assert_eq!(ptxas_registers(LOG, "matvec_tuned"), Some(40));
    }

    #[test]
    fn a_kernel_the_log_does_not_name_has_no_count() {
        assert_eq!(ptxas_registers(LOG, "matvec_listing5"), None);
        assert_eq!(ptxas_registers("", "matvec_tuned"), None);
        // A name that is a prefix of another must not borrow the other's count.
        assert_eq!(ptxas_registers(LOG, "matvec"), None);
    }

    #[test]
    fn a_kernel_without_a_used_line_does_not_take_the_next_kernels_count() {
        let log = "Compiling entry function 'a' for 'sm_90'\n\
                   Compiling entry function 'b' for 'sm_90'\nUsed 7 registers\n";
        assert_eq!(ptxas_registers(log, "a"), None);
        assert_eq!(ptxas_registers(log, "b"), Some(7));
    }
}
