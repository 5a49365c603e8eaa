//! Property tests: kernel text from a `--kernels-dir` is user input, so no text may make the
//! lexer, the rewriter, the kernel splitter, the diff or the allow-list parser panic.

use std::collections::HashSet;

use proptest::prelude::*;

use super::allow::load_allow_list;
use super::lexer::defined_macros;
use super::rewrite::normalise_line;
use super::tests::{normalise, split_kernels};
use super::{compare_file, compare_preludes, EMBEDDED_ALLOW_LIST, FILE_SCOPE, PRELUDE};
use crate::kernels::{stems, KernelSources};
use crate::rows::Api;

/// C and API tokens that steer the lexer and the rewrite rules, and the characters that
/// open or close something (comments, strings, directives, braces).
const TOKENS: &[&str] = &[
    "__kernel",
    "void",
    "extern",
    "\"C\"",
    "__global__",
    "__global",
    "__local",
    "__shared__",
    "const",
    "float",
    "uint",
    "*",
    "k",
    "x",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ";",
    ",",
    "+",
    "=",
    "#",
    "#define",
    "define",
    "#if",
    "#endif",
    "\\",
    "\\\n",
    "\n",
    "\n",
    " ",
    " ",
    "\t",
    "//",
    "/*",
    "*/",
    "\"",
    "'",
    "0",
    "get_global_id(0)",
    "get_local_id(0)",
    "get_group_id",
    "threadIdx.x",
    "blockIdx.x",
    "blockDim.x",
    ".",
    "barrier(CLK_LOCAL_MEM_FENCE)",
    "__syncthreads()",
    "a ? b : c",
    "é",
    "\r",
];

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..120).prop_map(|t| t.join(" "))
}

/// The largest character boundary of `text` at or before `i`.
fn floor_boundary(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// An embedded twin with a random range deleted and random tokens inserted.
fn mutate(text: &str, at: usize, len: usize, insert: &str) -> String {
    let start = floor_boundary(text, at % (text.len() + 1));
    let end = floor_boundary(text, start + len);
    let mut out = text.to_string();
    out.replace_range(start..end, insert);
    out
}

fn check_sections(text: &str) -> Result<(), TestCaseError> {
    let lines = normalise(text);
    let max_line = text.split('\n').count();
    for w in lines.windows(2) {
        prop_assert!(w[0].line < w[1].line, "lines out of order: {w:?}");
    }
    for l in &lines {
        prop_assert!(
            (1..=max_line).contains(&l.line),
            "line {} of {max_line}",
            l.line
        );
        prop_assert!(!l.text.is_empty());
    }
    let sections = split_kernels(text);
    prop_assert_eq!(sections.last().map(|s| s.name.as_str()), Some(FILE_SCOPE));
    let names: HashSet<&str> = sections.iter().map(|s| s.name.as_str()).collect();
    prop_assert_eq!(names.len(), sections.len(), "section names repeat");
    // Splitting only distributes the normalised lines; it loses and invents none.
    let split: usize = sections.iter().map(|s| s.lines.len()).sum();
    prop_assert_eq!(split, lines.len());
    Ok(())
}

fn check_pair(cl: &str, cu: &str) -> Result<(), TestCaseError> {
    let allow = load_allow_list(EMBEDDED_ALLOW_LIST).unwrap();
    let mut used = vec![false; allow.len()];
    let fp = compare_file("matvec", cl, cu, &allow, &mut used);
    for k in &fp.kernels {
        for d in &k.diff {
            prop_assert!(d.line >= 1 && !d.text.is_empty());
        }
    }
    // A file compared with itself has no difference.
    let same = compare_file("matvec", cl, cl, &allow, &mut used);
    prop_assert!(same.only_in_opencl.is_empty() && same.only_in_cuda.is_empty());
    prop_assert!(same.kernels.iter().all(|k| k.diff.is_empty()), "{same:?}");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn arbitrary_text_never_panics(text in ".{0,300}") {
        check_sections(&text)?;
        let _ = defined_macros(&text);
        let _ = normalise_line(&text);
    }

    #[test]
    fn token_soup_never_panics(a in soup(), b in soup()) {
        check_sections(&a)?;
        let _ = defined_macros(&a);
        check_pair(&a, &b)?;
    }

    #[test]
    fn allow_lists_parse_or_name_the_line(
        lines in prop::collection::vec(
            prop_oneof![
                ".{0,40}",
                "(matvec|reduce|peak|prelude|x| )?:([a-z_]{0,8}|<file-scope>)?:.{0,12}( \\| .{0,6})?",
                Just("# comment".to_string()),
                Just(String::new()),
            ],
            0..6,
        )
    ) {
        let text = lines.join("\n");
        match load_allow_list(&text) {
            Ok(entries) => {
                for e in entries {
                    prop_assert!(stems().contains(&e.file.as_str()) && e.file != PRELUDE);
                    prop_assert!(!e.text.is_empty() && !e.reason.is_empty());
                    prop_assert!((1..=lines.len()).contains(&e.line));
                }
            }
            Err(e) => prop_assert!(e.to_string().starts_with("allow-list line "), "{e}"),
        }
    }
}

proptest! {
    // The embedded files are a few hundred lines: fewer, costlier cases.
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn mutated_twins_never_panic(
        stem in prop::sample::select(&["matvec", "reduce", "peak", "prelude"][..]),
        at in any::<usize>(),
        len in 0..400usize,
        insert in soup(),
        cuda_side in any::<bool>(),
    ) {
        let sources = KernelSources::embedded();
        let cl = sources.file(Api::OpenCl, stem).unwrap();
        let cu = sources.file(Api::Cuda, stem).unwrap();
        let (cl, cu) = if cuda_side {
            (cl.clone(), mutate(&cu, at, len, &insert))
        } else {
            (mutate(&cl, at, len, &insert), cu.clone())
        };
        check_sections(&cl)?;
        check_sections(&cu)?;
        let _ = compare_preludes(&cl, &cu);
        check_pair(&cl, &cu)?;
    }
}
