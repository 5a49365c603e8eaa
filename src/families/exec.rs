//! Preparing, running and verifying one variant on one backend through the `Backend` trait
//! only: one code path for OpenCL and CUDA, below every runner (session, tune, calibrate). Each
//! family says through the `Family` trait what its inputs, buffers, steps and reference are.

use crate::backend::{BufferId, CompileRequest, DeviceInfo, KernelId, ProgramId, Runtime, Timing};
use crate::families::family::bad_size;
use crate::families::matrix::MatrixSource;
use crate::families::plan::{Build, Built, Place, Ran, Step};
pub use crate::families::plan::{ExecError, Inputs, SideConfig};
use crate::families::reference::{self, Verification};
use crate::families::{self, fits, FamilyId, InputChoice, Size, Variant};
use crate::kernels::KernelSources;
use crate::rows::{Api, Seconds};

impl Inputs {
    /// Inputs of a family's first variant; SpMV takes its default matrix (`uniform`).
    pub fn generate(family: FamilyId, size: Size, seed: u64) -> Self {
        let first = &families::get(family).variants()[0];
        Self::of_variant(first, size, seed, &MatrixSource::Uniform)
    }

    /// The inputs of one variant (BFS variants pick their graph's generator).
    pub fn of_variant(
        variant: &'static Variant,
        size: Size,
        seed: u64,
        matrix: &MatrixSource,
    ) -> Self {
        let choice = InputChoice { matrix };
        families::get(variant.family).inputs(variant, size, seed, choice)
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

/// Refuse a problem that cannot fit on the device before anything is allocated: the family's
/// footprint against the device's memory and largest allocation, as every runner checks it
/// before it makes the inputs ([`fits::check`]), here also for those that do not (`run_once`).
fn check_memory(device: &DeviceInfo, variant: &Variant, inputs: &Inputs) -> Result<(), ExecError> {
    let words = inputs.a.len() + inputs.b.len() + inputs.ints.iter().map(Vec::len).sum::<usize>();
    let uploaded = (words as u64).saturating_mul(4);
    fits::check_device(variant.family, inputs.size, device, uploaded)
        .map_err(|e| bad_size(variant, e).into())
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

/// [`prepare`] running `foreign`, where given: the other API's program (`program = "other"`).
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
    check_memory(backend.info(), variant, inputs)?;
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

/// The one place a run's program is made: `file` built as `side` says, or `foreign` loaded.
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

/// What [`compile`] asks `api`'s compiler for, and so what a run builds ahead.
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

/// Run every step once (blocking): the clocks add up, the queue intervals are the first step's.
pub fn run(backend: &mut dyn Runtime, p: &Prepared) -> Result<Timing, ExecError> {
    let mut sum: Option<Timing> = None;
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
        sum = Some(match sum {
            None => t,
            Some(s) => Timing {
                wall: Seconds(s.wall.0 + t.wall.0),
                device: s.device.zip(t.device).map(|(a, b)| Seconds(a.0 + b.0)),
                ..s
            },
        });
    }
    Ok(sum.unwrap_or(Timing::clocks(Seconds(0.0), Some(Seconds(0.0)))))
}

/// Launches a timed run makes per launch its timing stands for: a back-to-back step's count.
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

/// The timing of `count` back-to-back launches as one's, both clocks divided, so the metric
/// (1/s) reads as launches per second; the queue intervals stay the first launch's.
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
    /// The last verifying run's result, kept to be written in place: a fresh gigabyte-sized
    /// vector per side costs its page faults again (about a second a comparison at 2^28 floats).
    static DOWNLOADED: std::cell::RefCell<Vec<f32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The transfer family's check: every place a result lands (device or host buffers) poisoned,
/// one run, and each must hold the inputs exactly.
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

pub fn release(backend: &mut dyn Runtime, p: Prepared) {
    for b in p.buffers {
        let _ = backend.free(b);
    }
    for h in p.built.hosts {
        let _ = backend.free_host(h);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::families::matrix::Csr;
    use crate::families::WorkloadError;

    fn device(memory: u64, largest: u64) -> DeviceInfo {
        DeviceInfo {
            name: "dev".into(),
            global_mem_bytes: memory,
            max_alloc_bytes: largest,
            is_gpu: true,
            ..DeviceInfo::default()
        }
    }

    /// SGEMM at 256, whose three matrices (786432 bytes) are more than its inputs and one row
    /// of output (525312 bytes): what a run refuses before it makes the inputs.
    fn sgemm() -> (&'static Variant, Inputs) {
        let v = &families::get(FamilyId::Sgemm).variants()[0];
        (
            v,
            Inputs::of_variant(v, Size::vector(256), 1, &MatrixSource::Uniform),
        )
    }

    /// A refusal of the size, as a row records it: launch-failed, not build-failed.
    fn refusal(e: ExecError) -> String {
        assert!(
            matches!(e, ExecError::Workload(WorkloadError::BadProblem { .. })) && !e.is_build(),
            "{e}"
        );
        e.to_string()
    }

    /// Preparing refuses what the runners refuse first, in their words: the family's footprint
    /// against the device's memory.
    #[test]
    fn the_late_check_holds_the_footprint_the_runners_check_first() {
        let (v, inputs) = sgemm();
        let fp = fits::of(v.family, inputs.size);
        assert_eq!(fp.device, 786432);
        let small = device(fp.device - 1, 0);
        let e = refusal(check_memory(&small, v, &inputs).unwrap_err());
        let early = fits::check(v.family, inputs.size, &small)
            .unwrap_err()
            .to_string();
        assert_eq!(e, format!("invalid problem for {}: {early}", v.full_name()));
        assert!(
            e.ends_with(
                "sgemm size 256 needs about 786432 bytes of device memory; dev has 786431 bytes"
            ),
            "{e}"
        );
        assert!(check_memory(&device(fp.device, 0), v, &inputs).is_ok());
    }

    /// A buffer past the device's largest allocation is refused before anything is built, as
    /// the runners refuse it, not when it is allocated.
    #[test]
    fn the_largest_buffer_is_held_against_the_largest_allocation() {
        let (v, inputs) = sgemm();
        let e = refusal(check_memory(&device(1 << 30, 262143), v, &inputs).unwrap_err());
        assert!(
            e.ends_with(
                "sgemm size 256 needs one buffer of about 262144 bytes; dev allows 262143 bytes \
                 in one allocation"
            ),
            "{e}"
        );
        assert!(check_memory(&device(1 << 30, 262144), v, &inputs).is_ok());
    }

    /// A Matrix Market file's size is its rows and entries, not its columns: the x vector of a
    /// wide one is counted as its inputs hold it, which the footprint of its size does not.
    #[test]
    fn a_wide_matrix_files_x_vector_counts() {
        let cols = 1 << 16;
        let csr = Csr {
            rows: 1,
            cols,
            row_ptr: vec![0, 1],
            col: vec![0],
            val: vec![1.0],
        };
        let size = csr.size();
        let file = MatrixSource::File {
            path: "wide.mtx".into(),
            csr: Arc::new(csr),
        };
        let v = &families::get(FamilyId::Spmv).variants()[0];
        let inputs = Inputs::of_variant(v, size, 1, &file);
        assert!(fits::of(v.family, size).device < 100);
        // Values, x, columns and the two row pointers.
        let uploaded = 4 * (1 + cols as u64 + 1 + 2);
        let e = refusal(check_memory(&device(uploaded - 1, 0), v, &inputs).unwrap_err());
        assert!(
            e.ends_with(&format!(
                "spmv size 1x1 needs about {uploaded} bytes of device memory; dev has {} bytes",
                uploaded - 1
            )),
            "{e}"
        );
        assert!(check_memory(&device(uploaded, 0), v, &inputs).is_ok());
    }
}
