//! The abilities beyond the core [`Backend`] that one experiment or another needs, one small
//! trait each, so that a new experiment adds a trait rather than widening the core.

use super::*;

/// A backend with every ability (every backend of ours): what a session holds.
pub trait Runtime:
    Backend + BufferOps + Programs + ForeignCode + HostTransfers + PlainLoops + ExactLaunch
{
}

impl<T> Runtime for T where
    T: Backend
        + BufferOps
        + Programs
        + ForeignCode
        + HostTransfers
        + PlainLoops
        + ExactLaunch
        + ?Sized
{
}

pub trait BufferOps: Backend {
    /// Uploads integers bit for bit, for the kernel to read as `uint`.
    fn upload_u32(&mut self, buffer: BufferId, data: &[u32]) -> Result<()> {
        // SAFETY: u32 and f32 have the same size and alignment and every bit pattern is a
        // valid f32, so the words are viewed in place (a copy would cost a gigabyte-sized
        // allocation for a 2^28-entry column array).
        let bits = unsafe { std::slice::from_raw_parts(data.as_ptr().cast::<f32>(), data.len()) };
        self.upload(buffer, bits)
    }

    /// Sets the first `len` floats to NaN before a verifying run, so that an output the kernel
    /// never writes cannot pass. A device-side fill where the API has one: an upload would
    /// first write `len` floats on the host, seconds at GPU sizes.
    fn poison(&mut self, buffer: BufferId, len: usize) -> Result<()> {
        self.upload(buffer, &vec![f32::NAN; len])
    }

    fn download_u32(&mut self, buffer: BufferId, out: &mut [u32]) -> Result<()> {
        let mut words = vec![0.0f32; out.len()];
        self.download(buffer, &mut words)?;
        for (o, w) in out.iter_mut().zip(words) {
            *o = w.to_bits();
        }
        Ok(())
    }

    /// Fills constant memory, untimed: CUDA copies `buffer` into `program`'s symbol `symbol`;
    /// OpenCL only checks it, as the kernel's `__constant` argument ([`Arg::Constant`]).
    fn bind_constant(&mut self, program: ProgramId, symbol: &str, buffer: BufferId) -> Result<()>;

    /// Device-to-device copy of `len` floats, blocking, timed like a launch.
    fn copy(&mut self, src: BufferId, dst: BufferId, len: usize) -> Result<Timing>;
}

/// What a backend can say about the programs it built, and programs built ahead.
pub trait Programs: Backend {
    /// Builds these programs ahead (in parallel where the compiler allows) for
    /// [`Backend::compile`] to find, leaving a failure for it to report; returns how many.
    fn prebuild(&mut self, _requests: &[CompileRequest]) -> usize {
        0
    }

    /// The compiled program as text where the API gives text (PTX on NVIDIA).
    fn program_text(&self, program: ProgramId) -> Result<Option<String>>;

    /// The log of a successful build, where the compiler keeps one (NVIDIA's OpenCL with
    /// `-cl-nv-verbose` prints registers there).
    fn build_log(&self, _program: ProgramId) -> Option<String> {
        None
    }

    /// The compiler's target for this device (`compute_90` for NVRTC).
    fn target(&self) -> Option<String> {
        None
    }

    /// Why this device can run nothing more (a context the driver has broken): a caller that
    /// can open the device again does so instead of failing every later call.
    fn broken(&self) -> Option<String> {
        None
    }
}

/// `explain`'s PTX swap: another compiler's program through this backend's loader and
/// second stage.
pub trait ForeignCode: Backend {
    fn resources_of_foreign_program(&self, _text: &str, _kernel: &str) -> Result<KernelResources> {
        let what = "loading another compiler's program";
        Err(BackendError::unsupported(self.api(), what))
    }

    /// The bytes the GPU runs (a cubin) of a PTX text assembled with `jit`'s options, for a
    /// disassembler; `None` where the backend has no such step.
    fn machine_code(&self, _ptx: &str, _jit: &JitOptions) -> Result<Option<Vec<u8>>> {
        Ok(None)
    }

    /// Loads the other API's program text (both NVIDIA front ends make PTX) for running.
    fn load_foreign_program(&mut self, _text: &str, _jit: &JitOptions) -> Result<ProgramId> {
        let what = "running another compiler's program";
        Err(BackendError::unsupported(self.api(), what))
    }
}

pub trait HostTransfers: Backend {
    fn alloc_host(&mut self, len: usize, memory: HostMemory) -> Result<HostBufferId>;

    /// For filling and reading back (no transfer).
    fn host_data(&mut self, host: HostBufferId) -> Result<&mut [f32]>;

    fn free_host(&mut self, host: HostBufferId) -> Result<()>;

    /// Blocking, timed like a launch.
    fn transfer(&mut self, transfer: Transfer) -> Result<Timing>;

    /// A transfer and one kernel launch, on two queues at once (`concurrent`) or on one;
    /// blocking. Wall: first enqueue to the later completion; no device time.
    fn transfer_beside_kernel(
        &mut self,
        transfer: Transfer,
        kernel: KernelId,
        shape: LaunchShape,
        args: &[Arg],
        concurrent: bool,
    ) -> Result<Timing>;
}

/// The plain programs the harness's own cost is held against: driver calls in a loop with
/// nothing of the harness between them, and the calls counted.
pub trait PlainLoops: Backend {
    /// `count` launches back to back and one wait for the last: wall from the first enqueue
    /// to the last completion, device from the first start to the last end; not divided.
    fn launch_repeated(
        &mut self,
        kernel: KernelId,
        shape: LaunchShape,
        args: &[Arg],
        count: u32,
    ) -> Result<Timing>;

    /// Arguments set once, then per repetition `batch` enqueues and one wait, each
    /// repetition's seconds on the host clock (`clvscu calibrate`).
    fn plain_launches(
        &mut self,
        kernel: KernelId,
        args: &[Arg],
        plan: PlainLoop,
    ) -> Result<Vec<f64>>;

    /// `reps` blocking copies with no event, each timed on the host clock (`explain`'s
    /// replay).
    fn plain_transfers(&mut self, transfer: Transfer, reps: u32) -> Result<Vec<f64>>;

    fn calls(&self) -> CallCounts;
}

/// Launches of an exact number of work-items (the fill article's launches).
pub trait ExactLaunch: Backend {
    /// The work-group size the runtime picks when a launch leaves it open: CUDA's occupancy
    /// calculator; `None` where the runtime never says (OpenCL's NULL local size).
    fn runtime_local(&mut self, _kernel: KernelId) -> Result<Option<u32>> {
        Ok(None)
    }

    /// A 1-D launch of exactly `global` work-items, `local` per group or the runtime's
    /// choice. This default is CUDA's: the grid rounded up to whole blocks (the kernel's bound
    /// check drops the extra threads).
    fn launch_exact(
        &mut self,
        kernel: KernelId,
        global: u64,
        local: Option<u32>,
        args: &[Arg],
    ) -> Result<Timing> {
        let local = match local {
            Some(l) => l,
            None => self.runtime_local(kernel)?.ok_or_else(|| {
                BackendError::unsupported(self.api(), "reporting the runtime's work-group size")
            })?,
        };
        let groups = grid_of(self.api(), global.div_ceil(u64::from(local.max(1))))?;
        self.launch(kernel, LaunchShape::linear(groups, local), args)
    }
}

/// Refused where a launch cannot count that many work-groups.
pub(super) fn grid_of(api: Api, groups: u64) -> Result<u32> {
    u32::try_from(groups).map_err(|_| BackendError::driver(api, "launch_exact", "grid too large"))
}
