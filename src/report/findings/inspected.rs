//! Answers read from what `clvscu inspect` wrote in a suite step: both front ends' loads and
//! stores by memory space (`ptx_classes.csv`) and the paper's Table V counts (`table-v.csv`).

use super::experiments::Rule;
use super::folder::SuiteFolder;
use super::outcome::{Absent, Answer};
use crate::export::csv::read_by_name;
use crate::rows::{ClassCountRow, TableVRow, CLASSES_CSV, TABLE_V_CSV};

/// Both front ends' loads and stores of `comparison`'s kernel, by memory space.
pub(super) fn memory_code(s: &SuiteFolder, step: &str, comparison: &str) -> Result<Answer, Absent> {
    let Some(file) = crate::report::load::csv_in(&s.dir.join(step), CLASSES_CSV) else {
        return Err(Absent::NoFile {
            step: step.into(),
            file: CLASSES_CSV,
        });
    };
    let rows: Vec<ClassCountRow> = read_by_name(&file)?;
    let memory: Vec<&ClassCountRow> = rows
        .iter()
        .filter(|r| {
            r.pair == comparison && (r.class.starts_with("ld.") || r.class.starts_with("st."))
        })
        .collect();
    let count = |api: &str, class: &str| {
        memory
            .iter()
            .find(|r| r.api == api && r.class == class)
            .map(|r| r.count)
    };
    let mut classes: Vec<&str> = memory.iter().map(|r| r.class.as_str()).collect();
    classes.sort_unstable();
    classes.dedup();
    let mut same = !classes.is_empty();
    let mut parts = Vec::new();
    for class in classes {
        let (cl, cu) = (count("OpenCL", class), count("CUDA", class));
        same &= cl.is_some() && cl == cu;
        if cl.unwrap_or(0) + cu.unwrap_or(0) > 0 {
            let show = |c: Option<u64>| c.map_or("none".to_string(), |c| c.to_string());
            parts.push(format!("{class} {} / {}", show(cl), show(cu)));
        }
    }
    if parts.is_empty() {
        return Err(Absent::NoMemoryCode {
            step: step.into(),
            comparison: comparison.into(),
        });
    }
    Ok(Answer {
        value: format!("PTX OpenCL / CUDA: {}", parts.join(", ")),
        agrees: Some(same),
        causes: Vec::new(),
    })
}

pub(super) fn table_v(s: &SuiteFolder, step: &str, rule: Rule) -> Result<Answer, Absent> {
    let file = s.dir.join(step).join(TABLE_V_CSV);
    if !file.is_file() {
        return Err(Absent::NoFile {
            step: step.into(),
            file: TABLE_V_CSV,
        });
    }
    let rows: Vec<TableVRow> = read_by_name(&file)?;
    let ours = |api: &str| {
        rows.iter()
            .filter(|r| r.source == "clvscu" && r.api == api)
            .find(|r| r.index == "u32")
            .or_else(|| rows.iter().find(|r| r.source == "clvscu" && r.api == api))
    };
    let (Some(cl), Some(cu)) = (ours("OpenCL"), ours("CUDA")) else {
        return Err(Absent::NoOwnRows(step.into()));
    };
    let total = |r: &TableVRow| r.arithmetic + r.logic_shift + r.flow_control;
    let agrees = match rule {
        Rule::MoreOpenClInstructions => Some(total(cl) * 2 >= total(cu) * 3),
        _ => None,
    };
    Ok(Answer {
        value: format!(
            "arithmetic / logic / flow: OpenCL {} / {} / {}, CUDA {} / {} / {} (index {})",
            cl.arithmetic,
            cl.logic_shift,
            cl.flow_control,
            cu.arithmetic,
            cu.logic_shift,
            cu.flow_control,
            cl.index
        ),
        agrees,
        causes: Vec::new(),
    })
}
