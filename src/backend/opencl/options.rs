//! Build options beyond the request's own: the second stage's (NVIDIA's
//! `cl_nv_compiler_options` only) and those that only make the build log say more.

use super::{OpenClBackend, API};
use crate::backend::{BackendError, JitOptions, Result};

impl OpenClBackend {
    /// Second-stage options as build options. Only NVIDIA's OpenCL has a way to pass them
    /// (`cl_nv_compiler_options`); elsewhere asking for them is refused rather than ignored,
    /// because a run that silently dropped them would be recorded as if it had them.
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

    /// Options that only make the build log say more: NVIDIA's `-cl-nv-verbose`, the one
    /// place this platform reports a kernel's registers. They change no code, so every build
    /// carries them.
    pub(super) fn log_option(&self) -> Option<String> {
        self.passes_nv_options().then(|| "-cl-nv-verbose".into())
    }

    fn passes_nv_options(&self) -> bool {
        let extensions = self.device.extensions().unwrap_or_default();
        extensions.contains("cl_nv_compiler_options")
    }
}
