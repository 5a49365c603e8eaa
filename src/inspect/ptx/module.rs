//! The parsed PTX module: functions, their parameters, instructions with their predicates,
//! `.reg` declarations and state-space variables. [`super::parse`] builds it.

use serde::{Deserialize, Serialize};

use super::classify::{classify_opcode, InstrClass};

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
    pub fn kernel(&self, name: &str) -> Option<&PtxKernel> {
        self.kernels.iter().find(|k| k.name == name)
    }
}

/// Whether a function is a kernel entry point or a device function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FunctionKind {
    #[serde(rename = "entry")]
    Entry,
    #[serde(rename = "func")]
    Func,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PtxKernel {
    pub name: String,
    pub kind: FunctionKind,
    /// Linkage directives before `.entry` / `.func`, without the dot (`["visible"]`).
    pub linkage: Vec<String>,
    pub line: usize,
    pub return_params: Vec<PtxParam>,
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
    pub labels: Vec<String>,
    /// Sums of the literal sizes of the body's `.shared` and `.local` declarations.
    pub shared_bytes: u64,
    pub local_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PtxParam {
    /// The name (array suffix removed).
    pub name: String,
    /// The type, without the dot (`"u64"`), if given.
    pub ty: Option<String>,
    /// For `.ptr` parameters, the pointed-to state space (`"global"`), if given.
    pub ptr_space: Option<String>,
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
    pub line: usize,
}

/// A variable declared in a state space (`.shared`, `.local`, `.global`, `.const`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VarDecl {
    /// State space without the dot (`"shared"`).
    pub space: String,
    /// Linkage directives without the dot (`["extern"]`).
    pub linkage: Vec<String>,
    pub name: String,
    /// Element type without the leading dot; vector prefixes kept (`"b8"`, `"v4.f32"`).
    pub ty: String,
    pub align: Option<u32>,
    /// Size in bytes when the type and every array dimension are literal; `None` for
    /// unsized (`extern ... []`, dynamic shared memory) or unknown types.
    pub bytes: Option<u64>,
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

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PtxInstruction {
    /// Line where the instruction starts.
    pub line: usize,
    pub predicate: Option<Predicate>,
    /// The opcode: the first dotted component (`"ld"` for `ld.global.nc.v4.f32`).
    pub opcode: String,
    /// The remaining dotted components (`["global", "nc", "v4", "f32"]`).
    pub modifiers: Vec<String>,
    /// The operands as written, whitespace-normalized.
    pub operands: String,
}

impl PtxInstruction {
    pub(super) fn class(&self) -> InstrClass {
        classify_opcode(&self.opcode, &self.modifiers)
    }
}
