//! The one spelling of constant memory the twins may differ in, and nothing more.
//!
//! OpenCL passes constant data as a kernel parameter, `__constant float* NAME`; CUDA declares a
//! file-scope symbol, `__constant__ float NAME[N];`, that the harness fills with the same data
//! before timing. [`pair`] removes exactly these two spellings where type and name match (the
//! parameter from every OpenCL kernel, the declaration from the CUDA file), so the bodies are
//! compared as usual. Anything else shows in the diff: another name or type, another address
//! space, a `__device__`, initialised or function-local symbol, an OpenCL program-scope array.

use super::lexer::{closing, Kind, Tok};

/// A matched spelling: its token range (inclusive) and what it declares.
struct Found {
    first: usize,
    last: usize,
    ty: String,
    name: String,
}

pub(super) fn pair(cl: Vec<Tok>, cu: Vec<Tok>) -> (Vec<Tok>, Vec<Tok>) {
    let symbols = cuda_symbols(&cu);
    let params = opencl_params(&cl);
    let matches = |p: &Found, s: &Found| p.ty == s.ty && p.name == s.name;
    let cl_drop: Vec<&Found> = params
        .iter()
        .filter(|p| symbols.iter().any(|s| matches(p, s)))
        .collect();
    let cu_drop: Vec<&Found> = symbols
        .iter()
        .filter(|s| params.iter().any(|p| matches(p, s)))
        .collect();
    (without(cl, &cl_drop), without(cu, &cu_drop))
}

fn without(toks: Vec<Tok>, drop: &[&Found]) -> Vec<Tok> {
    toks.into_iter()
        .enumerate()
        .filter(|(k, _)| !drop.iter().any(|f| (f.first..=f.last).contains(k)))
        .map(|(_, t)| t)
        .collect()
}

fn is_ident(t: Option<&Tok>) -> bool {
    t.is_some_and(|t| t.kind == Kind::Ident)
}

fn text_is(t: Option<&Tok>, s: &str) -> bool {
    t.is_some_and(|t| t.text == s)
}

/// `__constant__ TYPE NAME [ N ] ;` at brace and parenthesis depth 0, starting a declaration.
fn cuda_symbols(toks: &[Tok]) -> Vec<Found> {
    let mut found = Vec::new();
    let mut depth = 0i32;
    for (k, t) in toks.iter().enumerate() {
        match t.text.as_str() {
            "{" | "(" => depth += 1,
            "}" | ")" => depth -= 1,
            "__constant__" if depth == 0 => {
                let at = |i: usize| toks.get(k + i);
                let starts = k == 0
                    || toks[k - 1].ends_directive
                    || matches!(toks[k - 1].text.as_str(), ";" | "}");
                let shape = is_ident(at(1))
                    && is_ident(at(2))
                    && text_is(at(3), "[")
                    && at(4).is_some_and(|n| matches!(n.kind, Kind::Number | Kind::Ident))
                    && text_is(at(5), "]")
                    && text_is(at(6), ";");
                if starts && shape {
                    found.push(Found {
                        first: k,
                        last: k + 6,
                        ty: toks[k + 1].text.clone(),
                        name: toks[k + 2].text.clone(),
                    });
                }
            }
            _ => {}
        }
    }
    found
}

/// `__constant TYPE * NAME` as a whole parameter of a `__kernel`'s parameter list, with one
/// neighbouring comma (the one after it, or before it when it is the last parameter).
fn opencl_params(toks: &[Tok]) -> Vec<Found> {
    let mut found = Vec::new();
    let mut k = 0;
    while k < toks.len() {
        if toks[k].text != "__kernel" {
            k += 1;
            continue;
        }
        let Some(open) = (k..toks.len()).find(|&j| toks[j].text == "(") else {
            break;
        };
        let Some(close) = closing(toks, open) else {
            break;
        };
        for j in open + 1..close {
            let at = |i: usize| toks.get(j + i);
            let shape = toks[j].text == "__constant"
                && matches!(toks[j - 1].text.as_str(), "(" | ",")
                && is_ident(at(1))
                && text_is(at(2), "*")
                && is_ident(at(3))
                && (text_is(at(4), ",") || j + 4 == close);
            if !shape {
                continue;
            }
            let (first, last) = if j + 4 < close {
                (j, j + 4)
            } else if toks[j - 1].text == "," {
                (j - 1, j + 3)
            } else {
                (j, j + 3)
            };
            found.push(Found {
                first,
                last,
                ty: toks[j + 1].text.clone(),
                name: toks[j + 3].text.clone(),
            });
        }
        k = close + 1;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::super::compare_file;

    /// The differing lines of a pair of one-file twins, as the report prints them.
    fn differences(cl: &str, cu: &str) -> Vec<String> {
        let fp = compare_file("constant", cl, cu, &[], &mut []);
        let mut out: Vec<String> = fp
            .kernels
            .iter()
            .flat_map(|k| k.diff.iter().map(|d| format!("{}: {}", d.api, d.text)))
            .collect();
        out.extend(
            fp.only_in_opencl
                .iter()
                .map(|k| format!("only OpenCL: {k}")),
        );
        out.extend(fp.only_in_cuda.iter().map(|k| format!("only CUDA: {k}")));
        out
    }

    const CL: &str = "__kernel void k(__global float* out, __constant float* F, uint n)\n\
                      {\n    out[0] = F[n];\n}\n";
    const CU: &str = "__constant__ float F[9];\n\
                      extern \"C\" __global__ void k(float* out, uint n)\n\
                      {\n    out[0] = F[n];\n}\n";

    #[test]
    fn a_constant_parameter_pairs_with_a_constant_symbol() {
        assert_eq!(differences(CL, CU), Vec::<String>::new());
        // First, middle or last parameter; over several lines.
        let cl =
            "__kernel void k(__constant float* F,\n __global float* out)\n{ out[0] = F[0]; }\n";
        let cu = "__constant__ float F[N];\nextern \"C\" __global__ void k(\n float* out)\n\
                  { out[0] = F[0]; }\n";
        assert_eq!(differences(cl, cu), Vec::<String>::new());
        let cl =
            "__kernel void k(__global float* out,\n __constant float* F)\n{ out[0] = F[0]; }\n";
        let cu = "__constant__ float F[4];\nextern \"C\" __global__ void k(float* out\n)\n\
                  { out[0] = F[0]; }\n";
        assert_eq!(differences(cl, cu), Vec::<String>::new());
    }

    /// Every spelling beyond the pair stays in the text and fails the diff.
    #[test]
    fn anything_beyond_the_constant_spellings_is_a_difference() {
        let cases = [
            (
                "another name",
                CL.to_string(),
                CU.replace("float F[9]", "float G[9]"),
            ),
            (
                "another type",
                CL.to_string(),
                CU.replace("float F[9]", "int F[9]"),
            ),
            (
                "a __device__ symbol",
                CL.to_string(),
                CU.replace("__constant__", "__device__"),
            ),
            (
                "an initialised symbol",
                CL.to_string(),
                CU.replace("F[9];", "F[9] = {0};"),
            ),
            (
                "a __global parameter",
                CL.replace("__constant float* F", "__global float* F"),
                CU.to_string(),
            ),
            (
                "a const-qualified parameter",
                CL.replace("__constant float* F", "__constant const float* F"),
                CU.to_string(),
            ),
            (
                "a symbol inside the kernel",
                CL.to_string(),
                "extern \"C\" __global__ void k(float* out, uint n)\n{\n    \
                 __constant__ float F[9];\n    out[0] = F[n];\n}\n"
                    .to_string(),
            ),
            (
                "an OpenCL program-scope array",
                format!(
                    "__constant float F[9];\n{}",
                    CL.replace(", __constant float* F", "")
                ),
                CU.to_string(),
            ),
            (
                "a CUDA parameter of the same name",
                CL.to_string(),
                CU.replace("(float* out,", "(float* out, const float* F,"),
            ),
        ];
        for (what, cl, cu) in cases {
            let d = differences(&cl, &cu);
            assert!(!d.is_empty(), "{what}: not refused\n{cl}\n{cu}");
        }
    }

    #[test]
    fn an_unpaired_symbol_or_parameter_is_reported_on_its_side() {
        // A pair the body does not use is still the same spelling.
        let d = differences(&CL.replace("F[n]", "1.0f"), &CU.replace("F[n]", "1.0f"));
        assert!(d.is_empty(), "{d:?}");
        let d = differences(CL, &CU.replace("__constant__ float F[9];\n", ""));
        assert_eq!(
            d,
            vec![
                "OpenCL: __kernel void k(float * out, __constant float * F, uint n)",
                "CUDA: __kernel void k(float * out, uint n)"
            ]
        );
        let d = differences(&CL.replace(", __constant float* F", ""), CU);
        assert_eq!(d, vec!["CUDA: __constant__ float F[9];"]);
    }
}
