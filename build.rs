//! Embeds the git commit in the binary, so results carry their provenance even where the
//! binary runs without a checkout (the GPU machine).
use std::process::Command;

fn main() {
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    let dirty = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()
        .ok()
        .map(|o| !o.stdout.is_empty())
        .unwrap_or(false);
    let value = if dirty {
        format!("{commit}-dirty")
    } else {
        commit
    };
    println!("cargo:rustc-env=CLVSCU_GIT_COMMIT={value}");
    // A commit moves HEAD's branch and the index; an edit moves a source file. Any of them
    // must re-run this script, or a binary built from edited files would carry the last
    // commit's name without "-dirty".
    for path in [
        ".git/HEAD",
        ".git/index",
        ".git/refs/heads",
        "src",
        "kernels_cl",
        "kernels_cu",
        "harness",
        "Cargo.toml",
        "Cargo.lock",
    ] {
        println!("cargo:rerun-if-changed={path}");
    }
}
