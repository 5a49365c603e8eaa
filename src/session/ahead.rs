//! Programs built ahead: builds one at a time were the largest phase of a GPU sweep, so each
//! stretch of comparisons has its programs built at once on each side, from the requests a
//! comparison's own build makes; one that fails ahead is built again, and reported, there.

use crate::backend::{CompileRequest, Runtime};
use crate::families::exec::compile_request;
use crate::kernels::KernelSources;
use crate::rows::{ProgramSource, Side};
use crate::study::Comparison;

/// Comparisons a stretch covers per thread of the pool: enough to keep every thread busy,
/// few enough that a run stopped early (a cap, Ctrl-C) has built little it never used.
const COMPARISONS_PER_THREAD: usize = 2;

pub(super) fn stretch() -> usize {
    COMPARISONS_PER_THREAD * rayon::current_num_threads().max(1)
}

/// Builds ahead the programs of `comparisons` on `a` and `b`; how many were built.
pub(super) fn build_ahead(
    comparisons: &[&Comparison],
    a: &mut dyn Runtime,
    b: Option<&mut dyn Runtime>,
    sources: &KernelSources,
) -> usize {
    let mut wanted_a = Vec::new();
    let mut settings_b = Vec::new();
    for c in comparisons {
        let plan_a = super::side_plan(Side::A, a, c.a.clone());
        let groups_a = plan_a.config.shape.groups;
        wanted_a.extend(request(plan_a, sources));
        settings_b.push(super::settings_b(c, groups_a));
    }
    let mut built = a.prebuild(&wanted_a);
    if let Some(b) = b {
        let wanted_b: Vec<CompileRequest> = settings_b
            .into_iter()
            .filter_map(|settings| request(super::side_plan(Side::B, b, settings), sources))
            .collect();
        built += b.prebuild(&wanted_b);
    }
    built
}

/// The request a comparison's side will build, where it builds its own program.
fn request(plan: super::SidePlan, sources: &KernelSources) -> Option<CompileRequest> {
    let own = plan.settings.program == ProgramSource::Own;
    let file = super::kernel_file(&plan.settings).filter(|_| own)?;
    compile_request(plan.backend.api(), sources, file, &plan.config).ok()
}
