//! A rule variant (`matvec/auto`) made concrete before a side is planned: the rule's variant,
//! work-group size and group count replace the study's, so the rows name what ran (`variant`,
//! `local_size`, `groups`) and why (`-DMV_AUTO_RULE=table`, `hand` or `hand_fallback` in `flags`).

use crate::backend::{DeviceInfo, LaunchShape};
use crate::kernels::KernelSources;
use crate::study::Resolved;

/// `settings` with `auto` replaced by the rule's plan on `info`, keeping a group count set.
pub(super) fn resolve(mut settings: Resolved, info: &DeviceInfo) -> Resolved {
    let family = settings.variant.family.family();
    if let Some(plan) = family.rule_plan(settings.variant, settings.size, info) {
        settings.variant = plan.variant;
        settings.local = plan.local;
        settings.groups = settings.groups.or(Some(plan.groups));
        // Where the choice came from, in the row's flags column (the same on both sides, and
        // no kernel reads it): a measured table, or the hand rule and why.
        let (name, value) = plan.define;
        settings.defines.insert(name.into(), value.into());
    }
    settings
}

/// `fill/1d-auto`: the work-group size the runtime picks, in the side's shape so its rows say
/// what ran: CUDA's occupancy calculator's (the grid rounded up over N), or 0 in 0 groups on
/// OpenCL, whose runtime picks at enqueue (NULL) unsaid. A failed build is `prepare`'s to report.
pub(super) fn runtime_local(plan: &mut super::measure::SidePlan, sources: &KernelSources) {
    let variant = plan.settings.variant;
    let family = variant.family.family();
    if !family.leaves_local_to_runtime(variant) {
        return;
    }
    let Ok(chosen) = family.runtime_local(plan.backend, sources, variant, &plan.config) else {
        return;
    };
    let n = plan.settings.size.elements();
    let (groups, local) = chosen.map_or((0, 0), |l| (n.div_ceil(u64::from(l)) as u32, l));
    plan.settings.local = local;
    plan.settings.groups = Some(groups);
    plan.config.shape = LaunchShape::linear(groups, local);
}
