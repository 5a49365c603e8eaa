//! The machine code each runtime actually runs, taken from the CUDA compute cache, where
//! NVIDIA's OpenCL and the CUDA driver both keep the cubins they build. explain runs this part
//! in a process whose `CUDA_CACHE_PATH` is an empty folder (the driver reads it once, at start),
//! builds each target's programs one at a time and takes the images each build left. Codes:
//!
//! - `opencl-runtime`: NVIDIA's OpenCL's build of OpenCL's PTX (what OpenCL runs);
//! - `cuda-driver`: the CUDA driver's build of NVRTC's PTX (what CUDA runs);
//! - `cuda-driver-opencl-ptx`: the CUDA driver's build of OpenCL's PTX (tells the second
//!   stages apart); `cuda-capped-rN`: the same with the register rung's cap;
//! - `opencl-runtime-alternative`, `cuda-driver-alternative`: the family's declared
//!   alternative (the fix explain offers), where it has one.
//!
//! Each kernel's own function goes to `machine-code/<target>/<code>.sass.gz` (the image lives
//! only while `cuobjdump` reads it), its resources and classes to `machine-code.csv` and
//! `machine-code-classes.csv`; a code the cache did not hold is a row that says so.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;
use std::process::Command;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::backend::JitOptions;
use crate::export::csv::{read_rows, read_rows_if_file, write_rows};
use crate::export::{io_err, write_atomic, ExportError};
use crate::families::exec::ExecError;
use crate::inspect::cache::{new_images, snapshot, Snapshot};
use crate::inspect::cubin::{self, ClassCounts, KernelCode, Resources};
use crate::inspect::sass;
use crate::kernels::KernelSources;
use crate::rows::Api;
use crate::session::program_text_of;
use crate::session::run::Sides;
use crate::study::Comparison;

pub const MACHINE_CODE_DIR: &str = "machine-code";
pub const MACHINE_CODE_CSV: &str = "machine-code.csv";
pub const CLASSES_CSV: &str = "machine-code-classes.csv";
/// The PR rows of the gaps whose machine code is read without rungs (`--machine-code-for`).
pub const CODE_ONLY_CSV: &str = "machine-code-only.csv";
/// The private compute cache, while the part runs.
pub const CACHE_DIR: &str = "machine-code/.compute-cache";

pub const OPENCL_RUNTIME: &str = "opencl-runtime";
pub const CUDA_DRIVER: &str = "cuda-driver";
pub const CUDA_DRIVER_OPENCL_PTX: &str = "cuda-driver-opencl-ptx";
pub const OPENCL_RUNTIME_ALTERNATIVE: &str = "opencl-runtime-alternative";
pub const CUDA_DRIVER_ALTERNATIVE: &str = "cuda-driver-alternative";

pub fn capped(registers: u32) -> String {
    format!("cuda-capped-r{registers}")
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineCodeRow {
    pub target: String,
    pub code: String,
    pub kernel: String,
    /// `compute cache` where the image came from the cache, else why there is none.
    pub source: String,
    pub registers: Option<u32>,
    pub stack_bytes: Option<u32>,
    pub shared_bytes: Option<u32>,
    pub local_bytes: Option<u32>,
    /// The kernel's SASS (`.sass.gz`), relative to the explain folder; empty without one.
    pub sass: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassRow {
    pub target: String,
    pub code: String,
    pub class: String,
    pub count: u32,
}

/// Why a code has no image to read; its text is the row's `source`.
#[derive(Debug, Clone, thiserror::Error)]
enum NoImage {
    /// The build's error as text: later targets take the build again (cloned).
    #[error("{0}")]
    BuildFailed(String),
    #[error("the compute cache held no image of it (cache off, or a driver that keeps none)")]
    NotCached,
    #[error("no kernel: the target times the runtime's own calls")]
    NoKernel,
    #[error("not read: the part's {0} s budget ran out")]
    OverBudget(f64),
}

#[derive(Clone)]
struct Taken {
    code: String,
    kernel: &'static str,
    source: Result<Vec<u8>, NoImage>,
}

struct Taker<'c> {
    cache: &'c Path,
    before: Snapshot,
    seen: &'c mut BTreeMap<String, Vec<u8>>,
    taken: Vec<Taken>,
}

impl Taker<'_> {
    /// The image of `kernel` the build just made (`built`) left in the cache, or the one an
    /// earlier build of the same text (`key`) left, as `code`.
    fn take(&mut self, code: &str, kernel: &'static str, key: String, built: Result<(), NoImage>) {
        let (images, after) = new_images(self.cache, &self.before, kernel);
        self.before = after;
        let seen = &mut *self.seen;
        let source = built.and_then(|()| match images.into_iter().next() {
            Some(image) => {
                seen.insert(key.clone(), image.clone());
                Ok(image)
            }
            None => seen.get(&key).cloned().ok_or(NoImage::NotCached),
        });
        self.taken.push(Taken {
            code: code.to_string(),
            kernel,
            source,
        });
    }

    /// [`Taker::take`] of a program built from a text, keyed by `base` and the text (builds
    /// of the same text leave one image); gives the text.
    fn take_built(
        &mut self,
        code: &str,
        kernel: &'static str,
        base: &str,
        built: Result<Option<String>, ExecError>,
    ) -> Option<String> {
        let built = built.map_err(|e| NoImage::BuildFailed(e.to_string()));
        let text = built.as_ref().ok().cloned().flatten();
        self.take(code, kernel, format!("{base}:{text:?}"), built.map(|_| ()));
        text
    }
}

/// `--code-budget`'s default: the suite's explain step has a cap and the verdicts are written
/// after this part, so later targets are recorded as not read (those that build a program read
/// before take no time, see [`collect`]).
pub const BUDGET_S: f64 = 40.0;

/// What the part does for one target: read its codes, or give it those of an earlier target
/// that builds the same programs (both sides, register cap, alternative): the same text leaves
/// the same image.
enum Plan<'t> {
    Read(&'t Comparison, Vec<Taken>),
    Same(&'t Comparison, String),
}

/// Builds every target's codes one at a time under the private `cache` until `budget_s` has
/// passed, and writes what each left (see `Plan`); the images are disassembled in parallel.
pub fn collect(
    targets: &[Comparison],
    capped_rungs: &BTreeMap<String, u32>,
    out: &Path,
    sources: &KernelSources,
    sides: &mut Sides,
    cache: &Path,
    budget_s: f64,
) -> Result<(), ExportError> {
    let plans = build_all(targets, capped_rungs, sources, sides, cache, budget_s);
    let tool = sass::find_cuda_tool("cuobjdump");
    let jobs: Vec<(&Comparison, &Taken)> = plans
        .iter()
        .flat_map(|p| match p {
            Plan::Read(t, taken) => taken.iter().map(|k| (*t, k)).collect(),
            Plan::Same(..) => Vec::new(),
        })
        .collect();
    // Each job waits on `cuobjdump`; rayon keeps their order.
    let recorded = jobs
        .par_iter()
        .map(|(t, taken)| record(out, t, taken, tool.as_deref()))
        .collect();
    let (rows, classes) = rows_of(&plans, recorded)?;
    write_rows(&out.join(MACHINE_CODE_CSV), &rows)?;
    write_rows(&out.join(CLASSES_CSV), &classes)
}

/// The rows and classes of every plan, in order: a read target's from `recorded` (one per
/// code), a [`Plan::Same`] target's copied from the earlier target's.
fn rows_of(
    plans: &[Plan],
    recorded: Vec<Recorded>,
) -> Result<(Vec<MachineCodeRow>, Vec<ClassRow>), ExportError> {
    let mut recorded = recorded.into_iter();
    let (mut rows, mut classes) = (Vec::new(), Vec::new());
    for plan in plans {
        match plan {
            Plan::Read(t, taken) => {
                for _ in taken {
                    let Some(result) = recorded.next() else { break };
                    let (row, counts) = result?;
                    classes.extend(counts.into_iter().map(|(class, count)| ClassRow {
                        target: t.id.clone(),
                        code: row.code.clone(),
                        class,
                        count,
                    }));
                    rows.push(row);
                }
            }
            Plan::Same(t, first) => {
                let again: Vec<MachineCodeRow> = rows
                    .iter()
                    .filter(|r| &r.target == first)
                    .map(|r| MachineCodeRow {
                        target: t.id.clone(),
                        source: format!("{} (the program of {first})", r.source),
                        ..r.clone()
                    })
                    .collect();
                let more: Vec<ClassRow> = classes
                    .iter()
                    .filter(|c| &c.target == first)
                    .map(|c| ClassRow {
                        target: t.id.clone(),
                        ..c.clone()
                    })
                    .collect();
                rows.extend(again);
                classes.extend(more);
            }
        }
    }
    Ok((rows, classes))
}

fn build_all<'t>(
    targets: &'t [Comparison],
    capped_rungs: &BTreeMap<String, u32>,
    sources: &KernelSources,
    sides: &mut Sides,
    cache: &Path,
    budget_s: f64,
) -> Vec<Plan<'t>> {
    let mut seen = BTreeMap::new();
    // Program key to the first target read with it.
    let mut read_as: BTreeMap<String, String> = BTreeMap::new();
    let start = std::time::Instant::now();
    let mut plans = Vec::new();
    for t in targets {
        let cap = capped_rungs.get(&t.id).copied();
        let key = programs_key(t, cap, sides);
        if let Some(first) = key.as_ref().and_then(|k| read_as.get(k)) {
            plans.push(Plan::Same(t, first.clone()));
            continue;
        }
        let not_read = |code: &str, why: NoImage| Taken {
            code: code.into(),
            kernel: t.a.variant.kernel,
            source: Err(why),
        };
        let taken = if key.is_none() {
            vec![not_read("none", NoImage::NoKernel)]
        } else if start.elapsed().as_secs_f64() > budget_s {
            vec![not_read("all", NoImage::OverBudget(budget_s))]
        } else {
            build_codes(t, cap, sources, sides, cache, &mut seen)
        };
        if let Some(k) = key.filter(|_| taken.iter().any(|t| t.source.is_ok())) {
            read_as.insert(k, t.id.clone());
        }
        plans.push(Plan::Read(t, taken));
    }
    plans
}

type Recorded = Result<(MachineCodeRow, ClassCounts), ExportError>;

/// What decides every code of `t`: each side's program, the register cap and the alternative;
/// `None` for a target with no kernel.
fn programs_key(t: &Comparison, cap: Option<u32>, sides: &mut Sides) -> Option<String> {
    let mut key = format!("cap {cap:?} alternative {:?}", t.a.variant.alternative);
    for b in super::each_side(sides) {
        let settings = if b.api() == Api::Cuda { &t.b } else { &t.a };
        key.push_str(&crate::session::program_key(b, settings.clone())?);
    }
    Some(key)
}

/// The codes of `t`, each from the image its build (or an earlier build of the same text) left.
fn build_codes(
    t: &Comparison,
    cap: Option<u32>,
    sources: &KernelSources,
    sides: &mut Sides,
    cache: &Path,
    seen: &mut BTreeMap<String, Vec<u8>>,
) -> Vec<Taken> {
    let kernel = t.a.variant.kernel;
    let mut taker = Taker {
        cache,
        before: snapshot(cache),
        seen,
        taken: Vec::new(),
    };
    let (opencl, cuda) = sides_by_api(sides);
    let opencl_ptx = opencl.and_then(|cl| {
        let built = program_text_of(cl, sources, t.a.clone());
        taker.take_built(OPENCL_RUNTIME, kernel, "opencl", built)
    });
    if let Some(cu) = cuda {
        let built = program_text_of(&mut *cu, sources, t.b.clone());
        taker.take_built(CUDA_DRIVER, kernel, "cuda", built);
        if let Some(ptx) = &opencl_ptx {
            let max_registers = |r| JitOptions {
                max_registers: Some(r),
                ..t.b.jit
            };
            let capped_jit = cap.map(|r| (capped(r), max_registers(r)));
            let plain = (CUDA_DRIVER_OPENCL_PTX.to_string(), t.b.jit);
            for (code, jit) in std::iter::once(plain).chain(capped_jit) {
                let built = cu
                    .load_foreign_program(ptx, &jit)
                    .map(|_| ())
                    .map_err(|e| NoImage::BuildFailed(e.to_string()));
                taker.take(&code, kernel, format!("{code}:{ptx}"), built);
            }
        }
    }
    take_alternative(t, sources, sides, &mut taker);
    taker.taken
}

fn take_alternative(t: &Comparison, sources: &KernelSources, sides: &mut Sides, taker: &mut Taker) {
    let Some(alt) = super::ladder::alternative(&t.a) else {
        return;
    };
    let (opencl, cuda) = sides_by_api(sides);
    // An alternative in the same kernel file builds the same program as the target (its
    // kernels all live in one image), so its image is found under the target's own key.
    for (code, base, side, settings) in [
        (OPENCL_RUNTIME_ALTERNATIVE, "opencl", opencl, &t.a),
        (CUDA_DRIVER_ALTERNATIVE, "cuda", cuda, &t.b),
    ] {
        let Some(backend) = side else { continue };
        let mut settings = settings.clone();
        settings.variant = alt;
        taker.take_built(
            code,
            alt.kernel,
            base,
            program_text_of(backend, sources, settings),
        );
    }
}

type SideRef<'s> = Option<&'s mut dyn crate::backend::Runtime>;

/// The first OpenCL side and the first CUDA side among `sides`.
fn sides_by_api(sides: &mut Sides) -> (SideRef<'_>, SideRef<'_>) {
    let (mut opencl, mut cuda) = (None, None);
    for b in super::each_side(sides) {
        match b.api() {
            Api::OpenCl if opencl.is_none() => opencl = Some(b),
            Api::Cuda if cuda.is_none() => cuda = Some(b),
            _ => {}
        }
    }
    (opencl, cuda)
}

/// Writes one code's image and SASS, and gives its row and classes.
fn record(out: &Path, t: &Comparison, taken: &Taken, tool: Option<&Path>) -> Recorded {
    let image = match &taken.source {
        Ok(image) => image,
        Err(why) => return Ok((unread_row(t, taken, why.to_string()), ClassCounts::new())),
    };
    let dir = format!("{MACHINE_CODE_DIR}/{}", crate::plot::slug(&t.id));
    let folder = out.join(&dir);
    std::fs::create_dir_all(&folder).map_err(io_err(&folder))?;
    let Some(tool) = tool else {
        let row = unread_row(t, taken, "compute cache (no cuobjdump to read it)".into());
        return Ok((row, ClassCounts::new()));
    };
    let (resources, counts, text) = read_image_bytes(tool, &folder, image, taken.kernel)?;
    let mut row = unread_row(t, taken, "compute cache".into());
    if let Some(r) = resources {
        row.registers = Some(r.registers);
        row.stack_bytes = Some(r.stack_bytes);
        row.shared_bytes = Some(r.shared_bytes);
        row.local_bytes = Some(r.local_bytes);
    }
    row.sass = format!("{dir}/{}.sass.gz", taken.code);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let _ = gz.write_all(function_text(&text, taken.kernel).as_bytes()); // into a Vec: cannot fail
    write_atomic(&out.join(&row.sass), &gz.finish().unwrap_or_default())?;
    Ok((row, counts))
}

/// The row of one code before its image is read.
fn unread_row(t: &Comparison, taken: &Taken, source: String) -> MachineCodeRow {
    MachineCodeRow {
        target: t.id.clone(),
        code: taken.code.clone(),
        kernel: taken.kernel.to_string(),
        source,
        ..MachineCodeRow::default()
    }
}

/// The part of `cuobjdump -sass` output that is `kernel`'s function (all of it where no
/// header names it).
pub fn function_text(text: &str, kernel: &str) -> String {
    let header = format!("Function : {kernel}");
    let Some(start) = text.lines().position(|l| l.trim() == header) else {
        return text.to_string();
    };
    let lines: Vec<&str> = text.lines().collect();
    let end = lines[start + 1..]
        .iter()
        .position(|l| l.trim().starts_with("Function : "))
        .map_or(lines.len(), |i| start + 1 + i);
    lines[start..end].join("\n") + "\n"
}

/// The kernel's resources and classes and the whole SASS of one cubin; `cuobjdump` reads files,
/// so the image lives in `folder` as a temporary file meanwhile.
fn read_image_bytes(
    tool: &Path,
    folder: &Path,
    image: &[u8],
    kernel: &str,
) -> Result<(Option<Resources>, ClassCounts, String), ExportError> {
    let file = tempfile::Builder::new()
        .prefix(".image-")
        .suffix(".cubin")
        .tempfile_in(folder)
        .map_err(io_err(folder))?;
    std::fs::write(file.path(), image).map_err(io_err(file.path()))?;
    let cubin = file.path();
    let text = sass::disassemble(tool, cubin).unwrap_or_else(|e| format!("# {e}\n"));
    let counts = sass::parse_cuobjdump(&text)
        .get(kernel)
        .map(|ops| cubin::class_counts(ops))
        .unwrap_or_default();
    let usage = Command::new(tool)
        .arg("-res-usage")
        .arg(cubin)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let resources = named(cubin::parse_res_usage(&usage), kernel);
    Ok((resources, counts, text))
}

/// The entry named `kernel`, or else the first whose name holds it (a mangled CUDA name): a
/// longer name that sorts first never wins over the exact one.
fn named<T>(mut by_name: BTreeMap<String, T>, kernel: &str) -> Option<T> {
    if let Some(exact) = by_name.remove(kernel) {
        return Some(exact);
    }
    by_name
        .into_iter()
        .find(|(name, _)| name.contains(kernel))
        .map(|(_, v)| v)
}

/// Every code read back from an explain folder by (target, code); those without an image are
/// left out (`machine-code.csv` says why).
pub fn read(out: &Path) -> Result<BTreeMap<(String, String), KernelCode>, ExportError> {
    let file = out.join(MACHINE_CODE_CSV);
    if !file.is_file() {
        return Ok(BTreeMap::new());
    }
    let rows: Vec<MachineCodeRow> = read_rows(&file)?;
    let classes: Vec<ClassRow> = read_rows_if_file(&out.join(CLASSES_CSV))?;
    Ok(rows
        .into_iter()
        .filter(|r| r.registers.is_some())
        .map(|r| {
            let classes = classes
                .iter()
                .filter(|c| c.target == r.target && c.code == r.code)
                .map(|c| (c.class.clone(), c.count))
                .collect();
            let resources = Resources {
                registers: r.registers.unwrap_or(0),
                stack_bytes: r.stack_bytes.unwrap_or(0),
                shared_bytes: r.shared_bytes.unwrap_or(0),
                local_bytes: r.local_bytes.unwrap_or(0),
            };
            ((r.target, r.code), KernelCode { resources, classes })
        })
        .collect())
}

/// The cap each target's register rung ran its CUDA side at, from the rungs' rows under `out`.
pub fn capped_rungs(out: &Path) -> BTreeMap<String, u32> {
    let Ok((_, rows)) = super::output::read_folder_rows(out) else {
        return BTreeMap::new();
    };
    rows.iter()
        .filter_map(|r| super::split_rung_id(&r.comparison))
        .filter_map(|(target, rung)| match super::RungKind::parse(rung)? {
            super::RungKind::RegistersHeld {
                registers,
                held: Api::Cuda,
            } => Some((target.to_string(), registers)),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_named_exactly_wins_over_a_longer_name_that_sorts_first() {
        let by_name = |names: &[&str]| -> BTreeMap<String, usize> {
            names
                .iter()
                .enumerate()
                .map(|(i, n)| (n.to_string(), i))
                .collect()
        };
        let both = by_name(&["_Z15matvec_listing2Pf", "matvec_listing2"]);
        assert_eq!(named(both, "matvec_listing2"), Some(1));
        let mangled = by_name(&["_Z15matvec_listing2Pf", "other"]);
        assert_eq!(named(mangled, "matvec_listing2"), Some(0));
        assert_eq!(named(by_name(&["other"]), "matvec_listing2"), None);
    }
}
