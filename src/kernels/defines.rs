//! What a study's `defines` may name. A define reaches one API's compiler as `-DNAME=VALUE`, so
//! one naming an identifier of the API or the kernel (`CLK_LOCAL_MEM_FENCE`, `__syncthreads`, a
//! kernel's variable) would rewrite that side's code under a row claiming one kernel: refused.
//! A kernel's knobs, macros it tests with `#ifdef`, `#ifndef` or `defined(...)`, are allowed.

use std::collections::BTreeSet;

/// Built-ins of OpenCL C and CUDA C++ (functions, variables, qualifiers, fences, types and
/// the compilers' own macros) that a kernel may use without declaring them.
#[rustfmt::skip]
const API_NAMES: &[&str] = &[
    // OpenCL C work-item functions, synchronisation and qualifiers.
    "get_global_id", "get_local_id", "get_group_id", "get_global_size", "get_local_size",
    "get_num_groups", "get_work_dim", "get_global_offset", "get_enqueued_local_size",
    "get_global_linear_id", "get_local_linear_id", "barrier", "work_group_barrier",
    "mem_fence", "read_mem_fence", "write_mem_fence", "kernel", "global", "local",
    "constant", "private", "restrict", "read_only", "write_only", "read_write",
    "reqd_work_group_size", "mad", "fma", "clamp", "min", "max", "sqrt", "rsqrt", "exp",
    "log", "sin", "cos", "dot", "NULL", "INFINITY", "NAN", "MAXFLOAT", "HUGE_VALF",
    // CUDA built-in variables, synchronisation, qualifiers and intrinsics.
    "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "atomicAdd", "atomicSub",
    "atomicMin", "atomicMax", "atomicExch", "atomicCAS", "atomicOr", "atomicAnd",
    "make_float2", "make_float4", "make_int2", "make_int4", "fmaf", "sqrtf", "rsqrtf",
    "expf", "logf", "sinf", "cosf", "fminf", "fmaxf", "fabsf", "tex1Dfetch", "tex2D",
    "cudaTextureObject_t", "extern", "asm",
    // Types and keywords both languages share.
    "float", "float2", "float4", "double", "half", "int", "int2", "int4", "uint", "uint2",
    "uint4", "unsigned", "signed", "long", "ulong", "short", "ushort", "char", "uchar",
    "bool", "void", "size_t", "const", "volatile", "static", "inline", "struct", "union",
    "typedef", "if", "else", "for", "while", "do", "return", "break", "continue", "switch",
    "case", "default", "sizeof", "true", "false", "unroll",
];

/// Prefixes of built-in names: OpenCL's fence flags, versions, extensions and function families,
/// CUDA's intrinsics, and what C reserves for the implementation (`__`, or `_` and a capital).
#[rustfmt::skip]
const API_PREFIXES: &[&str] = &[
    "CLK_", "CL_", "cl_", "__", "FLT_", "DBL_", "M_", "get_", "sub_group_", "work_group_",
    "atomic_", "atom_", "native_", "half_", "vload", "vstore", "convert_", "as_", "async_",
    "read_image", "write_image", "cuda", "atomic", "__shfl", "make_",
];

/// A define that would rewrite one API's code or the kernel.
#[derive(Debug, thiserror::Error)]
pub enum DefineError {
    #[error(
        "field 'defines': {0} is an OpenCL or CUDA built-in; redefining it would change one \
         API's code while the row claims both ran the same kernel"
    )]
    BuiltIn(String),
    #[error(
        "field 'defines': {name} starts {prefix}, a prefix of OpenCL or CUDA built-ins; \
         redefining one would change one API's code while the row claims both ran the same \
         kernel"
    )]
    BuiltInPrefix { name: String, prefix: &'static str },
    #[error(
        "field 'defines': {name} is an identifier of {file}, not one of its knobs (macros it \
         tests with #ifdef, #ifndef or defined); redefining it would rewrite the kernel"
    )]
    KernelIdentifier { name: String, file: String },
}

/// Refuses a define that names one of the APIs' built-ins.
pub fn check_api_name(name: &str) -> Result<(), DefineError> {
    let reserved_by_c =
        name.starts_with('_') && name.chars().nth(1).is_some_and(|c| c.is_ascii_uppercase());
    if API_NAMES.contains(&name) || reserved_by_c {
        return Err(DefineError::BuiltIn(name.to_string()));
    }
    if let Some(p) = API_PREFIXES.iter().find(|p| name.starts_with(*p)) {
        return Err(DefineError::BuiltInPrefix {
            name: name.to_string(),
            prefix: p,
        });
    }
    Ok(())
}

/// Refuses a define naming an identifier of `source` (prelude included) other than a knob.
pub fn check_against_source(name: &str, source: &str, file: &str) -> Result<(), DefineError> {
    let code = without_comments(source);
    let idents = identifiers(&code);
    if idents.contains(name) && !knobs(&code).contains(name) {
        return Err(DefineError::KernelIdentifier {
            name: name.to_string(),
            file: file.to_string(),
        });
    }
    Ok(())
}

/// `text` with `//` and `/* */` comments blanked, so a word in a comment is no identifier.
pub(crate) fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("//") {
            rest = after.find('\n').map_or("", |i| &after[i..]);
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.find("*/").map_or("", |i| &after[i + 2..]);
            out.push(' ');
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

fn identifiers(code: &str) -> BTreeSet<&str> {
    code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| crate::names::is_identifier(w))
        .collect()
}

/// Macros the source tests for being defined: `#ifdef X`, `#ifndef X`, `defined(X)`.
fn knobs(code: &str) -> BTreeSet<&str> {
    let mut found = BTreeSet::new();
    for line in code.lines() {
        let line = line.trim_start();
        let Some(directive) = line.strip_prefix('#') else {
            continue;
        };
        let directive = directive.trim_start();
        for head in ["ifdef", "ifndef"] {
            if let Some(name) = directive.strip_prefix(head) {
                found.extend(name.split_whitespace().next());
            }
        }
        let mut rest = directive;
        while let Some(i) = rest.find("defined") {
            rest = &rest[i + "defined".len()..];
            let name = rest
                .trim_start()
                .trim_start_matches('(')
                .trim_start()
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .next()
                .unwrap_or("");
            if !name.is_empty() {
                found.insert(name);
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_ins_of_either_api_are_refused() {
        for name in [
            "CLK_LOCAL_MEM_FENCE",
            "get_global_id",
            "barrier",
            "__syncthreads",
            "threadIdx",
            "_Bool",
        ] {
            assert!(check_api_name(name).is_err(), "{name}");
        }
        for name in ["USE_SUBGROUPS", "REQD_WG", "MV_VEC", "FOO"] {
            assert!(check_api_name(name).is_ok(), "{name}");
        }
    }

    #[test]
    fn a_kernel_identifier_is_refused_and_a_knob_is_not() {
        let src = "#ifndef TILE\n#define TILE 4\n#endif\n#if defined(REQD) && REQD\n#endif\n\
                   // acc in a comment only: mentioned\n__kernel void k(float *acc_out) { \
                   int row = TILE; }\n";
        assert!(check_against_source("row", src, "k.cl").is_err());
        assert!(check_against_source("acc_out", src, "k.cl").is_err());
        for ok in ["TILE", "REQD", "mentioned", "ABSENT"] {
            assert!(check_against_source(ok, src, "k.cl").is_ok(), "{ok}");
        }
    }
}
