//! `report.md`: the report's blocks as GitHub-flavoured Markdown.

use super::doc::{Block, Doc};
use crate::export::markdown::{no_html, table};

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
                out.push_str(&table(&t.columns, &t.rows));
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
    use crate::report::doc::Table;

    #[test]
    fn cells_cannot_break_a_table() {
        let mut t = Table::new(&[("a", false), ("b", true)]);
        t.rows.push(vec!["x|y".into(), "1\n2".into()]);
        assert_eq!(
            table(&t.columns, &t.rows),
            "| a | b |\n| --- | ---: |\n| x&#124;y | 1 2 |\n"
        );
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
        t.rows.push(vec!["<b>".into()]);
        assert!(table(&t.columns, &t.rows).contains("| &lt;b> |"));
    }
}
