//! The words every layer shares, on the ground floor: which API, clock, wait and family, the
//! metric and the one unit of time, a row's status and side. The backends speak them and the
//! rows record them; nothing here depends on either.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A duration in seconds. One unit for every timer of every backend.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
pub struct Seconds(pub f64);

crate::names::named_enum! {
    /// Which programming model a backend drives. Written as `OpenCL` / `CUDA` in every record.
    pub enum Api {
        #[strum(serialize = "OpenCL")]
        OpenCl,
        #[strum(serialize = "CUDA")]
        Cuda,
    }
}

impl Api {
    pub fn label(self) -> &'static str {
        self.into()
    }
}

crate::names::named_enum! {
    /// Which clock produced a measurement. Study files may use the short aliases.
    pub enum TimerKind {
        /// OpenCL profiling events / CUDA events: kernel execution only.
        #[strum(to_string = "device-event", serialize = "event", serialize = "device")]
        DeviceEvent,
        /// Host monotonic clock around enqueue + synchronisation.
        #[strum(to_string = "wall-clock", serialize = "wall", serialize = "host")]
        WallClock,
    }
}

impl TimerKind {
    pub fn label(self) -> &'static str {
        self.into()
    }

    pub fn parse(text: &str) -> Option<Self> {
        text.parse().ok()
    }
}

crate::names::named_enum! {
    /// Which compiler's program a side runs. `other` loads the program (PTX on NVIDIA) the
    /// other side's compiler made for the same configuration: the other front end's code
    /// through this API's runtime, which tells a compiler cause from a runtime cause.
    #[strum(serialize_all = "lowercase")]
    pub enum ProgramSource {
        Own,
        Other,
    }
}

crate::names::named_enum! {
    /// The width of index arithmetic (OpenCL's work-item functions return a 64-bit `size_t`,
    /// CUDA's index variables are 32-bit): `u32` and `u64` hold one width on both sides (the
    /// preludes' `CLVSCU_INDEX`); `native` leaves each API its own, unfair by construction.
    #[strum(serialize_all = "lowercase")]
    pub enum IndexWidth {
        U32,
        U64,
        Native,
    }
}

impl IndexWidth {
    /// The value of the preludes' `CLVSCU_INDEX`.
    pub fn define(self) -> &'static str {
        match self {
            IndexWidth::U32 => "32",
            IndexWidth::U64 => "64",
            IndexWidth::Native => "0",
        }
    }

    /// The bits of index arithmetic this setting gives on `api`.
    pub fn bits(self, api: Api) -> u32 {
        match (self, api) {
            (IndexWidth::U32, _) => 32,
            (IndexWidth::U64, _) => 64,
            (IndexWidth::Native, Api::OpenCl) => 64,
            (IndexWidth::Native, Api::Cuda) => 32,
        }
    }
}

crate::names::named_enum! {
    /// How the host waits for completion; a study key (`wait`), one value per side.
    #[derive(Default)]
    #[strum(serialize_all = "lowercase")]
    pub enum WaitMode {
        /// Wait for the whole queue (`clFinish` / `cuStreamSynchronize`): no event needed. The
        /// default: the cheapest correct wait on both APIs, and the one a plain program uses.
        #[default]
        Finish,
        /// Busy-poll the command's status: the host clock measures the launch, not a wake-up.
        Spin,
        /// Poll, giving the core away between polls (`sched_yield`).
        Yield,
        /// Sleep in the driver until it signals completion: adds the thread's wake-up.
        Blocking,
    }
}

impl WaitMode {
    /// Every mode, in the order reports list them.
    pub const ALL: &'static [WaitMode] = <WaitMode as strum::VariantArray>::VARIANTS;

    /// Whether this mode waits on an event of the command (all but `finish`, which waits for
    /// the queue and so needs no event from the driver).
    pub fn needs_event(self) -> bool {
        self != WaitMode::Finish
    }

    pub fn label(self) -> &'static str {
        self.into()
    }

    /// The calls that implement this mode on `api`, as recorded beside the results.
    pub fn how(self, api: Api) -> &'static str {
        match (self, api) {
            (WaitMode::Finish, Api::OpenCl) => "clFinish",
            (WaitMode::Finish, Api::Cuda) => "cuStreamSynchronize",
            (WaitMode::Spin, Api::OpenCl) => "clFlush + poll CL_EVENT_COMMAND_EXECUTION_STATUS",
            (WaitMode::Yield, Api::OpenCl) => {
                "clFlush + poll CL_EVENT_COMMAND_EXECUTION_STATUS with sched_yield"
            }
            (WaitMode::Blocking, Api::OpenCl) => "clWaitForEvents",
            (WaitMode::Spin, Api::Cuda) => "poll cuEventQuery",
            (WaitMode::Yield, Api::Cuda) => "poll cuEventQuery with sched_yield",
            (WaitMode::Blocking, Api::Cuda) => {
                "cuEventSynchronize on a CU_EVENT_BLOCKING_SYNC event"
            }
        }
    }
}

crate::names::named_enum! {
    /// The performance metric a family is judged by (higher is better), written as its unit.
    pub enum Metric {
        /// Bytes moved per second, GB/s (1e9).
        #[strum(serialize = "GB/s")]
        Bandwidth,
        /// GFLOP/s (1e9).
        #[strum(serialize = "GFLOP/s")]
        Flops,
        /// Launches per second (1 / time), for the launch-overhead kernel.
        #[strum(serialize = "1/s")]
        Rate,
        /// G evaluations per second (1e9): chain steps of the math family (see `math`).
        #[strum(serialize = "Geval/s")]
        Evaluations,
        /// G 4-byte reads per second (1e9): the broadcast micro-kernel (see `constmem`).
        #[strum(serialize = "Gread/s")]
        Reads,
        /// G traversed edges per second (1e9), for BFS: the `flops` column counts edges.
        #[strum(serialize = "GTEPS")]
        Teps,
    }
}

impl Metric {
    pub fn unit(self) -> &'static str {
        self.into()
    }

    /// The work one run does in this metric's numerator: GB, GFLOP, or one launch.
    pub fn work(self, bytes: u64, flops: u64) -> f64 {
        match self {
            Metric::Bandwidth => bytes as f64 / 1e9,
            Metric::Flops => flops as f64 / 1e9,
            Metric::Rate => 1.0,
            // The math family counts 2 FLOP (a multiply-add) per evaluation.
            Metric::Evaluations => flops as f64 / 2e9,
            Metric::Reads => bytes as f64 / 4e9,
            Metric::Teps => flops as f64 / 1e9,
        }
    }
}

/// A family by name (`matvec`, `reduce`, ...). Parsing, serialisation and ordering go through
/// the registry (`families::all`), so reports keep its family order.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct FamilyId(&'static str);

impl FamilyId {
    /// A family named `name`: lowercase, as the registry and CSV spell it.
    pub const fn new(name: &'static str) -> Self {
        FamilyId(name)
    }

    pub fn name(self) -> &'static str {
        self.0
    }
}

/// The families built in before families became modules, by their former enum names.
#[allow(non_upper_case_globals)]
impl FamilyId {
    pub const Matvec: FamilyId = FamilyId("matvec");
    pub const Reduce: FamilyId = FamilyId("reduce");
    pub const Bandwidth: FamilyId = FamilyId("bandwidth");
    pub const Flops: FamilyId = FamilyId("flops");
    pub const Launch: FamilyId = FamilyId("launch");
    pub const Fft: FamilyId = FamilyId("fft");
    pub const Sgemm: FamilyId = FamilyId("sgemm");
    pub const Math: FamilyId = FamilyId("math");
    pub const Stencil: FamilyId = FamilyId("stencil");
    pub const Sobel: FamilyId = FamilyId("sobel");
    pub const Broadcast: FamilyId = FamilyId("broadcast");
    pub const Spmv: FamilyId = FamilyId("spmv");
    pub const Md: FamilyId = FamilyId("md");
    pub const Bfs: FamilyId = FamilyId("bfs");
    pub const Fill: FamilyId = FamilyId("fill");
    pub const Transfer: FamilyId = FamilyId("transfer");
}

impl fmt::Display for FamilyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// Debug prints the name as the enum's derived Debug printed its variant, so messages and
/// snapshots that show a family read as before.
impl fmt::Debug for FamilyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut chars = self.0.chars();
        if let Some(first) = chars.next() {
            write!(f, "{}", first.to_ascii_uppercase())?;
        }
        chars
            .filter(|c| *c != '-')
            .try_for_each(|c| write!(f, "{c}"))
    }
}

impl From<FamilyId> for &'static str {
    fn from(id: FamilyId) -> Self {
        id.0
    }
}

crate::names::named_enum! {
    /// Outcome of one (configuration, API) measurement.
    #[strum(serialize_all = "kebab-case")]
    pub enum Status {
        /// Verified against the reference and timed.
        Ok,
        /// Ran, but the output did not match the reference: never timed into a PR.
        VerifyFailed,
        /// The kernel did not compile; the build log is in `error`.
        BuildFailed,
        /// Refused before launch (limits, sizes) or the launch itself failed.
        LaunchFailed,
    }
}

crate::names::named_enum! {
    /// Which side of a comparison a sample belongs to: `A` (the OpenCL side of an
    /// OpenCL-vs-CUDA study) or `B`. Both sides can be the same API and device.
    pub enum Side {
        A,
        B,
    }
}

crate::names::named_enum! {
    /// How a kernel reads the gathered operand (SpMV's `x`, MD's positions).
    #[strum(serialize_all = "lowercase")]
    pub enum ReadPath {
        /// A plain `const` pointer: ordinary global loads.
        Global,
        /// `const restrict` pointers on both sides, and CUDA's `__ldg` on the gather: the
        /// read-only (non-coherent) data path, where each compiler chooses to take it.
        Ro,
        /// An OpenCL `image1d_buffer_t` read with `read_imagef` / a CUDA texture object read
        /// with `tex1Dfetch`: the texture path.
        Tex,
    }
}

impl ReadPath {
    /// The path a variant's name ends in (`scalar-tex`), `Global` when it names none.
    pub fn of(variant: &str) -> ReadPath {
        match variant.rsplit_once('-').map(|(_, p)| p) {
            Some("ro") => ReadPath::Ro,
            Some("tex") => ReadPath::Tex,
            _ => ReadPath::Global,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    #[error("cannot read size '{text}': use ROWSxCOLS (e.g. 60989x1100), N or 2^K")]
    Bad { text: String },
    #[error(
        "size '{text}': ROWS x COLS is more than 2^64 - 1 elements, the most one count can hold"
    )]
    Overflow { text: String },
}

/// The problem size. Matvec: `rows` x `cols`; every other family: `rows` elements, `cols` 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Size {
    pub rows: u64,
    pub cols: u64,
}

impl Size {
    pub const fn vector(n: u64) -> Self {
        Size { rows: n, cols: 0 }
    }

    pub const fn matrix(rows: u64, cols: u64) -> Self {
        Size { rows, cols }
    }

    /// Elements the problem touches: rows*cols for a matrix, n for a vector.
    pub fn elements(&self) -> u64 {
        if self.cols == 0 {
            self.rows
        } else {
            self.rows.saturating_mul(self.cols)
        }
    }

    /// Parse `60989x1100` (rows x cols), `268435456`, or `2^28`.
    pub fn parse(text: &str) -> Result<Self, SizeError> {
        let bad = || SizeError::Bad {
            text: text.to_string(),
        };
        let number = |t: &str| -> Result<u64, SizeError> {
            let t = t.trim();
            if let Some((b, e)) = t.split_once('^') {
                let b: u64 = b.trim().parse().map_err(|_| bad())?;
                let e: u32 = e.trim().parse().map_err(|_| bad())?;
                b.checked_pow(e).ok_or_else(bad)
            } else {
                t.replace('_', "").parse().map_err(|_| bad())
            }
        };
        match text.split_once(['x', 'X', '*']) {
            Some((r, c)) => {
                let (rows, cols) = (number(r)?, number(c)?);
                // Every count of the problem is a u64: a size whose elements overflow it
                // would be reported as 2^64 - 1 elements, a number nothing ran.
                rows.checked_mul(cols).ok_or_else(|| SizeError::Overflow {
                    text: text.to_string(),
                })?;
                Ok(Size::matrix(rows, cols))
            }
            None => Ok(Size::vector(number(text)?)),
        }
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.cols == 0 {
            write!(f, "{}", self.rows)
        } else {
            write!(f, "{}x{}", self.rows, self.cols)
        }
    }
}

crate::names::named_enum! {
    /// The eight development steps of Fang, Varbanescu & Sips (2011, section IV-C), which a
    /// fair comparison holds equal and every PR row names where they differ.
    #[strum(serialize_all = "kebab-case")]
    pub enum Step {
        Problem,
        Algorithm,
        Implementation,
        NativeOptimizations,
        FirstStageCompilation,
        SecondStageCompilation,
        Configuration,
        Running,
    }
}

impl Step {
    pub const ALL: &'static [Step] = <Step as strum::VariantArray>::VARIANTS;
}

/// Where the shapes chart and matvec's rule derivation split "inside" from "beyond the L2":
/// the H100's L2 as its driver reports it (50 MiB; the H200's is 60 MiB, both in the
/// `device__attribute_l2_cache_size` of their committed `ncu-raw.csv`). The shape sweep's size
/// classes (16 MB, then 64 MB and up) fall on the same side of either.
pub const L2_BYTES: u64 = 50 << 20;

#[cfg(test)]
mod tests {
    use super::Step;

    #[test]
    fn a_step_is_written_and_read_in_kebab_case() {
        let json = serde_json::to_string(&Step::FirstStageCompilation).unwrap();
        assert_eq!(json, "\"first-stage-compilation\"");
        assert_eq!(
            serde_json::from_str::<Step>(&json).unwrap(),
            Step::FirstStageCompilation
        );
        assert_eq!(
            Step::NativeOptimizations.to_string(),
            "native-optimizations"
        );
        assert!(serde_json::from_str::<Step>("\"tuning\"").is_err());
    }
}
