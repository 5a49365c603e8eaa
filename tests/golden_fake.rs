//! The CSVs of a fixed run on the fake backend are byte-identical to the golden files in
//! `tests/golden/`: the record types, their column order and their text cannot drift.
//! Set CLVSCU_BLESS=1 to rewrite the golden files after an intended change of schema.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use clvscu::backend::fake::{FakeBackend, FakeScript};
use clvscu::backend::Api;
use clvscu::export::store::CsvStore;
use clvscu::kernels::KernelSources;
use clvscu::session::{run_study_with, InputCache};
use clvscu::study;

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden");

fn run_golden_study(out: &Path) {
    let study = study::load(&format!("{GOLDEN}/fake-study.toml")).unwrap();
    let mut a = FakeBackend::new(
        Api::OpenCl,
        FakeScript::default(),
        clvscu::families::emulator(),
    );
    let mut b = FakeBackend::new(
        Api::Cuda,
        FakeScript {
            fail_build_containing: Some("peak_fma".into()),
            wrong_results: vec!["matvec_listing3".into()],
            ..FakeScript::default()
        },
        clvscu::families::emulator(),
    );
    let sources = KernelSources::embedded();
    let interrupted = AtomicBool::new(false);
    let ctx = clvscu::session::RunContext::new("golden-run".into(), &sources, &interrupted);
    let mut sinks = CsvStore::open(out, false, 2).unwrap();
    let cache = &mut InputCache::default();
    run_study_with(&study, &mut a, Some(&mut b), &mut sinks, &ctx, cache).unwrap();
}

#[test]
fn csv_of_a_fixed_fake_run_matches_the_golden_files() {
    let dir = tempfile::tempdir().unwrap();
    run_golden_study(dir.path());
    let bless = std::env::var("CLVSCU_BLESS").is_ok_and(|v| v == "1");
    for name in ["measurements.csv", "prs.csv", "samples.csv"] {
        let got = std::fs::read_to_string(dir.path().join(name)).unwrap();
        let golden = Path::new(GOLDEN).join(name);
        if bless {
            std::fs::write(&golden, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&golden).unwrap();
        if got != want {
            let first = got
                .lines()
                .zip(want.lines())
                .position(|(g, w)| g != w)
                .unwrap_or(got.lines().count().min(want.lines().count()));
            panic!(
                "{name} differs from the golden file at line {}:\n got: {}\nwant: {}",
                first + 1,
                got.lines().nth(first).unwrap_or("<end>"),
                want.lines().nth(first).unwrap_or("<end>")
            );
        }
    }
}
