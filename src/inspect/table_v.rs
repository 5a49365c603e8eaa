//! The paper's Table V for clvscu's FFT: `fft512_forward` compiled for each API at each index
//! width, its PTX saved (`fft.<api>.<index>.ptx`) and counted (`ptx/table_v.rs`) into
//! `table-v.md` and `table-v.csv`.

use std::path::{Path, PathBuf};

use super::ptx::table_v;
use super::{request, write, write_csv, InspectError, OfflineCompiler};
use crate::backend::Runtime;
use crate::kernels::KernelSources;
use crate::rows::{Api, IndexWidth, TableVRow, TABLE_V_CSV};

pub const TABLE_V_MD: &str = "table-v.md";

pub fn ptx_file(out: &Path, api: Api, index: IndexWidth) -> PathBuf {
    let api = api.label().to_lowercase();
    out.join(format!("fft.{api}.{index}.ptx"))
}

/// PTX of the FFT for one API and width: from its device when there is one (NVIDIA's
/// OpenCL gives PTX, PoCL none), else NVRTC alone for CUDA.
fn compile(
    sources: &KernelSources,
    backend: Option<&mut (dyn Runtime + '_)>,
    api: Api,
    index: IndexWidth,
    offline: OfflineCompiler,
    arch: &str,
) -> Result<Option<String>, InspectError> {
    // Study data: the paper's Table V is about the FFT's kernel file, at the work-group size
    // its one variant is written for.
    let fft = crate::families::get(crate::rows::FamilyId::Fft);
    let local = fft.variants()[0].min_local;
    let mut req = request(sources, api, fft.spec().kernel_file, local, false)?;
    req.defines
        .push(("CLVSCU_INDEX".into(), index.define().into()));
    match (backend, api) {
        (Some(b), _) => {
            let p = b.compile(&req)?;
            Ok(b.program_text(p).ok().flatten())
        }
        (None, Api::Cuda) => Ok(offline(&req, arch).map(Some)?),
        (None, Api::OpenCl) => Ok(None),
    }
}

/// Compiles, saves and counts; the notes say what could not be counted.
pub fn run<'r>(
    sources: &KernelSources,
    mut cl: Option<&'r mut dyn Runtime>,
    mut cu: Option<&'r mut dyn Runtime>,
    offline: OfflineCompiler,
    arch: &str,
    out: &Path,
    files: &mut Vec<PathBuf>,
) -> Result<Vec<String>, InspectError> {
    let mut notes = Vec::new();
    // The files this run wrote: an earlier run's file at one of these names is not this run's
    // PTX, and is not counted as if it were.
    let mut compiled_now: Vec<PathBuf> = Vec::new();
    for index in <IndexWidth as strum::VariantArray>::VARIANTS {
        for api in [Api::Cuda, Api::OpenCl] {
            let backend = match api {
                Api::OpenCl => cl.as_deref_mut(),
                Api::Cuda => cu.as_deref_mut(),
            };
            let compiled = compile(sources, backend, api, *index, offline, arch);
            let path = ptx_file(out, api, *index);
            match compiled {
                Ok(Some(text)) => {
                    write(&path, &text, files)?;
                    compiled_now.push(path);
                    continue;
                }
                Ok(None) => {}
                Err(e) => notes.push(format!("fft {api} index {index}: {e}")),
            }
            if path.is_file() {
                notes.push(format!(
                    "{}: left by an earlier run, not counted (this run compiled no {api} PTX \
                     at index {index})",
                    path.display()
                ));
            }
        }
    }
    let rows = rows_from(out, &mut notes, |path| {
        compiled_now.iter().any(|p| p == path)
    });
    let md = table_v::markdown(&rows, arch);
    write(&out.join(TABLE_V_MD), &md, files)?;
    let mut all = table_v::paper_rows();
    all.extend(rows);
    write_csv(&out.join(TABLE_V_CSV), &all, files)?;
    Ok(notes)
}

/// Our Table V rows from the PTX files saved in `dir` (a run's `inspect` folder), CUDA then
/// OpenCL, each in u32, u64, native order; files that are absent are skipped.
pub fn rows_from_dir(dir: &Path, notes: &mut Vec<String>) -> Vec<TableVRow> {
    rows_from(dir, notes, |_| true)
}

/// [`rows_from_dir`], of the files `keep` keeps.
fn rows_from(dir: &Path, notes: &mut Vec<String>, keep: impl Fn(&Path) -> bool) -> Vec<TableVRow> {
    let mut rows = Vec::new();
    for api in [Api::Cuda, Api::OpenCl] {
        for index in <IndexWidth as strum::VariantArray>::VARIANTS {
            let path = ptx_file(dir, api, *index);
            if !keep(&path) {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let bits = index.bits(api);
            match table_v::row_from_ptx(&text, api.label(), &index.to_string(), bits) {
                Ok(r) => rows.push(r),
                Err(e) => notes.push(format!("{}: {e}", path.display())),
            }
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PTX text with the FFT's kernel, as an earlier run may have left it.
    const EARLIER_FFT: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\
                               .visible .entry fft512_forward()\n{\n\tret;\n}\n";

    #[test]
    fn a_second_run_into_a_folder_counts_only_the_ptx_it_compiled() {
        let dir = tempfile::tempdir().unwrap();
        // An earlier run on NVIDIA's OpenCL left its PTX in the folder.
        let stale = ptx_file(dir.path(), Api::OpenCl, IndexWidth::Native);
        std::fs::write(&stale, EARLIER_FFT).unwrap();
        assert_eq!(rows_from_dir(dir.path(), &mut Vec::new()).len(), 1);
        // This run has no OpenCL device and its CUDA compiler fails: it compiles nothing.
        let offline: OfflineCompiler = &|_, _| {
            Err(crate::backend::BackendError::Unavailable {
                api: Api::Cuda,
                reason: "no NVRTC in this test".into(),
            })
        };
        let sources = KernelSources::embedded();
        let mut files = Vec::new();
        let notes = run(
            &sources,
            None,
            None,
            offline,
            "compute_90",
            dir.path(),
            &mut files,
        )
        .unwrap();
        // Kept, and said to be another run's.
        assert!(stale.is_file());
        assert!(
            notes.iter().any(|n| n.contains("fft.opencl.native.ptx")),
            "{notes:?}"
        );
        let csv = std::fs::read_to_string(dir.path().join(TABLE_V_CSV)).unwrap();
        assert!(
            !csv.lines().any(|l| l.starts_with("clvscu,")),
            "rows of PTX this run did not compile:\n{csv}"
        );
        let md = std::fs::read_to_string(dir.path().join(TABLE_V_MD)).unwrap();
        assert!(!md.contains("| clvscu | OpenCL"), "{md}");
    }
}
