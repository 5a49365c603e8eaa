//! An output folder knows what it is and who is writing it.
//!
//! Its first run writes `folder.json`: the study, a hash of the resolved study, the sides
//! (API, device, platform, driver), the passes and the binary's commit. A resume that does
//! not match is refused with every difference named, so rows of two different experiments
//! never meet in one folder. `.clvscu.lock` is held (an advisory lock) for the whole run; a
//! second run on the same folder is refused with the holder's process id, host and start.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::provenance::GIT_COMMIT;
use crate::backend::DeviceInfo;
use crate::export::json::write_json_atomic;
use crate::export::ExportError;
use crate::study::Study;

/// The name of the identity file in an output folder.
pub const IDENTITY_FILE: &str = "folder.json";
/// The name of the lock file in an output folder.
pub const LOCK_FILE: &str = ".clvscu.lock";

/// What an output folder holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FolderIdentity {
    pub study: String,
    /// SHA-256 (first 16 hex digits) of the resolved study: every comparison and setting.
    pub study_hash: String,
    /// One entry per side: `A: OpenCL NVIDIA H200 [NVIDIA CUDA] driver 580.159.04`.
    pub sides: Vec<String>,
    pub passes: u32,
    /// The commit of the binary that measured.
    pub binary: String,
}

impl FolderIdentity {
    pub fn of(study: &Study, sides: &[&DeviceInfo], passes: u32) -> FolderIdentity {
        FolderIdentity {
            study: study.name.clone(),
            study_hash: study_hash(study),
            sides: sides
                .iter()
                .zip(["A", "B"])
                .map(|(d, side)| {
                    format!(
                        "{side}: {} {} [{}] driver {}",
                        d.api, d.name, d.platform, d.driver_version
                    )
                })
                .collect(),
            passes,
            binary: GIT_COMMIT.to_string(),
        }
    }

    /// Every field that differs from `other`, as `field: this vs other`.
    pub fn differences(&self, other: &FolderIdentity) -> Vec<String> {
        let mut out = Vec::new();
        let mut check = |field: &str, a: String, b: String| {
            if a != b {
                out.push(format!("{field}: the folder has {a}, this run has {b}"));
            }
        };
        check("study", self.study.clone(), other.study.clone());
        check(
            "resolved study (sizes, settings, comparisons)",
            format!("hash {}", self.study_hash),
            format!("hash {}", other.study_hash),
        );
        check("sides", self.sides.join("; "), other.sides.join("; "));
        check("passes", self.passes.to_string(), other.passes.to_string());
        check("binary", self.binary.clone(), other.binary.clone());
        out
    }
}

/// The hash of everything a study resolves to; the same study file gives the same hash
/// under the same binary.
pub fn study_hash(study: &Study) -> String {
    let text = format!("{}\n{:?}", study.name, study.comparisons);
    Sha256::digest(text.as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Why a folder cannot be used for this run.
#[derive(Debug, thiserror::Error)]
pub enum FolderError {
    #[error(
        "{} holds another experiment; refusing to resume into it:\n  {}\n(choose a new --out, or rerun with the folder's own settings)",
        dir.display(),
        differences.join("\n  ")
    )]
    Mismatch {
        dir: PathBuf,
        differences: Vec<String>,
    },
    #[error(
        "{} holds results but no {IDENTITY_FILE} (written by an older clvscu); refusing to resume into it: choose a new --out",
        dir.display()
    )]
    Unidentified { dir: PathBuf },
    #[error("{} is in use by another clvscu run ({holder}); wait for it to end, or choose another --out", dir.display())]
    Locked { dir: PathBuf, holder: String },
    #[error(transparent)]
    Io(#[from] ExportError),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> FolderError + '_ {
    move |source| {
        FolderError::Io(ExportError::Io {
            path: path.to_path_buf(),
            source,
        })
    }
}

/// Checks a resumed folder against this run. Writes nothing: a refused run leaves the folder
/// as it was; [`record_identity`] writes the identity once the folder is accepted.
pub fn check_identity(
    dir: &Path,
    identity: &FolderIdentity,
    resume: bool,
    has_rows: bool,
) -> Result<(), FolderError> {
    let path = dir.join(IDENTITY_FILE);
    if resume && path.exists() {
        let text = crate::input_file::read_text_capped(&path, crate::input_file::RESULT_CAP)
            .map_err(io(&path))?;
        let stored: FolderIdentity =
            serde_json::from_str(&text).map_err(|e| ExportError::Json {
                path: path.clone(),
                line: e.line() as u64,
                message: e.to_string(),
            })?;
        let differences = stored.differences(identity);
        if differences.is_empty() {
            return Ok(());
        }
        return Err(FolderError::Mismatch {
            dir: dir.to_path_buf(),
            differences,
        });
    }
    if resume && has_rows {
        return Err(FolderError::Unidentified {
            dir: dir.to_path_buf(),
        });
    }
    Ok(())
}

/// Records `identity` as the folder's, unless it already has one (a resume).
pub fn record_identity(dir: &Path, identity: &FolderIdentity) -> Result<(), FolderError> {
    let path = dir.join(IDENTITY_FILE);
    if !path.exists() {
        write_json_atomic(&path, identity)?;
    }
    Ok(())
}

/// Tries the lock for a fifth of a second before giving up: a child process that another
/// thread is starting holds a copy of every open file until it execs, and with it, briefly,
/// the lock.
fn take_lock(file: &File) -> bool {
    for _ in 0..10 {
        if file.try_lock().is_ok() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    false
}

/// The folder's lock, held until dropped.
#[derive(Debug)]
pub struct FolderLock {
    _file: File,
}

/// Takes the folder's lock, or says who holds it.
pub fn lock(dir: &Path) -> Result<FolderLock, FolderError> {
    let path = dir.join(LOCK_FILE);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io(&path))?;
    if !take_lock(&file) {
        let mut holder = String::new();
        let _ = file.read_to_string(&mut holder);
        return Err(FolderError::Locked {
            dir: dir.to_path_buf(),
            holder: if holder.trim().is_empty() {
                "holder unknown".into()
            } else {
                holder.trim().to_string()
            },
        });
    }
    let me = format!(
        "pid {} on {} since {}",
        std::process::id(),
        super::provenance::hostname(),
        chrono::Utc::now().to_rfc3339()
    );
    file.set_len(0)
        .and_then(|_| file.seek(SeekFrom::Start(0)))
        .and_then(|_| file.write_all(me.as_bytes()))
        .map_err(io(&path))?;
    Ok(FolderLock { _file: file })
}
