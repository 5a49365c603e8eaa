//! The tuner's cache on disk: one entry per evaluated configuration, keyed by device name,
//! driver version, API, the hash of the program text the compiler receives, the variant, the
//! problem size and the parameters. A later run reuses it (resume = reuse), so no
//! configuration is measured twice. Written whole and atomically after every new entry, so a
//! crash keeps everything finished before it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::TuneError;
use crate::backend::{Api, DeviceInfo};
use crate::export::write_atomic;
use crate::kernels::KernelSources;

/// What one evaluation gave: device-event times of the timed repetitions, or why it failed
/// (a failed configuration is recorded, never timed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Outcome {
    Timed { times: Vec<f64> },
    BuildFailed { message: String },
    LaunchFailed { message: String },
    VerifyFailed { message: String },
}

impl Outcome {
    pub fn status(&self) -> &'static str {
        match self {
            Outcome::Timed { .. } => "ok",
            Outcome::BuildFailed { .. } => "build-failed",
            Outcome::LaunchFailed { .. } => "launch-failed",
            Outcome::VerifyFailed { .. } => "verify-failed",
        }
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
            | Outcome::VerifyFailed { message } => message,
        }
    }
}

/// What identifies a measurement besides its parameters: device, driver, API and source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    pub text: String,
}

impl Scope {
    /// The scope of `family_file`'s program on `device`, for `target` (`family/variant`) at
    /// `size`. The hash covers the prelude and the kernel file as the compiler receives them.
    pub fn of(
        device: &DeviceInfo,
        api: Api,
        sources: &KernelSources,
        family_file: &str,
        target: &str,
        size: &str,
    ) -> Result<Scope, TuneError> {
        let program = sources.program(api, family_file)?;
        let digest = Sha256::digest(program.as_bytes());
        let hash: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
        Ok(Scope {
            text: format!(
                "{} | {} | {} | {hash} | {target} | {size}",
                device.name, device.driver_version, api
            ),
        })
    }

    fn key(&self, config: &str) -> String {
        format!("{} | {config}", self.text)
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    entries: BTreeMap<String, Outcome>,
}

/// The cache, loaded from and saved to one JSON file.
pub struct Cache {
    path: Option<PathBuf>,
    file: File,
}

impl Cache {
    /// The cache at `path`, empty if the file does not exist yet.
    pub fn open(path: &Path) -> Result<Cache, TuneError> {
        let file = match crate::input_file::read_text_capped(path, crate::input_file::RESULT_CAP) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| TuneError::Cache {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => File::default(),
            Err(e) => {
                return Err(TuneError::Cache {
                    path: path.to_path_buf(),
                    message: e.to_string(),
                })
            }
        };
        Ok(Cache {
            path: Some(path.to_path_buf()),
            file,
        })
    }

    /// A cache that lives in memory only (tests).
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

    /// Record an outcome and write the file.
    pub fn put(&mut self, scope: &Scope, config: &str, outcome: Outcome) -> Result<(), TuneError> {
        self.file.entries.insert(scope.key(config), outcome);
        self.save()
    }

    fn save(&self) -> Result<(), TuneError> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let text = serde_json::to_string(&self.file).map_err(|e| TuneError::Cache {
            path: path.clone(),
            message: e.to_string(),
        })?;
        write_atomic(path, text.as_bytes()).map_err(|e| TuneError::Cache {
            path: path.clone(),
            message: e.to_string(),
        })
    }
}
