//! What a run is asked to do and with what: the study and its folder, the backends of its
//! two sides, and the errors that end it.

use std::path::PathBuf;

use crate::backend::{DeviceInfo, Runtime};
use crate::export::folder::FolderError;
use crate::export::ExportError;
use crate::study::Study;

/// The backends of a run: side A, and side B when a PR can be formed.
pub struct Sides {
    pub a: Box<dyn Runtime>,
    pub b: Option<Box<dyn Runtime>>,
}

impl Sides {
    pub fn infos(&self) -> Vec<&DeviceInfo> {
        std::iter::once(self.a.info())
            .chain(self.b.as_ref().map(|b| b.info()))
            .collect()
    }
}

/// What to run and where to put it.
pub struct RunPlan<'a> {
    pub study: Study,
    pub out: PathBuf,
    pub resume: bool,
    /// Repeat the study this many times (a soak); 1 is an ordinary run.
    pub passes: u32,
    /// The command line, for the provenance.
    pub command_line: Vec<String>,
    /// The study file of a command-line run, saved as `study.toml` so it can be repeated.
    pub study_text: Option<String>,
    pub context: super::RunContext<'a>,
}

/// Errors that end a run; every finished comparison is on disk all the same.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("cannot use output directory {}: {source}", dir.display())]
    Output {
        dir: PathBuf,
        #[source]
        source: ExportError,
    },
    #[error(transparent)]
    Folder(#[from] FolderError),
    #[error(transparent)]
    Export(#[from] ExportError),
    /// A comparison refused before the folder is touched (study file and comparison escaped).
    #[error(
        "{}: {}: {reason}",
        crate::terminal::printable(.study),
        crate::terminal::printable(.comparison)
    )]
    Refused {
        study: String,
        comparison: String,
        reason: String,
    },
}
