//! The house's rules, held against the code: which module of `src/` may name which. Every
//! `crate::…` path of a library file (its code before its tests) is read, so an import that
//! climbs a floor fails here with the file and the path, not in a review.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The top-level module a file of `src/` belongs to: `plot` for `src/plot/pr.rs`, `paper` for
/// `src/paper.rs`.
fn module_of(file: &Path) -> String {
    first_below(&src(), file)
}

/// The name of the first folder or file of `file` below `dir`, without `.rs`.
fn first_below(dir: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(dir).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Test files and inline test modules are left out: a test may build what it checks with
/// any module.
fn is_test_file(file: &Path) -> bool {
    let name = file.file_name().unwrap().to_string_lossy();
    name == "tests.rs"
        || name.starts_with("tests_")
        || file.components().any(|c| c.as_os_str() == "tests")
}

fn library_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![src()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") && !is_test_file(&path) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The code of `file` before its first top-level `#[cfg(test)]`, without line comments.
fn code_of(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    text.lines()
        .take_while(|l| !l.starts_with("#[cfg(test)]"))
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `crate::a::b…` path of `code`, as its segments (`use crate::{x, y}` counts as both).
fn paths_in(code: &str) -> BTreeSet<Vec<String>> {
    paths_after(code, "crate::")
}

/// Every path of `code` that starts with `prefix` (`crate::`, `super::`), as its segments
/// after it.
fn paths_after(code: &str, prefix: &str) -> BTreeSet<Vec<String>> {
    let mut out = BTreeSet::new();
    for (i, _) in code.match_indices(prefix) {
        let rest = &code[i + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            for item in inner.split(',') {
                out.insert(segments(item.trim()));
            }
        } else {
            out.insert(segments(rest));
        }
    }
    out.retain(|p| !p.is_empty());
    out
}

fn segments(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    loop {
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if end == 0 {
            break;
        }
        out.push(rest[..end].to_string());
        match rest[end..].strip_prefix("::") {
            Some(next) if next.starts_with(|c: char| c.is_ascii_lowercase()) => rest = next,
            _ => break,
        }
    }
    out
}

/// The paths of every library file of `modules` whose first segment is not in `allowed`.
fn reaches_outside(modules: &[&str], allowed: &[&str]) -> Vec<String> {
    let mut bad = Vec::new();
    for file in library_files() {
        let module = module_of(&file);
        if !modules.contains(&module.as_str()) {
            continue;
        }
        for path in paths_in(&code_of(&file)) {
            if !allowed.contains(&path[0].as_str()) && path[0] != module {
                bad.push(format!(
                    "{}: crate::{}",
                    file.strip_prefix(src()).unwrap().display(),
                    path.join("::")
                ));
            }
        }
    }
    bad
}

/// The pure helpers every floor may use.
const PURE: [&str; 6] = [
    "names",
    "stats",
    "paper",
    "terminal",
    "input_file",
    "host_memory",
];

#[test]
fn the_rows_reach_nothing_above_them() {
    let bad = reaches_outside(&["rows"], &["names"]);
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn the_outputs_read_only_rows_stats_and_paper() {
    let allowed: Vec<&str> = ["rows", "export", "plot", "report"]
        .into_iter()
        .chain(PURE)
        .collect();
    let bad = reaches_outside(&["export", "plot", "report"], &allowed);
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn the_backend_and_the_families_never_reach_up() {
    let below_session: Vec<&str> = ["rows", "backend", "kernels", "fairness", "export"]
        .into_iter()
        .chain(PURE)
        .collect();
    let bad = reaches_outside(
        &["backend"],
        &["rows", "names", "host_memory", "export", "stats"],
    );
    assert!(bad.is_empty(), "{bad:#?}");
    let bad = reaches_outside(&["families", "kernels", "fairness"], &below_session);
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn the_library_knows_no_command_line() {
    let mut bad = Vec::new();
    for file in library_files() {
        let module = module_of(&file);
        if module == "cli" || module == "main" {
            continue;
        }
        let code = code_of(&file);
        for path in paths_in(&code) {
            if path[0] == "cli" {
                bad.push(format!(
                    "{}: crate::cli",
                    file.strip_prefix(src()).unwrap().display()
                ));
            }
        }
        for krate in ["clap::", "anyhow::"] {
            if code.contains(krate) {
                bad.push(format!(
                    "{}: {krate}",
                    file.strip_prefix(src()).unwrap().display()
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

/// The families that implement `Family`, by their module's name under `src/families/`.
fn named_families() -> BTreeSet<String> {
    let dir = src().join("families");
    library_files()
        .into_iter()
        .filter(|f| f.starts_with(&dir) && code_of(f).contains("impl Family for"))
        .map(|f| first_below(&dir, &f))
        .collect()
}

#[test]
fn no_module_outside_the_families_names_a_family() {
    let families = named_families();
    assert!(
        families.contains("matvec") && families.contains("bfs"),
        "{families:?}"
    );
    let mut bad = Vec::new();
    for file in library_files() {
        if module_of(&file) == "families" {
            continue;
        }
        let code = code_of(&file).replace("clvscu::", "crate::");
        for path in paths_in(&code) {
            if path[0] == "families" && path.get(1).is_some_and(|m| families.contains(m)) {
                bad.push(format!(
                    "{}: crate::{}",
                    file.strip_prefix(src()).unwrap().display(),
                    path.join("::")
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

/// The other files of `file`'s folder (`mod.rs` left out) that its code names, through
/// `super::x` or `crate::…::x`: the arrows between the files of one room.
fn siblings_named(file: &Path) -> BTreeSet<String> {
    let dir = file.parent().unwrap();
    let folder: Vec<String> = dir
        .strip_prefix(src())
        .unwrap()
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let code = code_of(file);
    let through_crate = paths_in(&code)
        .into_iter()
        .filter(|p| p.len() > folder.len() && p[..folder.len()] == folder[..])
        .map(|p| p[folder.len()].clone());
    let through_super = paths_after(&code, "super::")
        .into_iter()
        .map(|p| p[0].clone());
    let own = file.file_stem().unwrap().to_string_lossy();
    through_crate
        .chain(through_super)
        .filter(|name| *name != own && name != "mod" && dir.join(format!("{name}.rs")).is_file())
        .collect()
}

/// A way from `start` back to itself along `arrows`, if there is one.
fn circle_through(arrows: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    let mut seen = BTreeSet::new();
    let mut ways = vec![vec![start.to_string()]];
    while let Some(way) = ways.pop() {
        for next in arrows.get(way.last().unwrap()).into_iter().flatten() {
            let mut longer = way.clone();
            longer.push(next.clone());
            if next == start {
                return Some(longer);
            }
            if seen.insert(next.clone()) {
                ways.push(longer);
            }
        }
    }
    None
}

/// Files of one folder never name each other in a circle (a folder's `mod.rs`, which declares
/// and re-exports its files, is left out): such a pair has no order to read it in, and one of
/// them holds what both need.
#[test]
fn no_files_of_a_folder_name_each_other_in_a_circle() {
    let mut rooms: BTreeMap<PathBuf, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for file in library_files() {
        let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
        if ["mod", "lib", "main"].contains(&stem.as_str()) {
            continue;
        }
        let named = siblings_named(&file);
        let room = rooms
            .entry(file.parent().unwrap().to_path_buf())
            .or_default();
        room.insert(stem, named);
    }
    assert!(
        rooms[&src().join("explain")]["output"].contains("launch"),
        "the arrows between the files of a folder are read"
    );
    let mut circles = Vec::new();
    for (dir, arrows) in &rooms {
        if let Some(circle) = arrows.keys().find_map(|f| circle_through(arrows, f)) {
            let dir = dir.strip_prefix(src()).unwrap().display();
            circles.push(format!("src/{dir}: {}", circle.join(" -> ")));
        }
    }
    assert!(circles.is_empty(), "{circles:#?}");
}
