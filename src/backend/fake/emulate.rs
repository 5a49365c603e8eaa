//! The fake's host emulations of the shipped kernels: what each kernel computes, written to
//! its output buffers, so that a run on the fake verifies as a correct device's would.

use super::FakeBackend;
use crate::backend::{Api, Arg, BackendError, BufferId, LaunchShape, ProgramId, Result};
use crate::workload::{math, matvec_shapes, reference, sgemm};

/// The buffers and numbers of a launch, read in declaration order.
struct ArgView<'a> {
    args: &'a [Arg],
}

impl ArgView<'_> {
    fn buffer(&self, i: usize) -> Result<BufferId> {
        match self.args.get(i) {
            // A texture reads the buffer's floats: the same values, another path.
            Some(Arg::Buffer(b) | Arg::Texture { buffer: b, .. }) => Ok(*b),
            _ => Err(BackendError::InvalidHandle(format!(
                "fake: argument {i} is not a buffer"
            ))),
        }
    }

    /// A buffer in constant memory: OpenCL passes it at `i` ([`Arg::Constant`]); CUDA passes
    /// nothing there and the kernel reads the symbol bound to its program.
    fn constant(&self, i: usize) -> Result<BufferId> {
        match self.args.get(i) {
            Some(Arg::Constant(b)) => Ok(*b),
            _ => Err(BackendError::InvalidHandle(format!(
                "fake: argument {i} is not in constant memory"
            ))),
        }
    }

    fn count(&self, i: usize) -> Result<usize> {
        match self.args.get(i) {
            Some(Arg::U32(v)) => Ok(*v as usize),
            _ => Err(BackendError::InvalidHandle(format!(
                "fake: argument {i} is not a count"
            ))),
        }
    }
}

impl FakeBackend {
    /// The data of a constant-memory argument at `i`: the OpenCL argument's buffer, or on
    /// CUDA the symbol `symbol` bound to `program` (an error when nothing was bound).
    fn constant_data(
        &self,
        program: ProgramId,
        a: &ArgView,
        i: usize,
        symbol: &str,
    ) -> Result<Vec<f32>> {
        if self.api == Api::OpenCl {
            return Ok(self.buffers.get(a.constant(i)?)?.clone());
        }
        let p = self.programs.get(program)?;
        p.constants
            .iter()
            .find(|(s, _)| s == symbol)
            .map(|(_, d)| d.clone())
            .ok_or_else(|| {
                BackendError::driver(
                    self.api,
                    "launch (fake)",
                    format!("__constant__ {symbol} was never filled (bind_constant)"),
                )
            })
    }

    /// The constant-memory kernels (Sobel, broadcast); `None` for any other kernel.
    fn emulate_constmem(
        &self,
        kernel: &str,
        program: ProgramId,
        shape: LaunchShape,
        a: &ArgView,
    ) -> Result<Option<(BufferId, Vec<Option<f32>>)>> {
        use crate::workload::constmem::{self, Image, FILTER_SYMBOL, TABLE_SYMBOL};
        let global = shape.global();
        if let Some(placement) = kernel.strip_prefix("sobel_") {
            let (filter, w_at) = match placement.trim_end_matches("_x4") {
                "constant" => (self.constant_data(program, a, 2, FILTER_SYMBOL)?, 3),
                "global" => (self.buffers.get(a.buffer(2)?)?.clone(), 3),
                _ => (constmem::FILTER_X.to_vec(), 2),
            };
            let img = Image {
                w: a.count(w_at)? as u64,
                h: a.count(w_at + 1)? as u64,
            };
            let data = self.buffers.get(a.buffer(0)?)?;
            let [x, y] = shape.global_dims();
            let cover = (
                x * constmem::cols_per_kernel(kernel),
                y * constmem::SOBEL_ROWS,
            );
            let out = constmem::emulate_sobel(data, &filter, img, cover);
            return Ok(Some((a.buffer(1)?, out)));
        }
        if let Some(kind) = kernel.strip_prefix("broadcast_") {
            let table = if kind.starts_with("constant") {
                self.constant_data(program, a, 0, TABLE_SYMBOL)?
            } else {
                self.buffers.get(a.buffer(0)?)?.clone()
            };
            let n = a.count(2)?.min(table.len());
            let sum = table[..n].iter().map(|x| f64::from(*x)).sum::<f64>() as f32;
            return Ok(Some((a.buffer(1)?, vec![Some(sum); global as usize])));
        }
        Ok(None)
    }

    /// Runs `kernel` on the host: what the shipped kernel of that name computes.
    pub(super) fn emulate(
        &mut self,
        kernel: &str,
        program: ProgramId,
        shape: LaunchShape,
        args: &[Arg],
        iters: u32,
    ) -> Result<()> {
        let a = ArgView { args };
        let global = shape.global() as usize;
        if let Some((buffer, values)) = self.emulate_constmem(kernel, program, shape, &a)? {
            return self.store_some(kernel, buffer, values);
        }
        let out = if kernel == "matvec_split_k" || kernel == "matvec_split_wide" {
            let (m, cols, rows, v) = (a.buffer(0)?, a.count(1)?, a.count(2)?, a.buffer(3)?);
            let (m, v) = (self.buffers.get(m)?, self.buffers.get(v)?);
            let p = matvec_shapes::partial_sums(m, v, rows, cols, a.count(5)?);
            (a.buffer(4)?, p)
        } else if kernel == matvec_shapes::SPLIT_K_FINAL {
            let p = self.buffers.get(a.buffer(0)?)?;
            (
                a.buffer(1)?,
                matvec_shapes::final_sums(p, a.count(2)?, a.count(3)?),
            )
        } else if kernel.starts_with("matvec_") {
            let (m, cols, rows, v) = (a.buffer(0)?, a.count(1)?, a.count(2)?, a.buffer(3)?);
            let (w, _) = reference::matvec(self.buffers.get(m)?, self.buffers.get(v)?, rows, cols);
            (a.buffer(4)?, w.iter().map(|x| *x as f32).collect())
        } else if kernel == "reduce_final" {
            let (partial, groups) = (self.buffers.get(a.buffer(0)?)?, a.count(2)?);
            let (s, _) = reference::sum(&partial[..groups.min(partial.len())]);
            (a.buffer(1)?, vec![s as f32])
        } else if kernel.starts_with("reduce_") {
            (
                a.buffer(1)?,
                self.strided_sums(a.buffer(0)?, a.count(2)?, shape.groups as usize)?,
            )
        } else if kernel == "peak_read" {
            (
                a.buffer(1)?,
                self.strided_sums(a.buffer(0)?, a.count(2)?, global)?,
            )
        } else if kernel == "peak_copy" {
            let x = self.buffers.get(a.buffer(0)?)?;
            (a.buffer(1)?, x[..a.count(2)?.min(x.len())].to_vec())
        } else if kernel == "peak_fma" {
            let x = self.buffers.get(a.buffer(0)?)?;
            let n = a.count(2)?.clamp(1, x.len());
            let out = (0..global).map(|g| reference::fma_chain(x[g % n], iters) as f32);
            (a.buffer(1)?, out.collect())
        } else if kernel == "fft512_forward" {
            let x = self.buffers.get(a.buffer(0)?)?;
            (
                a.buffer(1)?,
                crate::workload::fft::forward_all(x, a.count(3)?),
            )
        } else if kernel.starts_with("sgemm_") {
            let n = a.count(3)?;
            let (x, y) = (
                self.buffers.get(a.buffer(0)?)?,
                self.buffers.get(a.buffer(1)?)?,
            );
            (a.buffer(2)?, sgemm::full(x, y, n))
        } else if kernel.starts_with("math_") {
            let x = self.buffers.get(a.buffer(0)?)?;
            let n = a.count(2)?.clamp(1, x.len());
            let f = math::of_kernel(kernel);
            let out = (0..global).map(|g| math::chain(f, x[g % n], iters) as f32);
            (a.buffer(1)?, out.collect())
        } else if kernel == "stencil_fdtd3d" {
            let (input, coeff) = (
                self.buffers.get(a.buffer(0)?)?,
                self.buffers.get(a.buffer(2)?)?,
            );
            let dims = (a.count(3)?, a.count(4)?, a.count(5)?);
            let out = crate::workload::stencil::emulate(input, coeff, dims.0, dims.1, dims.2);
            (a.buffer(1)?, out)
        } else if kernel.starts_with("spmv_") {
            let b = |i| a.buffer(i).and_then(|id| self.buffers.get(id));
            let y = crate::workload::spmv::emulate(b(0)?, b(1)?, b(2)?, b(3)?, a.count(4)?);
            (a.buffer(5)?, y)
        } else if kernel.starts_with("md_") {
            let (pos, list) = (
                self.buffers.get(a.buffer(0)?)?,
                self.buffers.get(a.buffer(1)?)?,
            );
            let force = crate::workload::md::emulate(pos, list, a.count(2)?);
            (a.buffer(3)?, force)
        } else if kernel.starts_with("fill_") {
            let len = self.buffers.get(a.buffer(0)?)?.len();
            (a.buffer(0)?, crate::workload::fill::emulate(args, len))
        } else if kernel.starts_with("bfs_") {
            return self.emulate_bfs(kernel, args);
        } else if kernel == "launch_empty" {
            (a.buffer(1)?, vec![a.count(2)? as f32])
        } else {
            return Err(BackendError::driver(
                self.api,
                "launch (fake)",
                format!("the fake backend cannot emulate kernel '{kernel}'"),
            ));
        };
        self.store(kernel, out.0, out.1)
    }

    /// Runs a BFS kernel on copies of its buffers, then stores them back: it writes several.
    fn emulate_bfs(&mut self, kernel: &str, args: &[Arg]) -> Result<()> {
        let ids: Vec<BufferId> = args
            .iter()
            .filter_map(|a| match a {
                Arg::Buffer(b) => Some(*b),
                _ => None,
            })
            .collect();
        let n = ArgView { args }.count(args.len() - 1)?;
        let mut bufs = ids
            .iter()
            .map(|b| self.buffers.get(*b).cloned())
            .collect::<Result<Vec<_>>>()?;
        crate::workload::bfs::emulate(kernel, &mut bufs, n)
            .map_err(|e| BackendError::driver(self.api, "launch (fake)", e))?;
        for (id, data) in ids.iter().zip(bufs) {
            *self.buffers.get_mut(*id)? = data;
        }
        Ok(())
    }

    /// `parts` partial sums of the first `n` floats of `x`, element `i` going to `i % parts`.
    fn strided_sums(&self, x: BufferId, n: usize, parts: usize) -> Result<Vec<f32>> {
        let x = self.buffers.get(x)?;
        let mut sums = vec![0.0f64; parts.max(1)];
        for (i, v) in x[..n.min(x.len())].iter().enumerate() {
            sums[i % parts.max(1)] += f64::from(*v);
        }
        Ok(sums.into_iter().map(|s| s as f32).collect())
    }

    /// Like [`FakeBackend::store`], for a kernel that writes only some outputs (`None`: left
    /// as it was, as a launch that does not cover them leaves them).
    fn store_some(
        &mut self,
        kernel: &str,
        buffer: BufferId,
        values: Vec<Option<f32>>,
    ) -> Result<()> {
        let mut current = self.buffers.get(buffer)?.clone();
        for (c, v) in current.iter_mut().zip(&values) {
            if let Some(v) = v {
                *c = *v;
            }
        }
        current.truncate(values.len());
        self.store(kernel, buffer, current)
    }

    pub(super) fn store(
        &mut self,
        kernel: &str,
        buffer: BufferId,
        mut values: Vec<f32>,
    ) -> Result<()> {
        if self.script.wrong_results.iter().any(|k| k == kernel) {
            if let Some(first) = values.first_mut() {
                *first += 1.0;
            }
        }
        let dst = self.buffers.get_mut(buffer)?;
        let n = values.len().min(dst.len());
        dst[..n].copy_from_slice(&values[..n]);
        Ok(())
    }
}
