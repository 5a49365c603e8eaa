//! The rungs of a target: its fair comparison with one thing changed. Pure: a rung is a
//! [`Comparison`], made from the target's and, for the second pass, from the first pass's rows.

use std::collections::BTreeMap;

use crate::families::{find_variant, Size, Variant};
use crate::rows::{Api, IndexWidth, MeasurementRow, ProgramSource, TimerKind};
use crate::study::{Comparison, Resolved, WALL_CLOCK_TURN};

use super::rung_id;

/// The ladder, in its order: which question a rung answers.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, strum::IntoStaticStr,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum LadderStep {
    /// The target as it is (the fair PR).
    Target,
    /// 1. Front end or runtime: each runtime runs the other compiler's PTX.
    FrontEndOrRuntime,
    /// 2. Second stage: both sides held to one register count.
    SecondStage,
    /// 3. CUDA's L1 / shared-memory split.
    Carveout,
    /// 4. Compiler steps held otherwise on both sides: index width, unroll, fast math.
    CompilerStep,
    /// 5. Launch and wait: the other clock (kernel time against host time).
    LaunchAndWait,
    /// The fix offered: the family's declared alternative in both twins. It names no cause
    /// (it changes the kernel's text); it says what a user can do.
    Fix,
}

impl LadderStep {
    pub fn name(self) -> &'static str {
        self.into()
    }
}

/// What a rung changes; a rung without a number is named by its variant in kebab case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::EnumString, strum::IntoStaticStr)]
#[strum(serialize_all = "kebab-case")]
pub enum RungKind {
    Own,
    NvrtcPtx,
    OpenclPtx,
    /// OpenCL's PTX on both runtimes, the side that used more registers capped at the other's
    /// count on the target's load path (CUDA: `.maxnreg` via `cuModuleLoadData`; OpenCL:
    /// `-cl-nv-maxrregcount`).
    #[strum(disabled)]
    RegistersHeld {
        registers: u32,
        held: Api,
    },
    /// The control of [`RungKind::RegistersHeld`]: the held side capped at the count it already
    /// uses. If this moves the PR from `opencl-ptx`'s, the register rung is void.
    #[strum(disabled)]
    CapControl {
        registers: u32,
        held: Api,
    },
    /// Earlier versions' folders only: the cap applied through the CUDA driver's linker (which
    /// makes other code from the same PTX by itself); its control ran CUDA's PTX. Always void.
    #[strum(disabled)]
    LinkedRegisters {
        registers: u32,
        held: Api,
    },
    /// Earlier versions only: CUDA's own PTX through the driver's linker. Void (see above).
    CudaLinked,
    /// Earlier versions only: both JITs told one optimisation level, via the linker. Void.
    #[strum(disabled)]
    OptLevelHeld(u32),
    /// CUDA's carveout hint: this percent of the unified L1 / shared memory to shared memory.
    #[strum(disabled)]
    Carveout(u32),
    IndexU64,
    NoUnroll,
    FastMath,
    /// The other clock on both sides: the host's wall clock for a kernel-timed target.
    HostTimer,
    /// The device's events for a host-timed target.
    DeviceTimer,
    /// A multi-launch variant's first launch timed alone (same kernel, shape, input).
    FirstLaunchAlone,
    /// Its last launch alone, over what the first leaves.
    LastLaunchAlone,
    Alternative,
}

/// The family's declared alternative of `target`'s variant, where it has one.
pub(super) fn alternative(target: &Resolved) -> Option<&'static Variant> {
    find_variant(target.family, target.variant.alternative?).ok()
}

/// The variants that time `target`'s first and last launch alone.
fn launch_parts(target: &Resolved) -> Option<(&'static Variant, &'static Variant)> {
    let (first, last) = target.family.family().launch_parts(target.variant)?;
    let find = |name| find_variant(target.family, name).ok();
    Some((find(first)?, find(last)?))
}

/// Swept when a kernel uses shared memory: NVIDIA's OpenCL does not report which split it picks.
pub const CARVEOUTS: [u32; 4] = [0, 25, 50, 100];

impl RungKind {
    pub fn name(self) -> String {
        match self {
            RungKind::RegistersHeld { registers, held } => {
                format!("{}-capped-to-r{registers}", held.label().to_lowercase())
            }
            RungKind::CapControl { registers, held } => {
                format!("{}-capped-to-own-r{registers}", held.label().to_lowercase())
            }
            RungKind::LinkedRegisters { registers, held } => {
                format!("{}-held-to-r{registers}", held.label().to_lowercase())
            }
            RungKind::OptLevelHeld(l) => format!("jit-opt-{l}"),
            RungKind::Carveout(p) => format!("cuda-carveout-{p}"),
            _ => <&str>::from(self).into(),
        }
    }

    /// The rung named `name` (as [`RungKind::name`] writes it).
    pub fn parse(name: &str) -> Option<RungKind> {
        if let Ok(k) = name.parse() {
            return Some(k);
        }
        let n = name
            .trim_start_matches(|c: char| !c.is_ascii_digit())
            .parse()
            .ok()?;
        let with_registers = [Api::OpenCl, Api::Cuda].into_iter().flat_map(|held| {
            [
                RungKind::CapControl { registers: n, held },
                RungKind::RegistersHeld { registers: n, held },
                RungKind::LinkedRegisters { registers: n, held },
            ]
        });
        [RungKind::Carveout(n), RungKind::OptLevelHeld(n)]
            .into_iter()
            .chain(with_registers)
            .find(|k| k.name() == name)
    }

    /// Why a rung can never name a cause, whatever its PR: it changed more than one step.
    pub fn void_by_design(self) -> Option<&'static str> {
        match self {
            RungKind::LinkedRegisters { .. } | RungKind::OptLevelHeld(_) | RungKind::CudaLinked => {
                Some(
                    "void: it loaded the code through the CUDA driver's linker, another path \
                     than the target's, which makes other machine code from the same PTX with no \
                     option at all; no control ran OpenCL's PTX on that path",
                )
            }
            _ => None,
        }
    }

    pub fn step(self) -> LadderStep {
        match self {
            RungKind::Own => LadderStep::Target,
            RungKind::NvrtcPtx | RungKind::OpenclPtx => LadderStep::FrontEndOrRuntime,
            RungKind::RegistersHeld { .. }
            | RungKind::CapControl { .. }
            | RungKind::LinkedRegisters { .. }
            | RungKind::OptLevelHeld(_)
            | RungKind::CudaLinked => LadderStep::SecondStage,
            RungKind::Carveout(_) => LadderStep::Carveout,
            RungKind::IndexU64 | RungKind::NoUnroll | RungKind::FastMath => {
                LadderStep::CompilerStep
            }
            RungKind::HostTimer
            | RungKind::DeviceTimer
            | RungKind::FirstLaunchAlone
            | RungKind::LastLaunchAlone => LadderStep::LaunchAndWait,
            RungKind::Alternative => LadderStep::Fix,
        }
    }

    pub fn describe(self) -> String {
        match self {
            RungKind::Own => "the fair comparison".into(),
            RungKind::NvrtcPtx => "NVRTC's PTX on both runtimes".into(),
            RungKind::OpenclPtx => "OpenCL's PTX on both runtimes".into(),
            RungKind::RegistersHeld { registers, held } => format!(
                "OpenCL's PTX on both runtimes, {}'s second stage capped at {registers} registers \
                 on the target's load path",
                held.label()
            ),
            RungKind::CapControl { registers, held } => format!(
                "control: OpenCL's PTX on both runtimes, {}'s second stage capped at the \
                 {registers} registers it uses anyway",
                held.label()
            ),
            RungKind::LinkedRegisters { registers, held } => format!(
                "OpenCL's PTX on both runtimes, {}'s second stage held to {registers} registers \
                 through the CUDA driver's linker",
                held.label()
            ),
            RungKind::OptLevelHeld(l) => format!(
                "OpenCL's PTX on both runtimes, both second stages told optimisation level {l}"
            ),
            RungKind::CudaLinked => {
                "CUDA's PTX assembled through the CUDA driver's linker (the load path of JIT \
                 options)"
                    .into()
            }
            RungKind::Carveout(p) => {
                format!("CUDA told to give {p}% of L1 / shared memory to shared memory")
            }
            RungKind::IndexU64 => "64-bit index arithmetic on both sides".into(),
            RungKind::NoUnroll => "every unroll point held at 1 on both sides".into(),
            RungKind::FastMath => "fast math on both sides".into(),
            RungKind::HostTimer => "the host's wall clock on both sides".into(),
            RungKind::DeviceTimer => "the device's events on both sides".into(),
            RungKind::FirstLaunchAlone => "the first launch alone".into(),
            RungKind::LastLaunchAlone => "the last launch alone".into(),
            RungKind::Alternative => {
                "the family's declared alternative variant on both sides (the fix offered)".into()
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Rung {
    pub kind: RungKind,
    pub comparison: Comparison,
}

fn rung(target: &Comparison, kind: RungKind, change: impl FnOnce(&mut Comparison)) -> Rung {
    let mut comparison = target.clone();
    comparison.id = rung_id(&target.id, &kind.name());
    change(&mut comparison);
    Rung { kind, comparison }
}

fn both(c: &mut Comparison, change: impl Fn(&mut Resolved)) {
    change(&mut c.a);
    change(&mut c.b);
}

/// The first pass's rungs of `target` (sides on `apis`); the PTX swap needs OpenCL against
/// CUDA, and a rung equal to the target is left out.
pub fn first_pass(target: &Comparison, apis: (Api, Api)) -> Vec<Rung> {
    let mut rungs = vec![rung(target, RungKind::Own, |_| {})];
    if apis == (Api::OpenCl, Api::Cuda) {
        rungs.push(rung(target, RungKind::NvrtcPtx, |c| {
            c.a.program = ProgramSource::Other
        }));
        rungs.push(rung(target, RungKind::OpenclPtx, |c| {
            c.b.program = ProgramSource::Other
        }));
    }
    if target.a.index != IndexWidth::U64 {
        rungs.push(rung(target, RungKind::IndexU64, |c| {
            both(c, |s| s.index = IndexWidth::U64)
        }));
    }
    let rolled: BTreeMap<String, u32> = target
        .a
        .variant
        .unroll_points
        .iter()
        .map(|p| (p.to_string(), 1))
        .collect();
    if !rolled.is_empty() && target.a.unroll != rolled {
        rungs.push(rung(target, RungKind::NoUnroll, |c| {
            both(c, |s| s.unroll = rolled.clone())
        }));
    }
    if !target.a.flags.fast_math {
        rungs.push(rung(target, RungKind::FastMath, |c| {
            both(c, |s| s.flags.fast_math = true)
        }));
    }
    let (kind, timer, turn) = match target.a.timer {
        TimerKind::DeviceEvent => (RungKind::HostTimer, TimerKind::WallClock, WALL_CLOCK_TURN),
        TimerKind::WallClock => (RungKind::DeviceTimer, TimerKind::DeviceEvent, 1),
    };
    if let Some(alternative) = alternative(&target.a) {
        rungs.push(rung(target, RungKind::Alternative, |c| {
            both(c, |s| s.variant = alternative)
        }));
    }
    if let Some((first, _)) = launch_parts(&target.a) {
        rungs.push(rung(target, RungKind::FirstLaunchAlone, |c| {
            both(c, |s| s.variant = first)
        }));
    }
    rungs.push(rung(target, kind, |c| {
        both(c, |s| {
            s.timer = timer;
            s.turn = turn;
        })
    }));
    rungs
}

/// The rows of `kind`'s rung of `target`.
pub(super) fn rung_rows<'r>(
    rows: &'r [MeasurementRow],
    target: &str,
    kind: RungKind,
) -> impl Iterator<Item = &'r MeasurementRow> {
    let id = rung_id(target, &kind.name());
    rows.iter().filter(move |r| r.comparison == id)
}

/// The smallest difference in registers worth a rung: one or two registers rarely change how
/// many work-groups fit an SM.
const REGISTER_STEP: u32 = 4;

/// The second pass's rungs, from the first pass's rows: a register cap (and its control) where
/// the second stages made OpenCL's PTX into different counts, the last launch alone, and
/// CUDA's carveout swept where the kernel uses shared memory.
pub fn second_pass(target: &Comparison, apis: (Api, Api), rows: &[MeasurementRow]) -> Vec<Rung> {
    if apis != (Api::OpenCl, Api::Cuda) {
        return Vec::new();
    }
    let mut rungs = Vec::new();
    let registers = |api| {
        rung_rows(rows, &target.id, RungKind::OpenclPtx)
            .find(|r| r.api == api)
            .filter(|r| r.verified)
            .and_then(|r| r.registers)
    };
    if let (Some(cl), Some(cu)) = (registers(Api::OpenCl), registers(Api::Cuda)) {
        if cl.abs_diff(cu) >= REGISTER_STEP {
            let (held, count, own) = if cu > cl {
                (Api::Cuda, cl, cu)
            } else {
                (Api::OpenCl, cu, cl)
            };
            let control = RungKind::CapControl {
                registers: own,
                held,
            };
            let capped = RungKind::RegistersHeld {
                registers: count,
                held,
            };
            for (kind, cap) in [(control, own), (capped, count)] {
                rungs.push(rung(target, kind, |c| {
                    c.b.program = ProgramSource::Other;
                    let side = if held == Api::Cuda {
                        &mut c.b
                    } else {
                        &mut c.a
                    };
                    side.jit.max_registers = Some(cap);
                }));
            }
        }
    }
    let groups = rung_rows(rows, &target.id, RungKind::Own)
        .find(|r| r.api == Api::Cuda)
        .map(|r| r.groups);
    if let (Some((_, last)), Some(groups)) = (launch_parts(&target.a), groups) {
        // The last launch reduces what the first left: one value per work-group.
        rungs.push(rung(target, RungKind::LastLaunchAlone, |c| {
            both(c, |s| {
                s.variant = last;
                s.size = Size::vector(u64::from(groups));
                s.groups = None;
            })
        }));
    }
    let shared = [Api::OpenCl, Api::Cuda].into_iter().any(|api| {
        rung_rows(rows, &target.id, RungKind::Own)
            .find(|r| r.api == api)
            .and_then(|r| r.shared_bytes)
            .is_some_and(|b| b > 0)
    });
    if shared && target.b.jit.carveout.is_none() {
        for percent in CARVEOUTS {
            rungs.push(rung(target, RungKind::Carveout(percent), |c| {
                c.b.jit.carveout = Some(percent)
            }));
        }
    }
    rungs
}

/// Why a comparison is no target: its sides differ in more than the API (an unfair PR).
pub fn not_a_target(c: &Comparison) -> Option<String> {
    (c.a != c.b).then(|| {
        format!(
            "{}: its two sides are set differently (an unfair comparison); explain takes fair ones",
            c.id
        )
    })
}
