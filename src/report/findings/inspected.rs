//! Answers read from what `clvscu inspect` wrote in a suite step: both front ends' loads and
//! stores by memory space (`ptx_classes.csv`) and the paper's Table V counts (`table-v.csv`).

use super::experiments::Rule;
use super::folder::SuiteFolder;
use super::outcome::Answer;
use crate::export::csv::read_by_name;
use crate::report::ReportError::{self, Findings as Missing};
use crate::rows::{ClassCountRow, TableVRow, CLASSES_CSV, TABLE_V_CSV};

/// Both front ends' loads and stores of `comparison`'s kernel, by memory space.
pub(super) fn memory_code(
    s: &SuiteFolder,
    step: &str,
    comparison: &str,
) -> Result<Answer, ReportError> {
    let Some(file) = crate::report::load::csv_in(&s.dir.join(step), CLASSES_CSV) else {
        return Err(Missing(format!("step `{step}` wrote no {CLASSES_CSV}")));
    };
    let rows: Vec<ClassCountRow> = read_by_name(&file)?;
    // A front end whose PTX was not counted at all (PoCL gives none) is no front end with no
    // loads and stores.
    if let Some(api) = ["OpenCL", "CUDA"]
        .into_iter()
        .find(|api| !rows.iter().any(|r| r.pair == comparison && r.api == *api))
    {
        if rows.iter().any(|r| r.pair == comparison) {
            return Err(Missing(format!(
                "step `{step}`'s ptx_classes.csv counts no {api} PTX of `{comparison}`: one \
                 front end's code alone compares with nothing"
            )));
        }
    }
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
        return Err(Missing(format!(
            "step `{step}`'s ptx_classes.csv has no loads or stores of `{comparison}`"
        )));
    }
    Ok(Answer {
        value: format!("PTX OpenCL / CUDA: {}", parts.join(", ")),
        agrees: Some(same),
        causes: Vec::new(),
    })
}

pub(super) fn table_v(s: &SuiteFolder, step: &str, rule: Rule) -> Result<Answer, ReportError> {
    let file = s.dir.join(step).join(TABLE_V_CSV);
    if !file.is_file() {
        return Err(Missing(format!("step `{step}` wrote no {TABLE_V_CSV}")));
    }
    let rows: Vec<TableVRow> = read_by_name(&file)?;
    let ours = |api: &str| {
        rows.iter()
            .filter(|r| r.source == "clvscu" && r.api == api)
            .find(|r| r.index == "u32")
            .or_else(|| rows.iter().find(|r| r.source == "clvscu" && r.api == api))
    };
    let (Some(cl), Some(cu)) = (ours("OpenCL"), ours("CUDA")) else {
        return Err(Missing(format!(
            "step `{step}`'s table-v.csv lacks an OpenCL or a CUDA row of ours"
        )));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A suite folder whose `inspect` step counted `apis`' PTX of `bandwidth/read`.
    fn folder(apis: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("suite.csv"),
            "step,status,exit_code,wall_s,cap_s,note\ninspect,done,0,1.0,10,\n",
        )
        .unwrap();
        std::fs::create_dir(dir.path().join("inspect")).unwrap();
        // A suite folder holds a run folder: one with no rows does.
        let run = dir.path().join("fair");
        std::fs::create_dir(&run).unwrap();
        crate::export::csv::write_rows::<crate::rows::PrRow>(&run.join(crate::rows::PRS_CSV), &[])
            .unwrap();
        let mut csv = String::from("pair,kernel,api,class,count\n");
        for api in apis {
            for (class, n) in [("arithmetic", 12), ("ld.global", 4), ("st.global", 1)] {
                csv += &format!("bandwidth/read,peak_read,{api},{class},{n}\n");
            }
        }
        std::fs::write(dir.path().join("inspect").join(CLASSES_CSV), csv).unwrap();
        dir
    }

    #[test]
    fn a_front_end_that_gave_no_ptx_leaves_the_memory_code_unanswered() {
        // PoCL gives no PTX: only CUDA's kernel was counted.
        let dir = folder(&["CUDA"]);
        let s = SuiteFolder::read(dir.path()).unwrap();
        let outcome = memory_code(&s, "inspect", "bandwidth/read");
        let why = outcome
            .expect_err("one front end's PTX cannot be compared")
            .to_string();
        assert!(why.contains("OpenCL"), "{why}");
        // Both counted and alike: answered, and agreeing.
        let dir = folder(&["OpenCL", "CUDA"]);
        let s = SuiteFolder::read(dir.path()).unwrap();
        let a = memory_code(&s, "inspect", "bandwidth/read").unwrap();
        assert_eq!(a.agrees, Some(true), "{}", a.value);
    }
}
