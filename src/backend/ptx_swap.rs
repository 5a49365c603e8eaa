//! The PTX cross-load: each NVIDIA runtime runs the other front end's PTX (study key
//! `program = "other"`). Each runtime reads things from the text that the other front end
//! spells differently, so the text is adapted here, only in ways that cannot change the
//! computation, or refused with the reason.
//!
//! * OpenCL's PTX on the CUDA driver: NVIDIA's OpenCL passes launch-wide values in
//!   environment registers (`%envreg`), which the CUDA driver leaves unset: `get_group_id(0)`
//!   is `%envreg0 + %ctaid.x`, `get_num_groups(0)` is `%envreg6`, `get_global_id(0/1)` adds
//!   `%envreg3`/`%envreg4` (results/*/inspect/*.opencl.ptx). For one launch without a global
//!   offset (the only launch the harness makes) those reads become constants and `%nctaid`;
//!   the y/z registers follow by analogy, and verification guards every swapped run.
//! * CUDA's PTX on NVIDIA's OpenCL: the runtime learns which arguments are buffers from
//!   `.ptr .global` in the entry's parameters. Without it `clSetKernelArg` passes the `cl_mem`
//!   handle itself (on an H100 the launch failed and left the context unusable). The harness
//!   passes no 64-bit scalars, so every `.u64` parameter gains `.ptr .global .align 4`.
//! * Texture reads cross in the nearest form the other runtime binds: see the `texture`
//!   module.
//!
//! Kernels whose arguments differ between the APIs by design are refused (`NOT_CROSSING`).

mod texture;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use thiserror::Error;

#[derive(Debug, Error)]
#[error("{0}")]
pub struct CannotCross(String);

impl From<String> for CannotCross {
    fn from(why: String) -> Self {
        CannotCross(why)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// OpenCL's PTX through the CUDA driver.
    CudaDriver,
    /// NVRTC's PTX as a program binary of NVIDIA's OpenCL.
    NvidiaOpenCl,
}

const NOT_CROSSING: &[(&str, &str)] = &[
    (
        ".ptr .shared",
        "a __local pointer argument (OpenCL sizes it at launch, CUDA passes no such argument)",
    ),
    (
        ".ptr .const",
        "a __constant argument (CUDA keeps constant data in a module symbol, not an argument)",
    ),
    (
        ".extern .shared",
        "dynamic shared memory (OpenCL passes it as a __local argument)",
    ),
    (".param .samplerref", "a sampler argument (OpenCL only)"),
];

/// Matched at the start of an instruction.
const NOT_CROSSING_OPS: &[(&str, &str)] =
    &[("suld.", "a surface read"), ("sust.", "a surface write")];

/// The instruction of a PTX line without its guard predicate (`@%p1 bra` is `bra`).
fn instruction(line: &str) -> &str {
    let t = line.trim_start();
    match t.strip_prefix('@') {
        Some(guarded) => guarded
            .split_once(char::is_whitespace)
            .map_or("", |(_, rest)| rest.trim_start()),
        None => t,
    }
}

/// The opcode and operands of one PTX instruction.
fn operands(line: &str) -> Vec<&str> {
    line.split(|c: char| c.is_whitespace() || c == ',' || c == ';')
        .filter(|w| !w.is_empty())
        .collect()
}

pub fn adapt(text: &str, target: Target) -> Result<String, CannotCross> {
    refuse_what_does_not_cross(text, target)?;
    let mut out = String::with_capacity(text.len() + 256);
    match target {
        Target::CudaDriver => {
            let mut in_sampler = false;
            let mut textures = texture::TexrefsToRegisters::default();
            for line in text.lines() {
                // A module-level sampler (OpenCL's `samp$N`) is dropped, to its closing `;`.
                if in_sampler || texture::declares_sampler(line) {
                    in_sampler = !line.contains(';');
                    continue;
                }
                let line = textures.rewrite(line)?;
                let _ = writeln!(out, "{}", for_cuda_line(&line)?);
            }
        }
        Target::NvidiaOpenCl => {
            let textures = texture::nvrtc_texture_params(text)?;
            let mut in_params = false;
            for line in text.lines() {
                let line = texture::handle_from_texref(line, &textures);
                let line = for_opencl_line(&line, &mut in_params, &textures)?;
                let _ = writeln!(out, "{line}");
            }
        }
    }
    Ok(out)
}

fn refuse_what_does_not_cross(text: &str, target: Target) -> Result<(), CannotCross> {
    for (marker, why) in NOT_CROSSING {
        if text.contains(marker) {
            return Err(format!("the PTX uses {why} (`{marker}`)").into());
        }
    }
    for (op, why) in NOT_CROSSING_OPS {
        if text.lines().any(|l| instruction(l).starts_with(op)) {
            return Err(format!("the PTX uses {why} (`{op}`)").into());
        }
    }
    // A module-level `.const` variable is CUDA's `__constant__` symbol; OpenCL's launch would
    // pass the data as an argument the PTX does not declare.
    let module_const = text.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with(".const ") || l.starts_with(".visible .const ")
    });
    if target == Target::NvidiaOpenCl && module_const {
        let why = "the PTX reads a __constant__ module symbol (OpenCL passes constant data as \
                   an argument)";
        return Err(CannotCross(why.into()));
    }
    Ok(())
}

fn envreg_value(register: u32) -> Option<&'static str> {
    match register {
        // Group-id offsets (x, y, z): 0 for one launch; global offsets: the harness sets none.
        0..=5 => Some("0"),
        6 => Some("%nctaid.x"),
        7 => Some("%nctaid.y"),
        8 => Some("%nctaid.z"),
        _ => None,
    }
}

/// `mov.b32 %rN, %envregK;` becomes a move of what the register holds; any other use of
/// `%envreg` is refused.
fn for_cuda_line(line: &str) -> Result<String, CannotCross> {
    if let Some(target) = line.trim_start().strip_prefix(".target ") {
        // Unified texture mode: the CUDA texture object carries the sampling state.
        let target = target.replace(", texmode_independent", "");
        return Ok(format!(".target {target}"));
    }
    let Some(at) = line.find("%envreg") else {
        return Ok(line.to_string());
    };
    let digits: String = line[at + "%envreg".len()..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let register: u32 = digits
        .parse()
        .map_err(|_| format!("unreadable environment register in `{}`", line.trim()))?;
    let value = envreg_value(register).ok_or_else(|| {
        format!(
            "the PTX reads %envreg{register}, whose meaning in NVIDIA's OpenCL is not known \
             here (an OpenCL-only built-in such as get_work_dim)"
        )
    })?;
    match operands(line).as_slice() {
        [op, dst, src] if op.starts_with("mov.") && src.starts_with("%envreg") => {
            Ok(format!("\tmov.u32 \t{dst}, {value};"))
        }
        _ => Err(format!(
            "the PTX reads an environment register in a form not adapted here: `{}`",
            line.trim()
        )
        .into()),
    }
}

/// As OpenCL's front end writes it: no `.visible`, buffers `.ptr .global`,
/// `texmode_independent` unless `textures` are read through registers (only unified mode
/// allows it; those parameters become `.texref`).
fn for_opencl_line(
    line: &str,
    in_params: &mut bool,
    textures: &BTreeMap<String, String>,
) -> Result<String, CannotCross> {
    let trimmed = line.trim_start();
    if let Some(target) = trimmed.strip_prefix(".target ") {
        if target.contains("texmode") || !textures.is_empty() {
            return Ok(line.to_string());
        }
        return Ok(format!(".target {}, texmode_independent", target.trim()));
    }
    if trimmed.starts_with(".visible .entry ") || trimmed.starts_with(".entry ") {
        *in_params = !trimmed.contains(')');
        return Ok(trimmed.replacen(".visible .entry ", ".entry ", 1));
    }
    if !*in_params {
        return Ok(line.to_string());
    }
    if trimmed.starts_with(')') {
        *in_params = false;
        return Ok(line.to_string());
    }
    let Some(rest) = trimmed.strip_prefix(".param ") else {
        return Ok(line.to_string());
    };
    let mut words = rest.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (Some(".u64"), Some(name), None) if textures.contains_key(name.trim_end_matches(',')) => {
            Ok(format!("\t.param .texref {name}"))
        }
        (Some(".u64"), Some(name), None) => {
            Ok(format!("\t.param .u64 .ptr .global .align 4 {name}"))
        }
        // Already marked (OpenCL's own form).
        (Some(".u64"), Some(".ptr"), Some(".global")) => Ok(line.to_string()),
        (Some(".u32" | ".f32" | ".b32" | ".s32"), Some(_), None) => Ok(line.to_string()),
        _ => Err(format!(
            "a kernel parameter not adapted here: `{}` (only buffers and 32-bit scalars cross)",
            trimmed.trim_end_matches(',')
        )
        .into()),
    }
}

/// A `.maxnreg` directive after each `.entry`'s parameter list (replacing one there): the PTX
/// ISA's own `CU_JIT_MAX_REGISTERS`, so the cap needs no other load path.
pub fn cap_registers(ptx: &str, registers: u32) -> String {
    let directive = format!(".maxnreg {registers}");
    let mut out = String::with_capacity(ptx.len() + 64);
    let mut in_entry_header = false;
    for line in ptx.lines() {
        let trimmed = line.trim_start();
        if trimmed.contains(".entry ") {
            in_entry_header = true;
        }
        if in_entry_header && trimmed.starts_with(".maxnreg") {
            continue;
        }
        if in_entry_header && trimmed.starts_with('{') {
            out.push_str(&directive);
            out.push('\n');
            in_entry_header = false;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_register_cap_goes_after_each_entrys_parameters_once() {
        let ptx = ".version 8.0\n.visible .entry k(\n\t.param .u64 p\n)\n.maxntid 256, 1, 1\n\
                   .maxnreg 64\n{\n\tret;\n}\n.visible .entry j()\n{\n\tret;\n}\n";
        let capped = cap_registers(ptx, 153);
        assert_eq!(capped.matches(".maxnreg 153").count(), 2, "{capped}");
        assert!(
            !capped.contains(".maxnreg 64"),
            "the old cap is replaced: {capped}"
        );
        let at = capped.find(".maxnreg 153").unwrap();
        assert!(
            capped[..at].contains(".maxntid 256"),
            "after the entry's other directives"
        );
        assert_eq!(cap_registers("{ no entry }\n", 32), "{ no entry }\n");
    }
    use super::*;

    const OPENCL: &str = "\
.version 9.0
.target sm_90, texmode_independent
.entry matvec_listing4(
\t.param .u64 .ptr .global .align 4 matvec_listing4_param_0,
\t.param .u32 matvec_listing4_param_1
)
{
\tmov.b32 \t%r13, %envreg0;
\tmov.u32 \t%r14, %ctaid.x;
\tmov.b32 \t%r4, %envreg6;
\tmov.b32 \t%r43, %envreg4;
}
";

    const NVRTC: &str = "\
.version 9.0
.target sm_90
.address_size 64
.visible .entry matvec_listing4(
\t.param .u64 matvec_listing4_param_0,
\t.param .u32 matvec_listing4_param_1,
\t.param .f32 matvec_listing4_param_2
)
{
\tld.param.u64 \t%rd5, [matvec_listing4_param_0];
}
";

    #[test]
    fn opencl_environment_registers_become_what_one_launch_holds() {
        let out = adapt(OPENCL, Target::CudaDriver).unwrap();
        assert!(!out.contains("%envreg"), "{out}");
        assert!(out.contains("mov.u32 \t%r13, 0;"), "{out}");
        assert!(out.contains("mov.u32 \t%r4, %nctaid.x;"), "{out}");
        assert!(out.contains("mov.u32 \t%r43, 0;"), "{out}");
        // Everything else is untouched, the parameter list included.
        assert!(out.contains("mov.u32 \t%r14, %ctaid.x;"));
        assert!(out.contains(".param .u64 .ptr .global .align 4 matvec_listing4_param_0,"));
    }

    #[test]
    fn unknown_or_odd_environment_registers_are_refused() {
        let e = adapt("\tmov.b32 \t%r1, %envreg9;\n", Target::CudaDriver)
            .unwrap_err()
            .to_string();
        assert!(e.contains("%envreg9"), "{e}");
        let e = adapt("\tadd.s32 \t%r1, %r2, %envreg0;\n", Target::CudaDriver)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not adapted"), "{e}");
    }

    #[test]
    fn nvrtc_buffers_are_marked_global_for_opencl() {
        let out = adapt(NVRTC, Target::NvidiaOpenCl).unwrap();
        assert!(out.contains(".target sm_90, texmode_independent"), "{out}");
        assert!(out.contains("\n.entry matvec_listing4("), "{out}");
        assert!(!out.contains(".visible"), "{out}");
        assert!(
            out.contains("\t.param .u64 .ptr .global .align 4 matvec_listing4_param_0,"),
            "{out}"
        );
        assert!(out.contains("\t.param .u32 matvec_listing4_param_1,"));
        assert!(out.contains("\t.param .f32 matvec_listing4_param_2\n"));
        // The body's loads of the parameters are unchanged.
        assert!(out.contains("ld.param.u64 \t%rd5, [matvec_listing4_param_0];"));
    }

    #[test]
    fn kernels_whose_arguments_differ_by_api_are_refused() {
        let local = OPENCL.replace(".ptr .global .align 4", ".ptr .shared .align 4");
        let e = adapt(&local, Target::CudaDriver).unwrap_err().to_string();
        assert!(e.contains("__local"), "{e}");
        let constant = format!(".const .align 4 .b8 coeffs[64];\n{NVRTC}");
        let e = adapt(&constant, Target::NvidiaOpenCl)
            .unwrap_err()
            .to_string();
        assert!(e.contains("__constant__"), "{e}");
        let sampler_arg = OPENCL.replace(".param .u32", ".param .samplerref");
        let e = adapt(&sampler_arg, Target::CudaDriver)
            .unwrap_err()
            .to_string();
        assert!(e.contains("sampler argument"), "{e}");
        let orphan =
            format!("{NVRTC}\ttex.1d.v4.f32.s32 \t{{%f1, %f2, %f3, %f4}}, [%rd9, {{%r1}}];\n");
        let e = adapt(&orphan, Target::NvidiaOpenCl)
            .unwrap_err()
            .to_string();
        assert!(e.contains("%rd9"), "{e}");
        let wide = NVRTC.replace(".param .f32 matvec", ".param .align 8 .b8 matvec");
        let e = adapt(&wide, Target::NvidiaOpenCl).unwrap_err().to_string();
        assert!(e.contains("not adapted"), "{e}");
    }

    /// The texture read of `spmv_csr_scalar_tex` as NVIDIA's OpenCL writes it (H100, driver
    /// 580.159.04, the `inspect` PTX of that kernel), shortened.
    const OPENCL_TEX: &str = "\
.version 9.0
.target sm_90, texmode_independent
.global .samplerref samp$2 = { addr_mode_0 = wrap, addr_mode_1 = wrap, addr_mode_2 = wrap, filter_mode = nearest, force_unnormalized_coords = 1 };
.entry k(
\t.param .u64 .ptr .global .align 4 k_param_0,
\t.param .texref k_param_3,
\t.param .u32 k_param_4
)
{
\ttex.1d.v4.f32.s32 \t{%f7, %f8, %f9, %f10}, [k_param_3, samp$2, {%r11}];
}
";

    /// The same read as NVRTC writes it (same run), shortened.
    const NVRTC_TEX: &str = "\
.version 9.0
.target sm_90
.address_size 64
.visible .entry k(
\t.param .u64 k_param_0,
\t.param .u64 k_param_3,
\t.param .u32 k_param_4
)
{
\tld.param.u64 \t%rd7, [k_param_0];
\tld.param.u64 \t%rd5, [k_param_3];
\ttex.1d.v4.f32.s32 \t{%f13, %f14, %f15, %f16}, [%rd5, {%r18}];
}
";

    #[test]
    fn opencl_texture_reads_cross_to_the_cuda_driver_in_unified_mode() {
        let out = adapt(OPENCL_TEX, Target::CudaDriver).unwrap();
        assert!(out.contains("\n.target sm_90\n"), "{out}");
        assert!(!out.contains("samp"), "{out}");
        assert!(!out.contains(".texref"), "{out}");
        assert!(out.contains("\t.param .u64 k_param_3,"), "{out}");
        assert!(
            out.contains("{\n\t.reg .b64 \t%rdtex<1>;\n\tld.param.u64 \t%rdtex0, [k_param_3];\n"),
            "{out}"
        );
        assert!(out.contains("[%rdtex0, {%r11}];"), "{out}");
    }

    #[test]
    fn nvrtc_texture_objects_cross_to_opencl_as_texref_parameters() {
        let out = adapt(NVRTC_TEX, Target::NvidiaOpenCl).unwrap();
        // Unified mode stays: the fetch reads the handle from a register.
        assert!(out.contains("\n.target sm_90\n"), "{out}");
        assert!(out.contains("\t.param .texref k_param_3,"), "{out}");
        assert!(out.contains("\tmov.u64 \t%rd5, k_param_3;"), "{out}");
        assert!(out.contains("[%rd5, {%r18}];"), "{out}");
        // The other buffer stays a buffer, loaded as before.
        assert!(
            out.contains(".param .u64 .ptr .global .align 4 k_param_0,"),
            "{out}"
        );
        assert!(out.contains("ld.param.u64 \t%rd7, [k_param_0];"), "{out}");
    }

    #[test]
    fn a_text_already_in_opencl_form_is_unchanged() {
        // Adapting OpenCL's own entry for OpenCL changes nothing: the rewrite is idempotent.
        let once = adapt(NVRTC, Target::NvidiaOpenCl).unwrap();
        assert_eq!(adapt(&once, Target::NvidiaOpenCl).unwrap(), once);
    }
}
