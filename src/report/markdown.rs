//! `report.md`: the report's blocks as GitHub-flavoured Markdown.

use super::doc::{Block, Doc, Table};
use crate::export::markdown::{cell, no_html};

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
            Block::Heading(level, text) => out.push_str(&format!(
                "{} {}\n\n",
                "#".repeat(usize::from(*level)),
                no_html(text)
            )),
            Block::Paragraph(text) => out.push_str(&format!("{}\n\n", no_html(text))),
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

    #[test]
    fn a_name_cannot_open_raw_html() {
        let mut doc = Doc::default();
        doc.heading(2, "run <img src=x onerror=alert(1)>");
        doc.para("p < 0.05 and </script>");
        let md = render(&doc);
        assert!(md.contains("## run &lt;img src=x"), "{md}");
        assert!(md.contains("p < 0.05 and &lt;/script>"), "{md}");
        let mut t = Table::new(&[("a", false)]);
        t.push(vec!["<b>".into()]);
        assert!(table(&t).contains("| &lt;b> |"));
    }
}
