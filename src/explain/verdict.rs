//! The words of a verdict: a PR with its interval, a rung's outcome, a cause, the verdict, and
//! one target's explanation with each side's launch shape (`attribute` reaches them).

use crate::rows::{MeasurementRow, PrRow};

use super::ladder::RungKind;
use super::PARITY;

/// A PR with its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub value: f64,
    pub lo: f64,
    pub hi: f64,
}

impl Interval {
    pub fn of(row: &PrRow) -> Interval {
        Interval {
            value: row.pr,
            lo: row.pr_ci_lo,
            hi: row.pr_ci_hi,
        }
    }

    pub fn at_parity(&self) -> bool {
        self.lo <= PARITY.1 && self.hi >= PARITY.0
    }

    /// The CI lies wholly in the "similar" band: a CI like [0.69, 1.21] touches parity too, but
    /// cannot tell a gap from none.
    pub fn is_narrow(&self) -> bool {
        self.lo >= crate::stats::SIMILAR_LO && self.hi <= crate::stats::SIMILAR_HI
    }

    pub fn apart_from(&self, other: &Interval) -> bool {
        self.hi < other.lo || other.hi < self.lo
    }

    /// The geometric mean of two PRs, interval ends likewise.
    pub(super) fn geometric_mean(&self, other: &Interval) -> Interval {
        Interval {
            value: (self.value * other.value).sqrt(),
            lo: (self.lo * other.lo).sqrt(),
            hi: (self.hi * other.hi).sqrt(),
        }
    }
}

/// As every table and sentence shows it: `0.812 [0.795, 0.830]`.
impl std::fmt::Display for Interval {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{:.3} [{:.3}, {:.3}]", self.value, self.lo, self.hi)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct RungOutcome {
    pub kind: RungKind,
    /// `None` when a side failed to build, launch or verify (see `note`).
    pub pr: Option<Interval>,
    /// The fraction of the target's gap (in logarithms) this rung removed: 1 closes it, 0
    /// leaves it, negative widens it.
    pub closed: Option<f64>,
    pub moved: bool,
    pub closes: bool,
    /// Why a rung can name no cause whatever its PR: it changed more than one step, or its
    /// control moved (see [`mark_void`](super::attribute::mark_void)).
    pub void: Option<String>,
    /// Why a rung has no PR, or a fact beside it (registers of both sides).
    pub note: String,
}

impl RungOutcome {
    /// The rung brings the PR to parity and may name a cause.
    pub fn closes_validly(&self) -> bool {
        self.closes && self.void.is_none()
    }
}

/// What a gap is put down to; [`Cause::describe`] says what each means.
#[derive(Debug, Clone, PartialEq)]
pub enum Cause {
    FrontEnd,
    Runtime,
    Registers {
        registers: u32,
        held: crate::rows::Api,
    },
    Carveout(u32),
    LaunchAndWait,
    BetweenLaunches,
    CompilerStep(RungKind),
    DriverCalls,
    HarnessPath,
}

impl Cause {
    pub fn describe(&self) -> String {
        match self {
            Cause::FrontEnd => "front end (the two compilers' PTX)".into(),
            Cause::Runtime => "runtime (the same PTX runs apart; no runtime rung closes it)".into(),
            Cause::Registers { registers, held } => format!(
                "second stage: register allocation ({} capped at {registers} registers on the \
                 target's load path closes it; its control held)",
                held.label()
            ),
            Cause::Carveout(p) => format!(
                "runtime: the L1 / shared-memory split (CUDA at a {p}% carveout runs as OpenCL)"
            ),
            Cause::LaunchAndWait => {
                "runtime: launch and wait (the kernels agree on the device's clock)".into()
            }
            Cause::BetweenLaunches => "runtime: between the run's launches (the first launch \
                 alone is at parity; a run of a few microseconds carries the gap before the \
                 second)"
                .into(),
            Cause::CompilerStep(kind) => format!("compiler step: {}", kind.describe()),
            Cause::DriverCalls => "runtime: the driver's own calls (a plain program replaying \
                 the target's calls shows the same PR)"
                .into(),
            Cause::HarnessPath => "runtime: the harness's own path (a plain program replaying \
                 the target's calls is at parity)"
                .into(),
        }
    }

    /// A short name for CSV cells and chart labels.
    pub fn slug(&self) -> String {
        match self {
            Cause::FrontEnd => "front-end".into(),
            Cause::Runtime => "runtime".into(),
            Cause::Registers { .. } => "second-stage-registers".into(),
            Cause::Carveout(_) => "carveout".into(),
            Cause::LaunchAndWait => "launch-and-wait".into(),
            Cause::BetweenLaunches => "between-launches".into(),
            Cause::CompilerStep(kind) => format!("compiler-step:{}", kind.name()),
            Cause::DriverCalls => "runtime-driver-calls".into(),
            Cause::HarnessPath => "runtime-harness-path".into(),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub enum Verdict {
    NoGap,
    Inconclusive(Interval),
    NotMeasured(String),
    /// One cause, or several with their shares of the gap (in logarithms, summing to 1).
    Explained(Vec<(Cause, f64)>),
    Unexplained {
        residual: f64,
        largest: Option<(RungKind, f64)>,
    },
    #[default]
    CodeOnly,
}

impl Verdict {
    pub fn describe(&self) -> String {
        match self {
            // Reached only with a CI inside [0.9, 1.1] (`Interval::is_narrow`); the words stay
            // those the committed verdict files hold.
            Verdict::NoGap => "no gap: the PR's CI touches [0.98, 1.02]".into(),
            Verdict::Inconclusive(ci) => format!(
                "inconclusive: the PR's CI [{:.2}, {:.2}] touches [0.98, 1.02] but is wider than \
                 [0.9, 1.1]; more repetitions would tell a gap from none",
                ci.lo, ci.hi
            ),
            Verdict::NotMeasured(why) => format!("not measured: {why}"),
            Verdict::Explained(causes) if causes.len() == 1 => causes[0].0.describe(),
            Verdict::Explained(causes) => causes
                .iter()
                .map(|(c, share)| format!("{} {:.0}%", c.describe(), share * 100.0))
                .collect::<Vec<_>>()
                .join(" + "),
            Verdict::Unexplained { residual, largest } => {
                let moved = match largest {
                    Some((kind, pr)) => format!("; the largest move: {} (PR {pr:.3})", kind.name()),
                    None => String::new(),
                };
                format!("unexplained: PR {residual:.3} remains with no rung at parity{moved}")
            }
            Verdict::CodeOnly => "no rung run on it (its machine code read only)".into(),
        }
    }

    /// The causes' short names, `+`-joined (`unexplained`, `no-gap`, ...).
    pub fn slug(&self) -> String {
        match self {
            Verdict::NoGap => "no-gap".into(),
            Verdict::Inconclusive(_) => "inconclusive".into(),
            Verdict::NotMeasured(_) => "not-measured".into(),
            Verdict::Explained(causes) => causes
                .iter()
                .map(|(c, _)| c.slug())
                .collect::<Vec<_>>()
                .join("+"),
            Verdict::Unexplained { .. } => "unexplained".into(),
            Verdict::CodeOnly => "machine-code-only".into(),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct TargetExplanation {
    pub target: String,
    pub study: String,
    pub family: String,
    pub variant: String,
    pub size: String,
    pub device: String,
    pub pr: Option<Interval>,
    pub rungs: Vec<RungOutcome>,
    pub verdict: Verdict,
    /// Every cause named comes from a rung whose control held and, for a second-stage cause,
    /// whose machine code reproduces the slower side's (see `explain::verify`).
    pub verified: bool,
    /// What the machine code each runtime runs shows, in one sentence, where it was read.
    pub machine_code: Option<String>,
    /// The fix offered and what it gives: the family's alternative on both sides, measured.
    pub fix: Option<String>,
    /// The target's calls replayed as a plain program beside the harness, where it is the
    /// runtime's own calls (`explain::replay`).
    pub replay: Option<String>,
    /// Each side's launch shape and what its API reported of the kernel (the sixth step).
    pub shapes: Vec<SideShape>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SideShape {
    pub api: crate::rows::Api,
    pub local: u32,
    pub limit: Option<u32>,
    pub registers: Option<u32>,
    pub spill_bytes: Option<u64>,
    pub shared_bytes: Option<u64>,
}

impl TargetExplanation {
    /// The verdict in words with the machine code behind it: where no rung proved a cause,
    /// the largest measured machine-code difference is what the verdict names.
    pub fn verdict_text(&self) -> String {
        let words = self.verdict.describe();
        let replayed = matches!(&self.verdict, Verdict::Explained(c)
            if c.iter().all(|(c, _)| matches!(c, Cause::DriverCalls | Cause::HarnessPath)));
        if let (Some(replay), true) = (&self.replay, replayed) {
            return format!("{words}; {replay}");
        }
        // An unverified explained verdict names a proven cause beside an unproven one (a runtime
        // part no rung closed, an unconfirmed register cap): "not proven by a rung" is untrue.
        let unproven = match self.verdict {
            Verdict::Explained(_) => "not every cause is proven",
            Verdict::Unexplained { .. } => "not proven by a rung",
            _ => return words,
        };
        match (&self.machine_code, self.verified) {
            (Some(code), true) => format!("{words}; in the machine code: {code}"),
            (Some(code), false) => {
                format!("{words}; {unproven}; the largest machine-code difference: {code}")
            }
            _ => words,
        }
    }
}

/// One SM of a Hopper GPU (H100, H200) and the granule of a warp's registers.
const SM_REGISTERS: u32 = 65536;
const SM_WORK_ITEMS: u32 = 2048;
const WARP: u32 = 32;
const REGISTER_GRANULE: u32 = 256;

impl SideShape {
    pub(super) fn of(row: &MeasurementRow) -> SideShape {
        SideShape {
            api: row.api,
            local: row.local_size.max(1) * row.local_y.max(1),
            limit: row.kernel_work_group_limit,
            registers: row.registers,
            spill_bytes: row.spill_bytes,
            shared_bytes: row.shared_bytes,
        }
    }

    /// Work-groups one SM holds by its registers and work-items alone (shared memory and the
    /// block limit aside).
    pub fn groups_per_sm_by_registers(&self) -> Option<u32> {
        let regs = self.registers?;
        let warps = self.local.div_ceil(WARP);
        let per_warp = (regs * WARP).div_ceil(REGISTER_GRANULE) * REGISTER_GRANULE;
        let by_registers = SM_REGISTERS / (per_warp * warps).max(1);
        Some(by_registers.min(SM_WORK_ITEMS / self.local.max(1)))
    }
}
