//! Looking inside the compilers (the paper's Table V): the PTX of both twins of every kernel,
//! counted by instruction class, plus registers, shared and local (spill) memory.

pub mod cache;
pub mod cubin;
pub mod ptx;
pub mod sass;
pub mod spaces;
pub mod table_v;
pub mod unroll;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::backend::{BackendError, CompileRequest, KernelResources, ProgramId, Runtime};
use crate::export::csv::{write_rows, CsvSchema};
use crate::export::ExportError;
use crate::fairness::Flags;
use crate::families::{all_variants, FamilyId, Variant, FMA_ITERS};
use crate::kernels::KernelSources;
use crate::rows::{Api, ClassCountRow, CLASSES_CSV};

use ptx::ClassCounts;

pub const RESOURCES_CSV: &str = "ptx_resources.csv";
pub const SASS_CSV: &str = "sass_classes.csv";

#[derive(Debug, Error)]
pub enum InspectError {
    #[error(transparent)]
    Export(#[from] ExportError),
    #[error(transparent)]
    Sources(#[from] crate::kernels::KernelSourceError),
    #[error(transparent)]
    Backend(#[from] BackendError),
}

/// One kernel's resources on both sides, as each API reports them.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ResourceRow {
    pub pair: String,
    pub api: String,
    /// How the numbers were obtained.
    pub source: String,
    pub registers: String,
    pub shared_bytes: String,
    pub local_bytes: String,
    /// The largest work-group the API accepts for this kernel (registers limit it).
    pub max_threads_per_group: String,
    pub ptx_instructions: u64,
}

pub struct InspectReport {
    pub markdown: String,
    pub notes: Vec<String>,
    pub files: Vec<PathBuf>,
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "n/a".into())
}

fn resource_row(pair: &str, api: &str, source: &str, r: &KernelResources, n: u64) -> ResourceRow {
    ResourceRow {
        pair: pair.into(),
        api: api.into(),
        source: source.into(),
        registers: opt(r.registers),
        shared_bytes: opt(r.shared_bytes),
        local_bytes: opt(r.local_bytes),
        max_threads_per_group: opt(r.max_threads_per_group),
        ptx_instructions: n,
    }
}

/// The resources `backend` reports of `kernel` in `program`, where it has both.
fn reported(
    backend: Option<&mut (dyn Runtime + '_)>,
    program: Option<ProgramId>,
    kernel: &str,
) -> Option<KernelResources> {
    let (b, p) = (backend?, program?);
    let k = b.kernel(p, kernel).ok()?;
    b.kernel_resources(k).ok()
}

fn request(
    sources: &KernelSources,
    api: Api,
    stem: &str,
    local: u32,
    verbose_nvidia: bool,
) -> Result<CompileRequest, InspectError> {
    let mut flags = Flags {
        mad: true,
        ..Default::default()
    }
    .for_api(api);
    if verbose_nvidia && api == Api::OpenCl {
        // Makes NVIDIA's OpenCL compiler log ptxas's register count per kernel; it changes
        // no code, and is used only here, never in a timed run.
        flags.push("-cl-nv-verbose".into());
    }
    Ok(CompileRequest {
        source: sources.program(api, stem)?,
        defines: vec![
            ("WG_SIZE".into(), local.to_string()),
            ("FMA_ITERS".into(), FMA_ITERS.to_string()),
        ],
        flags,
        jit: Default::default(),
    })
}

fn write(path: &Path, text: &str, files: &mut Vec<PathBuf>) -> Result<(), InspectError> {
    crate::export::write_atomic(path, text.as_bytes())?;
    files.push(path.to_path_buf());
    Ok(())
}

fn write_csv<T: serde::Serialize + CsvSchema>(
    path: &Path,
    rows: &[T],
    files: &mut Vec<PathBuf>,
) -> Result<(), InspectError> {
    write_rows(path, rows)?;
    files.push(path.to_path_buf());
    Ok(())
}

/// One family file's PTX from both front ends (OpenCL's where the platform gives PTX), with
/// their programs.
struct FamilyPtx {
    stem: &'static str,
    cuda: Option<String>,
    opencl: Option<String>,
    cl_program: Option<ProgramId>,
    cu_program: Option<ProgramId>,
    /// The machine code NVIDIA's OpenCL built of the file, taken from a private compute cache.
    opencl_cubin: Option<Vec<u8>>,
}

#[derive(Clone, Copy)]
pub struct Options<'a> {
    /// NVRTC's target when there is no CUDA device.
    pub arch: &'a str,
    /// The work-group size define.
    pub local: u32,
    /// Also assemble and disassemble both sides' PTX (needs a CUDA device and cuobjdump).
    pub sass: bool,
    /// Told a line as each kernel file starts compiling: how far `inspect` is.
    pub progress: Option<&'a dyn Fn(String)>,
}

/// Compiles CUDA C to PTX for a target without a device (NVRTC alone).
pub type OfflineCompiler<'a> = &'a dyn Fn(&CompileRequest, &str) -> Result<String, BackendError>;

/// Compile every family for both APIs with the same defines and mapped flags, count PTX
/// instruction classes per kernel pair, and write PTX files, CSV and Markdown into `out`.
/// Without a CUDA device, `offline` compiles the CUDA side for `arch`.
pub fn run<'r>(
    sources: &KernelSources,
    cl: Option<&'r mut dyn Runtime>,
    cu: Option<&'r mut dyn Runtime>,
    offline: OfflineCompiler,
    options: &Options,
    out: &Path,
) -> Result<InspectReport, InspectError> {
    // A link planted in the output folder would take a write elsewhere: refused by name.
    crate::export::safe::prepare_dir(out, true)?;
    let arch = cu.as_ref().and_then(|c| c.target());
    let arch = arch.unwrap_or_else(|| options.arch.into());
    let mut insp = Inspection {
        sources,
        cl,
        cu,
        offline,
        arch,
        local: options.local,
        out,
        files: Vec::new(),
        notes: Vec::new(),
    };
    let per_stem = insp.compile_stems(options.progress)?;
    let (md, classes, resources) = insp.count_pairs(&per_stem);
    if insp.cl.is_none() || per_stem.iter().all(|f| f.opencl.is_none()) {
        insp.notes.push("PoCL (and any non-NVIDIA OpenCL platform) gives no PTX: only the CUDA side is counted here".into());
    }
    write_csv(&out.join(CLASSES_CSV), &classes, &mut insp.files)?;
    write_csv(&out.join(RESOURCES_CSV), &resources, &mut insp.files)?;
    let res_md = resources_markdown(&resources);
    let unroll_md = unroll::run(&mut insp)?;
    let spaces_md = spaces::run(&per_stem, out, &mut insp.files)?;
    let mut full = format!(
        "# PTX instruction classes (OpenCL vs CUDA)\n\n{md}\n## Resources\n\n{res_md}\n{unroll_md}{spaces_md}"
    );
    if options.sass {
        full += &sass_section(&mut insp, &per_stem)?;
    }
    let (files, notes) = (&mut insp.files, &mut insp.notes);
    let (cl, cu, arch) = (insp.cl, insp.cu, &insp.arch);
    notes.extend(table_v::run(sources, cl, cu, offline, arch, out, files)?);
    write(&out.join("ptx_classes.md"), &full, files)?;
    Ok(InspectReport {
        markdown: full,
        notes: insp.notes,
        files: insp.files,
    })
}

/// What the steps of [`run`] share: the sides, how to compile, where to write, and the files
/// written and notes taken so far, in order.
struct Inspection<'a, 'r> {
    sources: &'a KernelSources,
    cl: Option<&'r mut dyn Runtime>,
    cu: Option<&'r mut dyn Runtime>,
    offline: OfflineCompiler<'a>,
    arch: String,
    local: u32,
    out: &'a Path,
    files: Vec<PathBuf>,
    notes: Vec<String>,
}

/// One twin's PTX, where its compiler gives it, and its program, where a device built it.
type Twin = (Option<String>, Option<ProgramId>);

/// Every kernel pair's PTX classes side by side (Markdown and CSV rows), and its resources.
type PairCounts = (String, Vec<ClassCountRow>, Vec<ResourceRow>);

impl<'a, 'r> Inspection<'a, 'r> {
    fn side(&mut self, api: Api) -> Option<&mut (dyn Runtime + 'r)> {
        match api {
            Api::OpenCl => self.cl.as_deref_mut(),
            Api::Cuda => self.cu.as_deref_mut(),
        }
    }

    /// Both twins of every family file, compiled in turn, telling `progress` as each starts.
    fn compile_stems(
        &mut self,
        progress: Option<&dyn Fn(String)>,
    ) -> Result<Vec<FamilyPtx>, InspectError> {
        let mut stems: Vec<&str> = FamilyId::all().iter().map(|f| f.file()).collect();
        stems.dedup();
        let mut per_stem = Vec::new();
        let started = std::time::Instant::now();
        for (i, stem) in stems.iter().enumerate() {
            if let Some(tell) = progress {
                tell(format!(
                    "[{}/{}] {stem}: compiling both twins, {:.1} s in",
                    i + 1,
                    stems.len(),
                    started.elapsed().as_secs_f64()
                ));
            }
            per_stem.push(self.compile_stem(stem)?);
        }
        Ok(per_stem)
    }

    /// One family file compiled by both APIs, its PTX (and OpenCL build log) written.
    fn compile_stem(&mut self, stem: &'static str) -> Result<FamilyPtx, InspectError> {
        let (cuda, cu_program) = self.compile_cuda(stem)?;
        // What appears in a private compute cache during the OpenCL build is this file's.
        let cache = std::env::var_os(cache::PRIVATE_CACHE_ENV).map(PathBuf::from);
        let before = cache.as_deref().map(cache::snapshot);
        let (opencl, cl_program) = self.compile_opencl(stem)?;
        for (text, api) in [(&cuda, "cuda"), (&opencl, "opencl")] {
            if let Some(t) = text {
                let path = self.out.join(format!("{stem}.{api}.ptx"));
                write(&path, t, &mut self.files)?;
            }
        }
        let opencl_cubin = match (&cache, &before) {
            (Some(dir), Some(before)) if cl_program.is_some() => {
                cache::new_images(dir, before, "").0.into_iter().next()
            }
            _ => None,
        };
        Ok(FamilyPtx {
            stem,
            cuda,
            opencl,
            cl_program,
            cu_program,
            opencl_cubin,
        })
    }

    /// The CUDA twin's PTX: from the device, or from `offline` without one.
    fn compile_cuda(&mut self, stem: &str) -> Result<Twin, InspectError> {
        let req = request(self.sources, Api::Cuda, stem, self.local, false)?;
        let compiled = match self.cu.as_deref_mut() {
            Some(b) => b
                .compile(&req)
                .map(|p| (b.program_text(p).ok().flatten(), Some(p))),
            None => (self.offline)(&req, &self.arch).map(|t| (Some(t), None)),
        };
        Ok(compiled.unwrap_or_else(|e| {
            self.notes.push(format!("{stem}: CUDA: {e}"));
            (None, None)
        }))
    }

    /// The OpenCL twin's PTX where the platform gives it (only NVIDIA's does), its build log
    /// written beside it.
    fn compile_opencl(&mut self, stem: &str) -> Result<Twin, InspectError> {
        let Some(b) = self.cl.as_deref_mut() else {
            self.notes.push(format!(
                "{stem}: no OpenCL device: OpenCL columns stay empty"
            ));
            return Ok((None, None));
        };
        let nvidia = b.info().platform.contains("NVIDIA");
        let req = request(self.sources, Api::OpenCl, stem, self.local, nvidia)?;
        let p = match b.compile(&req) {
            Ok(p) => p,
            Err(e) => {
                self.notes.push(format!("{stem}: OpenCL: {e}"));
                return Ok((None, None));
            }
        };
        let log = b.build_log(p).unwrap_or_default();
        let log = log.trim();
        if !log.is_empty() {
            let path = self.out.join(format!("{stem}.opencl.build.log"));
            write(&path, log, &mut self.files)?;
        }
        let text = b.program_text(p).ok().flatten();
        if text.is_none() {
            self.notes.push(format!(
                "{stem}: the OpenCL platform '{}' returns no PTX (only NVIDIA's does); OpenCL columns stay empty",
                b.info().platform
            ));
        }
        Ok((text, Some(p)))
    }

    fn count_pairs(&mut self, per_stem: &[FamilyPtx]) -> PairCounts {
        let mut md = String::new();
        let mut classes = Vec::new();
        let mut resources = Vec::new();
        for v in all_variants().iter().filter(|v| !v.kernel.is_empty()) {
            let Some(fam) = per_stem.iter().find(|f| f.stem == v.family.file()) else {
                continue;
            };
            let instructions = self.count_pair(v, fam, &mut md, &mut classes);
            resources.extend(self.pair_resources(v, fam, instructions));
        }
        (md, classes, resources)
    }

    /// One kernel pair's PTX classes, side by side, added to `md` and `classes`; returns the
    /// instruction counts of its OpenCL and CUDA kernels (0 where a side has none).
    fn count_pair(
        &mut self,
        v: &Variant,
        fam: &FamilyPtx,
        md: &mut String,
        classes: &mut Vec<ClassCountRow>,
    ) -> (u64, u64) {
        let pair = v.full_name();
        let cl = self.kernel_classes(&pair, v.kernel, fam.opencl.as_deref(), "OpenCL");
        let cu = self.kernel_classes(&pair, v.kernel, fam.cuda.as_deref(), "CUDA");
        if cl.is_some() || cu.is_some() {
            // A side whose kernel was not counted has no rows (not rows of zeros).
            let (a, b) = (cl.as_ref(), cu.as_ref());
            classes.extend(ptx::opencl_beside_cuda("PTX", &pair, v.kernel, a, b, md));
        }
        let instructions = |c: Option<ClassCounts>| c.as_ref().map_or(0, ClassCounts::total);
        (instructions(cl), instructions(cu))
    }

    /// The class counts of `kernel` in one side's PTX, if it has some; why not is noted.
    fn kernel_classes(
        &mut self,
        pair: &str,
        kernel: &str,
        text: Option<&str>,
        api: &str,
    ) -> Option<ClassCounts> {
        let why = match ptx::parse_kernel(text?, kernel) {
            Ok(Some(k)) => return Some(ptx::count_classes(&k)),
            Ok(None) => format!("has no entry {kernel}"),
            Err(e) => format!("does not parse: {e}"),
        };
        self.notes.push(format!("{pair}: {api} PTX {why}"));
        None
    }

    /// One kernel pair's resources as each API reports them, and the OpenCL PTX's as the CUDA
    /// driver reports them (the same-backend check); `instructions` as [`Self::count_pair`]
    /// returns them.
    fn pair_resources(
        &mut self,
        v: &Variant,
        fam: &FamilyPtx,
        (cl_instructions, cu_instructions): (u64, u64),
    ) -> Vec<ResourceRow> {
        let pair = v.full_name();
        let mut rows = Vec::new();
        if let Some(r) = reported(self.cu.as_deref_mut(), fam.cu_program, v.kernel) {
            let source = "cuFuncGetAttribute";
            rows.push(resource_row(&pair, "CUDA", source, &r, cu_instructions));
        }
        if let Some(r) = reported(self.cl.as_deref_mut(), fam.cl_program, v.kernel) {
            let source = if r.registers.is_some() {
                "clGetKernelWorkGroupInfo; registers from the -cl-nv-verbose build log"
            } else {
                "clGetKernelWorkGroupInfo"
            };
            rows.push(resource_row(&pair, "OpenCL", source, &r, cl_instructions));
        }
        if let (Some(b), Some(text)) = (self.cu.as_deref_mut(), &fam.opencl) {
            let source = "OpenCL PTX loaded by the CUDA driver";
            match b.resources_of_foreign_program(text, v.kernel) {
                Ok(r) => rows.push(resource_row(&pair, "OpenCL", source, &r, cl_instructions)),
                Err(e) => self.notes.push(format!(
                    "{pair}: OpenCL PTX could not be loaded through the CUDA driver: {}",
                    e.to_string().lines().next().unwrap_or("")
                )),
            }
        }
        rows
    }
}

fn resources_markdown(resources: &[ResourceRow]) -> String {
    let mut md = String::from("| pair | api | source | registers | shared B | local B | max WG | PTX instr. |\n|---|---|---|---|---|---|---|---|\n");
    for r in resources {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            r.pair,
            r.api,
            r.source,
            r.registers,
            r.shared_bytes,
            r.local_bytes,
            r.max_threads_per_group,
            r.ptx_instructions
        );
    }
    md
}

/// The SASS section of the report, its counts written to [`SASS_CSV`].
fn sass_section(insp: &mut Inspection, per_stem: &[FamilyPtx]) -> Result<String, InspectError> {
    if insp.cu.is_none() {
        let why = "--sass needs a CUDA device: SASS comes from the driver's JIT";
        insp.notes.push(why.into());
        return Ok(String::new());
    }
    let (sass_md, sass_rows) = sass::report(insp, per_stem)?;
    write_csv(&insp.out.join(SASS_CSV), &sass_rows, &mut insp.files)?;
    let origin = if per_stem.iter().any(|s| s.opencl_cubin.is_some()) {
        "OpenCL's: the code NVIDIA's OpenCL built itself, from a private compute \
         cache; CUDA's: its PTX assembled by the CUDA driver"
    } else {
        "both PTX texts assembled by the CUDA driver's JIT"
    };
    Ok(format!("\n## SASS ({origin})\n\n{sass_md}"))
}

#[cfg(test)]
mod tests {
    use super::ptx::{count_classes, parse_ptx, InstrClass};

    /// Real PTX from both compilers on an H200 (committed from the GPU run): every matvec kernel
    /// is found, and the Listing 4 difference the README discusses is what the parser counts.
    #[test]
    fn real_ptx_from_both_compilers() {
        let cl = parse_ptx(include_str!(
            "../../tests/fixtures/ptx/nvidia_opencl_matvec.ptx"
        ))
        .unwrap();
        let cu = parse_ptx(include_str!(
            "../../tests/fixtures/ptx/nvrtc_matvec_h200.ptx"
        ))
        .unwrap();
        for name in [
            "matvec_listing2",
            "matvec_listing4",
            "matvec_listing7",
            "matvec_tuned",
        ] {
            assert!(cl.kernel(name).is_some(), "OpenCL PTX lacks {name}");
            assert!(cu.kernel(name).is_some(), "CUDA PTX lacks {name}");
        }
        let l4 = |m: &super::ptx::PtxModule| count_classes(m.kernel("matvec_listing4").unwrap());
        assert_eq!(
            l4(&cl).get(InstrClass::LdShared),
            1,
            "OpenCL: rolled serial sum"
        );
        assert_eq!(
            l4(&cu).get(InstrClass::LdShared),
            7,
            "CUDA: unrolled serial sum"
        );
        assert_eq!(l4(&cl).get(InstrClass::Synchronization), 2);
    }
}

#[cfg(test)]
mod one_side {
    use super::*;

    /// The matvec family's OpenCL PTX counted where CUDA's compiler gave none: only OpenCL's
    /// classes are rows, none of a CUDA kernel that was never counted.
    #[test]
    fn a_side_with_no_ptx_gets_no_class_rows() {
        let sources = KernelSources::embedded();
        let offline: OfflineCompiler = &|_, _| {
            Err(BackendError::Unavailable {
                api: Api::Cuda,
                reason: "no NVRTC in this test".into(),
            })
        };
        let dir = tempfile::tempdir().unwrap();
        let mut inspection = Inspection {
            sources: &sources,
            cl: None,
            cu: None,
            offline,
            arch: "compute_90".into(),
            local: 256,
            out: dir.path(),
            files: Vec::new(),
            notes: Vec::new(),
        };
        let fam = FamilyPtx {
            stem: FamilyId::Matvec.file(),
            cuda: None,
            opencl: Some(include_str!("../../tests/fixtures/ptx/nvidia_opencl_matvec.ptx").into()),
            cl_program: None,
            cu_program: None,
            opencl_cubin: None,
        };
        let (md, classes, _) = inspection.count_pairs(std::slice::from_ref(&fam));
        // The table shows the CUDA side as not counted, not as a kernel of 0 instructions.
        let table = md.split("### matvec/listing4\n").nth(1).unwrap();
        let arithmetic = table
            .lines()
            .find(|l| l.starts_with("| arithmetic |"))
            .unwrap();
        assert!(arithmetic.ends_with("| — | — |"), "{arithmetic}");
        let total = table
            .lines()
            .find(|l| l.starts_with("| **total** |"))
            .unwrap();
        assert!(total.ends_with("| — | — |"), "{total}");
        let listing4: Vec<&ClassCountRow> = classes
            .iter()
            .filter(|r| r.pair == "matvec/listing4")
            .collect();
        assert!(listing4.iter().any(|r| r.api == "OpenCL" && r.count > 0));
        assert!(
            listing4.iter().all(|r| r.api == "OpenCL"),
            "CUDA rows of a kernel never counted: {:?}",
            listing4
                .iter()
                .filter(|r| r.api == "CUDA")
                .take(3)
                .collect::<Vec<_>>()
        );
    }
}
