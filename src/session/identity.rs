//! What a run folder's identity (`folder.json`) says of a run: its study, devices, passes,
//! binary and every source it reads, each as a hash, so that a resume of another experiment
//! is refused by name. Comparing, reading and writing it is the folder's
//! ([`crate::export::folder`]).

use std::collections::BTreeMap;

use super::provenance::GIT_COMMIT;
use crate::backend::DeviceInfo;
use crate::export::folder::{short_hash, FolderIdentity};
use crate::kernels::KernelSources;
use crate::rows::Api;
use crate::study::Study;

/// What a run of `study` over `sides` makes of its folder (no row hashes yet).
pub fn of(
    study: &Study,
    sides: &[&DeviceInfo],
    passes: u32,
    sources: &KernelSources,
) -> FolderIdentity {
    let (kernels, kernel_files) = kernel_hashes(sources);
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
        kernels,
        kernel_files,
        rows: BTreeMap::new(),
        files: file_hashes(),
    }
}

/// The hash of everything a study resolves to: the same for one study file and binary.
pub fn study_hash(study: &Study) -> String {
    // What the study expects a driver to refuse changes no measurement: left out, so that
    // adding or dropping an expectation keeps a folder resumable.
    let measured: Vec<_> = study
        .comparisons
        .iter()
        .map(|c| crate::study::Comparison {
            expected_refusal: None,
            ..c.clone()
        })
        .collect();
    let text = format!("{}\n{:?}", study.name, measured);
    short_hash(text.as_bytes())
}

/// The hash of all kernel files on both APIs (a missing one counts as empty), and each one's.
fn kernel_hashes(sources: &KernelSources) -> (String, BTreeMap<String, String>) {
    let (mut text, mut files) = (String::new(), BTreeMap::new());
    for stem in crate::kernels::stems() {
        for api in [Api::OpenCl, Api::Cuda] {
            let hash = super::provenance::source_hash(sources, api, stem);
            text.push_str(&format!("{stem} {api} {hash}\n"));
            files.insert(crate::kernels::file_name(api, stem), hash);
        }
    }
    (short_hash(text.as_bytes()), files)
}

/// Every other source file this run reads from disk (a study's own kernel pairs, the rule
/// tables `CLVSCU_MATVEC_RULES` names) by path, with its hash; `unreadable` for a file that
/// cannot be read (the run that needs it stops with the reason).
pub fn file_hashes() -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = crate::kernels::files_read()
        .into_iter()
        .map(|(path, text)| (path, short_hash(text.as_bytes())))
        .collect();
    use crate::families::rule_tables as rules;
    if let Some(path) = std::env::var_os(rules::RULES_ENV) {
        for file in rules::table_files(std::path::Path::new(&path)).unwrap_or_default() {
            let hash = crate::input_file::read_capped(&file, crate::input_file::STUDY_CAP)
                .map_or("unreadable".to_string(), |b| short_hash(&b));
            out.insert(file.display().to_string(), hash);
        }
    }
    out
}
