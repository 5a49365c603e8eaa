//! PTX inspection: parse PTX text and count instructions by class.
//!
//! Fang, Varbanescu & Sips (2011), Table V, explain part of an OpenCL-vs-CUDA gap by counting
//! per class the PTX of the two NVIDIA front ends for one kernel; this does the same for
//! clvscu's pairs (NVRTC's PTX, and NVIDIA OpenCL's from `CL_PROGRAM_BINARIES`).
//!
//! [`parse_ptx`]: `scan.rs` drops comments (never inside strings) and cuts statements, labels
//! and braces; `parse.rs` builds the [`PtxModule`]. Each `.entry` and `.func` is counted under
//! its own name: calls are not inlined.

mod classify;
mod parse;
mod report;
mod scan;
pub mod table_v;
#[cfg(test)]
mod tests;

pub use classify::{ClassCounts, InstrClass};
pub use parse::{
    count_classes, parse_kernel, parse_ptx, PtxError, PtxInstruction, PtxKernel, PtxModule,
};
pub use report::opencl_beside_cuda;
