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
//! [`parse_ptx`] reads a whole PTX module (`scan.rs` cuts it into statements, labels and
//! braces; `parse.rs` builds the [`PtxModule`]):
//!
//! * `//` and `/* */` comments are removed (never inside `"strings"`, so
//!   `.file 1 "C://x.cu"` is safe). Statements end at `;` and may span lines, except the
//!   line-oriented directives (`.version`, `.loc`, ...), which end at the end of their line.
//! * `.entry` and `.func` definitions open a function body; `{ }` blocks nest inside bodies.
//!   Braces inside a statement (vector operands, initializers) belong to that statement. A
//!   block after any other directive (`.section .debug_info { ... }`) is skipped as opaque.
//! * Instructions with their opcode, modifiers and operands, and state-space variables with
//!   literal sizes; labels, predicates and `.reg` declarations are checked, not kept.
//!
//! Each `.entry` and each `.func` is counted under its own name: calls are not inlined.

mod classify;
mod module;
mod parse;
mod report;
mod scan;
pub mod table_v;
#[cfg(test)]
mod tests;

pub use classify::{ClassCounts, InstrClass};
pub use parse::{count_classes, parse_kernel, parse_ptx, PtxError, PtxKernel, PtxModule};
pub use report::opencl_beside_cuda;
