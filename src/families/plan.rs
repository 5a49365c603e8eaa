//! What a family hands the runner: its inputs (host data and the f64 reference), and the
//! steps of one run over buffers it allocated. The runner (`families::exec`) compiles, calls
//! the family through the `Family` trait, runs the steps and verifies; it knows no family.

use thiserror::Error;

use super::error::WorkloadError;
use super::reference::{self, Verification};
use super::variant::Variant;
use crate::backend::{
    Arg, BackendError, BufferId, HostBufferId, JitOptions, KernelId, LaunchShape, ProgramId,
    Runtime, Timing, Transfer,
};
use crate::kernels::KernelSourceError;
use crate::rows::Size;

/// Iterations of each FMA chain in the flops kernel (a compile-time define of both sides).
pub const FMA_ITERS: u32 = 1024;

#[derive(Debug, Error)]
pub enum ExecError {
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error(transparent)]
    Source(#[from] KernelSourceError),
}

impl ExecError {
    /// Whether the failure is a build failure (recorded as `build-failed`).
    pub fn is_build(&self) -> bool {
        matches!(
            self,
            ExecError::Backend(BackendError::Compile { .. }) | ExecError::Source(_)
        )
    }
}

/// The per-API part of a configuration: launch shape, defines and mapped compiler flags.
#[derive(Debug, Clone, PartialEq)]
pub struct SideConfig {
    pub shape: LaunchShape,
    /// Extra `-D` defines (unroll factors, WARP_SYNC_WG, USE_SUBGROUPS...).
    pub defines: Vec<(String, String)>,
    /// Compiler flags exactly as this API's compiler receives them.
    pub flags: Vec<String>,
    /// Second-stage options (PTX to machine code).
    pub jit: JitOptions,
}

impl SideConfig {
    /// `shape` with no extra defines or flags and the default second stage.
    pub fn launch_only(shape: LaunchShape) -> Self {
        SideConfig {
            shape,
            defines: Vec::new(),
            flags: Vec::new(),
            jit: JitOptions::default(),
        }
    }

    /// The complete define list given to the compiler: WG_SIZE and FMA_ITERS first.
    pub fn all_defines(&self) -> Vec<(String, String)> {
        let mut d = vec![
            ("WG_SIZE".to_string(), self.shape.local.to_string()),
            ("FMA_ITERS".to_string(), FMA_ITERS.to_string()),
        ];
        if self.shape.is_planar() {
            // Only 2-D launches define it, so every 1-D kernel's options stay as they were.
            d.push(("WG_SIZE_Y".to_string(), self.shape.local_y.to_string()));
        }
        d.extend(self.defines.iter().cloned());
        d
    }
}

/// Host inputs and the f64 reference, made once per configuration: both APIs compute the same data.
pub struct Inputs {
    pub size: Size,
    pub a: Vec<f32>,
    pub b: Vec<f32>,
    /// Integer arrays (CSR row pointers and columns, neighbour lists), uploaded bit for bit.
    pub ints: Vec<Vec<u32>>,
    pub(crate) reference: Vec<f64>,
    pub(crate) tolerances: Vec<f64>,
    /// Output positions the reference is for; empty: the first `reference.len()` outputs.
    pub(crate) sample: Vec<usize>,
    /// The reference is u32 words, which the result carries bit for bit in its floats.
    pub(crate) words: bool,
}

impl Inputs {
    /// Host bytes these inputs hold (what a cache of them costs).
    pub fn bytes(&self) -> usize {
        let f32s = self.a.len() + self.b.len();
        let u32s: usize = self.ints.iter().map(Vec::len).sum();
        let f64s = self.reference.len() + self.tolerances.len();
        4 * (f32s + u32s) + 8 * f64s + std::mem::size_of::<usize>() * self.sample.len()
    }

    /// Inputs `a` (and `b`) with no reference yet; the builder methods add the rest.
    pub(crate) fn new(size: Size, a: Vec<f32>, b: Vec<f32>) -> Self {
        Inputs {
            size,
            a,
            b,
            ints: Vec::new(),
            reference: Vec::new(),
            tolerances: Vec::new(),
            sample: Vec::new(),
            words: false,
        }
    }

    pub(crate) fn with_reference(mut self, reference: Vec<f64>, tolerances: Vec<f64>) -> Self {
        self.reference = reference;
        self.tolerances = tolerances;
        self
    }

    /// The reference `want`, to be met exactly: integers, or floats moved and not computed.
    pub(crate) fn with_exact(self, want: Vec<f64>) -> Self {
        let exact = vec![0.0; want.len()];
        self.with_reference(want, exact)
    }

    /// The reference `want`: u32 words the result must hold bit for bit.
    pub(crate) fn with_words(self, want: impl IntoIterator<Item = u32>) -> Self {
        let want = want.into_iter().map(f64::from).collect();
        Inputs {
            words: true,
            ..self.with_exact(want)
        }
    }

    pub(crate) fn with_ints(mut self, ints: Vec<Vec<u32>>) -> Self {
        self.ints = ints;
        self
    }

    pub(crate) fn with_sample(mut self, sample: Vec<usize>) -> Self {
        self.sample = sample;
        self
    }

    /// `N` random floats and their f64 sum, with a tolerance that grows with `N`.
    pub(crate) fn summed(size: Size, seed: u64) -> Self {
        let a = reference::random_vector(size.rows as usize, seed);
        let (s, abs) = reference::sum(&a);
        let tol = reference::tolerance_factor(size.rows) * abs;
        Inputs::new(size, a, Vec::new()).with_reference(vec![s], vec![tol])
    }

    /// `got` (at the `sample` positions, where there are some) against the reference, element
    /// by element (word by word for words).
    pub(crate) fn compare(&self, got: &[f32]) -> Verification {
        if self.words {
            return reference::compare_words(got, &self.reference);
        }
        if self.sample.is_empty() {
            return reference::compare(got, &self.reference, &self.tolerances);
        }
        let at = |p: &usize| got.get(*p).copied().unwrap_or(f32::NAN);
        let picked: Vec<f32> = self.sample.iter().map(at).collect();
        reference::compare(&picked, &self.reference, &self.tolerances)
    }

    /// Partial sums (per work-item or per work-group): their total must equal the sum.
    pub(crate) fn check_total(&self, got: &[f32]) -> Verification {
        let total = if got.iter().all(|g| g.is_finite()) {
            got.iter().map(|g| f64::from(*g)).sum::<f64>() as f32
        } else {
            f32::NAN
        };
        reference::compare(&[total], &self.reference, &self.tolerances)
    }

    /// `got` as an exact copy of input `a`.
    pub(crate) fn check_copy(&self, got: &[f32]) -> Verification {
        reference::compare_exact(got, self.a.len(), |i| f64::from(self.a[i]))
    }
}

/// Launches whose number the data decides, run as one step and timed as a whole.
pub trait LaunchLoop: Send + Sync {
    fn run(&self, backend: &mut dyn Runtime) -> Result<Timing, BackendError>;
}

/// One step of a run, executed in order by the runner.
pub enum Step {
    Kernel {
        kernel: KernelId,
        shape: LaunchShape,
        args: Vec<Arg>,
    },
    /// `count` launches back to back, one wait; timed per launch (the total / `count`).
    Repeated {
        kernel: KernelId,
        shape: LaunchShape,
        args: Vec<Arg>,
        count: u32,
    },
    Copy {
        src: BufferId,
        dst: BufferId,
        len: usize,
    },
    /// [`ExactLaunch::launch_exact`](crate::backend::ExactLaunch::launch_exact): kernel, global size, local size (`None`: the runtime's).
    Exact(KernelId, u64, Option<u32>, Vec<Arg>),
    /// A data-dependent loop of launches (one whole breadth-first search).
    Loop(Box<dyn LaunchLoop>),
    Transfer(Transfer),
    Beside {
        transfer: Transfer,
        kernel: KernelId,
        shape: LaunchShape,
        args: Vec<Arg>,
        concurrent: bool,
    },
}

/// Where a result lies: on the device, or in a host buffer (after a device-to-host copy).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Place {
    Device(BufferId),
    Host(HostBufferId),
}

/// What a family's `build` made: the steps of one run and where its results land.
pub struct Built {
    pub steps: Vec<Step>,
    /// Buffers written by the run (poisoned before verification).
    pub outputs: Vec<(BufferId, usize)>,
    /// The buffer compared with the reference and its length.
    pub result: (BufferId, usize),
    /// Host buffers (the transfer family's), freed with the run.
    pub hosts: Vec<HostBufferId>,
    /// Results checked in place against the inputs, each an exact copy (the transfer
    /// family's); when present they replace the reference comparison.
    pub checked: Vec<(Place, usize)>,
}

impl Built {
    /// Steps whose one output `out` (`len` floats) is compared with the reference.
    pub fn into(steps: Vec<Step>, out: BufferId, len: usize) -> Built {
        Built {
            steps,
            outputs: vec![(out, len)],
            result: (out, len),
            hosts: Vec::new(),
            checked: Vec::new(),
        }
    }
}

/// A family's view of one configuration while it allocates and stages: the compiled kernel,
/// the launch, its inputs, and the buffers it has made so far (freed if it fails half-way).
pub struct Build<'a> {
    pub backend: &'a mut dyn Runtime,
    pub variant: &'static Variant,
    pub inputs: &'a Inputs,
    pub side: &'a SideConfig,
    pub program: Option<ProgramId>,
    pub kernel: Option<KernelId>,
    pub owned: &'a mut Vec<BufferId>,
}

impl Build<'_> {
    /// The variant's kernel; a family whose variants all have one asks for it here.
    pub fn kernel(&self) -> Result<KernelId, ExecError> {
        self.kernel.ok_or_else(|| {
            WorkloadError::BadProblem {
                variant: self.variant.name.into(),
                reason: format!("family {} needs a kernel", self.variant.family.name()),
            }
            .into()
        })
    }

    /// The compiled program, for families that take a second kernel from it.
    pub fn program(&self) -> Result<ProgramId, ExecError> {
        self.program
            .ok_or_else(|| BackendError::InvalidHandle(self.variant.family.name().into()).into())
    }

    pub fn launch(&self, kernel: KernelId, args: Vec<Arg>) -> Step {
        Step::Kernel {
            kernel,
            shape: self.side.shape,
            args,
        }
    }

    /// The whole run of a one-kernel family: its kernel `(in, out, scalars...)` launched once,
    /// from input `a` into a fresh output of `len` floats that is compared with the reference.
    pub fn in_out(&mut self, len: usize, scalars: &[Arg]) -> Result<Built, ExecError> {
        let kernel = self.kernel()?;
        let inputs = self.inputs;
        let input = self.upload(&inputs.a)?;
        let out = self.output(len)?;
        let args = [&[Arg::Buffer(input), Arg::Buffer(out)], scalars].concat();
        Ok(Built::into(vec![self.launch(kernel, args)], out, len))
    }

    /// A device buffer holding `data` (one float at least).
    pub fn upload(&mut self, data: &[f32]) -> Result<BufferId, ExecError> {
        let id = self.output(data.len())?;
        if !data.is_empty() {
            self.backend.upload(id, data)?;
        }
        Ok(id)
    }

    /// A device buffer holding `data` bit for bit (indices, offsets).
    pub fn upload_u32(&mut self, data: &[u32]) -> Result<BufferId, ExecError> {
        let id = self.output(data.len())?;
        if !data.is_empty() {
            self.backend.upload_u32(id, data)?;
        }
        Ok(id)
    }

    /// An uninitialised device buffer of `len` floats (one at least).
    pub fn output(&mut self, len: usize) -> Result<BufferId, ExecError> {
        let id = self.backend.alloc(len.max(1))?;
        self.owned.push(id);
        Ok(id)
    }
}

/// What verification needs to know of a run besides its inputs and output.
pub struct Ran {
    pub variant: &'static str,
    pub shape: LaunchShape,
    /// The compiler flags the side used (fast math loosens the math family's tolerance).
    pub flags: Vec<String>,
}
