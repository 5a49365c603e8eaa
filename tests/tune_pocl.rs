//! `clvscu tune` on PoCL: the default (small) space of matvec/tuned and reduce/tuned is
//! tuned exhaustively and by annealing on the OpenCL CPU device in under two minutes, writes
//! every evaluation, and a second run measures nothing again.

mod common;

use std::time::{Duration, Instant};

use assert_cmd::Command;

fn tune(target: &str, out: &std::path::Path, strategy: &str) -> String {
    let o = Command::cargo_bin("clvscu")
        .unwrap()
        .args([
            "tune",
            target,
            "--pair",
            "opencl",
            "--strategy",
            strategy,
            "--reps",
            "3",
        ])
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    text
}

#[test]
#[ignore = "needs OpenCL"]
fn the_default_space_tunes_on_pocl_in_under_two_minutes() {
    common::need("OpenCL", clvscu::backend::opencl::availability());
    let dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    for target in ["matvec/tuned", "reduce/tuned"] {
        let out = dir.path().join(target.replace('/', "-"));
        let text = tune(target, &out, "exhaustive,anneal");
        assert!(text.contains("| exhaustive | OpenCL |"), "{text}");
        let csv = std::fs::read_to_string(out.join("evaluations.csv")).unwrap();
        // Header, and every point of the small space at least once, all verified.
        assert!(csv.lines().count() > 8, "{csv}");
        assert!(csv.lines().skip(1).all(|l| l.contains(",ok,")), "{csv}");
        // Resume: every evaluation of the second run comes from the cache.
        tune(target, &out, "random");
        let csv = std::fs::read_to_string(out.join("evaluations.csv")).unwrap();
        assert!(csv.lines().skip(1).all(|l| l.contains(",true,")), "{csv}");
    }
    assert!(
        start.elapsed() < Duration::from_secs(120),
        "{:?}",
        start.elapsed()
    );
}

/// SGEMM's tile sizes and SpMV's read path and lanes, tuned on PoCL with the small spaces:
/// every launched point verifies, the refused tilings are counted by rule, and the knobs reach
/// the OpenCL compiler (a tiling that does not match the work-group size fails to build).
#[test]
#[ignore = "needs OpenCL"]
fn sgemm_tiles_and_spmv_paths_tune_on_pocl() {
    use clvscu::backend::opencl::OpenClBackend;
    use clvscu::backend::{Backend, CompileRequest};
    use clvscu::kernels::KernelSources;
    common::need("OpenCL", clvscu::backend::opencl::availability());
    let dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    for (target, knob) in [
        ("sgemm/blocked", "SG_BM=64"),
        ("spmv/vector", "variant=vector-tex"),
    ] {
        let out = dir.path().join(target.replace('/', "-"));
        let text = tune(target, &out, "exhaustive");
        assert!(text.contains("| exhaustive | OpenCL |"), "{text}");
        let csv = std::fs::read_to_string(out.join("evaluations.csv")).unwrap();
        assert!(csv.lines().skip(1).all(|l| l.contains(",ok,")), "{csv}");
        assert!(csv.contains(knob), "{csv}");
        let answer = std::fs::read_to_string(out.join("answer.md")).unwrap();
        if target.starts_with("sgemm") {
            assert!(answer.contains("tile-loads"), "{answer}");
        }
    }
    let mut b = OpenClBackend::open(None).unwrap();
    let request = |local: u32, defines: &[(&str, &str)]| {
        let mut d = vec![("WG_SIZE".to_string(), local.to_string())];
        d.extend(defines.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        CompileRequest {
            source: KernelSources::embedded()
                .program(clvscu::backend::Api::OpenCl, "sgemm")
                .unwrap(),
            defines: d,
            flags: vec![],
            jit: Default::default(),
        }
    };
    let tile = [("SG_BM", "64"), ("SG_TM", "8"), ("SG_TN", "8")];
    let e = b
        .compile(&request(256, &tile))
        .expect_err("a 64 x 128 tile of 8 x 8 has 128 work-items, not 256");
    assert!(e.to_string().contains("WG_SIZE must be"), "{e}");
    assert!(b.compile(&request(128, &tile)).is_ok());
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "{:?}",
        start.elapsed()
    );
}

/// The stencil's tiles, matvec's vector width and SpMV's work-group size, tuned on PoCL with
/// the small spaces: every launched point verifies, the refused tiles are counted by rule, and
/// the knobs reach the OpenCL compiler (a tile that does not match the work-group size, or a
/// vector width the kernel lacks, fails to build naming the rule).
#[test]
#[ignore = "needs OpenCL"]
fn stencil_tiles_matvec_width_and_spmv_local_tune_on_pocl() {
    use clvscu::backend::opencl::OpenClBackend;
    use clvscu::backend::{Backend, CompileRequest};
    use clvscu::kernels::KernelSources;
    common::need("OpenCL", clvscu::backend::opencl::availability());
    let dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    for (target, knobs) in [
        (
            "stencil/fdtd3d",
            &[
                "X=32;ST_TILE_Y=4",
                "X=32;ST_TILE_Y=8",
                "X=64;ST_TILE_Y=4",
                "X=64;ST_TILE_Y=8",
            ][..],
        ),
        ("matvec/tuned-vec", &["MV_VEC=1", "MV_VEC=4"][..]),
        (
            "spmv/vector-local",
            &["OpenCL,1,0,64,", "OpenCL,2,1,256,"][..],
        ),
    ] {
        let out = dir.path().join(target.replace('/', "-"));
        let text = tune(target, &out, "exhaustive");
        assert!(text.contains("| exhaustive | OpenCL |"), "{text}");
        let csv = std::fs::read_to_string(out.join("evaluations.csv")).unwrap();
        assert_eq!(csv.lines().count(), 1 + knobs.len(), "{csv}");
        assert!(csv.lines().skip(1).all(|l| l.contains(",ok,")), "{csv}");
        for knob in knobs {
            assert!(csv.contains(knob), "{knob} missing: {csv}");
        }
        if target.starts_with("stencil") {
            let answer = std::fs::read_to_string(out.join("answer.md")).unwrap();
            assert!(
                answer.contains("3 tile-divides-grid") && answer.contains("2 tile-halo"),
                "{answer}"
            );
        }
    }
    let mut b = OpenClBackend::open(None).unwrap();
    let request = |stem: &str, local: u32, defines: &[(&str, &str)]| {
        let mut d = vec![("WG_SIZE".to_string(), local.to_string())];
        d.extend(defines.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        CompileRequest {
            source: KernelSources::embedded()
                .program(clvscu::backend::Api::OpenCl, stem)
                .unwrap(),
            defines: d,
            flags: vec![],
            jit: Default::default(),
        }
    };
    let tile = [("ST_TILE_X", "64"), ("ST_TILE_Y", "8")];
    let e = b
        .compile(&request("stencil", 256, &tile))
        .expect_err("a 64 x 8 tile has 512 work-items, not 256");
    assert!(e.to_string().contains("WG_SIZE must be ST_TILE_X"), "{e}");
    let e = b
        .compile(&request("matvec", 256, &[("MV_VEC", "3")]))
        .expect_err("no float3 loads");
    assert!(e.to_string().contains("MV_VEC must be"), "{e}");
    // Eight programs; a matvec program costs PoCL seconds (the test took 39-48 s with a
    // cold kernel cache on a loaded two-core machine).
    assert!(
        start.elapsed() < Duration::from_secs(90),
        "{:?}",
        start.elapsed()
    );
}

#[test]
#[ignore = "needs OpenCL"]
fn tune_without_cuda_falls_back_to_opencl_like_run() {
    common::need("OpenCL", clvscu::backend::opencl::availability());
    let cuda = clvscu::backend::cuda::availability();
    let dir = tempfile::tempdir().unwrap();
    // The default pair (opencl-cuda), as a user types it on a machine without CUDA.
    let o = Command::cargo_bin("clvscu")
        .unwrap()
        .args([
            "tune",
            "reduce/tuned",
            "--strategy",
            "random",
            "--budget",
            "2",
        ])
        .args(["--reps", "3", "--no-charts", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("| OpenCL |"), "{stdout}");
    if cuda.is_err() {
        assert!(stderr.contains("tuning OpenCL only"), "{stderr}");
        assert!(!stdout.contains("| CUDA |"), "{stdout}");
    }
}
