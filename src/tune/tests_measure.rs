//! Tune and run measure through one loop: the settings a configuration is tuned with are the
//! ones a study entry of it resolves to, and through the session's measuring step they give
//! the same launches and the same times as the tuner's own evaluation.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::cache::{Cache, Outcome};
use super::run::{Budget, EvalOptions, Side, Tuner, INPUT_SEED};
use super::space::{space_def, Space, SpaceKind};
use super::*;
use crate::backend::fake::{FakeBackend, FakeScript};
use crate::backend::Backend;
use crate::families::FamilyId;
use crate::rows::Api;
use crate::rows::Side as RowSide;
use crate::session::measure::{measure_comparison, Guard, SidePlan};
use crate::session::timings::PhaseTimes;

const OPTIONS: EvalOptions = EvalOptions { warmup: 3, reps: 5 };

fn fake() -> FakeBackend {
    FakeBackend::new(
        Api::Cuda,
        FakeScript {
            compute_units: 2,
            jitter: 0.05,
            ..FakeScript::default()
        },
        crate::families::emulator(),
    )
}

fn small_space(device: &crate::backend::DeviceInfo) -> Space {
    let def = space_def(FamilyId::Reduce, "tuned", SpaceKind::Small).unwrap();
    Space::expand(def, Size::parse(def.size).unwrap(), device).unwrap()
}

/// Runs `test` with a tuner of the small reduce space on the fake device.
fn with_a_tuner(test: impl FnOnce(&Tuner)) {
    let sources = KernelSources::embedded();
    let space = small_space(fake().info());
    let inputs = Inputs::of_variant(
        space.variant,
        space.size,
        INPUT_SEED,
        &MatrixSource::Uniform,
    );
    let plan = TunePlan {
        def: space.def,
        size: space.size,
        strategies: Vec::new(),
        budget: Budget::default(),
        seed: 1,
        options: OPTIONS,
        sources: &sources,
        watchdog: None,
        interrupted: None,
        timeout: None,
        progress: None,
    };
    test(&Tuner {
        plan: &plan,
        space: &space,
        inputs: &inputs,
    });
}

/// Launches and device times of `point` evaluated by the tuner, on a fresh device.
fn tuned(t: &Tuner, point: usize) -> (usize, Vec<f64>) {
    let mut backend = fake();
    let scope = scope_of(&backend, t.plan.sources, t.space.def, t.space.size).unwrap();
    let mut side = Side {
        backend: &mut backend,
        scope,
    };
    let (outcome, cached) = t
        .outcome(&mut side, &mut Cache::in_memory(), point)
        .unwrap()
        .unwrap();
    assert!(!cached);
    let Outcome::Timed { times } = outcome else {
        panic!("{outcome:?}")
    };
    (backend.launches(), times)
}

/// Launches and device times of `point` measured as `run` measures one side of a comparison
/// with `settings`, on a fresh device.
fn run_as_a_session(
    t: &Tuner,
    point: usize,
    settings: crate::study::Resolved,
) -> (usize, Vec<f64>) {
    let mut backend = fake();
    let config = t.space.config(point).side(backend.api());
    let mut plans = [SidePlan {
        side: RowSide::A,
        backend: &mut backend,
        settings,
        config,
    }];
    let id: Arc<str> = Arc::from("reduce/tuned");
    let guard = Guard {
        watchdog: None,
        timeout_s: None,
        comparison: &id,
    };
    let runs = measure_comparison(
        &mut plans,
        &[t.inputs],
        t.plan.sources,
        &AtomicBool::new(false),
        guard,
        &mut PhaseTimes::default(),
    )
    .unwrap();
    assert!(runs[0].failure.is_none(), "{:?}", runs[0].failure);
    let times = runs[0]
        .samples
        .iter()
        .map(|s| s.device.unwrap().0)
        .collect();
    (backend.launches(), times)
}

#[test]
fn tune_and_run_measure_a_configuration_with_one_loop() {
    with_a_tuner(|t| {
        let space = t.space;
        for point in [0, space.len() - 1] {
            let config = space.config(point);
            let settings = t.settings(space.variant_of(&config), &config);
            let (tune_launches, tune_times) = tuned(t, point);
            let (run_launches, run_times) = run_as_a_session(t, point, settings.clone());
            assert_eq!(tune_times.len(), OPTIONS.reps as usize);
            // The same verification, warm-up and timed runs in the same order: the fake
            // device's seeded jitter then gives the same times.
            assert_eq!(tune_launches, run_launches, "point {point}");
            assert_eq!(tune_times, run_times, "point {point}");
            // The counts follow the policy: one warm-up fewer is one run fewer.
            let fewer = crate::study::Resolved {
                warmup: settings.warmup - 1,
                ..settings
            };
            let (launches, _) = run_as_a_session(t, point, fewer);
            assert!(launches < tune_launches, "{launches} vs {tune_launches}");
        }
    });
}

#[test]
fn a_tuned_configuration_is_measured_as_its_study_entry_is() {
    with_a_tuner(|t| {
        let space = t.space;
        let config = space.config(space.len() - 1);
        let unroll: Vec<String> = config
            .unroll
            .iter()
            .map(|(p, f)| format!("{p} = {f}"))
            .collect();
        let text = format!(
        "name = \"t\"\n[[comparison]]\nfamily = \"reduce\"\nvariant = \"tuned\"\nsize = \"{}\"\n\
         local = {}\ngroups = {}\nunroll = {{ {} }}\nindex = \"u{}\"\nwarmup = {}\nreps = {}\n\
         max_reps = {}\nmin_time = 0.0\nmax_time = 0.0\ntarget_ci = 0.0\n",
        space.def.size,
        config.local,
        config.groups,
        unroll.join(", "),
        config.index,
        OPTIONS.warmup,
        OPTIONS.reps,
        OPTIONS.reps,
    );
        let study = crate::study::parse(&text, "t.toml").unwrap();
        let entry = &study.comparisons[0];
        let tuned = t.settings(space.variant_of(&config), &config);
        // Timer, wait mode, turn, flags, JIT options, program and input: a run's defaults.
        assert_eq!(entry.b, tuned);
    });
}
