//! Session tests on the fake backend: no OpenCL, no CUDA, no GPU. They cover the runner
//! (verification, timing, failures), the fairness rules, resume, interruption, the sinks,
//! the whole `run` (passes, provenance, summary) and the outcome behind each exit code.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use super::run::{execute, Event, RunPlan, Sides};
use super::{run_study_with, InputCache, Outcome, RunContext, RunSummary};
use crate::backend::fake::{FakeBackend, FakeScript, FAKE_PLATFORM};
use crate::export::store::{CsvStore, Sink};
use crate::export::ExportError;
use crate::kernels::KernelSources;
use crate::rows::Api;
use crate::rows::ComparisonRows;
use crate::rows::{MeasurementRow, Side, Status, TimerKind};
use crate::rows::{MEASUREMENTS_CSV, PRS_CSV, SAMPLES_CSV};
use crate::study::{self, Study};

/// Keeps every comparison in memory; can be told to fail, to test what a session does then.
#[derive(Debug, Default)]
struct MemorySink {
    recorded: Vec<ComparisonRows>,
    /// Comparisons already stored before this run (as a resumed folder would hold).
    stored: HashMap<String, usize>,
    /// Every record after this many fails with an I/O error (a full disk, say).
    fail_after: Option<usize>,
}

impl Sink for MemorySink {
    fn stored_sides(&self, comparison: &str) -> usize {
        self.stored.get(comparison).copied().unwrap_or(0)
    }

    fn record(&mut self, rows: &ComparisonRows) -> Result<(), ExportError> {
        if self.fail_after.is_some_and(|n| self.recorded.len() >= n) {
            return Err(ExportError::Io {
                path: PathBuf::from("memory"),
                source: std::io::Error::other("scripted write failure"),
            });
        }
        self.recorded.push(rows.clone());
        Ok(())
    }
}

/// A study on small sizes; `body` holds its comparisons.
fn study(body: &str) -> Study {
    let text = format!(
        "name = \"t\"\n[defaults]\nfamily = \"matvec\"\nsize = \"64x40\"\nlocal = 64\n\
         warmup = 1\nreps = 4\nmin_time = 0\ntimer = \"device-event\"\n{body}"
    );
    study::parse(&text, "test.toml").unwrap()
}

const LISTING6: &str = "[[comparison]]\nvariant = \"listing6\"\n";
const TWO: &str = "[[comparison]]\nvariant = \"listing2\"\n[[comparison]]\nvariant = \"tuned\"\n";

fn fake(api: Api) -> FakeBackend {
    FakeBackend::new(api, FakeScript::default(), crate::families::emulator())
}

fn scripted(api: Api, script: FakeScript) -> FakeBackend {
    FakeBackend::new(api, script, crate::families::emulator())
}

/// Runs `s` over `a` and `b` into a memory sink.
fn run_on(
    s: &Study,
    a: &mut FakeBackend,
    b: Option<&mut FakeBackend>,
    sink: &mut dyn Sink,
    interrupted: &AtomicBool,
) -> Result<RunSummary, ExportError> {
    let sources = KernelSources::embedded();
    let ctx = RunContext::new("test".into(), &sources, interrupted);
    let b = b.map(|b| b as &mut dyn crate::backend::Runtime);
    run_study_with(s, a, b, sink, &ctx, &mut InputCache::default())
}

/// Runs `s` over two default fakes into `sink`.
fn run_into(s: &Study, sink: &mut dyn Sink) -> Result<RunSummary, ExportError> {
    let never = AtomicBool::new(false);
    run_on(
        s,
        &mut fake(Api::OpenCl),
        Some(&mut fake(Api::Cuda)),
        sink,
        &never,
    )
}

fn run_pair(s: &Study, a: &mut FakeBackend, b: &mut FakeBackend) -> (RunSummary, MemorySink) {
    let mut sink = MemorySink::default();
    let summary = run_on(s, a, Some(b), &mut sink, &AtomicBool::new(false)).unwrap();
    (summary, sink)
}

fn run_default_pair(s: &Study) -> (RunSummary, MemorySink) {
    run_pair(s, &mut fake(Api::OpenCl), &mut fake(Api::Cuda))
}

#[test]
fn a_fair_study_gives_one_verified_pr_per_comparison() {
    let (summary, sink) = run_default_pair(&study(TWO));
    assert_eq!(sink.recorded.len(), 2);
    assert_eq!(summary.prs.len(), 2);
    for pr in &summary.prs {
        assert!(pr.fair, "{}", pr.differing_steps);
        assert!(pr.pr > 0.9 && pr.pr < 1.1, "{}", pr.pr);
        assert!(pr.pr_ci_lo <= pr.pr && pr.pr <= pr.pr_ci_hi);
        assert_eq!((pr.api_a, pr.api_b), (Api::OpenCl, Api::Cuda));
    }
    assert!(summary.measurements.iter().all(|m| m.verified));
    assert_eq!(summary.outcome(), Outcome::Complete);
}

#[test]
fn every_row_names_the_fake_device_so_it_cannot_pass_for_a_measurement() {
    let (summary, _) = run_default_pair(&study(LISTING6));
    for m in &summary.measurements {
        assert_eq!(m.platform, FAKE_PLATFORM);
        assert!(m.device.starts_with("fake"), "{}", m.device);
    }
}

#[test]
fn one_side_alone_is_measured_but_forms_no_pr() {
    let mut sink = MemorySink::default();
    let s = study(LISTING6);
    let summary = run_on(
        &s,
        &mut fake(Api::OpenCl),
        None,
        &mut sink,
        &AtomicBool::new(false),
    )
    .unwrap();
    assert_eq!(summary.measurements.len(), 1);
    assert!(summary.prs.is_empty());
    assert_eq!(summary.outcome(), Outcome::Complete);
}

#[test]
fn a_build_failure_is_recorded_with_its_log_and_never_timed() {
    let mut b = scripted(
        Api::Cuda,
        FakeScript {
            fail_build_containing: Some("matvec_listing6".into()),
            ..FakeScript::default()
        },
    );
    let (summary, sink) = run_pair(&study(LISTING6), &mut fake(Api::OpenCl), &mut b);
    let rows = &sink.recorded[0];
    let cuda = &rows.measurements[1];
    assert_eq!(cuda.status, Status::BuildFailed);
    assert!(cuda.error.contains("build log"), "{}", cuda.error);
    assert!(rows.samples.iter().all(|s| s.side == Side::A));
    assert!(rows.pr.is_none());
    assert_eq!(summary.failed.len(), 1);
    assert!(
        summary.failed[0].contains("[CUDA]: build-failed"),
        "{:?}",
        summary.failed
    );
    assert_eq!(summary.outcome(), Outcome::FailedConfigs);
}

#[test]
fn a_wrong_result_is_verify_failed_with_its_error_and_never_timed() {
    let mut a = scripted(
        Api::OpenCl,
        FakeScript {
            wrong_results: vec!["matvec_listing6".into()],
            ..FakeScript::default()
        },
    );
    let (summary, sink) = run_pair(&study(LISTING6), &mut a, &mut fake(Api::Cuda));
    let opencl = &sink.recorded[0].measurements[0];
    assert_eq!(opencl.status, Status::VerifyFailed);
    assert!(!opencl.verified);
    assert!(opencl.max_error > 0.5, "{}", opencl.max_error);
    assert!(
        opencl.error.contains("exceeds tolerance"),
        "{}",
        opencl.error
    );
    assert!(opencl.median_s.is_nan(), "a failed side is never timed");
    assert!(summary.prs.is_empty());
}

#[test]
fn a_launch_that_fails_mid_measurement_fails_its_side_only() {
    // One verification launch and one warm-up launch succeed; the first timed one fails.
    let mut b = scripted(
        Api::Cuda,
        FakeScript {
            fail_launch_after: Some(2),
            ..FakeScript::default()
        },
    );
    let (summary, sink) = run_pair(&study(LISTING6), &mut fake(Api::OpenCl), &mut b);
    let rows = &sink.recorded[0].measurements;
    assert_eq!(rows[0].status, Status::Ok);
    assert_eq!(rows[1].status, Status::LaunchFailed);
    assert!(!rows[1].verified);
    assert!(
        rows[1].max_error.is_finite(),
        "the verification error is kept"
    );
    assert!(
        rows[1].error.contains("scripted failure"),
        "{}",
        rows[1].error
    );
    assert!(summary.prs.is_empty());
}

#[test]
fn a_missing_device_clock_is_a_clear_failure_and_the_wall_clock_still_works() {
    let no_timer = || {
        scripted(
            Api::Cuda,
            FakeScript {
                no_device_timer: true,
                ..FakeScript::default()
            },
        )
    };
    let (_, sink) = run_pair(&study(LISTING6), &mut fake(Api::OpenCl), &mut no_timer());
    let cuda = &sink.recorded[0].measurements[1];
    assert_eq!(cuda.status, Status::LaunchFailed);
    assert!(cuda
        .error
        .contains("device-event timer produced no usable sample"));

    let wall = study("[[comparison]]\nvariant = \"listing6\"\ntimer = \"wall-clock\"\n");
    let (summary, _) = run_pair(&wall, &mut fake(Api::OpenCl), &mut no_timer());
    assert_eq!(summary.prs.len(), 1);
    assert_eq!(summary.prs[0].timer, "wall-clock");
}

#[test]
fn both_sides_get_the_same_repetitions_interleaved() {
    let (mut a, mut b) = (fake(Api::OpenCl), fake(Api::Cuda));
    let (_, sink) = run_pair(&study(LISTING6), &mut a, &mut b);
    let per_side = |side: Side| {
        sink.recorded[0]
            .samples
            .iter()
            .filter(|s| s.side == side && s.timer == TimerKind::DeviceEvent)
            .count()
    };
    assert_eq!(per_side(Side::A), 4);
    assert_eq!(per_side(Side::B), 4);
    assert_eq!(a.launches(), b.launches());
    // verification + warm-up + repetitions
    assert_eq!(a.launches(), 1 + 1 + 4);
}

#[test]
fn a_minimum_time_counts_host_time_even_for_a_device_timed_kernel() {
    let s = study(
        "[[comparison]]\nvariant = \"listing6\"\nreps = 1\nmin_time = 0.0001\nmax_reps = 1000\n",
    );
    let (summary, _) = run_default_pair(&s);
    // 2 us of kernel would take 50 repetitions to fill 0.1 ms; 10 us of host time takes 10.
    let reps: Vec<u32> = summary.measurements.iter().map(|m| m.reps).collect();
    assert!(reps.iter().all(|&r| (10..=11).contains(&r)), "{reps:?}");
}

#[test]
fn a_minimum_time_adds_repetitions_up_to_the_cap() {
    let s = study("[[comparison]]\nvariant = \"listing6\"\nmin_time = 0.0005\nmax_reps = 30\n");
    let (summary, _) = run_default_pair(&s);
    // About 10 us of host time per fake launch (2 us of kernel, 8 us of launch and wait),
    // and `min_time` counts host time: 0.5 ms needs ~50 repetitions, capped at 30.
    assert!(
        summary.measurements.iter().all(|m| m.reps == 30),
        "{:?}",
        summary
            .measurements
            .iter()
            .map(|m| m.reps)
            .collect::<Vec<_>>()
    );
}

#[test]
fn side_b_takes_side_as_default_group_count_so_a_fair_pair_stays_fair() {
    let mut b = scripted(
        Api::Cuda,
        FakeScript {
            compute_units: 132,
            ..FakeScript::default()
        },
    );
    let s = study("[[comparison]]\nvariant = \"tuned\"\nsize = \"4096x40\"\n");
    let (summary, _) = run_pair(&s, &mut fake(Api::OpenCl), &mut b);
    let (ma, mb) = (&summary.measurements[0], &summary.measurements[1]);
    assert_eq!(ma.groups, mb.groups);
    assert!(summary.prs[0].fair, "{}", summary.prs[0].differing_steps);
}

#[test]
fn explicit_groups_on_one_side_make_the_configuration_step_unfair() {
    let s = study("[[comparison]]\nvariant = \"listing6\"\n[comparison.cuda]\ngroups = 3\n");
    let (summary, _) = run_default_pair(&s);
    let pr = &summary.prs[0];
    assert!(!pr.fair);
    assert!(
        pr.differing_steps.contains("configuration"),
        "{}",
        pr.differing_steps
    );
}

#[test]
fn a_one_sided_unroll_pragma_is_an_unfair_native_step() {
    let s =
        study("[[comparison]]\nvariant = \"listing6\"\n[comparison.opencl]\nunroll = { A = 4 }\n");
    let (summary, sink) = run_default_pair(&s);
    let pr = &summary.prs[0];
    assert!(!pr.fair);
    assert!(
        pr.differing_steps.contains("unroll.A"),
        "{}",
        pr.differing_steps
    );
    assert!(sink.recorded[0].measurements[0]
        .flags
        .contains("-DUNROLL_A=4"));
    assert!(!sink.recorded[0].measurements[1].flags.contains("UNROLL_A"));
}

#[test]
fn second_stage_options_held_equal_stay_fair_and_are_spelled_per_api() {
    let s = study(
        "[[comparison]]\nvariant = \"listing6\"\njit = { opt_level = 1, max_registers = 32 }\n",
    );
    let (summary, sink) = run_default_pair(&s);
    assert!(summary.prs[0].fair, "{}", summary.prs[0].differing_steps);
    let rows = &sink.recorded[0].measurements;
    assert!(rows[0]
        .flags
        .contains("-cl-nv-opt-level=1 -cl-nv-maxrregcount=32"));
    assert!(rows[1]
        .flags
        .contains("CU_JIT_OPTIMIZATION_LEVEL=1 CU_JIT_MAX_REGISTERS=32"));
}

#[test]
fn a_one_sided_jit_option_is_an_unfair_second_stage() {
    let s = study(
        "[[comparison]]\nvariant = \"listing6\"\n[comparison.cuda]\njit = { opt_level = 0 }\n",
    );
    let (summary, sink) = run_default_pair(&s);
    let pr = &summary.prs[0];
    assert!(!pr.fair);
    assert!(
        pr.differing_steps.contains("second-stage-compilation"),
        "{}",
        pr.differing_steps
    );
    assert!(!sink.recorded[0].measurements[0].flags.contains("opt-level"));
}

#[test]
fn jit_options_out_of_range_are_refused_naming_the_range() {
    let text = "name = \"t\"\n[defaults]\nfamily = \"matvec\"\nsize = \"8x8\"\n[[comparison]]\nvariant = \"listing6\"\njit = { opt_level = 4 }\n";
    let e = study::parse(text, "t.toml").unwrap_err().to_string();
    assert!(e.contains("0..=3"), "{e}");
}

#[test]
fn different_timers_are_an_unfair_running_step_named_in_the_row() {
    let s = study(
        "[[comparison]]\nvariant = \"listing6\"\n[comparison.opencl]\ntimer = \"wall-clock\"\n",
    );
    let (summary, _) = run_default_pair(&s);
    let pr = &summary.prs[0];
    assert!(!pr.fair);
    assert!(
        pr.differing_steps.starts_with("running:"),
        "{}",
        pr.differing_steps
    );
    assert_eq!(pr.timer, "wall-clock vs device-event");
}

#[test]
fn resume_skips_comparisons_whose_sides_are_stored() {
    let s = study(TWO);
    let mut sink = MemorySink::default();
    sink.stored.insert("matvec/listing2".into(), 2);
    let summary = run_into(&s, &mut sink).unwrap();
    assert_eq!(summary.skipped, 1);
    assert_eq!(sink.recorded.len(), 1);
    assert_eq!(sink.recorded[0].measurements[0].comparison, "matvec/tuned");
}

#[test]
fn the_progress_told_is_each_comparison_in_order_a_resumed_one_without_rows() {
    let s = study(TWO);
    let mut sink = MemorySink::default();
    sink.stored.insert("matvec/listing2".into(), 2);
    let told = std::cell::RefCell::new(Vec::new());
    let watch = |p: super::Progress| {
        told.borrow_mut().push(match p {
            super::Progress::Started { total } => format!("started {total}"),
            super::Progress::Measuring { id } => format!("measuring {id}"),
            super::Progress::Done { index, total, rows } => {
                let got = rows.map_or("kept".to_string(), |r| r.measurements[0].comparison.clone());
                format!("done {index}/{total} {got}")
            }
            super::Progress::Ended => "ended".into(),
        })
    };
    let sources = KernelSources::embedded();
    let never = AtomicBool::new(false);
    let ctx = RunContext {
        on_progress: Some(&watch),
        ..RunContext::new("test".into(), &sources, &never)
    };
    let (mut a, mut b) = (fake(Api::OpenCl), fake(Api::Cuda));
    let cache = &mut InputCache::default();
    run_study_with(&s, &mut a, Some(&mut b), &mut sink, &ctx, cache).unwrap();
    assert_eq!(
        told.into_inner(),
        [
            "started 2",
            "done 1/2 kept",
            "measuring matvec/tuned",
            "done 2/2 matvec/tuned",
            "ended"
        ]
    );
}

#[test]
fn resume_measures_again_a_comparison_with_one_side_stored() {
    let s = study(LISTING6);
    let mut sink = MemorySink::default();
    sink.stored.insert("matvec/listing6".into(), 1);
    let summary = run_into(&s, &mut sink).unwrap();
    assert_eq!(summary.skipped, 0);
    assert_eq!(sink.recorded.len(), 1);
}

/// Sets the interrupt flag once it has stored `after` comparisons, as a Ctrl-C then would.
struct InterruptingSink<'a> {
    inner: MemorySink,
    after: usize,
    flag: &'a AtomicBool,
}

impl Sink for InterruptingSink<'_> {
    fn record(&mut self, rows: &ComparisonRows) -> Result<(), ExportError> {
        self.inner.record(rows)?;
        if self.inner.recorded.len() >= self.after {
            self.flag.store(true, Ordering::SeqCst);
        }
        Ok(())
    }
}

#[test]
fn an_interruption_keeps_every_finished_comparison_and_stops() {
    let flag = AtomicBool::new(false);
    let mut sink = InterruptingSink {
        inner: MemorySink::default(),
        after: 1,
        flag: &flag,
    };
    let summary = run_on(
        &study(TWO),
        &mut fake(Api::OpenCl),
        Some(&mut fake(Api::Cuda)),
        &mut sink,
        &flag,
    )
    .unwrap();
    assert!(summary.interrupted);
    assert_eq!(sink.inner.recorded.len(), 1);
    assert_eq!(summary.prs.len(), 1);
    assert_eq!(summary.outcome(), Outcome::Interrupted);
}

#[test]
fn an_interruption_before_the_start_measures_nothing() {
    let mut sink = MemorySink::default();
    let (mut a, mut b) = (fake(Api::OpenCl), fake(Api::Cuda));
    let summary = run_on(
        &study(TWO),
        &mut a,
        Some(&mut b),
        &mut sink,
        &AtomicBool::new(true),
    );
    let summary = summary.unwrap();
    assert!(summary.interrupted);
    assert!(sink.recorded.is_empty());
    assert_eq!(a.launches() + b.launches(), 0);
}

#[test]
fn a_failed_write_ends_the_run_with_the_error() {
    let mut sink = MemorySink {
        fail_after: Some(1),
        ..MemorySink::default()
    };
    let e = run_into(&study(TWO), &mut sink).unwrap_err();
    assert!(e.to_string().contains("scripted write failure"), "{e}");
    assert_eq!(sink.recorded.len(), 1);
}

#[test]
fn no_device_buffer_outlives_a_comparison_even_when_a_side_fails() {
    let mut a = scripted(
        Api::OpenCl,
        FakeScript {
            wrong_results: vec!["matvec_tuned".into()],
            ..FakeScript::default()
        },
    );
    let mut b = scripted(
        Api::Cuda,
        FakeScript {
            fail_launch_after: Some(3),
            ..FakeScript::default()
        },
    );
    run_pair(&study(TWO), &mut a, &mut b);
    assert_eq!(a.live_buffers(), 0);
    assert_eq!(b.live_buffers(), 0);
}

#[test]
fn the_outcome_puts_interruption_before_failures_before_success() {
    let mut s = RunSummary::default();
    assert_eq!(s.outcome(), Outcome::Complete);
    s.failed.push("x".into());
    assert_eq!(s.outcome(), Outcome::FailedConfigs);
    s.interrupted = true;
    assert_eq!(s.outcome(), Outcome::Interrupted);
}

#[test]
fn the_metric_is_the_work_over_the_median_and_its_ci_is_ordered() {
    let (summary, _) = run_default_pair(&study(LISTING6));
    for m in &summary.measurements {
        let expected = m.bytes as f64 / 1e9 / m.median_s;
        assert!(
            (m.metric - expected).abs() <= 1e-9 * expected,
            "{} vs {expected}",
            m.metric
        );
        assert!(m.metric_ci_lo <= m.metric && m.metric <= m.metric_ci_hi);
        assert!(m.ci_lo_s <= m.median_s && m.median_s <= m.ci_hi_s);
    }
}

#[test]
fn the_same_script_gives_the_same_rows() {
    let (_, first) = run_default_pair(&study(TWO));
    let (_, second) = run_default_pair(&study(TWO));
    assert_eq!(first.recorded, second.recorded);
}

#[test]
fn sample_rows_name_their_side_api_and_clock() {
    let (_, sink) = run_default_pair(&study(LISTING6));
    let samples = &sink.recorded[0].samples;
    assert!(samples
        .iter()
        .any(|s| s.side == Side::B && s.api == Api::Cuda && s.timer == TimerKind::WallClock));
    assert!(samples.iter().all(|s| s.seconds > 0.0));
}

fn plan<'a>(
    s: Study,
    out: &std::path::Path,
    resume: bool,
    passes: u32,
    sources: &'a KernelSources,
    flag: &'a AtomicBool,
) -> RunPlan<'a> {
    RunPlan {
        study: s,
        out: out.to_path_buf(),
        resume,
        passes,
        command_line: vec!["clvscu".into(), "run".into()],
        study_text: None,
        context: RunContext::new("test".into(), sources, flag),
    }
}

fn fake_sides() -> Sides {
    Sides {
        a: Box::new(fake(Api::OpenCl)),
        b: Some(Box::new(fake(Api::Cuda))),
    }
}

#[test]
fn a_whole_run_writes_csvs_provenance_and_summary_and_resume_skips_it_all() {
    let dir = tempfile::tempdir().unwrap();
    let sources = KernelSources::embedded();
    let flag = AtomicBool::new(false);
    let p = plan(study(TWO), dir.path(), false, 1, &sources, &flag);
    let mut started = 0;
    let report = execute(&p, &mut fake_sides(), &mut |e| {
        if let Event::Started { .. } = e {
            started += 1;
        }
    })
    .unwrap();
    assert_eq!(started, 1);
    assert_eq!(report.summary.prs.len(), 2);
    for f in [
        MEASUREMENTS_CSV,
        PRS_CSV,
        SAMPLES_CSV,
        "provenance.json",
        "summary.md",
    ] {
        assert!(dir.path().join(f).exists(), "{f}");
    }
    let prov = std::fs::read_to_string(dir.path().join("provenance.json")).unwrap();
    assert!(prov.contains("fake OpenCL device") && prov.contains("kernel source sha256"));

    let again = execute(&p, &mut fake_sides(), &mut |_| {});
    assert!(
        again.is_err(),
        "a second run into a full folder needs --resume"
    );
    let p = plan(study(TWO), dir.path(), true, 1, &sources, &flag);
    let resumed = execute(&p, &mut fake_sides(), &mut |_| {}).unwrap();
    assert_eq!(resumed.summary.skipped, 2);
    assert!(resumed.summary.measurements.is_empty());
}

#[test]
fn passes_repeat_the_study_under_numbered_names_and_log_resources() {
    let dir = tempfile::tempdir().unwrap();
    let sources = KernelSources::embedded();
    let flag = AtomicBool::new(false);
    let p = plan(study(LISTING6), dir.path(), false, 3, &sources, &flag);
    let mut passes = Vec::new();
    let report = execute(&p, &mut fake_sides(), &mut |e| {
        if let Event::PassDone { row, of } = e {
            passes.push((row.pass, of));
        }
    })
    .unwrap();
    assert_eq!(passes, vec![(1, 3), (2, 3), (3, 3)]);
    let ids: Vec<&str> = report
        .summary
        .prs
        .iter()
        .map(|p| p.comparison.as_str())
        .collect();
    assert_eq!(
        ids,
        [
            "matvec/listing6#pass1",
            "matvec/listing6#pass2",
            "matvec/listing6#pass3"
        ]
    );
    let csv = std::fs::read_to_string(dir.path().join(crate::rows::PASSES_CSV)).unwrap();
    assert_eq!(csv.lines().count(), 4, "{csv}");
}

/// A resumed soak keeps the rows of the passes it found whole in `passes.csv`: each said
/// what its pass measured, and the resume measured nothing of them.
#[test]
fn a_resumed_soak_keeps_the_pass_rows_of_the_passes_it_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let sources = KernelSources::embedded();
    let flag = AtomicBool::new(false);
    let p = plan(study(LISTING6), dir.path(), false, 3, &sources, &flag);
    execute(&p, &mut fake_sides(), &mut |_| {}).unwrap();
    let path = dir.path().join(crate::rows::PASSES_CSV);
    let first: Vec<crate::rows::PassRow> = crate::export::csv::read_rows(&path).unwrap();
    // As a run interrupted in its third pass leaves it.
    delete_rows(dir.path(), MEASUREMENTS_CSV, "#pass3", false);
    let p = plan(study(LISTING6), dir.path(), true, 3, &sources, &flag);
    let report = execute(&p, &mut fake_sides(), &mut |_| {}).unwrap();
    assert_eq!(report.summary.skipped, 2);
    let after: Vec<crate::rows::PassRow> = crate::export::csv::read_rows(&path).unwrap();
    assert_eq!(after.len(), 3);
    assert_eq!(after[..2], first[..2]);
    assert_eq!((after[2].pass, after[2].measurements_ok), (3, 2));
}

/// A results folder of the tests, and what a run into it needs.
struct Folder {
    dir: tempfile::TempDir,
    sources: KernelSources,
    flag: AtomicBool,
}

impl Folder {
    fn new() -> Folder {
        Folder {
            dir: tempfile::tempdir().unwrap(),
            sources: KernelSources::embedded(),
            flag: AtomicBool::new(false),
        }
    }

    fn path(&self) -> &std::path::Path {
        self.dir.path()
    }

    /// One pass of `s` over `sides` into this folder.
    fn run(
        &self,
        s: Study,
        resume: bool,
        sides: Sides,
    ) -> Result<super::run::RunReport, super::run::SessionError> {
        execute_fake(
            &plan(s, self.path(), resume, 1, &self.sources, &self.flag),
            sides,
        )
    }
}

fn execute_fake(
    p: &RunPlan,
    sides: Sides,
) -> Result<super::run::RunReport, super::run::SessionError> {
    let mut sides = sides;
    execute(p, &mut sides, &mut |_| {})
}

fn failing_b_sides() -> Sides {
    Sides {
        a: Box::new(fake(Api::OpenCl)),
        b: Some(Box::new(scripted(
            Api::Cuda,
            FakeScript {
                fail_build_containing: Some("matvec_tuned".into()),
                ..FakeScript::default()
            },
        ))),
    }
}

#[test]
fn a_resume_of_another_study_size_or_pair_is_refused_naming_the_difference() {
    let folder = Folder::new();
    folder.run(study(TWO), false, fake_sides()).unwrap();
    let before = std::fs::read(folder.path().join(MEASUREMENTS_CSV)).unwrap();

    let mut other = study(TWO);
    other.name = "other".into();
    let e = folder.run(other, true, fake_sides());
    let e = e.err().expect("another study is refused").to_string();
    assert!(
        e.contains("study: the folder has t, this run has other"),
        "{e}"
    );

    let bigger = study(&TWO.replace(
        "variant = \"tuned\"",
        "variant = \"tuned\"\nsize = \"128x40\"",
    ));
    let e = folder.run(bigger, true, fake_sides());
    assert!(e.err().unwrap().to_string().contains("resolved study"));

    let one_side = Sides {
        a: Box::new(fake(Api::OpenCl)),
        b: None,
    };
    let e = folder.run(study(TWO), true, one_side);
    assert!(e
        .err()
        .unwrap()
        .to_string()
        .contains("sides: the folder has"));
    let after = std::fs::read(folder.path().join(MEASUREMENTS_CSV)).unwrap();
    assert_eq!(before, after, "a refused resume changes nothing");
}

#[test]
fn a_folder_with_rows_but_no_identity_is_not_resumed() {
    let folder = Folder::new();
    folder.run(study(TWO), false, fake_sides()).unwrap();
    std::fs::remove_file(folder.path().join(crate::export::folder::IDENTITY_FILE)).unwrap();
    let e = folder.run(study(TWO), true, fake_sides());
    assert!(e.err().unwrap().to_string().contains("no folder.json"));
}

#[test]
fn a_locked_folder_is_refused_naming_the_holder() {
    let folder = Folder::new();
    let held = crate::export::folder::lock(folder.path()).unwrap();
    let e = folder.run(study(TWO), false, fake_sides());
    let e = e.err().unwrap().to_string();
    assert!(
        e.contains("in use by another clvscu run")
            && e.contains(&format!("pid {}", std::process::id())),
        "{e}"
    );
    drop(held);
    assert!(folder.run(study(TWO), false, fake_sides()).is_ok());
}

#[test]
fn the_lock_goes_with_its_run_and_a_stale_one_is_taken_over() {
    let folder = Folder::new();
    let lock_file = folder.path().join(crate::export::folder::LOCK_FILE);
    // Left by a killed run: a file whose advisory lock died with its process.
    std::fs::write(&lock_file, "pid 999999 on gone since 2020").unwrap();
    let held = crate::export::folder::lock(folder.path()).unwrap();
    let text = std::fs::read_to_string(&lock_file).unwrap();
    assert!(
        text.contains(&format!("pid {}", std::process::id())),
        "{text}"
    );
    drop(held);
    assert!(!lock_file.exists(), "the lock outlived its holder");
    folder.run(study(TWO), false, fake_sides()).unwrap();
    assert!(!lock_file.exists(), "the lock outlived its run");
}

#[test]
fn a_deleted_or_replaced_lock_stops_every_later_write() {
    let folder = Folder::new();
    let lock_file = folder.path().join(crate::export::folder::LOCK_FILE);
    let held = crate::export::folder::lock(folder.path()).unwrap();
    let check = held.0.check.clone();
    assert!(check.still_held().is_ok());
    let guards = crate::export::store::Guards {
        identity: None,
        lock: Some(check.clone()),
    };
    let mut store = CsvStore::open_guarded(folder.path(), false, 2, guards).unwrap();
    std::fs::remove_file(&lock_file).unwrap();
    let e = store.record(&ComparisonRows::default()).unwrap_err();
    assert!(matches!(e, ExportError::LockLost { .. }), "{e}");
    // Another run's lock in its place is no better.
    let other = crate::export::folder::lock(folder.path()).unwrap();
    assert!(check.still_held().is_err());
    let before = std::fs::read(folder.path().join(SAMPLES_CSV)).unwrap();
    assert!(store.record(&ComparisonRows::default()).is_err());
    assert_eq!(
        std::fs::read(folder.path().join(SAMPLES_CSV)).unwrap(),
        before
    );
    drop(held);
    assert!(
        lock_file.exists(),
        "the first run removed the second's lock"
    );
    drop(other);
}

/// Deletes the data lines of `file` in `dir` whose text contains `needle`.
fn delete_rows(dir: &std::path::Path, file: &str, needle: &str, first_only: bool) {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut gone = false;
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| {
            let hit = l.contains(needle) && !(first_only && gone);
            gone |= hit;
            !hit
        })
        .collect();
    std::fs::write(&path, kept.join("\n") + "\n").unwrap();
}

#[test]
fn a_hand_truncated_folder_is_audited_and_its_broken_comparisons_measured_again() {
    let folder = Folder::new();
    let three = format!("{TWO}{LISTING6}");
    folder.run(study(&three), false, fake_sides()).unwrap();
    delete_rows(folder.path(), MEASUREMENTS_CSV, "matvec/listing2", true);
    delete_rows(folder.path(), PRS_CSV, "matvec/tuned", false);
    let report = folder.run(study(&three), true, fake_sides()).unwrap();
    assert_eq!(report.remeasured.len(), 2, "{:?}", report.remeasured);
    assert!(report.remeasured[0].contains("matvec/listing2: 1 of 2 measurement rows"));
    assert!(report.remeasured[1].contains("matvec/tuned: 0 PR rows"));
    assert_eq!(report.summary.skipped, 1);
    let data = crate::plot::input::load(&[folder.path().to_path_buf()], crate::families::catalog())
        .unwrap();
    assert_eq!(data.measurements.len(), 6, "whole comparisons only");
    assert_eq!(data.prs.len(), 3);
}

#[test]
fn pr_and_sample_rows_without_measurement_rows_are_dropped_and_measured_again_in_file_order() {
    let folder = Folder::new();
    folder.run(study(TWO), false, fake_sides()).unwrap();
    // As a kill between the samples' or PR's write and the measurements' leaves them.
    delete_rows(folder.path(), MEASUREMENTS_CSV, "matvec/", false);
    let report = folder.run(study(TWO), true, fake_sides()).unwrap();
    assert_eq!(
        report.remeasured,
        [
            "matvec/listing2: PR or sample rows without measurement rows (interrupted); \
             measured again",
            "matvec/tuned: PR or sample rows without measurement rows (interrupted); \
             measured again",
        ]
    );
    assert_eq!(report.summary.skipped, 0);
    let data = crate::plot::input::load(&[folder.path().to_path_buf()], crate::families::catalog())
        .unwrap();
    assert_eq!(data.measurements.len(), 4, "whole comparisons only");
    assert_eq!(data.prs.len(), 2);
}

#[test]
fn failed_configurations_are_retried_on_resume_and_the_outcome_covers_the_folder() {
    let folder = Folder::new();
    let first = folder.run(study(TWO), false, failing_b_sides()).unwrap();
    assert_eq!(first.summary.outcome(), Outcome::FailedConfigs);
    // Resumed with the same failure: still failed, not "0 failed".
    let again = folder.run(study(TWO), true, failing_b_sides()).unwrap();
    assert_eq!(again.summary.outcome(), Outcome::FailedConfigs);
    // The fake fails the whole matvec file, so both comparisons failed and are retried.
    assert_eq!(again.remeasured.len(), 2, "{:?}", again.remeasured);
    assert!(again.remeasured[1].contains("matvec/tuned: CUDA failed before (build-failed)"));
    // Resumed once the cause is gone: measured again and complete.
    let fixed = folder.run(study(TWO), true, fake_sides()).unwrap();
    assert_eq!(fixed.summary.outcome(), Outcome::Complete);
    assert_eq!(fixed.remeasured.len(), 2);
    let data = crate::plot::input::load(&[folder.path().to_path_buf()], crate::families::catalog())
        .unwrap();
    assert!(data.measurements.iter().all(|m| m.status == Status::Ok));
    assert_eq!(data.prs.len(), 2);
}

/// The summary a resume writes covers the folder, not only what the resume measured: an
/// interrupted run's finished comparisons stay in `summary.md`'s tables.
#[test]
fn a_resumed_folder_summary_holds_every_comparison_of_the_folder() {
    let folder = Folder::new();
    folder.run(study(TWO), false, fake_sides()).unwrap();
    // As an interrupted run leaves it: the second comparison is not whole.
    delete_rows(folder.path(), MEASUREMENTS_CSV, "matvec/tuned", false);
    let report = folder.run(study(TWO), true, fake_sides()).unwrap();
    assert_eq!(report.summary.skipped, 1);
    let summary = std::fs::read_to_string(folder.path().join("summary.md")).unwrap();
    let (measurements, prs) = summary.split_once("## Performance Ratio").unwrap();
    for (table, rows) in [(measurements, 2), (prs, 1)] {
        for c in ["matvec/listing2", "matvec/tuned"] {
            assert_eq!(
                table.matches(&format!("| {c} |")).count(),
                rows,
                "{summary}"
            );
        }
    }
}

#[test]
fn each_resume_adds_its_provenance_and_the_first_stays() {
    let folder = Folder::new();
    folder.run(study(TWO), false, fake_sides()).unwrap();
    let first = std::fs::read(folder.path().join("provenance.json")).unwrap();
    for _ in 0..2 {
        folder.run(study(TWO), true, fake_sides()).unwrap();
    }
    assert_eq!(
        std::fs::read(folder.path().join("provenance.json")).unwrap(),
        first
    );
    assert!(folder.path().join("provenance-resume-1.json").exists());
    assert!(folder.path().join("provenance-resume-2.json").exists());
}

#[test]
fn a_one_sided_define_is_an_unfair_implementation_step() {
    let s = study(
        "[[comparison]]\nvariant = \"listing6\"\n[comparison.cuda]\ndefines = { USE_SUBGROUPS = \"1\" }\n",
    );
    let (summary, _) = run_default_pair(&s);
    let pr = &summary.prs[0];
    assert!(!pr.fair);
    assert!(
        pr.differing_steps.starts_with("implementation:")
            && pr.differing_steps.contains("with USE_SUBGROUPS=1"),
        "{}",
        pr.differing_steps
    );
}

fn with_texts(api: Api) -> FakeBackend {
    scripted(
        api,
        FakeScript {
            program_texts: true,
            ..FakeScript::default()
        },
    )
}

#[test]
fn a_side_can_run_the_other_sides_program_and_the_row_says_so() {
    for side in ["cuda", "opencl"] {
        let s = study(&format!(
            "[[comparison]]\nvariant = \"tuned\"\n[comparison.{side}]\nprogram = \"other\"\n"
        ));
        let (summary, sink) =
            run_pair(&s, &mut with_texts(Api::OpenCl), &mut with_texts(Api::Cuda));
        assert!(summary.measurements.iter().all(|m| m.verified), "{side}");
        // One front end's program on both runtimes: every step equal, the PR the runtimes'.
        let pr = &summary.prs[0];
        assert!(pr.fair, "{}", pr.differing_steps);
        let m = &sink.recorded[0].measurements;
        let (own, other) = if side == "cuda" {
            (&m[0], &m[1])
        } else {
            (&m[1], &m[0])
        };
        assert!(other.flags.contains("program=other"), "{}", other.flags);
        assert!(!own.flags.contains("program=other"), "{}", own.flags);
        // The row names whose front end made the program: the own side's API on both.
        assert_eq!(own.front_end, Some(own.api), "{side}");
        assert_eq!(other.front_end, Some(own.api), "{side}");
    }
}

#[test]
fn a_side_without_the_other_sides_program_fails_and_says_why() {
    let s = study("[[comparison]]\nvariant = \"tuned\"\n[comparison.cuda]\nprogram = \"other\"\n");
    // The default fake, like PoCL, gives no program text.
    let (summary, _) = run_default_pair(&s);
    let cuda = &summary.measurements[1];
    assert!(!cuda.verified);
    assert!(
        cuda.error.contains("gave no program text"),
        "{}",
        cuda.error
    );
    assert!(summary.prs.is_empty(), "a failed side forms no PR");
    let both = "[[comparison]]\nvariant = \"tuned\"\nprogram = \"other\"\n";
    let text = format!("name = \"t\"\n[defaults]\nfamily = \"matvec\"\n{both}");
    let e = study::parse(&text, "t.toml").unwrap_err().to_string();
    assert!(e.contains("on both sides"), "{e}");
}

/// A side that runs the other side's program, when that side built but did not verify,
/// says so: not that the other side did not build.
#[test]
fn a_side_whose_other_side_failed_verification_names_that_failure() {
    let s = study("[[comparison]]\nvariant = \"tuned\"\n[comparison.cuda]\nprogram = \"other\"\n");
    let mut wrong = scripted(
        Api::OpenCl,
        FakeScript {
            program_texts: true,
            wrong_results: vec!["matvec_tuned".into()],
            ..FakeScript::default()
        },
    );
    let (summary, _) = run_pair(&s, &mut wrong, &mut with_texts(Api::Cuda));
    let (opencl, cuda) = (&summary.measurements[0], &summary.measurements[1]);
    assert_eq!(opencl.status, Status::VerifyFailed);
    assert!(!cuda.verified);
    assert!(!cuda.error.contains("did not build"), "{}", cuda.error);
    assert!(cuda.error.contains("verify-failed"), "{}", cuda.error);
    assert!(summary.prs.is_empty());
}

/// A 1 x 1 launch on the host clock; `sides` adds side tables.
fn launch_study(sides: &str) -> Study {
    study(&format!(
        "[[comparison]]\nname = \"w\"\nfamily = \"launch\"\nvariant = \"empty\"\nsize = \"1\"\n\
         local = 1\ntimer = \"wall-clock\"\n{sides}"
    ))
}

#[test]
fn every_row_names_its_wait_mode_finish_by_default() {
    let (summary, sink) = run_default_pair(&launch_study(""));
    let rows = &sink.recorded[0].measurements;
    assert_eq!(rows.len(), 2);
    for r in rows {
        assert_eq!(r.wait_mode, Some(crate::rows::WaitMode::Finish), "{r:?}");
    }
    assert!(summary.prs[0].fair, "{}", summary.prs[0].differing_steps);
}

#[test]
fn a_one_sided_blocking_wait_is_an_unfair_running_step_and_costs_the_wake_up() {
    let (summary, sink) =
        run_default_pair(&launch_study("[comparison.cuda]\nwait = \"blocking\"\n"));
    let pr = &summary.prs[0];
    assert!(!pr.fair);
    assert!(
        pr.differing_steps.contains("wait=finish") && pr.differing_steps.contains("wait=blocking"),
        "{}",
        pr.differing_steps
    );
    let rows = &sink.recorded[0].measurements;
    let (a, b) = (&rows[0], &rows[1]);
    assert_eq!(b.wait_mode, Some(crate::rows::WaitMode::Blocking));
    // The fake scripts a wake-up for a blocking wait: the host clock must include it.
    let wake = FakeScript::default().wake_up_seconds;
    assert!(
        b.median_s > a.median_s + 0.5 * wake,
        "{} vs {}",
        b.median_s,
        a.median_s
    );
}

/// Medians of the two sides of a 1 x 1 wall-clock launch on fakes that share one pretend GPU
/// whose switch between the two APIs costs 100 µs.
fn medians_with_a_context_switch(sides: &str) -> (Vec<MeasurementRow>, f64) {
    let script = FakeScript {
        context_switch_seconds: 1e-4,
        jitter: 0.0,
        ..FakeScript::default()
    };
    let mut a = FakeBackend::new(Api::OpenCl, script.clone(), crate::families::emulator());
    let mut b = FakeBackend::new(Api::Cuda, script.clone(), crate::families::emulator());
    let (_, sink) = run_pair(&launch_study(sides), &mut a, &mut b);
    let launch = script.base_seconds + script.wall_overhead_seconds;
    (sink.recorded[0].measurements.clone(), launch)
}

#[test]
fn with_the_wall_clock_sides_take_turns_so_the_gpus_context_switch_is_not_timed() {
    let (rows, launch) = medians_with_a_context_switch("");
    for r in &rows {
        assert_eq!(r.turn, Some(crate::study::WALL_CLOCK_TURN), "{r:?}");
        assert!(
            (r.median_s - launch).abs() < 1e-9,
            "{} vs {launch}",
            r.median_s
        );
    }
}

#[test]
fn alternating_every_repetition_puts_the_context_switch_on_the_host_clock() {
    let (rows, launch) = medians_with_a_context_switch("turn = 1\n");
    for r in &rows {
        assert_eq!(r.turn, Some(1));
        assert!(
            (r.median_s - (launch + 1e-4)).abs() < 1e-9,
            "{}",
            r.median_s
        );
    }
}

#[test]
fn a_one_sided_turn_is_an_unfair_running_step() {
    let (summary, _) = run_default_pair(&launch_study("[comparison.cuda]\nturn = 1\n"));
    let pr = &summary.prs[0];
    assert!(!pr.fair);
    assert!(pr.differing_steps.contains("turn=10") && pr.differing_steps.contains("turn=1 "));
}

#[test]
fn the_device_event_timer_keeps_alternating_every_repetition() {
    let (_, sink) = run_default_pair(&study(LISTING6));
    assert!(sink.recorded[0]
        .measurements
        .iter()
        .all(|r| r.turn == Some(1)));
}

#[test]
fn back_to_back_launches_are_timed_per_launch_and_verified() {
    let s = study(
        "[[comparison]]\nfamily = \"launch\"\nvariant = \"back-to-back\"\nsize = \"50\"\n\
         local = 1\ntimer = \"device-event\"\n",
    );
    let mut a = fake(Api::OpenCl);
    let (summary, sink) = run_pair(&s, &mut a, &mut fake(Api::Cuda));
    let rows = &sink.recorded[0].measurements;
    assert!(rows.iter().all(|r| r.status == Status::Ok), "{rows:?}");
    // The fake's device time of one launch is base + floats: per launch, not times 50.
    let one = FakeScript::default().base_seconds;
    assert!(rows[0].median_s < 2.0 * one, "{}", rows[0].median_s);
    assert!(summary.prs[0].fair);
    // Verification and every timed run launch 50 kernels each.
    assert_eq!(a.launches() % 50, 0);
    assert!(a.launches() >= 50 * 5);
}

#[test]
fn transfers_run_verified_and_record_no_queue_intervals_where_the_api_has_none() {
    let s = study(
        "[[comparison]]\nfamily = \"transfer\"\nvariant = \"d2h-pinned\"\nsize = \"1000\"\n\
         timer = \"wall-clock\"\n[[comparison]]\nfamily = \"transfer\"\nvariant = \"overlap-concurrent\"\n\
         size = \"1000\"\ntimer = \"wall-clock\"\n",
    );
    let (summary, sink) = run_default_pair(&s);
    assert_eq!(summary.prs.len(), 2);
    for c in &sink.recorded {
        for r in &c.measurements {
            assert_eq!(r.status, Status::Ok, "{r:?}");
            assert!(r.verified);
            assert_eq!(r.queued_to_submit_s, None);
        }
    }
}

#[test]
fn bfs_rows_carry_the_depth_of_the_verified_search_and_other_rows_none() {
    let s = study(
        "[[comparison]]\nfamily = \"bfs\"\nvariant = \"random-uniform\"\nsize = \"2^10\"\n\
         [[comparison]]\nfamily = \"bfs\"\nvariant = \"uniform\"\nsize = \"2^10\"\n\
         [[comparison]]\nvariant = \"listing6\"\n",
    );
    let (_, sink) = run_default_pair(&s);
    let depth = |variant| {
        let v = crate::families::find_variant(crate::families::FamilyId::Bfs, variant).unwrap();
        let size = crate::families::Size::parse("2^10").unwrap();
        let inputs = crate::families::exec::Inputs::of_variant(
            v,
            size,
            1,
            &crate::families::matrix::MatrixSource::Uniform,
        );
        crate::families::get(crate::families::FamilyId::Bfs)
            .levels(&inputs)
            .unwrap()
    };
    let levels = |i: usize| -> Vec<Option<u64>> {
        sink.recorded[i]
            .measurements
            .iter()
            .map(|r| r.levels)
            .collect()
    };
    let random = depth("random-uniform");
    assert!(random > 1, "{random}");
    assert_eq!(levels(0), vec![Some(random); 2]);
    // A layered graph's measured depth is the one its size fixes.
    let layered = crate::families::bfs::levels(1 << 10);
    assert_eq!(depth("uniform"), layered);
    assert_eq!(levels(1), vec![Some(layered); 2]);
    assert_eq!(levels(2), vec![None; 2]);
}

#[test]
fn a_cuda_only_carveout_is_an_unfair_second_stage_named_in_the_row_and_range_checked() {
    let s = study(
        "[[comparison]]\nvariant = \"listing6\"\n[comparison.cuda]\njit = { carveout = 100 }\n",
    );
    let (summary, sink) = run_default_pair(&s);
    let pr = &summary.prs[0];
    assert!(!pr.fair);
    assert!(
        pr.differing_steps.contains("shared-memory carveout 100%"),
        "{}",
        pr.differing_steps
    );
    let rows = &sink.recorded[0].measurements;
    assert!(!rows[0].flags.contains("CARVEOUT"), "{}", rows[0].flags);
    assert!(
        rows[1]
            .flags
            .contains("CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT=100"),
        "{}",
        rows[1].flags
    );
    let text = "name = \"t\"\n[defaults]\nfamily = \"matvec\"\nsize = \"8x8\"\n[[comparison]]\nvariant = \"listing6\"\njit = { carveout = 101 }\n";
    let e = study::parse(text, "t.toml").unwrap_err().to_string();
    assert!(e.contains("0..=100"), "{e}");
}

/// A runtime-bound study (a launch) starts with the quick calibration: its files lie beside
/// the rows, the provenance notes it, and the summary flags a harness overhead that falls on
/// one side only.
#[test]
fn a_runtime_study_is_calibrated_and_one_sided_harness_overhead_is_flagged() {
    let sources = KernelSources::embedded();
    let flag = AtomicBool::new(false);
    for (opencl_overhead, flagged) in [(0.0, false), (1e-6, true)] {
        let dir = tempfile::tempdir().unwrap();
        let p = plan(launch_study(""), dir.path(), false, 1, &sources, &flag);
        let mut sides = Sides {
            a: Box::new(scripted(
                Api::OpenCl,
                FakeScript {
                    harness_overhead_seconds: opencl_overhead,
                    ..FakeScript::default()
                },
            )),
            b: Some(Box::new(fake(Api::Cuda))),
        };
        execute(&p, &mut sides, &mut |_| {}).unwrap();
        for f in [
            crate::rows::CALIBRATION_CSV,
            crate::rows::CALIBRATION_PR_CSV,
            crate::calibrate::REPORT_MD,
        ] {
            assert!(dir.path().join(f).exists(), "{f}");
        }
        let summary = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
        let prov = std::fs::read_to_string(dir.path().join("provenance.json")).unwrap();
        assert!(summary.contains("# Runtime calibration"), "{summary}");
        assert!(prov.contains("runtime calibration: "), "{prov}");
        assert_eq!(summary.contains("FLAGGED"), flagged, "{summary}");
        assert_eq!(prov.contains("FLAGGED"), flagged);
    }
    // A study of no runtime-bound row is not calibrated.
    let dir = tempfile::tempdir().unwrap();
    let p = plan(study(LISTING6), dir.path(), false, 1, &sources, &flag);
    execute(&p, &mut fake_sides(), &mut |_| {}).unwrap();
    assert!(!dir.path().join(crate::rows::CALIBRATION_CSV).exists());
}

/// A resumed runtime-bound study keeps its first calibration, and its summary still says
/// what that calibration found.
#[test]
fn a_resumed_runtime_study_summarises_the_calibration_it_kept() {
    let folder = Folder::new();
    let sides = || Sides {
        a: Box::new(scripted(
            Api::OpenCl,
            FakeScript {
                harness_overhead_seconds: 1e-6,
                ..FakeScript::default()
            },
        )),
        b: Some(Box::new(fake(Api::Cuda))),
    };
    folder.run(launch_study(""), false, sides()).unwrap();
    let calibration = folder.path().join(crate::rows::CALIBRATION_CSV);
    let first = std::fs::read(&calibration).unwrap();
    let report = folder.run(launch_study(""), true, sides()).unwrap();
    assert_eq!(report.summary.skipped, 1);
    assert_eq!(
        std::fs::read(&calibration).unwrap(),
        first,
        "kept as it was"
    );
    let summary = std::fs::read_to_string(folder.path().join("summary.md")).unwrap();
    assert!(summary.contains("# Runtime calibration"), "{summary}");
    assert!(summary.contains("FLAGGED"), "{summary}");
}

#[test]
fn the_input_cache_returns_a_set_seen_earlier_and_evicts_the_least_recently_used_past_its_budget() {
    use crate::families::matrix::MatrixSource;
    let bfs = |v| crate::families::find_variant(crate::families::FamilyId::Bfs, v).unwrap();
    let size = |s| crate::families::Size::parse(s).unwrap();
    let m = MatrixSource::Uniform;
    let (uniform, layered) = (bfs("random-uniform"), bfs("uniform"));
    // Room for everything: a graph made first is the same set three requests later.
    let mut roomy = super::InputCache::with_budget(usize::MAX);
    let first = roomy.get(uniform, size("2^10"), 1, &m);
    roomy.get(layered, size("2^10"), 1, &m);
    roomy.get(uniform, size("2^11"), 1, &m);
    assert!(std::rc::Rc::ptr_eq(
        &first,
        &roomy.get(uniform, size("2^10"), 1, &m)
    ));
    assert_eq!(roomy.entries.len(), 3);
    // No room beyond the last two: the oldest goes, and asking again makes a new set.
    let mut tight = super::InputCache::with_budget(0);
    let first = tight.get(uniform, size("2^10"), 1, &m);
    tight.get(layered, size("2^10"), 1, &m);
    tight.get(uniform, size("2^11"), 1, &m);
    assert_eq!(tight.entries.len(), 2);
    assert!(!std::rc::Rc::ptr_eq(
        &first,
        &tight.get(uniform, size("2^10"), 1, &m)
    ));
    // A hit moves a set to the back: it outlives one made after it.
    let mut lru = super::InputCache::with_budget(0);
    let kept = lru.get(uniform, size("2^10"), 1, &m);
    lru.get(layered, size("2^10"), 1, &m);
    lru.get(uniform, size("2^10"), 1, &m);
    lru.get(uniform, size("2^11"), 1, &m);
    assert!(std::rc::Rc::ptr_eq(
        &kept,
        &lru.get(uniform, size("2^10"), 1, &m)
    ));
}

/// Every program a run builds is built ahead, several at once, from the very requests the
/// comparisons then make: no comparison builds its own, on either side, whatever its launch
/// (a sweep of local sizes, unroll defines, flags that differ by side).
#[test]
fn every_program_is_built_ahead_from_the_requests_the_comparisons_make() {
    let s = study(
        "[[comparison]]\nvariant = \"listing6\"\nunroll = { A = 4 }\n\
         [[comparison]]\nvariant = \"tuned\"\n\
         [[sweep]]\nvariant = \"listing2\"\nparam = \"local\"\nvalues = [32, 64, 128]\n",
    );
    let (mut a, mut b) = (fake(Api::OpenCl), fake(Api::Cuda));
    let (summary, _) = run_pair(&s, &mut a, &mut b);
    assert_eq!(summary.measurements.len(), 10);
    assert!(summary.failed.is_empty(), "{:?}", summary.failed);
    for side in [&a, &b] {
        let builds = side.builds();
        assert_eq!(builds.in_compile, 0, "{builds:?}");
        // One file per family: `tuned` and the sweep's `listing2` at 64 share one program.
        assert_eq!(
            builds.ahead, 4,
            "one program per distinct build: {builds:?}"
        );
    }
    assert_eq!(summary.built_ahead, 8);
}

/// A build that fails ahead is built again in its comparison, which reports the compiler's
/// log as it did before builds went ahead; the other comparisons keep theirs.
#[test]
fn a_build_that_fails_ahead_fails_in_its_comparison_with_its_log() {
    let s = study(
        "[[comparison]]\nvariant = \"listing2\"\n\
         [[comparison]]\nfamily = \"reduce\"\nvariant = \"multi\"\nsize = \"4096\"\n",
    );
    let script = FakeScript {
        fail_build_containing: Some("matvec_listing2".into()),
        ..FakeScript::default()
    };
    let (mut a, mut b) = (scripted(Api::OpenCl, script), fake(Api::Cuda));
    let (summary, _) = run_pair(&s, &mut a, &mut b);
    assert_eq!(summary.failed.len(), 1, "{:?}", summary.failed);
    assert!(
        summary.failed[0].contains("matvec/listing2 [OpenCL]: build-failed"),
        "{:?}",
        summary.failed
    );
    assert_eq!(summary.prs.len(), 1, "reduce/multi still measured");
    assert_eq!(
        a.builds(),
        crate::backend::fake::BuildCounts {
            ahead: 1,
            in_compile: 0
        },
        "the failure is not kept as a program"
    );
}

/// The fill article's exact launch as a sweep: 96 does not divide 1000, 40 does.
fn exact_fill(expect: &str) -> Study {
    let text = format!(
        "name = \"t\"\n[defaults]\nfamily = \"fill\"\nsize = \"1000\"\nlocal = 64\nwarmup = 1\n\
         reps = 4\nmin_time = 0\ntimer = \"device-event\"\n\
         [[sweep]]\nvariant = \"1d-exact\"\nparam = \"local\"\nvalues = [40, 96]\n{expect}"
    );
    study::parse(&text, "test.toml").unwrap()
}

/// OpenCL's refusal of a local size that does not divide the global size, where the study
/// expects it: recorded as the driver answered, in no PR, and no failure of the run; without
/// the study's `expect`, the same refusal is a failure.
#[test]
fn a_refusal_the_study_expects_is_recorded_but_fails_nothing() {
    let (summary, sink) = run_default_pair(&exact_fill("expect = \"non-uniform-work-group\""));
    assert_eq!(summary.outcome(), Outcome::Complete, "{:?}", summary.failed);
    assert_eq!(summary.refused_as_expected.len(), 1);
    assert!(
        summary.refused_as_expected[0].contains("fill/1d-exact@local=96 [OpenCL]: launch-failed")
            && summary.refused_as_expected[0].contains("CL_INVALID_WORK_GROUP_SIZE"),
        "{:?}",
        summary.refused_as_expected
    );
    let refused = sink
        .recorded
        .iter()
        .flat_map(|r| &r.measurements)
        .filter(|m| m.status == Status::LaunchFailed)
        .count();
    assert_eq!(refused, 1, "the row keeps the driver's answer");
    assert_eq!(summary.prs.len(), 1, "only local=40 forms a PR");

    let (summary, _) = run_default_pair(&exact_fill(""));
    assert_eq!(summary.outcome(), Outcome::FailedConfigs);
    assert!(summary.refused_as_expected.is_empty());
}

/// An expectation covers its refusal and nothing else: another driver error in the same
/// comparison is still a failure.
#[test]
fn an_expected_refusal_does_not_excuse_another_failure() {
    let s = exact_fill("expect = \"non-uniform-work-group\"");
    let script = FakeScript {
        fail_launch_after: Some(0),
        ..FakeScript::default()
    };
    let (summary, _) = run_pair(&s, &mut fake(Api::OpenCl), &mut scripted(Api::Cuda, script));
    assert_eq!(summary.outcome(), Outcome::FailedConfigs);
    assert!(
        summary.failed.iter().all(|f| f.contains("[CUDA]")),
        "{:?}",
        summary.failed
    );
}

#[test]
fn an_unknown_expectation_is_refused_with_the_known_ones() {
    let text =
        "name = \"t\"\n[[comparison]]\nfamily = \"fill\"\nvariant = \"1d\"\nexpect = \"nope\"\n";
    let err = study::parse(text, "t.toml").unwrap_err().to_string();
    assert!(
        err.contains("field 'expect'") && err.contains("non-uniform-work-group"),
        "{err}"
    );
}

/// A folder stays resumable when the study only adds or drops an expected refusal: it
/// changes no measurement.
#[test]
fn an_expectation_leaves_the_study_hash_as_it_is() {
    let with = exact_fill("expect = \"non-uniform-work-group\"");
    let without = exact_fill("");
    assert_ne!(with.comparisons, without.comparisons);
    assert_eq!(
        super::identity::study_hash(&with),
        super::identity::study_hash(&without)
    );
}

/// One timed sample gives a median but no spread: neither side nor the PR gets a CI (a
/// zero-width one would claim a certainty one sample cannot give), and the PR has no verdict.
#[test]
fn one_sample_per_side_gives_no_ci_and_no_verdict() {
    let (summary, _) = run_default_pair(&study(
        "[[comparison]]\nvariant = \"listing6\"\nreps = 1\nmin_time = 0\ntarget_ci = 0\n",
    ));
    assert_eq!(summary.measurements.len(), 2);
    for m in &summary.measurements {
        assert!(m.verified, "{}", m.error);
        assert_eq!(m.reps, 1);
        assert!(m.median_s > 0.0 && m.metric > 0.0);
        assert!(m.ci_lo_s.is_nan() && m.ci_hi_s.is_nan(), "{m:?}");
        assert!(m.metric_ci_lo.is_nan() && m.metric_ci_hi.is_nan(), "{m:?}");
    }
    let [pr] = summary.prs.as_slice() else {
        panic!("one PR: {:?}", summary.prs);
    };
    assert!(pr.pr > 0.0, "{}", pr.pr);
    assert!(pr.pr_ci_lo.is_nan() && pr.pr_ci_hi.is_nan(), "{pr:?}");
    assert!(!pr.similar && !pr.similar_tight);
    assert_eq!(
        crate::stats::verdict_word(pr.pr, pr.pr_ci_lo, pr.pr_ci_hi),
        "no verdict"
    );
    // Two samples a side are enough for a CI.
    let (summary, _) = run_default_pair(&study(
        "[[comparison]]\nvariant = \"listing6\"\nreps = 2\nmin_time = 0\n",
    ));
    assert!(summary.prs[0].pr_ci_lo.is_finite() && summary.prs[0].pr_ci_hi.is_finite());
    assert!(summary.measurements.iter().all(|m| m.ci_lo_s.is_finite()));
}

/// A resume whose earlier `timings.csv` cannot be read still runs: the file then holds this
/// run's rows only, and the resume's provenance says why.
#[test]
fn a_resume_with_an_unreadable_timings_file_writes_its_own_rows_and_says_so() {
    let folder = Folder::new();
    folder.run(study(TWO), false, fake_sides()).unwrap();
    let path = folder.path().join(crate::rows::TIMINGS_CSV);
    std::fs::write(&path, "not,a,timings,header\n1,2,3,4\n").unwrap();
    delete_rows(folder.path(), MEASUREMENTS_CSV, "matvec/tuned", false);
    let report = folder.run(study(TWO), true, fake_sides()).unwrap();
    assert_eq!(report.summary.skipped, 1);
    let after: Vec<crate::rows::TimingRow> = crate::export::csv::read_rows(&path).unwrap();
    assert_eq!(after, report.summary.timings);
    let resumed = folder.path().join("provenance-resume-1.json");
    let provenance = std::fs::read_to_string(resumed).unwrap();
    let note = "the earlier timings.csv is unreadable, so it now holds this run's rows only";
    assert!(provenance.contains(note), "{provenance}");
}

/// A resume keeps `timings.csv`'s rows of the comparisons it found whole (it measured nothing
/// of them), drops those of the comparisons it measured again, and adds its own after them.
#[test]
fn a_resume_keeps_the_timing_rows_of_the_comparisons_it_kept() {
    let folder = Folder::new();
    folder.run(study(TWO), false, fake_sides()).unwrap();
    let path = folder.path().join(crate::rows::TIMINGS_CSV);
    let first: Vec<crate::rows::TimingRow> = crate::export::csv::read_rows(&path).unwrap();
    let names: Vec<&str> = first.iter().map(|r| r.comparison.as_str()).collect();
    assert_eq!(names, ["matvec/listing2", "matvec/tuned"]);
    // As a run interrupted in its second comparison leaves it.
    delete_rows(folder.path(), MEASUREMENTS_CSV, "matvec/tuned", false);
    let report = folder.run(study(TWO), true, fake_sides()).unwrap();
    assert_eq!(report.summary.skipped, 1);
    let after: Vec<crate::rows::TimingRow> = crate::export::csv::read_rows(&path).unwrap();
    let names: Vec<&str> = after.iter().map(|r| r.comparison.as_str()).collect();
    assert_eq!(names, ["matvec/listing2", "matvec/tuned"]);
    assert_eq!(after[0], first[0]);
    assert_eq!(after[1], report.summary.timings[0]);
    // A resume that measures nothing keeps them all.
    folder.run(study(TWO), true, fake_sides()).unwrap();
    let last: Vec<crate::rows::TimingRow> = crate::export::csv::read_rows(&path).unwrap();
    assert_eq!(last, after);
}
