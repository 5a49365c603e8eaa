//! `OpenClBackend`'s own methods: opening, building, launching and waiting.

use super::*;

impl OpenClBackend {
    /// A request's own `options`, the second stage's, and `-cl-nv-verbose` where NVIDIA's
    /// compiler takes it: the one place it reports a kernel's registers. It changes no code,
    /// so every build carries it.
    pub(super) fn build_options(
        &self,
        mut options: Vec<String>,
        jit: &JitOptions,
    ) -> Result<String> {
        options.extend(self.second_stage_options(jit)?);
        options.extend(self.passes_nv_options().then(|| "-cl-nv-verbose".into()));
        Ok(options.join(" "))
    }

    pub(super) fn keep(&mut self, request: &CompileRequest, program: Program) -> ProgramId {
        // A log that cannot be read only costs the register count, never the build.
        let build_log = program.get_build_log(self.device.id()).unwrap_or_default();
        self.own
            .keep_program(request, BuiltProgram { program, build_log })
    }

    pub fn open(selector: Option<&str>) -> Result<Self> {
        let devices = list_devices()?;
        let chosen = select(&devices, selector)?;
        let device = Device::new(chosen.id);
        let context = Context::from_device(&device).map_err(drv("clCreateContext"))?;
        #[allow(deprecated)]
        let make = |properties, what| {
            let what = format!("clCreateCommandQueue ({what})");
            CommandQueue::create_default(&context, properties).map_err(drv(&what))
        };
        let queue = make(CL_QUEUE_PROFILING_ENABLE, "profiling enabled")?;
        let side_queue = make(CL_QUEUE_PROFILING_ENABLE, "second queue")?;
        let plain_queue = make(0, "without profiling")?;
        Ok(OpenClBackend {
            info: chosen.info.clone(),
            device,
            context,
            queue,
            side_queue,
            plain_queue,
            wait: WaitMode::default(),
            timer: TimerKind::DeviceEvent,
            own: Owned::new(API),
            images: image::Images::default(),
            calls: CallCounter::default(),
            lost: std::cell::OnceCell::new(),
        })
    }

    pub(super) fn alive(&self) -> Result<()> {
        let Some(cause) = self.lost.get() else {
            return Ok(());
        };
        let detail = format!(
            "an earlier command failed ({cause}); the driver fails every later command of this \
             process, so nothing more runs on it: measure what is left in a new process"
        );
        Err(BackendError::driver(API, "a lost context", detail))
    }

    /// As a failed wait would, for tests (a real loss needs a kernel that crashes the driver).
    #[doc(hidden)]
    pub fn mark_context_lost(&self, cause: &str) {
        let _ = self.lost.set(cause.to_string());
    }

    /// Outside the timed window (as CUDA's textures).
    pub(super) fn make_images(&mut self, args: &[Arg]) -> Result<()> {
        for arg in args {
            if let Arg::Texture { buffer, channels } = *arg {
                let b = self.own.buffers.get(buffer)?;
                self.images
                    .get_or_make(&self.context, &self.device, buffer, b, channels)?;
            }
        }
        Ok(())
    }

    pub(super) fn set_args(&self, kernel: KernelId, args: &[Arg]) -> Result<()> {
        let built = self.own.kernels.get(kernel)?;
        if *built.args_set.borrow() == args {
            return Ok(());
        }
        // Until every argument is set, the kernel holds no known set.
        built.args_set.borrow_mut().clear();
        let kernel = &built.kernel;
        for (i, arg) in args.iter().enumerate() {
            let index = i as cl_uint;
            // SAFETY: each value is of the type its parameter declares in the kernel source
            // (a buffer or image handle, uint, float), as the caller's argument list follows
            // the kernel's signature; OpenCL copies the value during the call.
            let r = unsafe {
                match arg {
                    Arg::Buffer(b) | Arg::Constant(b) => {
                        kernel.set_arg(index, &self.own.buffers.get(*b)?.get())
                    }
                    Arg::U32(v) => kernel.set_arg(index, v),
                    Arg::F32(v) => kernel.set_arg(index, v),
                    Arg::Texture { buffer, channels } => {
                        kernel.set_arg(index, &self.images.get(*buffer, *channels)?.get())
                    }
                }
            };
            r.map_err(|e| BackendError::driver(API, &format!("clSetKernelArg({i})"), e))?;
        }
        *built.args_set.borrow_mut() = args.to_vec();
        Ok(())
    }

    pub(super) fn timed_copy(
        &self,
        src: BufferId,
        dst: &mut Buffer<cl_float>,
        len: usize,
    ) -> Result<Timing> {
        self.alive()?;
        let s = self.own.buffers.get(src)?;
        let t0 = Instant::now();
        // SAFETY: both buffers hold at least `len` floats (allocated by the caller for it).
        let event = unsafe { self.queue.enqueue_copy_buffer(s, dst, 0, 0, len * 4, &[]) }
            .map_err(drv("clEnqueueCopyBuffer"))?;
        self.calls.count(false, true);
        self.wait_for(&self.queue, Some(&event), "copy")?;
        Ok(event_timing(&event, t0.elapsed().as_secs_f64()))
    }

    /// In the current wait mode ([`plain::wait`]); a failure marks the context lost.
    pub(super) fn wait_for(
        &self,
        queue: &CommandQueue,
        event: Option<&Event>,
        what: &str,
    ) -> Result<()> {
        self.alive()?;
        plain::wait(queue, event, self.wait).map_err(|status| {
            let detail = plain::status_text(status);
            let _ = self.lost.set(format!("wait ({what}): {detail}"));
            BackendError::driver(API, &format!("wait ({what})"), detail)
        })
    }

    /// Without an event, refused past the end.
    ///
    /// # Safety
    /// `host` points to `floats` floats, valid (and writable when reading) for the call.
    pub(super) unsafe fn blocking_copy(
        &self,
        buffer: BufferId,
        to_device: bool,
        host: *mut f32,
        floats: usize,
    ) -> Result<()> {
        self.alive()?;
        let b = self.own.buffers.get(buffer)?;
        check_fits(b.size(), floats)?;
        let what = if to_device {
            "clEnqueueWriteBuffer"
        } else {
            "clEnqueueReadBuffer"
        };
        plain::blocking_copy(&self.queue, b.get(), to_device, host.cast(), floats * 4)
            .map_err(plain::failed(what))
    }

    pub(super) fn enqueue_kernel(
        &self,
        queue: &CommandQueue,
        k: &Kernel,
        shape: LaunchShape,
        with_event: bool,
    ) -> Result<Option<Event>> {
        self.alive()?;
        let items = shape.group_items();
        let event = plain::enqueue(queue, k, shape, with_event).map_err(|status| {
            let detail = format!("clEnqueueNDRangeKernel: {}", plain::status_text(status));
            launch_refusal(&self.info, API, items, self.kernel_limit(k), detail)
        })?;
        self.calls.count(true, event.is_some());
        Ok(event)
    }

    /// Non-blocking; the event is counted once the driver has taken it.
    pub(super) fn enqueue_transfer(
        &mut self,
        on_side_queue: bool,
        transfer: Transfer,
    ) -> Result<Event> {
        self.alive()?;
        let queue = if on_side_queue {
            &self.side_queue
        } else {
            &self.queue
        };
        let host = self.own.hosts.get_mut(transfer.host)?;
        let data = host.prefix(transfer.len)?;
        let b = self.own.buffers.get_mut(transfer.buffer)?;
        // SAFETY: non-blocking; the host memory is owned by the backend and outlives the
        // command, which the caller waits for before the host buffer can be touched again.
        let event = unsafe {
            match transfer.direction {
                Direction::H2d => queue.enqueue_write_buffer(b, CL_NON_BLOCKING, 0, data, &[]),
                Direction::D2h => queue.enqueue_read_buffer(b, CL_NON_BLOCKING, 0, data, &[]),
            }
        }
        .map_err(drv("clEnqueueWriteBuffer/ReadBuffer"))?;
        self.calls.count(false, true);
        Ok(event)
    }

    /// Registers and local memory lower it below the device's.
    pub(super) fn kernel_limit(&self, kernel: &Kernel) -> Option<u32> {
        kernel
            .get_work_group_size(self.device.id())
            .ok()
            .map(probe::saturate_u32)
    }
}
