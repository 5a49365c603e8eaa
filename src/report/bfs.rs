//! The BFS table of a run folder: per graph and API, the levels of the search, the whole
//! search on the host clock, its kernels on the device clock, and per level the share that is
//! launch and wait, paired as the `bfs` chart (`plot::bfs`) pairs them.

use super::doc::{Doc, Table};
use crate::plot::bfs::{drawn, splits};
use crate::plot::{fmt_sig as sig, group_in_order};
use crate::rows::{Catalog, MeasurementRow};

/// The table of every graph that has both clocks' rows; `None` when there is none.
pub fn table(catalog: &Catalog, rows: &[MeasurementRow]) -> Option<Table> {
    let bfs = rows.iter().filter(|m| drawn(catalog, m));
    let mut t = Table::new(&[
        ("graph", false),
        ("API", false),
        ("levels", true),
        ("search, host clock (ms)", true),
        ("kernels, device clock (ms)", true),
        ("per level (µs)", true),
        ("launch + wait per level (µs)", true),
        ("launch + wait share", true),
    ]);
    for (variant, graph_rows) in group_in_order(bfs, |m| m.variant.clone()) {
        for s in splits(catalog, &graph_rows) {
            let per_level = |x: f64| s.levels.map_or("-".into(), |l| sig(x / l as f64 * 1e6));
            t.rows.push(vec![
                format!("{variant}, {}", s.label),
                s.api.to_string(),
                s.levels.map_or("-".into(), |l| l.to_string()),
                sig(s.total_s * 1e3),
                sig(s.kernels_s * 1e3),
                per_level(s.total_s),
                per_level(s.overhead_s()),
                format!(
                    "{:.0}%",
                    100.0 * s.overhead_s() / s.total_s.max(f64::MIN_POSITIVE)
                ),
            ]);
        }
    }
    (!t.rows.is_empty()).then_some(t)
}

/// The folder's BFS section, when its rows have one.
pub fn section(doc: &mut Doc, catalog: &Catalog, rows: &[MeasurementRow]) {
    if let Some(t) = table(catalog, rows) {
        doc.heading(
            4,
            "BFS per level (host clock − device clock = launch + wait)",
        );
        doc.table(t, "");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::tests::m;
    use crate::rows::TimerKind;

    #[test]
    fn one_line_per_graph_and_api_with_the_rows_levels() {
        let mut dev = m("CUDA", "GPU", "bfs", "bfs", "random-uniform", 1.0);
        dev.median_s = 0.010;
        dev.size = "65536".into();
        dev.elements = 65536;
        dev.levels = Some(10);
        let mut host = dev.clone();
        host.timer = TimerKind::WallClock;
        host.median_s = 0.014;
        let catalog = crate::plot::tests::registered().catalog;
        let t = table(&catalog, &[dev.clone(), host]).unwrap();
        assert_eq!(t.rows.len(), 1);
        let r = &t.rows[0];
        assert_eq!(r[2], "10");
        assert_eq!(r[5], sig(1400.0));
        assert_eq!(r[6], sig(400.0));
        assert_eq!(r[7], "29%");
        // A graph with one clock only has no line.
        assert!(table(&catalog, &[dev]).is_none());
    }
}
