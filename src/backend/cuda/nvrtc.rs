//! NVRTC: CUDA C to PTX at run time, without a GPU (the library is opened when first used).

use cudarc::nvrtc::{compile_ptx_with_opts, CompileError, CompileOptions};

use super::API;
use crate::backend::{BackendError, CompileRequest, Result};

/// Whether NVRTC can be loaded (enough to compile kernels to PTX, no GPU needed).
pub fn nvrtc_availability() -> std::result::Result<(), String> {
    // SAFETY: only tries to dlopen the library by its candidate names.
    if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(
            "libnvrtc (NVRTC, CUDA 13) could not be loaded; install the `nvidia-cuda-nvrtc` \
             wheel or the CUDA toolkit and put its lib directory on LD_LIBRARY_PATH"
                .into(),
        )
    }
}

/// NVRTC's version, e.g. "13.0".
pub fn nvrtc_version() -> Option<String> {
    nvrtc_availability().ok()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: library presence checked; out-pointers are valid.
    let r = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    (r == cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS).then(|| format!("{major}.{minor}"))
}

/// Compile CUDA C to PTX with NVRTC, for `arch` (e.g. `compute_90`). Works without a GPU.
pub fn compile_to_ptx(request: &CompileRequest, arch: &str) -> Result<String> {
    nvrtc_availability().map_err(|reason| BackendError::Unavailable { api: API, reason })?;
    let mut options = request.options();
    options.push(format!("--gpu-architecture={arch}"));
    let opts = CompileOptions {
        options: options.clone(),
        ..Default::default()
    };
    match compile_ptx_with_opts(&request.source, opts) {
        Ok(ptx) => Ok(ptx.to_src()),
        Err(e) => Err(compile_error(e, &options)),
    }
}

fn compile_error(e: CompileError, options: &[String]) -> BackendError {
    let log = match e {
        CompileError::CompileError { log, .. } => log.to_string_lossy().into_owned(),
        other => format!("{other:?}"),
    };
    BackendError::Compile {
        api: API,
        options: options.join(" "),
        log,
    }
}

/// Kernel names declared in PTX (`.entry name(`), for "no such kernel" messages.
pub fn entry_names(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter_map(|l| {
            let rest = l.split(".entry").nth(1)?;
            let name = rest.trim().split(['(', ' ']).next()?;
            (!name.is_empty()).then(|| name.to_string())
        })
        .collect()
}
