//! Preparing, running and verifying one variant on one backend, through the `Backend` trait
//! only: the same code path for OpenCL and CUDA. Each family says, through the `Family` trait,
//! what its inputs, buffers, steps and reference are; nothing here knows a family. (The
//! executor below every runner: the session, tune and calibrate all prepare through
//! it.)

use crate::backend::{BufferId, CompileRequest, KernelId, ProgramId, Runtime, Timing};
use crate::families::family::bad_size;
use crate::families::matrix::MatrixSource;
use crate::families::plan::{Build, Built, Place, Ran, Step};
pub use crate::families::plan::{ExecError, Inputs, SideConfig};
use crate::families::reference::{self, Verification};
use crate::families::{self, FamilyId, InputChoice, Size, Variant};
use crate::kernels::KernelSources;
use crate::rows::{Api, Seconds};

impl Inputs {
    /// Inputs of a family's first variant; SpMV takes its default matrix (`uniform`).
    pub fn generate(family: FamilyId, size: Size, seed: u64) -> Self {
        Self::generate_with(family, size, seed, &MatrixSource::Uniform)
    }

    /// Inputs of a family's first variant, SpMV's from `matrix` (the study key).
    pub fn generate_with(family: FamilyId, size: Size, seed: u64, matrix: &MatrixSource) -> Self {
        let first = &families::get(family).variants()[0];
        Self::of_variant(first, size, seed, matrix)
    }

    /// The inputs of one variant: its family's, where the variant may pick the data (the BFS
    /// variants are graph generators).
    pub fn of_variant(
        variant: &'static Variant,
        size: Size,
        seed: u64,
        matrix: &MatrixSource,
    ) -> Self {
        let choice = InputChoice { matrix };
        families::get(variant.family).inputs(variant, size, seed, choice)
    }

    /// The levels one run of a level-by-level family takes (a BFS's depth from the source);
    /// `None` for other families.
    pub fn levels(&self, family: FamilyId) -> Option<u64> {
        families::get(family).levels(self)
    }

    /// What besides family, size and seed tells two variants' inputs apart.
    pub fn key_of(variant: &'static Variant) -> &'static str {
        families::get(variant.family).input_key(variant)
    }
}

/// A variant compiled, with its buffers allocated and filled, ready to run.
pub struct Prepared {
    built: Built,
    buffers: Vec<BufferId>,
    pub program_text: Option<String>,
    pub kernel: Option<KernelId>,
    family: FamilyId,
    ran: Ran,
}

/// Refuse a problem that cannot fit on the device before anything is allocated.
fn check_memory(
    backend: &dyn Runtime,
    variant: &Variant,
    inputs: &Inputs,
) -> Result<(), ExecError> {
    let info = backend.info();
    let ints: usize = inputs.ints.iter().map(Vec::len).sum();
    let bytes =
        (inputs.a.len() as u64 + inputs.b.len() as u64 + ints as u64 + inputs.size.rows) * 4;
    if info.global_mem_bytes > 0 && bytes > info.global_mem_bytes {
        return Err(bad_size(
            variant,
            format!(
                "size {} needs about {bytes} bytes; {} has {} bytes of device memory",
                inputs.size, info.name, info.global_mem_bytes
            ),
        )
        .into());
    }
    Ok(())
}

/// Compile the variant and stage its inputs on the device.
pub fn prepare(
    backend: &mut dyn Runtime,
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
    backend: &mut dyn Runtime,
    sources: &KernelSources,
    variant: &'static Variant,
    inputs: &Inputs,
    side: &SideConfig,
    foreign: Option<&str>,
) -> Result<Prepared, ExecError> {
    // A rule variant (`matvec/auto`) runs what its rule picks (the session has already named it).
    let variant = families::get(variant.family)
        .rule_plan(variant, inputs.size, backend.info())
        .map_or(variant, |p| p.variant);
    let family = families::get(variant.family);
    family.check_size(variant, inputs.size)?;
    family.check_local(variant, side.shape.local)?;
    family.check_launch(variant, inputs.size, side)?;
    check_memory(backend, variant, inputs)?;
    // The variant's program (or the other side's text), then its family stages buffers and
    // plans the run.
    let (program, kernel, program_text) = if variant.kernel.is_empty() {
        (None, None, None)
    } else {
        let program = compile(backend, sources, family.spec().kernel_file, side, foreign)?;
        let kernel = backend.kernel(program, variant.kernel)?;
        let text = backend.program_text(program).ok().flatten();
        (Some(program), Some(kernel), text)
    };
    let mut owned = Vec::new();
    let mut cx = Build {
        backend: &mut *backend,
        variant,
        inputs,
        side,
        program,
        kernel,
        owned: &mut owned,
    };
    let built = match family.build(&mut cx) {
        Ok(built) => built,
        Err(e) => {
            // Nothing leaks when a configuration fails half-way.
            for b in owned {
                let _ = backend.free(b);
            }
            return Err(e);
        }
    };
    Ok(Prepared {
        built,
        buffers: owned,
        program_text,
        kernel,
        family: variant.family,
        ran: Ran {
            variant: variant.name,
            shape: side.shape,
            flags: side.flags.clone(),
        },
    })
}

/// Builds the kernel file `file` as a side is configured (or loads `foreign`, the other side's
/// program text): the one place a run's program is made.
pub fn compile(
    backend: &mut dyn Runtime,
    sources: &KernelSources,
    file: &str,
    side: &SideConfig,
    foreign: Option<&str>,
) -> Result<ProgramId, ExecError> {
    let request = compile_request(backend.api(), sources, file, side)?;
    Ok(match foreign {
        Some(text) => backend.load_foreign_program(text, &side.jit)?,
        None => backend.compile(&request)?,
    })
}

/// What [`compile`] asks `api`'s compiler for, for the kernel file `file` as a side is
/// configured: also what a run builds ahead, so the two can never differ.
pub fn compile_request(
    api: Api,
    sources: &KernelSources,
    file: &str,
    side: &SideConfig,
) -> Result<CompileRequest, ExecError> {
    Ok(CompileRequest {
        source: sources.program(api, file)?,
        defines: side.all_defines(),
        flags: side.flags.clone(),
        jit: side.jit,
    })
}

/// Run every step once (blocking); timings of multi-step runs add up.
pub fn run(backend: &mut dyn Runtime, p: &Prepared) -> Result<Timing, ExecError> {
    let mut wall = 0.0;
    let mut device = Some(0.0);
    let mut queued = None;
    for step in &p.built.steps {
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
            Step::Loop(l) => l.run(backend)?,
            Step::Repeated {
                kernel,
                shape,
                args,
                count,
            } => per_launch(
                backend.launch_repeated(*kernel, *shape, args, *count)?,
                *count,
            ),
            Step::Transfer(t) => backend.transfer(*t)?,
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

/// How many launches one timed run makes for each one its timing stands for: the count of a
/// back-to-back step (whose timing is divided by it), else 1.
pub fn launches_per_sample(p: &Prepared) -> u32 {
    p.built
        .steps
        .iter()
        .map(|s| match s {
            Step::Repeated { count, .. } => (*count).max(1),
            _ => 1,
        })
        .max()
        .unwrap_or(1)
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
    backend: &mut dyn Runtime,
    p: &Prepared,
    inputs: &Inputs,
) -> Result<Verification, ExecError> {
    if !p.built.checked.is_empty() {
        return verify_in_place(backend, p, &inputs.a);
    }
    for (buffer, len) in &p.built.outputs {
        backend.poison(*buffer, (*len).max(1))?;
    }
    run(backend, p)?;
    let (buffer, len) = p.built.result;
    DOWNLOADED.with_borrow_mut(|got| {
        // Every float is overwritten by the download: only a longer result grows the buffer.
        got.resize(len.max(1), 0.0);
        backend.download(buffer, got)?;
        Ok(families::get(p.family).check(&p.ran, inputs, got))
    })
}

thread_local! {
    /// The result of the last verifying run, kept for the next: a fresh gigabyte-sized vector
    /// per side costs its page faults again (about a second per comparison at 2^28 floats),
    /// while a kept one is written in place.
    static DOWNLOADED: std::cell::RefCell<Vec<f32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Poisons every place a result lands (device buffers or host buffers), runs once, and checks
/// that each holds the inputs exactly: the transfer family's copies.
fn verify_in_place(
    backend: &mut dyn Runtime,
    p: &Prepared,
    data: &[f32],
) -> Result<Verification, ExecError> {
    for (place, len) in &p.built.checked {
        match place {
            Place::Device(b) => backend.poison(*b, *len)?,
            Place::Host(h) => backend.host_data(*h)?[..*len].fill(f32::NAN),
        }
    }
    run(backend, p)?;
    let total: usize = p.built.checked.iter().map(|(_, len)| len).sum();
    DOWNLOADED.with_borrow_mut(|got| {
        got.resize(total, 0.0);
        let mut rest = got.as_mut_slice();
        for (place, len) in &p.built.checked {
            let (part, tail) = rest.split_at_mut(*len);
            match place {
                Place::Device(b) => backend.download(*b, part)?,
                Place::Host(h) => part.copy_from_slice(&backend.host_data(*h)?[..*len]),
            }
            rest = tail;
        }
        // Each place holds the inputs from their start; `data` is cycled over their sum.
        let checked = if data.is_empty() { 0 } else { got.len() };
        let want = |i: usize| f64::from(data[i % data.len()]);
        Ok(reference::compare_exact(got, checked, want))
    })
}

/// Free every buffer of a prepared run.
pub fn release(backend: &mut dyn Runtime, p: Prepared) {
    for b in p.buffers {
        let _ = backend.free(b);
    }
    for h in p.built.hosts {
        let _ = backend.free_host(h);
    }
}
