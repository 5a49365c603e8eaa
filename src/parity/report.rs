//! The results of the check, per kernel, per file pair and overall, and their rendering.

use std::fmt::Write as _;

use super::allow::AllowEntry;
use super::diff::DiffLine;
use super::PRELUDE;
use crate::kernels::file_name;
use crate::rows::Api;

/// A kernel (or the `FILE_SCOPE` pseudo-kernel) present in both twins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct KernelParity {
    pub(super) name: String,
    /// The differing lines, OpenCL ones before CUDA ones within a change; empty when the
    /// normalised texts match.
    pub(super) diff: Vec<DiffLine>,
}

impl KernelParity {
    pub(super) fn identical(&self) -> bool {
        self.diff.is_empty()
    }

    pub(super) fn passed(&self) -> bool {
        self.diff.iter().all(|d| d.allowed.is_some())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct FileParity {
    pub(super) stem: String,
    /// Why a side could not be read (the file then fails).
    pub(super) error: Option<String>,
    /// Kernels defined only in the OpenCL file (always a failure).
    pub(super) only_in_opencl: Vec<String>,
    /// Kernels defined only in the CUDA file (always a failure).
    pub(super) only_in_cuda: Vec<String>,
    /// Kernels in both files, in OpenCL order, then `FILE_SCOPE`. Empty for the prelude.
    pub(super) kernels: Vec<KernelParity>,
    /// The prelude only: macro names `#define`d by the OpenCL prelude alone (a failure).
    pub(super) macros_only_in_opencl: Vec<String>,
    /// The prelude only: macro names `#define`d by the CUDA prelude alone (a failure).
    pub(super) macros_only_in_cuda: Vec<String>,
    /// The prelude only: how many macro names both define.
    pub(super) macros_shared: usize,
    /// Allow-list entries for this file that matched no difference (stale; not a failure).
    pub(super) unused_allow: Vec<AllowEntry>,
}

impl FileParity {
    pub(super) fn passed(&self) -> bool {
        self.error.is_none()
            && self.only_in_opencl.is_empty()
            && self.only_in_cuda.is_empty()
            && self.macros_only_in_opencl.is_empty()
            && self.macros_only_in_cuda.is_empty()
            && self.kernels.iter().all(KernelParity::passed)
    }
}

/// The parity of every file pair, prelude first.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParityReport {
    pub(super) files: Vec<FileParity>,
}

#[derive(Default)]
struct Tally {
    identical: usize,
    allowed: usize,
    failures: usize,
}

impl ParityReport {
    pub fn passed(&self) -> bool {
        self.files.iter().all(FileParity::passed)
    }

    /// A human-readable report: per file, per kernel "identical", allowed differences with
    /// their reasons, or the failing diff lines marked `- cl` / `+ cu`.
    pub fn render(&self) -> String {
        let mut s = String::from(
            "Kernel parity: OpenCL twins against CUDA twins, after normalising API spellings\n",
        );
        let mut tally = Tally::default();
        for f in &self.files {
            render_file(&mut s, f, &mut tally);
        }
        let verdict = if self.passed() { "PASS" } else { "FAIL" };
        let _ = writeln!(
            s,
            "\nResult: {verdict}: {} identical, {} with allowed differences only, {} failure(s)",
            tally.identical, tally.allowed, tally.failures
        );
        s
    }
}

// Writing to a String cannot fail, hence the ignored `fmt::Result`s below.

fn render_file(s: &mut String, f: &FileParity, tally: &mut Tally) {
    let _ = writeln!(s, "\n{}", f.stem);
    if let Some(e) = &f.error {
        tally.failures += 1;
        let _ = writeln!(s, "  FAIL       {e}");
        return;
    }
    if f.stem == PRELUDE {
        let sides = [&f.macros_only_in_opencl, &f.macros_only_in_cuda];
        if sides.iter().all(|names| names.is_empty()) {
            let _ = writeln!(
                s,
                "  identical  macro names: both preludes #define the same {}",
                f.macros_shared
            );
        }
        let what = |name: &str| format!("macro {name} is #defined");
        render_only_in(s, f, sides, what, &mut tally.failures);
    }
    for k in &f.kernels {
        render_kernel(s, k, tally);
    }
    let sides = [&f.only_in_opencl, &f.only_in_cuda];
    render_only_in(s, f, sides, |name| format!("{name}:"), &mut tally.failures);
    for e in &f.unused_allow {
        let _ = writeln!(
            s,
            "  note       allow-list line {} matches no difference (stale): {}:{}: {}",
            e.line, e.file, e.kernel, e.text
        );
    }
}

fn render_kernel(s: &mut String, k: &KernelParity, tally: &mut Tally) {
    if k.identical() {
        tally.identical += 1;
        let _ = writeln!(s, "  identical  {}", k.name);
        return;
    }
    let open = k.diff.iter().filter(|d| d.allowed.is_none()).count();
    if open == 0 {
        tally.allowed += 1;
        let _ = writeln!(
            s,
            "  allowed    {}: {} differing line(s), all allowed",
            k.name,
            k.diff.len()
        );
    } else {
        tally.failures += 1;
        let _ = writeln!(
            s,
            "  FAIL       {}: {} differing line(s) not allowed",
            k.name, open
        );
    }
    for d in &k.diff {
        let mark = match d.api {
            Api::OpenCl => "- cl",
            Api::Cuda => "+ cu",
        };
        let _ = write!(s, "      {mark} L{:<4} {}", d.line, d.text);
        if let Some(reason) = &d.allowed {
            let _ = write!(s, "    [allowed: {reason}]");
        }
        s.push('\n');
    }
}

/// A failure for each name of `sides` (OpenCL's, CUDA's), worded by `what`, naming the file
/// of the one side that has it.
fn render_only_in(
    s: &mut String,
    f: &FileParity,
    sides: [&Vec<String>; 2],
    what: impl Fn(&str) -> String,
    failures: &mut usize,
) {
    for (names, api) in sides.into_iter().zip([Api::OpenCl, Api::Cuda]) {
        for name in names {
            *failures += 1;
            let _ = writeln!(
                s,
                "  FAIL       {} only in {} ({})",
                what(name),
                api.label(),
                file_name(api, &f.stem)
            );
        }
    }
}
