//! explain's replay over the fake backend: a runtime target's calls are replayed as a plain
//! program beside the harness, and the verdict rests on what the plain program pays. A gap
//! the plain loop shows too is the driver's calls; a gap the plain loop does not show is the
//! harness's own path; a replay that misses the target's PR proves nothing.

use clvscu::backend::fake::{FakeBackend, FakeScript};
use clvscu::backend::Api;
use clvscu::explain::attribute::{Cause, Interval, TargetExplanation, Verdict};
use clvscu::explain::replay;
use clvscu::kernels::KernelSources;
use clvscu::session::run::Sides;
use clvscu::study;

const STUDY: &str = r#"
name = "replay-fake"
[defaults]
timer = "wall-clock"
wait = "finish"
[[comparison]]
name = "launch/1x1-finish"
family = "launch"
variant = "empty"
size = "1"
[[comparison]]
name = "transfer/h2d-pageable"
family = "transfer"
variant = "h2d-pageable"
size = "2^12"
[[comparison]]
name = "matvec/listing4"
family = "matvec"
variant = "listing4"
size = "64x64"
"#;

fn sides(opencl: FakeScript, cuda: FakeScript) -> Sides {
    Sides {
        a: Box::new(FakeBackend::new(
            Api::OpenCl,
            opencl,
            clvscu::families::emulator(),
        )),
        b: Some(Box::new(FakeBackend::new(
            Api::Cuda,
            cuda,
            clvscu::families::emulator(),
        ))),
    }
}

fn quiet(wall_overhead_seconds: f64, harness_overhead_seconds: f64) -> FakeScript {
    FakeScript {
        wall_overhead_seconds,
        harness_overhead_seconds,
        jitter: 0.0,
        ..FakeScript::default()
    }
}

fn open_target(target: &str, pr: f64) -> TargetExplanation {
    TargetExplanation {
        target: target.into(),
        study: "replay-fake".into(),
        family: String::new(),
        variant: String::new(),
        size: String::new(),
        device: "fake".into(),
        pr: Some(Interval {
            value: pr,
            lo: pr - 0.005,
            hi: pr + 0.005,
        }),
        rungs: Vec::new(),
        verdict: Verdict::CodeOnly,
        verified: false,
        machine_code: None,
        replay: None,
        fix: None,
        shapes: Vec::new(),
    }
}

/// Replays the study's targets on two fakes and judges a target measured at `pr`.
fn judged(opencl: FakeScript, cuda: FakeScript, target: &str, pr: f64) -> TargetExplanation {
    let out = tempfile::tempdir().unwrap();
    let targets = study::parse(STUDY, "replay-fake.toml").unwrap().comparisons;
    let rows = replay::collect(
        &targets,
        &KernelSources::embedded(),
        &mut sides(opencl, cuda),
        out.path(),
    )
    .unwrap();
    assert!(out.path().join(replay::REPLAY_CSV).is_file());
    assert_eq!(replay::read(out.path()).unwrap(), rows);
    assert!(
        !rows.iter().any(|r| r.target == "matvec/listing4"),
        "a kernel target is not the runtime's calls: no replay"
    );
    let mut all = [open_target(target, pr)];
    replay::annotate(&mut all, &rows);
    let [t] = all;
    t
}

fn cause(t: &TargetExplanation) -> Option<Cause> {
    match &t.verdict {
        Verdict::Explained(c) if c.len() == 1 => Some(c[0].0.clone()),
        _ => None,
    }
}

#[test]
fn a_launch_gap_a_plain_program_shows_too_is_the_drivers_calls() {
    // OpenCL's driver costs 12 µs a launch, CUDA's 8: PR about 10 / 14.
    let (opencl, cuda) = (quiet(12e-6, 0.0), quiet(8e-6, 0.0));
    let t = judged(opencl, cuda, "launch/1x1-finish", 10.0 / 14.0);
    assert_eq!(cause(&t), Some(Cause::DriverCalls), "{t:?}");
    assert!(t.verified);
    let text = t.verdict_text();
    assert!(text.contains("clEnqueueNDRangeKernel"), "{text}");
    assert!(text.contains("cuLaunchKernel"), "{text}");
}

#[test]
fn a_launch_gap_the_plain_program_does_not_show_is_the_harnesss_path() {
    // Both drivers cost 8 µs; the harness adds 4 µs on OpenCL only.
    let (opencl, cuda) = (quiet(8e-6, 4e-6), quiet(8e-6, 0.0));
    let t = judged(opencl, cuda, "launch/1x1-finish", 10.0 / 14.0);
    assert_eq!(cause(&t), Some(Cause::HarnessPath), "{t:?}");
    assert!(t.verified);
}

#[test]
fn a_replay_that_misses_the_targets_pr_proves_nothing() {
    let (opencl, cuda) = (quiet(8e-6, 0.0), quiet(8e-6, 0.0));
    let t = judged(opencl, cuda, "launch/1x1-finish", 0.7);
    assert_eq!(t.verdict, Verdict::CodeOnly);
    assert!(!t.verified);
    assert!(t.replay.as_deref().unwrap().contains("proves no cause"));
}

#[test]
fn a_copy_gap_is_replayed_with_plain_blocking_copies() {
    let (opencl, cuda) = (quiet(12e-6, 0.0), quiet(8e-6, 0.0));
    let t = judged(opencl, cuda, "transfer/h2d-pageable", 10.0 / 14.0);
    assert_eq!(cause(&t), Some(Cause::DriverCalls), "{t:?}");
    let text = t.replay.unwrap();
    assert!(text.contains("clEnqueueWriteBuffer (blocking)"), "{text}");
    assert!(text.contains("cuMemcpyHtoD"), "{text}");
}
