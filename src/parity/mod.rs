//! Parity of the kernel twins: every OpenCL kernel file against its CUDA twin, which must have
//! the same kernels, parameters and algorithm text, differing only in how each API spells the
//! same thing. Both are normalised to one canonical form and diffed line by line, per kernel:
//!
//! 1. `lexer`: the text is lexed as C, so every mapping is token-aware (`threadIdx.x` never
//!    matches inside `my_threadIdx.x` or `s.threadIdx.x`).
//! 2. `constant`: the one spelling of constant memory that differs by design is paired away.
//! 3. `rewrite`: API spellings become the canonical (OpenCL) form, pointer address spaces
//!    dropped; each source line is rendered with one spacing rule, keeping its line number;
//!    each file is split into kernels and the text outside them, the pseudo-kernel
//!    `FILE_SCOPE` (macros such as `LAST_WARP_STEP` live there).
//! 4. `diff`: each kernel pair is diffed; a differing line passes only when the allow-list
//!    ([`load_allow_list`]) names it with a reason, and a kernel on one side only fails.
//!
//! The preludes define the same macros in each API's terms, so only their `#define`d names are
//! compared, apart from the APIs' own words a prelude redefines (`rewrite::is_api_word`).
//!
//! Normalisation is the same for both sides: a file in the other API's spelling would pass as
//! if it were correct; the compilers catch that, this check does not.

mod allow;
mod constant;
mod diff;
mod lexer;
mod report;
mod rewrite;

#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;

use crate::kernels::{stems, KernelSources};
use crate::rows::Api;

pub use allow::{load_allow_list, AllowEntry, ParityError};
pub use report::ParityReport;

use allow::mark_allowed;
use diff::diff_lines;
use lexer::defined_macros;
use report::{FileParity, KernelParity};
use rewrite::split_tokens;

/// The allow-list shipped with the crate (`kernels_parity_allow.txt`).
pub const EMBEDDED_ALLOW_LIST: &str = include_str!("../../kernels_parity_allow.txt");

/// The name of the pseudo-kernel holding a file's text outside every kernel.
const FILE_SCOPE: &str = "<file-scope>";

/// The stem of the prelude pair, compared by macro names instead of line by line.
const PRELUDE: &str = "prelude";

/// Checks every file pair of `sources`, with `allow` naming the intended differences.
pub fn check(sources: &KernelSources, allow: &[AllowEntry]) -> ParityReport {
    let mut used = vec![false; allow.len()];
    let mut files: Vec<FileParity> = stems()
        .into_iter()
        .map(|stem| compare_pair(sources, stem, allow, &mut used))
        .collect();
    // Entries naming a file that was not compared (only possible for hand-built entries) have
    // nowhere to be reported and are ignored.
    for (entry, _) in allow.iter().zip(&used).filter(|(_, u)| !**u) {
        if let Some(f) = files.iter_mut().find(|f| f.stem == entry.file) {
            f.unused_allow.push(entry.clone());
        }
    }
    ParityReport { files }
}

/// Reads and compares the pair of one stem; a side that cannot be read fails the pair.
fn compare_pair(
    sources: &KernelSources,
    stem: &str,
    allow: &[AllowEntry],
    used: &mut [bool],
) -> FileParity {
    match (
        sources.file(Api::OpenCl, stem),
        sources.file(Api::Cuda, stem),
    ) {
        (Ok(cl), Ok(cu)) if stem == PRELUDE => compare_preludes(&cl, &cu),
        (Ok(cl), Ok(cu)) => compare_file(stem, &cl, &cu, allow, used),
        (cl, cu) => FileParity {
            stem: stem.to_string(),
            error: Some(
                [cl.err(), cu.err()]
                    .into_iter()
                    .flatten()
                    .map(|e| e.to_string())
                    .collect::<Vec<_>>()
                    .join("; "),
            ),
            ..FileParity::default()
        },
    }
}

/// Compares the macro names the two preludes `#define`.
fn compare_preludes(cl: &str, cu: &str) -> FileParity {
    let shared = |text: &str| -> BTreeSet<String> {
        defined_macros(text)
            .into_iter()
            .filter(|m| !rewrite::is_api_word(m))
            .collect()
    };
    let (a, b) = (shared(cl), shared(cu));
    FileParity {
        stem: PRELUDE.to_string(),
        macros_only_in_opencl: a.difference(&b).cloned().collect(),
        macros_only_in_cuda: b.difference(&a).cloned().collect(),
        macros_shared: a.intersection(&b).count(),
        ..FileParity::default()
    }
}

/// Compares one kernel file pair; marks the allow entries it uses in `used`.
fn compare_file(
    stem: &str,
    cl: &str,
    cu: &str,
    allow: &[AllowEntry],
    used: &mut [bool],
) -> FileParity {
    let (cl, cu) = constant::pair(lexer::lex(cl), lexer::lex(cu));
    let (a, b) = (split_tokens(&cl), split_tokens(&cu));
    let mut fp = FileParity {
        stem: stem.to_string(),
        ..FileParity::default()
    };
    for sa in &a {
        match b.iter().find(|sb| sb.name == sa.name) {
            None => fp.only_in_opencl.push(sa.name.clone()),
            Some(sb) => {
                let mut diff = diff_lines(&sa.lines, &sb.lines);
                mark_allowed(&mut diff, allow, stem, &sa.name, used);
                fp.kernels.push(KernelParity {
                    name: sa.name.clone(),
                    diff,
                });
            }
        }
    }
    fp.only_in_cuda = b
        .iter()
        .filter(|sb| !a.iter().any(|sa| sa.name == sb.name))
        .map(|sb| sb.name.clone())
        .collect();
    fp
}
