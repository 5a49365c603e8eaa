//! A run folder's own files, as files: `folder.json` (what the folder holds, which a resume
//! must match so that rows of two different experiments never meet in one folder),
//! `.clvscu.lock` (held, an advisory lock, for the whole run), which files hold rows and what the
//! provenance file of a first run or a resume is called. What the identity says of a study is
//! the session's to compute; here it is compared, read and written.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::safe::{self, FileLock, LockCheck, Taken};
use super::ExportError;
use crate::rows::{MEASUREMENTS_CSV, PRS_CSV, SAMPLES_CSV};

pub const IDENTITY_FILE: &str = "folder.json";
pub const LOCK_FILE: &str = ".clvscu.lock";

/// What an output folder holds. A hash is a [`short_hash`] (SHA-256, first 16 hex digits)
/// unless said otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FolderIdentity {
    pub study: String,
    /// Of the resolved study: every comparison and setting.
    pub study_hash: String,
    /// One entry per side: `A: OpenCL NVIDIA H200 [NVIDIA CUDA] driver 580.159.04`.
    pub sides: Vec<String>,
    pub passes: u32,
    /// The commit of the binary that measured.
    pub binary: String,
    /// Of every kernel file on both APIs as this run reads them (`--kernels-dir` or the
    /// embedded ones): one folder never mixes two programs.
    #[serde(default)]
    pub kernels: String,
    /// Each kernel file's `source_hash` (12 hex digits) by its name
    /// (`kernels_cl/matvec.cl`): a refused resume names the edited one. Not in older folders.
    #[serde(default)]
    pub kernel_files: BTreeMap<String, String>,
    /// Each written comparison's rows (samples, PR, measurements), so a resume keeps only
    /// rows that are what a run wrote.
    #[serde(default)]
    pub rows: BTreeMap<String, String>,
    /// Each other source file read from disk (a study's own kernel pairs, the rule tables) by path: a resume after one is
    /// edited is refused naming it.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
}

impl FolderIdentity {
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
        // Kernel files are named where both folders list them; an older folder has one hash of all.
        if self.kernel_files.is_empty() || other.kernel_files.is_empty() {
            check(
                "kernel sources",
                format!("hash {}", self.kernels),
                format!("hash {}", other.kernels),
            );
        } else {
            for (file, hash) in &self.kernel_files {
                let theirs = other.kernel_files.get(file).cloned().unwrap_or_default();
                check(
                    &format!("kernel file {file}"),
                    format!("hash {hash}"),
                    format!("hash {theirs}"),
                );
            }
        }
        let paths: std::collections::BTreeSet<&String> =
            self.files.keys().chain(other.files.keys()).collect();
        let hash = |files: &BTreeMap<String, String>, p: &String| {
            files
                .get(p)
                .map_or("no such file".to_string(), |h| format!("hash {h}"))
        };
        for path in paths {
            check(
                &format!("source file {path}"),
                hash(&self.files, path),
                hash(&other.files, path),
            );
        }
        out
    }
}

/// SHA-256 of `bytes`, first 16 hex digits.
pub fn short_hash(bytes: &[u8]) -> String {
    sha256_prefix(bytes, 16)
}

/// SHA-256 of `bytes`, its first `digits` hex digits (an even count up to 64).
pub fn sha256_prefix(bytes: &[u8], digits: usize) -> String {
    Sha256::digest(bytes)
        .iter()
        .take(digits / 2)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// This machine's name, for the lock's holder line and the provenance.
pub fn hostname() -> String {
    std::fs::read_to_string("/etc/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
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

/// Checks a resumed folder against this run and gives its row hashes; writes nothing.
pub fn check_identity(
    dir: &Path,
    identity: &FolderIdentity,
    resume: bool,
    has_rows: bool,
) -> Result<BTreeMap<String, String>, FolderError> {
    let path = dir.join(IDENTITY_FILE);
    if resume && path.exists() {
        let text = crate::input_file::read_text_capped(&path, crate::input_file::RESULT_CAP)
            .map_err(super::io_err(&path))?;
        let stored: FolderIdentity =
            serde_json::from_str(&text).map_err(|e| ExportError::Json {
                path: path.clone(),
                line: e.line() as u64,
                message: e.to_string(),
            })?;
        let differences = stored.differences(identity);
        if differences.is_empty() {
            return Ok(stored.rows);
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
    Ok(BTreeMap::new())
}

/// Locks held by this process, for [`release_held_locks`] (an exit that runs no destructor).
static HELD: std::sync::Mutex<Vec<LockCheck>> = std::sync::Mutex::new(Vec::new());

/// Removes every lock file this process still holds.
pub fn release_held_locks() {
    // try_lock: this runs from a signal or watchdog thread and must never wait.
    if let Ok(held) = HELD.try_lock() {
        held.iter().for_each(LockCheck::release);
    }
}

/// The folder's lock, held until dropped; the lock file goes with it.
#[derive(Debug)]
pub struct FolderLock(pub(crate) FileLock);

impl Drop for FolderLock {
    /// Leaves the held-locks list; the lock file then goes with the [`FileLock`].
    fn drop(&mut self) {
        if let Ok(mut held) = HELD.lock() {
            held.retain(|l| l != &self.0.check);
        }
    }
}

/// Takes the folder's lock ([`safe::take_lock`], tried briefly), or says who holds it.
pub fn lock(dir: &Path) -> Result<FolderLock, FolderError> {
    let me = format!(
        "pid {} on {} since {}",
        std::process::id(),
        hostname(),
        chrono::Utc::now().to_rfc3339()
    );
    let holder = match safe::take_lock(&dir.join(LOCK_FILE), Some(&me), 10)? {
        Taken::Lock(lock) => {
            if let Ok(mut held) = HELD.lock() {
                held.push(lock.check.clone());
            }
            return Ok(FolderLock(lock));
        }
        Taken::Busy(mut file) => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            if holder.trim().is_empty() {
                "holder unknown".into()
            } else {
                holder.trim().to_string()
            }
        }
        Taken::Replaced => "its lock file keeps being replaced".into(),
    };
    Err(FolderError::Locked {
        dir: dir.to_path_buf(),
        holder,
    })
}

/// Whether any result CSV of the folder has content.
pub fn holds_rows(dir: &Path) -> bool {
    [MEASUREMENTS_CSV, PRS_CSV, SAMPLES_CSV]
        .iter()
        .any(|f| std::fs::metadata(dir.join(f)).is_ok_and(|m| m.len() > 0))
}

/// `provenance.json` for the first run; `provenance-resume-N.json` for the N-th resume.
pub fn provenance_path(dir: &Path, resume: bool) -> PathBuf {
    let first = dir.join("provenance.json");
    if !resume || !first.exists() {
        return first;
    }
    (1..)
        .map(|n| dir.join(format!("provenance-resume-{n}.json")))
        .find(|p| !p.exists())
        .unwrap_or(first)
}
