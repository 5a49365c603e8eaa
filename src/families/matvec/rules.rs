//! Measured decision tables for `matvec/auto`: per GPU, which variant won a shape sweep in each
//! region of (aspect ratio, matrix bytes, row alignment). `clvscu shapes-rule` derives a table
//! from a sweep's `measurements.csv` ([`super::derive`]); the tables committed in
//! `harness/rules/` are built into the binary, and `CLVSCU_MATVEC_RULES` names a table file
//! read at run time instead (a user's own GPU). Where no table names the device, `auto` keeps
//! the hand rule of [`super::shapes::rule`].

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The environment variable that names a table file to use before the built-in ones.
pub const RULES_ENV: &str = "CLVSCU_MATVEC_RULES";

/// The tables of `harness/rules/*.toml`, built into the binary (see build.rs).
const BUILTIN: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/builtin_matvec_rules.rs"));

/// How well a row of M lines up with float4 and warp-sized loads: the largest of 32, 4 and 1
/// floats that divides the row width.
pub fn alignment(cols: u64) -> u32 {
    [32, 4]
        .into_iter()
        .find(|a| cols.is_multiple_of(u64::from(*a)))
        .unwrap_or(1)
}

/// Where a shape sits: log2(cols / rows), log2(bytes of M) (each rounded) and row alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Key {
    pub aspect_log2: i32,
    pub bytes_log2: i32,
    pub align: u32,
}

impl Key {
    pub fn of(rows: u64, cols: u64) -> Key {
        let (r, c) = (rows.max(1) as f64, cols.max(1) as f64);
        Key {
            aspect_log2: (c / r).log2().round() as i32,
            bytes_log2: (r * c * 4.0).log2().round() as i32,
            align: alignment(cols),
        }
    }

    /// How far apart two regions are: a factor of two in bytes counts twice a factor of two
    /// in aspect (crossing the L2's size changes the winner more than a small change of shape).
    fn distance(self, other: Key) -> u32 {
        self.aspect_log2.abs_diff(other.aspect_log2)
            + 2 * self.bytes_log2.abs_diff(other.bytes_log2)
    }
}

/// One measured shape of the sweep and the variant that won it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Region {
    /// The measured shape.
    pub rows: u64,
    pub cols: u64,
    #[serde(flatten)]
    pub key: Key,
    /// The winner: highest geometric mean of its OpenCL and CUDA GB/s (medians).
    pub variant: String,
    /// The launch the winner won at, where the sweep swept it: work-items per group and group
    /// count on this table's device; 0 for the variant's default launch.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub local: u32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub groups: u32,
    pub gbs: f64,
    /// The runner-up (`variant` or `variant@LOCALxGROUPS`; empty if none) and its GB/s.
    #[serde(default)]
    pub runner_up: String,
    #[serde(default)]
    pub runner_up_gbs: f64,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A decision table for one GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleTable {
    /// The device name as both APIs report it (`NVIDIA H100 80GB HBM3`).
    pub device: String,
    /// Where the numbers came from: the sweep's run ids, commit, date.
    pub provenance: String,
    #[serde(rename = "region")]
    pub regions: Vec<Region>,
}

#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    #[error("matvec rule table {name}: {source}")]
    Parse {
        name: String,
        source: Box<toml::de::Error>,
    },
    #[error("matvec rule table {name}: {source}")]
    Read {
        name: String,
        source: std::io::Error,
    },
    #[error("matvec rule table {name} has no regions")]
    Empty { name: String },
}

impl RuleTable {
    pub fn parse(name: &str, text: &str) -> Result<RuleTable, RulesError> {
        let table: RuleTable = toml::from_str(text).map_err(|e| RulesError::Parse {
            name: name.into(),
            source: Box::new(e),
        })?;
        if table.regions.is_empty() {
            return Err(RulesError::Empty { name: name.into() });
        }
        Ok(table)
    }

    /// The table as TOML, as `clvscu shapes-rule` writes it.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a rule table serialises")
    }

    /// The region nearest to a `rows` x `cols` matrix among those of the same row alignment
    /// (any alignment when the sweep measured none of that one); the first on a tie.
    pub fn nearest(&self, rows: u64, cols: u64) -> &Region {
        let key = Key::of(rows, cols);
        let any_aligned = self.regions.iter().any(|r| r.key.align == key.align);
        self.regions
            .iter()
            .filter(|r| !any_aligned || r.key.align == key.align)
            .min_by_key(|r| r.key.distance(key))
            .expect("a parsed table has regions")
    }
}

/// The table for `device`: the first for it that `CLVSCU_MATVEC_RULES` names (a table file, or
/// a folder of them such as `shapes-rule`'s output), else the built-in one, else `None`.
pub fn table_for(device: &str) -> Result<Option<RuleTable>, RulesError> {
    if let Some(path) = std::env::var_os(RULES_ENV) {
        for file in table_files(Path::new(&path))? {
            let table = read_table(&file)?;
            if table.device == device {
                return Ok(Some(table));
            }
        }
    }
    for (name, text) in BUILTIN {
        let table = RuleTable::parse(name, text)?;
        if table.device == device {
            return Ok(Some(table));
        }
    }
    Ok(None)
}

/// A table file, read (bounded: a FIFO or a device is refused, naming the file) and parsed.
fn read_table(file: &Path) -> Result<RuleTable, RulesError> {
    let name = file.to_string_lossy().into_owned();
    match crate::input_file::read_text_capped(file, crate::input_file::STUDY_CAP) {
        Ok(text) => RuleTable::parse(&name, &text),
        Err(source) => Err(RulesError::Read { name, source }),
    }
}

/// Reads and parses every table `CLVSCU_MATVEC_RULES` names, if set (a folder holding none is
/// an error): a run checks them first, as an unusable table would silently mean the hand rule.
pub fn check_env() -> Result<(), RulesError> {
    let Some(path) = std::env::var_os(RULES_ENV) else {
        return Ok(());
    };
    let files = table_files(Path::new(&path))?;
    if files.is_empty() {
        return Err(RulesError::Read {
            name: Path::new(&path).display().to_string(),
            source: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "a folder holding no matvec-auto-*.toml table",
            ),
        });
    }
    for file in files {
        read_table(&file)?;
    }
    Ok(())
}

/// `path` itself, or where it is a folder the `matvec-auto-*.toml` tables in it, by name.
pub fn table_files(path: &Path) -> Result<Vec<PathBuf>, RulesError> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let read_err = |source| RulesError::Read {
        name: path.to_string_lossy().into_owned(),
        source,
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path).map_err(read_err)? {
        let file = entry.map_err(read_err)?.path();
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with("matvec-auto-") && name.ends_with(".toml") {
            files.push(file);
        }
    }
    files.sort();
    Ok(files)
}

/// The file name `clvscu shapes-rule` gives a device's table: `matvec-auto-<slug>.toml`.
pub fn file_name(device: &str) -> String {
    let words: Vec<&str> = device
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|s| !s.is_empty())
        .collect();
    format!("matvec-auto-{}.toml", words.join("-").to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `CLVSCU_MATVEC_RULES` may name `shapes-rule`'s folder: its tables, one per device, by
    /// name, and nothing else there (its checks.md); a file is itself.
    #[test]
    fn a_folder_of_tables_gives_its_tables_in_name_order() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "matvec-auto-b.toml",
            "checks.md",
            "matvec-auto-a.toml",
            "other.toml",
        ] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let names: Vec<String> = table_files(dir.path())
            .unwrap()
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["matvec-auto-a.toml", "matvec-auto-b.toml"]);
        let file = dir.path().join("checks.md");
        assert_eq!(table_files(&file).unwrap(), [file]);
    }

    fn region(rows: u64, cols: u64, variant: &str) -> Region {
        Region {
            rows,
            cols,
            key: Key::of(rows, cols),
            variant: variant.into(),
            local: 0,
            groups: 0,
            gbs: 1.0,
            runner_up: String::new(),
            runner_up_gbs: 0.0,
        }
    }

    #[test]
    fn keys_round_aspect_and_bytes() {
        let k = Key::of(1 << 21, 32);
        assert_eq!((k.aspect_log2, k.bytes_log2, k.align), (-16, 28, 32));
        assert_eq!(Key::of(500_000, 100).align, 4);
        assert_eq!(Key::of(1100, 60989).align, 1);
        assert_eq!(Key::of(8192, 8192).aspect_log2, 0);
    }

    #[test]
    fn the_nearest_region_of_the_same_alignment_wins() {
        let table = RuleTable {
            device: "GPU".into(),
            provenance: String::new(),
            regions: vec![
                region(1 << 21, 32, "row-pack"),
                region(8192, 8192, "row-warp"),
                region(64, 1 << 20, "split-k"),
                region(64, (1 << 20) - 1, "split-flat"),
            ],
        };
        assert_eq!(table.nearest(1 << 20, 64).variant, "row-pack");
        assert_eq!(table.nearest(16384, 16384).variant, "row-warp");
        assert_eq!(table.nearest(32, 1 << 21).variant, "split-k");
        assert_eq!(table.nearest(37, 3_000_001).variant, "split-flat");
        // No region of alignment 4: the nearest of any alignment.
        assert_eq!(table.nearest(100, 1 << 20).variant, "split-k");
        let text = table.to_toml();
        assert_eq!(RuleTable::parse("t", &text).unwrap(), table);
    }

    #[test]
    fn bad_tables_are_refused_with_their_name() {
        let e = RuleTable::parse("x.toml", "device = 1").unwrap_err();
        assert!(e.to_string().contains("x.toml"), "{e}");
        let e = RuleTable::parse("y.toml", "device = \"a\"\nprovenance = \"\"\nregion = []")
            .unwrap_err();
        assert!(e.to_string().contains("no regions"), "{e}");
    }

    #[test]
    fn file_names_are_slugs_of_the_device() {
        assert_eq!(
            file_name("NVIDIA H100 80GB HBM3"),
            "matvec-auto-nvidia-h100-80gb-hbm3.toml"
        );
    }

    #[test]
    fn every_builtin_table_parses() {
        for (name, text) in BUILTIN {
            RuleTable::parse(name, text).unwrap();
        }
    }
}
