//! The `shapes` study: it covers every aspect ratio at sizes in and beyond the L2 cache, with
//! the read kernel and the reductions beside; a test-size copy of it runs and verifies on
//! OpenCL (PoCL) and on the fake backend, and every `auto` row names the algorithm that ran.

mod common;

use std::path::Path;

use assert_cmd::Command;
use clvscu::backend::opencl;
use clvscu::export::csv::read_rows;
use clvscu::families::{FamilyId, Size};
use clvscu::rows::{MeasurementRow, Status};
use clvscu::study::{self, Study};

const ALGORITHMS: [&str; 6] = [
    "row-item",
    "row-slice",
    "row-warp",
    "row-group",
    "split-k",
    "split-wide",
];

fn shapes() -> Study {
    study::load("shapes").expect("the shapes study parses")
}

fn matrices(s: &Study) -> Vec<Size> {
    let mut out: Vec<Size> = Vec::new();
    for c in &s.comparisons {
        if c.a.family == FamilyId::Matvec && !out.contains(&c.a.size) {
            out.push(c.a.size);
        }
    }
    out
}

#[test]
fn the_study_spans_every_aspect_ratio_in_and_beyond_l2() {
    let s = shapes();
    let m = matrices(&s);
    let bytes = |z: &Size| z.elements() * 4;
    let l2 = 50 << 20;
    for (what, pick) in [
        (
            "tall",
            (|z: &Size| z.cols * 16 <= z.rows) as fn(&Size) -> bool,
        ),
        ("square", |z: &Size| z.cols == z.rows),
        ("short-wide", |z: &Size| {
            z.cols >= 16 * z.rows && z.cols < 1024 * z.rows
        }),
        ("very wide", |z: &Size| z.cols >= 1024 * z.rows),
    ] {
        assert!(
            m.iter().any(|z| pick(z) && bytes(z) > 4 * l2),
            "{what}: no shape beyond L2 in {m:?}"
        );
        assert!(
            m.iter().any(|z| pick(z) && bytes(z) < l2 / 2),
            "{what}: no shape inside L2 in {m:?}"
        );
    }
    // The two collapsing shapes and the whitepaper's.
    for z in ["256x262144", "1100x60989", "60989x1100"] {
        assert!(m.contains(&Size::parse(z).unwrap()), "{z}");
    }
    // Every matrix has the rule, the four algorithms' contenders and tuned, and a read
    // kernel of its element count.
    for z in &m {
        let at = |family: FamilyId, size: Size| {
            s.comparisons
                .iter()
                .filter(move |c| c.a.family == family && c.a.size == size)
                .map(|c| c.a.variant.name)
                .collect::<Vec<_>>()
        };
        let variants = at(FamilyId::Matvec, *z);
        for v in ["auto", "row-warp", "row-group", "split-k", "tuned"] {
            assert!(variants.contains(&v), "{z}: {v} missing");
        }
        let read = at(FamilyId::Bandwidth, Size::vector(z.elements()));
        assert_eq!(read, vec!["read"], "{z}");
    }
    // Reductions at every even power from 2^10 to 2^30, fair (both sides equal).
    for k in (10..=30).step_by(2) {
        let n = Size::vector(1 << k);
        assert!(
            s.comparisons
                .iter()
                .any(|c| c.a.family == FamilyId::Reduce && c.a.size == n && c.a == c.b),
            "2^{k}"
        );
    }
    assert!(s.comparisons.iter().all(|c| c.a == c.b), "an unfair entry");
}

#[test]
fn the_explain_study_varies_one_step_at_the_collapsing_shape() {
    let s = study::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/harness/experiments/shapes-explain.toml"
    ))
    .unwrap();
    let wide = Size::matrix(256, 262_144);
    assert!(s.comparisons.iter().all(|c| c.a.size == wide));
    let tuned: Vec<_> = s
        .comparisons
        .iter()
        .filter(|c| c.a.variant.name == "tuned")
        .collect();
    let base = &tuned[0].a;
    for c in &tuned[1..] {
        // Local size, unroll, index width or defines: exactly one of them moves.
        let moved = [
            c.a.local != base.local,
            c.a.unroll != base.unroll,
            c.a.index != base.index,
            c.a.defines != base.defines,
        ];
        assert_eq!(moved.iter().filter(|m| **m).count(), 1, "{}", c.id);
    }
}

/// The study at test size: each matrix scaled to about 2^14 elements with its aspect ratio,
/// reductions at 2^10 and 2^12 (one launch too), one read.
fn small_study() -> String {
    let s = shapes();
    let mut text = String::from(
        "name = \"shapes-small\"\n[defaults]\nlocal = 64\nwarmup = 1\nreps = 2\nmin_time = 0.0\n",
    );
    text += &common::matvec_entries_at_test_size(&s);
    text += "[[comparison]]\nfamily = \"bandwidth\"\nvariant = \"read\"\nsize = \"16384\"\n";
    for k in [10, 12] {
        text += &format!(
            "[[comparison]]\nname = \"reduce/{k}\"\nfamily = \"reduce\"\nvariant = \"tuned\"\nsize = \"2^{k}\"\n\
             [[comparison]]\nname = \"reduce/one/{k}\"\nfamily = \"reduce\"\nvariant = \"tuned\"\nsize = \"2^{k}\"\nlocal = 1024\ngroups = 1\n"
        );
    }
    text
}

fn run_small(pair: &str, dir: &Path) -> Vec<MeasurementRow> {
    let study = dir.join("shapes-small.toml");
    std::fs::write(&study, small_study()).unwrap();
    let out = dir.join("out");
    Command::cargo_bin("clvscu")
        .unwrap()
        .args(["run", "--quiet", "--no-plot", "--pair", pair, "--study"])
        .arg(&study)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    read_rows(&out.join("measurements.csv")).unwrap()
}

fn check_rows(rows: &[MeasurementRow]) {
    assert!(rows.len() > 60, "{} rows", rows.len());
    for r in rows {
        assert_eq!(
            r.status,
            Status::Ok,
            "{} {}: {}",
            r.comparison,
            r.api,
            r.error
        );
        assert!(r.verified, "{}", r.comparison);
    }
    // `auto` is never a row's variant: the row names the algorithm the rule chose.
    let auto: Vec<_> = rows
        .iter()
        .filter(|r| r.comparison.starts_with("matvec/auto/"))
        .collect();
    assert!(!auto.is_empty());
    for r in &auto {
        assert!(ALGORITHMS.contains(&r.variant.as_str()), "{}", r.variant);
    }
    // The small copies keep the aspect ratios, so the rule makes more than one choice.
    let mut chosen: Vec<_> = auto.iter().map(|r| r.variant.as_str()).collect();
    chosen.sort();
    chosen.dedup();
    assert!(chosen.len() >= 2, "{chosen:?}");
}

#[test]
fn the_study_at_test_size_runs_on_the_fake_backend() {
    let dir = tempfile::tempdir().unwrap();
    check_rows(&run_small("fake", dir.path()));
}

#[test]
#[ignore = "needs OpenCL"]
fn the_study_at_test_size_verifies_on_opencl() {
    common::need("OpenCL", opencl::availability());
    let dir = tempfile::tempdir().unwrap();
    check_rows(&run_small("opencl", dir.path()));
}

#[test]
fn the_gaps_study_is_fair_and_varies_one_step_per_explain_row() {
    let s = study::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/harness/experiments/shapes-gaps.toml"
    ))
    .expect("the shapes-gaps study parses");
    assert!(s.comparisons.iter().all(|c| c.a == c.b), "an unfair entry");
    let names: Vec<&str> = s.comparisons.iter().map(|c| c.id.as_str()).collect();
    // The open shapes with the new variants beside the ones they should beat.
    for z in ["16x4194304", "64x1048576", "16x262144"] {
        for v in ["auto", "split-wide", "split-k"] {
            assert!(
                names.contains(&format!("matvec/{v}/{z}").as_str()),
                "{v} {z}"
            );
        }
    }
    for z in ["1048576x64", "65536x64"] {
        for v in ["auto", "row-slice", "row-item"] {
            assert!(
                names.contains(&format!("matvec/{v}/{z}").as_str()),
                "{v} {z}"
            );
        }
    }
    // Every one-launch reduction fits the work-group limit NVIDIA's OpenCL reported (256),
    // except the REQD_WG rows that test that limit.
    for c in s.comparisons.iter().filter(|c| c.a.groups == Some(1)) {
        let reqd = c.a.defines.contains_key("REQD_WG");
        assert_eq!(c.a.local > 256, reqd, "{}", c.id);
    }
    // Each explain row moves exactly one step from its group's as-in-shapes row.
    for group in [
        "explain/row-item/",
        "explain/reduce-tuned/2^12/",
        "explain/reduce-tuned/2^16/",
    ] {
        let rows: Vec<_> = s
            .comparisons
            .iter()
            .filter(|c| c.id.starts_with(group))
            .collect();
        let base = &rows[0].a;
        assert!(rows[0].id.ends_with("as-in-shapes"), "{}", rows[0].id);
        assert!(rows.len() >= 4, "{group}");
        for c in &rows[1..] {
            let moved = [
                c.a.local != base.local,
                c.a.unroll != base.unroll,
                c.a.index != base.index,
                c.a.groups != base.groups,
                c.a.defines != base.defines,
            ];
            assert_eq!(moved.iter().filter(|m| **m).count(), 1, "{}", c.id);
        }
    }
}

#[test]
fn the_shapes_study_launches_its_one_launch_reductions_at_256() {
    let s = shapes();
    let one: Vec<_> = s
        .comparisons
        .iter()
        .filter(|c| c.a.family == FamilyId::Reduce && c.a.groups == Some(1))
        .collect();
    assert_eq!(one.len(), 4);
    assert!(
        one.iter().all(|c| c.a.local == 256),
        "NVIDIA's OpenCL refuses more"
    );
}
