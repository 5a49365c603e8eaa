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
