//! The eight development steps of Fang, Varbanescu & Sips (2011, section IV-C) as data, and the
//! verdict of which a comparison held equal: it is *fair* only when all eight are; an unfair one
//! is still run and reported, with every differing step and both values, never hidden.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::rows::Step;
use crate::rows::{Api, TimerKind, WaitMode};

/// Compiler options in API-neutral terms, mapped to each API's spelling by [`Flags::for_api`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flags {
    /// Contract a*b+c into one instruction: `-cl-mad-enable` / `--fmad=true`.
    #[serde(default)]
    pub mad: bool,
    /// Relaxed math: `-cl-fast-relaxed-math` / `--use_fast_math`.
    #[serde(default)]
    pub fast_math: bool,
    /// Flush denormals: `-cl-denorms-are-zero` / `--ftz=true`.
    #[serde(default)]
    pub denorms_zero: bool,
}

impl Flags {
    /// The flags as each compiler receives them. NVRTC contracts by default, so `mad = false`
    /// is spelled out as `--fmad=false` (and likewise `--ftz=false`) to match OpenCL.
    pub fn for_api(&self, api: Api) -> Vec<String> {
        let mad = self.mad || self.fast_math;
        let ftz = self.denorms_zero || self.fast_math;
        let flags = match api {
            // CUDA's --use_fast_math flushes denormals too (it implies --ftz=true);
            // -cl-fast-relaxed-math does not, so fast math asks for it on OpenCL as well.
            Api::OpenCl => [
                (self.mad, "-cl-mad-enable".into()),
                (self.fast_math, "-cl-fast-relaxed-math".into()),
                (ftz, "-cl-denorms-are-zero".into()),
            ],
            Api::Cuda => [
                (true, format!("--fmad={mad}")),
                (self.fast_math, "--use_fast_math".into()),
                (true, format!("--ftz={ftz}")),
            ],
        };
        flags
            .into_iter()
            .filter_map(|(on, f)| on.then_some(f))
            .collect()
    }

    /// What `api`'s compiler does with these flags, in words equal only when both do the same.
    /// No OpenCL C option forbids contracting `a*b+c` (NVIDIA's OpenCL contracts without
    /// `-cl-mad-enable`), so `mad` off is not equal to NVRTC's `--fmad=false`.
    pub fn effect(&self, api: Api) -> String {
        if self.mad || self.fast_math {
            return self.describe();
        }
        let contraction = match api {
            Api::OpenCl => "contraction left to the compiler: no OpenCL flag forbids it",
            Api::Cuda => "--fmad=false: never contracts",
        };
        format!("{} ({contraction})", self.describe())
    }

    pub fn describe(&self) -> String {
        let names = [
            (self.mad, "mad"),
            (self.fast_math, "fast-math"),
            (self.denorms_zero, "denorms-zero"),
        ];
        let parts: Vec<&str> = names
            .iter()
            .filter_map(|&(on, n)| on.then_some(n))
            .collect();
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join("+")
        }
    }
}

/// Everything one side of a comparison decides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SideSteps {
    pub api: Api,
    /// Family, size, element type and input seed.
    pub problem: String,
    /// The variant (kernel algorithm).
    pub algorithm: String,
    /// The kernel of the parity-checked twins and the defines that shape its code.
    pub implementation: String,
    /// Unroll factors per unroll point.
    pub native: BTreeMap<String, String>,
    pub flags: Flags,
    pub second_stage: String,
    /// Whose front end made the program the side runs: its own API's, or the other's with
    /// `program = "other"` (`None` in verdicts written before: its own).
    #[serde(default)]
    pub front_end: Option<Api>,
    pub shape: crate::backend::LaunchShape,
    pub timer: TimerKind,
    pub wait: WaitMode,
    pub warmup: u32,
    /// Timed repetitions in a row before the other side's turn.
    pub turn: u32,
    pub min_reps: u32,
    pub min_time_s: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepVerdict {
    pub step: Step,
    pub equal: bool,
    pub a: String,
    pub b: String,
}

/// Every step of a comparison, equal or different, with both values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub steps: Vec<StepVerdict>,
}

impl Verdict {
    pub fn fair(&self) -> bool {
        self.steps.iter().all(|s| s.equal)
    }

    /// `step: a vs b` for each differing step, `;`-separated (empty when fair).
    pub fn differences(&self) -> String {
        self.steps
            .iter()
            .filter(|s| !s.equal)
            .map(|s| format!("{}: {} vs {}", s.step, s.a, s.b))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// The verdict of each step. When a side runs the other front end's program (`swapped`), the
/// first stage names whose front end made it: with one front end's PTX on both sides the step
/// is equal and the PR is the runtimes'.
pub fn verdict(a: &SideSteps, b: &SideSteps) -> Verdict {
    let front_end = |s: &SideSteps| s.front_end.unwrap_or(s.api);
    let swapped = front_end(a) != a.api || front_end(b) != b.api;
    let pair = |step, text: &dyn Fn(&SideSteps) -> String| {
        let (x, y) = (text(a), text(b));
        StepVerdict {
            step,
            equal: x == y,
            a: x,
            b: y,
        }
    };
    let native = |s: &SideSteps| match s.native.is_empty() {
        true => "none".into(),
        false => (s.native.iter().map(|(k, v)| format!("{k}={v}")))
            .collect::<Vec<_>>()
            .join(","),
    };
    let first_stage = |s: &SideSteps| {
        let effect = s.flags.effect(front_end(s));
        match swapped {
            true => format!("{effect} (PTX from {}'s front end)", front_end(s).label()),
            false => effect,
        }
    };
    let running = |s: &SideSteps| {
        format!(
            "timer={} wait={} warmup={} turn={} min-reps={} min-time={}s",
            s.timer.label(),
            s.wait.label(),
            s.warmup,
            s.turn,
            s.min_reps,
            s.min_time_s
        )
    };
    Verdict {
        steps: vec![
            pair(Step::Problem, &|s| s.problem.clone()),
            pair(Step::Algorithm, &|s| s.algorithm.clone()),
            pair(Step::Implementation, &|s| s.implementation.clone()),
            pair(Step::NativeOptimizations, &native),
            pair(Step::FirstStageCompilation, &first_stage),
            pair(Step::SecondStageCompilation, &|s| s.second_stage.clone()),
            pair(Step::Configuration, &|s| s.shape.describe()),
            pair(Step::Running, &running),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(api: Api) -> SideSteps {
        SideSteps {
            api,
            problem: "matvec 4x4 f32 seed 1".into(),
            algorithm: "listing2".into(),
            implementation: "abc".into(),
            native: BTreeMap::new(),
            flags: Flags {
                mad: true,
                ..Default::default()
            },
            second_stage: "driver JIT".into(),
            front_end: None,
            shape: crate::backend::LaunchShape::linear(60, 256),
            timer: TimerKind::DeviceEvent,
            wait: WaitMode::Spin,
            warmup: 2,
            turn: 1,
            min_reps: 10,
            min_time_s: 0.1,
        }
    }

    #[test]
    fn identical_sides_are_fair() {
        let v = verdict(&side(Api::OpenCl), &side(Api::Cuda));
        assert!(v.fair());
        assert_eq!(v.steps.len(), 8);
        assert_eq!(v.differences(), "");
    }

    #[test]
    fn one_differing_step_is_named_with_both_values() {
        let a = side(Api::OpenCl);
        let mut b = side(Api::Cuda);
        b.native.insert("UNROLL_A".into(), "4".into());
        b.timer = TimerKind::WallClock;
        let v = verdict(&a, &b);
        assert!(!v.fair());
        let d = v.differences();
        assert!(
            d.contains("native-optimizations: none vs UNROLL_A=4"),
            "{d}"
        );
        assert!(d.contains("running: timer=device-event"), "{d}");
        assert_eq!(v.steps.iter().filter(|s| !s.equal).count(), 2);
    }

    #[test]
    fn one_front_ends_ptx_on_both_runtimes_is_equal_and_named() {
        // OpenCL runs its own PTX; CUDA runs OpenCL's: the first stage is one front end.
        let a = side(Api::OpenCl);
        let mut b = side(Api::Cuda);
        b.front_end = Some(Api::OpenCl);
        let v = verdict(&a, &b);
        assert!(v.fair(), "{}", v.differences());
        let first = &v.steps[4];
        assert_eq!(first.step, Step::FirstStageCompilation);
        assert_eq!(first.a, "mad (PTX from OpenCL's front end)");
        assert_eq!(first.a, first.b);
        // NVRTC's PTX on both runtimes: equal too.
        let mut a = side(Api::OpenCl);
        a.front_end = Some(Api::Cuda);
        assert!(verdict(&a, &side(Api::Cuda)).fair());
        // Each runtime running the other front end's PTX: the first stage differs, named.
        let mut b = side(Api::Cuda);
        b.front_end = Some(Api::OpenCl);
        let v = verdict(&a, &b);
        assert!(!v.fair());
        assert!(
            v.differences()
                .contains("first-stage-compilation: mad (PTX from CUDA's front end)"),
            "{}",
            v.differences()
        );
        // Own programs on both sides keep the plain flags (verdicts of before are unchanged).
        let own = verdict(&side(Api::OpenCl), &side(Api::Cuda));
        assert_eq!(own.steps[4].a, "mad");
    }

    #[test]
    fn a_one_sided_wait_mode_makes_running_differ() {
        let a = side(Api::OpenCl);
        let mut b = side(Api::Cuda);
        b.wait = WaitMode::Blocking;
        let v = verdict(&a, &b);
        assert!(!v.fair());
        let d = v.differences();
        assert!(d.contains("running: timer=device-event wait=spin"), "{d}");
        assert!(d.contains("vs timer=device-event wait=blocking"), "{d}");
    }

    #[test]
    fn flags_map_between_apis() {
        let f = Flags {
            mad: true,
            fast_math: false,
            denorms_zero: true,
        };
        assert_eq!(
            f.for_api(Api::OpenCl),
            vec!["-cl-mad-enable", "-cl-denorms-are-zero"]
        );
        assert_eq!(f.for_api(Api::Cuda), vec!["--fmad=true", "--ftz=true"]);
        let off = Flags::default();
        assert!(off.for_api(Api::OpenCl).is_empty());
        assert_eq!(off.for_api(Api::Cuda), vec!["--fmad=false", "--ftz=false"]);
        let fast = Flags {
            fast_math: true,
            ..Default::default()
        };
        assert!(fast
            .for_api(Api::Cuda)
            .contains(&"--use_fast_math".to_string()));
        // --use_fast_math flushes denormals: OpenCL is asked to flush them as well.
        assert_eq!(
            fast.for_api(Api::OpenCl),
            vec!["-cl-fast-relaxed-math", "-cl-denorms-are-zero"]
        );
        assert_eq!(fast.effect(Api::OpenCl), fast.effect(Api::Cuda));
    }

    #[test]
    fn mad_off_is_not_held_equal() {
        // NVRTC is told --fmad=false; no OpenCL build option forbids contraction.
        let mut a = side(Api::OpenCl);
        let mut b = side(Api::Cuda);
        a.flags.mad = false;
        b.flags.mad = false;
        let v = verdict(&a, &b);
        assert!(!v.fair(), "{}", v.differences());
        assert!(v.differences().contains("first-stage-compilation"));
        // With one front end's PTX on both runtimes the first stage is the same again.
        a.front_end = Some(Api::Cuda);
        assert!(verdict(&a, &b).fair(), "{}", verdict(&a, &b).differences());
    }
}
