//! Preparing, running and verifying one variant on one backend, through the `Backend` trait
//! only: the same code path for OpenCL and CUDA.

use thiserror::Error;

use super::reference::{self, Verification};
use super::spmv::{MatrixSource, ReadPath};
use super::{
    bfs, check_local, check_size, constmem, fft, math, sgemm, FamilyKind, Size, Variant,
    WorkloadError, FMA_ITERS,
};
use crate::backend::{
    Api, Arg, Backend, BackendError, BufferId, CompileRequest, Direction, HostBufferId, JitOptions,
    KernelId, LaunchShape, Seconds, Timing,
};
use crate::kernels::{KernelSourceError, KernelSources};

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

/// Host inputs and the f64 reference, generated once per configuration and shared by both
/// sides, so both APIs compute on the same data.
pub struct Inputs {
    pub size: Size,
    pub a: Vec<f32>,
    pub b: Vec<f32>,
    /// Integer arrays (CSR row pointers and columns, neighbour lists), uploaded bit for bit.
    pub ints: Vec<Vec<u32>>,
    reference: Vec<f64>,
    tolerances: Vec<f64>,
    /// Output positions the reference is for; empty: the first `reference.len()` outputs.
    sample: Vec<usize>,
}

impl Inputs {
    /// Inputs of a family; SpMV takes its default matrix (`uniform`).
    pub fn generate(family: FamilyKind, size: Size, seed: u64) -> Self {
        Self::generate_with(family, size, seed, &MatrixSource::Uniform)
    }

    /// Inputs of a family, SpMV's from `matrix` (the study key).
    pub fn generate_with(family: FamilyKind, size: Size, seed: u64, matrix: &MatrixSource) -> Self {
        let n = size.rows as usize;
        match family {
            FamilyKind::Spmv => {
                let p = super::spmv::inputs(size, seed, matrix);
                Inputs {
                    size,
                    a: p.csr.val.clone(),
                    b: p.x,
                    ints: vec![p.csr.col.clone(), p.csr.row_ptr.clone()],
                    reference: p.reference,
                    tolerances: p.tolerances,
                    sample: Vec::new(),
                }
            }
            FamilyKind::Md => {
                let p = super::md::inputs(size, seed);
                Inputs {
                    size,
                    a: p.positions,
                    b: Vec::new(),
                    ints: vec![p.list],
                    reference: p.reference,
                    tolerances: p.tolerances,
                    sample: Vec::new(),
                }
            }
            FamilyKind::Matvec => {
                let cols = size.cols as usize;
                let a = reference::random_vector(n * cols, seed);
                let b = reference::random_vector(cols, seed.wrapping_add(1));
                let (w, abs) = reference::matvec(&a, &b, n, cols);
                let f = reference::tolerance_factor(size.cols);
                let tolerances = abs.iter().map(|s| f * s).collect();
                Inputs {
                    size,
                    a,
                    b,
                    ints: Vec::new(),
                    reference: w,
                    tolerances,
                    sample: Vec::new(),
                }
            }
            FamilyKind::Transfer => Inputs {
                size,
                a: reference::random_vector(n, seed),
                b: Vec::new(),
                ints: Vec::new(),
                reference: Vec::new(),
                tolerances: Vec::new(),
                sample: Vec::new(),
            },
            FamilyKind::Reduce | FamilyKind::Bandwidth | FamilyKind::Flops | FamilyKind::Math => {
                let a = reference::random_vector(n, seed);
                let (s, abs) = reference::sum(&a);
                let tol = reference::tolerance_factor(size.rows) * abs;
                Inputs {
                    size,
                    a,
                    b: Vec::new(),
                    ints: Vec::new(),
                    reference: vec![s],
                    tolerances: vec![tol],
                    sample: Vec::new(),
                }
            }
            FamilyKind::Fft => {
                let a = reference::random_vector(2 * n, seed);
                let (reference, tolerances) = fft::reference(&a);
                Inputs {
                    size,
                    a,
                    b: fft::twiddles(),
                    ints: Vec::new(),
                    reference,
                    tolerances,
                    sample: Vec::new(),
                }
            }
            FamilyKind::Stencil => {
                let st = super::stencil::inputs(size, seed);
                Inputs {
                    size,
                    a: st.grid,
                    b: st.coeff,
                    ints: Vec::new(),
                    reference: st.reference,
                    tolerances: st.tolerances,
                    sample: Vec::new(),
                }
            }
            FamilyKind::Launch => Inputs {
                size,
                a: vec![0.0],
                b: Vec::new(),
                ints: Vec::new(),
                reference: vec![size.rows as f64],
                tolerances: vec![0.0],
                sample: Vec::new(),
            },
            FamilyKind::Sobel | FamilyKind::Broadcast => {
                let p = constmem::problem(family, size, seed);
                Inputs {
                    size,
                    a: p.data,
                    b: p.filter,
                    ints: Vec::new(),
                    reference: p.reference,
                    tolerances: Vec::new(),
                    sample: p.sample,
                }
            }
            FamilyKind::Bfs => Self::graph(bfs::Generator::Uniform, size, seed),
            FamilyKind::Fill => Inputs {
                size,
                a: Vec::new(),
                b: Vec::new(),
                ints: Vec::new(),
                reference: Vec::new(),
                tolerances: Vec::new(),
                sample: Vec::new(),
            },
            FamilyKind::Sgemm => {
                let p = sgemm::problem(size, seed);
                Inputs {
                    size,
                    a: p.a,
                    b: p.b,
                    ints: Vec::new(),
                    reference: p.reference,
                    tolerances: p.tolerances,
                    sample: p.sample,
                }
            }
        }
    }
}

impl Inputs {
    /// The inputs of one variant: its family's, except where the variant picks the data (the
    /// BFS variants are graph generators).
    pub fn of_variant(
        variant: &'static Variant,
        size: Size,
        seed: u64,
        matrix: &super::spmv::MatrixSource,
    ) -> Self {
        match variant.family {
            FamilyKind::Bfs => Self::graph(bfs::Generator::of(variant), size, seed),
            family => Self::generate_with(family, size, seed, matrix),
        }
    }

    fn graph(generator: bfs::Generator, size: Size, seed: u64) -> Self {
        let p = bfs::problem(generator, size, seed);
        let tolerances = vec![0.0; p.levels.len()];
        Inputs {
            size,
            a: p.offsets,
            b: p.edges,
            ints: Vec::new(),
            reference: p.levels,
            tolerances,
            sample: Vec::new(),
        }
    }

    /// The levels one run of a level-by-level family takes: a BFS's depth from the source, as
    /// the CPU reference found it (a verified run matched it vertex by vertex). `None` for
    /// other families.
    pub fn levels(&self, family: FamilyKind) -> Option<u64> {
        (family == FamilyKind::Bfs).then(|| bfs::depth(&self.reference))
    }

    /// What besides family, size and seed tells two variants' inputs apart.
    pub fn key_of(variant: &'static Variant) -> &'static str {
        match variant.family {
            FamilyKind::Bfs => variant.name,
            _ => "",
        }
    }
}

pub(super) enum Step {
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
    /// [`Backend::launch_exact`]: kernel, global size, local size (`None`: the runtime's).
    Exact(KernelId, u64, Option<u32>, Vec<Arg>),
    /// A data-dependent loop of launches: one whole breadth-first search.
    Bfs(bfs::Plan),
    Transfer((HostBufferId, BufferId, Direction, usize)),
    Beside {
        transfer: (HostBufferId, BufferId, Direction, usize),
        kernel: KernelId,
        shape: LaunchShape,
        args: Vec<Arg>,
        concurrent: bool,
    },
}

/// Where a result lies: on the device, or in a host buffer (after a device-to-host copy).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Place {
    Device(BufferId),
    Host(HostBufferId),
}

/// A variant compiled, with its buffers allocated and filled, ready to run.
pub struct Prepared {
    steps: Vec<Step>,
    /// Buffers written by the run (poisoned before verification).
    outputs: Vec<(BufferId, usize)>,
    /// The buffer compared with the reference and its length.
    result: (BufferId, usize),
    buffers: Vec<BufferId>,
    /// Host buffers of the transfer family, freed with the run.
    hosts: Vec<HostBufferId>,
    /// The transfer family's results, each checked against the inputs.
    pub(super) checked: Vec<(Place, usize)>,
    pub program_text: Option<String>,
    pub kernel: Option<KernelId>,
    family: FamilyKind,
    variant: &'static str,
    shape: LaunchShape,
    /// The flags relax math accuracy (fast math): the math family's looser tolerance.
    relaxed_math: bool,
}

fn buffer_with(
    backend: &mut dyn Backend,
    data: &[f32],
    owned: &mut Vec<BufferId>,
) -> Result<BufferId, ExecError> {
    let id = backend.alloc(data.len().max(1))?;
    owned.push(id);
    if !data.is_empty() {
        backend.upload(id, data)?;
    }
    Ok(id)
}

fn int_buffer(
    backend: &mut dyn Backend,
    data: &[u32],
    owned: &mut Vec<BufferId>,
) -> Result<BufferId, ExecError> {
    let id = backend.alloc(data.len().max(1))?;
    owned.push(id);
    if !data.is_empty() {
        backend.upload_u32(id, data)?;
    }
    Ok(id)
}

pub(super) fn buffer_of(
    backend: &mut dyn Backend,
    len: usize,
    owned: &mut Vec<BufferId>,
) -> Result<BufferId, ExecError> {
    let id = backend.alloc(len.max(1))?;
    owned.push(id);
    Ok(id)
}

/// Refuse a problem that cannot fit on the device before anything is allocated.
fn check_memory(
    backend: &dyn Backend,
    variant: &Variant,
    inputs: &Inputs,
) -> Result<(), ExecError> {
    let info = backend.info();
    let ints: usize = inputs.ints.iter().map(Vec::len).sum();
    let bytes =
        (inputs.a.len() as u64 + inputs.b.len() as u64 + ints as u64 + inputs.size.rows) * 4;
    if info.global_mem_bytes > 0 && bytes > info.global_mem_bytes {
        return Err(WorkloadError::BadProblem {
            variant: format!("{}/{}", variant.family.name(), variant.name),
            reason: format!(
                "size {} needs about {bytes} bytes; {} has {} bytes of device memory",
                inputs.size, info.name, info.global_mem_bytes
            ),
        }
        .into());
    }
    Ok(())
}

/// Compile the variant and stage its inputs on the device.
pub fn prepare(
    backend: &mut dyn Backend,
    sources: &KernelSources,
    variant: &'static Variant,
    inputs: &Inputs,
    side: &SideConfig,
) -> Result<Prepared, ExecError> {
    prepare_with_program(backend, sources, variant, inputs, side, None)
}

/// [`prepare`], but running `foreign`, the program text the other API's compiler made for
/// this configuration, where it is given (the study key `program = "other"`).
pub fn prepare_with_program(
    backend: &mut dyn Backend,
    sources: &KernelSources,
    variant: &'static Variant,
    inputs: &Inputs,
    side: &SideConfig,
    foreign: Option<&str>,
) -> Result<Prepared, ExecError> {
    // `matvec/auto` runs what the shape rule picks (the session has already named it).
    let variant = super::matvec_shapes::concrete(variant, inputs.size, backend.info());
    check_size(variant, inputs.size)?;
    check_local(variant, side.shape.local)?;
    super::stencil::check_launch(
        variant,
        inputs.size,
        side.shape,
        super::stencil::tile_x_of(&side.defines),
    )?;
    check_memory(backend, variant, inputs)?;
    let mut owned = Vec::new();
    let result = build(backend, sources, variant, inputs, side, foreign, &mut owned);
    if result.is_err() {
        // Nothing leaks when a configuration fails half-way.
        for b in owned {
            let _ = backend.free(b);
        }
    }
    result
}

fn build(
    backend: &mut dyn Backend,
    sources: &KernelSources,
    variant: &'static Variant,
    inputs: &Inputs,
    side: &SideConfig,
    foreign: Option<&str>,
    owned: &mut Vec<BufferId>,
) -> Result<Prepared, ExecError> {
    let shape = side.shape;
    let (program, kernel, program_text) = if variant.kernel.is_empty() {
        (None, None, None)
    } else {
        let request = CompileRequest {
            source: sources.program(backend.api(), variant.family.file())?,
            defines: side.all_defines(),
            flags: side.flags.clone(),
            jit: side.jit,
        };
        let program = match foreign {
            Some(text) => backend.load_foreign_program(text, &side.jit)?,
            None => backend.compile(&request)?,
        };
        let kernel = backend.kernel(program, variant.kernel)?;
        let text = backend.program_text(program).ok().flatten();
        (Some(program), Some(kernel), text)
    };
    let size = inputs.size;
    let n = size.rows as usize;
    let global = shape.global() as usize;
    let kernel_step = |kernel: KernelId, args: Vec<Arg>| Step::Kernel {
        kernel,
        shape,
        args,
    };
    let mut steps = Vec::new();
    let outputs;
    let result;
    let mut hosts = Vec::new();
    let mut checked = Vec::new();
    match (variant.family, kernel) {
        (FamilyKind::Transfer, k) => {
            let built = super::transfer::build(backend, variant, &inputs.a, k, shape)?;
            owned.extend(built.device.iter().copied());
            steps = built.steps;
            hosts = built.hosts;
            checked = built.checked;
            outputs = Vec::new();
            result = (built.device[0], 0);
        }
        (FamilyKind::Launch, Some(k)) if variant.name == "back-to-back" => {
            let x = buffer_with(backend, &inputs.a, owned)?;
            let out = buffer_of(backend, 1, owned)?;
            steps.push(Step::Repeated {
                kernel: k,
                shape,
                args: vec![Arg::Buffer(x), Arg::Buffer(out), Arg::U32(n as u32)],
                count: n as u32,
            });
            outputs = vec![(out, 1)];
            result = (out, 1);
        }
        (FamilyKind::Matvec, Some(k)) => {
            let m = buffer_with(backend, &inputs.a, owned)?;
            let v = buffer_with(backend, &inputs.b, owned)?;
            let w = buffer_of(backend, n, owned)?;
            let (cols, rows) = (size.cols as u32, size.rows as u32);
            if super::matvec_shapes::is_split(variant.name) {
                let program =
                    program.ok_or_else(|| BackendError::InvalidHandle("matvec".into()))?;
                let (split_steps, partial) = super::matvec_shapes::split_k_steps(
                    backend,
                    program,
                    k,
                    variant.name,
                    [m, v, w],
                    size,
                    shape,
                    owned,
                )?;
                steps = split_steps;
                outputs = vec![partial, (w, n)];
                result = (w, n);
            } else {
                steps.push(kernel_step(
                    k,
                    vec![
                        Arg::Buffer(m),
                        Arg::U32(cols),
                        Arg::U32(rows),
                        Arg::Buffer(v),
                        Arg::Buffer(w),
                    ],
                ));
                outputs = vec![(w, n)];
                result = (w, n);
            }
        }
        (FamilyKind::Reduce, Some(k)) => {
            let program =
                program.ok_or_else(|| BackendError::InvalidHandle("reduce program".into()))?;
            let final_kernel = backend.kernel(program, "reduce_final")?;
            let x = buffer_with(backend, &inputs.a, owned)?;
            let groups = shape.groups as usize;
            let partial = buffer_of(backend, groups, owned)?;
            let out = buffer_of(backend, 1, owned)?;
            steps.push(kernel_step(
                k,
                vec![Arg::Buffer(x), Arg::Buffer(partial), Arg::U32(n as u32)],
            ));
            // One work-group writes the whole sum: one launch, the same on both sides (and
            // the launch experiment's variants, see reduce_launches).
            if super::reduce_launches::one_launch(variant.name, shape.groups) {
                let len = super::reduce_launches::result_len(variant.name, shape.groups);
                return Ok(prepared(
                    steps,
                    vec![(partial, len)],
                    (partial, len),
                    owned,
                    program_text,
                    kernel,
                    variant,
                    side,
                ));
            }
            steps.push(Step::Kernel {
                kernel: final_kernel,
                shape: LaunchShape::linear(1, shape.local),
                args: vec![
                    Arg::Buffer(partial),
                    Arg::Buffer(out),
                    Arg::U32(groups as u32),
                ],
            });
            outputs = vec![(partial, groups), (out, 1)];
            result = (out, 1);
        }
        (FamilyKind::Bandwidth, k) => {
            let x = buffer_with(backend, &inputs.a, owned)?;
            match k {
                Some(k) if variant.name == "read" => {
                    let out = buffer_of(backend, global, owned)?;
                    steps.push(kernel_step(
                        k,
                        vec![Arg::Buffer(x), Arg::Buffer(out), Arg::U32(n as u32)],
                    ));
                    outputs = vec![(out, global)];
                    result = (out, global);
                }
                Some(k) => {
                    let out = buffer_of(backend, n, owned)?;
                    steps.push(kernel_step(
                        k,
                        vec![Arg::Buffer(x), Arg::Buffer(out), Arg::U32(n as u32)],
                    ));
                    outputs = vec![(out, n)];
                    result = (out, n);
                }
                None => {
                    let out = buffer_of(backend, n, owned)?;
                    steps.push(Step::Copy {
                        src: x,
                        dst: out,
                        len: n,
                    });
                    outputs = vec![(out, n)];
                    result = (out, n);
                }
            }
        }
        (FamilyKind::Sgemm, Some(k)) => {
            let a = buffer_with(backend, &inputs.a, owned)?;
            let b = buffer_with(backend, &inputs.b, owned)?;
            let c = buffer_of(backend, n * n, owned)?;
            steps.push(kernel_step(
                k,
                vec![
                    Arg::Buffer(a),
                    Arg::Buffer(b),
                    Arg::Buffer(c),
                    Arg::U32(n as u32),
                ],
            ));
            outputs = vec![(c, n * n)];
            result = (c, n * n);
        }
        (FamilyKind::Flops | FamilyKind::Launch | FamilyKind::Math, Some(k)) => {
            let x = buffer_with(backend, &inputs.a, owned)?;
            let len = if variant.family != FamilyKind::Launch {
                global
            } else {
                1
            };
            let out = buffer_of(backend, len, owned)?;
            steps.push(kernel_step(
                k,
                vec![Arg::Buffer(x), Arg::Buffer(out), Arg::U32(n as u32)],
            ));
            outputs = vec![(out, len)];
            result = (out, len);
        }
        (FamilyKind::Fft, Some(k)) => {
            let x = buffer_with(backend, &inputs.a, owned)?;
            let out = buffer_of(backend, 2 * n, owned)?;
            let tw = buffer_with(backend, &inputs.b, owned)?;
            let args = vec![
                Arg::Buffer(x),
                Arg::Buffer(out),
                Arg::Buffer(tw),
                Arg::U32(n as u32),
            ];
            steps.push(kernel_step(k, args));
            outputs = vec![(out, 2 * n)];
            result = (out, 2 * n);
        }
        (FamilyKind::Stencil, Some(k)) => {
            let points = inputs.a.len();
            let input = buffer_with(backend, &inputs.a, owned)?;
            let coeff = buffer_with(backend, &inputs.b, owned)?;
            let out = buffer_of(backend, points, owned)?;
            let g = super::stencil::Grid::of(size);
            let dims = [g.nx, g.ny, g.nz].map(|d| Arg::U32(d as u32));
            let mut args = vec![Arg::Buffer(input), Arg::Buffer(out), Arg::Buffer(coeff)];
            args.extend(dims);
            steps.push(kernel_step(k, args));
            outputs = vec![(out, points)];
            result = (out, points);
        }
        (FamilyKind::Sobel | FamilyKind::Broadcast, Some(k)) => {
            let data = buffer_with(backend, &inputs.a, owned)?;
            let filter = buffer_with(backend, &inputs.b, owned)?;
            let len = constmem::output_len(variant.family, size, shape.global());
            let out = buffer_of(backend, len, owned)?;
            let args = constmem::args(variant, data, out, filter, size);
            if let (Some(symbol), Some(program)) = (constmem::symbol(variant), program) {
                let table = if variant.family == FamilyKind::Sobel {
                    filter
                } else {
                    data
                };
                backend.bind_constant(program, symbol, table)?;
            }
            steps.push(kernel_step(k, args));
            outputs = vec![(out, len)];
            result = (out, len);
        }
        (FamilyKind::Fill, Some(k)) => {
            let len = size.elements() as usize;
            let out = buffer_of(backend, len, owned)?;
            let mut args = vec![Arg::Buffer(out), Arg::F32(super::fill::VALUE)];
            args.extend(super::fill::counts(variant, size));
            steps.push(match super::fill::exact_launch(variant, size, shape) {
                Some((global, local)) => Step::Exact(k, global, local, args),
                None => kernel_step(k, args),
            });
            outputs = vec![(out, len)];
            result = (out, len);
        }
        (FamilyKind::Spmv | FamilyKind::Md, Some(k)) => {
            let path = ReadPath::of(variant.name);
            let a = buffer_with(backend, &inputs.a, owned)?;
            let mut ints = Vec::new();
            for data in &inputs.ints {
                ints.push(int_buffer(backend, data, owned)?);
            }
            let len = inputs.reference.len();
            let out = buffer_of(backend, len, owned)?;
            let mut args = if variant.family == FamilyKind::Spmv {
                let x = buffer_with(backend, &inputs.b, owned)?;
                let rows = len as u32;
                let mut args = super::spmv::args(path, a, ints[0], ints[1], x);
                args.push(Arg::U32(rows));
                args
            } else {
                super::md::args(path, a, ints[0], n as u32)
            };
            args.push(Arg::Buffer(out));
            steps.push(kernel_step(k, args));
            outputs = vec![(out, len)];
            result = (out, len);
        }
        (FamilyKind::Bfs, Some(k)) => {
            let program = program.ok_or_else(|| BackendError::InvalidHandle("bfs".into()))?;
            let mut alloc = |b: &mut dyn Backend, len: usize| {
                let id = b.alloc(len.max(1))?;
                owned.push(id);
                Ok(id)
            };
            let plan = bfs::plan(
                backend,
                program,
                k,
                (&inputs.a, &inputs.b),
                shape,
                &mut alloc,
            )?;
            outputs = vec![(plan.cost, n)];
            result = (plan.cost, n);
            steps.push(Step::Bfs(plan));
        }
        (family, None) => {
            return Err(WorkloadError::BadProblem {
                variant: variant.name.into(),
                reason: format!("family {} needs a kernel", family.name()),
            }
            .into())
        }
    }
    let mut p = prepared(
        steps,
        outputs,
        result,
        owned,
        program_text,
        kernel,
        variant,
        side,
    );
    // The transfer family's host buffers and checked results.
    p.hosts = hosts;
    p.checked = checked;
    Ok(p)
}

#[allow(clippy::too_many_arguments)]
fn prepared(
    steps: Vec<Step>,
    outputs: Vec<(BufferId, usize)>,
    result: (BufferId, usize),
    owned: &[BufferId],
    program_text: Option<String>,
    kernel: Option<KernelId>,
    variant: &'static Variant,
    side: &SideConfig,
) -> Prepared {
    Prepared {
        steps,
        outputs,
        result,
        buffers: owned.to_vec(),
        hosts: Vec::new(),
        checked: Vec::new(),
        program_text,
        kernel,
        family: variant.family,
        variant: variant.name,
        shape: side.shape,
        relaxed_math: math::relaxed(&side.flags),
    }
}

/// Run every step once (blocking); timings of multi-step runs add up.
pub fn run(backend: &mut dyn Backend, p: &Prepared) -> Result<Timing, ExecError> {
    let mut wall = 0.0;
    let mut device = Some(0.0);
    let mut queued = None;
    for step in &p.steps {
        let t = match step {
            Step::Kernel {
                kernel,
                shape,
                args,
            } => backend.launch(*kernel, *shape, args)?,
            Step::Copy { src, dst, len } => backend.copy(*src, *dst, *len)?,
            Step::Exact(k, global, local, args) => {
                backend.launch_exact(*k, *global, *local, args)?
            }
            Step::Bfs(plan) => bfs::run(backend, plan)?,
            Step::Repeated {
                kernel,
                shape,
                args,
                count,
            } => per_launch(
                backend.launch_repeated(*kernel, *shape, args, *count)?,
                *count,
            ),
            Step::Transfer(t) => backend.transfer(t.0, t.1, t.2, t.3)?,
            Step::Beside {
                transfer,
                kernel,
                shape,
                args,
                concurrent,
            } => backend.transfer_beside_kernel(*transfer, *kernel, *shape, args, *concurrent)?,
        };
        wall += t.wall.0;
        device = match (device, t.device) {
            (Some(a), Some(b)) => Some(a + b.0),
            _ => None,
        };
        queued = queued.or(Some((
            t.queued_to_start,
            t.queued_to_submit,
            t.submit_to_start,
        )));
    }
    let (queued_to_start, queued_to_submit, submit_to_start) = queued.unwrap_or_default();
    Ok(Timing {
        wall: Seconds(wall),
        device: device.map(Seconds),
        queued_to_start,
        queued_to_submit,
        submit_to_start,
    })
}

/// The timing of `count` back-to-back launches as the time of one: both clocks divided, so
/// the family's metric (1/s) reads as launches per second. The queue intervals are the first
/// launch's and stay as they are.
fn per_launch(t: Timing, count: u32) -> Timing {
    let n = f64::from(count.max(1));
    Timing {
        wall: Seconds(t.wall.0 / n),
        device: t.device.map(|d| Seconds(d.0 / n)),
        ..t
    }
}

/// Poison every output with NaN, run once, and compare with the reference.
pub fn verify(
    backend: &mut dyn Backend,
    p: &Prepared,
    inputs: &Inputs,
) -> Result<Verification, ExecError> {
    if p.family == FamilyKind::Transfer {
        return super::transfer::verify(backend, p, &inputs.a);
    }
    for (buffer, len) in &p.outputs {
        backend.upload(*buffer, &vec![f32::NAN; (*len).max(1)])?;
    }
    run(backend, p)?;
    let (buffer, len) = p.result;
    let mut got = vec![0.0f32; len.max(1)];
    backend.download(buffer, &mut got)?;
    Ok(check(p, inputs, &got))
}

fn check(p: &Prepared, inputs: &Inputs, got: &[f32]) -> Verification {
    match p.family {
        FamilyKind::Reduce if super::reduce_launches::is_partial(p.variant) => {
            check_total(inputs, got)
        }
        FamilyKind::Matvec
        | FamilyKind::Reduce
        | FamilyKind::Launch
        | FamilyKind::Stencil
        | FamilyKind::Spmv
        | FamilyKind::Md => reference::compare(got, &inputs.reference, &inputs.tolerances),
        FamilyKind::Bandwidth if p.variant == "read" => check_total(inputs, got),
        FamilyKind::Bandwidth | FamilyKind::Transfer => {
            // A copy is exact.
            let want: Vec<f64> = inputs.a.iter().map(|x| f64::from(*x)).collect();
            reference::compare(got, &want, &vec![0.0; want.len()])
        }
        FamilyKind::Flops => check_flops(p, inputs, got),
        FamilyKind::Sobel | FamilyKind::Broadcast => {
            constmem::check(p.family, got, &inputs.reference, &inputs.sample)
        }
        FamilyKind::Bfs => bfs::check(got, &inputs.reference),
        FamilyKind::Fill => super::fill::check(got, inputs.size.elements() as usize),
        FamilyKind::Fft => {
            fft::verify(got, &inputs.reference, &inputs.tolerances, inputs.size.rows)
        }
        FamilyKind::Sgemm => {
            sgemm::check(got, &inputs.sample, &inputs.reference, &inputs.tolerances)
        }
        FamilyKind::Math => {
            let (f, intrinsic) = math::of_variant(p.variant);
            let global = p.shape.global() as usize;
            math::check(
                f,
                intrinsic || p.relaxed_math,
                &inputs.a,
                global,
                FMA_ITERS,
                got,
            )
        }
    }
}

/// Partial sums (per work-item or per work-group): their total must equal the array's sum.
fn check_total(inputs: &Inputs, got: &[f32]) -> Verification {
    let total = if got.iter().all(|g| g.is_finite()) {
        got.iter().map(|g| f64::from(*g)).sum::<f64>() as f32
    } else {
        f32::NAN
    };
    reference::compare(&[total], &inputs.reference, &inputs.tolerances)
}

/// The flops kernel is checked on a sample of about 4096 work-items (the f64 reference of all
/// of them would cost more CPU time than the measurement), with a relative tolerance of 1e-4:
/// the recurrence contracts (|m| < 1), so float32 rounding stays bounded.
fn check_flops(p: &Prepared, inputs: &Inputs, got: &[f32]) -> Verification {
    let global = p.shape.global() as usize;
    let n = inputs.a.len().max(1);
    let stride = (global / 4096).max(1);
    let idx: Vec<usize> = (0..global.min(got.len())).step_by(stride).collect();
    let want: Vec<f64> = idx
        .iter()
        .map(|&g| reference::fma_chain(inputs.a[g % n], FMA_ITERS))
        .collect();
    let sampled: Vec<f32> = idx.iter().map(|&g| got[g]).collect();
    let tol: Vec<f64> = want.iter().map(|w| 1e-4 * w.abs().max(1.0)).collect();
    reference::compare(&sampled, &want, &tol)
}

/// Free every buffer of a prepared run.
pub fn release(backend: &mut dyn Backend, p: Prepared) {
    for b in p.buffers {
        let _ = backend.free(b);
    }
    for h in p.hosts {
        let _ = backend.free_host(h);
    }
}

/// The API label of a backend, for messages.
pub fn api_of(backend: &dyn Backend) -> Api {
    backend.api()
}
