//! The CUDA side's PTX run through NVIDIA's OpenCL as a program binary (study key `program =
//! "other"`), once put in the form OpenCL's front end writes ([`ptx_swap::adapt`]).

use opencl3::program::Program;

use super::{drv, BuiltProgram, OpenClBackend, API};
use crate::backend::ptx_swap::{self, Target};
use crate::backend::{BackendError, JitOptions, ProgramId, Result};

/// Whether a platform takes PTX as a program binary: NVIDIA's alone.
pub(super) fn takes_ptx(platform: &str) -> bool {
    platform.contains("NVIDIA")
}

impl OpenClBackend {
    pub(super) fn load_ptx_binary(&mut self, text: &str, jit: &JitOptions) -> Result<ProgramId> {
        let refused = |why: ptx_swap::CannotCross| {
            BackendError::unsupported(API, format!("run CUDA's PTX: {why}"))
        };
        let platform = &self.info.platform;
        if !takes_ptx(platform) {
            let why = format!(
                "the platform '{platform}' takes no PTX as a program binary (only NVIDIA's OpenCL \
                 does)"
            );
            return Err(refused(why.into()));
        }
        let ptx = ptx_swap::adapt(text, Target::NvidiaOpenCl).map_err(refused)?;
        let options = self.build_options(Vec::new(), jit)?;
        // SAFETY: the binary slice outlives the call, which copies it; the devices are the
        // context's own.
        let mut program = unsafe {
            Program::create_from_binary(&self.context, self.context.devices(), &[ptx.as_bytes()])
        }
        .map_err(drv("clCreateProgramWithBinary (CUDA's PTX)"))?;
        let built = program.build(self.context.devices(), &options);
        let build_log = program.get_build_log(self.device.id()).unwrap_or_default();
        if let Err(e) = built {
            return Err(BackendError::Compile {
                api: API,
                options: format!("(program binary: CUDA's PTX) {options}"),
                log: format!("{e}\n{build_log}"),
            });
        }
        let built = BuiltProgram { program, build_log };
        Ok(self.own.programs.insert(built))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_nvidia_takes_ptx() {
        assert!(takes_ptx("NVIDIA CUDA"));
        assert!(!takes_ptx("Portable Computing Language"));
    }
}
