//! The whole explain ladder over the fake backend, with scripted causes: a gap that the PTX
//! swap closes is the front end; a gap nothing closes is "unexplained"; a PR whose CI touches
//! parity is no gap. The verdict logic alone is tested in `src/explain/tests.rs`.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use clvscu::backend::fake::{FakeBackend, FakeScript};
use clvscu::backend::Api;
use clvscu::explain::attribute::Cause;
use clvscu::explain::run::{run, ExplainPlan};
use clvscu::explain::{TargetExplanation, Verdict};
use clvscu::kernels::KernelSources;
use clvscu::session::run::{Event, Sides};
use clvscu::study;

const STUDY: &str = r#"
name = "explain-fake"
[defaults]
warmup = 1
reps = 15
min_time = 0.0
timer = "device-event"
[[comparison]]
name = "matvec/listing4"
family = "matvec"
variant = "listing4"
size = "64x64"
"#;

/// Explains the study's one comparison over two fakes with these scripts.
fn explain(a: FakeScript, b: FakeScript, out: &Path) -> TargetExplanation {
    explain_noting(a, b, out).0
}

/// [`explain`], with the notes the run told of steps it left out.
fn explain_noting(a: FakeScript, b: FakeScript, out: &Path) -> (TargetExplanation, Vec<String>) {
    let study = study::parse(STUDY, "explain-fake.toml").unwrap();
    let sources = KernelSources::embedded();
    let interrupted = AtomicBool::new(false);
    let plan = ExplainPlan {
        targets: study.comparisons,
        out: out.to_path_buf(),
        resume: false,
        command_line: vec!["test".into()],
        context: clvscu::session::RunContext::new("explain-test".into(), &sources, &interrupted),
        swaps: clvscu::explain::run::SwapRungs::InProcess,
    };
    let mut sides = Sides {
        a: Box::new(FakeBackend::new(
            Api::OpenCl,
            a,
            clvscu::families::emulator(),
        )),
        b: Some(Box::new(FakeBackend::new(
            Api::Cuda,
            b,
            clvscu::families::emulator(),
        ))),
    };
    let mut notes = Vec::new();
    let report = run(&plan, &mut sides, &mut |event| {
        if let Event::Note(note) = event {
            notes.push(note);
        }
    })
    .unwrap();
    for file in ["explain.csv", "explain-verdicts.csv", "explain.md"] {
        assert!(out.join(file).is_file(), "{file} written");
    }
    assert_eq!(report.explanations.len(), 1);
    (report.explanations.into_iter().next().unwrap(), notes)
}

/// OpenCL's kernel text (and only it) is 25% slower wherever it runs.
fn slow_opencl_code() -> FakeScript {
    FakeScript {
        program_texts: true,
        slow_source: Some(("__kernel".into(), 1.25)),
        jitter: 0.002,
        ..FakeScript::default()
    }
}

#[test]
fn a_gap_the_ptx_swap_closes_is_called_the_front_end() {
    let dir = tempfile::tempdir().unwrap();
    let t = explain(slow_opencl_code(), slow_opencl_code(), dir.path());
    let pr = t.pr.expect("the target ran").value;
    assert!((0.75..0.85).contains(&pr), "scripted PR 0.8, got {pr}");
    assert_eq!(
        t.verdict,
        Verdict::Explained(vec![(Cause::FrontEnd, 1.0)]),
        "{}",
        t.verdict.describe()
    );
    let md = std::fs::read_to_string(dir.path().join("explain.md")).unwrap();
    assert!(md.contains("front end"), "{md}");
}

#[test]
fn a_gap_nothing_closes_is_called_unexplained() {
    let dir = tempfile::tempdir().unwrap();
    // The OpenCL runtime is slower at everything, and no program can be swapped.
    let a = FakeScript {
        runtime_factor: 1.25,
        jitter: 0.002,
        ..FakeScript::default()
    };
    let b = FakeScript {
        jitter: 0.002,
        ..FakeScript::default()
    };
    let t = explain(a, b, dir.path());
    match &t.verdict {
        Verdict::Unexplained { residual, .. } => assert!(*residual < 0.9, "{residual}"),
        v => panic!("expected unexplained, got {}", v.describe()),
    }
    // The swaps could not run, and say why instead of pretending.
    let swap = t
        .rungs
        .iter()
        .find(|r| r.kind == clvscu::explain::RungKind::NvrtcPtx)
        .expect("the swap rung is reported");
    assert!(swap.pr.is_none());
    assert!(!swap.note.is_empty());
}

#[test]
fn a_side_whose_program_cannot_be_built_is_left_out_of_the_code_and_told_why() {
    let dir = tempfile::tempdir().unwrap();
    let cuda_fails = FakeScript {
        program_texts: true,
        fail_build_containing: Some("matvec_listing4".into()),
        ..FakeScript::default()
    };
    let (t, notes) = explain_noting(slow_opencl_code(), cuda_fails, dir.path());
    assert!(t.pr.is_none(), "a side that does not build forms no PR");
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("matvec/listing4: CUDA's program not built")),
        "{notes:?}"
    );
    // The side that built keeps its text; the other is in no index row.
    let index = std::fs::read_to_string(dir.path().join("ptx/index.csv")).unwrap();
    assert!(
        index.contains("OpenCL") && !index.contains("CUDA"),
        "{index}"
    );
}

#[test]
fn a_pr_whose_ci_touches_parity_is_no_gap() {
    let dir = tempfile::tempdir().unwrap();
    let noisy = FakeScript {
        jitter: 0.05,
        ..FakeScript::default()
    };
    let t = explain(noisy.clone(), noisy, dir.path());
    assert_eq!(t.verdict, Verdict::NoGap, "{:?}", t.pr);
}

/// Each runtime's scripted register count for the same code, with their text loadable on
/// the other runtime.
fn with_registers(registers: u32) -> FakeScript {
    FakeScript {
        program_texts: true,
        registers: Some(registers),
        jitter: 0.002,
        ..FakeScript::default()
    }
}

fn rung<'t>(t: &'t TargetExplanation, prefix: &str) -> &'t clvscu::explain::attribute::RungOutcome {
    t.rungs
        .iter()
        .find(|r| r.kind.name().starts_with(prefix) && !r.kind.name().contains("-own-"))
        .unwrap_or_else(|| panic!("no {prefix} rung among {:?}", t.rungs))
}

fn names_registers(v: &Verdict) -> bool {
    matches!(v, Verdict::Explained(c) if c.iter().any(|(c, _)| matches!(c, Cause::Registers { .. })))
}

#[test]
fn a_gap_closed_by_the_caps_path_alone_is_not_called_a_register_cause() {
    let dir = tempfile::tempdir().unwrap();
    // OpenCL's runtime is 25% slower; on CUDA any register cap, even at the count it uses
    // anyway, slows the code as much: the path, not the count, closes the gap.
    let a = FakeScript {
        runtime_factor: 1.25,
        ..with_registers(153)
    };
    let b = FakeScript {
        cap_path_factor: 1.25,
        ..with_registers(167)
    };
    let t = explain(a, b, dir.path());
    let capped = rung(&t, "cuda-capped-to-r153");
    assert!(capped.closes, "the cap closes the PR: {capped:?}");
    let void = capped.void.as_deref().unwrap_or("");
    assert!(void.contains("control moved the PR"), "{capped:?}");
    assert!(!names_registers(&t.verdict), "{}", t.verdict.describe());
    let csv = std::fs::read_to_string(dir.path().join("explain.csv")).unwrap();
    assert!(csv.contains("void: its control moved the PR"), "{csv}");
}

#[test]
fn a_cap_that_closes_the_gap_with_its_control_held_is_the_register_allocation() {
    let dir = tempfile::tempdir().unwrap();
    // OpenCL's runtime is 25% slower; CUDA capped below its 167 registers is as slow, and
    // capped at its own count unchanged.
    let a = FakeScript {
        runtime_factor: 1.25,
        ..with_registers(153)
    };
    let b = FakeScript {
        capped_factor: 1.25,
        ..with_registers(167)
    };
    let t = explain(a, b, dir.path());
    let capped = rung(&t, "cuda-capped-to-r153");
    assert!(capped.closes && capped.void.is_none(), "{capped:?}");
    assert!(names_registers(&t.verdict), "{}", t.verdict.describe());
    // The fake leaves no machine code: the cause is not verified at the instruction level.
    assert!(!t.verified);
}
