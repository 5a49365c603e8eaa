//! The verdict logic over scripted rung outcomes; the whole ladder over the fake backend is
//! in `tests/explain_fake.rs`.

use super::attribute::{verdict, Cause, Interval, RungOutcome, Verdict};
use super::ladder::RungKind;
use crate::rows::Api;

fn pr(value: f64, half: f64) -> Interval {
    Interval {
        value,
        lo: value - half,
        hi: value + half,
    }
}

fn outcome(kind: RungKind, own: &Interval, p: Interval) -> RungOutcome {
    RungOutcome {
        kind,
        pr: Some(p),
        closed: Some(1.0 - p.value.ln() / own.value.ln()),
        moved: p.apart_from(own),
        closes: p.at_parity(),
        void: kind.void_by_design().map(str::to_string),
        note: String::new(),
    }
}

fn failed(kind: RungKind) -> RungOutcome {
    RungOutcome {
        kind,
        pr: None,
        closed: None,
        moved: false,
        closes: false,
        void: None,
        note: "launch-failed".into(),
    }
}

#[test]
fn a_gap_both_swaps_close_is_the_front_end() {
    let own = pr(0.85, 0.01);
    let rungs = vec![
        outcome(RungKind::Own, &own, own),
        outcome(RungKind::NvrtcPtx, &own, pr(0.995, 0.01)),
        outcome(RungKind::OpenclPtx, &own, pr(1.01, 0.01)),
    ];
    assert_eq!(
        verdict(&own, &rungs),
        Verdict::Explained(vec![(Cause::FrontEnd, 1.0)])
    );
}

#[test]
fn a_runtime_gap_is_named_by_the_runtime_rung_that_closes_it() {
    let own = pr(0.80, 0.01);
    let regs = RungKind::RegistersHeld {
        registers: 120,
        held: Api::Cuda,
    };
    let rungs = vec![
        outcome(RungKind::Own, &own, own),
        outcome(RungKind::NvrtcPtx, &own, pr(0.81, 0.01)),
        outcome(RungKind::OpenclPtx, &own, pr(0.80, 0.01)),
        outcome(regs, &own, pr(1.005, 0.01)),
        outcome(RungKind::Carveout(0), &own, pr(0.79, 0.01)),
    ];
    assert_eq!(
        verdict(&own, &rungs),
        Verdict::Explained(vec![(
            Cause::Registers {
                registers: 120,
                held: Api::Cuda
            },
            1.0
        )])
    );
}

#[test]
fn a_gap_nothing_closes_is_unexplained_with_its_largest_move() {
    let own = pr(0.80, 0.01);
    let rungs = vec![
        outcome(RungKind::Own, &own, own),
        failed(RungKind::NvrtcPtx),
        failed(RungKind::OpenclPtx),
        outcome(RungKind::IndexU64, &own, pr(0.85, 0.01)),
        outcome(RungKind::HostTimer, &own, pr(0.79, 0.01)),
    ];
    match verdict(&own, &rungs) {
        Verdict::Unexplained { residual, largest } => {
            assert_eq!(residual, 0.80);
            assert_eq!(largest, Some((RungKind::IndexU64, 0.85)));
        }
        v => panic!("expected unexplained, got {v:?}"),
    }
}

#[test]
fn a_target_whose_ci_touches_parity_has_no_gap() {
    // 0.97 with a CI reaching 0.985 overlaps [0.98, 1.02]: nothing to explain.
    let own = pr(0.97, 0.015);
    let rungs = vec![outcome(RungKind::Own, &own, own)];
    assert_eq!(verdict(&own, &rungs), Verdict::NoGap);
}

#[test]
fn a_wide_ci_that_touches_parity_is_inconclusive_not_no_gap() {
    let own = Interval {
        value: 0.91,
        lo: 0.69,
        hi: 1.21,
    };
    let rungs = vec![outcome(RungKind::Own, &own, own)];
    let v = verdict(&own, &rungs);
    assert_eq!(v, Verdict::Inconclusive(own));
    assert!(v.describe().starts_with("inconclusive"), "{}", v.describe());
    assert!(!v.describe().contains("no gap"), "{}", v.describe());
}

#[test]
fn a_rung_whose_ci_overlaps_the_target_has_not_moved() {
    let own = pr(0.90, 0.03);
    let near = outcome(RungKind::IndexU64, &own, pr(0.93, 0.03));
    assert!(!near.moved, "overlapping CIs are no move");
    let far = outcome(RungKind::IndexU64, &own, pr(0.99, 0.005));
    assert!(far.moved && far.closes);
}

#[test]
fn a_split_gap_names_both_parts_with_shares_that_sum_to_one() {
    // PR 0.64 = runtime 0.80 x front end 0.80: half each, in logarithms.
    let own = pr(0.64, 0.01);
    let rungs = vec![
        outcome(RungKind::Own, &own, own),
        outcome(RungKind::NvrtcPtx, &own, pr(0.80, 0.01)),
        outcome(RungKind::OpenclPtx, &own, pr(0.80, 0.01)),
    ];
    match verdict(&own, &rungs) {
        Verdict::Explained(causes) => {
            assert_eq!(causes.len(), 2);
            assert_eq!(causes[0].0, Cause::FrontEnd);
            assert_eq!(causes[1].0, Cause::Runtime);
            assert!((causes[0].1 - 0.5).abs() < 1e-9, "{causes:?}");
            assert!((causes[0].1 + causes[1].1 - 1.0).abs() < 1e-12);
        }
        v => panic!("expected two causes, got {v:?}"),
    }
}

#[test]
fn a_host_timed_gap_the_device_clock_closes_is_launch_and_wait() {
    let own = pr(0.90, 0.01);
    let rungs = vec![
        outcome(RungKind::Own, &own, own),
        outcome(RungKind::NvrtcPtx, &own, pr(0.90, 0.01)),
        outcome(RungKind::OpenclPtx, &own, pr(0.91, 0.01)),
        outcome(RungKind::DeviceTimer, &own, pr(1.0, 0.01)),
    ];
    assert_eq!(
        verdict(&own, &rungs),
        Verdict::Explained(vec![(Cause::LaunchAndWait, 1.0)])
    );
}

fn capped(registers: u32) -> RungKind {
    RungKind::RegistersHeld {
        registers,
        held: Api::Cuda,
    }
}

fn control(registers: u32) -> RungKind {
    RungKind::CapControl {
        registers,
        held: Api::Cuda,
    }
}

/// The verdict of `rungs` once their controls are read, as `explain_target` reads them.
fn verdict_with_controls(
    own: &Interval,
    mut rungs: Vec<RungOutcome>,
) -> (Verdict, Vec<RungOutcome>) {
    super::attribute::mark_void(&mut rungs, "t", &[]);
    (verdict(own, &rungs), rungs)
}

#[test]
fn a_register_rung_whose_control_moves_the_pr_is_void_and_names_no_cause() {
    // The SGEMM case: the cap's path alone moves OpenCL's PTX on CUDA from 0.74 to 1.0.
    let own = pr(0.73, 0.01);
    let rungs = vec![
        outcome(RungKind::Own, &own, own),
        outcome(RungKind::NvrtcPtx, &own, pr(0.74, 0.01)),
        outcome(RungKind::OpenclPtx, &own, pr(0.74, 0.01)),
        outcome(control(167), &own, pr(1.0, 0.01)),
        outcome(capped(153), &own, pr(1.0, 0.01)),
    ];
    let (v, rungs) = verdict_with_controls(&own, rungs);
    let rung = rungs.iter().find(|r| r.kind == capped(153)).unwrap();
    assert!(
        rung.void
            .as_deref()
            .unwrap()
            .contains("control moved the PR"),
        "{rung:?}"
    );
    assert!(
        !matches!(&v, Verdict::Explained(c) if c.iter().any(|(c, _)| matches!(c, Cause::Registers { .. }))),
        "{v:?}"
    );
}

#[test]
fn a_register_rung_whose_control_holds_names_the_registers() {
    let own = pr(0.73, 0.01);
    let rungs = vec![
        outcome(RungKind::Own, &own, own),
        outcome(RungKind::NvrtcPtx, &own, pr(0.74, 0.01)),
        outcome(RungKind::OpenclPtx, &own, pr(0.74, 0.01)),
        outcome(control(167), &own, pr(0.745, 0.01)),
        outcome(capped(153), &own, pr(1.0, 0.01)),
    ];
    let (v, _) = verdict_with_controls(&own, rungs);
    assert_eq!(
        v,
        Verdict::Explained(vec![(
            Cause::Registers {
                registers: 153,
                held: Api::Cuda
            },
            1.0
        )])
    );
}

#[test]
fn a_register_rung_without_its_control_is_void() {
    let own = pr(0.73, 0.01);
    let rungs = vec![
        outcome(RungKind::Own, &own, own),
        outcome(RungKind::OpenclPtx, &own, pr(0.74, 0.01)),
        outcome(capped(153), &own, pr(1.0, 0.01)),
    ];
    let (v, rungs) = verdict_with_controls(&own, rungs);
    assert!(rungs
        .iter()
        .find(|r| r.kind == capped(153))
        .unwrap()
        .void
        .is_some());
    assert!(matches!(v, Verdict::Unexplained { .. }), "{v:?}");
}

#[test]
fn rungs_of_earlier_versions_through_the_linker_are_void_whatever_they_closed() {
    // What the committed folders hold: the register and opt-level rungs took the driver's
    // linker, a path that changes OpenCL's code by itself, and their control ran CUDA's PTX.
    let own = pr(0.80, 0.001);
    let rungs = vec![
        outcome(RungKind::Own, &own, own),
        outcome(RungKind::NvrtcPtx, &own, pr(0.80, 0.001)),
        outcome(RungKind::OpenclPtx, &own, pr(0.80, 0.001)),
        outcome(RungKind::CudaLinked, &own, pr(0.999, 0.001)),
        outcome(RungKind::OptLevelHeld(3), &own, pr(1.0, 0.001)),
        outcome(
            RungKind::LinkedRegisters {
                registers: 153,
                held: Api::Cuda,
            },
            &own,
            pr(1.0, 0.001),
        ),
    ];
    let (v, rungs) = verdict_with_controls(&own, rungs);
    assert!(
        matches!(v, Verdict::Unexplained { largest: None, .. }),
        "{v:?}"
    );
    assert_eq!(rungs.iter().filter(|r| r.void.is_some()).count(), 3);
}

#[test]
fn the_ladder_loads_every_rung_the_way_the_target_loads() {
    let study = crate::study::load("explain-known").unwrap();
    for target in &study.comparisons {
        for r in super::ladder::first_pass(target, (Api::OpenCl, Api::Cuda)) {
            for side in [&r.comparison.a, &r.comparison.b] {
                assert!(
                    !side.jit.needs_linker(),
                    "{} takes the linker",
                    r.comparison.id
                );
            }
        }
    }
}

#[test]
fn the_second_pass_caps_registers_with_its_control_on_the_same_path() {
    use crate::rows::MeasurementRow;
    let study = crate::study::load("explain-known").unwrap();
    let target = &study.comparisons[0];
    let committed: Vec<MeasurementRow> = crate::export::csv::read_rows(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("results/h100/fair/measurements.csv"),
    )
    .unwrap();
    let row = |api, registers| {
        let mut r = committed[0].clone();
        r.comparison = super::rung_id(&target.id, "opencl-ptx");
        r.api = api;
        r.verified = true;
        r.registers = Some(registers);
        r
    };
    let rows = vec![row(Api::OpenCl, 153), row(Api::Cuda, 167)];
    let rungs = super::ladder::second_pass(target, (Api::OpenCl, Api::Cuda), &rows);
    let find = |k: RungKind| rungs.iter().find(|r| r.kind == k).expect("the rung");
    let (cap, ctl) = (find(capped(153)), find(control(167)));
    assert_eq!(cap.comparison.b.jit.max_registers, Some(153));
    assert_eq!(ctl.comparison.b.jit.max_registers, Some(167));
    for r in [cap, ctl] {
        assert!(!r.comparison.b.jit.needs_linker());
        assert_eq!(r.comparison.b.program, crate::rows::ProgramSource::Other);
    }
}

#[test]
fn rung_names_read_back() {
    for kind in [
        RungKind::Own,
        RungKind::NvrtcPtx,
        RungKind::OpenclPtx,
        RungKind::RegistersHeld {
            registers: 96,
            held: Api::OpenCl,
        },
        control(160),
        RungKind::LinkedRegisters {
            registers: 96,
            held: Api::Cuda,
        },
        RungKind::Carveout(25),
        RungKind::OptLevelHeld(3),
        RungKind::CudaLinked,
        RungKind::IndexU64,
        RungKind::NoUnroll,
        RungKind::FastMath,
        RungKind::HostTimer,
        RungKind::DeviceTimer,
        RungKind::FirstLaunchAlone,
        RungKind::LastLaunchAlone,
    ] {
        assert_eq!(RungKind::parse(&kind.name()), Some(kind), "{}", kind.name());
    }
    assert_eq!(RungKind::parse("cuda-carveout-x"), None);
}

#[test]
fn the_registers_bound_the_work_groups_an_sm_holds() {
    use super::attribute::SideShape;
    let side = |registers, local| SideShape {
        api: Api::Cuda,
        local,
        limit: Some(1024),
        registers: Some(registers),
        spill_bytes: Some(0),
        shared_bytes: Some(0),
    };
    // 32 registers x 256 work-items = 8192 a group: 8 groups, also the work-item bound.
    assert_eq!(side(32, 256).groups_per_sm_by_registers(), Some(8));
    // 117 registers round to 120 per work-item (3840 a warp): 65536 / (3840 x 8) = 2.
    assert_eq!(side(117, 256).groups_per_sm_by_registers(), Some(2));
    assert_eq!(side(167, 128).groups_per_sm_by_registers(), Some(3));
}

#[test]
fn only_a_variant_of_several_launches_gets_a_launch_alone_rung() {
    use super::ladder::first_pass;
    let study = crate::study::parse(
        r#"
name = "t"
[[comparison]]
name = "tuned"
family = "reduce"
variant = "tuned"
size = "2^16"
[[comparison]]
name = "sequential"
family = "reduce"
variant = "sequential"
size = "2^16"
"#,
        "t.toml",
    )
    .unwrap();
    let kinds = |i: usize| -> Vec<RungKind> {
        first_pass(&study.comparisons[i], (Api::OpenCl, Api::Cuda))
            .into_iter()
            .map(|r| r.kind)
            .collect()
    };
    assert!(kinds(0).contains(&RungKind::FirstLaunchAlone));
    assert!(!kinds(1).contains(&RungKind::FirstLaunchAlone));
    assert!(kinds(1).contains(&RungKind::NvrtcPtx));
}

#[test]
fn ladder_steps_are_named_in_kebab_case() {
    use super::ladder::LadderStep::*;
    let names: Vec<&str> = [
        Target,
        FrontEndOrRuntime,
        SecondStage,
        Carveout,
        CompilerStep,
        LaunchAndWait,
        Fix,
    ]
    .into_iter()
    .map(|s| s.name())
    .collect();
    assert_eq!(
        names,
        [
            "target",
            "front-end-or-runtime",
            "second-stage",
            "carveout",
            "compiler-step",
            "launch-and-wait",
            "fix"
        ]
    );
}
