//! How a kernel reads the operand it gathers (SpMV's `x`, MD's positions): global loads, the
//! read-only path or the texture path, named by a variant's suffix (`scalar-tex`), and the
//! staging both gathering families share.

use crate::backend::{Arg, BufferId};
use crate::families::plan::{Build, Built, ExecError};

pub use crate::rows::ReadPath;

/// The kernel argument that passes `buffer` along `path`.
pub fn path_arg(path: ReadPath, buffer: BufferId, channels: u32) -> Arg {
    match path {
        ReadPath::Tex => Arg::Texture { buffer, channels },
        _ => Arg::Buffer(buffer),
    }
}

/// The SpMV and MD kernels' common staging: `a` (values or positions), the integer arrays,
/// one output per reference value; `args_of` adds the family's own arguments (SpMV's `x`).
pub(crate) fn gather_build(
    cx: &mut Build<'_>,
    args_of: impl FnOnce(&mut Build<'_>, ReadPath, BufferId, &[BufferId]) -> Result<Vec<Arg>, ExecError>,
) -> Result<Built, ExecError> {
    let k = cx.kernel()?;
    let inputs = cx.inputs;
    let path = ReadPath::of(cx.variant.name);
    let a = cx.upload(&inputs.a)?;
    let mut ints = Vec::new();
    for data in &inputs.ints {
        ints.push(cx.upload_u32(data)?);
    }
    let len = inputs.reference.len();
    let out = cx.output(len)?;
    let mut args = args_of(cx, path, a, &ints)?;
    args.push(Arg::Buffer(out));
    Ok(Built::into(vec![cx.launch(k, args)], out, len))
}

/// `scalar-tex` -> `scalar`, `lj-ro` -> `lj`; a name with no read-path suffix unchanged.
pub fn without_read_path(name: &'static str) -> &'static str {
    match ReadPath::of(name) {
        ReadPath::Global => name,
        _ => name.rsplit_once('-').map_or(name, |(stem, _)| stem),
    }
}
