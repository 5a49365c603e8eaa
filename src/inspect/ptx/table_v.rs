//! The paper's Table V: PTX instruction counts of the FFT's forward kernel by class, ours per
//! API and index width beside the paper's ([`crate::paper::FANG_TABLE_V`]: SHOC's FFT by CUDA
//! 3.2's and NVIDIA's OpenCL front ends, quoted as printed; the table's notes say where the
//! paper's subtotal disagrees with its rows).
//!
//! The paper's classes are `ClassGroup`s of our [`InstrClass`]es (opcodes in
//! `OPCODE_CLASSES`, `classify.rs`); warp collectives, atomics and unknown opcodes count in
//! the total only.

use crate::rows::TableVRow;

use super::classify::{ClassGroup, InstrClass};
use super::parse::{count_classes, parse_kernel, PtxError};

pub const FFT_KERNEL: &str = "fft512_forward";

/// The paper's two rows (their native widths: 32-bit CUDA, 64-bit OpenCL).
pub fn paper_rows() -> Vec<TableVRow> {
    crate::paper::FANG_TABLE_V
        .iter()
        .map(|&(api, ar, lo, fl, dm, sy, to)| TableVRow {
            source: "paper (Fang et al. 2011)".into(),
            api: api.into(),
            index: "native".into(),
            index_bits: if api == "CUDA" { 32 } else { 64 },
            arithmetic: ar,
            logic_shift: lo,
            flow_control: fl,
            data_movement: dm,
            synchronization: sy,
            total: to,
        })
        .collect()
}

/// Why PTX text gives no Table V row.
#[derive(Debug, thiserror::Error)]
pub enum RowError {
    #[error("PTX does not parse: {0}")]
    Parse(#[from] PtxError),
    #[error("PTX has no entry {kernel}", kernel = FFT_KERNEL)]
    NoKernel,
}

/// Our row from PTX text holding [`FFT_KERNEL`].
pub fn row_from_ptx(
    ptx: &str,
    api: &str,
    index: &str,
    index_bits: u32,
) -> Result<TableVRow, RowError> {
    let kernel = parse_kernel(ptx, FFT_KERNEL)?.ok_or(RowError::NoKernel)?;
    let counts = count_classes(&kernel);
    let group = |g: ClassGroup| -> u64 {
        let in_group = InstrClass::ALL.iter().filter(|c| c.group() == g);
        in_group.map(|c| counts.get_name(c.name())).sum()
    };
    Ok(TableVRow {
        source: "clvscu".into(),
        api: api.into(),
        index: index.into(),
        index_bits,
        arithmetic: group(ClassGroup::Arithmetic),
        logic_shift: group(ClassGroup::LogicShift),
        flow_control: group(ClassGroup::FlowControl),
        data_movement: group(ClassGroup::DataMovement),
        synchronization: group(ClassGroup::Synchronization),
        total: counts.total(),
    })
}

/// Table V in Markdown: the paper's rows, then ours, with the class mapping and the caveats.
pub fn markdown(ours: &[TableVRow], target: &str) -> String {
    let mut out = format!(
        "# Table V: PTX of the 512-point forward FFT ({FFT_KERNEL}) by instruction class\n\n\
         The paper's rows are quoted from Fang, Varbanescu & Sips (2011), Table V (SHOC's FFT \
         \"forward\", CUDA 3.2 era compilers); ours are static counts of the PTX that each \
         API's compiler gave for clvscu's twins (CUDA target {target}).\n\n\
         | source | API | index | bits | arithmetic | logic/shift | flow control | data movement | sync | total |\n\
         |---|---|---|--:|--:|--:|--:|--:|--:|--:|\n"
    );
    for r in paper_rows().iter().chain(ours) {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.source,
            r.api,
            r.index,
            r.index_bits,
            r.arithmetic,
            r.logic_shift,
            r.flow_control,
            r.data_movement,
            r.synchronization,
            r.total
        ));
    }
    out.push_str(
        "\nClasses: arithmetic = add, sub, mul, mad, fma, div, neg, min, max, rcp, sqrt, sin, \
         cos, ...; logic/shift = and, or, xor, not, lop3, shl, shr, shf, bfe, bfi, prmt, ...; \
         flow control = setp, selp, set, bra, call, ret, exit; data movement = mov, cvt, cvta, \
         ld.*, st.*; sync = bar, membar, fence (src/inspect/ptx/table_v.rs).\n\n\
         The paper's OpenCL logic/shift rows (and 291, or 33, not 4, xor 4, shl 50, shr 43) add \
         up to 425, not the printed subtotal 163; the subtotal is quoted as printed.\n\n\
         The 64-bit-index hypothesis: if the paper's OpenCL excess was 64-bit index arithmetic, \
         our u64 rows (both APIs 64-bit) should carry the logic/shift and flow-control excess on \
         both sides, and the u32 rows on neither.\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel whose class counts are known by construction: 4 arithmetic, 3 logic/shift,
    /// 3 flow control (setp, bra, ret), 5 data movement (mov, cvt, ld.param, ld.global,
    /// st.global), 1 barrier.
    const FIXTURE: &str = r#"
.version 8.0
.target sm_90
.address_size 64

.visible .entry fft512_forward(
    .param .u64 in,
    .param .u64 out,
    .param .u32 n
)
{
    .reg .pred %p<2>;
    .reg .f32 %f<8>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;

    ld.param.u64 %rd1, [in];
    mov.u32 %r1, %ctaid.x;
    shl.b32 %r2, %r1, 9;
    and.b32 %r3, %r2, 511;
    setp.ge.u32 %p1, %r2, %r3;
    @%p1 bra $L__BB0_2;
    cvt.u64.u32 %rd2, %r2;
    ld.global.f32 %f1, [%rd1];
    add.f32 %f2, %f1, %f1;
    sub.f32 %f3, %f2, %f1;
    fma.rn.f32 %f4, %f2, %f3, %f1;
    mul.f32 %f5, %f4, %f4;
    xor.b32 %r4, %r3, %r2;
    bar.sync 0;
    st.global.f32 [%rd1], %f5;
$L__BB0_2:
    ret;
}
"#;

    #[test]
    fn a_fixture_kernel_is_counted_in_the_papers_classes() {
        let r = row_from_ptx(FIXTURE, "CUDA", "u32", 32).unwrap();
        assert_eq!(
            (r.arithmetic, r.logic_shift, r.flow_control),
            (4, 3, 3),
            "{r:?}"
        );
        assert_eq!((r.data_movement, r.synchronization, r.total), (5, 1, 16));
    }

    #[test]
    fn the_table_puts_ours_beside_the_papers() {
        let r = row_from_ptx(FIXTURE, "CUDA", "u64", 64).unwrap();
        let md = markdown(&[r], "compute_90");
        assert!(md.contains("| paper (Fang et al. 2011) | CUDA | native | 32 | 220 | 4 | 4 |"));
        assert!(
            md.contains("| paper (Fang et al. 2011) | OpenCL | native | 64 | 521 | 163 | 188 |")
        );
        assert!(
            md.contains("| clvscu | CUDA | u64 | 64 | 4 | 3 | 3 | 5 | 1 | 16 |"),
            "{md}"
        );
    }

    #[test]
    fn missing_kernel_or_bad_ptx_is_an_error() {
        let other = FIXTURE.replace("fft512_forward", "something_else");
        assert!(row_from_ptx(&other, "CUDA", "u32", 32)
            .unwrap_err()
            .to_string()
            .contains("no entry fft512_forward"));
        assert!(row_from_ptx("{", "CUDA", "u32", 32).is_err());
    }
}
