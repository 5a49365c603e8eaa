//! Issue 19's short GPU visit: `harness/experiments/shapes3.toml` (auto and the best candidates at every
//! shape of the `shapes` study, the read kernel, reductions 2^22..2^30) and
//! `harness/experiments/reduce-launches.toml` (each launch of the two-launch reduction alone). The studies
//! cover what the claims need and no more; split-one (split-k in one launch) verifies on
//! OpenCL, also after many launches (its counters reset themselves); the launch experiment
//! changes one thing; and a partial reduction is never our best against a vendor's sum.

mod common;

use std::path::Path;

use assert_cmd::Command;
use clvscu::backend::opencl::{self, OpenClBackend};
use clvscu::export::csv::read_rows;
use clvscu::families::matvec::shapes;
use clvscu::families::{FamilyId, Size};
use clvscu::report::baseline;
use clvscu::rows::BaselineRow;
use clvscu::rows::MeasurementRow;
use clvscu::study::{self, Study};

const SHAPES3: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/harness/experiments/shapes3.toml"
);
const LAUNCHES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/harness/experiments/reduce-launches.toml"
);

fn load(path: &str) -> Study {
    study::load(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn names_at(s: &Study, family: FamilyId, size: Size) -> Vec<&'static str> {
    s.comparisons
        .iter()
        .filter(|c| c.a.family == family && c.a.size == size)
        .map(|c| c.a.variant.name)
        .collect()
}

fn matrices(s: &Study) -> Vec<Size> {
    let mut out: Vec<Size> = Vec::new();
    for c in s
        .comparisons
        .iter()
        .filter(|c| c.a.family == FamilyId::Matvec)
    {
        if !out.contains(&c.a.size) {
            out.push(c.a.size);
        }
    }
    out
}

#[test]
fn every_shape_of_the_shapes_study_has_auto_a_candidate_and_its_read_kernel() {
    let (full, short) = (load("shapes"), load(SHAPES3));
    assert_eq!(
        matrices(&full),
        matrices(&short),
        "the same shapes, in order"
    );
    for z in matrices(&short) {
        let here = names_at(&short, FamilyId::Matvec, z);
        assert!(here.contains(&"auto"), "{z}: no auto");
        // Where the H100's rule splits the columns of a wide matrix beyond L2, or of a very
        // wide one, split-one stands beside it (row-group was faster at the other split ones).
        let split = shapes::rule(z.rows, z.cols, 132, 1024).variant.name == shapes::SPLIT_K;
        let wide =
            z.cols >= 16 * z.rows && (z.elements() * 4 > 50 << 20 || z.cols >= 1024 * z.rows);
        if split && wide {
            assert!(here.contains(&"split-one"), "{z}: no split-one");
        }
        let read = names_at(&short, FamilyId::Bandwidth, Size::vector(z.elements()));
        assert_eq!(
            read,
            vec!["read"],
            "{z}: the read kernel at its element count"
        );
    }
    assert!(
        short.comparisons.iter().all(|c| c.a == c.b),
        "an unfair entry"
    );
}

#[test]
fn the_two_studies_reduce_every_fourfold_size_from_2_16_to_2_30_once() {
    let (short, launches) = (load(SHAPES3), load(LAUNCHES));
    for k in (16..=30).step_by(2) {
        let n = Size::vector(1 << k);
        let tuned = [&short, &launches]
            .iter()
            .flat_map(|s| names_at(s, FamilyId::Reduce, n))
            .filter(|v| *v == "tuned")
            .count();
        assert_eq!(
            tuned, 1,
            "2^{k}: the two-launch reduction once in the visit"
        );
    }
}

#[test]
fn the_visit_fits_four_minutes_on_an_h100() {
    // About 3 s of compiling (both APIs) and 0.1-0.5 s of data and timing per comparison, and
    // about 30 s of study-only baselines: 45 comparisons are about 210 s.
    let n = load(SHAPES3).comparisons.len() + load(LAUNCHES).comparisons.len();
    assert!(n <= 45, "{n} comparisons: over the 240 s budget");
    let s = load(SHAPES3);
    for c in &s.comparisons {
        assert!(
            c.a.max_reps <= 300,
            "{}: {} repetitions at most",
            c.id,
            c.a.max_reps
        );
    }
}

#[test]
fn the_launch_experiment_changes_one_thing_per_row() {
    let s = load(LAUNCHES);
    assert!(s.comparisons.iter().all(|c| c.a == c.b), "an unfair entry");
    for k in [16, 18, 20] {
        let row = |name: &str| {
            s.comparisons
                .iter()
                .find(|c| c.id == format!("reduce/{name}/2^{k}"))
                .unwrap_or_else(|| panic!("reduce/{name}/2^{k}"))
        };
        let (both, first) = (&row("as-in-shapes").a, &row("first-pass").a);
        assert_eq!(
            (both.variant.name, first.variant.name),
            ("tuned", "first-pass")
        );
        // The same kernel, input and launch: only the second launch is gone.
        assert_eq!(both.variant.kernel, first.variant.kernel);
        assert_eq!(
            (
                both.size,
                both.local,
                both.groups,
                &both.unroll,
                &both.defines
            ),
            (
                first.size,
                first.local,
                first.groups,
                &first.unroll,
                &first.defines
            )
        );
        assert_eq!((both.index, both.seed), (first.index, first.seed));
    }
    // The second launch alone: reduce_final over the 8 x 132 partial sums of an H100 / H200.
    let fin = s.comparisons.iter().find(|c| c.a.variant.name == "final");
    let fin = &fin.expect("a final row").a;
    assert_eq!((fin.size, fin.local), (Size::vector(8 * 132), 256));
}

fn run_fake(study: &Path, out: &Path) -> Vec<MeasurementRow> {
    Command::cargo_bin("clvscu")
        .unwrap()
        .args(["run", "--quiet", "--no-plot", "--pair", "fake", "--study"])
        .arg(study)
        .arg("--out")
        .arg(out)
        .assert()
        .success();
    read_rows(&out.join("measurements.csv")).unwrap()
}

#[test]
fn the_launch_experiment_runs_on_the_fake_backend_and_a_partial_sum_is_never_best() {
    let dir = tempfile::tempdir().unwrap();
    let rows = run_fake(Path::new(LAUNCHES), &dir.path().join("out"));
    assert_eq!(rows.len(), 14);
    common::assert_all_verified(&rows);
    let refs: Vec<&MeasurementRow> = rows.iter().collect();
    let sum = BaselineRow {
        baseline: "sum".into(),
        library: "test".into(),
        size: "65536".into(),
        bytes: 65536 * 4,
        median_ms: 1.0,
        min_ms: 1.0,
        reps: 1,
        gbs: 1.0,
        gflops: None,
    };
    let ratios = baseline::ratios(&clvscu::families::catalog(), &[sum], &refs);
    assert_eq!(ratios.len(), 2);
    for r in ratios {
        assert_eq!(r.comparison, "reduce/as-in-shapes/2^16");
    }
}

/// shapes3 at test size: each matrix scaled to about 2^14 elements with its aspect ratio.
fn small_shapes3() -> String {
    let s = load(SHAPES3);
    let mut text = String::from(
        "name = \"shapes3-small\"\n[defaults]\nlocal = 64\nwarmup = 1\nreps = 3\nmin_time = 0.0\n",
    );
    text += &common::matvec_entries_at_test_size(&s);
    text
}

#[test]
fn shapes3_at_test_size_runs_on_the_fake_backend() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("small.toml");
    std::fs::write(&study, small_shapes3()).unwrap();
    let rows = run_fake(&study, &dir.path().join("out"));
    assert!(rows.iter().any(|r| r.variant == "split-one"));
    common::assert_all_verified(&rows);
}

#[test]
#[ignore = "needs OpenCL"]
fn split_one_verifies_on_opencl_after_many_launches_at_any_group_count() {
    common::need("OpenCL", opencl::availability());
    let mut b = OpenClBackend::open(None).expect("open OpenCL device");
    // Aligned and not; a short last tile; more groups than (tile, block) pairs, fewer than
    // the tiles (groups stride over tiles), and one group doing everything.
    for (size, local, groups) in [
        (Size::matrix(16, 40_000), 64, 64),
        (Size::matrix(37, 4099), 64, 37),
        (Size::matrix(37, 4099), 128, 3),
        (Size::matrix(5, 1000), 32, 1),
        (Size::matrix(300, 2048), 256, 500),
    ] {
        common::matvec_after_runs(&mut b, shapes::SPLIT_ONE, size, local, groups, 5);
    }
}
