//! The line diff of a kernel pair's normalised lines: `similar`'s Myers diff (a shortest edit
//! script, keeping a longest common subsequence), whose memory is linear in the input where a
//! table of every pair of lines would grow with the product of the lengths; kernel text from
//! `--kernels-dir` is user input.

use similar::{capture_diff_slices, Algorithm, DiffTag};

use super::rewrite::NormLine;
use crate::rows::Api;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct DiffLine {
    /// The side the line is on: OpenCL (`- cl`) or CUDA (`+ cu`).
    pub(super) api: Api,
    /// 1-based, in that side's file.
    pub(super) line: usize,
    pub(super) text: String,
    /// The allow-list's reason, when an entry names this difference.
    pub(super) allowed: Option<String>,
}

impl DiffLine {
    fn new(api: Api, l: &NormLine) -> DiffLine {
        DiffLine {
            api,
            line: l.line,
            text: l.text.clone(),
            allowed: None,
        }
    }
}

/// The lines of `a` (OpenCL) and `b` (CUDA) outside a longest common subsequence of their
/// texts, OpenCL lines before CUDA lines within each change.
pub(super) fn diff_lines(a: &[NormLine], b: &[NormLine]) -> Vec<DiffLine> {
    let old: Vec<&str> = a.iter().map(|l| l.text.as_str()).collect();
    let new: Vec<&str> = b.iter().map(|l| l.text.as_str()).collect();
    let mut out = Vec::new();
    // A change may come as several operations (a deletion, then an insertion, or a
    // replacement); its CUDA lines wait for its end so that they follow all its OpenCL lines.
    let mut added = Vec::new();
    for op in capture_diff_slices(Algorithm::Myers, &old, &new) {
        let (tag, in_a, in_b) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            out.append(&mut added);
            continue;
        }
        out.extend(a[in_a].iter().map(|l| DiffLine::new(Api::OpenCl, l)));
        added.extend(b[in_b].iter().map(|l| DiffLine::new(Api::Cuda, l)));
    }
    out.append(&mut added);
    out
}
