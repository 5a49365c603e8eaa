//! `CudaBackend`'s own methods behind the trait: opening, launching, waiting and timing.

use super::*;

impl CudaBackend {
    pub fn open(selector: Option<&str>) -> Result<Self> {
        availability()?;
        let devices = list_devices()?;
        let index = select(&devices, selector)?;
        let ctx = CudaContext::new(index).map_err(drv("cuCtxCreate"))?;
        // cudarc records extra events around every launch to track buffer use across streams.
        // OpenCL pays no such cost, so it is turned off for a fair launch.
        // SAFETY: every timed command waits for its own completion before it returns, and a
        // transfer beside a kernel on the second stream waits for both streams, so no buffer
        // is ever in use on one stream while another command reaches it.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.default_stream();
        // Events must be created *with* timing: cudarc's default disables it.
        let start = ctx
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(drv("cuEventCreate"))?;
        let stop = StopEvents::new(&ctx, true)?;
        let untimed_stop = StopEvents::new(&ctx, false)?;
        let side_stream = ctx.new_stream().map_err(drv("cuStreamCreate"))?;
        let side_stop = StopEvents::new(&ctx, true)?;
        let info = devices[index].clone();
        let arch = arch_name(info.compute_capability.unwrap_or((9, 0)));
        Ok(CudaBackend {
            info,
            arch,
            ctx,
            stream,
            start,
            stop,
            untimed_stop,
            side_stream,
            side_stop,
            wait: WaitMode::default(),
            timer: TimerKind::DeviceEvent,
            own: Owned::new(API),
            textures: texture::Textures::default(),
            calls: CallCounter::default(),
        })
    }

    /// The texture objects of `args`, in order, made once per buffer outside any timed window
    /// (as OpenCL's images).
    pub(super) fn texture_objects(
        &mut self,
        args: &[Arg],
    ) -> Result<Vec<cudarc::driver::sys::CUtexObject>> {
        let mut objects = Vec::new();
        for a in args {
            if let Arg::Texture { buffer, channels } = *a {
                let slice = self.own.buffers.get(buffer)?;
                objects.push(self.textures.get_or_make(
                    &self.ctx,
                    &self.stream,
                    &self.info.name,
                    buffer,
                    slice,
                    channels,
                )?);
            }
        }
        Ok(objects)
    }

    /// `count` launches of `kernel` on `stream`, its parameters packed once per argument list
    /// (nothing allocated per launch).
    pub(super) fn enqueue_kernel(
        &self,
        stream: &Arc<CudaStream>,
        kernel: KernelId,
        (shape, args, objects): (LaunchShape, &[Arg], &[cudarc::driver::sys::CUtexObject]),
        count: u32,
    ) -> Result<()> {
        // CUDA's grid allows 65535 blocks in y (OpenCL has no such limit): refused here by
        // name rather than by the driver's code.
        if shape.groups_y > 65_535 {
            let what = format!(
                "{} blocks in y (CUDA's grid allows at most 65535)",
                shape.groups_y
            );
            return Err(BackendError::unsupported(API, what));
        }
        let k = self.own.kernels.get(kernel)?;
        let mut slot = k.packed.borrow_mut();
        let packed = match slot.take() {
            Some(p) if p.holds(args) => slot.insert(p),
            _ => slot.insert(plain::Packed::new(args, self.params(args, objects)?)),
        };
        for _ in 0..count {
            // SAFETY: the parameters were packed from `args`, which follow the kernel's
            // parameter list in order and type (the caller builds them from the kernel
            // source's signature); the buffers were allocated by the caller for this launch's
            // sizes, and the stream belongs to this backend's context, bound to the thread.
            unsafe { packed.launch(&k.function, stream.cu_stream(), shape) }.map_err(|e| {
                let limit = resources_of(&k.function).max_threads_per_group;
                let detail = format!("cuLaunchKernel: {e:?}");
                launch_refusal(&self.info, API, shape.group_items(), limit, detail)
            })?;
            self.calls.count(true, false);
        }
        Ok(())
    }

    pub(super) fn sync(&self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(drv("cuStreamSynchronize"))
    }

    pub(super) fn record(&self, event: &CudaEvent, stream: &Arc<CudaStream>) -> Result<()> {
        event.record(stream).map_err(drv("cuEventRecord"))?;
        self.calls.count(false, true);
        Ok(())
    }

    /// Waits for everything enqueued on `stream` as the plain loop does.
    pub(super) fn wait_stream(
        &self,
        stream: &Arc<CudaStream>,
        stop: &StopEvents,
        what: &str,
    ) -> Result<()> {
        self.calls.count(false, self.wait.needs_event());
        // SAFETY: the stream and events belong to this backend's context, bound to the thread
        // by the launch before this wait.
        unsafe { plain::wait(stream.cu_stream(), stop, self.wait) }.map_err(|e| match e {
            BackendError::Driver { detail, .. } => BackendError::driver(API, what, detail),
            other => other,
        })
    }

    /// The kernel's parameters for `args` (constants are module symbols, not parameters).
    pub(super) fn params(
        &self,
        args: &[Arg],
        objects: &[cudarc::driver::sys::CUtexObject],
    ) -> Result<Vec<plain::Param>> {
        let mut next_object = objects.iter();
        let mut params = Vec::new();
        for a in args {
            match *a {
                Arg::Buffer(b) => {
                    let (ptr, _) = self.own.buffers.get(b)?.device_ptr(&self.stream);
                    params.push(plain::Param::Pointer(ptr));
                }
                Arg::Constant(b) => drop(self.own.buffers.get(b)?),
                Arg::Texture { .. } => {
                    let t = next_object.next().ok_or_else(|| {
                        BackendError::InvalidHandle("a texture argument without its object".into())
                    })?;
                    params.push(plain::Param::Texture(*t));
                }
                Arg::U32(v) => params.push(plain::Param::U32(v)),
                Arg::F32(v) => params.push(plain::Param::F32(v)),
            }
        }
        Ok(params)
    }

    /// The one timing window of every launch and copy: start event, `command`, stop event,
    /// wait. The host clock started at `t0`, before the command's host-side preparation.
    pub(super) fn timed(
        &self,
        t0: Instant,
        what: &str,
        command: impl FnOnce() -> Result<()>,
    ) -> Result<Timing> {
        self.record(&self.start, &self.stream)?;
        command()?;
        // The device clock needs the stop event whatever the wait mode.
        let stop = self.stop.of(self.wait);
        self.record(stop, &self.stream)?;
        if self.wait.needs_event() {
            self.wait.wait(
                || stop.try_is_complete().map_err(drv(what)),
                || stop.synchronize().map_err(drv(what)),
            )?;
        } else {
            self.stream.synchronize().map_err(drv(what))?;
        }
        let wall = Seconds(t0.elapsed().as_secs_f64());
        let device = self.start.elapsed_ms(stop).ok();
        Ok(Timing::clocks(
            wall,
            device.map(|ms| Seconds(f64::from(ms) * 1e-3)),
        ))
    }
}
