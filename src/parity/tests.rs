//! The parity check's unit tests: normalisation of each API spelling, the kernel split, the
//! diff and its report, the allow-list, and the shipped twins.

use super::allow::{load_allow_list, AllowEntry, ParityError};
use super::diff::DiffLine;
use super::lexer::defined_macros;
use super::lexer::lex;
use super::report::{KernelParity, ParityReport};
use super::rewrite::{
    normalise_line, render_lines, rewrite, rules, split_tokens, NormLine, Section,
};
use super::{check, compare_file, compare_preludes, EMBEDDED_ALLOW_LIST, FILE_SCOPE, PRELUDE};
use crate::kernels::{extension, folder, KernelSources};
use crate::rows::Api;

/// Normalises a whole file (either API): one [`NormLine`] per source line that has code.
pub(super) fn normalise(text: &str) -> Vec<NormLine> {
    render_lines(&rewrite(&lex(text), rules()))
}

/// Splits a file (either API) into its kernels, then `FILE_SCOPE`.
pub(super) fn split_kernels(text: &str) -> Vec<Section> {
    split_tokens(&lex(text))
}

/// Normalises a whole file to one string, one line per line of code.
fn normalise_text(text: &str) -> String {
    normalise(text)
        .into_iter()
        .map(|l| l.text)
        .collect::<Vec<_>>()
        .join("\n")
}

fn same(cl: &str, cu: &str) {
    assert_eq!(normalise_line(cl), normalise_line(cu), "cl: {cl}\ncu: {cu}");
}

fn differ(cl: &str, cu: &str) {
    assert_ne!(normalise_line(cl), normalise_line(cu), "cl: {cl}\ncu: {cu}");
}

#[test]
fn kernel_signature_and_pointer_qualifiers() {
    same(
        "__kernel void k(const __global float* M, uint n, __global float* W)",
        "extern \"C\" __global__ void k(const float* M, uint n, float* W)",
    );
    assert_eq!(
        normalise_line("extern \"C\"   __global__ void k(float *W)"),
        "__kernel void k(float * W)"
    );
    // __global__ without extern "C" is a different spelling (the harness looks kernels up
    // by unmangled name), and __global__ is not the __global qualifier.
    differ("__kernel void k(float* W)", "__global__ void k(float* W)");
}

#[test]
fn global_id_with_and_without_parentheses() {
    same(
        "uint y = get_global_id(0);",
        "uint y = (blockIdx.x * blockDim.x + threadIdx.x);",
    );
    same(
        "uint y = get_global_id(0);",
        "uint y = blockIdx.x*blockDim.x + threadIdx.x;",
    );
    same(
        "out[get_global_id(0)] = v;",
        "out[(blockIdx.x * blockDim.x + threadIdx.x)] = v;",
    );
    same(
        "if (get_global_id(0) == 0)",
        "if ((blockIdx.x * blockDim.x + threadIdx.x) == 0)",
    );
    same(
        "x = 2 * get_global_id(0);",
        "x = 2 * (blockIdx.x * blockDim.x + threadIdx.x);",
    );
    same(
        "f(get_global_id(0), 1);",
        "f(blockIdx.x * blockDim.x + threadIdx.x, 1);",
    );
    // The OpenCL side spelling the same value out in builtins.
    same(
        "uint i = get_group_id(0) * get_local_size(0) + get_local_id(0);",
        "uint i = blockIdx.x * blockDim.x + threadIdx.x;",
    );
    assert_eq!(
        normalise_line("uint i = get_group_id(0) * get_local_size(0) + get_local_id(0);"),
        "uint i = get_global_id(0);"
    );
}

#[test]
fn bare_expressions_keep_their_meaning() {
    // Tighter neighbours: not the global id, so only the atoms are mapped.
    for (cu, canonical) in [
        (
            "x = 2 * blockIdx.x * blockDim.x + threadIdx.x;",
            "x = 2 * get_group_id(0) * get_local_size(0) + get_local_id(0);",
        ),
        (
            "x = blockIdx.x * blockDim.x + threadIdx.x * 2;",
            "x = get_group_id(0) * get_local_size(0) + get_local_id(0) * 2;",
        ),
        (
            "x = n - blockIdx.x * blockDim.x + threadIdx.x;",
            "x = n - get_group_id(0) * get_local_size(0) + get_local_id(0);",
        ),
        (
            "x = n / gridDim.x * blockDim.x;",
            "x = n / get_num_groups(0) * get_local_size(0);",
        ),
    ] {
        assert_eq!(normalise_line(cu), canonical);
    }
    // A call's parentheses stay: the argument inside is rewritten.
    assert_eq!(
        normalise_line("f(blockIdx.x * blockDim.x + threadIdx.x)"),
        "f(get_global_id(0))"
    );
    // Looser neighbours on both sides.
    assert_eq!(
        normalise_line("x = n + (gridDim.x * blockDim.x) * 2 < gridDim.x * blockDim.x + 1;"),
        "x = n + get_global_size(0) * 2 < get_global_size(0) + 1;"
    );
}

#[test]
fn global_size_with_and_without_parentheses() {
    same(
        "i += get_global_size(0)) {",
        "i += (gridDim.x * blockDim.x)) {",
    );
    same("i += get_global_size(0);", "i += gridDim.x * blockDim.x;");
    same(
        "s = get_num_groups(0) * get_local_size(0);",
        "s = gridDim.x * blockDim.x;",
    );
}

#[test]
fn work_item_builtins_and_barrier() {
    same("t = get_local_id(0);", "t = threadIdx.x;");
    same("t = get_local_size(0);", "t = blockDim.x;");
    same("t = get_group_id(0);", "t = blockIdx.x;");
    same("t = get_num_groups(0);", "t = gridDim.x;");
    same("barrier(CLK_LOCAL_MEM_FENCE);", "__syncthreads();");
    same(
        "if (WG_SIZE >= 64) { if (tid < 32) s[tid] += s[tid + 32]; barrier(CLK_LOCAL_MEM_FENCE); } \\",
        "if (WG_SIZE >= 64) { if (tid < 32) s[tid] += s[tid + 32]; __syncthreads(); }   \\",
    );
    // Token-aware: other dimensions, members and longer names are not mapped.
    differ("t = get_local_id(0);", "t = threadIdx.y;");
    assert_eq!(normalise_line("a = s.threadIdx.x;"), "a = s.threadIdx.x;");
    assert_eq!(normalise_line("a = my_threadIdx.x;"), "a = my_threadIdx.x;");
    assert_eq!(normalise_line("a = blockDim.xy;"), "a = blockDim.xy;");
    assert_eq!(
        normalise_line("__syncthreads_count(1);"),
        "__syncthreads_count(1);"
    );
}

#[test]
fn local_arrays_and_pointers() {
    same("__local float s[WG_SIZE];", "__shared__ float s[WG_SIZE];");
    same("__local float total;", "__shared__ float total;");
    assert_eq!(
        normalise_line("__shared__ float s[WG_SIZE];"),
        "__local float s[WG_SIZE];"
    );
    same(
        "__local float* p = s + (a ? 2 * b - c : 0);",
        "float* p = s + (a ? 2 * b - c : 0);",
    );
    same(
        "volatile __local float* p = s + id;",
        "volatile float* p = s + id;",
    );
    same(
        "const __global float4* in4 = (const __global float4*)in;",
        "const float4* in4 = (const float4*)in;",
    );
    // A local array is not a plain array.
    differ("__local float s[WG_SIZE];", "float s[WG_SIZE];");
}

#[test]
fn unsigned_int_is_uint() {
    same("uint n4 = n / 4u;", "unsigned int n4 = n / 4u;");
    same(
        "for (unsigned int i = 0; i < n; ++i)",
        "for (uint i = 0; i < n; ++i)",
    );
    differ("uint n;", "unsigned long n;");
}

#[test]
fn comments_and_whitespace() {
    same("a  =  b+c; // the sum\n", "a = b + c;   /* the\n sum */");
    same("x = \"// not a comment\";", "x = \"// not a comment\";");
    differ("x = \"// not a comment\";", "x = \"\";");
    let lines = normalise("/* one\n two */\n\n   a=1;  // c\n#define X(a)   (a) \\\n    + 1\n");
    assert_eq!(
        lines,
        vec![
            NormLine {
                line: 4,
                text: "a = 1;".into()
            },
            NormLine {
                line: 5,
                text: "#define X(a) (a) \\".into()
            },
            NormLine {
                line: 6,
                text: "+ 1".into()
            },
        ]
    );
}

#[test]
fn macros_at_file_scope_and_directive_ends() {
    let cl = "#define GID get_global_id(0)\nint x;\n";
    let cu = "#define GID (blockIdx.x * blockDim.x + threadIdx.x)\nint x;\n";
    assert_eq!(normalise_text(cl), normalise_text(cu));
    // A bare macro body is not one expression where the macro is used (`2 * GID`), so it
    // is not the global id.
    let cu_bare = "#define GID blockIdx.x * blockDim.x + threadIdx.x\nint x;\n";
    assert_eq!(
        normalise_text(cu_bare),
        "#define GID get_group_id(0) * get_local_size(0) + get_local_id(0)\nint x;"
    );
    // A function-like macro's parameter list is not a parenthesised expression.
    assert_eq!(normalise_line("#define F(a) (a)"), "#define F(a) (a)");
    assert_eq!(normalise_line("#define F (a)"), "#define F (a)");
    // A directive ends an expression: the next line's tokens are not its neighbours.
    same(
        "#if N == get_global_size(0)\nint x;",
        "#if N == gridDim.x * blockDim.x\nint x;",
    );
    assert_eq!(
        normalise_text("#if N == gridDim.x * blockDim.x\nint x;"),
        "#if N == get_global_size(0)\nint x;"
    );
    let names =
        defined_macros("#define A 1\n# define B(x) x\n#ifdef C\n#define D\n#endif\nint E;\n");
    assert_eq!(names.into_iter().collect::<Vec<_>>(), ["A", "B", "D"]);
    // A name on the line after `#define` is no macro: the directive ended without one.
    assert!(defined_macros("#define\nF 1\n").is_empty());
}

const CL: &str = "\
/* twin */
#define STEP(s, t) { s[t] += 1; barrier(CLK_LOCAL_MEM_FENCE); }

__kernel void add(const __global float* a, __global float* b, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        b[i] = a[i] + 1.0f;
}

__kernel void sum(const __global float* a, __global float* b, uint n)
{
    __local float s[WG_SIZE];
    s[get_local_id(0)] = a[get_global_id(0)];
    STEP(s, get_local_id(0))
    b[get_group_id(0)] = s[0];
}
";

fn cu_of(cl: &str) -> String {
    cl.replace("__kernel void", "extern \"C\" __global__ void")
        .replace("__global ", "")
        .replace(
            "get_global_id(0)",
            "(blockIdx.x * blockDim.x + threadIdx.x)",
        )
        .replace("get_local_id(0)", "threadIdx.x")
        .replace("get_group_id(0)", "blockIdx.x")
        .replace("barrier(CLK_LOCAL_MEM_FENCE)", "__syncthreads()")
        .replace("__local float s", "__shared__ float s")
}

#[test]
fn twins_that_differ_only_in_spelling_pass() {
    let cu = cu_of(CL);
    let mut used = [];
    let fp = compare_file("matvec", CL, &cu, &[], &mut used);
    assert!(fp.passed(), "{fp:?}");
    let names: Vec<&str> = fp.kernels.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["add", "sum", FILE_SCOPE]);
    assert!(fp.kernels.iter().all(KernelParity::identical));
}

#[test]
fn a_changed_operator_is_caught() {
    let cu = cu_of(CL).replace("a[i] + 1.0f", "a[i] - 1.0f");
    let mut used = [];
    let fp = compare_file("matvec", CL, &cu, &[], &mut used);
    assert!(!fp.passed());
    let add = &fp.kernels[0];
    assert_eq!(add.name, "add");
    assert_eq!(
        add.diff,
        vec![
            DiffLine {
                api: Api::OpenCl,
                line: 8,
                text: "b[i] = a[i] + 1.0f;".into(),
                allowed: None
            },
            DiffLine {
                api: Api::Cuda,
                line: 8,
                text: "b[i] = a[i] - 1.0f;".into(),
                allowed: None
            },
        ]
    );
    assert!(fp.kernels[1].identical() && fp.kernels[2].identical());
    let report = ParityReport { files: vec![fp] };
    let text = report.render();
    assert!(text.contains("- cl L8    b[i] = a[i] + 1.0f;"), "{text}");
    assert!(text.contains("+ cu L8    b[i] = a[i] - 1.0f;"), "{text}");
    assert!(text.contains("FAIL       add"), "{text}");
    assert!(text.contains("identical  sum"), "{text}");
    assert!(text.contains("Result: FAIL"), "{text}");
}

#[test]
fn a_file_scope_change_is_caught() {
    let cu = cu_of(CL).replace("s[t] += 1", "s[t] += 2");
    let mut used = [];
    let fp = compare_file("matvec", CL, &cu, &[], &mut used);
    assert!(!fp.passed());
    let scope = fp.kernels.iter().find(|k| k.name == FILE_SCOPE);
    assert_eq!(scope.map(|k| k.diff.len()), Some(2));
}

#[test]
fn a_kernel_on_one_side_only_fails() {
    let cl = format!("{CL}\n__kernel void extra(__global float* a) {{ a[0] = 1; }}\n");
    let cu = cu_of(CL).replace("void sum(", "void summ(");
    let mut used = [];
    let fp = compare_file("matvec", &cl, &cu, &[], &mut used);
    assert!(!fp.passed());
    assert_eq!(fp.only_in_opencl, ["sum", "extra"]);
    assert_eq!(fp.only_in_cuda, ["summ"]);
    let text = ParityReport { files: vec![fp] }.render();
    assert!(
        text.contains("extra: only in OpenCL (kernels_cl/matvec.cl)"),
        "{text}"
    );
    assert!(
        text.contains("summ: only in CUDA (kernels_cu/matvec.cu)"),
        "{text}"
    );
}

#[test]
fn allowed_differences_pass_with_their_reason() {
    let cu = cu_of(CL).replace("a[i] + 1.0f", "a[i] - 1.0f");
    let allow = load_allow_list(
        "# header\n\nmatvec:add: b[i]=a[i]+1.0f; | sign flip, reviewed\n\
         matvec:add:   b[i] = a[i] - 1.0f;   |   sign flip, reviewed  \n\
         matvec:sum: s[0] = 1; | stale\n",
    )
    .unwrap();
    let report = check_one("matvec", CL, &cu, &allow);
    assert!(report.passed(), "{}", report.render());
    let text = report.render();
    assert!(
        text.contains("allowed    add: 2 differing line(s), all allowed"),
        "{text}"
    );
    assert!(text.contains("[allowed: sign flip, reviewed]"), "{text}");
    assert!(
        text.contains("allow-list line 5 matches no difference"),
        "{text}"
    );
    // One entry alone leaves the other side's line failing.
    let report = check_one("matvec", CL, &cu, &allow[..1]);
    assert!(!report.passed());
    // An entry for another kernel or file does not apply.
    let other = load_allow_list("matvec:sum: b[i] = a[i] - 1.0f; | wrong kernel\nreduce:add: b[i] = a[i] - 1.0f; | wrong file\nmatvec:add: b[i] = a[i] + 1.0f; | x\n").unwrap();
    assert!(!check_one("matvec", CL, &cu, &other).passed());
}

fn check_one(stem: &str, cl: &str, cu: &str, allow: &[AllowEntry]) -> ParityReport {
    let mut used = vec![false; allow.len()];
    let mut fp = compare_file(stem, cl, cu, allow, &mut used);
    fp.unused_allow = allow
        .iter()
        .zip(&used)
        .filter(|(e, u)| !**u && e.file == stem)
        .map(|(e, _)| e.clone())
        .collect();
    ParityReport { files: vec![fp] }
}

#[test]
fn allow_list_parses_good_lines() {
    let entries = load_allow_list(
        "# comment\n   # indented comment\n\n\
         reduce:reduce_tuned: v = a | b; | bitwise or, reviewed\n\
         peak:<file-scope>: #define X   1 | only one side needs X\n",
    )
    .unwrap();
    assert_eq!(
        entries,
        vec![
            AllowEntry {
                file: "reduce".into(),
                kernel: "reduce_tuned".into(),
                text: "v = a | b;".into(),
                reason: "bitwise or, reviewed".into(),
                line: 4,
            },
            AllowEntry {
                file: "peak".into(),
                kernel: FILE_SCOPE.into(),
                text: "#define X 1".into(),
                reason: "only one side needs X".into(),
                line: 5,
            },
        ]
    );
    // Entries are normalised like kernel text.
    let e = load_allow_list("peak:k: out[(blockIdx.x*blockDim.x+threadIdx.x)] = v; | r\n").unwrap();
    assert_eq!(e[0].text, "out[get_global_id(0)] = v;");
    assert_eq!(load_allow_list("").unwrap(), vec![]);
    assert_eq!(load_allow_list(EMBEDDED_ALLOW_LIST).unwrap(), vec![]);
}

#[test]
fn allow_list_rejects_bad_lines_naming_the_line() {
    for (text, line, needle) in [
        (
            "# ok\nno colon at all | r\n",
            2,
            "no ':' after the file name",
        ),
        (
            "matvec: no kernel colon | r\n",
            1,
            "no ':' after the kernel name",
        ),
        ("\n\nmatvec:k: x = 1;\n", 3, "no ' | ' before the reason"),
        ("matvec:k: x = 1; |   \n", 1, "empty reason"),
        ("matvec:k: // only a comment | r\n", 1, "empty line text"),
        (":k: x | r\n", 1, "empty file name"),
        ("matvec:two words: x | r\n", 1, "neither an identifier"),
        ("nope:k: x | r\n", 1, "unknown kernel file 'nope'"),
        ("prelude:k: x | r\n", 1, "unknown kernel file 'prelude'"),
    ] {
        let e = load_allow_list(text).unwrap_err();
        let shown = e.to_string();
        assert!(
            shown.contains(&format!("allow-list line {line}:")),
            "{shown}"
        );
        assert!(shown.contains(needle), "{shown}");
        match e {
            ParityError::Malformed { line: l, .. } | ParityError::UnknownFile { line: l, .. } => {
                assert_eq!(l, line)
            }
        }
    }
}

#[test]
fn preludes_must_define_the_same_macro_names() {
    let cl =
        "#define A 1\n#if X\n#define W() barrier(CLK_LOCAL_MEM_FENCE)\n#endif\n#define CL_ONLY\n";
    let cu = "#define A 1\n#if X\n#define W() __syncthreads()\n#endif\n#define CU_ONLY 2\n";
    let fp = compare_preludes(cl, cu);
    assert!(!fp.passed());
    assert_eq!(fp.macros_only_in_opencl, ["CL_ONLY"]);
    assert_eq!(fp.macros_only_in_cuda, ["CU_ONLY"]);
    assert_eq!(fp.macros_shared, 2);
    let text = ParityReport { files: vec![fp] }.render();
    assert!(
        text.contains("macro CL_ONLY is #defined only in OpenCL (kernels_cl/prelude.cl)"),
        "{text}"
    );
    assert!(
        text.contains("macro CU_ONLY is #defined only in CUDA (kernels_cu/prelude.cu)"),
        "{text}"
    );
    // Different bodies of the same names are fine.
    assert!(compare_preludes("#define A 1\n", "#define A 2\n").passed());
}

#[test]
fn real_embedded_kernels_pass() -> Result<(), ParityError> {
    let report = check(
        &KernelSources::embedded(),
        &load_allow_list(include_str!("../../kernels_parity_allow.txt"))?,
    );
    assert!(report.passed(), "{}", report.render());
    let stems: Vec<&str> = report.files.iter().map(|f| f.stem.as_str()).collect();
    assert_eq!(stems, crate::kernels::stems());
    // Every file has kernels, and every kernel is identical (no allow entries needed).
    for f in report.files.iter().filter(|f| f.stem != PRELUDE) {
        assert!(f.kernels.len() > 1, "{}", f.stem);
        assert!(f.kernels.iter().all(KernelParity::identical), "{}", f.stem);
    }
    Ok(())
}

#[test]
fn real_kernels_split_into_the_expected_kernels() {
    let sources = KernelSources::embedded();
    for api in [Api::OpenCl, Api::Cuda] {
        let text = sources.file(api, "matvec").unwrap();
        let names: Vec<String> = split_kernels(&text).into_iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            [
                "matvec_listing2",
                "matvec_listing3",
                "matvec_listing4",
                "matvec_listing5",
                "matvec_listing6",
                "matvec_listing7",
                "matvec_listing7_unsafe",
                "matvec_tuned",
                "matvec_row_item",
                "matvec_row_warp",
                "matvec_row_group",
                "matvec_split_k",
                "matvec_split_k_final",
                "matvec_split_one",
                "matvec_split_wide",
                "matvec_row_slice",
                "matvec_row_multi",
                "matvec_split_flat",
                "matvec_row_pack",
                FILE_SCOPE
            ]
        );
        let reduce = split_kernels(&sources.file(api, "reduce").unwrap());
        let scope = reduce.iter().find(|s| s.name == FILE_SCOPE).unwrap();
        assert!(scope
            .lines
            .iter()
            .any(|l| l.text.starts_with("#define LAST_WARP_STEP")));
        assert!(scope
            .lines
            .iter()
            .any(|l| l.text.starts_with("#define UNROLLED_TREE")));
    }
}

#[test]
fn a_changed_real_twin_is_caught_through_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let embedded = KernelSources::embedded();
    for stem in crate::kernels::stems() {
        for api in [Api::OpenCl, Api::Cuda] {
            let d = dir.path().join(folder(api));
            std::fs::create_dir_all(&d).unwrap();
            let mut text = embedded.file(api, stem).unwrap();
            if api == Api::Cuda && stem == "reduce" {
                text = text.replacen(
                    "sdata[tid] += sdata[tid + s];",
                    "sdata[tid] -= sdata[tid + s];",
                    1,
                );
            }
            std::fs::write(d.join(format!("{stem}.{}", extension(api))), text).unwrap();
        }
    }
    let report = check(&KernelSources::from_dir(dir.path()), &[]);
    assert!(!report.passed());
    let text = report.render();
    assert!(
        text.contains("FAIL       reduce_interleaved_divergent: 2 differing line(s) not allowed"),
        "{text}"
    );
    assert!(
        text.contains("+ cu L20   sdata[tid] -= sdata[tid + s];"),
        "{text}"
    );
    // A missing file fails its pair, naming the path.
    std::fs::remove_file(dir.path().join("kernels_cu/peak.cu")).unwrap();
    let report = check(&KernelSources::from_dir(dir.path()), &[]);
    let peak = report.files.iter().find(|f| f.stem == "peak").unwrap();
    assert!(
        peak.error.as_deref().is_some_and(|e| e.contains("peak.cu")),
        "{peak:?}"
    );
}

#[test]
fn second_dimension_spellings() {
    same(
        "uint y = get_global_id(1); uint ly = get_local_id(1);",
        "uint y = blockIdx.y * blockDim.y + threadIdx.y; uint ly = threadIdx.y;",
    );
    same(
        "n = get_num_groups(1) * get_local_size(1) + get_group_id(1);",
        "n = gridDim.y * blockDim.y + blockIdx.y;",
    );
    // The dimensions are not interchangeable.
    differ(
        "uint y = get_global_id(1);",
        "uint y = blockIdx.x * blockDim.x + threadIdx.x;",
    );
    differ("uint y = get_local_id(0);", "uint y = threadIdx.y;");
}
