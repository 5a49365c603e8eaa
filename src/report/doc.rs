//! The report as format-neutral blocks (headings, paragraphs, tables, charts), built once and
//! rendered by `markdown` and `html`, so the two files can never say different things.

use std::path::PathBuf;

/// A table: column names with their alignment (`true`: right, for numbers) and rows of
/// already formatted cells.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    pub columns: Vec<(String, bool)>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(columns: &[(&str, bool)]) -> Self {
        Self {
            columns: columns.iter().map(|(c, r)| (c.to_string(), *r)).collect(),
            rows: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// A heading of level 1 to 4.
    Heading(u8, String),
    Paragraph(String),
    /// Never pushed without rows (see [`Doc::table`]).
    Table(Table),
    /// A chart file, relative to the report's folder.
    Chart(PathBuf),
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Doc {
    pub blocks: Vec<Block>,
}

impl Doc {
    pub fn heading(&mut self, level: u8, text: impl Into<String>) {
        self.blocks.push(Block::Heading(level, text.into()));
    }

    pub fn para(&mut self, text: impl Into<String>) {
        self.blocks.push(Block::Paragraph(text.into()));
    }

    /// Adds `table`, or `empty` as a paragraph when it has no rows: a report never shows a
    /// header without a body.
    pub fn table(&mut self, table: Table, empty: &str) {
        if table.rows.is_empty() {
            self.para(empty);
        } else {
            self.blocks.push(Block::Table(table));
        }
    }
}
