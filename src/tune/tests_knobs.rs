//! Tests of the define and variant knobs: SGEMM's tile sizes and SpMV's read path and lanes.

use super::space::{space_def, Space, SpaceKind};
use crate::backend::DeviceInfo;
use crate::families::{FamilyId, Size};
use crate::rows::Api;

pub(super) fn gpu() -> DeviceInfo {
    DeviceInfo {
        compute_units: 132,
        max_work_group_size: 1024,
        local_mem_bytes: 48 * 1024,
        ..DeviceInfo::default()
    }
}

/// The space of `family/name` expanded at its own size on `device`.
pub(super) fn space(family: FamilyId, name: &str, kind: SpaceKind, device: &DeviceInfo) -> Space {
    let def = space_def(family, name, kind).unwrap();
    Space::expand(def, Size::parse(def.size).unwrap(), device).unwrap()
}

#[test]
fn the_sgemm_space_counts_untileable_points_by_name_and_derives_the_launch() {
    let s = space(FamilyId::Sgemm, "blocked", SpaceKind::Full, &gpu());
    assert_eq!((s.len(), s.invalid_count()), (12, 4), "{:?}", s.invalid);
    assert_eq!(s.invalid["tile-loads"], 4);
    for i in 0..s.len() {
        let c = s.config(i);
        let (bm, bn, tm, tn) = (
            c.define("SG_BM").unwrap(),
            c.define("SG_BN").unwrap(),
            c.define("SG_TM").unwrap(),
            c.define("SG_TN").unwrap(),
        );
        assert_eq!(c.local, (bm / tm) * (bn / tn), "{}", c.text());
        assert_eq!(c.groups, (4096 / bm) * (4096 / bn), "{}", c.text());
    }
    // The 512 work-item tiling is kept: NVIDIA's OpenCL refuses it when it builds.
    assert!((0..s.len()).any(|i| s.config(i).local == 512));
}

#[test]
fn tile_defines_reach_both_compilers_alike() {
    let s = space(FamilyId::Sgemm, "blocked", SpaceKind::Full, &gpu());
    let c = s.config(0);
    let (cl, cu) = (c.side(Api::OpenCl), c.side(Api::Cuda));
    assert_eq!(cl.defines, cu.defines);
    for name in ["SG_BM", "SG_BN", "SG_BK", "SG_TM", "SG_TN"] {
        let want = c.define(name).unwrap().to_string();
        assert!(
            cl.all_defines()
                .iter()
                .any(|(k, v)| k == name && *v == want),
            "{name} missing from {:?}",
            cl.all_defines()
        );
    }
    assert!(c.text().contains("SG_BM=") && c.knobs_text().contains("SG_BK="));
    // The work-group size the tiling implies is the one compiled in (the kernel checks it).
    assert!(cl
        .all_defines()
        .contains(&("WG_SIZE".to_string(), c.local.to_string())));
}

#[test]
fn device_limits_refuse_tilings_before_anything_runs() {
    let mut small = gpu();
    small.local_mem_bytes = 16 * 1024;
    small.max_work_group_size = 256;
    let s = space(FamilyId::Sgemm, "blocked", SpaceKind::Full, &small);
    // A 128-row tile at K-step 16 stages 4 x 16 x (128 + 4 + 128) = 16640 bytes; the 512
    // tiling is too large.
    assert!(s.invalid["local-memory"] > 0, "{:?}", s.invalid);
    assert!(s.invalid["device-local"] > 0, "{:?}", s.invalid);
    // A 64-row tile at K-step 16 stages 4 x 16 x (64 + 4 + 128) = 12544 bytes: it stays.
    assert!((0..s.len())
        .map(|i| s.config(i))
        .all(|c| c.define("SG_BK") == Some(8) || c.define("SG_BM") == Some(64)));
    assert!((0..s.len()).any(|i| s.config(i).define("SG_BK") == Some(16)));
}

#[test]
fn the_spmv_space_chooses_read_paths_and_lanes() {
    let s = space(FamilyId::Spmv, "vector", SpaceKind::Full, &gpu());
    assert_eq!((s.len(), s.invalid_count()), (18, 0));
    let mut paths: Vec<&str> = (0..s.len())
        .map(|i| s.variant_of(&s.config(i)).name)
        .collect();
    paths.dedup();
    assert_eq!(paths, ["vector", "vector-ro", "vector-tex"]);
    let c = s.config(s.len() - 1);
    assert_eq!(c.variant, Some("vector-tex"));
    assert_eq!(c.define("SPMV_LANES"), Some(32));
    assert_eq!((c.local, c.groups), (256, 32 * 132));
    assert!(
        c.text().starts_with("variant=vector-tex local=256"),
        "{}",
        c.text()
    );
    assert!(c
        .side(Api::Cuda)
        .all_defines()
        .contains(&("SPMV_LANES".to_string(), "32".to_string())));
    // Neighbours step one knob: the read path is a knob like the others.
    let names: Vec<String> = s
        .neighbours(0)
        .iter()
        .map(|&j| s.config(j).text())
        .collect();
    assert!(
        names.iter().any(|t| t.starts_with("variant=vector-ro")),
        "{names:?}"
    );
}

#[test]
fn the_tuned_study_carries_variant_and_defines() {
    let s = space(FamilyId::Spmv, "vector", SpaceKind::Small, &gpu());
    let c = s.config(s.len() - 1);
    let toml = super::output::side_toml(&c);
    assert!(toml.contains("variant = \"vector-tex\""), "{toml}");
    assert!(toml.contains("defines = { SPMV_LANES = \"32\" }"), "{toml}");
}

/// SGEMM's waves space: a register ceiling is a knob of both second stages, kept out of the
/// search (and counted by name) on a device whose second stage takes no options, and spelt in
/// a configuration's key only where it is set (so older spaces keep their keys).
#[test]
fn the_register_ceiling_reaches_both_second_stages_where_they_take_it() {
    let nvidia = DeviceInfo {
        api: Api::OpenCl.label().into(),
        vendor: "NVIDIA Corporation".into(),
        ..gpu()
    };
    let s = space(FamilyId::Sgemm, "blocked-waves", SpaceKind::Full, &nvidia);
    assert_eq!((s.len(), s.invalid_count()), (16, 0), "{:?}", s.invalid);
    let capped: Vec<_> = (0..s.len())
        .map(|i| s.config(i))
        .filter(|c| c.max_registers == 128)
        .collect();
    assert_eq!(capped.len(), 8);
    for c in &capped {
        assert!(c.text().ends_with(" registers=128"), "{}", c.text());
        // The evaluations' knobs column tells a capped point from the same tiling uncapped.
        assert!(
            c.knobs_text().ends_with(";registers=128"),
            "{}",
            c.knobs_text()
        );
        for api in [Api::OpenCl, Api::Cuda] {
            assert_eq!(c.side(api).jit.max_registers, Some(128));
        }
        assert_eq!(
            c.groups,
            (2048 / c.define("SG_BM").unwrap()) * (2048 / c.define("SG_BN").unwrap())
        );
    }
    let free = (0..s.len())
        .map(|i| s.config(i))
        .find(|c| c.max_registers == 0)
        .unwrap();
    assert!(!free.text().contains("registers"), "{}", free.text());
    assert_eq!(free.side(Api::Cuda).jit.max_registers, None);
    // A CPU OpenCL (PoCL) has no second-stage options: the capped half is refused by name;
    // CUDA always takes them.
    let pocl = DeviceInfo {
        api: Api::OpenCl.label().into(),
        vendor: "The pocl project".into(),
        ..gpu()
    };
    let s = space(FamilyId::Sgemm, "blocked-waves", SpaceKind::Full, &pocl);
    assert_eq!((s.len(), s.invalid["second-stage-options"]), (8, 8));
    let cuda = DeviceInfo {
        api: Api::Cuda.label().into(),
        ..gpu()
    };
    assert_eq!(
        space(FamilyId::Sgemm, "blocked-waves", SpaceKind::Full, &cuda).len(),
        16
    );
    // The tuned study keeps the ceiling: re-measuring a best reruns what was measured.
    let toml = super::output::side_toml(&capped[0]);
    assert!(toml.ends_with("jit = { max_registers = 128 }\n"), "{toml}");
    let study = format!(
        "name = \"t\"\n[defaults]\nfamily = \"sgemm\"\nvariant = \"blocked\"\nsize = \"2048\"\n\
         [[comparison]]\nname = \"c\"\n{toml}"
    );
    let parsed = crate::study::parse(&study, "t.toml").unwrap();
    let a = &parsed.comparisons[0].a;
    assert_eq!((a.jit.max_registers, a.local), (Some(128), capped[0].local));
}
