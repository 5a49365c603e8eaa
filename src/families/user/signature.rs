//! The parameter list of a user's kernel, read from its source text, so the arguments a study
//! declares are held to the kernel's own signature (count, buffer or scalar, element type)
//! before anything is compiled or launched: the backends' launches pass each argument as the
//! kind the caller says, and trust that it is the kind the kernel declares.

/// The kind of one kernel parameter as the source declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// For messages.
    pub name: String,
    /// A pointer (a buffer), or a value.
    pub pointer: bool,
    /// A pointer's element type or a value's type: `f32`, `i32`, `u32`, or the source's spelling.
    pub element: String,
}

#[derive(Debug, thiserror::Error)]
pub enum SignatureError {
    #[error("the parameter list of kernel '{0}' is not closed")]
    NotClosed(String),
    #[error("no kernel '{0}' (a function declared __kernel or __global__) in the file")]
    NoKernel(String),
    #[error("cannot read the parameter '{0}'")]
    Unreadable(String),
    #[error("the parameter '{0}' has no type")]
    NoType(String),
}

/// The parameters of kernel `kernel` in `source` (OpenCL C or CUDA C++).
pub fn kernel_params(source: &str, kernel: &str) -> Result<Vec<Param>, SignatureError> {
    let text = crate::kernels::defines::without_comments(source);
    let list = parameter_list(&text, kernel)?;
    if list.trim().is_empty() || list.trim() == "void" {
        return Ok(Vec::new());
    }
    split_top_level(&list).iter().map(|p| param(p)).collect()
}

/// The text between the parentheses of the kernel's definition: the first `kernel(` preceded
/// by a kernel qualifier (`__kernel`, `kernel`, `__global__`) in the same declaration.
fn parameter_list(text: &str, kernel: &str) -> Result<String, SignatureError> {
    let bytes = text.as_bytes();
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut from = 0;
    while let Some(found) = text[from..].find(kernel) {
        let start = from + found;
        let end = start + kernel.len();
        from = end;
        if (start > 0 && is_ident(bytes[start - 1])) || (end < bytes.len() && is_ident(bytes[end]))
        {
            continue;
        }
        let rest = text[end..].trim_start();
        if !rest.starts_with('(') {
            continue;
        }
        // The declaration starts after the previous `;`, `}` or preprocessor line.
        let head_start = text[..start].rfind([';', '}', '#']).map_or(0, |i| i + 1);
        let head = &text[head_start..start];
        let qualified = head
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|w| matches!(w, "__kernel" | "kernel" | "__global__"));
        if !qualified {
            continue;
        }
        let open = text.len() - rest.len();
        let mut depth = 0usize;
        for (i, c) in text[open..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(text[open + 1..open + i].to_string());
                    }
                }
                _ => {}
            }
        }
        return Err(SignatureError::NotClosed(kernel.to_string()));
    }
    Err(SignatureError::NoKernel(kernel.to_string()))
}

/// The parameters, split at commas outside brackets and template arguments.
fn split_top_level(list: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut current = String::new();
    for c in list.chars() {
        match c {
            '(' | '[' | '<' => depth += 1,
            ')' | ']' | '>' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    parts.push(current);
    parts
}

/// Qualifiers that say where or how a parameter lives, not what it is.
const QUALIFIERS: &str = "__global global __constant constant __local local __private private \
                          const restrict __restrict __restrict__ volatile __read_only read_only \
                          __write_only write_only";

fn param(text: &str) -> Result<Param, SignatureError> {
    let pointer = text.contains('*') || text.contains('[');
    let words: Vec<&str> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty() && !QUALIFIERS.split_whitespace().any(|q| q == *w))
        .collect();
    let Some((name, ty)) = words.split_last() else {
        return Err(SignatureError::Unreadable(text.trim().to_string()));
    };
    if ty.is_empty() {
        return Err(SignatureError::NoType(text.trim().to_string()));
    }
    Ok(Param {
        name: name.to_string(),
        pointer,
        element: element_type(&ty.join(" ")),
    })
}

/// The harness's name of a C type: `float` is `f32`, `int` `i32`, `uint` or `unsigned int`
/// `u32`; any other type keeps its spelling (and matches no declared type).
fn element_type(c: &str) -> String {
    match c {
        "float" => "f32",
        "int" | "signed int" | "signed" | "int32_t" => "i32",
        "uint" | "unsigned int" | "unsigned" | "uint32_t" => "u32",
        other => other,
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(name: &str, pointer: bool, element: &str) -> Param {
        Param {
            name: name.into(),
            pointer,
            element: element.into(),
        }
    }

    #[test]
    fn reads_an_opencl_kernel() {
        let src = "// saxpy(\n/* __kernel void saxpy(int x) */\n\
                   __kernel void saxpy(const uint n, const float a,\n\
                   __global const float* restrict x, __global float *y) { }";
        assert_eq!(
            kernel_params(src, "saxpy").unwrap(),
            [
                p("n", false, "u32"),
                p("a", false, "f32"),
                p("x", true, "f32"),
                p("y", true, "f32")
            ]
        );
    }

    #[test]
    fn reads_a_cuda_kernel_and_skips_other_functions() {
        let src = "__device__ float saxpy_one(float a) { return a; }\n\
                   extern \"C\" __global__ void saxpy(unsigned int n, float a, const float* __restrict__ x, int *y) {}";
        assert_eq!(
            kernel_params(src, "saxpy").unwrap(),
            [
                p("n", false, "u32"),
                p("a", false, "f32"),
                p("x", true, "f32"),
                p("y", true, "i32")
            ]
        );
    }

    #[test]
    fn a_missing_kernel_is_named() {
        let e = kernel_params("__kernel void other(int a) {}", "saxpy")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no kernel 'saxpy'"), "{e}");
        assert_eq!(kernel_params("__kernel void k(void) {}", "k").unwrap(), []);
        assert_eq!(
            kernel_params("__kernel void k(double2 v) {}", "k").unwrap(),
            [p("v", false, "double2")]
        );
    }
}
