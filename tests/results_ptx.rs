//! results/ keeps evidence, not copies: every PTX text is stored once, and
//! results/ptx-index.csv maps each PTX file a run produced to the stored copy with its
//! content (scripts/dedupe-ptx.py writes it).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

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
