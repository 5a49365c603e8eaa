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
            return Err(BackendError::Unsupported {
                api: API,
                what: format!(
                    "a shared-memory carveout ({percent}%): OpenCL has no control of the \
                     L1 / shared-memory split (only CUDA's cuFuncSetAttribute sets it)"
                ),
            });
        }
        if jit.linked {
            return Err(BackendError::Unsupported {
                api: API,
                what: "assembling through the CUDA driver's linker (jit linked): OpenCL's \
                       runtime has one load path"
                    .into(),
            });
        }
        let extensions = self.device.extensions().unwrap_or_default();
        if !extensions.contains("cl_nv_compiler_options") {
            return Err(BackendError::Unsupported {
                api: API,
                what: format!(
                    "second-stage options ({}) on {}: only NVIDIA's OpenCL \
                     (cl_nv_compiler_options) passes options to its PTX assembler",
                    jit.for_api(API).join(" "),
                    self.info.platform
                ),
            });
        }
        Ok(jit.for_api(API))
    }

    /// Options that only make the build log say more: on NVIDIA's OpenCL, ptxas's resource
    /// lines (`-cl-nv-verbose`), the one place this platform reports a kernel's registers. They
    /// change no code, so every build carries them and every row can state its registers.
    pub(super) fn log_options(&self) -> Vec<String> {
        let extensions = self.device.extensions().unwrap_or_default();
        if extensions.contains("cl_nv_compiler_options") {
            vec!["-cl-nv-verbose".into()]
        } else {
            Vec::new()
        }
    }
}
