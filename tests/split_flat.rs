//! `split-flat` (M read as one flat float4 stream, any row width) and its GPU study,
//! `harness/experiments/shapes5.toml`: the kernel verifies on OpenCL at the shapes that exercise its
//! edges (the float4 that straddles a row boundary, widths of every residue mod 4, the n % 4
//! tail of M, a task that ends exactly at a row's end, fewer groups than tasks), also after
//! many launches (its counters reset themselves); the study sets split-flat beside split-one at
//! every wide shape and runs, at test size, on the fake backend and on OpenCL.

mod common;

use std::path::Path;

use assert_cmd::Command;
use clvscu::backend::opencl::{self, OpenClBackend};
use clvscu::export::csv::read_rows;
use clvscu::families::matvec::flat;
use clvscu::families::matvec::shapes::{SPLIT_FLAT, SPLIT_ONE};
use clvscu::families::{find_variant, FamilyId, Size};
use clvscu::rows::MeasurementRow;
use clvscu::study::{self, Study};

const SHAPES5: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/harness/experiments/shapes5.toml"
);

fn load(path: &str) -> Study {
    study::load(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The shapes below, with what each one exercises, checked on the host first so that the
/// OpenCL test covers what it says.
const EDGES: [(u64, u64, u32, u32); 8] = [
    // cols % 4 = 1, 2, 3: the row boundary falls inside a float4 (b % 4 != 0), V misaligned
    // by every shift; 1 group for all tasks, then fewer groups than tasks.
    (37, 4101, 32, 1),
    (29, 4102, 64, 5),
    (23, 4103, 32, 7),
    // n % 4 = 1 (the tail: always in the last task's first row), fewer groups than tasks.
    (19, 4099, 32, 50),
    // Aligned rows, chunk 128 dividing the row: every task ends exactly at a row's end.
    (9, 1024, 32, 1000),
    // Rows narrower than 4 x local: chunk a multiple of 4 only; short rows, many tasks.
    (300, 257, 64, 500),
    (40, 6, 32, 13),
    // A single row.
    (1, 10_001, 128, 3),
];

#[test]
fn the_edge_shapes_exercise_what_they_claim() {
    let mut straddle = [false; 4];
    let (mut tail, mut exact, mut fewer) = (false, false, false);
    for (rows, cols, local, groups) in EDGES {
        let size = Size::matrix(rows, cols);
        let chunk = flat::chunk(size, groups, local).unwrap();
        let tasks = flat::tasks(size, chunk);
        fewer |= tasks > u64::from(groups);
        tail |= !size.elements().is_multiple_of(4);
        for r in 1..rows {
            let b = r * cols;
            let inside = !b.is_multiple_of(u64::from(chunk));
            straddle[(b % 4) as usize] |= inside && !b.is_multiple_of(4);
            exact |= !inside;
        }
    }
    assert!(straddle[1] && straddle[2] && straddle[3], "{straddle:?}");
    assert!(tail && exact && fewer);
}

#[test]
#[ignore = "needs OpenCL"]
fn split_flat_verifies_on_opencl_at_its_edges_after_many_launches() {
    common::need("OpenCL", opencl::availability());
    let mut b = OpenClBackend::open(None).expect("open OpenCL device");
    for (rows, cols, local, groups) in EDGES {
        common::matvec_after_runs(
            &mut b,
            SPLIT_FLAT,
            Size::matrix(rows, cols),
            local,
            groups,
            4,
        );
    }
}

#[test]
fn narrow_rows_are_refused_before_anything_runs() {
    let v = find_variant(FamilyId::Matvec, SPLIT_FLAT).unwrap();
    assert!(v
        .family
        .family()
        .check_size(v, Size::matrix(100, 3))
        .is_err());
    assert!(v
        .family
        .family()
        .check_size(v, Size::matrix(100, 4))
        .is_ok());
}

#[test]
fn shapes5_sets_split_flat_beside_split_one_at_every_wide_shape() {
    let s = load(SHAPES5);
    let read = s.comparisons.iter().filter(|c| c.a.variant.name == "read");
    assert_eq!(
        read.map(|c| c.a.size.elements()).collect::<Vec<_>>(),
        [1 << 26]
    );
    for (rows, cols) in [
        (1100, 60989),
        (16, 4_194_304),
        (64, 1_048_576),
        (256, 262_144),
        (1024, 65536),
    ] {
        let at = |name: &str| -> Vec<Option<u32>> {
            s.comparisons
                .iter()
                .filter(|c| c.a.size == Size::matrix(rows, cols) && c.a.variant.name == name)
                .map(|c| c.a.groups)
                .collect()
        };
        assert_eq!(at(SPLIT_ONE).len(), 1, "{rows}x{cols}");
        let flat: Vec<_> = at(SPLIT_FLAT).into_iter().flatten().collect();
        assert_eq!(flat, [528, 1056, 2112, 4224], "{rows}x{cols}");
    }
    // Two and four loads in flight per work-item at the unaligned and the widest shape.
    let unrolled = |rows, cols| {
        s.comparisons
            .iter()
            .filter(|c| {
                c.a.size == Size::matrix(rows, cols)
                    && c.a.variant.name == SPLIT_FLAT
                    && c.a.groups.is_none()
            })
            .count()
    };
    assert_eq!((unrolled(1100, 60989), unrolled(16, 4_194_304)), (2, 2));
    // Both sides the same configuration (the eight steps equal): each row is a fair PR.
    for c in &s.comparisons {
        assert_eq!(
            (c.a.groups, c.a.local, &c.a.unroll, &c.a.defines),
            (c.b.groups, c.b.local, &c.b.unroll, &c.b.defines),
            "{}",
            c.id
        );
    }
}

/// shapes5 at test size: each matrix scaled to about 2^14 elements with its aspect ratio,
/// every entry with its own group count (so the groups sweep still cuts the chunk).
fn small_shapes5() -> String {
    let s = load(SHAPES5);
    let mut text = String::from(
        "name = \"shapes5-small\"\n[defaults]\nlocal = 64\nwarmup = 1\nreps = 3\nmin_time = 0.0\n",
    );
    for c in s
        .comparisons
        .iter()
        .filter(|c| c.a.family == FamilyId::Matvec)
    {
        let z = c.a.size;
        let f = ((z.elements() as f64) / 16384.0).sqrt().max(1.0);
        let rows = ((z.rows as f64 / f).round() as u64).max(1);
        let cols = ((z.cols as f64 / f).round() as u64).max(1);
        // The group counts scaled down as the matrix is (at least 1).
        let groups =
            c.a.groups
                .map_or(String::new(), |g| format!("groups = {}\n", (g / 64).max(1)));
        text += &format!(
            "[[comparison]]\nname = \"{}\"\nfamily = \"matvec\"\nvariant = \"{}\"\nsize = \"{rows}x{cols}\"\n{groups}",
            c.id, c.a.variant.name
        );
    }
    text
}

fn run_small(pair: &str, out: &Path) -> Vec<MeasurementRow> {
    let study = out.with_extension("toml");
    std::fs::write(&study, small_shapes5()).unwrap();
    Command::cargo_bin("clvscu")
        .unwrap()
        .args(["run", "--quiet", "--no-plot", "--pair", pair, "--study"])
        .arg(&study)
        .arg("--out")
        .arg(out)
        .assert()
        .success();
    let rows: Vec<MeasurementRow> = read_rows(&out.join("measurements.csv")).unwrap();
    assert!(rows.iter().filter(|r| r.variant == SPLIT_FLAT).count() >= 20);
    common::assert_all_verified(&rows);
    rows
}

#[test]
fn shapes5_at_test_size_runs_on_the_fake_backend() {
    let dir = tempfile::tempdir().unwrap();
    run_small("fake", &dir.path().join("out"));
}

#[test]
#[ignore = "needs OpenCL"]
fn shapes5_at_test_size_verifies_on_opencl() {
    common::need("OpenCL", opencl::availability());
    let dir = tempfile::tempdir().unwrap();
    run_small("opencl", &dir.path().join("out"));
}
