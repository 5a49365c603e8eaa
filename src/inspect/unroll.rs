//! Whether an unroll pragma took effect, read from the PTX: the stencil kernel (FDTD3d) is
//! compiled by both APIs with the `fdtd-unroll` study's settings (no pragma, point A = the z
//! loop, point B = the radius loop, both), and each build's loop structure counted: back-edges
//! (branches to an earlier label), branches, instructions, shared and local accesses, `.local`
//! bytes.
//!
//! A pragma ignored, or asking for what the compiler does anyway, leaves the PTX body exactly
//! as without it (`same_as_none`, spelled out in `effect`). A z-loop unrolled by k shows k
//! copies of its body (more shared loads per back-edge) and a remainder loop (one more
//! back-edge); a radius loop left rolled keeps the register queue in local memory (`.local`
//! bytes, ld.local) because it is indexed by the loop counter.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::{request, write, write_csv, InspectError, Inspection};
use crate::rows::Api;

use super::ptx::{parse_kernel, PtxError, PtxInstruction};
use super::spaces::has;

pub const UNROLL_CSV: &str = "unroll_evidence.csv";
/// Study data: the `fdtd-unroll` study's one kernel, which this evidence is about, and its file.
pub const KERNEL: &str = "stencil_fdtd3d";
const STEM: &str = "stencil";

/// The settings of the `fdtd-unroll` study: (name, defines).
pub const SETTINGS: &[(&str, &[(&str, &str)])] = &[
    ("none", &[]),
    ("A", &[("UNROLL_A", "9")]),
    ("B", &[("UNROLL_B", "4")]),
    ("A+B", &[("UNROLL_A", "9"), ("UNROLL_B", "4")]),
];

/// One row of `unroll_evidence.csv`; [`analyse`] fills in the loop shape alone.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UnrollRow {
    pub kernel: String,
    pub api: String,
    pub setting: String,
    pub defines: String,
    pub instructions: u64,
    pub branches: u64,
    pub back_edges: u64,
    pub ld_shared: u64,
    pub local_accesses: u64,
    pub local_bytes: u64,
    /// The kernel's PTX instructions are exactly those of the no-pragma build.
    pub same_as_none: bool,
    pub effect: String,
}

/// The text of `.entry name` up to the next function (or the end).
fn body<'a>(ptx: &'a str, name: &str) -> Option<&'a str> {
    let start = ptx.find(&format!(".entry {name}("))?;
    let rest = &ptx[start + 1..];
    let end = [".entry ", ".func "]
        .iter()
        .filter_map(|m| rest.find(m))
        .min()
        .unwrap_or(rest.len());
    Some(&ptx[start..start + 1 + end])
}

/// Branches to a label defined earlier in the body: one per loop (a rotated loop's latch).
pub fn back_edges(body: &str) -> u64 {
    let mut seen: Vec<&str> = Vec::new();
    let mut edges = 0;
    for line in body.lines() {
        let line = line.split("//").next().unwrap_or("").trim();
        if let Some(label) = line.strip_suffix(':') {
            seen.push(label.trim());
            continue;
        }
        // `[@%p] bra[.uni] LABEL;`
        let words: Vec<&str> = line.split_whitespace().collect();
        let opcode = usize::from(words.first().is_some_and(|w| w.starts_with('@')));
        if words.get(opcode).is_some_and(|w| w.starts_with("bra")) {
            let target = words.get(opcode + 1).map(|t| t.trim_end_matches(';'));
            if target.is_some_and(|t| seen.contains(&t)) {
                edges += 1;
            }
        }
    }
    edges
}

/// Why PTX text gives no loop shape of a kernel.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    #[error(transparent)]
    Parse(#[from] PtxError),
    #[error("the PTX has no entry {0}")]
    NoKernel(String),
}

/// The loop shape of `name` in a PTX module, and its instruction list for comparisons.
pub fn analyse(ptx: &str, name: &str) -> Result<(UnrollRow, Vec<String>), AnalysisError> {
    let kernel = parse_kernel(ptx, name)?.ok_or_else(|| AnalysisError::NoKernel(name.into()))?;
    let ins = &kernel.instructions;
    let count = |keep: fn(&PtxInstruction) -> bool| ins.iter().filter(|i| keep(i)).count() as u64;
    let shape = UnrollRow {
        kernel: KERNEL.into(),
        instructions: ins.len() as u64,
        branches: count(|i| i.opcode == "bra"),
        back_edges: back_edges(body(ptx, name).unwrap_or("")),
        ld_shared: count(|i| i.opcode == "ld" && has(&i.modifiers, "shared")),
        local_accesses: count(|i| {
            matches!(i.opcode.as_str(), "ld" | "st") && has(&i.modifiers, "local")
        }),
        local_bytes: kernel.local_bytes,
        ..UnrollRow::default()
    };
    let listing = ins
        .iter()
        .map(|i| format!("{} {:?} {}", i.opcode, i.modifiers, i.operands))
        .collect();
    Ok((shape, listing))
}

fn effect(setting: &str, same: bool, shape: &UnrollRow, none: &UnrollRow) -> String {
    if setting == "none" {
        return "baseline".into();
    }
    if same {
        // Identical PTX: the pragma was ignored, or asked for what the compiler did anyway
        // (a constant 4-trip loop is unrolled without being asked).
        return "no effect: PTX identical to the build without pragmas".into();
    }
    format!(
        "honoured: PTX differs ({} -> {} instructions, {} -> {} back-edges, {} -> {} ld.shared, \
         {} -> {} local accesses)",
        none.instructions,
        shape.instructions,
        none.back_edges,
        shape.back_edges,
        none.ld_shared,
        shape.ld_shared,
        none.local_accesses,
        shape.local_accesses
    )
}

/// Rows for one API from its PTX per setting (in [`SETTINGS`] order; `None` when it gave none);
/// why one has no shape is noted.
pub fn rows_for(api: &str, ptx: &[Option<String>], notes: &mut Vec<String>) -> Vec<UnrollRow> {
    let analysed: Vec<Option<(UnrollRow, Vec<String>)>> = ptx
        .iter()
        .zip(SETTINGS)
        .map(|(t, (s, _))| {
            analyse(t.as_ref()?, KERNEL)
                .map_err(|e| notes.push(format!("unroll evidence: {api} {s}: {e}")))
                .ok()
        })
        .collect();
    let Some(Some((none, none_list))) = analysed.first().cloned() else {
        return Vec::new();
    };
    let mut rows = Vec::new();
    for ((setting, defines), a) in SETTINGS.iter().zip(&analysed) {
        let Some((shape, list)) = a else { continue };
        let same = *list == none_list;
        rows.push(UnrollRow {
            api: api.into(),
            setting: (*setting).into(),
            defines: defines
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" "),
            same_as_none: same,
            effect: effect(setting, same, shape, &none),
            ..shape.clone()
        });
    }
    rows
}

/// The PTX of one API per setting (CUDA's from `offline` without a device), each written to
/// `stencil.<setting>.<api>.ptx`.
fn ptx_per_setting(insp: &mut Inspection, api: Api) -> Result<Vec<Option<String>>, InspectError> {
    let mut texts = Vec::new();
    for (setting, defines) in SETTINGS {
        let mut req = request(insp.sources, api, STEM, insp.local, false)?;
        req.defines
            .extend(defines.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let compiled = match (insp.side(api), api) {
            (Some(b), _) => b.compile(&req).and_then(|p| b.program_text(p)),
            (None, Api::Cuda) => (insp.offline)(&req, &insp.arch).map(Some),
            (None, Api::OpenCl) => Ok(None),
        };
        let text = compiled.unwrap_or_else(|e| {
            insp.notes
                .push(format!("unroll evidence: {api} {setting}: {e}"));
            None
        });
        if let Some(t) = &text {
            let file = setting.replace('+', "");
            let ext = api.label().to_lowercase();
            let path = insp.out.join(format!("{STEM}.{file}.{ext}.ptx"));
            write(&path, t, &mut insp.files)?;
        }
        texts.push(text);
    }
    Ok(texts)
}

/// Compiles the stencil with every setting on both sides, writes the PTX, `unroll_evidence.csv`
/// and returns its Markdown table.
pub(super) fn run(insp: &mut Inspection) -> Result<String, InspectError> {
    let cu_ptx = ptx_per_setting(insp, Api::Cuda)?;
    let cl_ptx = ptx_per_setting(insp, Api::OpenCl)?;
    let mut rows = rows_for("OpenCL", &cl_ptx, &mut insp.notes);
    rows.extend(rows_for("CUDA", &cu_ptx, &mut insp.notes));
    write_csv(&insp.out.join(UNROLL_CSV), &rows, &mut insp.files)?;
    Ok(markdown(&rows))
}

pub fn markdown(rows: &[UnrollRow]) -> String {
    let mut md = format!(
        "## Unroll pragmas in the PTX ({KERNEL}; A = z loop, B = radius loop)\n\n\
         | api | setting | instr. | branches | back-edges | ld.shared | local ld/st | .local B | effect |\n\
         |---|---|---|---|---|---|---|---|---|\n"
    );
    for r in rows {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.api,
            r.setting,
            r.instructions,
            r.branches,
            r.back_edges,
            r.ld_shared,
            r.local_accesses,
            r.local_bytes,
            r.effect
        );
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOOP: &str = ".visible .entry k(\n.param .u64 p\n)\n{\n.reg .pred %p<2>;\n.reg .b32 %r<4>;\n\
        .shared .align 4 .b8 t[64];\nmov.u32 %r1, 0;\n$L__BB0_1:\nld.shared.f32 %r2, [t];\n\
        add.s32 %r1, %r1, 1;\nsetp.lt.u32 %p1, %r1, 9;\n@%p1 bra.uni $L__BB0_1;\nbra.uni $L__BB0_2;\n\
        $L__BB0_2:\nret;\n}\n";

    #[test]
    fn a_branch_back_to_an_earlier_label_is_a_loop() {
        assert_eq!(back_edges(LOOP), 1);
        let (shape, _) = analyse(LOOP, "k").unwrap();
        assert_eq!(shape.back_edges, 1);
        assert_eq!(shape.branches, 2, "one back, one forward");
        assert_eq!(shape.ld_shared, 1);
        assert!(analyse(LOOP, "other")
            .unwrap_err()
            .to_string()
            .contains("no entry other"));
    }

    #[test]
    fn an_ignored_pragma_is_reported_from_identical_ptx() {
        let unrolled = LOOP.replace(
            "ld.shared.f32 %r2, [t];\n",
            "ld.shared.f32 %r2, [t];\nld.shared.f32 %r3, [t+4];\n",
        );
        let texts = [LOOP, LOOP, &unrolled, &unrolled]
            .map(|t| Some(t.replace("entry k(", "entry stencil_fdtd3d(")));
        let mut notes = Vec::new();
        let rows = rows_for("CUDA", &texts, &mut notes);
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(rows.len(), 4);
        assert!(rows[1].same_as_none && rows[1].effect.starts_with("no effect"));
        assert!(!rows[2].same_as_none && rows[2].effect.starts_with("honoured"));
        assert!(
            rows[2].effect.contains("1 -> 2 ld.shared"),
            "{}",
            rows[2].effect
        );
        assert!(markdown(&rows).contains("| CUDA | A+B |"));
    }
}
