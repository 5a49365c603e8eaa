//! SASS, the machine code both front ends' PTX becomes: where PTX looks alike but times do
//! not, the difference may only show after the second stage.
//!
//! Both PTX texts (NVRTC's, and NVIDIA OpenCL's from `CL_PROGRAM_BINARIES`) are assembled by one
//! second stage, the CUDA driver's JIT with default options (as NVIDIA's OpenCL does on load),
//! and disassembled with `cuobjdump -sass`; instructions are counted per function in the PTX
//! report's classes ([`InstrClass`]), so the two tables read alike.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::ptx::{opencl_beside_cuda, ClassCounts, InstrClass};
use super::{FamilyPtx, InspectError, Inspection};
use crate::backend::JitOptions;
use crate::families::all_variants;
use crate::rows::ClassCountRow;

/// SASS instructions of one function, as opcodes with their modifiers (`IMAD.WIDE.U32`).
pub type SassFunctions = BTreeMap<String, Vec<String>>;

/// The opcode (first dotted part, after any predicate) of one `cuobjdump -sass` code line
/// such as `/*0070*/  @!P0 BRA `(.L_x_1) ;`; `None` for anything else.
fn opcode_of(line: &str) -> Option<String> {
    let rest = line.trim_start().strip_prefix("/*")?;
    let (address, rest) = rest.split_once("*/")?;
    if address.is_empty() || !address.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let mut words = rest.split_whitespace();
    let mut word = words.next()?;
    if word.starts_with('@') {
        word = words.next()?;
    }
    let word = word.trim_end_matches(';');
    let first = word.chars().next()?;
    (first.is_ascii_uppercase()).then(|| word.to_string())
}

/// Splits `cuobjdump -sass` output into functions (`Function : NAME` headers) and their
/// instructions. Lines before the first header are ignored.
pub fn parse_cuobjdump(text: &str) -> SassFunctions {
    let mut functions = SassFunctions::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(name) = line.trim().strip_prefix("Function : ") {
            let name = name.trim().to_string();
            functions.entry(name.clone()).or_default();
            current = Some(name);
        } else if let (Some(name), Some(op)) = (&current, opcode_of(line)) {
            functions.entry(name.clone()).or_default().push(op);
        }
    }
    functions
}

/// The class of one SASS opcode (`IMAD.WIDE.U32` is `IMAD`). The uniform datapath's
/// opcodes (`UIADD3`, `ULDC`) count as their vector twins. Choices, matching the PTX table:
/// compares and selects (`ISETP`, `SEL`) are flow control as `setp`/`selp` are; constant-bank
/// loads (`LDC`, which is how SASS reads kernel parameters) are `ld.const`; `NOP` padding is
/// not an instruction of the kernel and is skipped by [`count`].
pub fn classify(opcode: &str) -> InstrClass {
    let base = opcode.split('.').next().unwrap_or(opcode);
    let class = class_of_base(base);
    match (class, base.strip_prefix('U')) {
        (InstrClass::Other, Some(vector)) => class_of_base(vector),
        _ => class,
    }
}

fn class_of_base(base: &str) -> InstrClass {
    use InstrClass::*;
    match base {
        "FADD" | "FMUL" | "FFMA" | "FMNMX" | "MUFU" | "FCHK" | "HADD2" | "HMUL2" | "HFMA2"
        | "HMNMX2" | "DADD" | "DMUL" | "DFMA" | "IADD3" | "IADD" | "IMAD" | "IMUL" | "IMNMX"
        | "IABS" | "LEA" | "IDP" | "VIADD" | "VIMNMX" | "VIADDMNMX" | "HMMA" | "IMMA" => Arithmetic,
        "LOP3" | "LOP" | "SHF" | "SHL" | "SHR" | "PRMT" | "BMSK" | "SGXT" | "POPC" | "FLO"
        | "BREV" | "BFE" | "BFI" => LogicShift,
        "MOV" | "MOV32I" | "S2R" | "S2UR" | "CS2R" | "R2UR" | "R2P" | "P2R" => Mov,
        "I2F" | "F2I" | "F2F" | "I2I" | "FRND" | "I2FP" | "F2IP" | "F2FP" => Cvt,
        "LDC" => LdConst,
        "LDG" => LdGlobal,
        "LDS" | "LDSM" => LdShared,
        "LDL" => LdLocal,
        "LD" => LdGeneric,
        "STG" => StGlobal,
        "STS" => StShared,
        "STL" => StLocal,
        "ST" => StGeneric,
        "BRA" | "BRX" | "JMP" | "JMX" | "CALL" | "RET" | "EXIT" | "BSSY" | "BSYNC" | "BREAK"
        | "BPT" | "KILL" | "ISETP" | "FSETP" | "DSETP" | "HSETP2" | "PSETP" | "PLOP3" | "SEL"
        | "FSEL" | "YIELD" => FlowControl,
        "BAR" | "MEMBAR" | "DEPBAR" | "ERRBAR" | "WARPSYNC" | "CCTL" | "SYNCS" | "FENCE" => {
            Synchronization
        }
        "SHFL" | "VOTE" | "MATCH" | "REDUX" => Warp,
        "ATOM" | "ATOMG" | "ATOMS" | "RED" => Atomic,
        _ => Other,
    }
}

/// One function's instructions by class, `NOP` padding left out.
pub fn count(instructions: &[String]) -> ClassCounts {
    let mut counts = ClassCounts::new();
    for op in instructions.iter().filter(|op| !op.starts_with("NOP")) {
        counts.add(classify(op), 1);
    }
    counts
}

/// A CUDA toolkit program (`cuobjdump`, `ncu`) on the search path, else in `$CUDA_HOME/bin`
/// or `/usr/local/cuda/bin`.
pub fn find_cuda_tool(name: &str) -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    let toolkit = std::env::var_os("CUDA_HOME")
        .map(PathBuf::from)
        .into_iter()
        .chain([PathBuf::from("/usr/local/cuda")])
        .map(|home| home.join("bin"));
    on_path
        .into_iter()
        .chain(toolkit)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// Why `cuobjdump -sass` gave no disassembly: it did not start, or it failed and said why.
#[derive(Debug, thiserror::Error)]
pub enum DisassemblyError {
    #[error("cannot run {}: {source}", tool.display())]
    Run {
        tool: PathBuf,
        source: std::io::Error,
    },
    #[error("{} -sass {} failed: {stderr}", tool.display(), cubin.display())]
    Failed {
        tool: PathBuf,
        cubin: PathBuf,
        stderr: String,
    },
}

/// Disassembles one cubin file with `cuobjdump -sass`; the error names the tool's message.
pub fn disassemble(tool: &Path, cubin: &Path) -> Result<String, DisassemblyError> {
    let output = Command::new(tool)
        .arg("-sass")
        .arg(cubin)
        .output()
        .map_err(|source| DisassemblyError::Run {
            tool: tool.into(),
            source,
        })?;
    if !output.status.success() {
        return Err(DisassemblyError::Failed {
            tool: tool.into(),
            cubin: cubin.into(),
            stderr: String::from_utf8_lossy(&output.stderr).trim().into(),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The SASS section of the inspect report: every kernel pair's SASS by class, side by side,
/// the cubins and disassembly written beside the PTX; the Markdown and CSV rows.
pub(super) fn report(
    insp: &mut Inspection,
    stems: &[FamilyPtx],
) -> Result<(String, Vec<ClassCountRow>), InspectError> {
    let Some(tool) = find_cuda_tool("cuobjdump") else {
        insp.notes.push(
            "--sass: cuobjdump was not found on PATH, in $CUDA_HOME/bin or /usr/local/cuda/bin"
                .into(),
        );
        return Ok((String::new(), Vec::new()));
    };
    let (mut md, mut rows) = (String::new(), Vec::new());
    let mut d = Disassembly { insp, tool: &tool };
    for s in stems {
        let (cl, cuda) = d.both_sides(s);
        for v in all_variants()
            .iter()
            .filter(|v| v.family.file() == s.stem && !v.kernel.is_empty())
        {
            let pick = |f: &Option<SassFunctions>| f.as_ref()?.get(v.kernel).map(|i| count(i));
            let (a, b) = (pick(&cl), pick(&cuda));
            if a.is_none() && b.is_none() {
                continue;
            }
            let (pair, a, b) = (v.full_name(), a.as_ref(), b.as_ref());
            rows.extend(opencl_beside_cuda("SASS", &pair, v.kernel, a, b, &mut md));
        }
    }
    Ok((md, rows))
}

/// The inspection (its CUDA side, folder, files and notes) and the disassembler.
struct Disassembly<'i, 'a, 'r> {
    insp: &'i mut Inspection<'a, 'r>,
    tool: &'i Path,
}

impl Disassembly<'_, '_, '_> {
    /// Each side's functions of one kernel file: OpenCL's from the cubin its runtime built
    /// where there is one, else from its PTX; CUDA's from its PTX.
    fn both_sides(&mut self, s: &FamilyPtx) -> (Option<SassFunctions>, Option<SassFunctions>) {
        let cl = match &s.opencl_cubin {
            Some(image) => self.functions_of_image(s.stem, "opencl", image.clone()),
            None => s
                .opencl
                .as_ref()
                .and_then(|t| self.functions_of(s.stem, "opencl", t)),
        };
        let cuda = s
            .cuda
            .as_ref()
            .and_then(|t| self.functions_of(s.stem, "cuda", t));
        (cl, cuda)
    }

    /// Assembles one side's PTX, writes the cubin and its disassembly, and parses it.
    fn functions_of(&mut self, stem: &str, api: &str, ptx: &str) -> Option<SassFunctions> {
        // `sass_section` runs this only with a CUDA side.
        let cu = self.insp.cu.as_deref()?;
        let cubin = match cu.machine_code(ptx, &JitOptions::default()) {
            Ok(Some(c)) => c,
            Ok(None) => {
                self.insp.notes.push(format!(
                    "{stem}: --sass needs a CUDA device (the driver's JIT)"
                ));
                return None;
            }
            Err(e) => {
                self.insp
                    .notes
                    .push(format!("{stem}: {api} PTX could not be assembled: {e}"));
                return None;
            }
        };
        self.functions_of_image(stem, api, cubin)
    }

    /// Writes a cubin (assembled here, or NVIDIA OpenCL's own from a private compute cache) and
    /// its disassembly, and parses it.
    fn functions_of_image(
        &mut self,
        stem: &str,
        api: &str,
        cubin: Vec<u8>,
    ) -> Option<SassFunctions> {
        let cubin_path = self.insp.out.join(format!("{stem}.{api}.cubin"));
        if let Err(e) = crate::export::write_atomic(&cubin_path, &cubin) {
            self.insp.notes.push(format!("{stem}: {e}"));
            return None;
        }
        self.insp.files.push(cubin_path.clone());
        match disassemble(self.tool, &cubin_path) {
            Ok(text) => {
                let sass_path = self.insp.out.join(format!("{stem}.{api}.sass"));
                if crate::export::write_atomic(&sass_path, text.as_bytes()).is_ok() {
                    self.insp.files.push(sass_path);
                }
                Some(parse_cuobjdump(&text))
            }
            Err(e) => {
                self.insp.notes.push(format!("{stem}: {e}"));
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of `cuobjdump -sass` output (CUDA 12/13): a header per function, code lines
    /// with an address comment, the encoding on a continuation line.
    const SAMPLE: &str = "
Fatbin elf code:
================
arch = sm_90
code version = [1,7]
host = linux
compile_size = 64bit

	code for sm_90
		Function : k
	.headerflags	@\"EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)\"
        /*0000*/                   LDC R1, c[0x0][0x28] ;   /* 0x00000a00ff017b82 */
                                                            /* 0x000fe40000000800 */
        /*0010*/                   S2R R0, SR_TID.X ;       /* 0x0000000000007919 */
        /*0020*/                   ULDC UR4, c[0x0][0x210] ;
        /*0030*/                   ISETP.GE.U32.AND P0, PT, R0, UR4, PT ;
        /*0040*/               @P0 EXIT ;
        /*0050*/                   IMAD.WIDE.U32 R2, R0, 0x4, R2 ;
        /*0060*/                   LDG.E R5, desc[UR4][R2.64] ;
        /*0070*/                   FFMA R5, R5, R5, 1 ;
        /*0080*/                   UIADD3 UR5, UR4, 0x1, URZ ;
        /*0090*/                   STG.E desc[UR4][R2.64], R5 ;
        /*00a0*/                   EXIT ;
        /*00b0*/                   BRA 0xb0;
        /*00c0*/                   NOP;
		Function : empty
        /*0000*/                   EXIT ;
";

    #[test]
    fn functions_and_opcodes_are_read_from_cuobjdump_output() {
        let f = parse_cuobjdump(SAMPLE);
        assert_eq!(f.len(), 2);
        assert_eq!(f["empty"], vec!["EXIT"]);
        let k = &f["k"];
        assert_eq!(k.len(), 13, "{k:?}");
        assert_eq!(k[4], "EXIT", "the predicate is not the opcode");
        assert_eq!(k[5], "IMAD.WIDE.U32");
        assert_eq!(k[11], "BRA");
    }

    #[test]
    fn opcodes_fall_into_the_ptx_report_classes() {
        let c = count(&parse_cuobjdump(SAMPLE)["k"]);
        assert_eq!(c.get(InstrClass::LdConst), 2, "LDC and ULDC");
        assert_eq!(c.get(InstrClass::Mov), 1);
        assert_eq!(c.get(InstrClass::Arithmetic), 3, "IMAD, FFMA, UIADD3");
        assert_eq!(c.get(InstrClass::FlowControl), 4, "ISETP, 2 EXIT, BRA");
        assert_eq!(c.get(InstrClass::LdGlobal), 1);
        assert_eq!(c.get(InstrClass::StGlobal), 1);
        assert_eq!(c.get(InstrClass::Other), 0, "NOP padding is not counted");
    }

    #[test]
    fn unknown_opcodes_are_other_not_dropped() {
        assert_eq!(classify("TEX.SCR.LL"), InstrClass::Other);
        assert_eq!(classify("UFOO"), InstrClass::Other);
        assert_eq!(classify("USHF.L.U32"), InstrClass::LogicShift);
        assert_eq!(count(&["TEX".into()]).get(InstrClass::Other), 1);
    }

    /// Real `cuobjdump -sass` output of Listing 4 on an H100 (driver 580.159.04), both PTX
    /// texts assembled by the same driver JIT: the serial-sum loop at unroll point B became 8
    /// shared-memory loads from OpenCL's rolled PTX and 31 from CUDA's unrolled PTX.
    #[test]
    fn real_sass_of_listing4_from_both_front_ends() {
        let count_of = |text: &str| {
            let f = parse_cuobjdump(text);
            count(&f["matvec_listing4"])
        };
        let cl = count_of(include_str!(
            "../../tests/fixtures/sass/h100_matvec_listing4.opencl.sass"
        ));
        let cu = count_of(include_str!(
            "../../tests/fixtures/sass/h100_matvec_listing4.cuda.sass"
        ));
        assert_eq!(cl.get(InstrClass::LdShared), 8);
        assert_eq!(cu.get(InstrClass::LdShared), 31);
        assert_eq!(cl.get(InstrClass::LdGlobal), cu.get(InstrClass::LdGlobal));
        assert_eq!(cl.get(InstrClass::Other), 0, "every opcode is classified");
        assert_eq!(cu.get(InstrClass::Other), 0, "every opcode is classified");
    }

    #[test]
    fn lines_that_are_not_code_have_no_opcode() {
        assert_eq!(opcode_of("    /* 0x000fe40000000800 */"), None);
        assert_eq!(opcode_of("\t.headerflags @\"x\""), None);
        assert_eq!(opcode_of("/*zz*/ MOV R1, R2 ;"), None);
        assert_eq!(opcode_of("/*0010*/ MOV R1, R2 ;"), Some("MOV".into()));
    }
}
