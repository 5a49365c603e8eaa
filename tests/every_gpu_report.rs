//! The report over the folders of one `--cuda-device all` run on two H100s (copied from the
//! committed results): both GPUs under their one model, each named by its own bus, in the
//! Markdown report and on the HTML index.

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
    assert_eq!(
        md.matches("\n## NVIDIA H100 80GB HBM3\n").count(),
        1,
        "{md}"
    );
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert_eq!(index.matches("<h2>NVIDIA H100 80GB HBM3</h2>").count(), 1);
    for bus in ["pci 00:06", "pci 00:07"] {
        assert!(
            md.contains(&format!("This NVIDIA H100 80GB HBM3: {bus} · driver")),
            "{bus}"
        );
        assert!(index.contains(&format!("<h3>{bus} · driver")), "{bus}");
    }
}
