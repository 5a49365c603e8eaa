//! `clvscu suite --quick`: each study at a small size with few repetitions. Names,
//! comparisons, sides and one-sided settings stay, so every chart and table of the full run
//! has its quick counterpart; the shrunk text is saved as each run folder's `study.toml`, so a
//! quick row says what ran.

use toml::Value;

use crate::families::{FamilyId, QuickSize};
use crate::study::quick::length;

/// Repetitions, warm-up runs and seconds of timing a quick pass asks for at most.
const REPS: i64 = 3;
const WARMUP: i64 = 1;

/// The study text at quick timing and each family's `Family::quick_size` (every kernel of the
/// family accepts it, tile multiples included); families without one (launch, broadcast:
/// already tiny) keep theirs.
pub fn shrink(text: &str) -> Result<String, super::SuiteError> {
    let mut doc: toml::Table = toml::from_str(text)?;
    let default_family = family_of(doc.get("defaults"));
    if let Some(Value::Table(d)) = doc.get_mut("defaults") {
        d.insert("reps".into(), Value::Integer(REPS));
        d.insert("warmup".into(), Value::Integer(WARMUP));
        d.insert("min_time".into(), Value::Float(0.0));
        shrink_entry(d, default_family.as_deref());
    }
    for key in ["comparison", "sweep"] {
        if let Some(Value::Array(entries)) = doc.get_mut(key) {
            for entry in entries.iter_mut().filter_map(Value::as_table_mut) {
                let family = family_of(Some(&Value::Table(entry.clone())))
                    .or_else(|| default_family.clone());
                shrink_entry(entry, family.as_deref());
            }
        }
    }
    Ok(toml::to_string(&doc)?)
}

fn family_of(table: Option<&Value>) -> Option<String> {
    table?.get("family")?.as_str().map(str::to_string)
}

/// One table (defaults, an entry or a side's table): timing capped, size made small.
fn shrink_entry(t: &mut toml::Table, family: Option<&str>) {
    for (key, most) in [("reps", REPS), ("warmup", WARMUP), ("max_reps", REPS)] {
        if let Some(Value::Integer(v)) = t.get_mut(key) {
            *v = (*v).min(most);
        }
    }
    if t.contains_key("min_time") {
        t.insert("min_time".into(), Value::Float(0.0));
    }
    let small = family
        .and_then(|f| FamilyId::parse(f).ok())
        .and_then(|f| f.family().spec().quick_size);
    if let (Some(small), Some(Value::String(size))) = (small, t.get_mut("size")) {
        *size = pick(&small, size);
    }
    if t.get("param").and_then(Value::as_str) == Some("size") {
        if let (Some(small), Some(Value::Array(values))) = (small, t.get_mut("values")) {
            let first = values.first().and_then(Value::as_str).unwrap_or("");
            *values = vec![Value::String(pick(&small, first))];
        }
    }
    for side in ["a", "b", "opencl", "cuda"] {
        if let Some(Value::Table(s)) = t.get_mut(side) {
            shrink_entry(s, family);
        }
    }
}

/// The quick size in the form the study gave (a matrix or one length). A length that is not
/// a multiple of 64 keeps its remainder, so a comparison of a ragged tail still has one.
fn pick(small: &QuickSize, given: &str) -> String {
    if given.contains('x') {
        return small.matrix.to_string();
    }
    match (length(small.length), length(given)) {
        (Some(quick), Some(n)) if n % TAIL_MODULUS != 0 => (quick + n % TAIL_MODULUS).to_string(),
        _ => small.length.to_string(),
    }
}

/// A length whose remainder by this is not 0 keeps that remainder when shrunk: a multiple of
/// every vector width and work-group tile the quick sizes use, so the tail stays a tail.
const TAIL_MODULUS: u64 = 64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_timing_shrink_sides_included() {
        let text = "name = \"t\"\n[defaults]\nfamily = \"fill\"\nsize = \"100000000\"\nreps = 20\n\
                    min_time = 0.3\n[[comparison]]\nsize = \"10000x10000\"\nvariant = \"2d-rows\"\n\
                    [comparison.cuda]\nreps = 1000\n[[sweep]]\nvariant = \"1d\"\nparam = \"size\"\n\
                    values = [\"2^24\", \"2^26\"]\n";
        let doc: toml::Table = toml::from_str(&shrink(text).unwrap()).unwrap();
        let d = doc["defaults"].as_table().unwrap();
        assert_eq!(d["size"].as_str(), Some("2^20"));
        assert_eq!(d["reps"].as_integer(), Some(REPS));
        assert_eq!(d["min_time"].as_float(), Some(0.0));
        let c = &doc["comparison"].as_array().unwrap()[0];
        assert_eq!(c["size"].as_str(), Some("1024x1024"));
        assert_eq!(c["cuda"]["reps"].as_integer(), Some(REPS));
        let s = &doc["sweep"].as_array().unwrap()[0];
        assert_eq!(s["values"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn a_ragged_length_keeps_its_tail() {
        let text = "name = \"t\"\n[defaults]\nfamily = \"fill\"\n[[comparison]]\n\
                    size = \"100000003\"\nvariant = \"float4\"\n";
        let doc: toml::Table = toml::from_str(&shrink(text).unwrap()).unwrap();
        let c = &doc["comparison"].as_array().unwrap()[0];
        assert_eq!(c["size"].as_str(), Some("1048579"), "2^20 + 100000003 % 64");
    }
}
