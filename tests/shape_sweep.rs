//! The tall-narrow `row-pack` variant, the shape sweep that `matvec/auto`'s measured rule is
//! derived from (`harness/shape-sweep.toml`, `harness/experiments/shape-sweep-auto.toml`) and the checks
//! issue 33 asks of it, recomputed from the sweep's data:
//! - row-pack verifies on OpenCL at its edges: blocks of whole rows that are not a whole number
//!   of float4s, the last block partly empty, rows up to and past its widest staged row (1024
//!   floats), more rows per block than work-items, one group for many rows, many groups for few
//!   rows, local sizes 32 to 256;
//! - the sweep covers aspect ratios 2^-16 to 2^16 at 64-512 MB, aligned and not, sizes inside
//!   the L2, and 2^28 floats, with row-pack at every row of at most 1024 floats; the auto study
//!   has every sweep shape;
//! - every committed table (`harness/rules/`) is derived from the newest committed sweep folder
//!   of its GPU (`results/*-shape-sweep`), where every `auto` shape beyond the L2 is at least
//!   1.0x cuBLAS SGEMV and `auto` at 2^28 floats at least 0.9x the read kernel;
//! - that newest sweep measured this tree's matvec kernels (a changed kernel needs a new sweep).

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use clvscu::backend::opencl::{self, OpenClBackend};
use clvscu::families::matvec::rules::RuleTable;
use clvscu::families::matvec::shapes::ROW_PACK;
use clvscu::families::rule_tables::{Sweep, READ_CHECK_FLOATS};
use clvscu::families::{FamilyId, Size};
use clvscu::rows::L2_BYTES;
use clvscu::study::{self, Study};

const SWEEP: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/harness/shape-sweep.toml");
const AUTO: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/harness/experiments/shape-sweep-auto.toml"
);

fn load(path: &str) -> Study {
    study::load(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// (rows, cols, local, groups): blocks (4096 floats / width rows, a multiple of 4) whose floats
/// are not a whole number of float4s (odd widths, odd row counts), a last block partly empty,
/// more rows per block than work-items (narrow rows, 32 work-items), rows at and past the widest
/// staged row (1024 floats: 1025 takes the work-item-per-row path), one group for all rows.
const EDGES: [(u64, u64, u32, u32); 18] = [
    (1, 1, 32, 1),
    (4097, 1, 32, 2),
    (1001, 3, 32, 3),
    (1000, 4, 32, 3),
    (999, 5, 64, 2),
    (513, 7, 32, 1),
    (301, 9, 128, 1),
    (130, 17, 64, 7),
    (1025, 33, 256, 2),
    (70, 100, 32, 1),
    (129, 128, 64, 3),
    (65, 129, 32, 9),
    (255, 255, 256, 1),
    (33, 257, 128, 40),
    (37, 511, 256, 2),
    (9, 1023, 64, 1),
    (6, 1024, 32, 1),
    (5, 1025, 256, 2),
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
        .filter(|a| a.family == FamilyId::Matvec && variant.is_none_or(|v| a.variant.name == v))
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
    // Row-pack at every shape whose rows it stages (at most 1024 floats); the read kernel at 2^28.
    let narrow: BTreeSet<_> = all.iter().filter(|&&(_, c)| c <= 1024).copied().collect();
    assert_eq!(shapes(&sweep, Some(ROW_PACK)), narrow);
    assert!(sweep
        .comparisons
        .iter()
        .any(|c| c.a.family == FamilyId::Bandwidth
            && c.a.variant.name == "read"
            && c.a.size.elements() == READ_CHECK_FLOATS));
    // No auto in the sweep (its rows would repeat a variant); every sweep shape in the auto study.
    assert!(shapes(&sweep, Some("auto")).is_empty());
    let auto = load(AUTO);
    assert_eq!(shapes(&auto, Some("auto")), all);
}

/// The committed sweep folders: `results/<gpu>-<date>-shape-sweep`, as
/// `clvscu suite --plan matvec-rule` writes them.
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

/// The committed sweeps, each read from its `sweep/` (the variants, cuBLAS and auto with the
/// table, as `clvscu suite --plan matvec-rule` writes them).
fn read_sweeps() -> Vec<(PathBuf, Sweep)> {
    committed_sweeps()
        .into_iter()
        .map(|d| {
            let sweep = Sweep::read(&d.join("sweep")).unwrap();
            (d, sweep)
        })
        .collect()
}

/// The newest committed sweep of `device` (by its runs' ids, which begin with their UTC start):
/// a GPU's table comes from it, and an older sweep of the same GPU is history it replaces.
fn newest_sweep<'a>(sweeps: &'a [(PathBuf, Sweep)], device: &str) -> Option<&'a (PathBuf, Sweep)> {
    sweeps
        .iter()
        .filter_map(|entry| {
            let newest = entry
                .1
                .sides
                .iter()
                .filter(|s| s.device == device)
                .map(|s| s.run_id.as_str())
                .max()?;
            Some((newest, entry))
        })
        .max_by(|a, b| a.0.cmp(b.0))
        .map(|(_, entry)| entry)
}

/// Every committed table is what `clvscu shapes-rule` derives from the newest committed sweep
/// of its GPU, and that sweep's `rules/checks.md` holds, row for row, what the data gives for
/// issue 33's bars on each API (at least 1.0x cuBLAS SGEMV at every shape beyond the L2, at
/// least 0.9x the read kernel at 2^28 floats): a shape below its bar is listed as `NO`, never
/// edited away. Every committed sweep's GPU has its table.
#[test]
fn every_table_is_derived_from_a_committed_sweep_whose_checks_are_the_datas() {
    let sweeps = read_sweeps();
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
        let (dir, sweep) = newest_sweep(&sweeps, &table.device).unwrap_or_else(|| {
            panic!("{}: no committed sweep of {}", path.display(), table.device)
        });
        let derived = sweep.table(&table.device).unwrap();
        assert_eq!(
            derived.regions,
            table.regions,
            "{}: not what `clvscu shapes-rule {}` derives",
            path.display(),
            dir.join("sweep").display()
        );
        let catalog = clvscu::families::catalog();
        let read = catalog.memory_references().map(|(f, m)| (f, m.read));
        let checks = sweep.checks(&table.device, read);
        let auto_shapes: BTreeSet<&str> = checks.iter().map(|c| c.size.as_str()).collect();
        assert!(
            auto_shapes.len() >= 40,
            "{}: {}: the sweep has too few auto shapes beyond the L2 ({})",
            dir.display(),
            table.device,
            auto_shapes.len()
        );
        let written = std::fs::read_to_string(dir.join("rules/checks.md")).unwrap_or_default();
        failures.extend(
            checks
                .iter()
                .filter(|c| !written.contains(&c.row()))
                .map(|c| format!("{}: {}: {}", dir.display(), table.device, c.row())),
        );
        let below = checks.iter().filter(|c| !c.passes()).count();
        println!(
            "{}: {}: {below} of {} checks below their bar",
            dir.display(),
            table.device,
            checks.len()
        );
    }
    assert!(
        failures.is_empty(),
        "rules/checks.md does not hold these rows the data gives (run `clvscu shapes-rule`):\n{}",
        failures.join("\n")
    );
}

/// The provenance note of this tree's matvec kernels, as `clvscu run` writes it.
fn matvec_kernels_note() -> String {
    use sha2::{Digest, Sha256};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let hash = |rel: &str| {
        let text = std::fs::read(root.join(rel)).unwrap();
        let hex = format!("{:x}", Sha256::digest(&text));
        hex[..12].to_string()
    };
    format!(
        "kernel source sha256/12 matvec: OpenCL {} CUDA {}",
        hash("kernels_cl/matvec.cl"),
        hash("kernels_cu/matvec.cu")
    )
}

/// The newest sweep of each GPU measured this tree's matvec kernels (every run under its
/// `sweep/` names them in its provenance): a table derived from other kernels' speeds says
/// nothing about these, so a changed matvec kernel needs the sweep re-run on each GPU
/// (`clvscu suite --plan matvec-rule`) and its folder and table committed.
#[test]
fn the_newest_sweep_of_each_gpu_measured_these_matvec_kernels() {
    let sweeps = read_sweeps();
    let note = matvec_kernels_note();
    let devices: BTreeSet<String> = sweeps.iter().flat_map(|(_, s)| s.devices()).collect();
    let mut stale = Vec::new();
    for device in &devices {
        let (dir, _) = newest_sweep(&sweeps, device).unwrap();
        let mut provenances = Vec::new();
        files_named(&dir.join("sweep"), "provenance.json", &mut provenances);
        assert!(
            !provenances.is_empty(),
            "{}: no provenance.json",
            dir.display()
        );
        for p in provenances {
            let text = std::fs::read_to_string(&p).unwrap();
            if !text.contains(&note) {
                stale.push(format!("{}: {device}", p.display()));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "measured with other matvec kernels than this tree's ({note}); re-run the sweep on \
         each GPU:\n{}",
        stale.join("\n")
    );
}

/// Every file named `name` under `dir`.
fn files_named(dir: &Path, name: &str, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() {
            files_named(&p, name, out);
        } else if p.file_name().is_some_and(|n| n == name) {
            out.push(p);
        }
    }
}
