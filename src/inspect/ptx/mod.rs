//! PTX inspection: parse PTX text and count instructions by class.
//!
//! Fang, Varbanescu & Sips (2011), Table V, explain part of an OpenCL-vs-CUDA gap by
//! comparing the PTX that the two NVIDIA front ends produce for one kernel, counting
//! instructions per class (arithmetic, logic-shift, data movement split by state space,
//! flow control, synchronization). This module does the same for clvscu's kernel pairs:
//! NVRTC's PTX for CUDA and the PTX text that NVIDIA's OpenCL platform returns through
//! `CL_PROGRAM_BINARIES`.
//!
//! [`parse_ptx`] reads a whole PTX module: `scan.rs` drops comments (never inside strings)
//! and cuts it into statements, labels and braces; `parse.rs` builds the [`PtxModule`] of
//! functions, instructions and state-space variables with literal sizes.
//!
//! Each `.entry` and each `.func` is counted under its own name: calls are not inlined.

mod classify;
mod parse;
mod report;
mod scan;
pub mod table_v;
#[cfg(test)]
mod tests;

pub use classify::{ClassCounts, InstrClass};
pub use parse::{count_classes, parse_kernel, parse_ptx, PtxError, PtxKernel, PtxModule};
pub use report::opencl_beside_cuda;
