//! The documentation of the CSV files lists exactly the columns each file has, in order.

use clvscu::export::csv::CsvSchema;
use clvscu::inspect::ResourceRow;
use clvscu::rows::{
    ClassCountRow, EvaluationRow, MeasurementRow, PassRow, PrRow, SampleRow, TimingRow, VerdictRow,
};

const CSV_DOC: &str = include_str!("../docs/csv-columns.md");

/// The first column of the table under the heading that starts `## FILE`.
fn documented(file: &str) -> Vec<String> {
    let heading = format!("## {file}");
    let section = CSV_DOC
        .split("\n## ")
        .find(|s| format!("## {s}").starts_with(&heading))
        .unwrap_or_else(|| panic!("no section {heading}"));
    section
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| column"))
        .flat_map(|l| {
            let cell = l.split('|').nth(1).unwrap();
            cell.split(',')
                .map(|c| c.trim().to_string())
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn every_csv_column_is_documented_in_order() {
    let files: [(&str, &[&str]); 9] = [
        ("measurements.csv", MeasurementRow::columns()),
        ("prs.csv", PrRow::columns()),
        ("samples.csv", SampleRow::columns()),
        ("passes.csv", PassRow::columns()),
        ("timings.csv", TimingRow::columns()),
        ("ptx_classes.csv", ClassCountRow::columns()),
        ("ptx_resources.csv", ResourceRow::columns()),
        ("evaluations.csv", EvaluationRow::columns()),
        ("explain-verdicts.csv", VerdictRow::columns()),
    ];
    for (file, columns) in files {
        assert_eq!(documented(file), columns, "docs/csv-columns.md, {file}");
    }
}

#[test]
fn the_study_format_example_is_a_valid_study() {
    let doc = include_str!("../docs/study-format.md");
    let start = doc.find("```toml\n").expect("an example") + "```toml\n".len();
    let example = &doc[start..start + doc[start..].find("```").unwrap()];
    let study = clvscu::study::parse(example, "docs/study-format.md").unwrap();
    let ids: Vec<&str> = study.comparisons.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "matvec/listing6",
            "unroll-opencl-only/listing6",
            "reduce/tuned@local=64",
            "reduce/tuned@local=128",
            "reduce/tuned@local=256",
            "reduce/tuned@local=512",
        ]
    );
}
