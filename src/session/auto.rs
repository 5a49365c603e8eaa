//! `matvec/auto` made concrete before a side is planned: the shape rule's variant, work-group
//! size and group count replace the study's, so the side's rows name the algorithm that ran
//! (`variant`), with the launch shape the rule chose (`local_size`, `groups`).

use crate::backend::DeviceInfo;
use crate::study::Resolved;
use crate::workload::matvec_shapes;

/// `settings` with `auto` replaced by the rule's plan on `info`; other variants unchanged. A
/// group count the study set (or side A's, shared with side B) is kept.
pub(super) fn resolve(mut settings: Resolved, info: &DeviceInfo) -> Resolved {
    if let Some(plan) = matvec_shapes::plan_for(settings.variant, settings.size, info) {
        settings.variant = plan.algorithm.variant();
        settings.local = plan.local;
        settings.groups = settings.groups.or(Some(plan.groups));
    }
    settings
}
