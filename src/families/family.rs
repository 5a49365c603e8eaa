//! The `Family` trait: everything the harness knows about one kernel family, in one place.

use super::error::WorkloadError;
use super::footprint::Footprint;
use super::matrix::MatrixSource;
use super::plan::{Build, Built, ExecError, Inputs, Ran, SideConfig};
use super::reference::Verification;
use super::tune_space::{Config, Constraint, SpaceDef, SpaceKind};
use super::variant::{GroupRule, Variant};
use crate::backend::fake::KernelEmulation;
use crate::backend::{DeviceInfo, LaunchShape, Runtime};
use crate::kernels::KernelSources;
use crate::rows::{FamilyId, Metric, Size};

/// The runtime's own calls a run of a variant makes, as a plain program would replay them
/// (`explain`'s replay): launches of its kernel, `batch` to one wait, or one host copy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PlainCalls {
    Launches {
        batch: u32,
    },
    Copy {
        direction: crate::backend::Direction,
        memory: crate::backend::HostMemory,
        len: usize,
    },
}

/// What a rule variant runs ([`Family::rule_plan`]); `define` records where the choice came
/// from (no kernel reads it).
#[derive(Debug, Clone, Copy)]
pub struct RulePlan {
    pub variant: &'static Variant,
    pub local: u32,
    pub groups: u32,
    pub define: (&'static str, &'static str),
}

/// What a family is, as data: [`FamilySpec::new`] with the fields the family changes.
#[derive(Clone, Copy)]
pub struct FamilySpec {
    pub id: FamilyId,
    pub kernel_file: &'static str,
    pub metric: Metric,
    /// The size a study entry gets when it names none.
    pub default_size: &'static str,
    /// The work-group size a study entry gets when it names none; `None`: a kernel written for
    /// one size (the FFT's 64) gets that one, every other 256.
    pub default_local: Option<u32>,
    /// Whether a study entry's `matrix` key picks this family's input (SpMV's matrix).
    pub takes_matrix: bool,
    /// The size a quick pass runs this family at; `None`: the study's own (already tiny).
    pub quick_size: Option<QuickSize>,
    /// The vendor library operations that do this family's work (`baselines.csv`).
    pub vendor_ops: &'static [VendorOp],
    /// Whether this family's kernels measure the device's peak in their metric (the paper's
    /// Eq. 2 for bandwidth, Eq. 3 for arithmetic), so the peaks table shows their share of it.
    pub measures_peak: bool,
    /// The read and copy kernels that measure memory itself, where this family has them.
    pub memory_references: Option<MemoryReferences>,
    /// The charts (by name) drawn from this family's rows alone (BFS's levels, fill's local
    /// sizes), which find their families through the registry, naming none.
    pub charts: &'static [&'static str],
    /// The levels of a search whose row predates the `levels` column, where the size tells them.
    pub levels_of_size: Option<crate::rows::LevelsOfSize>,
    pub variants: &'static [Variant],
    /// Edge-case sizes (one element, sizes no work-group divides) every variant must verify at
    /// on a real runtime (`tests/opencl_pocl.rs`); empty where the family tests its own way.
    pub test_sizes: &'static [Size],
    /// The fake backend's host emulation of each kernel, by name, the first that matches; a
    /// name ending in `*` stands for every kernel it starts (see [`Family::emulation`]).
    pub emulations: &'static [(&'static str, KernelEmulation)],
    /// Whether each variant has inputs of its own (its name is its [`Family::input_key`]).
    pub inputs_per_variant: bool,
    /// Whether every run is bound by the runtime, whatever its size ([`Family::runtime_bound`]).
    pub always_runtime_bound: bool,
    /// How `clvscu tune` searches this family, where it does ([`Family::tuning`]).
    pub tuning: Option<&'static dyn Tuning>,
}

impl FamilySpec {
    /// A family of one-dimensional problems of 2^24 elements with nothing else to say.
    pub const fn new(id: FamilyId, kernel_file: &'static str, metric: Metric) -> FamilySpec {
        FamilySpec {
            id,
            kernel_file,
            metric,
            default_size: "2^24",
            default_local: None,
            takes_matrix: false,
            quick_size: None,
            vendor_ops: &[],
            measures_peak: false,
            memory_references: None,
            charts: &[],
            levels_of_size: None,
            variants: &[],
            test_sizes: &[],
            emulations: &[],
            inputs_per_variant: false,
            always_runtime_bound: false,
            tuning: None,
        }
    }
}

/// Test sizes of one length each.
pub const fn vectors<const N: usize>(lengths: [u64; N]) -> [Size; N] {
    let mut out = [Size::vector(0); N];
    let mut i = 0;
    while i < N {
        out[i] = Size::vector(lengths[i]);
        i += 1;
    }
    out
}

/// Test sizes of `ROWSxCOLS` each.
pub const fn matrices<const N: usize>(shapes: [(u64, u64); N]) -> [Size; N] {
    let mut out = [Size::vector(0); N];
    let mut i = 0;
    while i < N {
        out[i] = Size::matrix(shapes[i].0, shapes[i].1);
        i += 1;
    }
    out
}

/// Choices of a study entry that pick a family's input data beyond size and seed.
#[derive(Debug, Clone, Copy)]
pub struct InputChoice<'a> {
    /// SpMV's matrix (the study key `matrix`); other families ignore it.
    pub matrix: &'a MatrixSource,
}

/// A small size for a quick pass (`clvscu suite --quick`): one length, and the `ROWSxCOLS`
/// form for studies that give this family a matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuickSize {
    pub length: &'static str,
    pub matrix: &'static str,
}

impl QuickSize {
    /// One size, whichever form the study gave.
    pub const fn same(size: &'static str) -> QuickSize {
        QuickSize {
            length: size,
            matrix: size,
        }
    }
}

pub use crate::rows::{MemoryReferences, VendorOp};

/// One kernel family: its variants and sizes, how it is launched, its buffers and data, its
/// f64 reference, and the work one run does. The runner and session call only this.
pub trait Family: Sync {
    fn spec(&self) -> &FamilySpec;

    /// Bytes moved and flops of one run, given `global` work-items launched; computed here,
    /// never per backend. Saturating: a study may ask for up to 2^64 work-items, and a count
    /// pinned at `u64::MAX` is visibly wrong where a wrapped one would look plausible.
    fn work(&self, variant: &str, size: Size, global: u64) -> (u64, u64);

    /// Host and device bytes of one problem, checked before anything is allocated.
    fn footprint(&self, size: Size) -> Footprint;

    /// Host inputs and the f64 reference (default: `N` random floats and their sum).
    fn inputs(&self, _: &'static Variant, size: Size, seed: u64, _: InputChoice<'_>) -> Inputs {
        Inputs::summed(size, seed)
    }

    /// Allocates and stages buffers and returns the steps of one run.
    fn build(&self, cx: &mut Build<'_>) -> Result<Built, ExecError>;

    /// Compares the result buffer with the reference (default: each element to its tolerance).
    fn check(&self, _: &Ran, inputs: &Inputs, got: &[f32]) -> Verification {
        inputs.compare(got)
    }

    /// Refuses a size this family cannot run (default: `N` elements that 32-bit indices reach).
    fn check_size(&self, variant: &Variant, size: Size) -> Result<(), WorkloadError> {
        vector_size(variant, size)
    }

    /// Refuses a launch this variant cannot run, beyond the work-group size rules.
    fn check_launch(
        &self,
        _variant: &Variant,
        _size: Size,
        _side: &SideConfig,
    ) -> Result<(), WorkloadError> {
        Ok(())
    }

    /// Elements a problem touches (its size's own count unless the family says otherwise).
    fn elements(&self, size: Size) -> u64 {
        size.elements()
    }

    /// Whether a run at `size` is bound by the runtime (launch cost could sit in its rows).
    fn runtime_bound(&self, _size: Size) -> bool {
        self.spec().always_runtime_bound
    }

    /// The runtime calls a run of `variant` at `size` is made of, where its work is those alone.
    fn plain_calls(&self, _variant: &Variant, _size: Size) -> Option<PlainCalls> {
        None
    }

    /// Work-groups in x for the rules the family computes itself (`Tiles`, `Columns`,
    /// `Cover2D`). Default: a 2-D cover, one work-item per column of a ROWSxCOLS matrix.
    fn groups(&self, _variant: &Variant, size: Size, local: u32) -> u64 {
        size.cols.max(1).div_ceil(u64::from(local.max(1)))
    }

    /// Work-groups in y of a `Cover2D` launch. Default: one work-item per row.
    fn groups_y(&self, _variant: &Variant, size: Size, local_y: u32) -> u64 {
        size.rows.max(1).div_ceil(u64::from(local_y.max(1)))
    }

    /// Whether `variant` may leave the work-group size to the runtime (local size 0).
    fn leaves_local_to_runtime(&self, _variant: &Variant) -> bool {
        false
    }

    /// How `clvscu tune` searches this family, where it does (see [`Tuning`]).
    fn tuning(&self) -> Option<&dyn Tuning> {
        self.spec().tuning
    }

    /// The launch a rule variant (`matvec/auto`) picks; `None` for one that is its own kernel.
    fn rule_plan(&self, _variant: &Variant, _size: Size, _device: &DeviceInfo) -> Option<RulePlan> {
        None
    }

    /// The work-group size `backend`'s runtime picks for `variant`, compiled as `side` compiles
    /// it, where the variant leaves it to the runtime (`None`: the runtime does not say).
    fn runtime_local(
        &self,
        _backend: &mut dyn Runtime,
        _sources: &KernelSources,
        _variant: &Variant,
        _side: &SideConfig,
    ) -> Result<Option<u32>, ExecError> {
        Ok(None)
    }

    /// What besides family, size and seed tells two variants' inputs apart.
    fn input_key(&self, variant: &'static Variant) -> &'static str {
        if self.spec().inputs_per_variant {
            variant.name
        } else {
            ""
        }
    }

    /// The levels one run takes, for level-by-level families (BFS's depth).
    fn levels(&self, _inputs: &Inputs) -> Option<u64> {
        None
    }

    /// The algorithm `variant` implements, for the fairness table: variants that differ only
    /// in where an operand is read from share one.
    fn algorithm(&self, variant: &Variant) -> &'static str {
        variant.name
    }

    /// For a variant that runs in several launches, the variants that time its first and its
    /// last launch alone (explain's launch-alone rungs); `None` for one launch.
    fn launch_parts(&self, _variant: &Variant) -> Option<(&'static str, &'static str)> {
        None
    }

    /// The problem one side solves, for the analysis's problem step: family, size, element
    /// type and seed, and whatever else picks the input (SpMV's matrix).
    fn problem_text(&self, size: Size, seed: u64, _choice: InputChoice<'_>) -> String {
        format!("{} {size} f32 seed {seed}", self.spec().id.name())
    }

    /// The fake backend's host emulation of `kernel` (helper kernels included); `None` for
    /// another family's or one without (a study's own pair), which the fake refuses by name.
    fn emulation(&self, kernel: &str) -> Option<KernelEmulation> {
        let matches = |k: &str| match k.strip_suffix('*') {
            Some(prefix) => kernel.starts_with(prefix),
            None => k == kernel,
        };
        let mut emulations = self.spec().emulations.iter();
        emulations.find_map(|(k, e)| matches(k).then_some(*e))
    }
}

/// What `clvscu tune` asks of a family beyond running it.
pub trait Tuning: Sync {
    /// The work-group sizes `clvscu tune` tries for `variant` where no space of its own is
    /// written in `src/tune` (a study's kernel declares them); empty: not tunable that way.
    fn locals(&self, _variant: &Variant) -> &'static [u32] {
        &[]
    }

    /// The spaces `clvscu tune` searches for this family's variants, written as data beside
    /// the family (a variant with `locals` also gets one of its work-group sizes).
    fn spaces(&self) -> &'static [(SpaceKind, SpaceDef)];

    /// Fills in the launch (work-group size and count) a configuration's tiling implies.
    fn derive_launch(&self, _size: Size, _config: &mut Config) {}

    /// Whether `config` breaks `rule` where the rule is this family's own (a tile that does
    /// not divide the problem, or overflows local memory); the generic rules are the tuner's.
    fn breaks_rule(
        &self,
        _rule: Constraint,
        _config: &Config,
        _size: Size,
        _device: &DeviceInfo,
    ) -> bool {
        false
    }
}

/// The launch rules every family shares, answered with this family's own group counts.
impl dyn Family + '_ {
    pub fn id(&self) -> FamilyId {
        self.spec().id
    }

    pub fn variants(&self) -> &'static [Variant] {
        self.spec().variants
    }

    /// The work-group size a study entry gets when it names none ([`FamilySpec::default_local`]).
    pub fn default_local(&self, variant: &Variant) -> u32 {
        match self.spec().default_local {
            Some(local) => local,
            None if variant.min_local == variant.max_local => variant.min_local,
            None => 256,
        }
    }

    /// Refuse a launch shape the variant cannot run, naming the variant and why.
    pub fn check_local(&self, variant: &Variant, local: u32) -> Result<(), WorkloadError> {
        let bad = |reason: String| bad_launch(variant, reason);
        if local == 0 && self.leaves_local_to_runtime(variant) {
            return Ok(()); // OpenCL's NULL: the runtime's choice, unknown here.
        }
        if local == 0 {
            return Err(bad("work-group size 0".into()));
        }
        if variant.pow2_local && !local.is_power_of_two() {
            return Err(bad(format!(
                "work-group size {local} is not a power of two; its tree reduction halves the \
                 stride at every step and would drop elements"
            )));
        }
        if local < variant.min_local || local > variant.max_local {
            return Err(bad(format!(
                "work-group size {local} is outside {}..={} that this kernel supports",
                variant.min_local,
                if variant.max_local == u32::MAX {
                    "device limit".to_string()
                } else {
                    variant.max_local.to_string()
                }
            )));
        }
        Ok(())
    }

    pub fn default_groups(
        &self,
        variant: &Variant,
        size: Size,
        local: u32,
        compute_units: u32,
    ) -> u32 {
        let primary = size.rows.max(1);
        let groups = match variant.default_groups {
            GroupRule::Cover { per_item } => {
                primary.div_ceil(u64::from(local.max(1)) * u64::from(per_item.max(1)))
            }
            GroupRule::Fixed(g) => u64::from(g),
            GroupRule::PerComputeUnit(k) => u64::from(compute_units.max(1)) * u64::from(k),
            GroupRule::Tiles | GroupRule::Columns | GroupRule::Cover2D | GroupRule::Grid => {
                self.groups(variant, size, local)
            }
        };
        groups.clamp(1, u64::from(u32::MAX / local.max(1))) as u32
    }

    /// The default number of work-groups in y: the rows of a 2-D kernel's image, 1 otherwise.
    pub fn default_groups_y(&self, variant: &Variant, size: Size, local_y: u32) -> u32 {
        match variant.default_groups {
            GroupRule::Cover2D => {
                let groups = self.groups_y(variant, size, local_y);
                groups.clamp(1, u64::from(u32::MAX / local_y.max(1))) as u32
            }
            _ => 1,
        }
    }
}

/// The common size rule of one-dimensional families: `N`, not a matrix, and within 32-bit
/// indices (kernels index with 32-bit unsigned integers, as the whitepaper does).
pub fn vector_size(variant: &Variant, size: Size) -> Result<(), WorkloadError> {
    if size.cols != 0 {
        return Err(bad_size(
            variant,
            format!("{size} is a matrix; this family takes one length N"),
        ));
    }
    nonzero_in_32_bits(variant, size)
}

/// The size rule of the 2-D families: `ROWSxCOLS`, not one length, within 32-bit indices.
/// `takes` names what takes the matrix, as in "a transpose takes ROWSxCOLS".
pub fn matrix_size(variant: &Variant, size: Size, takes: &str) -> Result<(), WorkloadError> {
    if size.cols == 0 {
        return Err(bad_size(
            variant,
            format!("{size} is one length; {takes} ROWSxCOLS"),
        ));
    }
    nonzero_in_32_bits(variant, size)
}

/// Refuses size 0 and sizes 32-bit indices cannot reach.
pub fn nonzero_in_32_bits(variant: &Variant, size: Size) -> Result<(), WorkloadError> {
    if size.rows == 0 {
        return Err(bad_size(variant, "size 0: there is nothing to compute"));
    }
    if size.elements() >= u64::from(u32::MAX) || size.rows >= u64::from(u32::MAX) {
        return Err(bad_size(
            variant,
            format!(
                "{size} has {} elements; kernels index with 32-bit integers (limit {})",
                size.elements(),
                u32::MAX - 1
            ),
        ));
    }
    Ok(())
}

/// The refusal of a problem, naming `family/variant`.
pub fn bad_size(variant: &Variant, reason: impl ToString) -> WorkloadError {
    WorkloadError::BadProblem {
        variant: variant.full_name(),
        reason: reason.to_string(),
    }
}

/// Refuses a launch whose work-items, `per_item` each, reach fewer than `needed` (the rest
/// would be left undone); `refusal` words what it reaches, after "G work-groups of L".
pub fn check_cover(
    variant: &Variant,
    shape: LaunchShape,
    per_item: u32,
    needed: u64,
    refusal: impl FnOnce(u64) -> String,
) -> Result<(), WorkloadError> {
    let covered = u64::from(shape.groups) * u64::from(shape.local) * u64::from(per_item);
    if covered < needed {
        return Err(bad_launch(
            variant,
            format!(
                "{} work-groups of {} {}",
                shape.groups,
                shape.local,
                refusal(covered)
            ),
        ));
    }
    Ok(())
}

/// The refusal of a launch shape, naming `family/variant`.
pub fn bad_launch(variant: &Variant, reason: impl ToString) -> WorkloadError {
    WorkloadError::BadLaunch {
        variant: variant.full_name(),
        reason: reason.to_string(),
    }
}
