//! Tests of a tune's provenance: no GPU, no `nvidia-smi` (the GPU state is given).

use super::provenance::{of_tune, space_sha256};
use super::run::{Budget, EvalOptions};
use super::space::{space_def, Space, SpaceKind};
use super::TunePlan;
use crate::backend::DeviceInfo;
use crate::families::{FamilyId, Size};
use crate::kernels::KernelSources;
use crate::rows::StrategyKind;
use crate::session::provenance::GpuSnapshot;

fn device(api: &str, compute_units: u32) -> DeviceInfo {
    DeviceInfo {
        api: api.into(),
        name: "Test GPU".into(),
        driver_version: "580.1".into(),
        compute_units,
        max_work_group_size: 1024,
        ..DeviceInfo::default()
    }
}

fn plan(sources: &KernelSources, family: FamilyId) -> TunePlan<'_> {
    let def = space_def(family, "tuned", SpaceKind::Full).unwrap();
    TunePlan {
        def,
        size: Size::parse(def.size).unwrap(),
        strategies: vec![StrategyKind::Exhaustive, StrategyKind::Anneal],
        budget: Budget::default(),
        seed: 7,
        options: EvalOptions::default(),
        sources,
        watchdog: None,
        interrupted: None,
        timeout: None,
        progress: None,
    }
}

fn space_of(plan: &TunePlan, compute_units: u32) -> Space {
    Space::expand(plan.def, plan.size, &device("CUDA", compute_units)).unwrap()
}

#[test]
fn a_tune_provenance_carries_commit_command_line_devices_and_space_hash() {
    let sources = KernelSources::embedded();
    let plan = plan(&sources, FamilyId::Reduce);
    let space = space_of(&plan, 132);
    let (cl, cu) = (device("OpenCL", 132), device("CUDA", 132));
    let command_line: Vec<String> = ["clvscu", "tune", "reduce/tuned", "--seed", "7"]
        .map(String::from)
        .to_vec();
    let before = GpuSnapshot {
        query: "name, driver_version\nTest GPU, 580.1".into(),
        states: Vec::new(),
    };
    let p = of_tune(&plan, &space, &[&cl, &cu], &command_line, before);
    assert!(!p.git_commit.is_empty());
    assert!(!p.clvscu_version.is_empty() && !p.date_utc.is_empty());
    assert_eq!(p.command_line, command_line);
    assert!(p.gpu_query_before.contains("580.1"));
    let apis: Vec<&str> = p.devices.iter().map(|d| d.api.as_str()).collect();
    assert_eq!(apis, ["OpenCL", "CUDA"]);
    assert!(p.devices.iter().all(|d| d.driver == "580.1"));
    let t = p.tune.expect("a tune section");
    assert_eq!(
        (t.target.as_str(), t.family.as_str()),
        ("reduce/tuned", "reduce")
    );
    assert_eq!(t.size, plan.size.to_string());
    assert_eq!(t.strategies, ["exhaustive", "anneal"]);
    assert_eq!((t.points, t.invalid), (space.len(), space.invalid_count()));
    assert_eq!(t.space_sha256, space_sha256(&space));
    assert_eq!(t.space_sha256.len(), 64);
    assert_eq!(t.kernel_sha256.len(), 2);
    assert!(t.kernel_sha256.values().all(|h| h.len() == 12));
}

#[test]
fn the_space_hash_changes_when_the_space_changes() {
    let sources = KernelSources::embedded();
    let reduce = plan(&sources, FamilyId::Reduce);
    let base = space_sha256(&space_of(&reduce, 132));
    assert_eq!(base, space_sha256(&space_of(&reduce, 132)));
    // Other compute units: other group counts, so other configurations.
    assert_ne!(base, space_sha256(&space_of(&reduce, 114)));
    let matvec = plan(&sources, FamilyId::Matvec);
    assert_ne!(base, space_sha256(&space_of(&matvec, 132)));
    // A device limit that refuses some points leaves fewer configurations.
    let mut small = device("CUDA", 132);
    small.max_work_group_size = 256;
    let limited = Space::expand(reduce.def, reduce.size, &small).unwrap();
    assert_ne!(base, space_sha256(&limited));
}
