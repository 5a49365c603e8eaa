//! Embeds the git commit in the binary, so results carry their provenance even where the
//! binary runs without a checkout (the GPU machine), and every study of `harness/`, so each
//! runs by name without a list to keep in step with the folder; likewise every kernel file pair
//! of `kernels_cl/` and `kernels_cu/`.
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    embed_studies();
    embed_kernels();
    embed_matvec_rules();
    let value = match (
        git(&["rev-parse", "--short=12", "HEAD"]),
        built_from_edits(),
    ) {
        (Some(commit), true) => format!("{commit}-dirty"),
        (Some(commit), false) => commit,
        (None, _) => "unknown".into(),
    };
    println!("cargo:rustc-env=CLVSCU_GIT_COMMIT={value}");
    // A commit moves HEAD or its branch; an edit moves a file the binary is built from. Any
    // of them must re-run this script, or a binary built from edited files would carry the
    // last commit's name without "-dirty". The index is not watched: `git status` rewrites
    // it, and a rebuild on every status would recompile the crate for nothing.
    for path in git_paths()
        .iter()
        .map(String::as_str)
        .chain(BUILT_FROM.iter().copied())
    {
        println!("cargo:rerun-if-changed={path}");
    }
}

/// The tracked files the binary is built from (build.rs itself cargo watches anyway).
const BUILT_FROM: &[&str] = &[
    "src",
    "kernels_cl",
    "kernels_cu",
    "harness",
    "Cargo.toml",
    "Cargo.lock",
    "build.rs",
];

/// Git's answer to `args`, trimmed; `None` without git or outside a checkout.
fn git(args: &[&str]) -> Option<String> {
    Command::new("git")
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// Whether a file the binary is built from differs from the commit.
fn built_from_edits() -> bool {
    let mut args = vec!["status", "--porcelain", "--untracked-files=no", "--"];
    args.extend(BUILT_FROM);
    git(&args).is_some_and(|out| !out.is_empty())
}

/// HEAD, the branches and the packed refs, in this checkout's git folder (a worktree keeps
/// its HEAD apart from the shared refs).
fn git_paths() -> Vec<String> {
    let (Some(own), Some(common)) = (
        git(&["rev-parse", "--git-dir"]),
        git(&["rev-parse", "--git-common-dir"]),
    ) else {
        return Vec::new();
    };
    let mut paths = vec![format!("{own}/HEAD"), format!("{common}/refs/heads")];
    let packed = format!("{common}/packed-refs");
    // A path that does not exist would re-run the script on every build.
    if Path::new(&packed).exists() {
        paths.push(packed);
    }
    paths
}

/// Writes `$OUT_DIR/builtin_studies.rs`: one `(name, text)` entry per `harness/*.toml`,
/// `default` first (the study a bare `clvscu run` runs), the others by name.
fn embed_studies() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let mut names = study_names(&manifest.join("harness"));
    names.sort_by_key(|n| (n != "default", n.clone()));
    let mut text = String::from("&[\n");
    for name in &names {
        // The path is spelled from the manifest folder at compile time, so the generated
        // file holds no machine's path.
        text += &format!(
            "    (\"{name}\", include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/harness/{name}.toml\"))),\n"
        );
    }
    text += "]\n";
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    std::fs::write(out.join("builtin_studies.rs"), text).expect("OUT_DIR is writable");
    // The experiments' names only: an unknown study name that is one of them is pointed to
    // its file, which runs by path.
    let mut experiments = study_names(&manifest.join("harness/experiments"));
    experiments.sort();
    let list = format!("&{experiments:?}\n");
    std::fs::write(out.join("experiment_studies.rs"), list).expect("OUT_DIR is writable");
}

/// Writes `$OUT_DIR/embedded_kernels.rs`: one `(stem, OpenCL text, CUDA text)` entry per
/// `kernels_cl/<stem>.cl`, `prelude` first, the others by stem. A file without its twin in
/// `kernels_cu/` stops the build: the twins are one family's kernels.
fn embed_kernels() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let mut stems = file_stems(&manifest.join("kernels_cl"), "cl");
    let mut twins = file_stems(&manifest.join("kernels_cu"), "cu");
    stems.sort_by_key(|s| (s != "prelude", s.clone()));
    twins.sort_by_key(|s| (s != "prelude", s.clone()));
    assert_eq!(
        stems, twins,
        "kernels_cl/ and kernels_cu/ must hold the same file stems (one twin each)"
    );
    let mut text = String::from("&[\n");
    for stem in &stems {
        text += &format!(
            "    (\"{stem}\", include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/kernels_cl/{stem}.cl\")), include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/kernels_cu/{stem}.cu\"))),\n"
        );
    }
    text += "]\n";
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    std::fs::write(out.join("embedded_kernels.rs"), text).expect("OUT_DIR is writable");
}

/// Writes `$OUT_DIR/builtin_matvec_rules.rs`: one `(file name, text)` entry per
/// `harness/rules/*.toml`, the measured decision tables of `matvec/auto` (none: an empty list).
fn embed_matvec_rules() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let dir = manifest.join("harness").join("rules");
    let mut stems: Vec<String> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .map(|e| e.expect("harness/rules entry is readable").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .map(|p| {
            let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
            assert!(
                !stem.is_empty()
                    && stem
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
                "{}: a rule table's name must be letters, digits, - or _",
                p.display()
            );
            stem.to_string()
        })
        .collect();
    stems.sort();
    let mut text = String::from("&[\n");
    for stem in &stems {
        text += &format!(
            "    (\"{stem}.toml\", include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/harness/rules/{stem}.toml\"))),\n"
        );
    }
    text += "]\n";
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    std::fs::write(out.join("builtin_matvec_rules.rs"), text).expect("OUT_DIR is writable");
}

/// The stems of the `.{ext}` files in `dir`, each a plain name (it becomes a Rust string).
fn file_stems(dir: &Path, ext: &str) -> Vec<String> {
    let entries = std::fs::read_dir(dir).expect("kernel folder is readable");
    entries
        .map(|e| e.expect("kernel folder entry is readable").path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .map(|p| {
            let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
            assert!(
                !stem.is_empty() && stem.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                "{}: a kernel file's name must be letters, digits or _",
                p.display()
            );
            stem.to_string()
        })
        .collect()
}

/// The stems of the `.toml` files in `dir`. A stem that is not a plain name would not be typed
/// on a command line (nor fit in the generated Rust string): the build stops on it.
fn study_names(dir: &Path) -> Vec<String> {
    let entries = std::fs::read_dir(dir).expect("harness/ is readable");
    entries
        .map(|e| e.expect("harness/ entry is readable").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .map(|p| {
            let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
            assert!(
                !stem.is_empty()
                    && stem
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
                "harness/{stem}.toml: a study's file name must be letters, digits, - or _"
            );
            stem.to_string()
        })
        .collect()
}
