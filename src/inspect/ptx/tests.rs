//! Tests of the PTX parser, classifier and reports, on real NVRTC output, a
//! hand-written OpenCL-style module, small inline inputs, and generated inputs.

use super::classify::{classify_opcode, ClassGroup, OPCODE_CLASSES};
use super::parse::{parse_instruction, PtxInstruction};
use super::*;
use crate::rows::ClassCountRow;
use proptest::prelude::*;
use std::collections::BTreeSet;

/// The 1-based line number an error refers to.
fn line(e: &PtxError) -> usize {
    match e {
        PtxError::UnmatchedClose { line }
        | PtxError::UnclosedBrace { line }
        | PtxError::UnterminatedComment { line }
        | PtxError::UnterminatedString { line }
        | PtxError::UnterminatedStatement { line }
        | PtxError::UnbalancedStatement { line }
        | PtxError::OutsideFunction { line, .. }
        | PtxError::NestedFunction { line }
        | PtxError::BadHeader { line, .. }
        | PtxError::BadStatement { line, .. } => *line,
    }
}

/// The opcode with all its modifiers (`"ld.global.nc.v4.f32"`).
fn full_opcode(i: &PtxInstruction) -> String {
    std::iter::once(&i.opcode)
        .chain(&i.modifiers)
        .cloned()
        .collect::<Vec<_>>()
        .join(".")
}

const REDUCE: &str = include_str!("../../../tests/fixtures/ptx/nvrtc_reduce_sum.ptx");
const MATVEC: &str = include_str!("../../../tests/fixtures/ptx/nvrtc_matvec4.ptx");
const SAXPY: &str = include_str!("../../../tests/fixtures/ptx/nvrtc_saxpy_unroll4.ptx");
const SAXPY_LINEINFO: &str =
    include_str!("../../../tests/fixtures/ptx/nvrtc_saxpy_unroll4_lineinfo.ptx");
const SAXPY_DEBUG: &str = include_str!("../../../tests/fixtures/ptx/nvrtc_saxpy_unroll4_debug.ptx");
const POLY: &str = include_str!("../../../tests/fixtures/ptx/nvrtc_poly_local.ptx");
const OPENCL_REDUCE: &str =
    include_str!("../../../tests/fixtures/ptx/opencl_handwritten_reduce_sum.ptx");

const ALL_FIXTURES: [&str; 7] = [
    REDUCE,
    MATVEC,
    SAXPY,
    SAXPY_LINEINFO,
    SAXPY_DEBUG,
    POLY,
    OPENCL_REDUCE,
];

fn only_kernel(text: &str) -> PtxKernel {
    let m = parse_ptx(text).unwrap();
    assert_eq!(m.kernels.len(), 1);
    m.kernels[0].clone()
}

/// Assert exact counts: `expected` lists the non-zero classes; all others must be 0.
fn assert_counts(counts: &ClassCounts, expected: &[(InstrClass, u64)]) {
    for &class in InstrClass::ALL {
        let want = expected
            .iter()
            .find(|(c, _)| *c == class)
            .map(|(_, n)| *n)
            .unwrap_or(0);
        assert_eq!(counts.get(class), want, "class {}", class.name());
    }
    assert_eq!(counts.total(), expected.iter().map(|(_, n)| n).sum::<u64>());
}

/// Wrap body lines into a minimal module with one entry named `k`.
fn wrap(body: &str) -> String {
    format!(".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{{\n{body}\n}}\n")
}

// ---- real NVRTC fixtures ---------------------------------------------------------

#[test]
fn nvrtc_reduce_sum_counts() {
    let m = parse_ptx(REDUCE).unwrap();
    let k = m.kernel("reduce_sum").unwrap();
    assert_eq!(k.local_bytes, 0);
    // Verified by reading the fixture: 23 mov; add x10 + mul.wide + mad.lo;
    // 3 ld.param, 1 ld.global.nc, 4 ld.shared, 2 st.shared; shl x2 + shr;
    // setp x6 + bra x6 + ret; 5 shfl.sync.down; 2 cvta; 2 bar.sync; 1 atom.
    assert_counts(
        &count_classes(k),
        &[
            (InstrClass::Arithmetic, 12),
            (InstrClass::LogicShift, 3),
            (InstrClass::Mov, 23),
            (InstrClass::Cvt, 2),
            (InstrClass::LdParam, 3),
            (InstrClass::LdGlobal, 1),
            (InstrClass::LdShared, 4),
            (InstrClass::StShared, 2),
            (InstrClass::FlowControl, 13),
            (InstrClass::Synchronization, 2),
            (InstrClass::Warp, 5),
            (InstrClass::Atomic, 1),
        ],
    );
    let atom = k.instructions.iter().find(|i| i.opcode == "atom").unwrap();
    assert_eq!(full_opcode(atom), "atom.global.add.f32");
    let shfl = k.instructions.iter().find(|i| i.opcode == "shfl").unwrap();
    assert_eq!(shfl.modifiers, vec!["sync", "down", "b32"]);
    assert_eq!(shfl.operands, "%r18|%p6, %r13, %r16, %r15, %r17");
}

#[test]
fn nvrtc_matvec4_counts() {
    let k = only_kernel(MATVEC);
    assert_eq!(k.name, "matvec4");
    // 10 ld.global.nc.v4.f32; 15 fma.rn + 5 mul.f32 + ... arithmetic.
    assert_counts(
        &count_classes(&k),
        &[
            // add x17, sub x1, mul x10 (5 mul.f32 + 4 mul.wide + 1 mul.lo),
            // fma x15, mad x2
            (InstrClass::Arithmetic, 45),
            (InstrClass::LogicShift, 1),
            (InstrClass::Mov, 9),
            (InstrClass::Cvt, 3),
            (InstrClass::LdParam, 5),
            (InstrClass::LdGlobal, 10),
            (InstrClass::StGlobal, 1),
            // setp x6, bra x6, ret
            (InstrClass::FlowControl, 13),
        ],
    );
    let v4 = k
        .instructions
        .iter()
        .find(|i| full_opcode(i) == "ld.global.nc.v4.f32")
        .unwrap();
    assert_eq!(v4.operands, "{%f12, %f13, %f14, %f15}, [%rd24]");
    assert_eq!(v4.class(), InstrClass::LdGlobal);
}

#[test]
fn nvrtc_saxpy_counts_and_lineinfo_does_not_change_them() {
    let k = only_kernel(SAXPY);
    assert_counts(
        &count_classes(&k),
        &[
            // add x22, mul x5, fma x5, mad x1, div x1
            (InstrClass::Arithmetic, 34),
            // not, and
            (InstrClass::LogicShift, 2),
            (InstrClass::Mov, 4),
            (InstrClass::Cvt, 2),
            (InstrClass::LdParam, 4),
            (InstrClass::LdGlobal, 10),
            (InstrClass::StGlobal, 5),
            // setp x5, bra x5, ret
            (InstrClass::FlowControl, 11),
        ],
    );
    let with_loc = only_kernel(SAXPY_LINEINFO);
    assert_eq!(count_classes(&with_loc), count_classes(&k));
    assert_eq!(with_loc.instructions.len(), k.instructions.len());
    for (x, y) in with_loc.instructions.iter().zip(&k.instructions) {
        assert_eq!(full_opcode(x), full_opcode(y));
        assert_eq!(x.operands, y.operands);
    }
}

#[test]
fn nvrtc_debug_build_skips_dwarf_sections() {
    let m = parse_ptx(SAXPY_DEBUG).unwrap();
    assert_eq!(m.kernels.len(), 1);
    let k = &m.kernels[0];
    // Counted by reading the body (the `.section .debug_*` blocks hold only data).
    assert_counts(
        &count_classes(k),
        &[
            // add x6, mul x3
            (InstrClass::Arithmetic, 9),
            // shl x3, not.pred
            (InstrClass::LogicShift, 4),
            (InstrClass::Mov, 8),
            // cvt.s64.s32 x3
            (InstrClass::Cvt, 3),
            (InstrClass::LdParam, 4),
            // -G keeps generic addressing: `ld.f32` / `st.f32`, no `cvta.to.global`
            (InstrClass::LdGeneric, 2),
            (InstrClass::StGeneric, 1),
            // setp, bra x5, ret
            (InstrClass::FlowControl, 7),
        ],
    );
}

#[test]
fn nvrtc_func_call_and_local_memory() {
    let m = parse_ptx(POLY).unwrap();
    assert_eq!(m.kernels.len(), 2);
    let f = m.kernel("_Z6hornerfPKfi").unwrap();
    assert_counts(
        &count_classes(f),
        &[
            // add x13 (9 add.s32, 4 add.s64), mul.wide x2, fma x5, max
            (InstrClass::Arithmetic, 21),
            // not, and
            (InstrClass::LogicShift, 2),
            (InstrClass::Mov, 3),
            (InstrClass::Cvt, 1),
            (InstrClass::LdParam, 3),
            (InstrClass::LdGlobal, 5),
            (InstrClass::StParam, 1),
            // setp x5, bra x5, ret
            (InstrClass::FlowControl, 11),
        ],
    );
    let e = m.kernel("poly_local").unwrap();
    assert_eq!(e.local_bytes, 32);
    assert_eq!(e.variables[0].name, "__local_depot1");
    assert_counts(
        &count_classes(e),
        &[
            // add x12 (8 add.f32, add.u64, 3 add.s64), mul.wide, mad.lo
            (InstrClass::Arithmetic, 14),
            // shl, and
            (InstrClass::LogicShift, 2),
            (InstrClass::Mov, 4),
            (InstrClass::Cvt, 2),
            // 5 kernel params + 8 return values
            (InstrClass::LdParam, 13),
            (InstrClass::LdGlobal, 2),
            (InstrClass::LdLocal, 1),
            // 3 arguments per call x 8 calls
            (InstrClass::StParam, 24),
            (InstrClass::StGlobal, 1),
            (InstrClass::StLocal, 8),
            // setp, bra, call.uni x8, ret
            (InstrClass::FlowControl, 11),
        ],
    );
    let call = e.instructions.iter().find(|i| i.opcode == "call").unwrap();
    assert_eq!(
        call.operands,
        "(retval0), _Z6hornerfPKfi, ( param0, param1, param2 )"
    );
}

// ---- hand-written OpenCL-style fixture -------------------------------------------

#[test]
fn opencl_style_reduce_counts() {
    let m = parse_ptx(OPENCL_REDUCE).unwrap();
    let k = m.kernel("reduce_sum").unwrap();
    assert_counts(
        &count_classes(k),
        &[
            // mad, add x6, mul.wide x2
            (InstrClass::Arithmetic, 9),
            (InstrClass::LogicShift, 4),
            (InstrClass::Mov, 7),
            (InstrClass::LdParam, 3),
            (InstrClass::LdGlobal, 1),
            (InstrClass::LdShared, 3),
            (InstrClass::StShared, 2),
            (InstrClass::StGlobal, 1),
            // setp x5, bra x5, ret
            (InstrClass::FlowControl, 11),
            (InstrClass::Synchronization, 2),
        ],
    );
}

#[test]
fn side_by_side_cuda_vs_opencl_reduce() {
    let cu = count_classes(parse_ptx(REDUCE).unwrap().kernel("reduce_sum").unwrap());
    let cl = count_classes(
        parse_ptx(OPENCL_REDUCE)
            .unwrap()
            .kernel("reduce_sum")
            .unwrap(),
    );
    let mut md = String::new();
    let rows = opencl_beside_cuda("PTX", "reduce", "reduce_sum", Some(&cl), Some(&cu), &mut md);
    let lines: Vec<&str> = md.trim_end().lines().collect();
    assert_eq!(lines[0], "### reduce");
    assert_eq!(lines[2], "PTX instructions by class: reduce");
    assert_eq!(
        lines[4],
        "| class | group | OpenCL | CUDA | CUDA - OpenCL |"
    );
    assert!(lines.contains(&"| mov | data-movement | 7 | 23 | +16 |"));
    assert!(lines.contains(&"| st.global | data-movement | 1 | 0 | -1 |"));
    assert!(lines.contains(&"| synchronization | synchronization | 2 | 2 | 0 |"));
    assert_eq!(
        lines.last().copied(),
        Some("| **total** | | 43 | 71 | +28 |")
    );
    // heading, blank, caption, blank, header, separator + one row per class + total
    assert_eq!(lines.len(), 6 + InstrClass::ALL.len() + 1);

    assert_eq!(rows.len(), 2 * InstrClass::ALL.len());
    assert_eq!(
        rows[0],
        ClassCountRow {
            pair: "reduce".into(),
            kernel: "reduce_sum".into(),
            api: "OpenCL".into(),
            class: "arithmetic".into(),
            count: 9,
        }
    );
    assert_eq!(rows[1].api, "CUDA");
    assert_eq!(rows[1].count, 12);
    let sum = |api: &str| {
        rows.iter()
            .filter(|r| r.api == api)
            .map(|r| r.count)
            .sum::<u64>()
    };
    assert_eq!(sum("CUDA"), cu.total());
    assert_eq!(sum("OpenCL"), cl.total());
}

// ---- parser details on small inline inputs ---------------------------------------

#[test]
fn several_instructions_per_line_and_statements_spanning_lines() {
    let k = only_kernel(&wrap(
        "add.s32 %r1, %r2, %r3; sub.s32 %r4, %r1, 1;mul.lo.s32 %r5,\n   %r4,\n   %r4\n;\nret;",
    ));
    let ops: Vec<String> = k.instructions.iter().map(full_opcode).collect();
    assert_eq!(ops, vec!["add.s32", "sub.s32", "mul.lo.s32", "ret"]);
    assert_eq!(k.instructions[2].operands, "%r5, %r4, %r4");
    // Lines: the body starts on line 6 of the wrapped text.
    assert_eq!(k.instructions[0].line, 6);
    assert_eq!(k.instructions[2].line, 6);
    assert_eq!(k.instructions[3].line, 10);
}

#[test]
fn comments_are_never_counted() {
    let k = only_kernel(&wrap(
        "// add.f32 %f1, %f2, %f3;\n\
         /* bar.sync 0;\n   mov.u32 %r1, 0; */\n\
         mov.u32 /* inline */ %r2, 1; // trailing ret;\n\
         /**/ret;/* exit; */",
    ));
    let ops: Vec<String> = k.instructions.iter().map(full_opcode).collect();
    assert_eq!(ops, vec!["mov.u32", "ret"]);
    assert_eq!(k.instructions[0].operands, "%r2, 1");
    assert_eq!(k.instructions[0].line, 9);
}

#[test]
fn predicates_and_modifiers() {
    let k = only_kernel(&wrap(
        "@%p1 bra $L__BB0_2;\n@!%p2 bra.uni $L__BB0_3;\n@ !%p3 exit;\n\
         ld.shared::cta.f32 %f1, [%r1];\nst.async.shared::cluster.b32 [%r1], %r2;\n\
         ld.f32 %f2, [%rd1];\nst.b32 [%rd1], %r2;\nldu.global.f32 %f3, [%rd2];\n\
         ld.const.f32 %f4, [c];\nbar.warp.sync -1;\nbarrier.sync 0;\nfence.acq_rel.gpu;\n\
         red.global.add.u32 [%rd1], 1;\nvote.sync.ballot.b32 %r3, %p1, -1;\n\
         lop3.b32 %r4, %r1, %r2, %r3, 0x96;\ncvt.rn.f32.s32 %f5, %r1;\n\
         frobnicate.x %r1;\nst.const.f32 [c], %f1;",
    ));
    assert_eq!(k.instructions[2].opcode, "exit");
    let classes: Vec<InstrClass> = k.instructions.iter().map(|i| i.class()).collect();
    use InstrClass as C;
    assert_eq!(
        classes,
        vec![
            C::FlowControl,
            C::FlowControl,
            C::FlowControl,
            C::LdShared,
            C::StShared,
            C::LdGeneric,
            C::StGeneric,
            C::LdGlobal,
            C::LdConst,
            C::Synchronization,
            C::Synchronization,
            C::Synchronization,
            C::Atomic,
            C::Warp,
            C::LogicShift,
            C::Cvt,
            C::Other,
            C::Other,
        ]
    );
    assert_eq!(k.instructions[3].modifiers, vec!["shared::cta", "f32"]);
}

#[test]
fn directives_registers_and_variables() {
    let src = ".version 8.0 // trailing comment\n\
               .target sm_90, texmode_independent\n\
               .address_size 64\n\
               .file 1 \"C://path/with//slashes.cl\"\n\
               .global .align 4 .b8 table[8] = {0, 0, 128, 63, 0, 0, 0, 64};\n\
               .const .align 16 .v4 .f32 coeffs[2];\n\
               .shared .align 4 .f32 tile[16][17];\n\
               .extern .shared .align 16 .b8 dyn_smem[];\n\
               .extern .func (.param .b32 func_retval0) vprintf(.param .b64 a, .param .b64 b);\n\
               .some_unknown_directive foo, bar;\n\
               .visible .entry k(.param .align 8 .b8 k_param_0[16])\n\
               .maxntid 256, 1, 1\n\
               .minnctapersm 2\n\
               {\n\
               .reg .pred %p<3>;\n\
               .reg .f32 %f<12>, %acc;\n\
               .reg .v4 .b32 %v<2>;\n\
               .local .align 8 .b8 depot[40];\n\
               .shared .u64 counters[4];\n\
               .pragma \"nounroll\";\n\
               .loc 1 2 3\n\
               .unknown_in_body 7;\n\
               mov.u32 %r1, tile;\n\
               ret;\n\
               }\n";
    let m = parse_ptx(src).unwrap();
    let names: Vec<(&str, &str, Option<u64>)> = m
        .globals
        .iter()
        .map(|v| (v.space.as_str(), v.name.as_str(), v.bytes))
        .collect();
    assert_eq!(
        names,
        vec![
            ("global", "table", Some(8)),
            ("const", "coeffs", Some(32)),
            ("shared", "tile", Some(16 * 17 * 4)),
            ("shared", "dyn_smem", None),
        ]
    );
    let k = m.kernel("k").unwrap();
    assert_eq!(k.local_bytes, 40);
    assert_eq!(count_classes(k).total(), 2);
}

#[test]
fn nested_blocks_and_vector_operands() {
    let k = only_kernel(&wrap(
        "{\n.reg .b32 t;\n{ mov.b64 {%r1, %r2}, %rd1; }\n}\nst.global.v2.f32 [%rd2], {%f1, %f2};",
    ));
    assert_eq!(k.instructions.len(), 2);
    assert_eq!(k.instructions[0].operands, "{%r1, %r2}, %rd1");
    assert_eq!(k.instructions[1].class(), InstrClass::StGlobal);
}

#[test]
fn errors_name_the_line() {
    let cases: Vec<(String, PtxError)> = vec![
        (
            ".version 9.0\n}\n".to_string(),
            PtxError::UnmatchedClose { line: 2 },
        ),
        (
            ".version 9.0\n.entry k()\n{\nret;\n".to_string(),
            PtxError::UnclosedBrace { line: 3 },
        ),
        (
            ".version 9.0\n.entry k()\n{\n{\nret;\n}\n".to_string(),
            PtxError::UnclosedBrace { line: 3 },
        ),
        (
            ".version 9.0\n\n/* never closed\nret;".to_string(),
            PtxError::UnterminatedComment { line: 3 },
        ),
        (
            ".entry k()\n{\nret\n}\n".to_string(),
            PtxError::UnterminatedStatement { line: 3 },
        ),
        (
            ".version 9.0\nadd.s32 %r1, %r2, %r3;\n".to_string(),
            PtxError::OutsideFunction {
                line: 2,
                text: "add.s32 %r1, %r2, %r3".to_string(),
            },
        ),
        (
            ".entry k()\n{\n.entry j()\n{\n}\n}\n".to_string(),
            PtxError::NestedFunction { line: 3 },
        ),
        (
            wrap("call.uni (retval0, f;"),
            PtxError::UnbalancedStatement { line: 6 },
        ),
        (
            wrap(".reg .b32 %r<x>;"),
            PtxError::BadStatement {
                line: 6,
                text: ".reg .b32 %r<x>".to_string(),
            },
        ),
        (
            ".pragma \"oops;\n".to_string(),
            PtxError::UnterminatedString { line: 1 },
        ),
        (
            "\n.pragma \"oops\\\n\";\n".to_string(),
            PtxError::UnterminatedString { line: 2 },
        ),
        (
            ".entry ()\n{\n}\n".to_string(),
            PtxError::BadHeader {
                line: 1,
                reason: "missing or invalid function name".to_string(),
            },
        ),
    ];
    for (src, want) in cases {
        let got = parse_ptx(&src).unwrap_err();
        assert_eq!(got, want, "input: {src:?}");
        assert_eq!(line(&got), line(&want));
        assert!(got
            .to_string()
            .starts_with(&format!("line {}:", line(&want))));
    }
}

#[test]
fn empty_and_comment_only_inputs_parse() {
    for src in ["", "\n\n", "// just a comment\n/* and\nanother */"] {
        let m = parse_ptx(src).unwrap();
        assert!(m.kernels.is_empty());
    }
}

#[test]
fn opcode_table_has_no_duplicates_and_covers_the_brief() {
    let mut seen = BTreeSet::new();
    for op in OPCODE_CLASSES.iter().flat_map(|(_, opcodes)| *opcodes) {
        assert!(seen.insert(*op), "duplicate opcode {op}");
    }
    let cases: &[(&str, &[&str], InstrClass)] = &[
        ("fma", &["rn", "f32"], InstrClass::Arithmetic),
        ("mad", &["lo", "s32"], InstrClass::Arithmetic),
        ("rsqrt", &["approx", "f32"], InstrClass::Arithmetic),
        ("prmt", &["b32"], InstrClass::LogicShift),
        ("cvta", &["to", "global", "u64"], InstrClass::Cvt),
        ("ld", &["param", "u64"], InstrClass::LdParam),
        ("ld", &["local", "f32"], InstrClass::LdLocal),
        ("st", &["param", "b32"], InstrClass::StParam),
        ("st", &["local", "f32"], InstrClass::StLocal),
        ("selp", &["f32"], InstrClass::FlowControl),
        ("slct", &["f32", "s32"], InstrClass::FlowControl),
        ("set", &["lt", "u32", "u32"], InstrClass::FlowControl),
        ("membar", &["gl"], InstrClass::Synchronization),
        ("match", &["any", "sync", "b32"], InstrClass::Warp),
        ("redux", &["sync", "add", "u32"], InstrClass::Warp),
        ("activemask", &["b32"], InstrClass::Warp),
        ("tex", &["2d", "v4", "f32", "f32"], InstrClass::Other),
    ];
    for (op, mods, want) in cases {
        let mods: Vec<String> = mods.iter().map(|s| s.to_string()).collect();
        assert_eq!(classify_opcode(op, &mods), *want, "{op}");
    }
}

#[test]
fn class_names_round_trip_and_groups() {
    for &c in InstrClass::ALL {
        assert_eq!(c.name().parse(), Ok(c));
    }
    assert!("nope".parse::<InstrClass>().is_err());
    assert_eq!(InstrClass::LdGlobal.group(), ClassGroup::DataMovement);
    assert_eq!(InstrClass::Mov.group(), ClassGroup::DataMovement);
    assert_eq!(InstrClass::Other.group(), ClassGroup::Other);
    let mut counts = ClassCounts::new();
    assert_eq!(counts.counts.len(), InstrClass::ALL.len());
    counts.add(InstrClass::LdGlobal, 3);
    counts.add(InstrClass::Mov, 2);
    counts.add(InstrClass::Other, 1);
    assert_eq!(counts.get(InstrClass::LdGlobal), 3);
    assert_eq!(counts.total(), 6);
    assert_eq!(ClassCounts::default(), ClassCounts::new());
}

// ---- properties ------------------------------------------------------------------

fn check_totals(m: &PtxModule) {
    for k in &m.kernels {
        let c = count_classes(k);
        let by_class: u64 = InstrClass::ALL.iter().map(|x| c.get(*x)).sum();
        assert_eq!(c.total(), by_class);
        assert_eq!(c.total(), k.instructions.len() as u64);
    }
}

#[test]
fn totals_are_sums_on_all_fixtures() {
    for f in ALL_FIXTURES {
        check_totals(&parse_ptx(f).unwrap());
    }
}

const OPS: &[&str] = &[
    "add.s32 %r1, %r2, %r3",
    "fma.rn.f32 %f1, %f2, %f3, %f4",
    "ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1]",
    "st.shared.f32 [%r1], %f1",
    "shfl.sync.down.b32 %r1|%p1, %r2, 16, 31, -1",
    "bar.sync 0",
    "atom.global.add.f32 %f1, [%rd1], %f2",
    "setp.lt.u32 %p1, %r1, %r2",
    "bra $L__BB0_1",
    "xor.b32 %r1, %r2, %r3",
    "mystery.op %r1",
    "cvt.rn.f32.s32 %f1, %r1",
];

proptest! {
    #[test]
    fn parse_never_panics_on_arbitrary_strings(s in ".{0,400}") {
        if let Ok(m) = parse_ptx(&s) {
            check_totals(&m);
        }
    }

    #[test]
    fn parse_never_panics_on_ptx_like_noise(
        s in proptest::collection::vec(
            prop_oneof![
                Just("{"), Just("}"), Just("("), Just(")"), Just(";"), Just(":"),
                Just("\n"), Just(" "), Just("//"), Just("/*"), Just("*/"), Just("\""),
                Just("@%p1"), Just("@!"), Just(".entry"), Just(".func"), Just(".reg"),
                Just(".shared"), Just(".section"), Just(".loc"), Just("="), Just("<"),
                Just(">"), Just("["), Just("]"), Just(","), Just("k"), Just("$L1"),
                Just("add.s32"), Just("%r1"), Just("ld.global.f32"), Just("12"),
            ],
            0..80,
        )
    ) {
        let text: String = s.concat();
        if let Ok(m) = parse_ptx(&text) {
            check_totals(&m);
        }
    }

    #[test]
    fn generated_bodies_count_every_instruction(
        lines in proptest::collection::vec(
            proptest::collection::vec((0..OPS.len(), any::<bool>()), 1..4),
            0..30,
        )
    ) {
        // Several `;`-separated instructions per line, some predicated.
        let mut body = String::new();
        let mut expected = ClassCounts::new();
        for line in &lines {
            for (idx, pred) in line {
                if *pred {
                    body.push_str("@!%p1 ");
                }
                body.push_str(OPS[*idx]);
                body.push_str("; ");
                let probe = parse_instruction(OPS[*idx], 1).unwrap();
                expected.add(probe.class(), 1);
            }
            body.push('\n');
        }
        let m = parse_ptx(&wrap(&body)).unwrap();
        let counts = count_classes(&m.kernels[0]);
        prop_assert_eq!(&counts, &expected);
        prop_assert_eq!(counts.total(), lines.iter().map(|l| l.len() as u64).sum::<u64>());
    }

    #[test]
    fn inserted_comments_never_change_counts(
        fixture in 0..ALL_FIXTURES.len(),
        at in proptest::collection::vec(any::<prop::sample::Index>(), 1..6),
        block in any::<bool>(),
    ) {
        let src = ALL_FIXTURES[fixture];
        let baseline = parse_ptx(src).unwrap();
        let mut lines: Vec<String> = src.lines().map(str::to_string).collect();
        for ix in &at {
            let pos = ix.index(lines.len() + 1);
            let comment = if block {
                "/* add.f32 %f1, %f2, %f3; { bar.sync 0; }\n ret; */"
            } else {
                "// ld.global.f32 %f1, [%rd1]; } {"
            };
            lines.insert(pos, comment.to_string());
        }
        let m = parse_ptx(&lines.join("\n")).unwrap();
        prop_assert_eq!(m.kernels.len(), baseline.kernels.len());
        for (x, y) in m.kernels.iter().zip(&baseline.kernels) {
            prop_assert_eq!(count_classes(x), count_classes(y));
        }
    }
}
