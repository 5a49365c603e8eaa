//! `clvscu inspect`'s rows: instruction counts per class, kernel and API, and the paper's
//! Table V beside ours.

use serde::{Deserialize, Serialize};

/// The PTX instruction classes `clvscu inspect` counts, one row per class and kernel.
pub const CLASSES_CSV: &str = "ptx_classes.csv";

/// How many instructions of one class (`InstrClass::name`) a kernel (PTX function) of a
/// kernel pair has, as one API's compiler made it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ClassCountRow {
    pub pair: String,
    pub kernel: String,
    pub api: String,
    pub class: String,
    pub count: u64,
}

/// The paper's Table V beside our counts, one row per source, API and index width.
pub const TABLE_V_CSV: &str = "table-v.csv";

/// Who compiled what, and the counts of the paper's classes.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct TableVRow {
    /// `paper (Fang et al. 2011)` or `clvscu`.
    pub source: String,
    /// `CUDA` or `OpenCL`.
    pub api: String,
    /// `u32`, `u64`, `native`; the paper's rows are each API's native width.
    pub index: String,
    /// Bits of index arithmetic this row's kernel does (32 or 64).
    pub index_bits: u32,
    pub arithmetic: u64,
    pub logic_shift: u64,
    pub flow_control: u64,
    pub data_movement: u64,
    pub synchronization: u64,
    pub total: u64,
}
