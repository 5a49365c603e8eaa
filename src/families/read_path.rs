//! How a kernel reads the operand it gathers (SpMV's `x`, MD's positions): global loads, the
//! read-only path or the texture path, named by a variant's suffix (`scalar-tex`), and the
//! staging both gathering families share.

use crate::backend::{Arg, BufferId};
use crate::families::plan::{Build, Built, ExecError};

crate::names::named_enum! {
    /// How a kernel reads the gathered operand (SpMV's `x`, MD's positions).
    #[strum(serialize_all = "lowercase")]
    pub enum ReadPath {
        /// A plain `const` pointer: ordinary global loads.
        Global,
        /// `const restrict` pointers on both sides, and CUDA's `__ldg` on the gather: the
        /// read-only (non-coherent) data path, where each compiler chooses to take it.
        Ro,
        /// An OpenCL `image1d_buffer_t` read with `read_imagef` / a CUDA texture object read
        /// with `tex1Dfetch`: the texture path.
        Tex,
    }
}

impl ReadPath {
    /// The path a variant's name ends in (`scalar-tex`), `Global` when it names none.
    pub fn of(variant: &str) -> ReadPath {
        match variant.rsplit_once('-').map(|(_, p)| p) {
            Some("ro") => ReadPath::Ro,
            Some("tex") => ReadPath::Tex,
            _ => ReadPath::Global,
        }
    }

    /// The kernel argument that passes `buffer` along this path.
    pub fn arg(self, buffer: BufferId, channels: u32) -> Arg {
        match self {
            ReadPath::Tex => Arg::Texture { buffer, channels },
            _ => Arg::Buffer(buffer),
        }
    }
}

/// The SpMV and MD kernels' common staging: `a` (values or positions), the integer arrays,
/// one output per reference value; `then` adds the family's own arguments (SpMV's `x`).
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
