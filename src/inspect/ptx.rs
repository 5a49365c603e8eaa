//! PTX inspection: parse PTX text and count instructions by class.
//!
//! Fang, Varbanescu & Sips (2011), Table V, explain part of an OpenCL-vs-CUDA gap by
//! comparing the PTX that the two NVIDIA front ends produce for one kernel, counting
//! instructions per class (arithmetic, logic-shift, data movement split by state space,
//! flow control, synchronization). This module does the same for clvscu's kernel pairs:
//! NVRTC's PTX for CUDA and the PTX text that NVIDIA's OpenCL platform returns through
//! `CL_PROGRAM_BINARIES`.
//!
//! # What is parsed
//!
//! [`parse_ptx`] reads a whole PTX module:
//!
//! * `//` and `/* */` comments are removed (never inside `"strings"`, so
//!   `.file 1 "C://x.cu"` is safe); a comment is never counted as an instruction.
//! * Statements end at `;` and may span lines; several statements may share a line.
//!   The line-oriented directives `.version`, `.target`, `.address_size`, `.file` and
//!   `.loc`, which PTX writes without `;`, end at the end of their line.
//! * `.entry` and `.func` definitions (with linkage such as `.visible`, a `.func` return
//!   parameter list, parameters, and performance directives such as `.maxntid`) open a
//!   function body; `{ }` blocks nest inside bodies (NVRTC uses them for call sequences).
//!   Braces inside a statement (vector operands `{%f1, %f2}`, initializers `= {1, 2}`)
//!   belong to that statement. A block that follows any other directive (`.section
//!   .debug_info { ... }`, as written by `-G`) is skipped as opaque data.
//! * Labels (`$L__BB0_1:`), predicates (`@%p1`, `@!%p2`), `.reg` declarations
//!   (`.reg .f32 %f<12>;` is 12 registers of type `f32`), and `.shared` / `.local` /
//!   `.global` / `.const` variable declarations with their literal sizes.
//!
//! Unknown directives are accepted and ignored; unknown opcodes are kept and classified
//! as [`InstrClass::Other`]. Structural errors (unbalanced braces or parentheses, an
//! unterminated comment, string or statement, an instruction outside any function) are
//! reported as [`PtxError`] with a 1-based line number.
//!
//! # Classification
//!
//! Each instruction is classified by its opcode (the first dotted component) with the
//! table [`OPCODE_CLASSES`]; loads and stores are further split by the state space found
//! among their modifiers. See [`InstrClass`] for the class names and the choices made.
//! Each `.entry` and each `.func` is counted under its own name: calls are not inlined.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use thiserror::Error;

// ---------------------------------------------------------------------------------------
// Classes
// ---------------------------------------------------------------------------------------

/// The instruction class of one PTX instruction, following Fang et al. 2011, Table V.
///
/// The paper's "data movement" class is split into its rows (`mov`, `cvt`, `ld.*`,
/// `st.*`), because those rows carried the paper's argument; [`InstrClass::group`] gives
/// the paper's coarse class. Classes the paper did not need (`warp`, `atomic`) are kept
/// apart rather than folded into another class, and anything unknown is `other`.
///
/// The serialized form is the stable string of [`InstrClass::name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum InstrClass {
    /// Integer and floating-point arithmetic (`add`, `mul`, `fma`, `mad`, `sqrt`, ...).
    #[serde(rename = "arithmetic")]
    Arithmetic,
    /// Bitwise logic, shifts and bit manipulation (`and`, `shl`, `lop3`, `prmt`, ...).
    #[serde(rename = "logic-shift")]
    LogicShift,
    /// Register moves (`mov`).
    #[serde(rename = "mov")]
    Mov,
    /// Conversions, including address conversions (`cvt`, `cvta`).
    #[serde(rename = "cvt")]
    Cvt,
    /// Loads from the kernel/function parameter space.
    #[serde(rename = "ld.param")]
    LdParam,
    /// Loads from global memory (`ld.global`, `ld.global.nc`, `ldu.global`).
    #[serde(rename = "ld.global")]
    LdGlobal,
    /// Loads from shared memory (`ld.shared`, `ld.shared::cta`, `ld.shared::cluster`).
    #[serde(rename = "ld.shared")]
    LdShared,
    /// Loads from per-thread local memory.
    #[serde(rename = "ld.local")]
    LdLocal,
    /// Loads from the constant bank.
    #[serde(rename = "ld.const")]
    LdConst,
    /// Loads with no state space (generic addressing).
    #[serde(rename = "ld.generic")]
    LdGeneric,
    /// Stores to the parameter space (call sequences, `.func` return values).
    #[serde(rename = "st.param")]
    StParam,
    /// Stores to global memory.
    #[serde(rename = "st.global")]
    StGlobal,
    /// Stores to shared memory.
    #[serde(rename = "st.shared")]
    StShared,
    /// Stores to local memory.
    #[serde(rename = "st.local")]
    StLocal,
    /// Stores with no state space (generic addressing).
    #[serde(rename = "st.generic")]
    StGeneric,
    /// Comparisons, selects and branches (`setp`, `selp`, `bra`, `call`, `ret`, `exit`).
    #[serde(rename = "flow-control")]
    FlowControl,
    /// Barriers and memory fences (`bar`, `barrier`, `bar.warp.sync`, `membar`, `fence`).
    #[serde(rename = "synchronization")]
    Synchronization,
    /// Warp-level collectives (`shfl`, `vote`, `match`, `redux`, `activemask`).
    #[serde(rename = "warp")]
    Warp,
    /// Atomics and reductions to memory (`atom`, `red`).
    #[serde(rename = "atomic")]
    Atomic,
    /// Anything not in [`OPCODE_CLASSES`]; such instructions are counted, never dropped.
    #[serde(rename = "other")]
    Other,
}

/// The paper's coarse instruction classes, used to group [`InstrClass`] rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ClassGroup {
    /// Arithmetic.
    #[serde(rename = "arithmetic")]
    Arithmetic,
    /// Logic and shift.
    #[serde(rename = "logic-shift")]
    LogicShift,
    /// Data movement: `mov`, `cvt`, loads and stores.
    #[serde(rename = "data-movement")]
    DataMovement,
    /// Flow control.
    #[serde(rename = "flow-control")]
    FlowControl,
    /// Synchronization.
    #[serde(rename = "synchronization")]
    Synchronization,
    /// Warp collectives (not in the 2011 paper, which predates them).
    #[serde(rename = "warp")]
    Warp,
    /// Atomics (not in the paper's table).
    #[serde(rename = "atomic")]
    Atomic,
    /// Unclassified.
    #[serde(rename = "other")]
    Other,
}

impl ClassGroup {
    /// The stable string name of the group (`"data-movement"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ClassGroup::Arithmetic => "arithmetic",
            ClassGroup::LogicShift => "logic-shift",
            ClassGroup::DataMovement => "data-movement",
            ClassGroup::FlowControl => "flow-control",
            ClassGroup::Synchronization => "synchronization",
            ClassGroup::Warp => "warp",
            ClassGroup::Atomic => "atomic",
            ClassGroup::Other => "other",
        }
    }
}

impl fmt::Display for ClassGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl InstrClass {
    /// Every class, in the order used for reports (the paper's order, extras after).
    pub const ALL: [InstrClass; 20] = [
        InstrClass::Arithmetic,
        InstrClass::LogicShift,
        InstrClass::Mov,
        InstrClass::Cvt,
        InstrClass::LdParam,
        InstrClass::LdGlobal,
        InstrClass::LdShared,
        InstrClass::LdLocal,
        InstrClass::LdConst,
        InstrClass::LdGeneric,
        InstrClass::StParam,
        InstrClass::StGlobal,
        InstrClass::StShared,
        InstrClass::StLocal,
        InstrClass::StGeneric,
        InstrClass::FlowControl,
        InstrClass::Synchronization,
        InstrClass::Warp,
        InstrClass::Atomic,
        InstrClass::Other,
    ];

    /// The stable string name of the class (`"arithmetic"`, `"ld.global"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            InstrClass::Arithmetic => "arithmetic",
            InstrClass::LogicShift => "logic-shift",
            InstrClass::Mov => "mov",
            InstrClass::Cvt => "cvt",
            InstrClass::LdParam => "ld.param",
            InstrClass::LdGlobal => "ld.global",
            InstrClass::LdShared => "ld.shared",
            InstrClass::LdLocal => "ld.local",
            InstrClass::LdConst => "ld.const",
            InstrClass::LdGeneric => "ld.generic",
            InstrClass::StParam => "st.param",
            InstrClass::StGlobal => "st.global",
            InstrClass::StShared => "st.shared",
            InstrClass::StLocal => "st.local",
            InstrClass::StGeneric => "st.generic",
            InstrClass::FlowControl => "flow-control",
            InstrClass::Synchronization => "synchronization",
            InstrClass::Warp => "warp",
            InstrClass::Atomic => "atomic",
            InstrClass::Other => "other",
        }
    }

    /// The class whose [`name`](InstrClass::name) is `name`, if any.
    pub fn from_name(name: &str) -> Option<InstrClass> {
        InstrClass::ALL.iter().copied().find(|c| c.name() == name)
    }

    /// The paper's coarse class this class belongs to.
    pub fn group(self) -> ClassGroup {
        match self {
            InstrClass::Arithmetic => ClassGroup::Arithmetic,
            InstrClass::LogicShift => ClassGroup::LogicShift,
            InstrClass::Mov
            | InstrClass::Cvt
            | InstrClass::LdParam
            | InstrClass::LdGlobal
            | InstrClass::LdShared
            | InstrClass::LdLocal
            | InstrClass::LdConst
            | InstrClass::LdGeneric
            | InstrClass::StParam
            | InstrClass::StGlobal
            | InstrClass::StShared
            | InstrClass::StLocal
            | InstrClass::StGeneric => ClassGroup::DataMovement,
            InstrClass::FlowControl => ClassGroup::FlowControl,
            InstrClass::Synchronization => ClassGroup::Synchronization,
            InstrClass::Warp => ClassGroup::Warp,
            InstrClass::Atomic => ClassGroup::Atomic,
            InstrClass::Other => ClassGroup::Other,
        }
    }
}

impl fmt::Display for InstrClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How an opcode in [`OPCODE_CLASSES`] maps to a class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpcodeRule {
    /// Always this class.
    Fixed(InstrClass),
    /// A load: `ld.<space>` by the state space among the modifiers, `ld.generic` if none.
    Load,
    /// A store: `st.<space>` by the state space among the modifiers, `st.generic` if
    /// none. `st.const` does not exist in PTX and is classified `other`.
    Store,
}

const ARITH: OpcodeRule = OpcodeRule::Fixed(InstrClass::Arithmetic);
const LOGIC: OpcodeRule = OpcodeRule::Fixed(InstrClass::LogicShift);
const MOV: OpcodeRule = OpcodeRule::Fixed(InstrClass::Mov);
const CVT: OpcodeRule = OpcodeRule::Fixed(InstrClass::Cvt);
const FLOW: OpcodeRule = OpcodeRule::Fixed(InstrClass::FlowControl);
const SYNC: OpcodeRule = OpcodeRule::Fixed(InstrClass::Synchronization);
const WARP: OpcodeRule = OpcodeRule::Fixed(InstrClass::Warp);
const ATOMIC: OpcodeRule = OpcodeRule::Fixed(InstrClass::Atomic);

/// The opcode -> class table. The key is the opcode, i.e. the first dotted component of
/// the instruction (`fma` for `fma.rn.f32`, `bar` for `bar.warp.sync`); an opcode not in
/// the table is [`InstrClass::Other`].
///
/// Choices worth reviewing:
/// * `setp`, `set`, `selp`, `slct` and `testp` are flow control, as in the paper (they
///   compute predicates or select on them); `trap` and `brkpt` end or divert control.
/// * `bfind`, `fns`, `shf`, `bmsk` and `szext` are bit manipulation: `logic-shift`.
/// * `mul24`, `mad24`, `sad`, the carry forms (`addc`, ...), `dp4a`/`dp2a`, `copysign`
///   and the tensor-core `mma`/`wgmma` are arithmetic.
/// * `cvta` (generic <-> state-space address conversion) is counted with `cvt`.
/// * `ldu` (load uniform, global only) is a load like `ld`.
/// * `mbarrier` is synchronization; `elect` is a warp collective.
/// * Left as `other` on purpose: texture/surface (`tex`, `tld4`, `txq`, `suld`, `sust`,
///   `sured`, `suq`), `cp` (`cp.async*`, bulk copies), `ldmatrix`/`stmatrix`/`movmatrix`,
///   `wmma` (mixes loads, stores and math), `prefetch`, `isspacep`, `nanosleep`, and
///   any opcode this table does not know.
pub const OPCODE_CLASSES: &[(&str, OpcodeRule)] = &[
    // --- arithmetic -------------------------------------------------------------------
    ("add", ARITH),
    ("sub", ARITH),
    ("mul", ARITH),
    ("mad", ARITH),
    ("mul24", ARITH),
    ("mad24", ARITH),
    ("sad", ARITH),
    ("div", ARITH),
    ("rem", ARITH),
    ("abs", ARITH),
    ("neg", ARITH),
    ("min", ARITH),
    ("max", ARITH),
    ("fma", ARITH),
    ("rcp", ARITH),
    ("sqrt", ARITH),
    ("rsqrt", ARITH),
    ("sin", ARITH),
    ("cos", ARITH),
    ("lg2", ARITH),
    ("ex2", ARITH),
    ("tanh", ARITH),
    ("copysign", ARITH),
    ("addc", ARITH),
    ("subc", ARITH),
    ("madc", ARITH),
    ("dp4a", ARITH),
    ("dp2a", ARITH),
    ("mma", ARITH),
    ("wgmma", ARITH),
    // --- logic and shift --------------------------------------------------------------
    ("and", LOGIC),
    ("or", LOGIC),
    ("xor", LOGIC),
    ("not", LOGIC),
    ("cnot", LOGIC),
    ("lop3", LOGIC),
    ("shl", LOGIC),
    ("shr", LOGIC),
    ("shf", LOGIC),
    ("bfe", LOGIC),
    ("bfi", LOGIC),
    ("prmt", LOGIC),
    ("popc", LOGIC),
    ("clz", LOGIC),
    ("brev", LOGIC),
    ("bfind", LOGIC),
    ("fns", LOGIC),
    ("bmsk", LOGIC),
    ("szext", LOGIC),
    // --- data movement ----------------------------------------------------------------
    ("mov", MOV),
    ("cvt", CVT),
    ("cvta", CVT),
    ("ld", OpcodeRule::Load),
    ("ldu", OpcodeRule::Load),
    ("st", OpcodeRule::Store),
    // --- flow control -----------------------------------------------------------------
    ("setp", FLOW),
    ("set", FLOW),
    ("selp", FLOW),
    ("slct", FLOW),
    ("testp", FLOW),
    ("bra", FLOW),
    ("brx", FLOW),
    ("call", FLOW),
    ("ret", FLOW),
    ("exit", FLOW),
    ("trap", FLOW),
    ("brkpt", FLOW),
    // --- synchronization --------------------------------------------------------------
    ("bar", SYNC),
    ("barrier", SYNC),
    ("membar", SYNC),
    ("fence", SYNC),
    ("mbarrier", SYNC),
    // --- warp collectives -------------------------------------------------------------
    ("shfl", WARP),
    ("vote", WARP),
    ("match", WARP),
    ("redux", WARP),
    ("activemask", WARP),
    ("elect", WARP),
    // --- atomics ----------------------------------------------------------------------
    ("atom", ATOMIC),
    ("red", ATOMIC),
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

/// Classify an instruction given its opcode (first dotted component) and its modifiers
/// (the remaining dotted components), using [`OPCODE_CLASSES`].
pub fn classify_opcode(opcode: &str, modifiers: &[String]) -> InstrClass {
    let rule = OPCODE_CLASSES
        .iter()
        .find(|(name, _)| *name == opcode)
        .map(|(_, rule)| *rule);
    match rule {
        None => InstrClass::Other,
        Some(OpcodeRule::Fixed(class)) => class,
        Some(OpcodeRule::Load) => match state_space(modifiers) {
            Some("param") => InstrClass::LdParam,
            Some("global") => InstrClass::LdGlobal,
            Some("shared") => InstrClass::LdShared,
            Some("local") => InstrClass::LdLocal,
            Some("const") => InstrClass::LdConst,
            _ => InstrClass::LdGeneric,
        },
        Some(OpcodeRule::Store) => match state_space(modifiers) {
            Some("param") => InstrClass::StParam,
            Some("global") => InstrClass::StGlobal,
            Some("shared") => InstrClass::StShared,
            Some("local") => InstrClass::StLocal,
            Some(_) => InstrClass::Other,
            None => InstrClass::StGeneric,
        },
    }
}

// ---------------------------------------------------------------------------------------
// Parsed module
// ---------------------------------------------------------------------------------------

/// Errors from [`parse_ptx`]. Every variant names the 1-based line where the problem is.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PtxError {
    /// A `}` with no open `{`.
    #[error("line {line}: '}}' without a matching '{{'")]
    UnmatchedClose {
        /// Line of the `}`.
        line: usize,
    },
    /// A `{` that is never closed.
    #[error("line {line}: '{{' is never closed")]
    UnclosedBrace {
        /// Line of the `{`.
        line: usize,
    },
    /// A `/*` comment with no `*/`.
    #[error("line {line}: unterminated block comment")]
    UnterminatedComment {
        /// Line where the comment starts.
        line: usize,
    },
    /// A string literal that does not end on its line.
    #[error("line {line}: unterminated string literal")]
    UnterminatedString {
        /// Line where the string starts.
        line: usize,
    },
    /// A statement not terminated by `;` before a `}` or the end of the input.
    #[error("line {line}: statement is not terminated by ';'")]
    UnterminatedStatement {
        /// Line where the statement starts.
        line: usize,
    },
    /// Parentheses or braces that do not balance within one statement.
    #[error("line {line}: unbalanced parentheses or braces in statement")]
    UnbalancedStatement {
        /// Line where the statement starts.
        line: usize,
    },
    /// An instruction or label outside of any `.entry` / `.func` body.
    #[error("line {line}: `{text}` appears outside of any function body")]
    OutsideFunction {
        /// Line of the statement.
        line: usize,
        /// The statement, whitespace-normalized.
        text: String,
    },
    /// A function defined inside another function's body.
    #[error("line {line}: function defined inside another function")]
    NestedFunction {
        /// Line of the inner function's header.
        line: usize,
    },
    /// A malformed `.entry` / `.func` header.
    #[error("line {line}: malformed function header: {reason}")]
    BadHeader {
        /// Line where the header starts.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// A malformed instruction or known directive.
    #[error("line {line}: malformed statement `{text}`")]
    BadStatement {
        /// Line where the statement starts.
        line: usize,
        /// The statement, whitespace-normalized.
        text: String,
    },
}

impl PtxError {
    /// The 1-based line number the error refers to.
    pub fn line(&self) -> usize {
        match self {
            PtxError::UnmatchedClose { line }
            | PtxError::UnclosedBrace { line }
            | PtxError::UnterminatedComment { line }
            | PtxError::UnterminatedString { line }
            | PtxError::UnterminatedStatement { line }
            | PtxError::UnbalancedStatement { line }
            | PtxError::OutsideFunction { line, .. }
            | PtxError::NestedFunction { line }
            | PtxError::BadHeader { line, .. }
            | PtxError::BadStatement { line, .. } => *line,
        }
    }
}

/// A parsed PTX module.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PtxModule {
    /// The `.version` value (`"9.0"`), if declared.
    pub version: Option<String>,
    /// The first `.target` item (`"sm_90"`), if declared.
    pub target: Option<String>,
    /// Further `.target` items (`"debug"`, `"texmode_independent"`).
    pub target_options: Vec<String>,
    /// The `.address_size` value, if declared and numeric.
    pub address_size: Option<u32>,
    /// Every `.entry` and `.func` definition with a body, in source order.
    pub kernels: Vec<PtxKernel>,
    /// Module-scope variable declarations (`.global`, `.const`, `.shared`, `.local`).
    pub globals: Vec<VarDecl>,
}

impl PtxModule {
    /// The function (`.entry` or `.func`) named `name`.
    pub fn kernel(&self, name: &str) -> Option<&PtxKernel> {
        self.kernels.iter().find(|k| k.name == name)
    }

    /// The `.entry` functions only.
    pub fn entries(&self) -> impl Iterator<Item = &PtxKernel> {
        self.kernels
            .iter()
            .filter(|k| k.kind == FunctionKind::Entry)
    }

    /// Literal `.shared` bytes used by `kernel`: those declared in its body plus
    /// module-scope `.shared` variables whose name appears in its operands.
    pub fn shared_bytes_for(&self, kernel: &PtxKernel) -> u64 {
        let used = kernel.referenced_identifiers();
        self.globals
            .iter()
            .filter(|v| v.space == "shared" && used.contains(v.name.as_str()))
            .filter_map(|v| v.bytes)
            .fold(kernel.shared_bytes, u64::saturating_add)
    }
}

/// Whether a function is a kernel entry point or a device function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FunctionKind {
    /// `.entry`: a kernel.
    #[serde(rename = "entry")]
    Entry,
    /// `.func`: a device function.
    #[serde(rename = "func")]
    Func,
}

/// One `.entry` or `.func` definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PtxKernel {
    /// The function's name.
    pub name: String,
    /// `.entry` or `.func`.
    pub kind: FunctionKind,
    /// Linkage directives before `.entry` / `.func`, without the dot (`["visible"]`).
    pub linkage: Vec<String>,
    /// Line of the header.
    pub line: usize,
    /// A `.func`'s return parameters.
    pub return_params: Vec<PtxParam>,
    /// The parameters.
    pub params: Vec<PtxParam>,
    /// Performance-tuning directives between the parameters and the body, as written
    /// (`".maxntid 256, 1, 1"`).
    pub performance_directives: Vec<String>,
    /// The instructions of the body, nested blocks included, in source order.
    pub instructions: Vec<PtxInstruction>,
    /// The `.reg` declarations of the body, nested blocks included.
    pub registers: Vec<RegDecl>,
    /// Variables declared in the body (`.shared`, `.local`, ...).
    pub variables: Vec<VarDecl>,
    /// Labels defined in the body.
    pub labels: Vec<String>,
    /// Sum of the literal sizes of the body's `.shared` declarations.
    pub shared_bytes: u64,
    /// Sum of the literal sizes of the body's `.local` declarations.
    pub local_bytes: u64,
}

impl PtxKernel {
    /// Declared register counts by type (`"f32" -> 12`).
    pub fn register_counts(&self) -> BTreeMap<String, u64> {
        let mut out = BTreeMap::new();
        for r in &self.registers {
            let slot = out.entry(r.ty.clone()).or_insert(0u64);
            *slot = slot.saturating_add(r.count);
        }
        out
    }

    /// Identifiers (register names, symbols, labels) appearing in operands.
    fn referenced_identifiers(&self) -> BTreeSet<&str> {
        self.instructions
            .iter()
            .flat_map(|i| {
                i.operands
                    .split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '$' | '%')))
                    .filter(|s| !s.is_empty())
            })
            .collect()
    }
}

/// A function parameter or return parameter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PtxParam {
    /// The name (array suffix removed).
    pub name: String,
    /// The type, without the dot (`"u64"`), if given.
    pub ty: Option<String>,
    /// For `.ptr` parameters, the pointed-to state space (`"global"`), if given.
    pub ptr_space: Option<String>,
    /// The `.align` value, if given.
    pub align: Option<u32>,
    /// The whole declaration, whitespace-normalized.
    pub decl: String,
}

/// One name of a `.reg` declaration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegDecl {
    /// Type without the leading dot; vector prefixes kept (`"f32"`, `"pred"`, `"v4.f32"`).
    pub ty: String,
    /// The register name or prefix (`"%f"` for `%f<12>`).
    pub name: String,
    /// Number of registers declared (12 for `%f<12>`, 1 for a plain name).
    pub count: u64,
    /// Line of the declaration.
    pub line: usize,
}

/// A variable declared in a state space (`.shared`, `.local`, `.global`, `.const`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VarDecl {
    /// State space without the dot (`"shared"`).
    pub space: String,
    /// Linkage directives without the dot (`["extern"]`).
    pub linkage: Vec<String>,
    /// The variable's name.
    pub name: String,
    /// Element type without the leading dot; vector prefixes kept (`"b8"`, `"v4.f32"`).
    pub ty: String,
    /// The `.align` value, if given.
    pub align: Option<u32>,
    /// Size in bytes when the type and every array dimension are literal; `None` for
    /// unsized (`extern ... []`, dynamic shared memory) or unknown types.
    pub bytes: Option<u64>,
    /// Line of the declaration.
    pub line: usize,
}

/// An instruction predicate (`@%p1` or `@!%p1`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Predicate {
    /// The predicate register (`"%p1"`).
    pub register: String,
    /// `true` for `@!`.
    pub negated: bool,
}

/// One PTX instruction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PtxInstruction {
    /// Line where the instruction starts.
    pub line: usize,
    /// The guard predicate, if any.
    pub predicate: Option<Predicate>,
    /// The opcode: the first dotted component (`"ld"` for `ld.global.nc.v4.f32`).
    pub opcode: String,
    /// The remaining dotted components (`["global", "nc", "v4", "f32"]`).
    pub modifiers: Vec<String>,
    /// The operands as written, whitespace-normalized.
    pub operands: String,
}

impl PtxInstruction {
    /// The opcode with all its modifiers (`"ld.global.nc.v4.f32"`).
    pub fn full_opcode(&self) -> String {
        let mut s = self.opcode.clone();
        for m in &self.modifiers {
            s.push('.');
            s.push_str(m);
        }
        s
    }

    /// This instruction's class.
    pub fn class(&self) -> InstrClass {
        classify_opcode(&self.opcode, &self.modifiers)
    }
}

// ---------------------------------------------------------------------------------------
// Scanner: characters -> statements, labels and braces
// ---------------------------------------------------------------------------------------

/// Directives that PTX terminates by the end of the line rather than by `;`.
const LINE_DIRECTIVES: &[&str] = &[".version", ".target", ".address_size", ".file", ".loc"];

/// Linkage directives that may precede a declaration.
const LINKAGE: &[&str] = &[".visible", ".extern", ".weak", ".common"];

#[derive(Debug)]
enum Event {
    Stmt {
        text: String,
        line: usize,
    },
    Label {
        name: String,
        line: usize,
    },
    /// `{`; `header` is a function header that precedes it.
    Open {
        header: Option<(String, usize)>,
        line: usize,
    },
    Close {
        line: usize,
    },
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || matches!(c, '_' | '$' | '%') => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$'))
}

fn first_token(s: &str) -> &str {
    s.split_whitespace().next().unwrap_or("")
}

/// Does the statement in `buf` (which is followed by `{`) define a function?
fn is_function_header(buf: &str) -> bool {
    buf.split(|c: char| c.is_whitespace() || c == '(')
        .any(|t| t == ".entry" || t == ".func")
}

struct Scanner {
    events: Vec<Event>,
    buf: String,
    buf_line: usize,
    paren: i64,
    inner_brace: i64,
}

impl Scanner {
    fn push_char(&mut self, c: char, line: usize) {
        if c.is_whitespace() {
            if !self.buf.is_empty() && !self.buf.ends_with(' ') {
                self.buf.push(' ');
            }
            return;
        }
        if self.buf.is_empty() {
            self.buf_line = line;
        }
        self.buf.push(c);
    }

    fn is_blank(&self) -> bool {
        self.buf.trim().is_empty()
    }

    fn take(&mut self) -> String {
        let text = self.buf.trim().to_string();
        self.buf.clear();
        self.paren = 0;
        self.inner_brace = 0;
        text
    }

    fn flush_statement(&mut self) -> Result<(), PtxError> {
        if self.paren != 0 || self.inner_brace != 0 {
            return Err(PtxError::UnbalancedStatement {
                line: self.buf_line,
            });
        }
        let line = self.buf_line;
        let text = self.take();
        if !text.is_empty() {
            self.events.push(Event::Stmt { text, line });
        }
        Ok(())
    }
}

fn scan(input: &str) -> Result<Vec<Event>, PtxError> {
    let chars: Vec<char> = input.chars().collect();
    let n = chars.len();
    let mut sc = Scanner {
        events: Vec::new(),
        buf: String::new(),
        buf_line: 1,
        paren: 0,
        inner_brace: 0,
    };
    let mut line = 1usize;
    // Depth and start line of an opaque block (`.section ... { ... }`) being skipped.
    let mut opaque: Option<(usize, usize)> = None;
    let mut i = 0usize;
    while i < n {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        // Comments are recognised everywhere except inside strings.
        if c == '/' && next == Some('/') {
            while i < n && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '/' && next == Some('*') {
            let start = line;
            i += 2;
            loop {
                if i >= n {
                    return Err(PtxError::UnterminatedComment { line: start });
                }
                if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    i += 2;
                    break;
                }
                if chars[i] == '\n' {
                    line += 1;
                }
                i += 1;
            }
            if opaque.is_none() {
                sc.push_char(' ', line);
            }
            continue;
        }
        if c == '"' {
            let start = line;
            let mut j = i + 1;
            loop {
                match chars.get(j) {
                    None | Some('\n') => return Err(PtxError::UnterminatedString { line: start }),
                    Some('\\') => j += 2,
                    Some('"') => break,
                    Some(_) => j += 1,
                }
            }
            if opaque.is_none() {
                for &ch in &chars[i..=j] {
                    // Keep string contents verbatim (no whitespace collapsing).
                    if sc.buf.is_empty() {
                        sc.buf_line = line;
                    }
                    sc.buf.push(ch);
                }
            }
            i = j + 1;
            continue;
        }
        if let Some((depth, start)) = opaque {
            match c {
                '{' => opaque = Some((depth + 1, start)),
                '}' if depth <= 1 => opaque = None,
                '}' => opaque = Some((depth - 1, start)),
                '\n' => line += 1,
                _ => {}
            }
            i += 1;
            continue;
        }
        match c {
            '\n' => {
                if LINE_DIRECTIVES.contains(&first_token(&sc.buf)) {
                    sc.flush_statement()?;
                } else {
                    sc.push_char(' ', line);
                }
                line += 1;
            }
            ';' => sc.flush_statement()?,
            '{' => {
                if sc.is_blank() {
                    sc.take();
                    sc.events.push(Event::Open { header: None, line });
                } else if sc.paren == 0
                    && sc.inner_brace == 0
                    && sc.buf.trim_start().starts_with('.')
                    && !sc.buf.contains('=')
                {
                    let header_line = sc.buf_line;
                    let header = sc.take();
                    if is_function_header(&header) {
                        sc.events.push(Event::Open {
                            header: Some((header, header_line)),
                            line,
                        });
                    } else {
                        // A block after some other directive: opaque data, skipped.
                        opaque = Some((1, line));
                    }
                } else {
                    sc.inner_brace += 1;
                    sc.push_char(c, line);
                }
            }
            '}' => {
                if sc.inner_brace > 0 {
                    sc.inner_brace -= 1;
                    sc.push_char(c, line);
                } else if !sc.is_blank() {
                    return Err(PtxError::UnterminatedStatement { line: sc.buf_line });
                } else {
                    sc.take();
                    sc.events.push(Event::Close { line });
                }
            }
            '(' => {
                sc.paren += 1;
                sc.push_char(c, line);
            }
            ')' => {
                sc.paren -= 1;
                if sc.paren < 0 {
                    return Err(PtxError::UnbalancedStatement { line });
                }
                sc.push_char(c, line);
            }
            ':' if sc.paren == 0
                && sc.inner_brace == 0
                && next != Some(':')
                && !sc.buf.ends_with(':')
                && is_identifier(sc.buf.trim()) =>
            {
                let label_line = sc.buf_line;
                let name = sc.take();
                sc.events.push(Event::Label {
                    name,
                    line: label_line,
                });
            }
            _ => sc.push_char(c, line),
        }
        i += 1;
    }
    if let Some((_, start)) = opaque {
        return Err(PtxError::UnclosedBrace { line: start });
    }
    if LINE_DIRECTIVES.contains(&first_token(&sc.buf)) {
        sc.flush_statement()?;
    }
    if !sc.is_blank() {
        return Err(PtxError::UnterminatedStatement { line: sc.buf_line });
    }
    Ok(sc.events)
}

// ---------------------------------------------------------------------------------------
// Statement parsers
// ---------------------------------------------------------------------------------------

fn bad(line: usize, text: &str) -> PtxError {
    PtxError::BadStatement {
        line,
        text: text.to_string(),
    }
}

fn parse_instruction(text: &str, line: usize) -> Result<PtxInstruction, PtxError> {
    let mut rest = text.trim();
    let mut predicate = None;
    if let Some(after_at) = rest.strip_prefix('@') {
        let r = after_at.trim_start();
        let (negated, r) = match r.strip_prefix('!') {
            Some(x) => (true, x.trim_start()),
            None => (false, r),
        };
        let end = r.find(char::is_whitespace).unwrap_or(r.len());
        let register = &r[..end];
        if register.is_empty() {
            return Err(bad(line, text));
        }
        predicate = Some(Predicate {
            register: register.to_string(),
            negated,
        });
        rest = r[end..].trim_start();
    }
    let end = rest
        .find(|c: char| c.is_whitespace() || matches!(c, '{' | '[' | '(' | ','))
        .unwrap_or(rest.len());
    let full = &rest[..end];
    let mut parts = full.split('.');
    let opcode = parts.next().unwrap_or("");
    if opcode.is_empty() {
        return Err(bad(line, text));
    }
    Ok(PtxInstruction {
        line,
        predicate,
        opcode: opcode.to_string(),
        modifiers: parts
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect(),
        operands: rest[end..].trim().to_string(),
    })
}

/// Parse `.reg .f32 %f<12>, %g;` into one [`RegDecl`] per name.
fn parse_reg(text: &str, line: usize) -> Result<Vec<RegDecl>, PtxError> {
    let body = text.trim_start().strip_prefix(".reg").unwrap_or(text);
    let mut type_parts = Vec::new();
    let mut rest = body.trim_start();
    while rest.starts_with('.') {
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        type_parts.push(rest[1..end].to_string());
        rest = rest[end..].trim_start();
    }
    if type_parts.is_empty() || rest.is_empty() {
        return Err(bad(line, text));
    }
    let ty = type_parts.join(".");
    let mut out = Vec::new();
    for item in rest.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return Err(bad(line, text));
        }
        let (name, count) = match item.split_once('<') {
            Some((name, tail)) => {
                let count = tail
                    .strip_suffix('>')
                    .and_then(|n| n.trim().parse::<u64>().ok())
                    .ok_or_else(|| bad(line, text))?;
                (name.trim(), count)
            }
            None => (item, 1),
        };
        out.push(RegDecl {
            ty: ty.clone(),
            name: name.to_string(),
            count,
            line,
        });
    }
    Ok(out)
}

/// Size in bytes of a scalar PTX type (without the dot), if fixed.
fn scalar_size(ty: &str) -> Option<u64> {
    match ty {
        "b8" | "u8" | "s8" | "e4m3" | "e5m2" => Some(1),
        "b16" | "u16" | "s16" | "f16" | "bf16" | "e4m3x2" | "e5m2x2" => Some(2),
        "b32" | "u32" | "s32" | "f32" | "f16x2" | "bf16x2" | "tf32" => Some(4),
        "b64" | "u64" | "s64" | "f64" => Some(8),
        "b128" => Some(16),
        _ => None,
    }
}

/// If the statement declares variables in a state space, return that space (no dot).
fn declared_space(text: &str) -> Option<&'static str> {
    for tok in text.split_whitespace() {
        if LINKAGE.contains(&tok) {
            continue;
        }
        return match tok {
            ".global" => Some("global"),
            ".const" => Some("const"),
            ".shared" => Some("shared"),
            ".local" => Some("local"),
            _ => None,
        };
    }
    None
}

/// Parse a state-space variable declaration such as
/// `.shared .align 4 .b8 buf[1024];` or `.global .f32 a, b[4] = {...};`.
fn parse_var_decl(text: &str, space: &str, line: usize) -> Result<Vec<VarDecl>, PtxError> {
    let decl = text.split('=').next().unwrap_or(text);
    let mut linkage = Vec::new();
    let mut align = None;
    let mut type_parts: Vec<String> = Vec::new();
    let mut rest = decl.trim_start();
    while rest.starts_with('.') {
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let tok = &rest[..end];
        rest = rest[end..].trim_start();
        if tok == ".align" {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            align = rest[..end].parse::<u32>().ok();
            rest = rest[end..].trim_start();
        } else if LINKAGE.contains(&tok) {
            linkage.push(tok[1..].to_string());
        } else if tok.strip_prefix('.') != Some(space) {
            type_parts.push(tok[1..].to_string());
        }
    }
    if rest.is_empty() {
        return Err(bad(line, text));
    }
    let ty = type_parts.join(".");
    // Element size: the scalar type times the vector width, when both are known.
    let mut elem: Option<u64> = None;
    let mut vec_width = 1u64;
    for part in &type_parts {
        match part.as_str() {
            "v2" => vec_width = 2,
            "v4" => vec_width = 4,
            "v8" => vec_width = 8,
            p => {
                if let Some(s) = scalar_size(p) {
                    elem = Some(s);
                }
            }
        }
    }
    let elem = elem.and_then(|e| e.checked_mul(vec_width));
    let mut out = Vec::new();
    for item in rest.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return Err(bad(line, text));
        }
        let (name, dims) = match item.find('[') {
            Some(p) => (item[..p].trim(), &item[p..]),
            None => (item, ""),
        };
        let mut bytes = elem;
        let mut dims_rest = dims;
        while let Some(open) = dims_rest.strip_prefix('[') {
            let close = open.find(']').ok_or_else(|| bad(line, text))?;
            let dim = open[..close].trim().parse::<u64>().ok();
            bytes = match (bytes, dim) {
                (Some(b), Some(d)) => b.checked_mul(d),
                _ => None,
            };
            dims_rest = open[close + 1..].trim_start();
        }
        if !dims_rest.is_empty() || name.is_empty() {
            return Err(bad(line, text));
        }
        out.push(VarDecl {
            space: space.to_string(),
            linkage: linkage.clone(),
            name: name.to_string(),
            ty: ty.clone(),
            align,
            bytes,
            line,
        });
    }
    Ok(out)
}

/// Split `(inner) rest` into `inner` and `rest`, honoring nesting.
fn split_group(s: &str) -> Option<(&str, &str)> {
    let body = s.strip_prefix('(')?;
    let mut depth = 1usize;
    for (idx, c) in body.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some((&body[..idx], &body[idx + 1..]));
                }
            }
            _ => {}
        }
    }
    None
}

fn parse_params(inner: &str) -> Vec<PtxParam> {
    inner
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            let tokens: Vec<&str> = p.split_whitespace().collect();
            let last = tokens.last().copied().unwrap_or("");
            let name = last.split('[').next().unwrap_or(last).to_string();
            let mut ty = None;
            let mut ptr = false;
            let mut ptr_space = None;
            let mut align = None;
            let mut idx = 0;
            let n = tokens.len().saturating_sub(1);
            while idx < n {
                let tok = tokens[idx];
                match tok {
                    ".param" | ".reg" => {}
                    ".ptr" => ptr = true,
                    ".align" => {
                        if idx + 1 < n {
                            align = tokens[idx + 1].parse::<u32>().ok();
                            idx += 1;
                        }
                    }
                    ".global" | ".shared" | ".const" | ".local" if ptr => {
                        ptr_space = Some(tok[1..].to_string());
                    }
                    _ => {
                        if ty.is_none() {
                            ty = tok.strip_prefix('.').map(str::to_string);
                        }
                    }
                }
                idx += 1;
            }
            PtxParam {
                name,
                ty,
                ptr_space,
                align,
                decl: p.to_string(),
            }
        })
        .collect()
}

fn parse_header(text: &str, line: usize) -> Result<PtxKernel, PtxError> {
    let header_err = |reason: &str| PtxError::BadHeader {
        line,
        reason: reason.to_string(),
    };
    let mut linkage = Vec::new();
    let mut rest = text.trim();
    let kind = loop {
        let end = rest
            .find(|c: char| c.is_whitespace() || c == '(')
            .unwrap_or(rest.len());
        let tok = &rest[..end];
        rest = rest[end..].trim_start();
        match tok {
            ".entry" => break FunctionKind::Entry,
            ".func" => break FunctionKind::Func,
            "" => return Err(header_err("missing .entry or .func")),
            t => linkage.push(t.trim_start_matches('.').to_string()),
        }
    };
    let mut return_params = Vec::new();
    if kind == FunctionKind::Func && rest.starts_with('(') {
        let (inner, after) = split_group(rest).ok_or_else(|| header_err("unbalanced '('"))?;
        return_params = parse_params(inner);
        rest = after.trim_start();
    }
    let end = rest
        .find(|c: char| c.is_whitespace() || c == '(')
        .unwrap_or(rest.len());
    let name = &rest[..end];
    if !is_identifier(name) {
        return Err(header_err("missing or invalid function name"));
    }
    rest = rest[end..].trim_start();
    let mut params = Vec::new();
    if rest.starts_with('(') {
        let (inner, after) = split_group(rest).ok_or_else(|| header_err("unbalanced '('"))?;
        params = parse_params(inner);
        rest = after.trim_start();
    }
    // Whatever remains are performance-tuning directives: `.maxntid 256, 1, 1` etc.
    let mut performance_directives: Vec<String> = Vec::new();
    for tok in rest.split_whitespace() {
        match performance_directives.last_mut() {
            Some(cur) if !tok.starts_with('.') => {
                cur.push(' ');
                cur.push_str(tok);
            }
            _ => performance_directives.push(tok.to_string()),
        }
    }
    Ok(PtxKernel {
        name: name.to_string(),
        kind,
        linkage,
        line,
        return_params,
        params,
        performance_directives,
        instructions: Vec::new(),
        registers: Vec::new(),
        variables: Vec::new(),
        labels: Vec::new(),
        shared_bytes: 0,
        local_bytes: 0,
    })
}

fn module_statement(module: &mut PtxModule, text: &str, line: usize) -> Result<(), PtxError> {
    let head = first_token(text);
    let tail = text[head.len()..].trim();
    match head {
        ".version" => module.version = Some(tail.to_string()),
        ".target" => {
            let mut items = tail.split(',').map(str::trim).filter(|s| !s.is_empty());
            module.target = items.next().map(str::to_string);
            module.target_options = items.map(str::to_string).collect();
        }
        ".address_size" => module.address_size = tail.parse().ok(),
        _ if head.starts_with('.') => {
            if let Some(space) = declared_space(text) {
                module.globals.extend(parse_var_decl(text, space, line)?);
            }
            // Any other directive (prototypes, .file, unknown ones) is ignored.
        }
        _ => {
            return Err(PtxError::OutsideFunction {
                line,
                text: text.to_string(),
            })
        }
    }
    Ok(())
}

fn body_statement(kernel: &mut PtxKernel, text: &str, line: usize) -> Result<(), PtxError> {
    let head = first_token(text);
    if head == ".reg" {
        kernel.registers.extend(parse_reg(text, line)?);
    } else if head.starts_with('.') {
        if let Some(space) = declared_space(text) {
            kernel.variables.extend(parse_var_decl(text, space, line)?);
        }
        // `.param` (call sequences), `.pragma`, `.loc` and unknown directives: ignored.
    } else {
        kernel.instructions.push(parse_instruction(text, line)?);
    }
    Ok(())
}

fn finish_kernel(mut kernel: PtxKernel) -> PtxKernel {
    let sum = |space: &str| {
        kernel
            .variables
            .iter()
            .filter(|v| v.space == space)
            .filter_map(|v| v.bytes)
            .fold(0u64, u64::saturating_add)
    };
    kernel.shared_bytes = sum("shared");
    kernel.local_bytes = sum("local");
    kernel
}

/// Parse PTX text into a [`PtxModule`].
///
/// Lenient for unknown directives (ignored) and unknown opcodes (kept, classified
/// `other`); strict about structure, reporting the line of unbalanced braces, unclosed
/// comments or strings, unterminated statements, and instructions outside functions.
/// Never panics, whatever the input.
pub fn parse_ptx(text: &str) -> Result<PtxModule, PtxError> {
    let events = scan(text)?;
    let mut module = PtxModule::default();
    // Open blocks: (is a function body, line of its `{`).
    let mut scopes: Vec<(bool, usize)> = Vec::new();
    let mut current: Option<PtxKernel> = None;
    for event in events {
        match event {
            Event::Open {
                header: Some((header, header_line)),
                line,
            } => {
                if current.is_some() {
                    return Err(PtxError::NestedFunction { line: header_line });
                }
                current = Some(parse_header(&header, header_line)?);
                scopes.push((true, line));
            }
            Event::Open { header: None, line } => scopes.push((false, line)),
            Event::Close { line } => match scopes.pop() {
                None => return Err(PtxError::UnmatchedClose { line }),
                Some((true, _)) => {
                    if let Some(kernel) = current.take() {
                        module.kernels.push(finish_kernel(kernel));
                    }
                }
                Some((false, _)) => {}
            },
            Event::Stmt { text, line } => match current.as_mut() {
                Some(kernel) => body_statement(kernel, &text, line)?,
                None => module_statement(&mut module, &text, line)?,
            },
            Event::Label { name, line } => match current.as_mut() {
                Some(kernel) => kernel.labels.push(name),
                None => {
                    return Err(PtxError::OutsideFunction {
                        line,
                        text: format!("{name}:"),
                    })
                }
            },
        }
    }
    if let Some(&(_, line)) = scopes.last() {
        return Err(PtxError::UnclosedBrace { line });
    }
    Ok(module)
}

// ---------------------------------------------------------------------------------------
// Counting
// ---------------------------------------------------------------------------------------

/// Instruction counts per class, keyed by [`InstrClass::name`].
///
/// [`ClassCounts::new`] holds every known class (zeros included) so that serialized
/// output has a stable shape. Keys that are not known class names (from deserialized
/// data) are kept and counted in [`total`](ClassCounts::total).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ClassCounts {
    /// Count per class name.
    pub counts: BTreeMap<String, u64>,
}

impl Default for ClassCounts {
    fn default() -> Self {
        ClassCounts::new()
    }
}

impl ClassCounts {
    /// All known classes, each with count 0.
    pub fn new() -> ClassCounts {
        ClassCounts {
            counts: InstrClass::ALL
                .iter()
                .map(|c| (c.name().to_string(), 0))
                .collect(),
        }
    }

    /// The count for `class` (0 if absent).
    pub fn get(&self, class: InstrClass) -> u64 {
        self.get_name(class.name())
    }

    /// The count for the class named `name` (0 if absent).
    pub fn get_name(&self, name: &str) -> u64 {
        self.counts.get(name).copied().unwrap_or(0)
    }

    /// Add `n` to `class`.
    pub fn add(&mut self, class: InstrClass, n: u64) {
        let slot = self.counts.entry(class.name().to_string()).or_insert(0);
        *slot = slot.saturating_add(n);
    }

    /// Add every count of `other` into `self`.
    pub fn merge(&mut self, other: &ClassCounts) {
        for (k, v) in &other.counts {
            let slot = self.counts.entry(k.clone()).or_insert(0);
            *slot = slot.saturating_add(*v);
        }
    }

    /// The sum over all classes.
    pub fn total(&self) -> u64 {
        self.counts.values().fold(0u64, |a, b| a.saturating_add(*b))
    }

    /// The sum over the classes of one of the paper's coarse groups.
    pub fn group_total(&self, group: ClassGroup) -> u64 {
        InstrClass::ALL
            .iter()
            .filter(|c| c.group() == group)
            .fold(0u64, |a, c| a.saturating_add(self.get(*c)))
    }

    /// Row keys for reports: the known classes in [`InstrClass::ALL`] order, then any
    /// other keys present in `self` or `other`, sorted.
    fn row_keys(&self, other: &ClassCounts) -> Vec<String> {
        let mut keys: Vec<String> = InstrClass::ALL
            .iter()
            .map(|c| c.name().to_string())
            .collect();
        let extra: BTreeSet<&String> = self
            .counts
            .keys()
            .chain(other.counts.keys())
            .filter(|k| InstrClass::from_name(k).is_none())
            .collect();
        keys.extend(extra.into_iter().cloned());
        keys
    }
}

/// Count the instructions of one function (an `.entry` or a `.func`) by class.
pub fn count_classes(kernel: &PtxKernel) -> ClassCounts {
    let mut counts = ClassCounts::new();
    for instr in &kernel.instructions {
        counts.add(instr.class(), 1);
    }
    counts
}

/// Count the instructions of one function by opcode, the granularity of the paper's
/// "Instructions" column: the opcode (`"add"`, `"bra"`), except that loads and stores
/// are keyed by their class name (`"ld.global"`, `"st.shared"`).
pub fn count_opcodes(kernel: &PtxKernel) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for instr in &kernel.instructions {
        let class = instr.class();
        let key = if matches!(instr.opcode.as_str(), "ld" | "ldu" | "st") {
            class.name().to_string()
        } else {
            instr.opcode.clone()
        };
        let slot = out.entry(key).or_insert(0u64);
        *slot = slot.saturating_add(1);
    }
    out
}

// ---------------------------------------------------------------------------------------
// Side-by-side reports
// ---------------------------------------------------------------------------------------

/// One CSV row of a side-by-side class comparison.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ClassCountRow {
    /// The kernel pair's name.
    pub pair: String,
    /// The kernel (PTX function) name.
    pub kernel: String,
    /// The API / compiler label (`"cuda"`, `"opencl"`).
    pub api: String,
    /// The class name ([`InstrClass::name`]).
    pub class: String,
    /// The number of instructions of that class.
    pub count: u64,
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

fn signed_diff(a: u64, b: u64) -> String {
    let d = i128::from(b) - i128::from(a);
    if d > 0 {
        format!("+{d}")
    } else {
        d.to_string()
    }
}

/// Render a Markdown table comparing two class counts, one row per class (every known
/// class, in [`InstrClass::ALL`] order, then any extra keys), with both counts and the
/// difference `b - a`, and the totals as the last row.
pub fn side_by_side_markdown(
    pair: &str,
    a_label: &str,
    a: &ClassCounts,
    b_label: &str,
    b: &ClassCounts,
) -> String {
    let (al, bl) = (md_cell(a_label), md_cell(b_label));
    let mut out = format!("PTX instructions by class: {}\n\n", md_cell(pair));
    out.push_str(&format!("| class | group | {al} | {bl} | {bl} - {al} |\n"));
    out.push_str("|---|---|--:|--:|--:|\n");
    for key in a.row_keys(b) {
        let group = InstrClass::from_name(&key)
            .map(|c| c.group().name())
            .unwrap_or("other");
        let (ca, cb) = (a.get_name(&key), b.get_name(&key));
        out.push_str(&format!(
            "| {} | {group} | {ca} | {cb} | {} |\n",
            md_cell(&key),
            signed_diff(ca, cb)
        ));
    }
    let (ta, tb) = (a.total(), b.total());
    out.push_str(&format!(
        "| **total** | | {ta} | {tb} | {} |\n",
        signed_diff(ta, tb)
    ));
    out
}

/// Long-format rows for CSV export: for each class (same order as
/// [`side_by_side_markdown`]) one row for `a` then one for `b`. No total row is
/// emitted, so summing `count` per `api` gives [`ClassCounts::total`].
pub fn side_by_side_csv_rows(
    pair: &str,
    kernel: &str,
    a_label: &str,
    a: &ClassCounts,
    b_label: &str,
    b: &ClassCounts,
) -> Vec<ClassCountRow> {
    let mut rows = Vec::new();
    for key in a.row_keys(b) {
        for (label, counts) in [(a_label, a), (b_label, b)] {
            rows.push(ClassCountRow {
                pair: pair.to_string(),
                kernel: kernel.to_string(),
                api: label.to_string(),
                class: key.clone(),
                count: counts.get_name(&key),
            });
        }
    }
    rows
}

// ---------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const REDUCE: &str = include_str!("../../tests/fixtures/ptx/nvrtc_reduce_sum.ptx");
    const MATVEC: &str = include_str!("../../tests/fixtures/ptx/nvrtc_matvec4.ptx");
    const SAXPY: &str = include_str!("../../tests/fixtures/ptx/nvrtc_saxpy_unroll4.ptx");
    const SAXPY_LINEINFO: &str =
        include_str!("../../tests/fixtures/ptx/nvrtc_saxpy_unroll4_lineinfo.ptx");
    const SAXPY_DEBUG: &str =
        include_str!("../../tests/fixtures/ptx/nvrtc_saxpy_unroll4_debug.ptx");
    const POLY: &str = include_str!("../../tests/fixtures/ptx/nvrtc_poly_local.ptx");
    const OPENCL_REDUCE: &str =
        include_str!("../../tests/fixtures/ptx/opencl_handwritten_reduce_sum.ptx");

    const ALL_FIXTURES: [&str; 7] = [
        REDUCE,
        MATVEC,
        SAXPY,
        SAXPY_LINEINFO,
        SAXPY_DEBUG,
        POLY,
        OPENCL_REDUCE,
    ];

    fn only_kernel(text: &str) -> PtxKernel {
        let m = parse_ptx(text).unwrap();
        assert_eq!(m.kernels.len(), 1);
        m.kernels[0].clone()
    }

    /// Assert exact counts: `expected` lists the non-zero classes; all others must be 0.
    fn assert_counts(counts: &ClassCounts, expected: &[(InstrClass, u64)]) {
        for class in InstrClass::ALL {
            let want = expected
                .iter()
                .find(|(c, _)| *c == class)
                .map(|(_, n)| *n)
                .unwrap_or(0);
            assert_eq!(counts.get(class), want, "class {class}");
        }
        assert_eq!(counts.total(), expected.iter().map(|(_, n)| n).sum::<u64>());
    }

    /// Wrap body lines into a minimal module with one entry named `k`.
    fn wrap(body: &str) -> String {
        format!(
            ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{{\n{body}\n}}\n"
        )
    }

    // ---- real NVRTC fixtures ---------------------------------------------------------

    #[test]
    fn nvrtc_reduce_sum_counts() {
        let m = parse_ptx(REDUCE).unwrap();
        assert_eq!(m.version.as_deref(), Some("9.5"));
        assert_eq!(m.target.as_deref(), Some("sm_90"));
        assert!(m.target_options.is_empty());
        assert_eq!(m.address_size, Some(64));
        let k = m.kernel("reduce_sum").unwrap();
        assert_eq!(k.kind, FunctionKind::Entry);
        assert_eq!(k.linkage, vec!["visible"]);
        assert_eq!(k.params.len(), 3);
        assert_eq!(k.params[2].name, "reduce_sum_param_2");
        assert_eq!(k.params[2].ty.as_deref(), Some("u32"));
        assert_eq!(k.shared_bytes, 1024);
        assert_eq!(k.local_bytes, 0);
        assert_eq!(m.shared_bytes_for(k), 1024);
        let regs = k.register_counts();
        assert_eq!(regs.get("pred"), Some(&12));
        assert_eq!(regs.get("f32"), Some(&22));
        assert_eq!(regs.get("b32"), Some(&31));
        assert_eq!(regs.get("b64"), Some(&7));
        assert_eq!(
            k.labels,
            vec![
                "$L__BB0_2",
                "$L__BB0_3",
                "$L__BB0_5",
                "$L__BB0_6",
                "$L__BB0_9"
            ]
        );
        // Verified by reading the fixture: 23 mov; add x10 + mul.wide + mad.lo;
        // 3 ld.param, 1 ld.global.nc, 4 ld.shared, 2 st.shared; shl x2 + shr;
        // setp x6 + bra x6 + ret; 5 shfl.sync.down; 2 cvta; 2 bar.sync; 1 atom.
        assert_counts(
            &count_classes(k),
            &[
                (InstrClass::Arithmetic, 12),
                (InstrClass::LogicShift, 3),
                (InstrClass::Mov, 23),
                (InstrClass::Cvt, 2),
                (InstrClass::LdParam, 3),
                (InstrClass::LdGlobal, 1),
                (InstrClass::LdShared, 4),
                (InstrClass::StShared, 2),
                (InstrClass::FlowControl, 13),
                (InstrClass::Synchronization, 2),
                (InstrClass::Warp, 5),
                (InstrClass::Atomic, 1),
            ],
        );
        let atom = k.instructions.iter().find(|i| i.opcode == "atom").unwrap();
        assert_eq!(atom.full_opcode(), "atom.global.add.f32");
        let shfl = k.instructions.iter().find(|i| i.opcode == "shfl").unwrap();
        assert_eq!(shfl.modifiers, vec!["sync", "down", "b32"]);
        assert_eq!(shfl.operands, "%r18|%p6, %r13, %r16, %r15, %r17");
        // All six `bra` are predicated (`@%p1` ... `@%p11`).
        let preds = k.instructions.iter().filter(|i| i.predicate.is_some());
        assert_eq!(preds.count(), 6);
        let ops = count_opcodes(k);
        assert_eq!(ops.get("add"), Some(&10));
        assert_eq!(ops.get("ld.shared"), Some(&4));
        assert_eq!(ops.get("bar"), Some(&2));
    }

    #[test]
    fn nvrtc_matvec4_counts() {
        let k = only_kernel(MATVEC);
        assert_eq!(k.name, "matvec4");
        // 10 ld.global.nc.v4.f32; 15 fma.rn + 5 mul.f32 + ... arithmetic.
        assert_counts(
            &count_classes(&k),
            &[
                // add x17, sub x1, mul x10 (5 mul.f32 + 4 mul.wide + 1 mul.lo),
                // fma x15, mad x2
                (InstrClass::Arithmetic, 45),
                (InstrClass::LogicShift, 1),
                (InstrClass::Mov, 9),
                (InstrClass::Cvt, 3),
                (InstrClass::LdParam, 5),
                (InstrClass::LdGlobal, 10),
                (InstrClass::StGlobal, 1),
                // setp x6, bra x6, ret
                (InstrClass::FlowControl, 13),
            ],
        );
        let v4 = k
            .instructions
            .iter()
            .find(|i| i.full_opcode() == "ld.global.nc.v4.f32")
            .unwrap();
        assert_eq!(v4.operands, "{%f12, %f13, %f14, %f15}, [%rd24]");
        assert_eq!(v4.class(), InstrClass::LdGlobal);
    }

    #[test]
    fn nvrtc_saxpy_counts_and_lineinfo_does_not_change_them() {
        let k = only_kernel(SAXPY);
        assert_counts(
            &count_classes(&k),
            &[
                // add x22, mul x5, fma x5, mad x1, div x1
                (InstrClass::Arithmetic, 34),
                // not, and
                (InstrClass::LogicShift, 2),
                (InstrClass::Mov, 4),
                (InstrClass::Cvt, 2),
                (InstrClass::LdParam, 4),
                (InstrClass::LdGlobal, 10),
                (InstrClass::StGlobal, 5),
                // setp x5, bra x5, ret
                (InstrClass::FlowControl, 11),
            ],
        );
        let with_loc = only_kernel(SAXPY_LINEINFO);
        assert_eq!(count_classes(&with_loc), count_classes(&k));
        assert_eq!(with_loc.instructions.len(), k.instructions.len());
        for (x, y) in with_loc.instructions.iter().zip(&k.instructions) {
            assert_eq!(x.full_opcode(), y.full_opcode());
            assert_eq!(x.operands, y.operands);
        }
    }

    #[test]
    fn nvrtc_debug_build_skips_dwarf_sections() {
        let m = parse_ptx(SAXPY_DEBUG).unwrap();
        assert_eq!(m.target.as_deref(), Some("sm_90"));
        assert_eq!(m.target_options, vec!["debug"]);
        assert_eq!(m.kernels.len(), 1);
        let k = &m.kernels[0];
        // Counted by reading the body (the `.section .debug_*` blocks hold only data).
        assert_counts(
            &count_classes(k),
            &[
                // add x6, mul x3
                (InstrClass::Arithmetic, 9),
                // shl x3, not.pred
                (InstrClass::LogicShift, 4),
                (InstrClass::Mov, 8),
                // cvt.s64.s32 x3
                (InstrClass::Cvt, 3),
                (InstrClass::LdParam, 4),
                // -G keeps generic addressing: `ld.f32` / `st.f32`, no `cvta.to.global`
                (InstrClass::LdGeneric, 2),
                (InstrClass::StGeneric, 1),
                // setp, bra x5, ret
                (InstrClass::FlowControl, 7),
            ],
        );
        assert!(k.labels.iter().any(|l| l == "$L__func_begin0"));
    }

    #[test]
    fn nvrtc_func_call_and_local_memory() {
        let m = parse_ptx(POLY).unwrap();
        assert_eq!(m.kernels.len(), 2);
        assert_eq!(m.entries().count(), 1);
        let f = m.kernel("_Z6hornerfPKfi").unwrap();
        assert_eq!(f.kind, FunctionKind::Func);
        assert!(f.linkage.is_empty());
        assert_eq!(f.return_params.len(), 1);
        assert_eq!(f.return_params[0].name, "func_retval0");
        assert_eq!(f.return_params[0].ty.as_deref(), Some("b32"));
        assert_eq!(f.params.len(), 3);
        assert_counts(
            &count_classes(f),
            &[
                // add x13 (9 add.s32, 4 add.s64), mul.wide x2, fma x5, max
                (InstrClass::Arithmetic, 21),
                // not, and
                (InstrClass::LogicShift, 2),
                (InstrClass::Mov, 3),
                (InstrClass::Cvt, 1),
                (InstrClass::LdParam, 3),
                (InstrClass::LdGlobal, 5),
                (InstrClass::StParam, 1),
                // setp x5, bra x5, ret
                (InstrClass::FlowControl, 11),
            ],
        );
        let e = m.kernel("poly_local").unwrap();
        assert_eq!(e.local_bytes, 32);
        assert_eq!(e.shared_bytes, 0);
        assert_eq!(e.variables[0].name, "__local_depot1");
        assert_eq!(e.variables[0].align, Some(16));
        assert_counts(
            &count_classes(e),
            &[
                // add x12 (8 add.f32, add.u64, 3 add.s64), mul.wide, mad.lo
                (InstrClass::Arithmetic, 14),
                // shl, and
                (InstrClass::LogicShift, 2),
                (InstrClass::Mov, 4),
                (InstrClass::Cvt, 2),
                // 5 kernel params + 8 return values
                (InstrClass::LdParam, 13),
                (InstrClass::LdGlobal, 2),
                (InstrClass::LdLocal, 1),
                // 3 arguments per call x 8 calls
                (InstrClass::StParam, 24),
                (InstrClass::StGlobal, 1),
                (InstrClass::StLocal, 8),
                // setp, bra, call.uni x8, ret
                (InstrClass::FlowControl, 11),
            ],
        );
        let call = e.instructions.iter().find(|i| i.opcode == "call").unwrap();
        assert_eq!(
            call.operands,
            "(retval0), _Z6hornerfPKfi, ( param0, param1, param2 )"
        );
        // `.reg .b32 temp_param_reg;` inside each of the 8 call-sequence blocks.
        let regs = e.register_counts();
        assert_eq!(regs.get("b32"), Some(&(7 + 8)));
        assert_eq!(regs.get("b64"), Some(&(15 + 2)));
    }

    // ---- hand-written OpenCL-style fixture -------------------------------------------

    #[test]
    fn opencl_style_reduce_counts() {
        let m = parse_ptx(OPENCL_REDUCE).unwrap();
        assert_eq!(m.version.as_deref(), Some("9.0"));
        assert_eq!(m.target.as_deref(), Some("sm_90"));
        let k = m.kernel("reduce_sum").unwrap();
        assert!(k.linkage.is_empty());
        assert_eq!(k.params.len(), 3);
        for p in &k.params[..2] {
            assert_eq!(p.ty.as_deref(), Some("u64"));
            assert_eq!(p.ptr_space.as_deref(), Some("global"));
            assert_eq!(p.align, Some(4));
        }
        assert_eq!(k.params[0].name, "reduce_sum_param_0");
        assert_eq!(k.params[2].ptr_space, None);
        assert_eq!(k.shared_bytes, 1024);
        assert_counts(
            &count_classes(k),
            &[
                // mad, add x6, mul.wide x2
                (InstrClass::Arithmetic, 9),
                (InstrClass::LogicShift, 4),
                (InstrClass::Mov, 7),
                (InstrClass::LdParam, 3),
                (InstrClass::LdGlobal, 1),
                (InstrClass::LdShared, 3),
                (InstrClass::StShared, 2),
                (InstrClass::StGlobal, 1),
                // setp x5, bra x5, ret
                (InstrClass::FlowControl, 11),
                (InstrClass::Synchronization, 2),
            ],
        );
    }

    #[test]
    fn side_by_side_cuda_vs_opencl_reduce() {
        let cu = count_classes(parse_ptx(REDUCE).unwrap().kernel("reduce_sum").unwrap());
        let cl = count_classes(
            parse_ptx(OPENCL_REDUCE)
                .unwrap()
                .kernel("reduce_sum")
                .unwrap(),
        );
        let md = side_by_side_markdown("reduce", "cuda", &cu, "opencl", &cl);
        let lines: Vec<&str> = md.lines().collect();
        assert_eq!(lines[0], "PTX instructions by class: reduce");
        assert_eq!(
            lines[2],
            "| class | group | cuda | opencl | opencl - cuda |"
        );
        assert!(lines.contains(&"| mov | data-movement | 23 | 7 | -16 |"));
        assert!(lines.contains(&"| st.global | data-movement | 0 | 1 | +1 |"));
        assert!(lines.contains(&"| synchronization | synchronization | 2 | 2 | 0 |"));
        assert_eq!(
            lines.last().copied(),
            Some("| **total** | | 71 | 43 | -28 |")
        );
        // header, caption, blank, separator + one row per class + total
        assert_eq!(lines.len(), 4 + InstrClass::ALL.len() + 1);

        let rows = side_by_side_csv_rows("reduce", "reduce_sum", "cuda", &cu, "opencl", &cl);
        assert_eq!(rows.len(), 2 * InstrClass::ALL.len());
        assert_eq!(
            rows[0],
            ClassCountRow {
                pair: "reduce".into(),
                kernel: "reduce_sum".into(),
                api: "cuda".into(),
                class: "arithmetic".into(),
                count: 12,
            }
        );
        assert_eq!(rows[1].api, "opencl");
        assert_eq!(rows[1].count, 9);
        let sum = |api: &str| {
            rows.iter()
                .filter(|r| r.api == api)
                .map(|r| r.count)
                .sum::<u64>()
        };
        assert_eq!(sum("cuda"), cu.total());
        assert_eq!(sum("opencl"), cl.total());
    }

    // ---- parser details on small inline inputs ---------------------------------------

    #[test]
    fn several_instructions_per_line_and_statements_spanning_lines() {
        let k = only_kernel(&wrap(
            "add.s32 %r1, %r2, %r3; sub.s32 %r4, %r1, 1;mul.lo.s32 %r5,\n   %r4,\n   %r4\n;\nret;",
        ));
        let ops: Vec<String> = k.instructions.iter().map(|i| i.full_opcode()).collect();
        assert_eq!(ops, vec!["add.s32", "sub.s32", "mul.lo.s32", "ret"]);
        assert_eq!(k.instructions[2].operands, "%r5, %r4, %r4");
        // Lines: the body starts on line 6 of the wrapped text.
        assert_eq!(k.instructions[0].line, 6);
        assert_eq!(k.instructions[2].line, 6);
        assert_eq!(k.instructions[3].line, 10);
    }

    #[test]
    fn comments_are_never_counted() {
        let k = only_kernel(&wrap(
            "// add.f32 %f1, %f2, %f3;\n\
             /* bar.sync 0;\n   mov.u32 %r1, 0; */\n\
             mov.u32 /* inline */ %r2, 1; // trailing ret;\n\
             /**/ret;/* exit; */",
        ));
        let ops: Vec<String> = k.instructions.iter().map(|i| i.full_opcode()).collect();
        assert_eq!(ops, vec!["mov.u32", "ret"]);
        assert_eq!(k.instructions[0].operands, "%r2, 1");
        assert_eq!(k.instructions[0].line, 9);
    }

    #[test]
    fn predicates_and_modifiers() {
        let k = only_kernel(&wrap(
            "@%p1 bra $L__BB0_2;\n@!%p2 bra.uni $L__BB0_3;\n@ !%p3 exit;\n\
             ld.shared::cta.f32 %f1, [%r1];\nst.async.shared::cluster.b32 [%r1], %r2;\n\
             ld.f32 %f2, [%rd1];\nst.b32 [%rd1], %r2;\nldu.global.f32 %f3, [%rd2];\n\
             ld.const.f32 %f4, [c];\nbar.warp.sync -1;\nbarrier.sync 0;\nfence.acq_rel.gpu;\n\
             red.global.add.u32 [%rd1], 1;\nvote.sync.ballot.b32 %r3, %p1, -1;\n\
             lop3.b32 %r4, %r1, %r2, %r3, 0x96;\ncvt.rn.f32.s32 %f5, %r1;\n\
             frobnicate.x %r1;\nst.const.f32 [c], %f1;",
        ));
        let p0 = k.instructions[0].predicate.as_ref().unwrap();
        assert_eq!((p0.register.as_str(), p0.negated), ("%p1", false));
        let p1 = k.instructions[1].predicate.as_ref().unwrap();
        assert_eq!((p1.register.as_str(), p1.negated), ("%p2", true));
        let p2 = k.instructions[2].predicate.as_ref().unwrap();
        assert_eq!((p2.register.as_str(), p2.negated), ("%p3", true));
        assert_eq!(k.instructions[2].opcode, "exit");
        let classes: Vec<InstrClass> = k.instructions.iter().map(|i| i.class()).collect();
        use InstrClass as C;
        assert_eq!(
            classes,
            vec![
                C::FlowControl,
                C::FlowControl,
                C::FlowControl,
                C::LdShared,
                C::StShared,
                C::LdGeneric,
                C::StGeneric,
                C::LdGlobal,
                C::LdConst,
                C::Synchronization,
                C::Synchronization,
                C::Synchronization,
                C::Atomic,
                C::Warp,
                C::LogicShift,
                C::Cvt,
                C::Other,
                C::Other,
            ]
        );
        assert_eq!(k.instructions[3].modifiers, vec!["shared::cta", "f32"]);
    }

    #[test]
    fn directives_registers_and_variables() {
        let src = ".version 8.0 // trailing comment\n\
                   .target sm_90, texmode_independent\n\
                   .address_size 64\n\
                   .file 1 \"C://path/with//slashes.cl\"\n\
                   .global .align 4 .b8 table[8] = {0, 0, 128, 63, 0, 0, 0, 64};\n\
                   .const .align 16 .v4 .f32 coeffs[2];\n\
                   .shared .align 4 .f32 tile[16][17];\n\
                   .extern .shared .align 16 .b8 dyn_smem[];\n\
                   .extern .func (.param .b32 func_retval0) vprintf(.param .b64 a, .param .b64 b);\n\
                   .some_unknown_directive foo, bar;\n\
                   .visible .entry k(.param .align 8 .b8 k_param_0[16])\n\
                   .maxntid 256, 1, 1\n\
                   .minnctapersm 2\n\
                   {\n\
                   .reg .pred %p<3>;\n\
                   .reg .f32 %f<12>, %acc;\n\
                   .reg .v4 .b32 %v<2>;\n\
                   .local .align 8 .b8 depot[40];\n\
                   .shared .u64 counters[4];\n\
                   .pragma \"nounroll\";\n\
                   .loc 1 2 3\n\
                   .unknown_in_body 7;\n\
                   mov.u32 %r1, tile;\n\
                   ret;\n\
                   }\n";
        let m = parse_ptx(src).unwrap();
        assert_eq!(m.version.as_deref(), Some("8.0"));
        assert_eq!(m.target.as_deref(), Some("sm_90"));
        assert_eq!(m.target_options, vec!["texmode_independent"]);
        let names: Vec<(&str, &str, Option<u64>)> = m
            .globals
            .iter()
            .map(|v| (v.space.as_str(), v.name.as_str(), v.bytes))
            .collect();
        assert_eq!(
            names,
            vec![
                ("global", "table", Some(8)),
                ("const", "coeffs", Some(32)),
                ("shared", "tile", Some(16 * 17 * 4)),
                ("shared", "dyn_smem", None),
            ]
        );
        assert_eq!(m.globals[3].linkage, vec!["extern"]);
        let k = m.kernel("k").unwrap();
        assert_eq!(k.params[0].name, "k_param_0");
        assert_eq!(k.params[0].align, Some(8));
        assert_eq!(k.params[0].ty.as_deref(), Some("b8"));
        assert_eq!(
            k.performance_directives,
            vec![".maxntid 256, 1, 1", ".minnctapersm 2"]
        );
        let regs = k.register_counts();
        assert_eq!(regs.get("pred"), Some(&3));
        assert_eq!(regs.get("f32"), Some(&13));
        assert_eq!(regs.get("v4.b32"), Some(&2));
        assert_eq!(k.local_bytes, 40);
        assert_eq!(k.shared_bytes, 32);
        // Module-scope `tile` is referenced by the kernel; `dyn_smem` is unsized.
        assert_eq!(m.shared_bytes_for(k), 32 + 16 * 17 * 4);
        assert_eq!(count_classes(k).total(), 2);
    }

    #[test]
    fn nested_blocks_and_vector_operands() {
        let k = only_kernel(&wrap(
            "{\n.reg .b32 t;\n{ mov.b64 {%r1, %r2}, %rd1; }\n}\nst.global.v2.f32 [%rd2], {%f1, %f2};",
        ));
        assert_eq!(k.instructions.len(), 2);
        assert_eq!(k.instructions[0].operands, "{%r1, %r2}, %rd1");
        assert_eq!(k.instructions[1].class(), InstrClass::StGlobal);
        assert_eq!(k.registers.len(), 1);
    }

    #[test]
    fn errors_name_the_line() {
        let cases: Vec<(String, PtxError)> = vec![
            (
                ".version 9.0\n}\n".to_string(),
                PtxError::UnmatchedClose { line: 2 },
            ),
            (
                ".version 9.0\n.entry k()\n{\nret;\n".to_string(),
                PtxError::UnclosedBrace { line: 3 },
            ),
            (
                ".version 9.0\n.entry k()\n{\n{\nret;\n}\n".to_string(),
                PtxError::UnclosedBrace { line: 3 },
            ),
            (
                ".version 9.0\n\n/* never closed\nret;".to_string(),
                PtxError::UnterminatedComment { line: 3 },
            ),
            (
                ".entry k()\n{\nret\n}\n".to_string(),
                PtxError::UnterminatedStatement { line: 3 },
            ),
            (
                ".version 9.0\nadd.s32 %r1, %r2, %r3;\n".to_string(),
                PtxError::OutsideFunction {
                    line: 2,
                    text: "add.s32 %r1, %r2, %r3".to_string(),
                },
            ),
            (
                ".entry k()\n{\n.entry j()\n{\n}\n}\n".to_string(),
                PtxError::NestedFunction { line: 3 },
            ),
            (
                wrap("call.uni (retval0, f;"),
                PtxError::UnbalancedStatement { line: 6 },
            ),
            (
                wrap(".reg .b32 %r<x>;"),
                PtxError::BadStatement {
                    line: 6,
                    text: ".reg .b32 %r<x>".to_string(),
                },
            ),
            (
                ".pragma \"oops;\n".to_string(),
                PtxError::UnterminatedString { line: 1 },
            ),
            (
                ".entry ()\n{\n}\n".to_string(),
                PtxError::BadHeader {
                    line: 1,
                    reason: "missing or invalid function name".to_string(),
                },
            ),
        ];
        for (src, want) in cases {
            let got = parse_ptx(&src).unwrap_err();
            assert_eq!(got, want, "input: {src:?}");
            assert_eq!(got.line(), want.line());
            assert!(got
                .to_string()
                .starts_with(&format!("line {}:", want.line())));
        }
    }

    #[test]
    fn empty_and_comment_only_inputs_parse() {
        for src in ["", "\n\n", "// just a comment\n/* and\nanother */"] {
            let m = parse_ptx(src).unwrap();
            assert!(m.kernels.is_empty());
            assert_eq!(m.version, None);
        }
    }

    #[test]
    fn opcode_table_has_no_duplicates_and_covers_the_brief() {
        let mut seen = BTreeSet::new();
        for (op, _) in OPCODE_CLASSES {
            assert!(seen.insert(*op), "duplicate opcode {op}");
        }
        let cases: &[(&str, &[&str], InstrClass)] = &[
            ("fma", &["rn", "f32"], InstrClass::Arithmetic),
            ("mad", &["lo", "s32"], InstrClass::Arithmetic),
            ("rsqrt", &["approx", "f32"], InstrClass::Arithmetic),
            ("prmt", &["b32"], InstrClass::LogicShift),
            ("cvta", &["to", "global", "u64"], InstrClass::Cvt),
            ("ld", &["param", "u64"], InstrClass::LdParam),
            ("ld", &["local", "f32"], InstrClass::LdLocal),
            ("st", &["param", "b32"], InstrClass::StParam),
            ("st", &["local", "f32"], InstrClass::StLocal),
            ("selp", &["f32"], InstrClass::FlowControl),
            ("slct", &["f32", "s32"], InstrClass::FlowControl),
            ("set", &["lt", "u32", "u32"], InstrClass::FlowControl),
            ("membar", &["gl"], InstrClass::Synchronization),
            ("match", &["any", "sync", "b32"], InstrClass::Warp),
            ("redux", &["sync", "add", "u32"], InstrClass::Warp),
            ("activemask", &["b32"], InstrClass::Warp),
            ("tex", &["2d", "v4", "f32", "f32"], InstrClass::Other),
        ];
        for (op, mods, want) in cases {
            let mods: Vec<String> = mods.iter().map(|s| s.to_string()).collect();
            assert_eq!(classify_opcode(op, &mods), *want, "{op}");
        }
    }

    #[test]
    fn class_names_round_trip_and_groups() {
        for c in InstrClass::ALL {
            assert_eq!(InstrClass::from_name(c.name()), Some(c));
            assert_eq!(c.to_string(), c.name());
        }
        assert_eq!(InstrClass::from_name("nope"), None);
        let mut counts = ClassCounts::new();
        assert_eq!(counts.counts.len(), InstrClass::ALL.len());
        counts.add(InstrClass::LdGlobal, 3);
        counts.add(InstrClass::Mov, 2);
        counts.add(InstrClass::Other, 1);
        assert_eq!(counts.group_total(ClassGroup::DataMovement), 5);
        assert_eq!(counts.group_total(ClassGroup::Other), 1);
        let mut merged = counts.clone();
        merged.merge(&counts);
        assert_eq!(merged.total(), 12);
        assert_eq!(ClassCounts::default(), ClassCounts::new());
    }

    #[test]
    fn extra_keys_are_rendered_not_dropped() {
        let mut a = ClassCounts::new();
        a.counts.insert("tensor".to_string(), 2);
        let b = ClassCounts::new();
        let md = side_by_side_markdown("p|q", "a", &a, "b", &b);
        assert!(md.contains("| tensor | other | 2 | 0 | -2 |"));
        assert!(md.starts_with("PTX instructions by class: p\\|q"));
        assert!(md.ends_with("| **total** | | 2 | 0 | -2 |\n"));
        let rows = side_by_side_csv_rows("p", "k", "a", &a, "b", &b);
        assert_eq!(rows.len(), 2 * (InstrClass::ALL.len() + 1));
    }

    // ---- properties ------------------------------------------------------------------

    fn check_totals(m: &PtxModule) {
        for k in &m.kernels {
            let c = count_classes(k);
            let by_class: u64 = InstrClass::ALL.iter().map(|x| c.get(*x)).sum();
            assert_eq!(c.total(), by_class);
            assert_eq!(c.total(), k.instructions.len() as u64);
            let by_group: u64 = [
                ClassGroup::Arithmetic,
                ClassGroup::LogicShift,
                ClassGroup::DataMovement,
                ClassGroup::FlowControl,
                ClassGroup::Synchronization,
                ClassGroup::Warp,
                ClassGroup::Atomic,
                ClassGroup::Other,
            ]
            .iter()
            .map(|g| c.group_total(*g))
            .sum();
            assert_eq!(c.total(), by_group);
            assert_eq!(count_opcodes(k).values().sum::<u64>(), c.total());
        }
    }

    #[test]
    fn totals_are_sums_on_all_fixtures() {
        for f in ALL_FIXTURES {
            check_totals(&parse_ptx(f).unwrap());
        }
    }

    const OPS: &[&str] = &[
        "add.s32 %r1, %r2, %r3",
        "fma.rn.f32 %f1, %f2, %f3, %f4",
        "ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1]",
        "st.shared.f32 [%r1], %f1",
        "shfl.sync.down.b32 %r1|%p1, %r2, 16, 31, -1",
        "bar.sync 0",
        "atom.global.add.f32 %f1, [%rd1], %f2",
        "setp.lt.u32 %p1, %r1, %r2",
        "bra $L__BB0_1",
        "xor.b32 %r1, %r2, %r3",
        "mystery.op %r1",
        "cvt.rn.f32.s32 %f1, %r1",
    ];

    proptest! {
        #[test]
        fn parse_never_panics_on_arbitrary_strings(s in ".{0,400}") {
            if let Ok(m) = parse_ptx(&s) {
                check_totals(&m);
            }
        }

        #[test]
        fn parse_never_panics_on_ptx_like_noise(
            s in proptest::collection::vec(
                prop_oneof![
                    Just("{"), Just("}"), Just("("), Just(")"), Just(";"), Just(":"),
                    Just("\n"), Just(" "), Just("//"), Just("/*"), Just("*/"), Just("\""),
                    Just("@%p1"), Just("@!"), Just(".entry"), Just(".func"), Just(".reg"),
                    Just(".shared"), Just(".section"), Just(".loc"), Just("="), Just("<"),
                    Just(">"), Just("["), Just("]"), Just(","), Just("k"), Just("$L1"),
                    Just("add.s32"), Just("%r1"), Just("ld.global.f32"), Just("12"),
                ],
                0..80,
            )
        ) {
            let text: String = s.concat();
            if let Ok(m) = parse_ptx(&text) {
                check_totals(&m);
            }
        }

        #[test]
        fn generated_bodies_count_every_instruction(
            lines in proptest::collection::vec(
                proptest::collection::vec((0..OPS.len(), any::<bool>()), 1..4),
                0..30,
            )
        ) {
            // Several `;`-separated instructions per line, some predicated.
            let mut body = String::new();
            let mut expected = ClassCounts::new();
            for line in &lines {
                for (idx, pred) in line {
                    if *pred {
                        body.push_str("@!%p1 ");
                    }
                    body.push_str(OPS[*idx]);
                    body.push_str("; ");
                    let probe = parse_instruction(OPS[*idx], 1).unwrap();
                    expected.add(probe.class(), 1);
                }
                body.push('\n');
            }
            let m = parse_ptx(&wrap(&body)).unwrap();
            let counts = count_classes(&m.kernels[0]);
            prop_assert_eq!(&counts, &expected);
            prop_assert_eq!(counts.total(), lines.iter().map(|l| l.len() as u64).sum::<u64>());
        }

        #[test]
        fn inserted_comments_never_change_counts(
            fixture in 0..ALL_FIXTURES.len(),
            at in proptest::collection::vec(any::<prop::sample::Index>(), 1..6),
            block in any::<bool>(),
        ) {
            let src = ALL_FIXTURES[fixture];
            let baseline = parse_ptx(src).unwrap();
            let mut lines: Vec<String> = src.lines().map(str::to_string).collect();
            for ix in &at {
                let pos = ix.index(lines.len() + 1);
                let comment = if block {
                    "/* add.f32 %f1, %f2, %f3; { bar.sync 0; }\n ret; */"
                } else {
                    "// ld.global.f32 %f1, [%rd1]; } {"
                };
                lines.insert(pos, comment.to_string());
            }
            let m = parse_ptx(&lines.join("\n")).unwrap();
            prop_assert_eq!(m.kernels.len(), baseline.kernels.len());
            for (x, y) in m.kernels.iter().zip(&baseline.kernels) {
                prop_assert_eq!(count_classes(x), count_classes(y));
            }
        }
    }
}
