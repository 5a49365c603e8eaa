//! What each front end made of each target: its program text (PTX on NVIDIA), kept once per
//! distinct text under `ptx/`, its kernel's static instruction classes in PTX
//! (`ptx-classes.csv`) and, with a CUDA device and `cuobjdump`, in SASS (`sass-classes.csv`),
//! and their difference in words for a front-end verdict.
//!
//! Both SASS texts come from one second stage, the CUDA driver's JIT with the target's CUDA
//! options, so their difference is the front ends' (explain's register rung measures where
//! NVIDIA's OpenCL JIT differs).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::backend::{JitOptions, Runtime};
use crate::export::csv::{read_rows, write_rows};
use crate::export::{io_err, write_atomic, ExportError};
use crate::inspect::cubin::differences;
use crate::inspect::ptx::{count_classes, parse_kernel};
use crate::inspect::sass;
use crate::kernels::KernelSources;
use crate::rows::Api;
use crate::session::program_text_of;
use crate::session::run::Sides;
use crate::study::Comparison;

pub const PTX_CLASSES_CSV: &str = "ptx-classes.csv";
pub const SASS_CLASSES_CSV: &str = "sass-classes.csv";
/// The program texts, one file per distinct text, and their index.
pub const PTX_DIR: &str = "ptx";
pub const PTX_INDEX_CSV: &str = "ptx/index.csv";

/// Which file holds the program text `api`'s compiler made of `target`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextRow {
    pub target: String,
    pub api: Api,
    pub kernel: String,
    /// Relative to the explain folder (`ptx/<hash>.ptx`).
    pub file: String,
}

struct TargetTexts<'t> {
    target: &'t Comparison,
    texts: Vec<(Api, String)>,
}

/// Writes `ptx/`, `ptx-classes.csv` and, where it can, `sass-classes.csv` for every target; a
/// side that cannot be built or counted is left out, and the notes returned say why.
pub fn write_code(
    targets: &[Comparison],
    out: &Path,
    sources: &KernelSources,
    sides: &mut Sides,
) -> Result<Vec<String>, ExportError> {
    let mut notes = Vec::new();
    let all: Vec<TargetTexts> = targets
        .iter()
        .map(|t| TargetTexts {
            target: t,
            texts: texts_of(sources, sides, t, &mut notes),
        })
        .collect();
    let index = store_texts(out, &all)?;
    if !index.is_empty() {
        write_rows(&out.join(PTX_INDEX_CSV), &index)?;
    }
    let ptx: Vec<CodeClassRow> = all
        .iter()
        .flat_map(|t| ptx_classes(t, &mut notes))
        .collect();
    if !ptx.is_empty() {
        write_rows(&out.join(PTX_CLASSES_CSV), &ptx)?;
    }
    let cuda = super::each_side(sides).find(|b| b.api() == Api::Cuda);
    if let (Some(cuda), Some(tool)) = (cuda, sass::find_cuda_tool("cuobjdump")) {
        let rows: Vec<CodeClassRow> = all
            .iter()
            .flat_map(|t| sass_classes(cuda, &tool, out, t, &mut notes))
            .collect();
        if !rows.is_empty() {
            write_rows(&out.join(SASS_CLASSES_CSV), &rows)?;
        }
    }
    Ok(notes)
}

/// Each side's program text of `t`, built exactly as the run builds it.
fn texts_of(
    sources: &KernelSources,
    sides: &mut Sides,
    t: &Comparison,
    notes: &mut Vec<String>,
) -> Vec<(Api, String)> {
    let mut texts = Vec::new();
    for (backend, settings) in super::each_side(sides).zip([&t.a, &t.b]) {
        let api = backend.api();
        match program_text_of(backend, sources, settings.clone()) {
            Ok(Some(text)) => texts.push((api, text)),
            Ok(None) => {}
            Err(e) => notes.push(format!("{}: {api}'s program not built: {e}", t.id)),
        }
    }
    texts
}

/// Writes each distinct text once, named by its hash, and returns the index.
fn store_texts(out: &Path, all: &[TargetTexts]) -> Result<Vec<TextRow>, ExportError> {
    let mut index = Vec::new();
    let mut written = BTreeSet::new();
    for t in all {
        for (api, text) in &t.texts {
            let hash = crate::export::folder::short_hash(text.as_bytes());
            let file = format!("{PTX_DIR}/{hash}.ptx");
            if written.insert(file.clone()) {
                let dir = out.join(PTX_DIR);
                std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
                write_atomic(&out.join(&file), text.as_bytes())?;
            }
            index.push(TextRow {
                target: t.target.id.clone(),
                api: *api,
                kernel: t.target.a.variant.kernel.to_string(),
                file,
            });
        }
    }
    Ok(index)
}

/// The kernel and program text `api`'s compiler made of `target`, from the index under `out`.
pub fn read_text(out: &Path, target: &str, api: Api) -> Option<(String, String)> {
    let index: Vec<TextRow> = read_rows(&out.join(PTX_INDEX_CSV)).ok()?;
    let row = index
        .into_iter()
        .find(|r| r.target == target && r.api == api)?;
    let text = std::fs::read_to_string(out.join(&row.file)).ok()?;
    Some((row.kernel, text))
}

fn ptx_classes(t: &TargetTexts, notes: &mut Vec<String>) -> Vec<CodeClassRow> {
    let (id, kernel) = (&t.target.id, t.target.a.variant.kernel);
    let mut rows = Vec::new();
    for (api, text) in &t.texts {
        let why = match parse_kernel(text, kernel) {
            Ok(Some(k)) => {
                let counts = count_classes(&k);
                rows.extend(
                    counts
                        .iter()
                        .map(|(c, n)| CodeClassRow::new(id, *api, kernel, c, n)),
                );
                continue;
            }
            Ok(None) => format!("no kernel {kernel} in {api}'s PTX"),
            Err(e) => e.to_string(),
        };
        notes.push(format!("{id}: {api}'s PTX not counted: {why}"));
    }
    rows
}

/// Both texts of `t` through one second stage (see the module docs), counted by class.
fn sass_classes(
    cuda: &mut dyn Runtime,
    tool: &Path,
    out: &Path,
    t: &TargetTexts,
    notes: &mut Vec<String>,
) -> Vec<CodeClassRow> {
    let kernel = t.target.a.variant.kernel;
    let jit = &t.target.b.jit;
    let mut rows = Vec::new();
    for (api, text) in &t.texts {
        match sass_of(cuda, tool, out, text, jit) {
            Ok(functions) => match functions.get(kernel) {
                Some(ops) => rows.extend(sass::count(ops).iter().map(|(class, count)| {
                    CodeClassRow::new(&t.target.id, *api, kernel, class, count)
                })),
                None => notes.push(format!(
                    "{}: no function {kernel} in the SASS of {api}'s PTX",
                    t.target.id
                )),
            },
            Err(e) => notes.push(format!("{}: {api}'s SASS not counted: {e}", t.target.id)),
        }
    }
    rows
}

/// Why a PTX text's SASS cannot be had.
#[derive(Debug, thiserror::Error)]
enum SassError {
    #[error(transparent)]
    Backend(#[from] crate::backend::BackendError),
    #[error("the CUDA backend gave no machine code")]
    NoMachineCode,
    #[error("a temporary cubin in {}: {source}", dir.display())]
    TempFile {
        dir: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    WriteCubin(std::io::Error),
    #[error(transparent)]
    Disassembly(#[from] sass::DisassemblyError),
}

/// The SASS functions of `ptx`, its cubin in `out` only while `cuobjdump` reads it.
fn sass_of(
    cuda: &mut dyn Runtime,
    tool: &Path,
    out: &Path,
    ptx: &str,
    jit: &JitOptions,
) -> Result<sass::SassFunctions, SassError> {
    let cubin = cuda
        .machine_code(ptx, jit)?
        .ok_or(SassError::NoMachineCode)?;
    let file = tempfile::Builder::new()
        .prefix(".sass-")
        .suffix(".cubin")
        .tempfile_in(out)
        .map_err(|source| SassError::TempFile {
            dir: out.into(),
            source,
        })?;
    std::fs::write(file.path(), &cubin).map_err(SassError::WriteCubin)?;
    let text = sass::disassemble(tool, file.path())?;
    Ok(sass::parse_cuobjdump(&text))
}

/// One class of one side's kernel of one target, in one code (the file says which: PTX in
/// `ptx-classes.csv`, SASS in `sass-classes.csv`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodeClassRow {
    pub target: String,
    pub api: Api,
    pub kernel: String,
    pub class: String,
    /// Static count: instructions of this class in the kernel's text, not executed ones.
    pub count: u64,
}

impl CodeClassRow {
    pub fn new(target: &str, api: Api, kernel: &str, class: &str, count: u64) -> CodeClassRow {
        CodeClassRow {
            target: target.to_string(),
            api,
            kernel: kernel.to_string(),
            class: class.to_string(),
            count,
        }
    }
}

const MAX_CLASSES: usize = 4;

/// "in the PTX, OpenCL's kernel has 12 more arithmetic, 4 fewer ld.global ... (static PTX
/// counts: OpenCL 120 instructions, CUDA 104)" for `target`, from the rows of both sides in
/// `code` (`PTX`, `SASS`); `None` without both.
pub fn difference(rows: &[CodeClassRow], target: &str, code: &str) -> Option<String> {
    let side = |api| -> BTreeMap<&str, u64> {
        rows.iter()
            .filter(|r| r.target == target && r.api == api)
            .map(|r| (r.class.as_str(), r.count))
            .collect()
    };
    let (cl, cu) = (side(Api::OpenCl), side(Api::Cuda));
    if cl.is_empty() || cu.is_empty() {
        return None;
    }
    let diffs = differences(&cl, &cu);
    let total = |m: &BTreeMap<&str, u64>| m.values().sum::<u64>();
    let totals = format!(
        "static {code} counts: OpenCL {} instructions, CUDA {}",
        total(&cl),
        total(&cu)
    );
    if diffs.is_empty() {
        return Some(format!(
            "the two kernels' {code} has the same count in every class ({totals})"
        ));
    }
    let named: Vec<String> = diffs
        .iter()
        .take(MAX_CLASSES)
        .map(|d| {
            let word = if d.a > d.b { "more" } else { "fewer" };
            format!("{} {word} {}", d.gap(), d.class)
        })
        .collect();
    Some(format!(
        "in the {code}, OpenCL's kernel has {} ({totals})",
        named.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::Comparison;

    fn target(id: &str) -> Comparison {
        let study = crate::study::load("explain-known").unwrap();
        let mut c = study.comparisons[0].clone();
        c.id = id.into();
        c
    }

    #[test]
    fn each_text_is_kept_once_and_read_back_by_target_and_front_end() {
        let dir = tempfile::tempdir().unwrap();
        let (t1, t2) = (target("one"), target("two"));
        let same = "// the same PTX\n".to_string();
        let all = [
            TargetTexts {
                target: &t1,
                texts: vec![
                    (Api::OpenCl, "// OpenCL's\n".into()),
                    (Api::Cuda, same.clone()),
                ],
            },
            TargetTexts {
                target: &t2,
                texts: vec![(Api::Cuda, same.clone())],
            },
        ];
        let index = store_texts(dir.path(), &all).unwrap();
        write_rows(&dir.path().join(PTX_INDEX_CSV), &index).unwrap();
        assert_eq!(index.len(), 3);
        let files = std::fs::read_dir(dir.path().join(PTX_DIR)).unwrap().count();
        assert_eq!(files, 3, "two texts and the index");
        let (kernel, text) = read_text(dir.path(), "two", Api::Cuda).unwrap();
        assert_eq!(text, same);
        assert_eq!(kernel, t2.a.variant.kernel);
        assert_eq!(read_text(dir.path(), "two", Api::OpenCl), None);
    }

    fn row(api: Api, class: &str, count: u64) -> CodeClassRow {
        CodeClassRow::new("t", api, "k", class, count)
    }

    #[test]
    fn the_difference_names_the_largest_classes_with_their_signs() {
        let rows = vec![
            row(Api::OpenCl, "arithmetic", 30),
            row(Api::OpenCl, "ld.global", 4),
            row(Api::Cuda, "arithmetic", 20),
            row(Api::Cuda, "ld.global", 6),
        ];
        let text = difference(&rows, "t", "SASS").unwrap();
        assert!(text.starts_with("in the SASS"), "{text}");
        assert!(
            text.contains("10 more arithmetic, 2 fewer ld.global"),
            "{text}"
        );
        assert!(
            text.contains("static SASS counts: OpenCL 34 instructions, CUDA 26"),
            "{text}"
        );
        assert_eq!(difference(&rows, "other", "PTX"), None);
    }
}
