//! The HTML report's templates (which escape every text) and what they see. Charts are files
//! beside the pages, never inlined, so pages stay small however many charts a report has.

use std::path::Path;

use minijinja::{context, AutoEscape, Environment, Output, State, Value};
use serde::Serialize;

use super::doc::{Block, Doc};

/// A link to a file below the page's folder, with `/` separators whatever the platform.
pub(crate) fn href(rel: &Path) -> String {
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// `doc`'s blocks for a template; chart paths in `doc` are taken as relative to the page.
pub(crate) fn blocks(doc: &Doc) -> Vec<Value> {
    doc.blocks.iter().map(block).collect()
}

/// A block as the templates see it: `kind` picks the markup; a table's `right` holds `r<N>`
/// for each right-aligned column N (from 1), as the table's classes.
pub(crate) fn block(b: &Block) -> Value {
    match b {
        Block::Heading(level, text) => context! { kind => "heading", level, text },
        Block::Paragraph(text) => context! { kind => "para", text },
        Block::Table(t) => context! {
            kind => "table",
            columns => t.columns.iter().map(|(name, _)| name).collect::<Vec<_>>(),
            right => t
                .columns
                .iter()
                .enumerate()
                .filter(|(_, (_, right))| *right)
                .map(|(i, _)| format!("r{}", i + 1))
                .collect::<Vec<_>>()
                .join(" "),
            rows => t.rows,
        },
        Block::Chart(rel) => context! {
            kind => "chart",
            src => href(rel),
            caption => rel
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        },
    }
}

/// Text made safe for HTML text and quoted attributes. MiniJinja's own escaping also
/// escapes `/`, which would bloat every path and link of a report for no safety gain.
fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// Strings not marked safe are escaped with [`esc`]; everything else as MiniJinja does.
fn formatter(out: &mut Output, state: &State, value: &Value) -> Result<(), minijinja::Error> {
    match value.as_str() {
        Some(text) if state.auto_escape() == AutoEscape::Html && !value.is_safe() => {
            out.write_str(&esc(text))?;
            Ok(())
        }
        _ => minijinja::escape_formatter(out, state, value),
    }
}

/// Text with Markdown's inline code spans (`x`) as `<code>` elements, the rest escaped: the
/// findings write the same strings into Markdown and HTML.
fn inline(text: &str) -> Value {
    let mut out = String::new();
    for (i, part) in text.split('`').enumerate() {
        if i % 2 == 1 {
            out.push_str(&format!("<code>{}</code>", esc(part)));
        } else {
            out.push_str(&esc(part));
        }
    }
    Value::from_safe_string(out)
}

/// The templates, compiled into the binary; only the `.html` ones are escaped (MiniJinja's
/// default by file name).
fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_formatter(formatter);
    env.add_filter("inline", inline);
    for (name, text) in [
        ("layout.html", include_str!("templates/layout.html")),
        ("blocks.html", include_str!("templates/blocks.html")),
        ("index.html", include_str!("templates/index.html")),
        ("page.html", include_str!("templates/page.html")),
        ("findings.html", include_str!("templates/findings.html")),
        ("findings.md", include_str!("templates/findings.md")),
    ] {
        env.add_template(name, text)
            .expect("the built-in templates parse (covered by tests)");
    }
    env
}

pub(crate) fn render(name: &str, ctx: Value) -> String {
    environment()
        .get_template(name)
        .and_then(|t| t.render(ctx))
        .expect("the built-in templates render any context the report builds")
}

#[derive(Debug, Serialize)]
pub(crate) struct GpuView {
    pub id: String,
    /// The model: a heading over its GPUs, shown once where `first_of_model`.
    pub title: String,
    /// Its PCI bus and drivers, beneath the model.
    pub beneath: String,
    pub first_of_model: bool,
    pub pages: Vec<PageLink>,
    /// Tables shown on the index under the GPU (its vendor baselines).
    pub blocks: Vec<Value>,
}

#[derive(Debug, Serialize)]
pub(crate) struct PageLink {
    pub href: String,
    pub label: String,
    pub measurements: usize,
    pub prs: usize,
    pub similar: usize,
    pub fair: usize,
}

/// The style sheet every page links, written once beside `index.html` as [`STYLE_FILE`].
pub(crate) const STYLE: &str = include_str!("templates/style.css");
pub(crate) const STYLE_FILE: &str = "style.css";

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Neighbour {
    pub href: String,
    pub label: String,
}

/// A page's links to the pages before and after it in the index's order.
#[derive(Debug, Serialize)]
pub(crate) struct Nav {
    pub prev: Option<Neighbour>,
    pub next: Option<Neighbour>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::doc::Table;

    #[test]
    fn text_is_escaped_numbers_align_right_and_charts_are_files() {
        let mut doc = Doc::default();
        doc.heading(2, "a <b>");
        let mut t = Table::new(&[("name", false), ("PR", true)]);
        t.rows.push(vec!["x&y".into(), "1.000".into()]);
        doc.table(t, "");
        doc.blocks.push(Block::Chart("run/pr \"1\".svg".into()));
        let nav = Nav {
            prev: None,
            next: Some(Neighbour {
                href: "b.html".into(),
                label: "b <2>".into(),
            }),
        };
        let (blocks, charts) = (blocks(&doc), Vec::<Value>::new());
        let html = render(
            "page.html",
            context! { title => "t", style => "../style.css", gpu => "gpu", nav, blocks, charts },
        );
        assert!(html.contains("<h2>a &lt;b&gt;</h2>"), "{html}");
        assert!(
            html.contains("<table class=\"r2\">") && html.contains("<tr><td>x&amp;y<td>1.000\n"),
            "{html}"
        );
        assert!(
            html.contains("<img src=\"run/pr &quot;1&quot;.svg\""),
            "{html}"
        );
        assert!(html.contains("<a href=\"../index.html\">"), "{html}");
        assert!(
            html.contains("<a href=\"b.html\">b &lt;2&gt; →</a>"),
            "{html}"
        );
        assert!(
            !html.contains("←</a> ·"),
            "no link to a page before the first: {html}"
        );
        assert!(!html.contains("<svg"), "{html}");
        assert!(
            html.contains("<link rel=\"stylesheet\" href=\"../style.css\">"),
            "{html}"
        );
    }

    #[test]
    fn the_index_links_every_page() {
        let gpus = [GpuView {
            id: "gpu-1".into(),
            title: "H100 <80GB>".into(),
            beneath: "pci 19:00".into(),
            first_of_model: true,
            pages: vec![PageLink {
                href: "pages/a.html".into(),
                label: "a".into(),
                measurements: 3,
                prs: 1,
                similar: 1,
                fair: 0,
            }],
            blocks: Vec::new(),
        }];
        let charts = Vec::<Value>::new();
        let html = render(
            "index.html",
            context! { title => "clvscu report", style => STYLE_FILE, intro => "intro", gpus, charts },
        );
        assert!(html.contains("<h2>H100 &lt;80GB&gt;</h2>"), "{html}");
        assert!(html.contains("<a href=\"pages/a.html\">a</a>"), "{html}");
        assert!(!html.contains("&#x2f;"), "slashes stay plain: {html}");
        assert!(html.trim_end().ends_with("</html>"), "{html}");
    }
}
