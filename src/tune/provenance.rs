//! Where a tune's numbers came from: what `clvscu run` records too (binary, command line,
//! host, devices and drivers, GPU state, kernel hashes) and what this tune searched.

use sha2::{Digest, Sha256};

use super::space::Space;
use super::TunePlan;
use crate::backend::DeviceInfo;
use crate::export::json::{Provenance, TuneProvenance};
use crate::rows::Api;
use crate::session::provenance::{common, source_hash, GpuSnapshot};

/// The provenance file of a tune's output folder: the name `clvscu run` gives its own, so a
/// tool that reads one folder's provenance reads the other's.
pub const PROVENANCE_FILE: &str = "provenance.json";

/// SHA-256 of every valid configuration's text, joined by newlines: two tunes with the same
/// hash searched the same configurations in the same order (the groups follow the device's
/// compute units, so the hash does too).
pub fn space_sha256(space: &Space) -> String {
    let text = (0..space.len())
        .map(|i| space.config(i).text())
        .collect::<Vec<_>>()
        .join("\n");
    format!("{:x}", Sha256::digest(text.as_bytes()))
}

pub fn of_tune(
    plan: &TunePlan,
    space: &Space,
    devices: &[&DeviceInfo],
    command_line: &[String],
    before: GpuSnapshot,
) -> Provenance {
    let mut p = common(devices, plan.sources, command_line, before);
    // The tuned kernel file's source hash on each API, as a run's notes spell it.
    let file = space.def.family.file();
    let hash = |api: Api| (api.label().into(), source_hash(plan.sources, api, file));
    let kernel_sha256 = [hash(Api::OpenCl), hash(Api::Cuda)].into();
    p.tune = Some(TuneProvenance {
        target: plan.target(),
        family: space.def.family.name().into(),
        variant: space.def.variant.into(),
        size: space.size.to_string(),
        strategies: plan.strategies.iter().map(ToString::to_string).collect(),
        seed: plan.seed,
        points: space.len(),
        invalid: space.invalid_count(),
        space_sha256: space_sha256(space),
        kernel_sha256,
    });
    p
}
