//! The CUDA driver's second stage by hand: PTX to a cubin through the driver's linker with
//! explicit JIT options (cudarc's module loader takes none), also for a disassembler.

use std::ffi::{c_void, CString};
use std::ptr;

use cudarc::driver::sys::{self, CUjitInputType, CUjit_option, CUlinkState};
use cudarc::driver::CudaContext;

use super::{drv, API};
use crate::backend::{BackendError, JitOptions, Result};

/// Room for the JIT's error log (ptxas errors are a few lines each).
const LOG_BYTES: usize = 16 * 1024;

/// Destroyed on every path out: a failed link leaks nothing.
struct LinkState(CUlinkState);

impl Drop for LinkState {
    fn drop(&mut self) {
        // SAFETY: the state came from cuLinkCreate and is destroyed once, here.
        unsafe {
            let _ = sys::cuLinkDestroy(self.0);
        }
    }
}

fn log_text(log: &[u8]) -> String {
    let end = log.iter().position(|b| *b == 0).unwrap_or(log.len());
    String::from_utf8_lossy(&log[..end]).trim().to_string()
}

pub fn assemble(ctx: &CudaContext, ptx: &str, jit: &JitOptions) -> Result<Vec<u8>> {
    ctx.bind_to_thread().map_err(drv("cuCtxSetCurrent"))?;
    let source = CString::new(ptx).map_err(|_| {
        BackendError::driver(API, "cuLinkAddData", "the PTX text contains a NUL byte")
    })?;
    let mut log = vec![0u8; LOG_BYTES];
    let mut options = vec![
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    // The driver reads scalar option values from the pointer-sized slot itself.
    let mut values: Vec<*mut c_void> = vec![log.as_mut_ptr().cast(), LOG_BYTES as *mut c_void];
    if let Some(level) = jit.cuda_opt_level() {
        options.push(CUjit_option::CU_JIT_OPTIMIZATION_LEVEL);
        values.push(level as usize as *mut c_void);
    }
    if let Some(registers) = jit.max_registers {
        options.push(CUjit_option::CU_JIT_MAX_REGISTERS);
        values.push(registers as usize as *mut c_void);
    }
    let mut raw: CUlinkState = ptr::null_mut();
    // SAFETY: options and values have the same length and outlive the link state; the log
    // buffer is LOG_BYTES long as declared.
    unsafe {
        sys::cuLinkCreate_v2(
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
            &mut raw,
        )
    }
    .result()
    .map_err(drv("cuLinkCreate"))?;
    let state = LinkState(raw);
    let name = c"clvscu.ptx";
    // SAFETY: the source is NUL-terminated and its length includes the NUL, as the driver
    // expects for PTX input.
    let added = unsafe {
        sys::cuLinkAddData_v2(
            state.0,
            CUjitInputType::CU_JIT_INPUT_PTX,
            source.as_ptr() as *mut c_void,
            source.as_bytes_with_nul().len(),
            name.as_ptr(),
            0,
            ptr::null_mut(),
            ptr::null_mut(),
        )
    }
    .result();
    if let Err(e) = added {
        return Err(BackendError::Compile {
            api: API,
            options: jit.for_api(API).join(" "),
            log: format!(
                "the driver's PTX assembler failed ({e:?}):\n{}",
                log_text(&log)
            ),
        });
    }
    let mut cubin: *mut c_void = ptr::null_mut();
    let mut size = 0usize;
    // SAFETY: out-pointers are valid; the cubin stays owned by the link state until destroyed,
    // so it is copied before `state` drops.
    unsafe { sys::cuLinkComplete(state.0, &mut cubin, &mut size) }
        .result()
        .map_err(|e| {
            BackendError::driver(API, "cuLinkComplete", format!("{e:?}: {}", log_text(&log)))
        })?;
    if cubin.is_null() || size == 0 {
        let why = "the linker returned no image";
        return Err(BackendError::driver(API, "cuLinkComplete", why));
    }
    // SAFETY: the driver reports `size` valid bytes at `cubin`.
    Ok(unsafe { std::slice::from_raw_parts(cubin as *const u8, size) }.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_stops_at_its_terminator() {
        let mut log = b"ptxas error: bad\n".to_vec();
        log.extend([0u8; 8]);
        log.extend(b"junk");
        assert_eq!(log_text(&log), "ptxas error: bad");
        assert_eq!(log_text(b"no terminator"), "no terminator");
    }
}
