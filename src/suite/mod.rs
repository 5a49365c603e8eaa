//! The "reproduce the papers here" plan behind `clvscu suite`, as data: which studies run, in
//! which order, with which time cap, which gaps `explain` takes up, what the report holds;
//! [`STEPS`] names each step's published experiment. Each step is a child process of the
//! binary (`clvscu run`, `clvscu explain`), so NVIDIA's OpenCL, which can break a process's
//! context for good, costs one step at most, and a step past its cap is stopped like a Ctrl-C
//! (its finished comparisons kept) without stopping the suite.

pub mod peaks;
pub mod quick;
pub mod state;

use crate::study;

/// What one step runs. Folders are the step's own ([`Step::dir`]) or, where a kind names one,
/// another step's, relative to the suite's folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepKind {
    /// A study the binary carries, by name (`clvscu run --study NAME`, or its quick form).
    Study(&'static str),
    /// The same with `matvec/auto` following the table that `shapes-rule` wrote into the
    /// folder `table_dir` (through `CLVSCU_MATVEC_RULES`).
    StudyWithTable {
        study: &'static str,
        table_dir: &'static str,
    },
    /// The same with `matvec/auto` on the binary's own tables only (`CLVSCU_MATVEC_RULES`
    /// unset for it, whatever the caller's environment holds).
    StudyWithBuiltinTables(&'static str),
    /// A study of the seeds' CPU rows, OpenCL alone on the machine's OpenCL CPU device
    /// (`--pair opencl --cl-device cpu`); skipped, saying so, where none is listed.
    CpuStudy(&'static str),
    /// `clvscu calibrate`: the harness's launch path against a plain loop per API.
    Calibrate,
    /// `clvscu inspect`: both front ends' PTX by instruction class (Table V).
    Inspect,
    /// The vendor-library baselines (cuBLAS, CUB, cuDNN, cuSPARSE through PyTorch), where
    /// `python3` with `torch` exists: at the sizes of `study`, the groups `only` names (all
    /// when `None`), into the file `csv`.
    Baselines {
        study: &'static str,
        only: Option<&'static str>,
        csv: &'static str,
    },
    /// `clvscu explain` of the fair gaps of the named step's run folder.
    Explain(&'static str),
    /// `clvscu shapes-rule` over the folder `sweep`: `matvec/auto`'s table and its checks.
    ShapesRule { sweep: &'static str },
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    /// The step's name: its row in `suite.csv` and its log.
    pub name: &'static str,
    /// Its folder, relative to the suite's (the name, in the paper's plan).
    pub dir: &'static str,
    pub kind: StepKind,
    /// The published experiment(s) it reproduces.
    pub reproduces: &'static str,
    /// The most seconds it may run in the full suite; past it the step is stopped and the
    /// suite goes on. Estimated from the H100 runs' wall times (provenance `time:` notes and
    /// the rows' repetitions times their medians), with room to spare.
    pub full_cap_s: u32,
    /// The same in `--quick`.
    pub quick_cap_s: u32,
    /// Comparisons of the study the full suite leaves out (`run --skip`): what its time cap
    /// cannot hold, which the study run on its own still measures.
    pub skip: &'static [&'static str],
}

/// A step in the folder of its own name that skips nothing.
const fn step(
    name: &'static str,
    kind: StepKind,
    reproduces: &'static str,
    full_cap_s: u32,
    quick_cap_s: u32,
) -> Step {
    Step {
        name,
        dir: name,
        kind,
        reproduces,
        full_cap_s,
        quick_cap_s,
        skip: &[],
    }
}

const fn study(
    name: &'static str,
    reproduces: &'static str,
    full_cap_s: u32,
    quick_cap_s: u32,
) -> Step {
    step(
        name,
        StepKind::Study(name),
        reproduces,
        full_cap_s,
        quick_cap_s,
    )
}

impl Step {
    /// The same step leaving out the comparisons whose names contain one of `skip`.
    const fn skipping(self, skip: &'static [&'static str]) -> Step {
        Step { skip, ..self }
    }

    const fn in_dir(self, dir: &'static str) -> Step {
        Step { dir, ..self }
    }

    pub fn cap_s(&self, quick: bool) -> u32 {
        if quick {
            self.quick_cap_s
        } else {
            self.full_cap_s
        }
    }
}

/// The suite, in the order it runs. The fair study comes first among the long ones so that a
/// run cut short still has what `explain` needs.
pub const STEPS: &[Step] = &[
    study("table1", "NVIDIA whitepaper, Table 1 (Listings 2-7)", 10, 6),
    study(
        "peaks",
        "Fang et al. Eq. 2 / Fig. 1 and Eq. 3 / Fig. 2 (peaks)",
        12,
        5,
    ),
    study(
        "fair",
        "Fang et al. Fig. 3, Tables I and II (every application, fair)",
        35,
        10,
    ),
    study("unfair", "Fang et al. Fig. 9 (one step at a time)", 18, 5),
    study("stream", "BabelStream (Copy, Mul, Add, Triad, Dot)", 11, 5),
    study(
        "compiler",
        "Fang et al. Table V (FFT), Figs. 6-7 (FDTD unroll); flags",
        35,
        10,
    ),
    study(
        "memory-spaces",
        "Fang et al. Figs. 4-5 (texture) and Fig. 8 (constant)",
        66,
        10,
    ),
    study(
        "runtime",
        "Fang et al. BFS launch time; the runtime's launch path",
        45,
        6,
    ),
    // Study data: the names below are the suite's study files (`harness/<name>.toml`).
    // The 2^24-vertex graphs take 15 s each to make and half a minute to measure: the `bfs`
    // study run on its own measures them.
    study("bfs", "Fang et al. BFS (kernel and level times)", 25, 6).skipping(&["size=2^24"]),
    study("transfers", "NVIDIA whitepaper, pinned host memory", 41, 5),
    study(
        "sweeps",
        "NVIDIA whitepaper, execution configuration",
        30,
        8,
    ),
    study("fill", "The fill article (local sizes, float4, 2D)", 31, 8),
    // Each comparison is a process of its own (see the binary's CPU step).
    step(
        "cpu",
        StepKind::CpuStudy("cpu"),
        "Fang et al. Table VI and the fill article's CPU rows (OpenCL CPU device)",
        24,
        10,
    ),
    study(
        "shapes",
        "Shapes and sizes against the vendor libraries",
        44,
        12,
    ),
    step(
        "calibrate",
        StepKind::Calibrate,
        "The harness's own launch cost against a plain loop per API",
        14,
        5,
    ),
    step(
        "inspect",
        StepKind::Inspect,
        "Fang et al. Table V (PTX by instruction class)",
        10,
        8,
    ),
    step(
        "baselines",
        StepKind::Baselines {
            study: "shapes",
            only: None,
            csv: crate::rows::BASELINES_CSV,
        },
        "Vendor baselines beside our kernels (cuBLAS, CUB, cuDNN, cuSPARSE)",
        27,
        12,
    ),
    step(
        "explain",
        StepKind::Explain("fair"),
        "Why each fair gap: `clvscu explain` of the fair study's run folder",
        92,
        12,
    ),
];

/// The study of the rule plan's `auto` steps (`matvec/auto` at every shape of the sweep, the
/// read kernel at 2^28 floats), carried in the binary so the plan needs no checkout.
const SHAPE_SWEEP_AUTO: (&str, &str) = (
    "shape-sweep-auto",
    include_str!("../../harness/experiments/shape-sweep-auto.toml"),
);

/// The seeds' CPU rows, for the `cpu` step: a study the suite carries, not a built-in one.
const CPU: (&str, &str) = ("cpu", include_str!("../../harness/experiments/cpu.toml"));

/// `matvec/auto`'s table measured on the GPU at hand (`--plan matvec-rule`), in the folder
/// layout `clvscu shapes-rule` and the committed sweeps use: `sweep/` (the sweep, cuBLAS at its
/// shapes, `auto` with the new table), `rules/` (the table and `checks.md`), `auto-builtin/`
/// (`auto` with the table built into this binary, or the hand rule; each row's flags say
/// which). Caps from the H100 sweep of 1552 measurements in 91 s, with room to spare.
pub const MATVEC_RULE_STEPS: &[Step] = &[
    step(
        "sweep",
        StepKind::Study("shape-sweep"),
        "Every auto-eligible matvec variant at every sweep shape, and the read kernel",
        200,
        40,
    )
    .in_dir("sweep/shape-sweep"),
    step(
        "baselines",
        StepKind::Baselines {
            study: "shape-sweep",
            only: Some("shapes"),
            csv: "sweep/baselines.csv",
        },
        "cuBLAS SGEMV (torch.mv) at every sweep shape",
        90,
        30,
    ),
    step(
        "table",
        StepKind::ShapesRule { sweep: "sweep" },
        "The measured winner per aspect, size and row alignment",
        20,
        10,
    )
    .in_dir("rules"),
    step(
        "auto",
        StepKind::StudyWithTable {
            study: "shape-sweep-auto",
            table_dir: "rules",
        },
        "matvec/auto with the new table at every sweep shape",
        100,
        20,
    )
    .in_dir("sweep/shape-sweep-auto"),
    step(
        "auto-builtin",
        StepKind::StudyWithBuiltinTables("shape-sweep-auto"),
        "matvec/auto with the table built into this binary (or the hand rule)",
        100,
        20,
    ),
    step(
        "checks",
        StepKind::ShapesRule { sweep: "sweep" },
        "auto against cuBLAS beyond the L2 and against the read kernel at 2^28",
        20,
        10,
    )
    .in_dir("rules"),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Plan {
    /// The papers' experiments ([`STEPS`]).
    #[default]
    Paper,
    /// `matvec/auto`'s table measured here ([`MATVEC_RULE_STEPS`]).
    MatvecRule,
}

impl Plan {
    pub fn steps(self) -> &'static [Step] {
        match self {
            Plan::Paper => STEPS,
            Plan::MatvecRule => MATVEC_RULE_STEPS,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Plan::Paper => "paper",
            Plan::MatvecRule => "matvec-rule",
        }
    }
}

/// What the steps run so far left of their caps: a step may run for its own cap and what the
/// steps before it left unused, so a slow host's run as a whole keeps to the sum of its caps.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Slack {
    pub carried_s: f64,
}

impl Slack {
    /// The seconds a step whose own cap is `cap_s` may run.
    pub fn allowance(self, cap_s: f64) -> f64 {
        cap_s + self.carried_s
    }

    /// What is carried on after a step allowed `allowance` seconds ran for `wall_s`.
    pub fn after(self, allowance: f64, wall_s: f64) -> Slack {
        Slack {
            carried_s: (allowance - wall_s).max(0.0),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    #[error("no step '{step}' in the {plan} plan; its steps are: {known}")]
    UnknownStep {
        step: String,
        plan: &'static str,
        known: String,
    },
    #[error("the suite names study '{0}', which it does not carry")]
    UnknownStudy(String),
    #[error(transparent)]
    Read(#[from] toml::de::Error),
    #[error(transparent)]
    Write(#[from] toml::ser::Error),
}

/// The steps of `plan` that `names` selects (all when empty), in plan order; an unknown name
/// is an error that lists the known ones.
pub fn select(plan: Plan, names: &[String]) -> Result<Vec<Step>, SuiteError> {
    let steps = plan.steps();
    if let Some(bad) = names.iter().find(|n| !steps.iter().any(|s| s.name == *n)) {
        let known: Vec<&str> = steps.iter().map(|s| s.name).collect();
        return Err(SuiteError::UnknownStep {
            step: bad.clone(),
            plan: plan.name(),
            known: known.join(", "),
        });
    }
    Ok(steps
        .iter()
        .filter(|s| names.is_empty() || names.iter().any(|n| n == s.name))
        .copied()
        .collect())
}

/// Whether `name` is a built-in study, which `clvscu run --study NAME` finds by name.
pub fn is_builtin(name: &str) -> bool {
    study::BUILTIN.iter().any(|(n, _)| *n == name)
}

/// The text of a study step's study: the built-in study (or one the plans carry), or in
/// `quick` mode its small form.
pub fn study_text(name: &str, quick: bool) -> Result<String, SuiteError> {
    let text = study::BUILTIN
        .iter()
        .chain([&SHAPE_SWEEP_AUTO, &CPU])
        .find(|(n, _)| *n == name)
        .map(|(_, t)| *t)
        .ok_or_else(|| SuiteError::UnknownStudy(name.to_string()))?;
    if quick {
        quick::shrink(text)
    } else {
        Ok(text.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLANS: [Plan; 2] = [Plan::Paper, Plan::MatvecRule];

    /// Seconds the report and the peaks table take at most after the steps (charts of every
    /// run folder): what the budget keeps free.
    const REPORT_S: u32 = 30;

    /// The full suite's promise on an H100: the steps' caps and the report fit in ten minutes.
    const FULL_BUDGET_S: u32 = 600;
    /// `--quick`'s promise: about two minutes; the caps allow at most three.
    const QUICK_BUDGET_S: u32 = 180;

    /// The findings read a CPU step's per-comparison folders as one run only for the steps
    /// they list.
    #[test]
    fn every_cpu_step_is_one_the_findings_read_per_comparison() {
        for s in STEPS {
            let split = crate::report::findings::folder::ONE_RUN_PER_COMPARISON.contains(&s.dir);
            assert_eq!(split, matches!(s.kind, StepKind::CpuStudy(_)), "{}", s.name);
        }
    }

    #[test]
    fn the_caps_fit_the_promised_budgets() {
        for plan in PLANS {
            for (quick, budget) in [(false, FULL_BUDGET_S), (true, QUICK_BUDGET_S)] {
                let steps = plan.steps().iter();
                let sum: u32 = steps.map(|s| s.cap_s(quick)).sum::<u32>() + REPORT_S;
                assert!(
                    sum <= budget,
                    "{plan:?} quick {quick}: {sum} s > {budget} s"
                );
            }
        }
    }

    /// The rule plan's folders are the layout `shapes-rule` reads: the sweep, its baselines
    /// and `auto` with the new table under one folder, and the built-in `auto` outside it (its
    /// rows would otherwise count as the new table's); the table read after it is written.
    #[test]
    fn the_rule_plan_keeps_the_sweep_layout() {
        let steps = MATVEC_RULE_STEPS;
        let at = |name: &str| steps.iter().position(|s| s.name == name).unwrap();
        let (sweep, table) = ("sweep", "rules");
        for s in steps {
            match s.kind {
                StepKind::Study(_)
                | StepKind::StudyWithTable { .. }
                | StepKind::StudyWithBuiltinTables(_) => {
                    let inside = s.dir.starts_with("sweep/");
                    assert_eq!(inside, s.name != "auto-builtin", "{}", s.name);
                }
                StepKind::Baselines { csv, .. } => assert!(csv.starts_with("sweep/")),
                StepKind::ShapesRule { sweep: from } => {
                    assert_eq!((from, s.dir), (sweep, table));
                }
                _ => panic!("{}: not a rule step", s.name),
            }
            if let StepKind::StudyWithTable { table_dir, .. } = s.kind {
                assert_eq!(table_dir, table);
                assert!(at("table") < at(s.name));
            }
        }
        assert_eq!(steps.last().unwrap().kind, StepKind::ShapesRule { sweep });
    }

    /// A step gets its cap and what earlier steps left; a step that uses all it was allowed
    /// (capped) leaves nothing; over any run the steps never get more than the caps' sum.
    #[test]
    fn unused_time_is_carried_forward_and_never_more_than_the_caps() {
        let slack = Slack::default().after(10.0, 7.5);
        assert_eq!(slack.carried_s, 2.5);
        assert_eq!(slack.allowance(50.0), 52.5);
        assert_eq!(slack.after(52.5, 52.5).carried_s, 0.0);
        // A step that ran past its allowance (the SIGINT takes a moment) carries nothing.
        assert_eq!(slack.after(52.5, 53.0).carried_s, 0.0);
        let caps: Vec<f64> = STEPS.iter().map(|s| f64::from(s.cap_s(false))).collect();
        for seed in 0..50u64 {
            let (mut slack, mut used) = (Slack::default(), 0.0);
            for (i, cap) in caps.iter().enumerate() {
                let allowed = slack.allowance(*cap);
                // Walls anywhere from nothing to the whole allowance.
                let share = ((seed * 31 + i as u64 * 17) % 11) as f64 / 10.0;
                let wall = allowed * share;
                used += wall;
                slack = slack.after(allowed, wall);
            }
            assert!(
                used <= caps.iter().sum::<f64>() + 1e-9,
                "seed {seed}: {used}"
            );
        }
    }

    #[test]
    fn every_study_step_is_carried_and_parses_in_both_modes() {
        for s in PLANS.iter().flat_map(|p| p.steps()) {
            if let StepKind::Study(name)
            | StepKind::StudyWithTable { study: name, .. }
            | StepKind::StudyWithBuiltinTables(name) = s.kind
            {
                for quick in [false, true] {
                    let text = study_text(name, quick).unwrap();
                    let parsed = study::parse(&text, &format!("{name}.toml"))
                        .unwrap_or_else(|e| panic!("{name} quick {quick}: {e}"));
                    assert_eq!(parsed.name, name);
                    assert!(!parsed.comparisons.is_empty());
                }
            }
        }
    }

    #[test]
    fn explain_follows_the_step_it_explains() {
        for (i, s) in STEPS.iter().enumerate() {
            if let StepKind::Explain(of) = s.kind {
                assert!(STEPS[..i].iter().any(|e| e.name == of), "{of}");
            }
        }
    }

    #[test]
    fn steps_are_selected_in_plan_order_and_unknown_ones_named() {
        let picked = select(Plan::Paper, &["peaks".into(), "table1".into()]).unwrap();
        let names: Vec<_> = picked.iter().map(|s| s.name).collect();
        assert_eq!(names, ["table1", "peaks"]);
        let e = select(Plan::Paper, &["nope".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("nope") && e.contains("table1"), "{e}");
        assert_eq!(select(Plan::Paper, &[]).unwrap().len(), STEPS.len());
        let e = select(Plan::MatvecRule, &["table1".into()])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("matvec-rule") && e.contains("auto-builtin"),
            "{e}"
        );
    }
}
