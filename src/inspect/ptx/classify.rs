//! Instruction classes (Fang et al. 2011, Table V), the opcode table that assigns them,
//! and per-function counts.

use std::collections::BTreeMap;

crate::names::named_enum! {
    /// The class of one PTX instruction, after Fang et al. 2011, Table V, whose "data movement"
    /// is split into its rows (`mov`, `cvt`, `ld.*`, `st.*`) because they carried the paper's
    /// argument (`InstrClass::group` gives the coarse class). `warp` and `atomic`, which the
    /// paper did not need, are kept apart; anything unknown is `other`.
    #[strum(serialize_all = "kebab-case")]
    pub enum InstrClass {
        Arithmetic,
        LogicShift,
        Mov,
        Cvt,
        #[strum(serialize = "ld.param")]
        LdParam,
        #[strum(serialize = "ld.global")]
        LdGlobal,
        #[strum(serialize = "ld.shared")]
        LdShared,
        #[strum(serialize = "ld.local")]
        LdLocal,
        #[strum(serialize = "ld.const")]
        LdConst,
        /// Loads and stores with no state space (generic addressing).
        #[strum(serialize = "ld.generic")]
        LdGeneric,
        /// Call sequences, `.func` return values.
        #[strum(serialize = "st.param")]
        StParam,
        #[strum(serialize = "st.global")]
        StGlobal,
        #[strum(serialize = "st.shared")]
        StShared,
        #[strum(serialize = "st.local")]
        StLocal,
        #[strum(serialize = "st.generic")]
        StGeneric,
        FlowControl,
        Synchronization,
        Warp,
        Atomic,
        Other,
    }
}

crate::names::named_enum! {
    /// The paper's coarse instruction classes, used to group [`InstrClass`] rows.
    #[strum(serialize_all = "kebab-case")]
    pub(super) enum ClassGroup {
        Arithmetic,
        LogicShift,
        DataMovement,
        FlowControl,
        Synchronization,
        /// Not in the 2011 paper, which predates warp collectives; nor are atomics.
        Warp,
        Atomic,
        Other,
    }
}

impl ClassGroup {
    pub(super) fn name(self) -> &'static str {
        self.into()
    }
}

impl InstrClass {
    /// Every class, in the order used for reports (the paper's order, extras after).
    pub(super) const ALL: &'static [InstrClass] = <Self as strum::VariantArray>::VARIANTS;

    /// The stable string name (`"ld.global"`), also the serialized form.
    pub(super) fn name(self) -> &'static str {
        self.into()
    }

    pub(super) fn group(self) -> ClassGroup {
        match self {
            InstrClass::Arithmetic => ClassGroup::Arithmetic,
            InstrClass::LogicShift => ClassGroup::LogicShift,
            InstrClass::FlowControl => ClassGroup::FlowControl,
            InstrClass::Synchronization => ClassGroup::Synchronization,
            InstrClass::Warp => ClassGroup::Warp,
            InstrClass::Atomic => ClassGroup::Atomic,
            InstrClass::Other => ClassGroup::Other,
            // mov, cvt, loads and stores
            _ => ClassGroup::DataMovement,
        }
    }
}

/// How an opcode in [`OPCODE_CLASSES`] maps to a class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum OpcodeRule {
    /// Always this class.
    Fixed(InstrClass),
    /// A load or store (`"ld"`, `"st"`): `ld.<space>` by the state space among the modifiers,
    /// `ld.generic` if none. `st.const` does not exist in PTX and is classified `other`.
    Memory(&'static str),
}

/// The opcode (`fma` of `fma.rn.f32`) -> class table; an opcode not in it is
/// [`InstrClass::Other`]. Choices worth reviewing:
/// * `setp`, `set`, `selp`, `slct` and `testp` are flow control, as in the paper (they
///   compute predicates or select on them); `trap` and `brkpt` end or divert control.
/// * `cvta` (generic <-> state-space address conversion) counts as `cvt`, `ldu` (load uniform,
///   global only) as `ld`, the tensor-core `mma`/`wgmma` as arithmetic.
/// * Left as `other` on purpose: texture/surface (`tex`, `tld4`, `txq`, `suld`, `sust`,
///   `sured`, `suq`), `cp` (`cp.async*`, bulk copies), `ldmatrix`/`stmatrix`/`movmatrix`,
///   `wmma` (mixes loads, stores and math), `prefetch`, `isspacep`, `nanosleep`, and
///   any opcode this table does not know.
pub(super) const OPCODE_CLASSES: &[(OpcodeRule, &[&str])] = &[
    (
        OpcodeRule::Fixed(InstrClass::Arithmetic),
        &[
            "add", "sub", "mul", "mad", "mul24", "mad24", "sad", "div", "rem", "abs", "neg", "min",
            "max", "fma", "rcp", "sqrt", "rsqrt", "sin", "cos", "lg2", "ex2", "tanh", "copysign",
            "addc", "subc", "madc", "dp4a", "dp2a", "mma", "wgmma",
        ],
    ),
    (
        OpcodeRule::Fixed(InstrClass::LogicShift),
        &[
            "and", "or", "xor", "not", "cnot", "lop3", "shl", "shr", "shf", "bfe", "bfi", "prmt",
            "popc", "clz", "brev", "bfind", "fns", "bmsk", "szext",
        ],
    ),
    (OpcodeRule::Fixed(InstrClass::Mov), &["mov"]),
    (OpcodeRule::Fixed(InstrClass::Cvt), &["cvt", "cvta"]),
    (OpcodeRule::Memory("ld"), &["ld", "ldu"]),
    (OpcodeRule::Memory("st"), &["st"]),
    (
        OpcodeRule::Fixed(InstrClass::FlowControl),
        &[
            "setp", "set", "selp", "slct", "testp", "bra", "brx", "call", "ret", "exit", "trap",
            "brkpt",
        ],
    ),
    (
        OpcodeRule::Fixed(InstrClass::Synchronization),
        &["bar", "barrier", "membar", "fence", "mbarrier"],
    ),
    (
        OpcodeRule::Fixed(InstrClass::Warp),
        &["shfl", "vote", "match", "redux", "activemask", "elect"],
    ),
    (OpcodeRule::Fixed(InstrClass::Atomic), &["atom", "red"]),
];

/// The state space named among `modifiers` (`global`, `shared`, `shared::cta`, ...),
/// reduced to its base name.
fn state_space(modifiers: &[String]) -> Option<&str> {
    modifiers.iter().find_map(|m| {
        let base = m.split("::").next().unwrap_or(m);
        match base {
            "param" | "global" | "shared" | "local" | "const" => Some(base),
            _ => None,
        }
    })
}

/// The class of an instruction by its opcode and modifiers (the other dotted components).
pub(super) fn classify_opcode(opcode: &str, modifiers: &[String]) -> InstrClass {
    let rule = OPCODE_CLASSES
        .iter()
        .find(|(_, opcodes)| opcodes.contains(&opcode))
        .map(|(rule, _)| *rule);
    match rule {
        None => InstrClass::Other,
        Some(OpcodeRule::Fixed(class)) => class,
        Some(OpcodeRule::Memory(op)) => {
            let space = state_space(modifiers).unwrap_or("generic");
            format!("{op}.{space}").parse().unwrap_or(InstrClass::Other)
        }
    }
}

/// Instruction counts per class, keyed by `InstrClass::name`: every class, zeros included, so
/// that every table has the same rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassCounts {
    pub(super) counts: BTreeMap<String, u64>,
}

impl Default for ClassCounts {
    fn default() -> Self {
        ClassCounts::new()
    }
}

impl ClassCounts {
    pub fn new() -> ClassCounts {
        ClassCounts {
            counts: InstrClass::ALL
                .iter()
                .map(|c| (c.name().to_string(), 0))
                .collect(),
        }
    }

    #[cfg(test)]
    pub(crate) fn get(&self, class: InstrClass) -> u64 {
        self.get_name(class.name())
    }

    pub(super) fn get_name(&self, name: &str) -> u64 {
        self.counts.get(name).copied().unwrap_or(0)
    }

    pub(crate) fn add(&mut self, class: InstrClass, n: u64) {
        let slot = self.counts.entry(class.name().to_string()).or_insert(0);
        *slot = slot.saturating_add(n);
    }

    /// Every class with its count, in the classes' order of names.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        self.counts.iter().map(|(k, v)| (k.as_str(), *v))
    }

    pub(crate) fn total(&self) -> u64 {
        self.counts.values().fold(0u64, |a, b| a.saturating_add(*b))
    }
}
