//! clvscu: a fair OpenCL-vs-CUDA performance comparison harness.
//!
//! Data flows one way: CLI -> study/config -> runner -> backend -> raw samples -> stats ->
//! result rows -> exporters and charts.

pub mod backend;
pub mod calibrate;
pub mod explain;
pub mod export;
pub mod fairness;
pub mod families;
pub mod host_memory;
pub mod input_file;
pub mod inspect;
pub mod kernels;
mod names;
pub mod paper;
pub mod parity;
pub mod plot;
pub mod report;
pub mod rows;
pub mod session;
pub mod soak;
pub mod stats;
pub mod study;
pub mod suite;
pub mod terminal;
pub mod tune;
