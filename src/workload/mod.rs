//! Running families: preparing, running and verifying one variant on one backend (`exec`),
//! and the memory a problem needs (`footprint`). What a family is lives in `crate::families`;
//! its names are re-exported here for the code that reads them from this module.

pub mod exec;
pub mod footprint;

pub use crate::families::{
    algorithm, all_variants, check_local, check_size, default_groups, default_groups_y,
    elements_of, find_variant, user_variants_of, variants_of, work_of, FamilyId, GroupRule, Metric,
    Size, Variant, WorkloadError, FMA_ITERS,
};
pub use crate::families::{bfs, constmem, fft, fill, math, md, reference, sgemm, spmv, stencil};
pub use crate::families::{matvec::flat as matvec_flat, matvec::shapes as matvec_shapes};
pub use crate::families::{reduce as reduce_launches, transfer};

crate::names::named_enum! {
    /// Which compiler's program a side runs. `other` loads the program text (PTX on NVIDIA)
    /// that the other side's compiler made for the same configuration, instead of compiling
    /// this side's own source: the other front end's code through this API's runtime, which
    /// tells a compiler cause from a runtime cause in one step.
    #[strum(serialize_all = "lowercase")]
    pub enum ProgramSource {
        Own,
        Other,
    }
}

crate::names::named_enum! {
    /// The width of index arithmetic: OpenCL's work-item functions return a 64-bit `size_t`,
    /// CUDA's built-in index variables are 32-bit. `u32` and `u64` hold one width on both
    /// sides (through the preludes' `CLVSCU_INDEX`); `native` leaves each API its own, which is
    /// unfair by construction.
    #[strum(serialize_all = "lowercase")]
    pub enum IndexWidth {
        U32,
        U64,
        Native,
    }
}

impl IndexWidth {
    /// The value of the preludes' `CLVSCU_INDEX`.
    pub fn define(self) -> &'static str {
        match self {
            IndexWidth::U32 => "32",
            IndexWidth::U64 => "64",
            IndexWidth::Native => "0",
        }
    }

    /// The bits of index arithmetic this setting gives on `api`.
    pub fn bits(self, api: crate::backend::Api) -> u32 {
        match (self, api) {
            (IndexWidth::U32, _) => 32,
            (IndexWidth::U64, _) => 64,
            (IndexWidth::Native, crate::backend::Api::OpenCl) => 64,
            (IndexWidth::Native, crate::backend::Api::Cuda) => 32,
        }
    }
}
