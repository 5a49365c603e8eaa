//! A backend without a device, for testing everything above the seam on any machine (and
//! `--pair fake`): it "compiles" by listing the kernels a source defines, runs each through
//! the host [`Emulator`] it was given, and reports scripted timings.

use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

mod device;
mod emulate;

pub use emulate::{Emulator, FakeLaunch, KernelEmulation};

use super::handles::Owned;
use super::*;

/// Device seconds per float of every buffer argument (standing in for memory traffic).
const SECONDS_PER_FLOAT: f64 = 1e-12;

pub const FAKE_PLATFORM: &str = "clvscu fake backend (scripted timings, no device)";

thread_local! {
    /// The API whose fake last ran on this thread's pretend GPU.
    static LAST_API: std::cell::Cell<Option<Api>> = const { std::cell::Cell::new(None) };
}

#[derive(Debug, Clone, PartialEq)]
pub struct FakeScript {
    /// Device seconds of every launch, before the per-float term.
    pub base_seconds: f64,
    /// Host seconds added to the device time for the wall clock (launch + wait).
    pub wall_overhead_seconds: f64,
    /// Host seconds a blocking wait adds to the wall clock (a scripted wake-up).
    pub wake_up_seconds: f64,
    /// Host seconds the harness's launch path adds and the plain loop does not pay.
    pub harness_overhead_seconds: f64,
    /// Host seconds the first launch after the other API's adds: a context switch on the
    /// pretend GPU the fakes of one thread share.
    pub context_switch_seconds: f64,
    /// Relative spread of the device time, from a generator seeded with `seed`.
    pub jitter: f64,
    pub seed: u64,
    pub fail_build_containing: Option<String>,
    /// Launches after this many succeed fail with a driver error.
    pub fail_launch_after: Option<usize>,
    /// Kernels whose result is off by one in the first output element.
    pub wrong_results: Vec<String>,
    pub no_device_timer: bool,
    pub compute_units: u32,
    pub max_work_group_size: u32,
    /// Programs have a text (their source, standing in for PTX) that the other side can load
    /// (`program = "other"`).
    pub program_texts: bool,
    /// Launches of a program whose source contains this text take this many times as long,
    /// whichever runtime runs it: a front-end difference.
    pub slow_source: Option<(String, f64)>,
    /// Every launch's device time times this factor: a runtime difference.
    pub runtime_factor: f64,
    /// The registers every kernel reports (none when `None`); a program built with a register
    /// cap reports the cap where it is lower.
    pub registers: Option<u32>,
    /// Device time factor of a program whose register cap lowers its count below
    /// `registers`: a register-allocation difference.
    pub capped_factor: f64,
    /// Device time factor of a program built with any register cap: a load path that changes
    /// the code by itself.
    pub cap_path_factor: f64,
}

impl Default for FakeScript {
    fn default() -> Self {
        FakeScript {
            base_seconds: 2e-6,
            wall_overhead_seconds: 8e-6,
            wake_up_seconds: 1e-4,
            harness_overhead_seconds: 0.0,
            context_switch_seconds: 0.0,
            jitter: 0.01,
            seed: 1,
            fail_build_containing: None,
            fail_launch_after: None,
            wrong_results: Vec::new(),
            no_device_timer: false,
            compute_units: 4,
            max_work_group_size: 1024,
            program_texts: false,
            slow_source: None,
            runtime_factor: 1.0,
            registers: None,
            capped_factor: 1.0,
            cap_path_factor: 1.0,
        }
    }
}

struct FakeProgram {
    kernels: Vec<String>,
    defines: Vec<(String, String)>,
    source: String,
    /// `__constant__` symbols filled by `bind_constant`.
    constants: Vec<(String, Vec<f32>)>,
    max_registers: Option<u32>,
}

pub struct FakeBackend {
    api: Api,
    info: DeviceInfo,
    script: FakeScript,
    rng: SmallRng,
    launches: usize,
    calls: CallCounts,
    wait: WaitMode,
    timer: TimerKind,
    /// Each kernel is its name and program.
    own: Owned<Vec<f32>, FakeProgram, (String, ProgramId), Vec<f32>>,
    emulator: Arc<dyn Emulator>,
    builds: BuildCounts,
}

/// How many programs were built ahead ([`Programs::prebuild`]) or by `compile` itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BuildCounts {
    pub ahead: usize,
    pub in_compile: usize,
}

/// The first line of a fake program text, before the defines it was compiled with.
const FAKE_TEXT_HEADER: &str = "// fake program; defines: ";

fn kernel_names(source: &str) -> Vec<String> {
    let mut names = Vec::new();
    for marker in ["__kernel void ", "__global__ void "] {
        for (at, _) in source.match_indices(marker) {
            let rest = &source[at + marker.len()..];
            // The prelude's work-group bound may stand between the type and the name.
            let rest = rest.strip_prefix("WG_BOUND ").unwrap_or(rest);
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

impl Backend for FakeBackend {
    fn api(&self) -> Api {
        self.api
    }

    super::same_in_every_backend!();

    fn compile(&mut self, request: &CompileRequest) -> Result<ProgramId> {
        if let Some(id) = self.own.built(request) {
            return Ok(id);
        }
        let id = self.build(request)?;
        self.builds.in_compile += 1;
        Ok(id)
    }

    fn kernel(&mut self, program: ProgramId, name: &str) -> Result<KernelId> {
        let p = self.own.programs.get(program)?;
        if !p.kernels.iter().any(|k| k == name) {
            return Err(BackendError::NoSuchKernel {
                name: name.into(),
                available: p.kernels.join(", "),
            });
        }
        Ok(self.own.kernels.insert((name.into(), program)))
    }

    fn kernel_resources(&self, kernel: KernelId) -> Result<KernelResources> {
        let (_, program) = self.kernel_of(kernel)?;
        let cap = self.own.programs.get(program)?.max_registers;
        Ok(KernelResources {
            registers: self.script.registers.map(|r| cap.map_or(r, |c| c.min(r))),
            ..KernelResources::default()
        })
    }

    fn alloc(&mut self, len: usize) -> Result<BufferId> {
        check_alloc(&self.info, len)?;
        Ok(self.own.buffers.insert(vec![0.0; len]))
    }

    // A transfer longer than its buffer is refused as the drivers refuse it, not quietly cut.
    fn upload(&mut self, buffer: BufferId, data: &[f32]) -> Result<()> {
        let api = self.api;
        let dst = self.own.buffers.get_mut(buffer)?;
        let Some(dst) = dst.get_mut(..data.len()) else {
            return Err(too_long(api, "upload", data.len(), dst.len()));
        };
        dst.copy_from_slice(data);
        Ok(())
    }

    fn download(&mut self, buffer: BufferId, out: &mut [f32]) -> Result<()> {
        let src = self.own.buffers.get(buffer)?;
        let Some(src) = src.get(..out.len()) else {
            return Err(too_long(self.api, "download", out.len(), src.len()));
        };
        out.copy_from_slice(src);
        Ok(())
    }

    fn free(&mut self, buffer: BufferId) -> Result<()> {
        self.own.buffers.remove(buffer)
    }
}

fn too_long(api: Api, call: &str, floats: usize, buffer: usize) -> BackendError {
    let detail = format!("{floats} floats do not fit a buffer of {buffer}");
    BackendError::driver(api, call, detail)
}

impl BufferOps for FakeBackend {
    fn bind_constant(&mut self, program: ProgramId, symbol: &str, buffer: BufferId) -> Result<()> {
        let data = self.own.buffers.get(buffer)?.clone();
        let p = self.own.programs.get_mut(program)?;
        p.constants.retain(|(s, _)| s != symbol);
        p.constants.push((symbol.to_string(), data));
        Ok(())
    }

    fn copy(&mut self, src: BufferId, dst: BufferId, len: usize) -> Result<Timing> {
        self.check_launch_budget()?;
        let Some(data) = self.own.buffers.get(src)?.get(..len).map(<[f32]>::to_vec) else {
            let detail = format!("a copy of {len} floats is longer than its source");
            return Err(BackendError::driver(self.api, "copy", detail));
        };
        self.upload(dst, &data)?;
        Ok(self.scripted_timing(2 * len, 1.0))
    }
}

impl Programs for FakeBackend {
    fn prebuild(&mut self, requests: &[CompileRequest]) -> usize {
        let todo = self.own.not_built(requests);
        let made = todo.iter().filter(|r| self.build(r).is_ok()).count();
        self.builds.ahead += made;
        made
    }

    fn program_text(&self, program: ProgramId) -> Result<Option<String>> {
        let p = self.own.programs.get(program)?;
        // The defines travel in the text, as they are compiled into real PTX.
        let defines: Vec<String> = p.defines.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let text = format!("{FAKE_TEXT_HEADER}{}\n{}", defines.join(" "), p.source);
        Ok(self.script.program_texts.then_some(text))
    }
}

impl ForeignCode for FakeBackend {
    fn load_foreign_program(&mut self, text: &str, jit: &JitOptions) -> Result<ProgramId> {
        if !self.script.program_texts {
            let what = "running another compiler's program (FakeScript::program_texts)";
            return Err(BackendError::unsupported(self.api, what));
        }
        let (header, source) = text.split_once('\n').unwrap_or((text, ""));
        let defines = header
            .strip_prefix(FAKE_TEXT_HEADER)
            .unwrap_or("")
            .split_whitespace()
            .filter_map(|d| d.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        self.compile(&CompileRequest {
            source: source.to_string(),
            defines,
            flags: Vec::new(),
            jit: *jit,
        })
    }
}

impl HostTransfers for FakeBackend {
    fn alloc_host(&mut self, len: usize, _memory: HostMemory) -> Result<HostBufferId> {
        check_alloc(&self.info, len)?;
        Ok(self.own.hosts.insert(vec![0.0; len]))
    }

    fn host_data(&mut self, host: HostBufferId) -> Result<&mut [f32]> {
        Ok(self.own.hosts.get_mut(host)?.as_mut_slice())
    }

    fn free_host(&mut self, host: HostBufferId) -> Result<()> {
        self.own.hosts.remove(host)
    }

    fn transfer(&mut self, transfer: Transfer) -> Result<Timing> {
        // As on the real backends, a transfer too long is refused before the failure budget
        // is drawn on, and the scripted failure comes before data moves.
        let data = self.floats_to_move(transfer)?;
        self.check_launch_budget()?;
        self.put_floats(transfer, &data)?;
        Ok(self.scripted_timing(transfer.len, 1.0))
    }

    fn transfer_beside_kernel(
        &mut self,
        transfer: Transfer,
        kernel: KernelId,
        shape: LaunchShape,
        args: &[Arg],
        concurrent: bool,
    ) -> Result<Timing> {
        let copy = self.transfer(transfer)?;
        let run = self.launch(kernel, shape, args)?;
        // Scripted overlap: concurrent work takes as long as the longer of the two.
        let wall = if concurrent {
            copy.wall.0.max(run.wall.0)
        } else {
            copy.wall.0 + run.wall.0
        };
        Ok(Timing::clocks(Seconds(wall), None))
    }
}

impl PlainLoops for FakeBackend {
    fn launch_repeated(
        &mut self,
        kernel: KernelId,
        shape: LaunchShape,
        args: &[Arg],
        count: u32,
    ) -> Result<Timing> {
        let items = shape.group_items();
        if items == 0 || items > self.info.max_work_group_size {
            let why = "the fake driver's refusal";
            return Err(launch_refusal(&self.info, self.api, items, None, why));
        }
        let (name, program) = self.kernel_of(kernel)?;
        // Events as the real backends ask for them: start and stop for the device clock, one
        // for an event wait mode, none for a host-timed launch in `finish` mode.
        let events = match (self.timer, self.wait.needs_event()) {
            (TimerKind::DeviceEvent, _) => 2,
            (TimerKind::WallClock, true) => 1,
            (TimerKind::WallClock, false) => 0,
        };
        let count = count.max(1);
        for _ in 0..count {
            self.check_launch_budget()?;
            self.emulate(&name, program, shape, args)?;
        }
        // Counted once the launches ran, as the real backends count what the driver took.
        self.calls.launches += u64::from(count);
        self.calls.events += events;
        let factor = self.slowdown(program);
        let one = self.scripted_timing(self.floats_of(args), factor);
        // One wait for all: the host overhead once, the device time `count` times.
        let busy = one.device.map_or(0.0, |d| d.0);
        let wall = one.wall.0 + busy * f64::from(count - 1);
        let device = one.device.filter(|_| self.timer == TimerKind::DeviceEvent);
        let device = device.map(|d| Seconds(d.0 * f64::from(count)));
        Ok(Timing::clocks(Seconds(wall), device))
    }

    fn plain_launches(
        &mut self,
        kernel: KernelId,
        args: &[Arg],
        plan: PlainLoop,
    ) -> Result<Vec<f64>> {
        let (name, program) = self.kernel_of(kernel)?;
        let (wait, harness) = (self.wait, self.script.harness_overhead_seconds);
        self.wait = plan.wait;
        // The saved mode comes back however the loop ends: a launch failing partway must not
        // leave the backend waiting in the plain loop's mode.
        let times = (0..plan.reps)
            .map(|_| {
                for _ in 0..plan.batch.max(1) {
                    self.emulate(&name, program, plan.shape, args)?;
                }
                let one = self.scripted_timing(self.floats_of(args), 1.0);
                let busy = one.device.map_or(0.0, |d| d.0);
                Ok(one.wall.0 - harness + busy * f64::from(plan.batch.max(1) - 1))
            })
            .collect();
        self.wait = wait;
        times
    }

    fn plain_transfers(&mut self, transfer: Transfer, reps: u32) -> Result<Vec<f64>> {
        let harness = self.script.harness_overhead_seconds;
        (0..reps)
            .map(|_| {
                let data = self.floats_to_move(transfer)?;
                self.put_floats(transfer, &data)?;
                Ok(self.scripted_timing(transfer.len, 1.0).wall.0 - harness)
            })
            .collect()
    }

    fn calls(&self) -> CallCounts {
        self.calls
    }
}

impl ExactLaunch for FakeBackend {
    /// The largest work-group, on CUDA only.
    fn runtime_local(&mut self, kernel: KernelId) -> Result<Option<u32>> {
        self.kernel_of(kernel)?;
        Ok((self.api == Api::Cuda).then_some(self.info.max_work_group_size))
    }

    /// On OpenCL, OpenCL 1.2's rule (NVIDIA's): a local size that does not divide the global
    /// size is refused.
    fn launch_exact(
        &mut self,
        kernel: KernelId,
        global: u64,
        local: Option<u32>,
        args: &[Arg],
    ) -> Result<Timing> {
        let opencl = self.api == Api::OpenCl;
        if opencl && local.is_some_and(|l| l == 0 || !global.is_multiple_of(u64::from(l))) {
            let (what, why) = ("clEnqueueNDRangeKernel", "CL_INVALID_WORK_GROUP_SIZE");
            return Err(BackendError::driver(self.api, what, why));
        }
        // NULL: the fake OpenCL runtime picks one work-item per group (any divisor would do),
        // CUDA's the largest group.
        let local = local.unwrap_or(if opencl {
            1
        } else {
            self.info.max_work_group_size
        });
        let groups = abilities::grid_of(self.api, global.div_ceil(u64::from(local.max(1))))?;
        self.launch(kernel, LaunchShape::linear(groups, local), args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A test's kernel knowledge: `store_count` writes its count argument (times the
    /// program's FMA_ITERS) to its output; any other kernel is refused.
    struct StoreCount;

    impl Emulator for StoreCount {
        fn emulate(&self, launch: &mut FakeLaunch<'_>) -> Result<()> {
            if launch.kernel != "store_count" {
                return Err(launch.refuse("not the test's kernel"));
            }
            let iters: usize = launch.define("FMA_ITERS").unwrap().parse().unwrap();
            let value = (launch.count(2)? * iters) as f32;
            launch.write(1, vec![value])
        }
    }

    fn fake(api: Api, script: FakeScript) -> FakeBackend {
        FakeBackend::new(api, script, Arc::new(StoreCount))
    }

    fn request(source: &str) -> CompileRequest {
        CompileRequest {
            source: source.into(),
            defines: vec![("FMA_ITERS".into(), "4".into())],
            flags: vec![],
            jit: Default::default(),
        }
    }

    #[test]
    fn a_transfer_longer_than_its_buffer_is_refused_as_the_drivers_refuse_it() {
        let mut b = fake(Api::OpenCl, FakeScript::default());
        let buf = b.alloc(2).unwrap();
        let e = b.upload(buf, &[1.0, 2.0, 3.0]).unwrap_err();
        assert!(
            e.to_string().contains("3 floats do not fit a buffer of 2"),
            "{e}"
        );
        let e = b.download(buf, &mut [0.0; 3]).unwrap_err();
        assert!(
            e.to_string().contains("3 floats do not fit a buffer of 2"),
            "{e}"
        );
        b.upload(buf, &[4.0]).unwrap();
        let mut out = [0.0; 2];
        b.download(buf, &mut out).unwrap();
        assert_eq!(out[0], 4.0);
    }

    #[test]
    fn an_exact_launch_past_a_u32_grid_is_refused_not_cut() {
        for api in [Api::Cuda, Api::OpenCl] {
            let mut b = fake(api, FakeScript::default());
            let p = b.compile(&request("__kernel void store_count(")).unwrap();
            let k = b.kernel(p, "store_count").unwrap();
            let (x, out) = (b.alloc(1).unwrap(), b.alloc(1).unwrap());
            let args = [Arg::Buffer(x), Arg::Buffer(out), Arg::U32(1)];
            // 2^32 + 1 groups of one: cut to a u32, the grid would be one group.
            let e = b
                .launch_exact(k, (1u64 << 32) + 1, Some(1), &args)
                .unwrap_err();
            assert!(e.to_string().contains("grid too large"), "{api:?}: {e}");
            assert_eq!(b.calls().launches, 0, "{api:?}");
        }
    }

    #[test]
    fn kernels_are_found_in_both_spellings() {
        let names = kernel_names(
            "__kernel void matvec_a(int x) {}\nextern \"C\" __global__ void reduce_final(int y)",
        );
        assert_eq!(names, vec!["matvec_a", "reduce_final"]);
    }

    #[test]
    fn a_scripted_build_failure_carries_a_log() {
        let mut b = fake(
            Api::Cuda,
            FakeScript {
                fail_build_containing: Some("peak_fma".into()),
                ..FakeScript::default()
            },
        );
        let e = b
            .compile(&request("__global__ void peak_fma()"))
            .unwrap_err();
        assert!(matches!(e, BackendError::Compile { .. }), "{e}");
        assert!(e.to_string().contains("scripted build failure"), "{e}");
    }

    #[test]
    fn copy_and_launch_emulate_and_time_deterministically() {
        let run = || {
            let mut b = fake(Api::OpenCl, FakeScript::default());
            let p = b.compile(&request("__kernel void store_count(")).unwrap();
            let k = b.kernel(p, "store_count").unwrap();
            let (x, out) = (b.alloc(1).unwrap(), b.alloc(1).unwrap());
            let shape = LaunchShape::linear(1, 1);
            let t = b
                .launch(k, shape, &[Arg::Buffer(x), Arg::Buffer(out), Arg::U32(7)])
                .unwrap();
            let mut got = [0.0f32];
            b.download(out, &mut got).unwrap();
            (got[0], t)
        };
        let (value, t) = run();
        assert_eq!(
            value, 28.0,
            "the emulator saw the arguments and the defines"
        );
        assert!(t.wall.0 > t.device.unwrap().0);
        assert_eq!(run().1, t, "the same script gives the same timings");
    }

    #[test]
    fn a_copy_past_its_source_is_an_error_not_a_panic() {
        let mut b = fake(Api::Cuda, FakeScript::default());
        let (x, y) = (b.alloc(4).unwrap(), b.alloc(8).unwrap());
        let e = b.copy(x, y, 8).unwrap_err().to_string();
        assert!(
            e.contains("a copy of 8 floats is longer than its source"),
            "{e}"
        );
        b.copy(x, y, 4).unwrap();
    }

    /// A built kernel the test's emulator refuses, and a buffer to pass it.
    fn unknown_kernel(b: &mut FakeBackend) -> (KernelId, BufferId) {
        let p = b.compile(&request("__global__ void other(")).unwrap();
        (b.kernel(p, "other").unwrap(), b.alloc(1).unwrap())
    }

    #[test]
    fn a_kernel_the_emulator_does_not_know_fails_by_name() {
        let mut b = fake(Api::Cuda, FakeScript::default());
        let (k, out) = unknown_kernel(&mut b);
        let e = b
            .launch(k, LaunchShape::linear(1, 1), &[Arg::Buffer(out)])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("kernel 'other'") && e.contains("not the test's kernel"),
            "{e}"
        );
    }

    #[test]
    fn a_plain_loop_that_fails_partway_restores_the_wait_mode() {
        let mut b = fake(Api::Cuda, FakeScript::default());
        let (k, out) = unknown_kernel(&mut b);
        b.set_wait_mode(WaitMode::Spin).unwrap();
        let plan = PlainLoop {
            shape: LaunchShape::linear(1, 1),
            wait: WaitMode::Yield,
            batch: 1,
            reps: 2,
            flag_copies: false,
        };
        assert!(b.plain_launches(k, &[Arg::Buffer(out)], plan).is_err());
        assert_eq!(b.wait, WaitMode::Spin);
    }

    #[test]
    fn a_refused_launch_counts_no_driver_call() {
        let mut b = fake(
            Api::OpenCl,
            FakeScript {
                fail_launch_after: Some(0),
                ..FakeScript::default()
            },
        );
        let p = b.compile(&request("__kernel void store_count(")).unwrap();
        let k = b.kernel(p, "store_count").unwrap();
        let out = b.alloc(1).unwrap();
        let args = [Arg::Buffer(out), Arg::Buffer(out), Arg::U32(1)];
        assert!(b.launch(k, LaunchShape::linear(1, 1), &args).is_err());
        assert_eq!(b.calls(), CallCounts::default());
    }

    #[test]
    fn a_transfer_too_long_uses_none_of_the_scripted_budget() {
        let mut b = fake(
            Api::Cuda,
            FakeScript {
                fail_launch_after: Some(1),
                ..FakeScript::default()
            },
        );
        let host = b.alloc_host(4, HostMemory::Pageable).unwrap();
        b.host_data(host)
            .unwrap()
            .copy_from_slice(&[1.0, 2.0, 3.0, 4.0]);
        let buffer = b.alloc(4).unwrap();
        let at = |len| Transfer {
            host,
            buffer,
            direction: Direction::H2d,
            len,
        };
        let e = b.transfer(at(8)).unwrap_err().to_string();
        assert!(e.contains("transfer of 8 floats"), "{e}");
        // The one scripted success is still there, and it moves the data.
        b.transfer(at(4)).unwrap();
        let mut out = [0.0; 4];
        b.download(buffer, &mut out).unwrap();
        assert_eq!(out, [1.0, 2.0, 3.0, 4.0]);
        // The scripted failure comes before any data moves.
        b.host_data(host).unwrap().fill(9.0);
        let e = b.transfer(at(4)).unwrap_err().to_string();
        assert!(e.contains("scripted failure after 1"), "{e}");
        b.download(buffer, &mut out).unwrap();
        assert_eq!(out, [1.0, 2.0, 3.0, 4.0]);
    }

    #[test]
    fn launches_fail_after_the_scripted_count() {
        let mut b = fake(
            Api::Cuda,
            FakeScript {
                fail_launch_after: Some(1),
                ..FakeScript::default()
            },
        );
        let (x, y) = (b.alloc(4).unwrap(), b.alloc(4).unwrap());
        assert!(b.copy(x, y, 4).is_ok());
        let e = b.copy(x, y, 4).unwrap_err().to_string();
        assert!(e.contains("scripted failure after 1"), "{e}");
    }
}
