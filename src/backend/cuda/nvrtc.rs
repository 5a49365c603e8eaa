//! NVRTC: CUDA C to PTX at run time, without a GPU (the library is opened when first used).

use cudarc::nvrtc::{compile_ptx_with_opts, CompileError, CompileOptions};

use super::API;
use crate::backend::{BackendError, CompileRequest, Result};

/// Enough to compile kernels to PTX without a GPU.
pub fn nvrtc_availability() -> Result<()> {
    // SAFETY: only tries to dlopen the library by its candidate names.
    let present = || unsafe { cudarc::nvrtc::sys::is_culib_present() };
    if present() || (*wheel::LOADED && present()) {
        Ok(())
    } else {
        Err(BackendError::unavailable(
            API,
            "libnvrtc (NVRTC, CUDA 13) could not be loaded; install the `nvidia-cuda-nvrtc` \
             wheel or the CUDA toolkit and put its lib directory on LD_LIBRARY_PATH",
        ))
    }
}

/// NVRTC from a pip wheel (`nvidia-cuda-nvrtc`), for a shell without the library on
/// LD_LIBRARY_PATH: cudarc opens NVRTC by its soname, and once the wheel's copy is loaded by
/// its full path the dynamic loader answers that soname with it.
mod wheel {
    use std::ffi::CString;
    use std::path::{Path, PathBuf};
    use std::sync::LazyLock;

    const SONAME: &str = "libnvrtc.so.13";

    pub(super) static LOADED: LazyLock<bool> =
        LazyLock::new(|| candidates().iter().any(|lib| open(lib)));

    /// Under each site-packages folder (user folder included) of the `python3` on PATH:
    /// `nvidia/cu13/lib` from CUDA 13, `nvidia/cuda_nvrtc/lib` before.
    fn candidates() -> Vec<PathBuf> {
        site_packages()
            .iter()
            .flat_map(|site| {
                ["nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"].map(|d| site.join(d).join(SONAME))
            })
            .filter(|lib| lib.is_file())
            .collect()
    }

    fn site_packages() -> Vec<PathBuf> {
        let script = "import site; print('\\n'.join(site.getsitepackages() + \
                      [site.getusersitepackages()]))";
        std::process::Command::new("python3")
            .args(["-c", script])
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .map(PathBuf::from)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Loads `lib` for the whole process; the handle is kept open on purpose, for cudarc.
    fn open(lib: &Path) -> bool {
        let Ok(path) = CString::new(lib.as_os_str().as_encoded_bytes()) else {
            return false;
        };
        // SAFETY: a NUL-terminated path; NVRTC's initialisers have no preconditions.
        let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
        !handle.is_null()
    }
}

pub fn nvrtc_version() -> Option<String> {
    nvrtc_availability().ok()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: library presence checked; out-pointers are valid.
    let r = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    (r == cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS).then(|| format!("{major}.{minor}"))
}

/// `arch`: `compute_90` etc.
pub fn compile_to_ptx(request: &CompileRequest, arch: &str) -> Result<String> {
    nvrtc_availability()?;
    let mut options = request.options();
    options.push(format!("--gpu-architecture={arch}"));
    let opts = CompileOptions {
        options: options.clone(),
        ..Default::default()
    };
    let ptx = compile_ptx_with_opts(&request.source, opts).map_err(|e| BackendError::Compile {
        api: API,
        options: options.join(" "),
        log: match e {
            CompileError::CompileError { log, .. } => log.to_string_lossy().into_owned(),
            other => format!("{other:?}"),
        },
    })?;
    Ok(ptx.to_src())
}

/// Kernel names declared in PTX (`.entry name(`).
pub fn entry_names(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter_map(|l| {
            let rest = l.split(".entry").nth(1)?;
            let name = rest.trim().split(['(', ' ']).next()?;
            (!name.is_empty()).then(|| name.to_string())
        })
        .collect()
}
