//! `report.html`: the report's blocks as one static page. Charts are SVG files embedded inline,
//! so the page needs nothing beside it; a chart that cannot be read is linked instead.

use std::path::Path;

use super::doc::{Block, Doc, Table};

fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const STYLE: &str = "body{font-family:sans-serif;margin:2em;color:#222;max-width:110em}\
table{border-collapse:collapse;margin:.5em 0 1.5em}\
th,td{border:1px solid #ccc;padding:.2em .5em;font-size:90%}\
th{background:#eef}td.n{text-align:right;font-variant-numeric:tabular-nums}\
tr:nth-child(even){background:#f7f7f9}figure{margin:1em 0}svg{max-width:100%;height:auto}";

fn table(t: &Table) -> String {
    let mut out = String::from("<table>\n<tr>");
    for (c, _) in &t.columns {
        out.push_str(&format!("<th>{}</th>", esc(c)));
    }
    out.push_str("</tr>\n");
    for row in &t.rows {
        out.push_str("<tr>");
        for (i, c) in row.iter().enumerate() {
            let right = t.columns.get(i).is_some_and(|(_, r)| *r);
            let class = if right { " class=\"n\"" } else { "" };
            out.push_str(&format!("<td{class}>{}</td>", esc(c)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out
}

/// An SVG chart inline (without its XML declaration); a link when the file cannot be read.
fn chart(dir: &Path, rel: &Path) -> String {
    let shown = esc(&rel.display().to_string());
    match std::fs::read_to_string(dir.join(rel)) {
        Ok(svg) if rel.extension().is_some_and(|e| e == "svg") => {
            let body = match svg.find("<svg") {
                Some(i) => &svg[i..],
                None => svg.as_str(),
            };
            format!("<figure>{body}<figcaption>{shown}</figcaption></figure>\n")
        }
        _ => format!("<p><a href=\"{shown}\">{shown}</a></p>\n"),
    }
}

/// The page; `dir` is the folder the report is written to (chart paths are relative to it).
pub fn render(doc: &Doc, dir: &Path) -> String {
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>clvscu report</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
    );
    for block in &doc.blocks {
        match block {
            Block::Heading(level, text) => {
                out.push_str(&format!("<h{level}>{}</h{level}>\n", esc(text)))
            }
            Block::Paragraph(text) => out.push_str(&format!("<p>{}</p>\n", esc(text))),
            Block::Table(t) => out.push_str(&table(t)),
            Block::Chart(rel) => out.push_str(&chart(dir, rel)),
        }
    }
    out.push_str("</body>\n</html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_numbers_align_right() {
        let mut doc = Doc::default();
        doc.heading(2, "a <b>");
        let mut t = Table::new(&[("name", false), ("PR", true)]);
        t.push(vec!["x&y".into(), "1.000".into()]);
        doc.table(t, "");
        let html = render(&doc, Path::new("."));
        assert!(html.contains("<h2>a &lt;b&gt;</h2>"), "{html}");
        assert!(
            html.contains("<td>x&amp;y</td><td class=\"n\">1.000</td>"),
            "{html}"
        );
    }
}
