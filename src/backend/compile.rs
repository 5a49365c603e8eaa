//! What a backend builds from (source, defines, flags, second-stage options).

use serde::{Deserialize, Serialize};

use super::Api;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CompileRequest {
    pub source: String,
    pub defines: Vec<(String, String)>,
    /// Compiler flags exactly as passed to this API's compiler.
    pub flags: Vec<String>,
    pub jit: JitOptions,
}

/// The highest optimisation level of the second stage, in ptxas's scale.
pub const MAX_OPT_LEVEL: u32 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum JitOutOfRange {
    #[error("jit opt_level {0} is outside 0..={MAX_OPT_LEVEL} (ptxas's levels)")]
    OptLevel(u32),
    #[error("jit carveout {0} is outside 0..=100 (percent of L1 given to shared memory)")]
    Carveout(u32),
    #[error("jit max_registers {0} is outside 16..=255 (the hardware's range per thread)")]
    MaxRegisters(u32),
}

/// Options of the second-stage compiler (the paper's step 6), the PTX assembler of both front
/// ends: NVIDIA's OpenCL takes them as build options (`cl_nv_compiler_options`), the CUDA
/// driver as JIT options. `None` leaves the compiler's own default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JitOptions {
    /// 0 to 3 (the highest, and both second stages' default).
    #[serde(default)]
    pub opt_level: Option<u32>,
    #[serde(default)]
    pub max_registers: Option<u32>,
    /// Percent of the unified L1 / shared memory given to shared memory, a per-kernel hint of
    /// the CUDA driver (OpenCL refuses it): a probe of what OpenCL's runtime may choose.
    #[serde(default)]
    pub carveout: Option<u32>,
    /// CUDA only: assemble through the driver's linker (the path of JIT options) even with no
    /// other option, so that explain's `cuda-linked` rung isolates the load path.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub linked: bool,
}

impl JitOptions {
    pub fn is_default(&self) -> bool {
        *self == JitOptions::default()
    }

    /// Whether the CUDA driver must assemble through its linker. A register cap need not: it
    /// is written into the PTX (`.maxnreg`); the carveout is a kernel attribute.
    pub fn needs_linker(&self) -> bool {
        self.opt_level.is_some() || self.linked
    }

    pub fn check(&self) -> std::result::Result<(), JitOutOfRange> {
        if let Some(l) = self.opt_level.filter(|l| *l > MAX_OPT_LEVEL) {
            return Err(JitOutOfRange::OptLevel(l));
        }
        if let Some(c) = self.carveout.filter(|c| *c > 100) {
            return Err(JitOutOfRange::Carveout(c));
        }
        if let Some(r) = self.max_registers.filter(|r| !(16..=255).contains(r)) {
            return Err(JitOutOfRange::MaxRegisters(r));
        }
        Ok(())
    }

    /// API-neutral words for the fairness verdict (the same on both sides when held equal).
    pub fn describe(&self) -> String {
        let mut parts = vec!["driver JIT of PTX".to_string()];
        if self.needs_linker() {
            parts.push("through the driver's linker".into());
        }
        if self.is_default() {
            parts.push("default options".into());
        }
        parts.extend(self.opt_level.map(|l| format!("opt-level {l}")));
        parts.extend(self.max_registers.map(|r| format!("max {r} registers")));
        parts.extend(
            self.carveout
                .map(|c| format!("shared-memory carveout {c}%")),
        );
        parts.join(", ")
    }

    pub fn for_api(&self, api: Api) -> Vec<String> {
        let options = match api {
            Api::OpenCl => vec![
                self.opt_level.map(|l| format!("-cl-nv-opt-level={l}")),
                self.max_registers
                    .map(|r| format!("-cl-nv-maxrregcount={r}")),
            ],
            Api::Cuda => vec![
                self.cuda_opt_level()
                    .map(|l| format!("CU_JIT_OPTIMIZATION_LEVEL={l}")),
                self.max_registers.map(|r| match self.needs_linker() {
                    true => format!("CU_JIT_MAX_REGISTERS={r}"),
                    false => format!(".maxnreg {r}"),
                }),
                self.carveout
                    .map(|c| format!("CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT={c}")),
                self.linked.then(|| "cuLinkCreate".to_string()),
            ],
        };
        options.into_iter().flatten().collect()
    }

    /// The CUDA driver's JIT counts levels 0 to 4 (4 its default and highest), ptxas (which
    /// NVIDIA's OpenCL calls) 0 to 3: level 3 goes to the driver as 4, so "highest" means the
    /// same on both sides.
    pub fn cuda_opt_level(&self) -> Option<u32> {
        self.opt_level
            .map(|l| if l >= MAX_OPT_LEVEL { 4 } else { l })
    }
}

impl CompileRequest {
    /// Defines (`-DNAME=VALUE`) first, then flags.
    pub fn options(&self) -> Vec<String> {
        self.defines
            .iter()
            .map(|(k, v)| format!("-D{k}={v}"))
            .chain(self.flags.iter().cloned())
            .collect()
    }
}
