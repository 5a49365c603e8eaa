//! Every `clvscu` command in the README's shell blocks runs, through the binary, and succeeds:
//! a README whose quick start does not work is a bug. The commands run in a scratch folder
//! that sees the repository's committed `results/`, so nothing is written into the checkout.
//! The set-up block's two commands are the main job (`clvscu run` after a build, covered by
//! the quick start's run) and this test suite itself.

mod common;

use std::path::Path;

use assert_cmd::Command;
use clvscu::backend::opencl;

/// The `clvscu ...` lines of the README's ```sh blocks, without comments.
fn readme_commands(readme: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut in_sh = false;
    for line in readme.lines() {
        if line.starts_with("```") {
            in_sh = !in_sh && line.trim() == "```sh";
            continue;
        }
        let command = line.split('#').next().unwrap_or("").trim();
        if in_sh && command.starts_with("clvscu ") {
            commands.push(command.to_string());
        }
    }
    commands
}

#[test]
fn the_readme_blocks_are_read() {
    let text =
        "```sh\nclvscu devices   # list\nbash x.sh\n```\n```\nclvscu not-sh\n```\nclvscu prose\n";
    assert_eq!(readme_commands(text), ["clvscu devices"]);
}

#[test]
#[ignore = "needs OpenCL"]
fn every_readme_command_runs() {
    common::need("OpenCL", opencl::availability());
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(repo.join("README.md")).unwrap();
    let commands = readme_commands(&readme);
    assert!(
        commands.len() >= 5,
        "the quick start has five commands: {commands:?}"
    );
    let scratch = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(repo.join("results"), scratch.path().join("results")).unwrap();
    for command in &commands {
        let words: Vec<&str> = command.split_whitespace().skip(1).collect();
        let out = Command::cargo_bin("clvscu")
            .unwrap()
            .args(&words)
            .current_dir(scratch.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "`{command}` failed ({:?}):\n{}\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        println!("README command ran: {command}");
    }
}

/// The `clvscu` lines of the README's Quick start section.
fn quick_start(readme: &str) -> Vec<String> {
    let section = readme
        .split("\n## ")
        .find(|s| s.starts_with("Quick start"))
        .expect("a Quick start section");
    readme_commands(section)
}

/// The Quick start as typed in a fresh shell after `cargo install`: the binary found on PATH,
/// nothing else set but HOME (no LD_LIBRARY_PATH from the scripts). Where this test's own
/// process can load NVRTC, the clean shell must find it too.
#[test]
#[ignore = "needs OpenCL"]
fn the_quick_start_runs_in_a_clean_environment() {
    common::need("OpenCL", opencl::availability());
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(repo.join("README.md")).unwrap();
    let commands = quick_start(&readme);
    assert!(commands.len() >= 5, "{commands:?}");
    assert!(readme.contains("cargo install --locked --path ."));
    let binary = Path::new(env!("CARGO_BIN_EXE_clvscu"));
    let path = std::env::join_paths(
        std::iter::once(binary.parent().unwrap().to_path_buf())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(repo.join("results"), scratch.path().join("results")).unwrap();
    for command in &commands {
        let out = std::process::Command::new("sh")
            .args(["-c", command])
            .env_clear()
            .env("PATH", &path)
            .env("HOME", home.path())
            .current_dir(scratch.path())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "`{command}` failed ({:?}):\n{stdout}\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        if command == "clvscu devices" && clvscu::backend::cuda::nvrtc_availability().is_ok() {
            assert!(stdout.contains("CUDA kernels can be compiled"), "{stdout}");
        }
    }
}
