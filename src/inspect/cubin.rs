//! Machine code as each runtime runs it: whole ELF images (cubins) cut out of the CUDA compute
//! cache's entries, their SASS counted by classes that tell a scalar shared load (`LDS`) from a
//! 128-bit one (`LDS.128`), their resources (`cuobjdump -res-usage`), and the difference of two
//! in a sentence. Pure: `explain`'s machine-code part reads the files and runs the tools.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Sub;

const ELF_MAGIC: &[u8; 4] = b"\x7fELF";
/// `e_machine` of an NVIDIA GPU's code.
const EM_CUDA: u64 = 190;
/// A section that takes no bytes in the file.
const SHT_NOBITS: u64 = 8;

/// The little-endian number of `n` bytes at `at`.
fn le(b: &[u8], at: usize, n: usize) -> Option<u64> {
    let bytes = b.get(at..at + n)?;
    Some(bytes.iter().rev().fold(0, |v, &x| (v << 8) | u64::from(x)))
}

/// The length of the 64-bit little-endian GPU ELF image at the start of `b` (the furthest byte
/// its header tables, sections or segments reach); `None` without one, or if it runs past `b`.
pub fn elf_length(b: &[u8]) -> Option<usize> {
    if b.get(..4)? != ELF_MAGIC || *b.get(4)? != 2 || *b.get(5)? != 1 || le(b, 18, 2)? != EM_CUDA {
        return None;
    }
    let (phoff, shoff) = (le(b, 32, 8)?, le(b, 40, 8)?);
    let (phentsize, phnum) = (le(b, 54, 2)?, le(b, 56, 2)?);
    let (shentsize, shnum) = (le(b, 58, 2)?, le(b, 60, 2)?);
    let mut end = le(b, 52, 2)?
        .max(phoff + phentsize * phnum)
        .max(shoff + shentsize * shnum);
    for i in 0..shnum {
        let at = usize::try_from(shoff + i * shentsize).ok()?;
        if le(b, at + 4, 4)? != SHT_NOBITS {
            end = end.max(le(b, at + 24, 8)? + le(b, at + 32, 8)?);
        }
    }
    for i in 0..phnum {
        let at = usize::try_from(phoff + i * phentsize).ok()?;
        end = end.max(le(b, at + 8, 8)? + le(b, at + 32, 8)?);
    }
    let end = usize::try_from(end).ok()?;
    (end <= b.len()).then_some(end)
}

/// Every whole GPU ELF image inside `bytes` (a compute-cache entry holds them among the
/// driver's bookkeeping), in file order.
pub fn elf_images(bytes: &[u8]) -> Vec<&[u8]> {
    let mut images = Vec::new();
    let mut from = 0;
    while let Some(found) = find(&bytes[from..], ELF_MAGIC) {
        let start = from + found;
        match elf_length(&bytes[start..]) {
            Some(len) => {
                images.push(&bytes[start..start + len]);
                from = start + len;
            }
            None => from = start + 1,
        }
    }
    images
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Whether `image` has the kernel `name`'s `.text.NAME` section.
pub fn holds_kernel(image: &[u8], name: &str) -> bool {
    find(image, format!(".text.{name}\0").as_bytes()).is_some()
}

/// The opcodes that move data, whose width is part of their class.
const MEMORY_OPS: &[&str] = &[
    "LD", "LDG", "LDS", "LDL", "LDSM", "ST", "STG", "STS", "STL", "ATOM", "ATOMS", "ATOMG", "RED",
];
/// The width modifiers kept in a memory op's class (32 bits is the bare opcode).
const WIDTHS: &[&str] = &["U8", "S8", "U16", "S16", "64", "128"];

/// The class of one SASS opcode: a memory op by its space and width (`LDS.U.128` is
/// `LDS.128`, `LDG.E.CONSTANT` is `LDG`), anything else by its base (`IMAD.WIDE.U32` is
/// `IMAD`). Branches (`BRA`), barriers (`BAR`) and `FFMA` stay themselves.
pub fn sass_class(opcode: &str) -> String {
    let mut parts = opcode.split('.');
    let base = parts.next().unwrap_or(opcode);
    if !MEMORY_OPS.contains(&base) {
        return base.to_string();
    }
    parts
        .find(|p| WIDTHS.contains(p))
        .map_or_else(|| base.to_string(), |width| format!("{base}.{width}"))
}

/// One function's instructions by [`sass_class`], `NOP` padding left out.
pub type ClassCounts = BTreeMap<String, u32>;

pub fn class_counts(opcodes: &[String]) -> ClassCounts {
    let mut counts = ClassCounts::new();
    for op in opcodes.iter().filter(|op| !op.starts_with("NOP")) {
        *counts.entry(sass_class(op)).or_default() += 1;
    }
    counts
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Resources {
    pub registers: u32,
    pub stack_bytes: u32,
    pub shared_bytes: u32,
    pub local_bytes: u32,
}

/// The resources per function of `cuobjdump -res-usage` output (`Function NAME:` then a line
/// of `KEY:VALUE` words).
pub fn parse_res_usage(text: &str) -> BTreeMap<String, Resources> {
    let mut all = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some(name) = line.strip_prefix("Function ") {
            current = Some(name.trim_end_matches(':').trim().to_string());
            continue;
        }
        let Some(name) = current.take() else { continue };
        let value = |key: &str| {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(key)?.strip_prefix(':')?.parse().ok())
                .unwrap_or(0)
        };
        all.insert(
            name,
            Resources {
                registers: value("REG"),
                stack_bytes: value("STACK"),
                shared_bytes: value("SHARED"),
                local_bytes: value("LOCAL"),
            },
        );
    }
    all
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct KernelCode {
    pub resources: Resources,
    pub classes: ClassCounts,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassDifference<N> {
    pub class: String,
    pub a: N,
    pub b: N,
}

impl<N: Copy + Ord + Sub<Output = N>> ClassDifference<N> {
    pub fn gap(&self) -> N {
        self.a.max(self.b) - self.a.min(self.b)
    }
}

/// The classes whose counts differ, the largest difference first (ties by name), for any
/// count (SASS classes of a cubin count `u32`, the rows of a code's classes `u64`).
pub fn differences<K, N>(a: &BTreeMap<K, N>, b: &BTreeMap<K, N>) -> Vec<ClassDifference<N>>
where
    K: Ord + AsRef<str>,
    N: Copy + Default + Ord + Sub<Output = N>,
{
    let classes: BTreeSet<&K> = a.keys().chain(b.keys()).collect();
    let mut out: Vec<ClassDifference<N>> = classes
        .into_iter()
        .map(|c| ClassDifference {
            class: c.as_ref().to_string(),
            a: a.get(c).copied().unwrap_or_default(),
            b: b.get(c).copied().unwrap_or_default(),
        })
        .filter(|d| d.a != d.b)
        .collect();
    out.sort_by_key(|d| std::cmp::Reverse(d.gap()));
    out
}

/// How many class differences a sentence names.
const NAMED: usize = 3;

/// The differences of `a` and `b` in one sentence: registers, spills and shared memory where
/// they differ, then the classes that differ most; `None` when there are none.
pub fn difference_sentence(
    a_name: &str,
    a: &KernelCode,
    b_name: &str,
    b: &KernelCode,
) -> Option<String> {
    let mut parts = Vec::new();
    let (ra, rb) = (&a.resources, &b.resources);
    if ra.registers != rb.registers {
        parts.push(format!(
            "{} against {} registers",
            ra.registers, rb.registers
        ));
    }
    if (ra.local_bytes, ra.stack_bytes) != (rb.local_bytes, rb.stack_bytes) {
        parts.push(format!(
            "{} against {} bytes of local memory (spills and stack)",
            ra.local_bytes + ra.stack_bytes,
            rb.local_bytes + rb.stack_bytes
        ));
    }
    if ra.shared_bytes != rb.shared_bytes {
        parts.push(format!(
            "{} against {} bytes of shared memory",
            ra.shared_bytes, rb.shared_bytes
        ));
    }
    let classes: Vec<String> = differences(&a.classes, &b.classes)
        .into_iter()
        .take(NAMED)
        .map(|d| format!("{} {} against {}", d.class, d.a, d.b))
        .collect();
    if !classes.is_empty() {
        parts.push(classes.join(", "));
    }
    (!parts.is_empty()).then(|| format!("{a_name} against {b_name}: {}", parts.join("; ")))
}

/// Whether `rung` reproduces `slow` in what `slow` and `fast` differ by most: its register
/// count is `slow`'s and its count of the most different class is nearer `slow`'s than
/// `fast`'s. A rung that closes a gap without this closed it by another route.
pub fn reproduces(rung: &KernelCode, slow: &KernelCode, fast: &KernelCode) -> bool {
    if rung.resources.registers != slow.resources.registers {
        return false;
    }
    match differences(&slow.classes, &fast.classes).first() {
        None => true,
        Some(d) => {
            let r = rung.classes.get(&d.class).copied().unwrap_or(0);
            r.abs_diff(d.a) < r.abs_diff(d.b)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal GPU ELF: header, one section header table of two entries (null and a
    /// `.text.k` PROGBITS section of 16 bytes), one program header.
    pub(crate) fn tiny_cubin(kernel: &str) -> Vec<u8> {
        let name = format!("\0.text.{kernel}\0");
        let text_off = 64u64;
        let text_len = 16u64;
        let names_off = text_off + text_len;
        let ph_off = names_off + name.len() as u64;
        let sh_off = ph_off + 56;
        let mut b = vec![0u8; (sh_off + 3 * 64) as usize];
        b[..4].copy_from_slice(ELF_MAGIC);
        b[4] = 2;
        b[5] = 1;
        b[18..20].copy_from_slice(&190u16.to_le_bytes());
        b[32..40].copy_from_slice(&ph_off.to_le_bytes());
        b[40..48].copy_from_slice(&sh_off.to_le_bytes());
        b[52..54].copy_from_slice(&64u16.to_le_bytes());
        b[54..56].copy_from_slice(&56u16.to_le_bytes());
        b[56..58].copy_from_slice(&1u16.to_le_bytes());
        b[58..60].copy_from_slice(&64u16.to_le_bytes());
        b[60..62].copy_from_slice(&3u16.to_le_bytes());
        b[names_off as usize..ph_off as usize].copy_from_slice(name.as_bytes());
        let ph = ph_off as usize;
        b[ph + 8..ph + 16].copy_from_slice(&text_off.to_le_bytes());
        b[ph + 32..ph + 40].copy_from_slice(&text_len.to_le_bytes());
        for (i, (off, len, kind)) in [
            (text_off, text_len, 1u32),
            (names_off, name.len() as u64, 3),
        ]
        .into_iter()
        .enumerate()
        {
            let at = sh_off as usize + (i + 1) * 64;
            b[at + 4..at + 8].copy_from_slice(&kind.to_le_bytes());
            b[at + 24..at + 32].copy_from_slice(&off.to_le_bytes());
            b[at + 32..at + 40].copy_from_slice(&len.to_le_bytes());
        }
        b
    }

    #[test]
    fn whole_images_are_cut_out_of_a_cache_entry_between_other_bytes() {
        let (one, two) = (tiny_cubin("sgemm"), tiny_cubin("other"));
        let mut entry = b"driver bookkeeping \x7fELF but not an image".to_vec();
        entry.extend(&one);
        entry.extend(b"more bookkeeping");
        entry.extend(&two);
        entry.extend(b"tail");
        let images = elf_images(&entry);
        assert_eq!(images, vec![one.as_slice(), two.as_slice()]);
        assert!(holds_kernel(images[0], "sgemm") && !holds_kernel(images[0], "sgem"));
        assert!(holds_kernel(images[1], "other"));
    }

    #[test]
    fn an_image_cut_short_is_no_image() {
        let one = tiny_cubin("k");
        assert_eq!(elf_length(&one), Some(one.len()));
        assert!(elf_images(&one[..one.len() - 1]).is_empty());
    }

    #[test]
    fn memory_ops_keep_their_space_and_width_and_the_rest_their_base() {
        for (op, class) in [
            ("LDS.U.128", "LDS.128"),
            ("LDS", "LDS"),
            ("LDS.64", "LDS.64"),
            ("LDG.E.128.CONSTANT", "LDG.128"),
            ("LDG.E.CONSTANT", "LDG"),
            ("STS.128", "STS.128"),
            ("FFMA", "FFMA"),
            ("IMAD.WIDE.U32", "IMAD"),
            ("BAR.SYNC.DEFER_BLOCKING", "BAR"),
        ] {
            assert_eq!(sass_class(op), class, "{op}");
        }
        let ops: Vec<String> = ["LDS", "LDS", "NOP", "FFMA"].map(String::from).to_vec();
        let counts = class_counts(&ops);
        assert_eq!(counts.get("LDS"), Some(&2));
        assert_eq!(counts.get("NOP"), None);
    }

    #[test]
    fn res_usage_is_read_per_function() {
        let text = "Resource usage:\n Common:\n  GLOBAL:0\n Function sgemm:\n  REG:167 STACK:8 \
                    SHARED:12288 LOCAL:4 CONSTANT[0]:400 TEXTURE:0\n Function other:\n  REG:32 \
                    STACK:0 SHARED:0 LOCAL:0\n";
        let r = parse_res_usage(text);
        assert_eq!(
            r["sgemm"],
            Resources {
                registers: 167,
                stack_bytes: 8,
                shared_bytes: 12288,
                local_bytes: 4
            }
        );
        assert_eq!(r["other"].registers, 32);
    }

    fn code(registers: u32, classes: &[(&str, u32)]) -> KernelCode {
        KernelCode {
            resources: Resources {
                registers,
                ..Resources::default()
            },
            classes: classes.iter().map(|(c, n)| (c.to_string(), *n)).collect(),
        }
    }

    #[test]
    fn the_sentence_names_registers_and_the_classes_that_differ_most() {
        let opencl = code(153, &[("LDS", 512), ("FFMA", 1024), ("LDS.128", 0)]);
        let cuda = code(167, &[("LDS.128", 128), ("FFMA", 1024)]);
        let s = difference_sentence("OpenCL", &opencl, "CUDA", &cuda).unwrap();
        assert!(
            s.starts_with("OpenCL against CUDA: 153 against 167 registers"),
            "{s}"
        );
        assert!(
            s.contains("LDS 512 against 0, LDS.128 0 against 128"),
            "{s}"
        );
        assert!(!s.contains("FFMA"), "equal classes are not named: {s}");
        assert_eq!(difference_sentence("a", &cuda, "b", &cuda), None);
    }

    #[test]
    fn a_rung_reproduces_the_slow_code_only_with_its_registers_and_its_class() {
        let slow = code(153, &[("LDS", 512), ("LDS.128", 0)]);
        let fast = code(167, &[("LDS", 0), ("LDS.128", 128)]);
        let capped_same_loads = code(153, &[("LDS", 0), ("LDS.128", 128)]);
        let capped_scalar_loads = code(153, &[("LDS", 500), ("LDS.128", 4)]);
        assert!(
            !reproduces(&capped_same_loads, &slow, &fast),
            "another route"
        );
        assert!(reproduces(&capped_scalar_loads, &slow, &fast));
        assert!(!reproduces(&code(150, &[("LDS", 512)]), &slow, &fast));
    }
}
