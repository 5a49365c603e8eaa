//! The report over the folders of one `--cuda-device all` run on two H100s (copied from the
//! committed results): both GPUs, each under its own bus.

mod common;

use std::path::Path;

use assert_cmd::Command;

#[test]
fn the_report_over_every_gpu_shows_each_gpu() {
    let committed =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("results/2xh100-2026-11-26-at-once/every-gpu");
    let dir = tempfile::tempdir().unwrap();
    common::copy_tree(&committed, &dir.path().join("every-gpu"));
    let out = dir.path().join("out");
    Command::cargo_bin("clvscu")
        .unwrap()
        .args(["report", "--html", "--out"])
        .arg(&out)
        .arg(dir.path().join("every-gpu"))
        .assert()
        .success();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    for bus in ["pci 00:06", "pci 00:07"] {
        assert!(
            md.contains(&format!("## NVIDIA H100 80GB HBM3 ({bus})")),
            "{bus}"
        );
    }
    assert!(out.join("index.html").is_file());
}
