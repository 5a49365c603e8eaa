//! The second stage's build options (NVIDIA's `cl_nv_compiler_options` only).

use super::{OpenClBackend, API};
use crate::backend::{BackendError, JitOptions, Result};

impl OpenClBackend {
    /// Refused rather than ignored where the platform cannot pass them: a run that silently
    /// dropped them would be recorded as if it had them.
    pub(super) fn second_stage_options(&self, jit: &JitOptions) -> Result<Vec<String>> {
        if jit.is_default() {
            return Ok(Vec::new());
        }
        if let Some(percent) = jit.carveout {
            let what = format!(
                "a shared-memory carveout ({percent}%): OpenCL has no control of the L1 / \
                 shared-memory split (only CUDA's cuFuncSetAttribute sets it)"
            );
            return Err(BackendError::unsupported(API, what));
        }
        if jit.linked {
            let what = "assembling through the CUDA driver's linker (jit linked): OpenCL's \
                        runtime has one load path";
            return Err(BackendError::unsupported(API, what));
        }
        if !self.passes_nv_options() {
            let what = format!(
                "second-stage options ({}) on {}: only NVIDIA's OpenCL \
                 (cl_nv_compiler_options) passes options to its PTX assembler",
                jit.for_api(API).join(" "),
                self.info.platform
            );
            return Err(BackendError::unsupported(API, what));
        }
        Ok(jit.for_api(API))
    }

    pub(super) fn passes_nv_options(&self) -> bool {
        let extensions = self.device.extensions().unwrap_or_default();
        extensions.contains("cl_nv_compiler_options")
    }
}
