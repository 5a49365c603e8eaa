//! Kernel sources: embedded in the binary, overridable from a directory at run time. Each
//! family is one file per API with the same stem (`matvec.cl` / `matvec.cu`); a prelude of
//! shared macros (`prelude.cl` / `prelude.cu`) is prepended to both the same way.

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::rows::Api;

pub mod defines;

/// The embedded sources: (file stem, OpenCL text, CUDA text), the prelude first, then every
/// pair of kernel files by stem (listed by build.rs, so no list must keep step with the folders).
const EMBEDDED: &[(&str, &str, &str)] = include!(concat!(env!("OUT_DIR"), "/embedded_kernels.rs"));

#[derive(Debug, Error)]
pub enum KernelSourceError {
    #[error("unknown kernel file '{stem}'; known: {known}")]
    Unknown { stem: String, known: String },
    #[error("cannot read kernel source {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

pub fn extension(api: Api) -> &'static str {
    match api {
        Api::OpenCl => "cl",
        Api::Cuda => "cu",
    }
}

pub fn folder(api: Api) -> &'static str {
    match api {
        Api::OpenCl => "kernels_cl",
        Api::Cuda => "kernels_cu",
    }
}

/// `kernels_cl/matvec.cl`.
pub fn file_name(api: Api, stem: &str) -> String {
    format!("{}/{stem}.{}", folder(api), extension(api))
}

pub fn stems() -> Vec<&'static str> {
    EMBEDDED.iter().map(|(s, _, _)| *s).collect()
}

/// (stem, [(path, text) of OpenCL, of CUDA]).
type LoadedPair = (String, [(String, String); 2]);

/// Kernel pairs loaded at run time, beside the embedded ones (a study's own kernels).
fn loaded() -> &'static std::sync::RwLock<Vec<LoadedPair>> {
    static LOADED: std::sync::OnceLock<std::sync::RwLock<Vec<LoadedPair>>> =
        std::sync::OnceLock::new();
    LOADED.get_or_init(Default::default)
}

/// The kernel files studies named, as (path, text); `--kernels-dir` files are hashed apart.
pub fn files_read() -> Vec<(String, String)> {
    loaded()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .flat_map(|(_, files)| files.iter().cloned())
        .collect()
}

/// Makes `stem` name a study's OpenCL and CUDA `files` (path, text), used as embedded ones are.
pub fn register_files(stem: &str, files: [(String, String); 2]) {
    let mut pairs = loaded().write().unwrap_or_else(|e| e.into_inner());
    pairs.retain(|(s, _)| s != stem);
    pairs.push((stem.to_string(), files));
}

pub fn loaded_stems() -> Vec<String> {
    let pairs = loaded().read().unwrap_or_else(|e| e.into_inner());
    pairs.iter().map(|(s, _)| s.clone()).collect()
}

fn loaded_file(api: Api, stem: &str) -> Option<(String, String)> {
    let pairs = loaded().read().unwrap_or_else(|e| e.into_inner());
    let (_, files) = pairs.iter().find(|(s, _)| s == stem)?;
    Some(match api {
        Api::OpenCl => files[0].clone(),
        Api::Cuda => files[1].clone(),
    })
}

/// Where kernel text comes from: the binary, or a directory holding `kernels_cl/` and
/// `kernels_cu/` (so a kernel can be edited without rebuilding).
#[derive(Debug, Clone, Default)]
pub struct KernelSources {
    dir: Option<PathBuf>,
}

impl KernelSources {
    pub fn embedded() -> Self {
        KernelSources { dir: None }
    }

    pub fn from_dir(dir: &Path) -> Self {
        KernelSources {
            dir: Some(dir.to_path_buf()),
        }
    }

    /// The origin, for provenance records.
    pub fn origin(&self) -> String {
        match &self.dir {
            None => "embedded".into(),
            Some(d) => format!("directory {}", d.display()),
        }
    }

    /// One file's text, without the prelude.
    pub fn file(&self, api: Api, stem: &str) -> Result<String, KernelSourceError> {
        if let Some((_, text)) = loaded_file(api, stem) {
            return Ok(text);
        }
        let embedded = EMBEDDED
            .iter()
            .find(|(s, _, _)| *s == stem)
            .ok_or_else(|| KernelSourceError::Unknown {
                stem: stem.to_string(),
                known: stems().join(", "),
            })?;
        match &self.dir {
            None => Ok(match api {
                Api::OpenCl => embedded.1.to_string(),
                Api::Cuda => embedded.2.to_string(),
            }),
            Some(dir) => {
                let path = dir.join(file_name(api, stem));
                // Bounded: a FIFO or a device named as a kernel file is refused, not read.
                crate::input_file::read_text_capped(&path, crate::input_file::STUDY_CAP)
                    .map_err(|source| KernelSourceError::Io { path, source })
            }
        }
    }

    /// Where a file comes from, as a compiler message should name it.
    fn location(&self, api: Api, stem: &str) -> String {
        if let Some((path, _)) = loaded_file(api, stem) {
            return path;
        }
        let relative = file_name(api, stem);
        match &self.dir {
            None => relative,
            Some(dir) => dir.join(relative).display().to_string(),
        }
    }

    /// Refuses a define among `names` that [`defines`] refuses in either API's `stem` program.
    pub fn check_defines<'n>(
        &self,
        stem: &str,
        names: impl Iterator<Item = &'n String> + Clone,
    ) -> Result<(), defines::DefineError> {
        for api in [Api::OpenCl, Api::Cuda] {
            // A missing file is reported where the kernel is built.
            let Ok(text) = self.program(api, stem) else {
                continue;
            };
            let file = file_name(api, stem);
            for name in names.clone() {
                defines::check_against_source(name, &text, &file)?;
            }
        }
        Ok(())
    }

    /// The text given to the compiler: prelude, then the family file, each after a `#line`
    /// directive (it changes no code), so a build log names the user's file and line numbers.
    pub fn program(&self, api: Api, stem: &str) -> Result<String, KernelSourceError> {
        let line = |s: &str| {
            let name = self
                .location(api, s)
                .replace('\\', "\\\\")
                .replace('"', "\\\"");
            format!("#line 1 \"{name}\"")
        };
        Ok(format!(
            "{}\n{}\n{}\n{}",
            line("prelude"),
            self.file(api, "prelude")?,
            line(stem),
            self.file(api, stem)?
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_program_starts_with_prelude() {
        let s = KernelSources::embedded()
            .program(Api::Cuda, "matvec")
            .unwrap();
        assert!(s.contains("CLVSCU_PRAGMA"));
        assert!(s.contains("matvec_listing2"));
    }

    #[test]
    fn the_program_names_each_file_for_the_compiler() {
        let s = KernelSources::embedded()
            .program(Api::OpenCl, "reduce")
            .unwrap();
        assert!(s.starts_with("#line 1 \"kernels_cl/prelude.cl\"\n"), "{s}");
        assert!(s.contains("\n#line 1 \"kernels_cl/reduce.cl\"\n"));
    }

    #[test]
    fn unknown_stem_lists_known() {
        let e = KernelSources::embedded()
            .file(Api::OpenCl, "nope")
            .unwrap_err()
            .to_string();
        assert!(e.contains("matvec") && e.contains("reduce"), "{e}");
    }

    #[test]
    fn directory_override_reads_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("kernels_cl")).unwrap();
        std::fs::write(dir.path().join("kernels_cl/matvec.cl"), "// edited").unwrap();
        let s = KernelSources::from_dir(dir.path());
        assert_eq!(s.file(Api::OpenCl, "matvec").unwrap(), "// edited");
        let e = s.file(Api::Cuda, "matvec").unwrap_err().to_string();
        assert!(e.contains("matvec.cu"), "{e}");
    }
}
