//! The tall-narrow `row-pack` variant, the shape sweep that `matvec/auto`'s measured rule is
//! derived from (`harness/shape-sweep.toml`, `harness/shape-sweep-auto.toml`) and the checks
//! issue 33 asks of it, recomputed from the sweep's data:
//! - row-pack verifies on OpenCL at its edges: row widths around each lane count's limit (1 to
//!   32 lanes per row), odd and unaligned widths, rows that leave the last step's slices
//!   partly empty, one group for many rows, many groups for few rows, local sizes 32 to 256;
//! - the sweep covers aspect ratios 2^-16 to 2^16 at 64-512 MB, aligned and not, sizes inside
//!   the L2, and 2^28 floats; the auto study has every sweep shape;
//! - every committed table (`harness/rules/`) is derived from a committed sweep folder
//!   (`results/*-shape-sweep`), where every `auto` shape beyond the L2 is at least 1.0x cuBLAS
//!   SGEMV and `auto` at 2^28 floats at least 0.9x the read kernel.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use clvscu::backend::opencl::{self, OpenClBackend};
use clvscu::families::matvec::rules::RuleTable;
use clvscu::shape_rule::{Sweep, L2_BYTES, READ_CHECK_FLOATS};
use clvscu::study::{self, Study};
use clvscu::workload::matvec_shapes::ROW_PACK;
use clvscu::workload::{FamilyKind, Size};

const SWEEP: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/harness/shape-sweep.toml");
const AUTO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/harness/shape-sweep-auto.toml");

fn load(path: &str) -> Study {
    study::load(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// (rows, cols, local, groups): widths at and around each lane count's limit (4 floats per
/// lane: 4/5, 8/9, 16/17, 128/129, 255/256/257 and wider), odd widths, rows that do not fill
/// the last step, one group for all rows.
const EDGES: [(u64, u64, u32, u32); 14] = [
    (1, 1, 32, 1),
    (1000, 4, 32, 3),
    (999, 5, 64, 2),
    (513, 7, 32, 1),
    (300, 8, 256, 4),
    (301, 9, 128, 1),
    (77, 16, 32, 5),
    (130, 17, 64, 7),
    (1025, 33, 256, 2),
    (70, 100, 32, 1),
    (129, 128, 64, 3),
    (65, 129, 32, 9),
    (255, 255, 256, 1),
    (33, 257, 128, 40),
];

#[test]
#[ignore = "needs OpenCL"]
fn row_pack_verifies_on_opencl_at_its_edges_after_many_launches() {
    common::need("OpenCL", opencl::availability());
    let mut b = OpenClBackend::open(None).expect("open OpenCL device");
    for (rows, cols, local, groups) in EDGES {
        common::matvec_after_runs(&mut b, ROW_PACK, Size::matrix(rows, cols), local, groups, 3);
    }
    // Wide rows too (the hand rule never picks it there, a table may).
    common::matvec_after_runs(&mut b, ROW_PACK, Size::matrix(3, 4100), 256, 1, 2);
}

/// The matvec shapes (rows, cols) of a study's comparisons.
fn shapes(s: &Study, variant: Option<&str>) -> BTreeSet<(u64, u64)> {
    s.comparisons
        .iter()
        .map(|c| &c.a)
        .filter(|a| a.family == FamilyKind::Matvec && variant.is_none_or(|v| a.variant.name == v))
        .map(|a| (a.size.rows, a.size.cols))
        .collect()
}

#[test]
fn the_sweep_covers_every_aspect_size_and_alignment_the_rule_needs() {
    let sweep = load(SWEEP);
    let all = shapes(&sweep, None);
    let beyond = |(r, c): &(u64, u64)| (64 << 20..=512 << 20).contains(&(r * c * 4));
    for k in (-16i32..=16).step_by(4) {
        let aligned = all
            .iter()
            .filter(|s| beyond(s))
            .any(|&(r, c)| c % 32 == 0 && ((c as f64) / (r as f64)).log2().round() as i32 == k);
        let odd = all
            .iter()
            .filter(|s| beyond(s))
            .any(|&(r, c)| c % 2 == 1 && ((c as f64) / (r as f64)).log2().round() as i32 == k);
        assert!(aligned && odd, "aspect 2^{k}: aligned {aligned}, odd {odd}");
    }
    // Rows of 8 to 256 floats, aligned and not; inside the L2; 2^28 floats.
    for w in [8, 16, 32, 64, 128, 256] {
        assert!(all.iter().any(|&(_, c)| c == w), "{w}");
        assert!(all.iter().any(|&(_, c)| c == w - 1), "{w} - 1");
    }
    assert!(all
        .iter()
        .any(|&(_, c)| c % 32 != 0 && c % 4 == 0 && c <= 256));
    assert!(all.iter().filter(|&&(r, c)| r * c * 4 < L2_BYTES).count() >= 5);
    assert!(all.contains(&(16384, 16384)) && 16384 * 16384 == READ_CHECK_FLOATS);
    // Every tall-narrow shape has row-pack beside row-warp; the read kernel at 2^28.
    let narrow: BTreeSet<_> = all.iter().filter(|&&(_, c)| c <= 256).copied().collect();
    assert_eq!(shapes(&sweep, Some(ROW_PACK)), narrow);
    assert!(sweep
        .comparisons
        .iter()
        .any(|c| c.a.family == FamilyKind::Bandwidth
            && c.a.variant.name == "read"
            && c.a.size.elements() == READ_CHECK_FLOATS));
    // No auto in the sweep (its rows would repeat a variant); every sweep shape in the auto study.
    assert!(shapes(&sweep, Some("auto")).is_empty());
    let auto = load(AUTO);
    assert_eq!(shapes(&auto, Some("auto")), all);
}

/// The committed sweep folders: `results/<gpu>-<date>-shape-sweep`, as
/// `scripts/gpu-shape-sweep.sh` writes them.
fn committed_sweeps() -> Vec<PathBuf> {
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("results");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&results)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir() && p.to_string_lossy().ends_with("-shape-sweep"))
        .collect();
    out.sort();
    out
}

/// The committed tables, `harness/rules/*.toml`.
fn committed_tables() -> Vec<(PathBuf, RuleTable)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("harness/rules");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let table = RuleTable::parse(&p.to_string_lossy(), &text).unwrap();
            (p, table)
        })
        .collect()
}

/// Every committed table is what `clvscu shapes-rule` derives from a committed sweep of its
/// GPU, and on that sweep `auto` (run with the table) meets issue 33's bars on each API: at
/// least 1.0x cuBLAS SGEMV at every shape beyond the L2, at least 0.9x the read kernel at 2^28
/// floats. Every committed sweep has its table. (Before the first sweep is committed there is
/// neither, and nothing to hold to the bars.)
#[test]
fn every_table_is_derived_from_a_committed_sweep_where_auto_meets_its_bars() {
    let sweeps: Vec<(PathBuf, Sweep)> = committed_sweeps()
        .into_iter()
        // sweep/: the variants, cuBLAS and auto with the table (scripts/gpu-shape-sweep.sh).
        .map(|d| {
            let sweep = Sweep::read(&d.join("sweep")).unwrap();
            (d, sweep)
        })
        .collect();
    let tables = committed_tables();
    for (dir, sweep) in &sweeps {
        for device in sweep.devices() {
            assert!(
                tables.iter().any(|(_, t)| t.device == device),
                "{}: {device} has no table in harness/rules/",
                dir.display()
            );
        }
    }
    let mut failures = Vec::new();
    for (path, table) in &tables {
        let (dir, sweep) = sweeps
            .iter()
            .find(|(_, s)| s.devices().contains(&table.device))
            .unwrap_or_else(|| {
                panic!("{}: no committed sweep of {}", path.display(), table.device)
            });
        let derived = sweep.table(&table.device).unwrap();
        assert_eq!(
            derived.regions,
            table.regions,
            "{}: not what `clvscu shapes-rule {}` derives",
            path.display(),
            dir.display()
        );
        let checks = sweep.checks(&table.device);
        let auto_shapes: BTreeSet<&str> = checks.iter().map(|c| c.size.as_str()).collect();
        assert!(
            auto_shapes.len() >= 40,
            "{}: {}: the sweep has too few auto shapes beyond the L2 ({})",
            dir.display(),
            table.device,
            auto_shapes.len()
        );
        failures.extend(
            checks
                .iter()
                .filter(|c| !c.passes())
                .map(|c| format!("{}: {}: {}", dir.display(), table.device, c.row())),
        );
    }
    assert!(
        failures.is_empty(),
        "below the bar:\n{}",
        failures.join("\n")
    );
}
