//! Tests of the tuner on the fake backend and on synthetic objectives.

use super::answer;
use super::cache::{Cache, Outcome, Scope};
use super::run::{Budget, EvalOptions, Side};
use super::space::{space_def, Space, SpaceKind};
use super::strategy;
use super::*;
use crate::backend::fake::{FakeBackend, FakeScript};
use crate::backend::DeviceInfo;
use crate::families::FamilyId;
use crate::rows::Api;
use crate::rows::StrategyKind;

fn gpu(cus: u32) -> DeviceInfo {
    DeviceInfo {
        compute_units: cus,
        max_work_group_size: 1024,
        ..DeviceInfo::default()
    }
}

fn full(family: FamilyId) -> Space {
    let def = space_def(family, "tuned", SpaceKind::Full).unwrap();
    Space::expand(def, Size::parse(def.size).unwrap(), &gpu(132)).unwrap()
}

#[test]
fn gpu_spaces_reach_500_valid_points_and_count_the_invalid() {
    let m = full(FamilyId::Matvec);
    // 6 locals x 10 group counts x 6 unroll factors x 2 index widths.
    assert_eq!(m.len() + m.invalid_count(), 720);
    assert_eq!(m.len(), 612, "{:?}", m.invalid);
    assert_eq!(m.invalid["every-group-has-a-row"], 108);
    let r = full(FamilyId::Reduce);
    assert_eq!(r.len() + r.invalid_count(), 600);
    assert!(r.len() >= 500, "{}", r.len());
}

#[test]
fn a_small_device_limit_is_counted_not_launched() {
    let def = space_def(FamilyId::Matvec, "tuned", SpaceKind::Full).unwrap();
    let mut d = gpu(132);
    d.max_work_group_size = 256;
    let s = Space::expand(def, Size::parse(def.size).unwrap(), &d).unwrap();
    assert!(s.invalid["device-local"] > 0);
    assert!((0..s.len()).all(|i| s.config(i).local <= 256));
}

#[test]
fn configs_resolve_groups_from_compute_units() {
    let s = full(FamilyId::Reduce);
    let c = s.config(0);
    assert_eq!((c.local, c.groups, c.index), (64, 132, 32));
    assert_eq!(c.text(), "local=64 groups=132 unroll.A=0 index=32");
    // Factor 0 is no pragma at all; the index width always reaches the compiler.
    assert_eq!(
        c.defines(),
        vec![("CLVSCU_INDEX".to_string(), "32".to_string())]
    );
    for j in s.neighbours(0) {
        let d = answer::differing(&c, &s.config(j));
        assert_eq!(d.len(), 1, "{d:?}");
    }
}

/// A synthetic objective with one peak and a plateau of near-misses.
fn objective(space: &Space, i: usize) -> f64 {
    let c = space.config(i);
    let l = (c.local as f64).log2() - 8.0;
    let g = (c.groups as f64 / 132.0).log2() - 3.0;
    let u = c.unroll[0].1 as f64;
    let u = if u == 0.0 { 1.5 } else { u.log2() - 2.0 };
    100.0 - 3.0 * l * l - 2.0 * g * g - u * u - if c.index == 64 { 1.5 } else { 0.0 }
}

fn run_strategy(kind: StrategyKind, seed: u64, budget: usize) -> (f64, usize) {
    let space = full(FamilyId::Reduce);
    let mut s = strategy::make(kind, &space, seed);
    let mut seen = std::collections::HashSet::new();
    let mut best = f64::MIN;
    for _ in 0..budget {
        let Some(i) = s.propose(&space) else { break };
        assert!(seen.insert(i), "{kind} proposed {i} twice");
        let v = objective(&space, i);
        best = best.max(v);
        s.observe(i, Some(v));
    }
    (best, seen.len())
}

#[test]
fn anneal_reaches_the_optimum_of_a_synthetic_objective_within_a_fifth_of_the_space() {
    let space = full(FamilyId::Reduce);
    let optimum = (0..space.len())
        .map(|i| objective(&space, i))
        .fold(f64::MIN, f64::max);
    let budget = space.len() / 5;
    for seed in 1..=5 {
        let (best, asked) = run_strategy(StrategyKind::Anneal, seed, budget);
        assert_eq!(asked, budget);
        assert!(best >= optimum * 0.98, "seed {seed}: {best} vs {optimum}");
    }
    // Determinism: the same seed, the same search.
    assert_eq!(
        run_strategy(StrategyKind::Anneal, 3, budget),
        run_strategy(StrategyKind::Anneal, 3, budget)
    );
}

#[test]
fn genetic_and_bayes_reach_near_the_optimum_within_a_fifth_of_the_space_without_repeats() {
    let space = full(FamilyId::Reduce);
    let optimum = (0..space.len())
        .map(|i| objective(&space, i))
        .fold(f64::MIN, f64::max);
    let budget = space.len() / 5;
    for kind in [StrategyKind::Genetic, StrategyKind::Bayes] {
        for seed in 1..=3 {
            let (best, asked) = run_strategy(kind, seed, budget);
            assert_eq!(asked, budget, "{kind}");
            assert!(
                best >= optimum * 0.97,
                "{kind} seed {seed}: {best} vs {optimum}"
            );
        }
        assert_eq!(run_strategy(kind, 3, budget), run_strategy(kind, 3, budget));
        // Asked for everything, each covers the whole space once.
        assert_eq!(run_strategy(kind, 5, usize::MAX).1, space.len(), "{kind}");
    }
}

#[test]
fn exhaustive_and_random_cover_the_space_once() {
    let n = full(FamilyId::Reduce).len();
    assert_eq!(run_strategy(StrategyKind::Exhaustive, 1, usize::MAX).1, n);
    assert_eq!(run_strategy(StrategyKind::Random, 9, usize::MAX).1, n);
}

fn fake(api: Api) -> FakeBackend {
    FakeBackend::new(
        api,
        FakeScript {
            compute_units: 2,
            ..FakeScript::default()
        },
        crate::families::emulator(),
    )
}

fn small_plan(sources: &KernelSources, strategies: Vec<StrategyKind>) -> TunePlan<'_> {
    let def = space_def(FamilyId::Reduce, "tuned", SpaceKind::Small).unwrap();
    TunePlan {
        def,
        size: Size::parse(def.size).unwrap(),
        strategies,
        budget: Budget::default(),
        seed: 1,
        options: EvalOptions { warmup: 1, reps: 3 },
        sources,
        watchdog: None,
        interrupted: None,
        timeout: None,
        progress: None,
    }
}

fn sides<'b>(cl: &'b mut FakeBackend, cu: &'b mut FakeBackend, plan: &TunePlan) -> Vec<Side<'b>> {
    let scope = |b: &FakeBackend| scope_of(b, plan.sources, plan.def, plan.size).unwrap();
    let (s_cl, s_cu) = (scope(cl), scope(cu));
    vec![
        Side {
            backend: cl,
            scope: s_cl,
        },
        Side {
            backend: cu,
            scope: s_cu,
        },
    ]
}

#[test]
fn a_resumed_run_measures_nothing_twice() {
    let sources = KernelSources::embedded();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cache.json");
    let plan = small_plan(&sources, vec![StrategyKind::Exhaustive]);
    let (mut cl, mut cu) = (fake(Api::OpenCl), fake(Api::Cuda));
    let first = {
        let mut cache = Cache::open(&path).unwrap();
        let mut s = sides(&mut cl, &mut cu, &plan);
        plan.execute(&mut s, &mut cache).unwrap()
    };
    let launched = (cl.launches(), cu.launches());
    assert!(launched.0 > 0 && launched.1 > 0);
    assert!(first.evaluations.iter().all(|e| !e.cached));
    // Interleaved: OpenCL, CUDA, OpenCL, ...
    assert_eq!(first.evaluations[0].api, Api::OpenCl);
    assert_eq!(first.evaluations[1].api, Api::Cuda);
    // A later run (new process: a cache read back from disk) with more strategies.
    let plan = small_plan(
        &sources,
        vec![
            StrategyKind::Exhaustive,
            StrategyKind::Random,
            StrategyKind::Anneal,
        ],
    );
    let mut cache = Cache::open(&path).unwrap();
    let again = {
        let mut s = sides(&mut cl, &mut cu, &plan);
        plan.execute(&mut s, &mut cache).unwrap()
    };
    assert_eq!(
        (cl.launches(), cu.launches()),
        launched,
        "something was measured twice"
    );
    assert!(again.evaluations.iter().all(|e| e.cached));
    // Cache hits still count as evaluations asked for.
    let line = again
        .lines
        .iter()
        .find(|l| l.strategy == StrategyKind::Random)
        .unwrap();
    assert_eq!(
        (line.asked, line.measured),
        (again.space.len().div_ceil(5), 0)
    );
    assert!(line.ratio().is_some_and(|r| r > 0.0 && r <= 1.0));
    let full = again
        .lines
        .iter()
        .find(|l| l.strategy == StrategyKind::Exhaustive)
        .unwrap();
    assert_eq!((full.ratio(), full.asked), (Some(1.0), again.space.len()));
    assert!(again.answer.is_some());
}

#[test]
fn a_tune_folder_gets_its_provenance() {
    use crate::backend::Backend;
    use crate::export::json::Provenance;
    let sources = KernelSources::embedded();
    let plan = small_plan(&sources, vec![StrategyKind::Exhaustive]);
    let (mut cl, mut cu) = (fake(Api::OpenCl), fake(Api::Cuda));
    let report = {
        let mut s = sides(&mut cl, &mut cu, &plan);
        plan.execute(&mut s, &mut Cache::in_memory()).unwrap()
    };
    let command_line = vec!["clvscu".to_string(), "tune".into(), "reduce/tuned".into()];
    let prov = provenance::of_tune(
        &plan,
        &report.space,
        &[cl.info(), cu.info()],
        &command_line,
        crate::session::provenance::GpuSnapshot::default(),
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tune");
    output::write_all(&report, &out, "reduce/tuned", &prov).unwrap();
    let text = std::fs::read_to_string(out.join(provenance::PROVENANCE_FILE)).unwrap();
    let back: Provenance = serde_json::from_str(&text).unwrap();
    assert_eq!(back, prov);
    assert_eq!(back.devices.len(), 2);
    let tune = back.tune.unwrap();
    assert_eq!(tune.space_sha256, provenance::space_sha256(&report.space));
    let answer = std::fs::read_to_string(out.join("answer.md")).unwrap();
    let line = answer.lines().nth(2).unwrap();
    assert!(line.starts_with("Provenance: "), "{answer}");
    assert!(line.contains(&prov.git_commit) && line.contains("`clvscu tune reduce/tuned`"));
    // Every write went through the atomic writer: no temporary file is left behind.
    let left: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_wrong_kernel_is_recorded_and_never_timed() {
    let sources = KernelSources::embedded();
    let plan = small_plan(&sources, vec![StrategyKind::Exhaustive]);
    let mut cl = fake(Api::OpenCl);
    let mut cu = FakeBackend::new(
        Api::Cuda,
        FakeScript {
            compute_units: 2,
            fail_build_containing: Some("reduce_tuned".into()),
            ..FakeScript::default()
        },
        crate::families::emulator(),
    );
    let mut cache = Cache::in_memory();
    let report = {
        let mut s = sides(&mut cl, &mut cu, &plan);
        plan.execute(&mut s, &mut cache).unwrap()
    };
    let cuda: Vec<_> = report
        .evaluations
        .iter()
        .filter(|e| e.api == Api::Cuda)
        .collect();
    assert!(!cuda.is_empty());
    assert!(cuda
        .iter()
        .all(|e| matches!(e.outcome, Outcome::BuildFailed { .. }) && e.score.is_none()));
    assert!(report.answer.is_none());
    assert_eq!(report.bests.len(), 1);
}

#[test]
fn prs_follow_the_times() {
    let space = full(FamilyId::Reduce);
    let (a, b) = (space.config(0), space.config(1));
    // OpenCL twice as slow at its best as CUDA at its own: PR 0.5.
    let cl = answer::best_of(&space, Api::OpenCl, 0, vec![2e-3, 2e-3, 2e-3]).unwrap();
    let cu = answer::best_of(&space, Api::Cuda, 1, vec![1e-3, 1e-3, 1e-3]).unwrap();
    let ans = answer::answer(&space, cl, cu, Some(&[4e-3; 3]), Some(&[1e-3; 3]));
    let r = ans.best_vs_best.unwrap();
    assert!((r.value - 0.5).abs() < 1e-12 && r.ci_lo <= r.value && r.value <= r.ci_hi);
    assert!((ans.same_at_opencl_best.unwrap().value - 2.0).abs() < 1e-12);
    assert!((ans.same_at_cuda_best.unwrap().value - 1.0).abs() < 1e-12);
    assert_eq!(
        ans.differing,
        answer::differing(&a, &b),
        "the bests' differing parameters"
    );
    assert_eq!(ans.differing.len(), 1);
    assert!(answer::pr(&space, (&a, &[]), (&b, &[1e-3])).is_none());
}

#[test]
fn the_within_two_percent_count_is_of_evaluations_asked() {
    use super::run::Evaluation;
    let space = full(FamilyId::Reduce);
    let e = |n: usize, score: f64, cached: bool| Evaluation {
        api: Api::Cuda,
        strategy: StrategyKind::Anneal,
        n,
        point: n,
        config: space.config(n),
        outcome: Outcome::Timed { times: vec![1.0] },
        cached,
        score: Some(score),
    };
    let evals = vec![
        e(1, 50.0, true),
        e(2, 97.0, true),
        e(3, 98.5, false),
        e(4, 99.0, true),
    ];
    let l = answer::strategy_line(&evals, StrategyKind::Anneal, Api::Cuda, Some(100.0), 600);
    assert_eq!((l.asked, l.measured, l.to_within), (4, 1, Some(3)));
    assert_eq!(l.ratio(), Some(0.99));
}

#[test]
fn times_no_device_gives_are_implausible_and_never_best() {
    let s = full(FamilyId::Matvec);
    let c = s.config(0);
    let mut peaked = gpu(132);
    // 1000 MHz x 512 bits: a 128 GB/s peak, so nothing above 1280 GB/s is believed.
    peaked.memory_clock_mhz = Some(1000);
    peaked.memory_bus_width_bits = Some(512);
    let ok = [1e-3, 1.1e-3, 0.9e-3];
    assert_eq!(run::implausible(&s, &c, &ok, &peaked), None);
    for bad in [
        [1e-12; 3],
        [0.0; 3],
        [-1.0; 3],
        [f64::NAN; 3],
        [f64::INFINITY; 3],
    ] {
        let why = run::implausible(&s, &c, &bad, &gpu(132)).unwrap();
        assert!(why.contains("no launch is shorter"), "{why}");
    }
    // A time above the floor whose bandwidth no memory of this device gives.
    let score = run::score_of(&s, &c, &[1e-6]).unwrap();
    assert!(score > 1280.0, "{score}");
    let why = run::implausible(&s, &c, &[1e-6], &peaked).unwrap();
    assert!(why.contains("GB/s is above what"), "{why}");
}

#[test]
fn an_implausible_cached_entry_is_not_the_best() {
    let sources = KernelSources::embedded();
    let plan = small_plan(&sources, vec![StrategyKind::Exhaustive]);
    let (mut cl, mut cu) = (fake(Api::OpenCl), fake(Api::Cuda));
    let mut cache = Cache::in_memory();
    let mut s = sides(&mut cl, &mut cu, &plan);
    let first = plan.execute(&mut s, &mut cache).unwrap();
    let worst = first
        .evaluations
        .iter()
        .filter(|e| e.api == Api::OpenCl && e.score.is_some())
        .min_by(|a, b| a.score.partial_cmp(&b.score).unwrap())
        .unwrap();
    let scope = s[0].scope.clone();
    let fast = Outcome::Timed {
        times: vec![1e-12; 3],
    };
    cache.put(&scope, &worst.config.text(), fast).unwrap();
    let again = plan.execute(&mut s, &mut cache).unwrap();
    let best = again.bests.iter().find(|b| b.api == Api::OpenCl).unwrap();
    assert_ne!(best.point, worst.point, "a 1e-12 s entry was taken as best");
    let flagged = again
        .evaluations
        .iter()
        .find(|e| e.api == Api::OpenCl && e.point == worst.point)
        .unwrap();
    assert_eq!(flagged.outcome.status(), "implausible");
    assert_eq!(flagged.score, None);
    let line = again.lines.iter().find(|l| l.api == Api::OpenCl).unwrap();
    assert_eq!(
        line.exhaustive_best,
        Some(best.metric),
        "the exhaustive best took it"
    );
}

#[test]
fn two_caches_on_one_file_keep_each_others_entries() {
    let sources = KernelSources::embedded();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cache.json");
    let plan = small_plan(&sources, vec![StrategyKind::Exhaustive]);
    let (cl, cu) = (fake(Api::OpenCl), fake(Api::Cuda));
    let scope = |b: &FakeBackend| scope_of(b, plan.sources, plan.def, plan.size).unwrap();
    let timed = || Outcome::Timed {
        times: vec![1e-3; 3],
    };
    let mut one = Cache::open(&path).unwrap();
    let mut two = Cache::open(&path).unwrap();
    one.put(&scope(&cl), "a", timed()).unwrap();
    two.put(&scope(&cu), "b", timed()).unwrap();
    one.put(&scope(&cl), "c", timed()).unwrap();
    let read = Cache::open(&path).unwrap();
    assert_eq!(read.len(), 3, "an entry was lost");
    assert!(read.get(&scope(&cu), "b").is_some());
    assert!(!dir.path().join(".cache.json.lock").exists());
}

#[test]
fn an_edited_cache_entry_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cache.json");
    let scope = Scope {
        text: "dev | 1 | OpenCL | h | matvec/tuned | 8".into(),
    };
    let mut c = Cache::open(&path).unwrap();
    c.put(
        &scope,
        "local=64",
        Outcome::Timed {
            times: vec![1e-3; 3],
        },
    )
    .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("0.001", "1e-12")).unwrap();
    let e = Cache::open(&path).err().unwrap().to_string();
    assert!(e.contains("local=64' does not match its checksum"), "{e}");
}

#[test]
fn a_ctrl_c_stops_the_search_after_the_evaluation_in_progress() {
    let sources = KernelSources::embedded();
    let flag = std::sync::atomic::AtomicBool::new(true);
    let mut plan = small_plan(&sources, vec![StrategyKind::Exhaustive]);
    plan.interrupted = Some(&flag);
    let (mut cl, mut cu) = (fake(Api::OpenCl), fake(Api::Cuda));
    let mut cache = Cache::in_memory();
    let mut s = sides(&mut cl, &mut cu, &plan);
    let report = plan.execute(&mut s, &mut cache).unwrap();
    assert!(report.interrupted);
    assert!(report.evaluations.is_empty() && report.answer.is_none());
    assert_eq!((cl.launches(), cu.launches()), (0, 0));
}
