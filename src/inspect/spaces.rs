//! Memory-space instructions per kernel and side: which path each compiler really took for
//! its loads (a filter in `__constant` memory read with `ld.const`, or not; a gathered operand
//! through the read-only path, `ld.global.nc`, or the texture units, `tex`). A path is one
//! more entry of [`SPACES`].

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::{ptx, write, FamilyPtx, InspectError};
use crate::families::all_variants;

/// The CSV this section writes: `pair,kernel,api,space,count`.
pub const SPACES_CSV: &str = "memory_spaces.csv";

pub struct Space {
    pub label: &'static str,
    /// Whether an instruction (its opcode and modifiers, as `ptx` parses them) is counted.
    pub counts: fn(&str, &[String]) -> bool,
}

pub(super) fn has(modifiers: &[String], m: &str) -> bool {
    modifiers.iter().any(|x| x == m)
}

/// The memory spaces counted, in column order.
pub const SPACES: &[Space] = &[
    Space {
        label: "ld.const",
        counts: |op, m| op == "ld" && has(m, "const"),
    },
    Space {
        label: "ld.global",
        counts: |op, m| matches!(op, "ld" | "ldu") && has(m, "global") && !has(m, "nc"),
    },
    // The read-only (non-coherent) data path: what `__ldg` and `const restrict` may become.
    Space {
        label: "ld.global.nc",
        counts: |op, m| op == "ld" && has(m, "global") && has(m, "nc"),
    },
    Space {
        label: "ld.param",
        counts: |op, m| op == "ld" && has(m, "param"),
    },
    // Texture fetches of any geometry (`tex.1d`, `tex.2d`, ..., `tld4` gathers).
    Space {
        label: "tex",
        counts: |op, _| matches!(op, "tex" | "tld4"),
    },
    // Of those, the fetches with float coordinates (`tex.1d.v4.f32.f32`): an image read whose
    // integer index was converted to float (a sampler's coordinates), where `tex1Dfetch` and a
    // samplerless `read_imagef` fetch at an integer (`.s32`) coordinate.
    Space {
        label: "tex.f32-coord",
        counts: |op, m| matches!(op, "tex" | "tld4") && m.last().is_some_and(|c| c == "f32"),
    },
    // Surface loads and stores: an image the compiler treats as a surface, not a texture.
    Space {
        label: "suld",
        counts: |op, _| op == "suld",
    },
    Space {
        label: "sust",
        counts: |op, _| op == "sust",
    },
];

/// Counts of [`SPACES`] in one kernel of one PTX text; `None` when the text has no such kernel
/// or does not parse.
pub fn count(text: &str, kernel: &str) -> Option<Vec<u64>> {
    let k = ptx::parse_kernel(text, kernel).ok()??;
    Some(
        SPACES
            .iter()
            .map(|s| {
                k.instructions
                    .iter()
                    .filter(|i| (s.counts)(&i.opcode, &i.modifiers))
                    .count() as u64
            })
            .collect(),
    )
}

/// The section's Markdown, and `memory_spaces.csv` in `out`.
pub(super) fn run(
    stems: &[FamilyPtx],
    out: &Path,
    files: &mut Vec<PathBuf>,
) -> Result<String, InspectError> {
    let header: Vec<&str> = SPACES.iter().map(|s| s.label).collect();
    let mut md = format!(
        "| pair | api | {} |\n|---|---|{}\n",
        header.join(" | "),
        "---|".repeat(SPACES.len())
    );
    let mut csv = String::from("pair,kernel,api,space,count\n");
    for v in all_variants().iter().filter(|v| !v.kernel.is_empty()) {
        let Some(stem) = stems.iter().find(|s| s.stem == v.family.file()) else {
            continue;
        };
        let pair = v.full_name();
        for (api, text) in [("OpenCL", &stem.opencl), ("CUDA", &stem.cuda)] {
            let Some(counts) = text.as_ref().and_then(|t| count(t, v.kernel)) else {
                continue;
            };
            let cells: Vec<String> = counts.iter().map(u64::to_string).collect();
            let _ = writeln!(md, "| {pair} | {api} | {} |", cells.join(" | "));
            for (s, c) in SPACES.iter().zip(&counts) {
                let _ = writeln!(csv, "{pair},{},{api},{},{c}", v.kernel, s.label);
            }
        }
    }
    write(&out.join(SPACES_CSV), &csv, files)?;
    Ok(format!(
        "\n## Memory spaces (PTX loads per space)\n\n{md}\nA filter in constant memory is \
         read with `ld.const`; a kernel parameter with `ld.param`; the read-only path is \
         `ld.global.nc` and the texture path `tex` (`tex.f32-coord`: of those, fetches at \
         float coordinates; `suld`/`sust`: surface loads and stores).\n"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = "
.version 8.0
.target sm_90
.address_size 64
.const .align 4 .b8 FILTER[36];
.visible .entry k(.param .u64 k_param_0)
{
    .reg .f32 %f<4>;
    .reg .b64 %rd<3>;
    .reg .b32 %r<2>;
    ld.param.u64 %rd1, [k_param_0];
    ld.const.f32 %f1, [FILTER];
    ld.const.f32 %f2, [FILTER+4];
    ld.global.nc.f32 %f3, [%rd1];
    ld.global.f32 %f3, [%rd1];
    tex.1d.v4.f32.s32 {%f0, %f1, %f2, %f3}, [%rd1, {%r1}];
    tex.2d.v4.f32.f32 {%f0, %f1, %f2, %f3}, [%rd1, {%f1, %f2}];
    suld.b.1d.b32.trap {%r1}, [%rd1, {%r1}];
    st.global.f32 [%rd1], %f1;
    ret;
}
";

    #[test]
    fn loads_are_counted_per_space() {
        // ld.const, ld.global (the .nc load apart), ld.global.nc, ld.param, tex, of which one
        // at float coordinates, suld, sust.
        assert_eq!(count(PTX, "k"), Some(vec![2, 1, 1, 1, 2, 1, 1, 0]));
        assert_eq!(count(PTX, "missing"), None);
    }
}
