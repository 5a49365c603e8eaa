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
//! table `OPCODE_CLASSES`; loads and stores are further split by the state space found
//! among their modifiers. See [`InstrClass`] for the class names and the choices made.
//! Each `.entry` and each `.func` is counted under its own name: calls are not inlined.
//!
//! # Layout
//!
//! `scan.rs` cuts the text into statements, labels and braces; `parse.rs` builds the
//! [`PtxModule`] from them; `classify.rs` holds the classes, the opcode table and the
//! counts; `report.rs` renders two counts side by side.

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
pub use report::{opencl_beside_cuda, side_by_side_csv_rows, side_by_side_markdown};
