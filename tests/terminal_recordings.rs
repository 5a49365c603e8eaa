//! The recorded terminal sessions of docs/terminal/ (scripts/record-terminal.sh, a 100-column
//! tmux pane): `run`, `tune`, `explain --from` and `suite --quick`, each with its progress
//! while it ran and no line over 100 columns.

use std::path::Path;

/// Each recording and what shows its progress while it ran.
const RECORDINGS: [(&str, &str); 4] = [
    ("run", "(ETA "),
    ("tune", "[1/5] exhaustive: "),
    ("explain-from", "| NVIDIA H200 |"),
    ("suite-quick", "== [1/17] table1 (at most "),
];

#[test]
fn the_recorded_sessions_keep_to_100_columns_and_show_progress() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/terminal");
    for (name, progress) in RECORDINGS {
        let path = dir.join(format!("{name}.txt"));
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let wide: Vec<&str> = text
            .lines()
            .filter(|l| clvscu::terminal::columns_of(l) > clvscu::terminal::MAX_COLUMNS)
            .collect();
        assert!(wide.is_empty(), "{name}: {wide:#?}");
        let (during, ended) = text
            .split_once("# when it ended")
            .unwrap_or_else(|| panic!("{name}: no end"));
        assert!(during.contains("# while it ran"), "{name}");
        assert!(
            during.contains(progress),
            "{name}: no progress while it ran:\n{during}"
        );
        assert!(ended.contains("exit "), "{name}: no exit status:\n{ended}");
        assert!(text.starts_with("$ clvscu "), "{name}");
    }
}
