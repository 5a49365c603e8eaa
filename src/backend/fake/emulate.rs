//! How the fake learns what a kernel computes: whoever builds it injects an [`Emulator`], and
//! each launch hands it a [`FakeLaunch`], a view of the launch with the fake's buffers.

use super::FakeProgram;
use crate::backend::handles::Handles;
use crate::backend::{Api, Arg, BackendError, BufferId, LaunchShape, Result};

pub trait Emulator: Send + Sync {
    /// Writes the outputs of `launch`'s kernel as a correct device would, or an error naming
    /// the kernel, never a silent pass.
    fn emulate(&self, launch: &mut FakeLaunch<'_>) -> Result<()>;
}

pub type KernelEmulation = fn(&mut FakeLaunch<'_>) -> Result<()>;

pub struct FakeLaunch<'a> {
    pub api: Api,
    pub kernel: &'a str,
    pub shape: LaunchShape,
    pub args: &'a [Arg],
    pub(super) program: &'a FakeProgram,
    pub(super) buffers: &'a mut Handles<BufferId, Vec<f32>>,
    /// [`super::FakeScript::wrong_results`] names this kernel.
    pub(super) wrong: bool,
}

impl FakeLaunch<'_> {
    pub fn define(&self, name: &str) -> Option<&str> {
        self.program
            .defines
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The buffer argument at `i` (a texture reads its buffer's floats: the same values).
    pub fn buffer(&self, i: usize) -> Result<BufferId> {
        match self.args.get(i) {
            Some(Arg::Buffer(b) | Arg::Texture { buffer: b, .. }) => Ok(*b),
            _ => Err(self.bad_arg(i, "a buffer")),
        }
    }

    pub fn buffers(&self) -> Vec<BufferId> {
        self.args
            .iter()
            .filter_map(|a| match a {
                Arg::Buffer(b) => Some(*b),
                _ => None,
            })
            .collect()
    }

    pub fn count(&self, i: usize) -> Result<usize> {
        match self.args.get(i) {
            Some(Arg::U32(v)) => Ok(*v as usize),
            _ => Err(self.bad_arg(i, "a count")),
        }
    }

    pub fn read(&self, i: usize) -> Result<&[f32]> {
        self.data(self.buffer(i)?)
    }

    pub fn data(&self, buffer: BufferId) -> Result<&[f32]> {
        Ok(self.buffers.get(buffer)?.as_slice())
    }

    /// Data in constant memory: OpenCL passes it at `i` ([`Arg::Constant`]); on CUDA the
    /// kernel reads `symbol`, which `bind_constant` must have filled.
    pub fn constant(&self, i: usize, symbol: &str) -> Result<&[f32]> {
        if self.api == Api::OpenCl {
            return match self.args.get(i) {
                Some(Arg::Constant(b)) => self.data(*b),
                _ => Err(self.bad_arg(i, "in constant memory")),
            };
        }
        self.program
            .constants
            .iter()
            .find(|(s, _)| s == symbol)
            .map(|(_, d)| d.as_slice())
            .ok_or_else(|| {
                self.refuse(&format!(
                    "__constant__ {symbol} was never filled (bind_constant)"
                ))
            })
    }

    /// Writes `values` to the start of the buffer argument at `i` (the first off by one where
    /// the script asks for wrong results).
    pub fn write(&mut self, i: usize, mut values: Vec<f32>) -> Result<()> {
        if self.wrong {
            if let Some(first) = values.first_mut() {
                *first += 1.0;
            }
        }
        let dst = self.buffers.get_mut(self.buffer(i)?)?;
        let n = values.len().min(dst.len());
        dst[..n].copy_from_slice(&values[..n]);
        Ok(())
    }

    /// Like [`FakeLaunch::write`], for a kernel that writes only some outputs (`None`: left
    /// as it was, as a launch that does not cover them leaves them).
    pub fn write_some(&mut self, i: usize, values: Vec<Option<f32>>) -> Result<()> {
        let mut current = self.read(i)?.to_vec();
        for (c, v) in current.iter_mut().zip(&values) {
            if let Some(v) = v {
                *c = *v;
            }
        }
        current.truncate(values.len());
        self.write(i, current)
    }

    /// Replaces the whole of `buffer` (for kernels that update several buffers in place).
    pub fn replace(&mut self, buffer: BufferId, data: Vec<f32>) -> Result<()> {
        *self.buffers.get_mut(buffer)? = data;
        Ok(())
    }

    pub fn refuse(&self, reason: &str) -> BackendError {
        let detail = format!("kernel '{}': {reason}", self.kernel);
        BackendError::driver(self.api, "launch (fake)", detail)
    }

    fn bad_arg(&self, i: usize, what: &str) -> BackendError {
        BackendError::InvalidHandle(format!(
            "fake: argument {i} of kernel '{}' is not {what}",
            self.kernel
        ))
    }
}
