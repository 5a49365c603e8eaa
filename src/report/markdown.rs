//! `report.md`: the report's blocks as GitHub-flavoured Markdown.

use super::doc::{Block, Doc, Table};

/// Text made safe for a table cell: a pipe would end the cell, a line break the row.
fn cell(text: &str) -> String {
    text.replace('|', "&#124;").replace(['\r', '\n'], " ")
}

pub fn table(t: &Table) -> String {
    let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
    let mut out = line(t.columns.iter().map(|(c, _)| cell(c)).collect());
    out.push_str(&line(
        t.columns
            .iter()
            .map(|(_, right)| if *right { "---:" } else { "---" }.to_string())
            .collect(),
    ));
    for row in &t.rows {
        out.push_str(&line(row.iter().map(|c| cell(c)).collect()));
    }
    out
}

pub fn render(doc: &Doc) -> String {
    let mut out = String::new();
    for block in &doc.blocks {
        match block {
            Block::Heading(level, text) => {
                out.push_str(&format!("{} {text}\n\n", "#".repeat(usize::from(*level))))
            }
            Block::Paragraph(text) => out.push_str(&format!("{text}\n\n")),
            Block::Table(t) => {
                out.push_str(&table(t));
                out.push('\n');
            }
            Block::Chart(path) => {
                let p = path.display().to_string().replace('\\', "/");
                out.push_str(&format!("![{p}]({p})\n\n"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_cannot_break_a_table() {
        let mut t = Table::new(&[("a", false), ("b", true)]);
        t.push(vec!["x|y".into(), "1\n2".into()]);
        assert_eq!(table(&t), "| a | b |\n| --- | ---: |\n| x&#124;y | 1 2 |\n");
    }
}
