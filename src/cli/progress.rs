//! How a run's [`Progress`] shows: a bar on a terminal, else a line per comparison; quiet, nothing.

use std::cell::RefCell;

use clvscu::rows::ComparisonRows;
use clvscu::rows::Status;
use clvscu::session::Progress;
use clvscu::terminal::printable;
use indicatif::{ProgressBar, ProgressStyle};

pub(crate) struct ProgressView {
    on_terminal: bool,
    quiet: bool,
    /// The bar of the study running now (a pass of a soak, a rung of explain).
    bar: RefCell<Option<ProgressBar>>,
}

impl ProgressView {
    pub(crate) fn new(quiet: bool) -> ProgressView {
        ProgressView {
            on_terminal: std::io::IsTerminal::is_terminal(&std::io::stderr()),
            quiet,
            bar: RefCell::new(None),
        }
    }

    pub(crate) fn tell(&self, progress: Progress) {
        if self.quiet {
            return;
        }
        match progress {
            Progress::Started { total } if self.on_terminal => {
                self.clear();
                let bar = ProgressBar::new(total as u64);
                let template = "{bar:30} {pos}/{len} {elapsed_precise} (ETA {eta}) {msg}";
                if let Ok(style) = ProgressStyle::with_template(template) {
                    bar.set_style(style);
                }
                *self.bar.borrow_mut() = Some(bar);
            }
            Progress::Measuring { id } => {
                self.with_bar(|b| b.set_message(printable(id).into_owned()))
            }
            Progress::Done { index, total, rows } => {
                self.with_bar(|b| b.inc(1));
                if let (false, Some(rows)) = (self.on_terminal, rows) {
                    print_progress(index, total, rows);
                }
            }
            Progress::Ended => self.clear(),
            Progress::Started { .. } => {}
        }
    }

    fn with_bar(&self, f: impl FnOnce(&ProgressBar)) {
        if let Some(bar) = self.bar.borrow().as_ref() {
            f(bar);
        }
    }

    fn clear(&self) {
        if let Some(bar) = self.bar.borrow_mut().take() {
            bar.finish_and_clear();
        }
    }
}

impl Drop for ProgressView {
    /// A run stopped by an error leaves no bar behind on the terminal.
    fn drop(&mut self) {
        self.clear();
    }
}

/// One line per finished comparison: launch shape, each side's metric or failure, PR. The run's
/// first lines name the sides: a letter is enough where both are one API.
fn print_progress(done: usize, total: usize, rows: &ComparisonRows) {
    let Some(first) = rows.measurements.first() else {
        return;
    };
    let same_api =
        rows.measurements.len() == 2 && rows.measurements[0].api == rows.measurements[1].api;
    let sides: Vec<String> = rows
        .measurements
        .iter()
        .zip(['A', 'B'])
        .map(|(m, letter)| {
            let name = same_api.then(|| letter.to_string());
            let name = name.unwrap_or_else(|| m.api.to_string());
            match m.status {
                Status::Ok => format!("{name} {:.1} {}", m.metric, m.metric_unit),
                failed => format!("{name} {failed}"),
            }
        })
        .collect();
    let pr = rows
        .pr
        .as_ref()
        .map(|p| format!(", PR {:.3} [{:.3}, {:.3}]", p.pr, p.pr_ci_lo, p.pr_ci_hi))
        .unwrap_or_default();
    say!(
        "[{done}/{total}] {} {}×{}: {}{pr}",
        printable(&first.comparison),
        first.local_size,
        first.groups,
        sides.join(", ")
    );
}
