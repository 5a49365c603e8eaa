//! The tuner's cache on disk: one entry per evaluated configuration, keyed by device name,
//! driver version, API, the hash of the program text the compiler receives, the variant, the
//! problem size and the parameters. A later run reuses it (resume = reuse). Written whole and
//! atomically after every new entry, so a crash keeps everything finished before it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::TuneError;
use crate::export::write_atomic;

/// Device-event times of the timed repetitions, or why the configuration failed. The status
/// word (`status()`) is the variant's name in kebab case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(tag = "status", rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum Outcome {
    #[strum(serialize = "ok")]
    Timed {
        times: Vec<f64>,
    },
    BuildFailed {
        message: String,
    },
    LaunchFailed {
        message: String,
    },
    VerifyFailed {
        message: String,
    },
    /// Times no device can give (non-positive, not finite, shorter than any launch, or
    /// implying more than the device's peak): never scored, never the best.
    Implausible {
        message: String,
    },
}

impl Outcome {
    pub fn status(&self) -> &'static str {
        self.into()
    }

    pub fn times(&self) -> Option<&[f64]> {
        match self {
            Outcome::Timed { times } if !times.is_empty() => Some(times),
            _ => None,
        }
    }

    pub fn message(&self) -> &str {
        match self {
            Outcome::Timed { .. } => "",
            Outcome::BuildFailed { message }
            | Outcome::LaunchFailed { message }
            | Outcome::VerifyFailed { message }
            | Outcome::Implausible { message } => message,
        }
    }
}

/// What identifies a measurement besides its parameters: device, driver, API, source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    pub text: String,
}

impl Scope {
    fn key(&self, config: &str) -> String {
        format!("{} | {config}", self.text)
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    entries: BTreeMap<String, Outcome>,
    /// So that an entry edited by hand is told from one measured.
    #[serde(default)]
    sums: BTreeMap<String, String>,
    /// Entries dropped on reading for want of a checksum.
    #[serde(skip)]
    unchecked: usize,
}

/// SHA-256 (first 16 hex digits) of an entry's key and outcome as the file holds them.
fn checksum(key: &str, outcome: &Outcome) -> String {
    let text = format!(
        "{key}\n{}",
        serde_json::to_string(outcome).unwrap_or_default()
    );
    crate::export::folder::short_hash(text.as_bytes())
}

impl File {
    /// Empty when missing. A wrong checksum refuses the file; an entry without one (an older
    /// cache) is dropped, to be measured again.
    fn read(path: &Path) -> Result<File, TuneError> {
        let err = |message| cache_error(path, message);
        let mut file: File =
            match crate::input_file::read_text_capped(path, crate::input_file::RESULT_CAP) {
                Ok(text) => serde_json::from_str(&text).map_err(|e| err(e.to_string()))?,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => File::default(),
                Err(e) => return Err(err(e.to_string())),
            };
        let sums = std::mem::take(&mut file.sums);
        let before = file.entries.len();
        file.entries.retain(|k, _| sums.contains_key(k));
        file.unchecked = before - file.entries.len();
        for (key, outcome) in &file.entries {
            if sums[key] != checksum(key, outcome) {
                return Err(err(format!(
                    "entry '{key}' does not match its checksum (edited or corrupted); delete \
                     the entry, or the file, to measure it again"
                )));
            }
        }
        file.sums = sums;
        file.sums.retain(|k, _| file.entries.contains_key(k));
        Ok(file)
    }
}

/// One JSON file, which two tunes may share: each save takes the file's lock and merges what
/// the other added since.
pub struct Cache {
    path: Option<PathBuf>,
    file: File,
}

impl Cache {
    pub fn open(path: &Path) -> Result<Cache, TuneError> {
        let _held = lock(path)?;
        Ok(Cache {
            path: Some(path.to_path_buf()),
            file: File::read(path)?,
        })
    }

    #[cfg(test)]
    pub fn in_memory() -> Cache {
        Cache {
            path: None,
            file: File::default(),
        }
    }

    pub fn get(&self, scope: &Scope, config: &str) -> Option<&Outcome> {
        self.file.entries.get(&scope.key(config))
    }

    pub fn len(&self) -> usize {
        self.file.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.file.entries.is_empty()
    }

    /// Entries without a checksum (an older clvscu's), dropped on opening.
    pub fn unchecked(&self) -> usize {
        self.file.unchecked
    }

    pub fn put(&mut self, scope: &Scope, config: &str, outcome: Outcome) -> Result<(), TuneError> {
        let key = scope.key(config);
        self.file.sums.insert(key.clone(), checksum(&key, &outcome));
        self.file.entries.insert(key, outcome);
        self.save()
    }

    /// Under the file's lock: the union with what another tune added meanwhile.
    fn save(&mut self) -> Result<(), TuneError> {
        let Some(path) = self.path.clone() else {
            return Ok(());
        };
        let err = |message| cache_error(&path, message);
        let _held = lock(&path)?;
        let on_disk = File::read(&path)?;
        for (key, outcome) in on_disk.entries {
            if !self.file.entries.contains_key(&key) {
                self.file
                    .sums
                    .insert(key.clone(), on_disk.sums[&key].clone());
                self.file.entries.insert(key, outcome);
            }
        }
        let text = serde_json::to_string(&self.file).map_err(|e| err(e.to_string()))?;
        write_atomic(&path, text.as_bytes()).map_err(|e| err(e.to_string()))
    }
}

/// `.NAME.lock` beside the cache, removed when released.
fn lock(path: &Path) -> Result<crate::export::safe::FileLock, TuneError> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let lock = path.with_file_name(format!(".{name}.lock"));
    crate::export::create_parent_dirs(&lock)
        .and_then(|_| crate::export::safe::lock_exclusive(&lock))
        .map_err(|e| cache_error(path, e.to_string()))
}

fn cache_error(path: &Path, message: String) -> TuneError {
    TuneError::Cache {
        path: path.to_path_buf(),
        message,
    }
}
