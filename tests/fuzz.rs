//! Fuzzing, as proptest at scale, of the three readers that take files a user or a disk may
//! have damaged: the study parser, the CSV reader that `--resume` and `merge` trust, and the
//! Matrix Market reader. Each starts from a valid input and applies a few byte-level and
//! token-level mutations; every result must be a value or an error, never a panic, an abort or
//! an unbounded allocation, and each call must return quickly.
//!
//! CI runs a brief pass (`CLVSCU_FUZZ_CASES`, default 256 per reader); a longer one is
//! `CLVSCU_FUZZ_CASES=100000 cargo test --release --test fuzz`.

use std::time::{Duration, Instant};

use clvscu::export::csv::read_rows;
use clvscu::rows::{MeasurementRow, PrRow};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestRunner};

const STUDIES: &[&str] = &[
    include_str!("../harness/default.toml"),
    include_str!("../harness/fair.toml"),
    include_str!("../harness/shapes.toml"),
    include_str!("../harness/bfs.toml"),
];
const MEASUREMENTS: &str = include_str!("fixtures/fuzz/measurements.csv");
const PRS: &str = include_str!("fixtures/fuzz/prs.csv");
const MTX: &str = "%%MatrixMarket matrix coordinate real general\n% a comment\n4 5 6\n\
    1 1 1.5\n2 3 -2\n3 5 4e-3\n4 1 7\n4 4 1\n1 5 2\n";
const MTX_SYMMETRIC: &str =
    "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 4\n2 1 -1\n3 2 2.5\n";

/// Tokens that have broken parsers before: huge and negative numbers, non-numbers, control
/// characters, quotes and separators, and size spellings at their limits.
const TOKENS: &[&str] = &[
    "0",
    "-1",
    "1e308",
    "-1e308",
    "nan",
    "inf",
    "18446744073709551616",
    "4294967296",
    "2147483648",
    "2^64",
    "2^31",
    "65536x65536",
    "1x0",
    "\"",
    ",",
    "\n",
    "\r\n",
    "[[comparison]]",
    "=",
    "\u{1b}[2J",
    "\0",
    "%%MatrixMarket",
    "\u{feff}",
    "é",
];

#[derive(Debug, Clone)]
enum Mutation {
    InsertByte(usize, u8),
    InsertToken(usize, usize),
    DeleteRange(usize, usize),
    DuplicateLine(usize),
    SwapLines(usize, usize),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(at, b)| Mutation::InsertByte(at, b)),
        (any::<usize>(), 0..TOKENS.len()).prop_map(|(at, t)| Mutation::InsertToken(at, t)),
        (any::<usize>(), 1usize..40).prop_map(|(at, n)| Mutation::DeleteRange(at, n)),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    let at = |i: usize, len: usize| if len == 0 { 0 } else { i % (len + 1) };
    match *m {
        Mutation::InsertByte(i, b) => {
            let p = at(i, bytes.len());
            bytes.insert(p, b);
        }
        Mutation::InsertToken(i, t) => {
            let p = at(i, bytes.len());
            bytes.splice(p..p, TOKENS[t].bytes());
        }
        Mutation::DeleteRange(i, n) => {
            let p = at(i, bytes.len());
            let end = (p + n).min(bytes.len());
            bytes.drain(p..end);
        }
        Mutation::DuplicateLine(i) | Mutation::SwapLines(i, _) | Mutation::Truncate(i)
            if bytes.is_empty() =>
        {
            let _ = i;
        }
        Mutation::DuplicateLine(i) => {
            let mut lines = split_lines(bytes);
            let k = i % lines.len();
            let copy = lines[k].clone();
            lines.insert(k, copy);
            *bytes = lines.concat();
        }
        Mutation::SwapLines(a, b) => {
            let mut lines = split_lines(bytes);
            let n = lines.len();
            lines.swap(a % n, b % n);
            *bytes = lines.concat();
        }
        Mutation::Truncate(i) => {
            let p = at(i, bytes.len());
            bytes.truncate(p);
        }
    }
}

/// Lines with their terminators, so that concatenation gives the text back.
fn split_lines(bytes: &[u8]) -> Vec<Vec<u8>> {
    bytes
        .split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}

fn mutated(seed: &str, mutations: &[Mutation]) -> Vec<u8> {
    let mut bytes = seed.as_bytes().to_vec();
    for m in mutations {
        apply(&mut bytes, m);
    }
    bytes
}

fn cases() -> u32 {
    std::env::var("CLVSCU_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

/// A runner whose failures are shrunk and reported but never written into the tree.
fn runner() -> TestRunner {
    TestRunner::new(Config {
        cases: cases(),
        failure_persistence: Some(Box::new(FileFailurePersistence::Off)),
        ..Config::default()
    })
}

/// A damaged input may be refused, but within this time: a reader that loops or allocates its
/// way through a forged header would take far longer.
const PER_INPUT: Duration = Duration::from_secs(2);

fn fuzz(seeds: &'static [&'static str], read: impl Fn(&[u8])) {
    let strategy = (0..seeds.len(), prop::collection::vec(mutation(), 1..6));
    runner()
        .run(&strategy, |(seed, mutations)| {
            let input = mutated(seeds[seed], &mutations);
            let start = Instant::now();
            read(&input);
            prop_assert!(
                start.elapsed() < PER_INPUT,
                "took {:?} on {:?}",
                start.elapsed(),
                String::from_utf8_lossy(&input)
            );
            Ok(())
        })
        .unwrap();
}

#[test]
fn the_study_parser_returns_a_study_or_an_error_for_any_damaged_study() {
    fuzz(STUDIES, |input| {
        // A study is text: bytes that are not UTF-8 are refused before parsing.
        if let Ok(text) = std::str::from_utf8(input) {
            let _ = clvscu::study::parse(text, "fuzz.toml");
        }
    });
}

#[test]
fn the_results_csv_reader_returns_rows_or_an_error_for_any_damaged_file() {
    static SEEDS: &[&str] = &[MEASUREMENTS, PRS];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rows.csv");
    fuzz(SEEDS, |input| {
        std::fs::write(&path, input).unwrap();
        let _ = read_rows::<MeasurementRow>(&path);
        let _ = read_rows::<PrRow>(&path);
    });
}

#[test]
fn the_matrix_market_reader_returns_a_matrix_or_an_error_for_any_damaged_file() {
    static SEEDS: &[&str] = &[MTX, MTX_SYMMETRIC];
    fuzz(SEEDS, |input| {
        let _ = clvscu::families::matrix::read_mtx(input, "fuzz.mtx");
    });
}

#[test]
fn the_seeds_are_valid_so_the_mutations_start_from_real_inputs() {
    for (i, text) in STUDIES.iter().enumerate() {
        clvscu::study::parse(text, "seed.toml").unwrap_or_else(|e| panic!("study {i}: {e}"));
    }
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m.csv");
    std::fs::write(&m, MEASUREMENTS).unwrap();
    assert_eq!(read_rows::<MeasurementRow>(&m).unwrap().len(), 3);
    let p = dir.path().join("p.csv");
    std::fs::write(&p, PRS).unwrap();
    assert_eq!(read_rows::<PrRow>(&p).unwrap().len(), 3);
    let csr = clvscu::families::matrix::read_mtx(MTX.as_bytes(), "seed.mtx").unwrap();
    assert_eq!((csr.rows, csr.cols, csr.col.len()), (4, 5, 6));
    let sym = clvscu::families::matrix::read_mtx(MTX_SYMMETRIC.as_bytes(), "seed.mtx").unwrap();
    assert_eq!(sym.rows, 3);
}
