//! results/ keeps evidence, not copies: every PTX text is stored once, and
//! results/ptx-index.csv maps each PTX file a run produced to the stored copy with its
//! content (scripts/dedupe-ptx.py writes it). It stays small enough to clone and read: at most
//! 30 MB, no path of the machine a run was made on, and the raw samples of the dated run
//! folders listed in results/raw-index.csv with the commit whose tree still holds them.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

const RESULTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/results");

fn ptx_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            ptx_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "ptx") {
            out.push(path);
        }
    }
}

fn sha256_hex(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn every_ptx_text_is_stored_once_and_indexed() {
    let root = Path::new(RESULTS);
    let mut files = Vec::new();
    ptx_files(root, &mut files);
    let mut by_hash: BTreeMap<String, PathBuf> = BTreeMap::new();
    for f in &files {
        if let Some(other) = by_hash.insert(sha256_hex(f), f.clone()) {
            panic!(
                "{} and {} are identical: run scripts/dedupe-ptx.py",
                f.display(),
                other.display()
            );
        }
    }
    let index = std::fs::read_to_string(root.join("ptx-index.csv")).unwrap();
    let mut stored = BTreeSet::new();
    for line in index.lines().skip(1) {
        let cols: Vec<&str> = line.split(',').collect();
        let [_, sha, stored_at] = cols[..] else {
            panic!("malformed index line: {line}");
        };
        let copy = root.join(stored_at);
        assert_eq!(sha256_hex(&copy), sha, "{stored_at} does not hold {sha}");
        stored.insert(copy);
    }
    let on_disk: BTreeSet<PathBuf> = files.into_iter().collect();
    assert_eq!(
        stored, on_disk,
        "every stored PTX file is indexed, and only those"
    );
}

/// Every file and folder under `dir` (folders included, links not followed).
fn entries(dir: &Path, out: &mut Vec<(PathBuf, std::fs::Metadata)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let meta = entry.path().symlink_metadata().unwrap();
        if meta.is_dir() {
            entries(&entry.path(), out);
        }
        out.push((entry.path(), meta));
    }
}

/// What `du` counts on a file system of 4 KiB blocks: each file rounded up to whole blocks,
/// and a block per folder.
fn disk_bytes(meta: &std::fs::Metadata) -> u64 {
    const BLOCK: u64 = 4096;
    if meta.is_dir() {
        BLOCK
    } else {
        meta.len().div_ceil(BLOCK) * BLOCK
    }
}

#[test]
fn results_fit_in_30_mb() {
    const LIMIT: u64 = 30 * 1024 * 1024;
    let root = Path::new(RESULTS);
    let mut all = Vec::new();
    entries(root, &mut all);
    let mut per_folder: BTreeMap<String, u64> = BTreeMap::new();
    for (path, meta) in &all {
        let top = path
            .strip_prefix(root)
            .unwrap()
            .components()
            .next()
            .unwrap();
        let top = top.as_os_str().to_string_lossy().into_owned();
        *per_folder.entry(top).or_default() += disk_bytes(meta);
    }
    let total: u64 = per_folder.values().sum();
    let mut largest: Vec<(u64, String)> = per_folder.into_iter().map(|(k, v)| (v, k)).collect();
    largest.sort_unstable_by(|a, b| b.cmp(a));
    largest.truncate(5);
    assert!(
        total <= LIMIT,
        "results/ takes {:.1} MiB, over 30 MiB; the largest: {largest:?}. Commit CSVs, JSON, \
         provenance and each PTX text once; charts and logs are regenerated, and the raw \
         samples of a dated folder go to results/raw-index.csv",
        total as f64 / 1048576.0
    );
}

/// A path of the machine a run was made on (`OUT/`, `./` and `.carry/` name them instead).
const MACHINE_PATHS: [&str; 4] = ["/root/", "/work/", "/tmp/", "/home/"];

fn machine_path_in(bytes: &[u8]) -> Option<&'static str> {
    let text = String::from_utf8_lossy(bytes);
    MACHINE_PATHS.into_iter().find(|p| text.contains(p))
}

#[test]
fn no_results_file_names_a_path_of_the_machine_it_ran_on() {
    let mut all = Vec::new();
    entries(Path::new(RESULTS), &mut all);
    let mut found = Vec::new();
    let mut read = 0;
    for (path, _) in all.iter().filter(|(_, m)| m.is_file()) {
        let raw = std::fs::read(path).unwrap();
        let bytes = if path.extension().is_some_and(|e| e == "gz") {
            let mut out = Vec::new();
            flate2::read::MultiGzDecoder::new(raw.as_slice())
                .read_to_end(&mut out)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            out
        } else {
            raw
        };
        read += 1;
        if let Some(p) = machine_path_in(&bytes) {
            found.push(format!("{} ({p})", path.display()));
        }
    }
    assert!(read > 100, "only {read} files under results/");
    assert!(
        found.is_empty(),
        "name the output folder OUT/ and the checkout ./ instead: {found:#?}"
    );
}

#[test]
fn a_machine_path_is_caught_in_text_and_an_out_placeholder_is_not() {
    assert_eq!(
        machine_path_in(br#""--out", "/root/out/h100/fair""#),
        Some("/root/")
    );
    assert_eq!(machine_path_in(b"results in /tmp/w1/bfs"), Some("/tmp/"));
    assert_eq!(machine_path_in(br#""--out", "OUT/h100/fair""#), None);
    assert_eq!(
        machine_path_in(b"scripts/gpu-suite.sh .carry/clvscu OUT/suite"),
        None
    );
}

/// One row of results/raw-index.csv: a raw file of a dated run folder that the working tree
/// no longer holds, and the commit whose tree does.
struct RawRow {
    path: String,
    bytes: u64,
    sha256: String,
    commit: String,
}

fn raw_rows() -> Vec<RawRow> {
    let text = std::fs::read_to_string(Path::new(RESULTS).join("raw-index.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("path,bytes,sha256,commit"));
    lines
        .map(|line| {
            let cols: Vec<&str> = line.split(',').collect();
            let [path, bytes, sha256, commit] = cols[..] else {
                panic!("malformed raw-index line: {line}");
            };
            RawRow {
                path: path.into(),
                bytes: bytes.parse().unwrap(),
                sha256: sha256.into(),
                commit: commit.into(),
            }
        })
        .collect()
}

/// The samples behind a dated folder's PRs are indexed, not dropped: each listed file is gone
/// from the tree while the run folder it came from, with its PR rows, is still there.
#[test]
fn the_raw_index_lists_files_the_tree_left_out_beside_their_run_folders() {
    let root = Path::new(RESULTS);
    let rows = raw_rows();
    assert!(!rows.is_empty());
    for r in &rows {
        let path = root.join(&r.path);
        assert!(!path.exists(), "{} is indexed and present", r.path);
        assert!(
            r.path.ends_with("/samples.csv.gz") || r.path.ends_with("/tune-cache.json"),
            "{}",
            r.path
        );
        let folder = path.parent().unwrap();
        let summary = ["prs.csv", "exhaustive/evaluations.csv"];
        assert!(
            summary.iter().any(|s| folder.join(s).is_file()),
            "{}: its run folder's rows are gone too",
            r.path
        );
        assert!(r.sha256.len() == 64 && r.commit.len() == 40, "{}", r.path);
    }
}

/// Each indexed file is in its commit, byte for byte.
#[test]
#[ignore = "needs the repository's git history"]
fn the_raw_index_matches_the_files_in_its_commit() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    for r in raw_rows() {
        let out = Command::new("git")
            .arg("-C")
            .arg(repo)
            .args(["show", &format!("{}:results/{}", r.commit, r.path)])
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "{}: {}",
            r.path,
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.stdout.len() as u64, r.bytes, "{}", r.path);
        let digest: String = Sha256::digest(&out.stdout)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(digest, r.sha256, "{}", r.path);
    }
}

/// The README of each H200 quick-pass folder says every step finished within its cap and the
/// pass exited 0: both are read here from the files it names.
#[test]
fn the_h200_quick_passes_finished_every_step_within_its_cap_and_exited_0() {
    for folder in [
        "h200-2026-11-28-quick",
        "h200-2026-11-29-quick",
        "h200-2026-11-29-quick-rows",
    ] {
        quick_pass_finished_within_its_caps(folder);
    }
}

fn quick_pass_finished_within_its_caps(folder: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("results")
        .join(folder);
    let csv = std::fs::read_to_string(dir.join("suite.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (status, wall, cap) = (col("status"), col("wall_s"), col("cap_s"));
    let mut steps = 0;
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        let (w, c): (f64, f64) = (f[wall].parse().unwrap(), f[cap].parse().unwrap());
        assert!(f[status] == "done" && w <= c, "{line}");
        steps += 1;
    }
    assert!(steps >= 18, "{steps} steps");
    assert!(csv.contains("\ncpu,done,"), "the cpu step ran");
    let exit = std::fs::read_to_string(dir.join("exit.txt")).unwrap();
    assert!(exit.starts_with("quick rc 0 in "), "{exit}");
    // The commit the README names is the one the run's provenance records.
    let provenance = std::fs::read_to_string(dir.join("table1/provenance.json")).unwrap();
    let commit = provenance
        .split("\"git_commit\": \"")
        .nth(1)
        .and_then(|rest| rest.get(..7))
        .unwrap();
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    assert!(
        readme.contains(&format!("`{commit}`")),
        "{folder}: {commit}"
    );
}

/// The resume on the H200 beside the last quick pass: a whole folder is measured again in
/// nothing, a folder cut by one row in that comparison alone, and the rows end whole.
#[test]
fn the_h200_resume_measured_again_only_what_was_cut() {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("results/h200-2026-11-29-quick-rows/resume");
    let log = std::fs::read_to_string(dir.join("run.log")).unwrap();
    for rc in ["run rc 0", "resume (whole) rc 0", "resume (cut) rc 0"] {
        assert!(log.contains(rc), "{rc}: {log}");
    }
    assert!(
        log.contains("0 measurement(s) verified and timed, 0 PR(s), 6 skipped (resume)"),
        "{log}"
    );
    assert!(
        log.contains("resume: matvec/listing7: 1 of 2 measurement rows; measured again"),
        "{log}"
    );
    assert!(
        log.contains("2 measurement(s) verified and timed, 1 PR(s), 5 skipped (resume)"),
        "{log}"
    );
    let rows: Vec<clvscu::rows::MeasurementRow> =
        clvscu::export::csv::read_rows(&dir.join("measurements.csv")).unwrap();
    let prs: Vec<clvscu::rows::PrRow> =
        clvscu::export::csv::read_rows(&dir.join("prs.csv")).unwrap();
    assert_eq!((rows.len(), prs.len()), (12, 6));
    assert!(rows.iter().all(|r| r.verified && r.device == "NVIDIA H200"));
    for f in [
        "provenance.json",
        "provenance-resume-1.json",
        "provenance-resume-2.json",
    ] {
        assert!(dir.join(f).is_file(), "{f}");
    }
    // The last resume measured one comparison again; its summary holds the folder's six.
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    let pr_table = summary.split("## Performance Ratio").nth(1).unwrap();
    for pr in &prs {
        assert!(
            pr_table.contains(&format!("| {} |", pr.comparison)),
            "{}",
            pr.comparison
        );
    }
}
