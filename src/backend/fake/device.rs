//! `FakeBackend`'s own methods: builds, scripted timings, emulated launches, counts.

use super::*;

impl FakeBackend {
    pub fn builds(&self) -> BuildCounts {
        self.builds
    }

    pub(super) fn build(&mut self, request: &CompileRequest) -> Result<ProgramId> {
        let failing = self.script.fail_build_containing.as_ref();
        if let Some(text) = failing.filter(|t| request.source.contains(t.as_str())) {
            return Err(BackendError::Compile {
                api: self.api,
                options: request.options().join(" "),
                log: format!("fake compiler: scripted build failure (source contains '{text}')"),
            });
        }
        let program = FakeProgram {
            kernels: kernel_names(&request.source),
            defines: request.defines.clone(),
            source: request.source.clone(),
            constants: Vec::new(),
            max_registers: request.jit.max_registers,
        };
        Ok(self.own.keep_program(request, program))
    }

    pub fn new(api: Api, script: FakeScript, emulator: Arc<dyn Emulator>) -> Self {
        let info = DeviceInfo {
            api: api.label().into(),
            platform: FAKE_PLATFORM.into(),
            name: format!("fake {api} device"),
            vendor: "clvscu".into(),
            driver_version: "fake".into(),
            api_version: "fake".into(),
            compute_units: script.compute_units,
            max_work_group_size: script.max_work_group_size,
            local_mem_bytes: 48 << 10,
            global_mem_bytes: 1 << 30,
            max_alloc_bytes: 1 << 30,
            is_gpu: true,
            ..DeviceInfo::default()
        };
        let rng = SmallRng::seed_from_u64(script.seed ^ (api as u64).wrapping_mul(0x9e37));
        FakeBackend {
            api,
            info,
            script,
            rng,
            launches: 0,
            calls: CallCounts::default(),
            wait: WaitMode::default(),
            timer: TimerKind::DeviceEvent,
            own: Owned::new(api),
            emulator,
            builds: BuildCounts::default(),
        }
    }

    pub fn live_buffers(&self) -> usize {
        self.own.buffers.live()
    }

    /// Launches run, verification runs included.
    pub fn launches(&self) -> usize {
        self.launches
    }

    /// The scripted device-time factor of a program's launches.
    pub(super) fn slowdown(&self, program: ProgramId) -> f64 {
        let p = self.own.programs.get(program).ok();
        let source_factor = match (&self.script.slow_source, p) {
            (Some((text, factor)), Some(p)) if p.source.contains(text.as_str()) => *factor,
            _ => 1.0,
        };
        let cap = p.and_then(|p| p.max_registers);
        let capped = match (cap, self.script.registers) {
            (Some(c), Some(r)) if c < r => self.script.capped_factor * self.script.cap_path_factor,
            (Some(_), _) => self.script.cap_path_factor,
            _ => 1.0,
        };
        source_factor * capped * self.script.runtime_factor
    }

    /// Timings for a command moving `floats` floats, the device time times `factor`.
    pub(super) fn scripted_timing(&mut self, floats: usize, factor: f64) -> Timing {
        let s = &self.script;
        let spread = if s.jitter > 0.0 {
            1.0 + s.jitter * self.rng.gen_range(-1.0..1.0)
        } else {
            1.0
        };
        let device = (s.base_seconds + SECONDS_PER_FLOAT * floats as f64) * spread * factor;
        let wake = if self.wait == WaitMode::Blocking {
            s.wake_up_seconds
        } else {
            0.0
        };
        let switch = if LAST_API.with(|last| last.replace(Some(self.api))) == Some(self.api) {
            0.0
        } else {
            s.context_switch_seconds
        };
        let wall = device + s.wall_overhead_seconds + s.harness_overhead_seconds + wake + switch;
        let timer = (!s.no_device_timer).then_some(Seconds(device));
        Timing::clocks(Seconds(wall), timer)
    }

    pub(super) fn kernel_of(&self, kernel: KernelId) -> Result<(String, ProgramId)> {
        self.own.kernels.get(kernel).cloned()
    }

    pub(super) fn emulate(
        &mut self,
        kernel: &str,
        program: ProgramId,
        shape: LaunchShape,
        args: &[Arg],
    ) -> Result<()> {
        let mut launch = FakeLaunch {
            api: self.api,
            kernel,
            shape,
            args,
            program: self.own.programs.get(program)?,
            buffers: &mut self.own.buffers,
            wrong: self.script.wrong_results.iter().any(|k| k == kernel),
        };
        self.emulator.emulate(&mut launch)
    }

    /// The stand-in for memory traffic.
    pub(super) fn floats_of(&self, args: &[Arg]) -> usize {
        args.iter()
            .filter_map(|a| match a {
                Arg::Buffer(b) | Arg::Constant(b) | Arg::Texture { buffer: b, .. } => {
                    self.own.buffers.get(*b).ok().map(Vec::len)
                }
                _ => None,
            })
            .sum()
    }

    /// The floats a transfer moves, read from its source; refused, before anything moves,
    /// where either buffer is shorter than the transfer.
    pub(super) fn floats_to_move(&self, t: Transfer) -> Result<Vec<f32>> {
        let (from, to) = match t.direction {
            Direction::H2d => (self.own.hosts.get(t.host)?, self.own.buffers.get(t.buffer)?),
            Direction::D2h => (self.own.buffers.get(t.buffer)?, self.own.hosts.get(t.host)?),
        };
        if t.len > from.len().min(to.len()) {
            let what = format!("fake: transfer of {} floats", t.len);
            return Err(BackendError::InvalidHandle(what));
        }
        Ok(from[..t.len].to_vec())
    }

    /// Writes what [`Self::floats_to_move`] read where the transfer goes.
    pub(super) fn put_floats(&mut self, t: Transfer, data: &[f32]) -> Result<()> {
        let to = match t.direction {
            Direction::H2d => self.own.buffers.get_mut(t.buffer)?,
            Direction::D2h => self.own.hosts.get_mut(t.host)?,
        };
        to[..data.len()].copy_from_slice(data);
        Ok(())
    }

    pub(super) fn check_launch_budget(&mut self) -> Result<()> {
        let limit = self.script.fail_launch_after;
        if let Some(limit) = limit.filter(|l| self.launches >= *l) {
            let detail = format!("scripted failure after {limit} launches");
            return Err(BackendError::driver(self.api, "launch (fake)", detail));
        }
        self.launches += 1;
        Ok(())
    }
}
