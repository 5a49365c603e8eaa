//! The parsed PTX module: functions, instructions and state-space
//! variables. [`super::parse`] builds it.

use super::classify::{classify_opcode, InstrClass};

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PtxModule {
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

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtxKernel {
    pub name: String,
    /// The instructions of the body, nested blocks included, in source order.
    pub instructions: Vec<PtxInstruction>,
    /// Variables declared in the body (`.shared`, `.local`, ...).
    pub variables: Vec<VarDecl>,
    /// The sum of the literal sizes of the body's `.local` declarations.
    pub local_bytes: u64,
}

/// A variable declared in a state space (`.shared`, `.local`, `.global`, `.const`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarDecl {
    /// State space without the dot (`"shared"`).
    pub space: String,
    pub name: String,
    /// Size in bytes when the type and every array dimension are literal; `None` for
    /// unsized (`extern ... []`, dynamic shared memory) or unknown types.
    pub bytes: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtxInstruction {
    /// Line where the instruction starts.
    pub line: usize,
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
