//! The fifth step's facts per target: each API's kernel time against its host time (the
//! target's rows and the other-clock rung), and what a plain loop of its own launch and wait
//! calls costs in the same process (the calibration beside the ladder): a host-side gap is read
//! against the driver's cost, never the harness's.

use std::fmt::Write as _;
use std::path::Path;

use crate::export::ExportError;
use crate::rows::{Api, CalibrationRow, MeasurementRow, TimerKind, CALIBRATION_CSV};

/// The rung names whose rows hold a target's two clocks: its own rows and the other clock's.
const CLOCK_RUNGS: [&str; 3] = ["own", "host-timer", "device-timer"];

/// One API's clocks for one target: medians per run, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clocks {
    pub api: Api,
    pub kernel_s: f64,
    pub host_s: f64,
    /// Levels per run, for a multi-level target (BFS): the host time is then split per level.
    pub levels: Option<u64>,
}

impl Clocks {
    /// Host time beyond the kernel's, per run, in microseconds.
    fn overhead_us(&self) -> f64 {
        (self.host_s - self.kernel_s) * 1e6
    }
}

/// Each API's clocks for `target`, where both were measured.
pub fn clocks(rows: &[MeasurementRow], target: &str) -> Vec<Clocks> {
    let row = |api: Api, timer: TimerKind| {
        rows.iter()
            .filter(|r| r.api == api && r.timer == timer && r.median_s > 0.0)
            .find(|r| {
                super::split_rung_id(&r.comparison)
                    .is_some_and(|(t, rung)| t == target && CLOCK_RUNGS.contains(&rung))
            })
    };
    [Api::OpenCl, Api::Cuda]
        .into_iter()
        .filter_map(|api| {
            let host = row(api, TimerKind::WallClock)?;
            Some(Clocks {
                api,
                kernel_s: row(api, TimerKind::DeviceEvent)?.median_s,
                host_s: host.median_s,
                levels: host.levels.filter(|l| *l > 0),
            })
        })
        .collect()
}

/// The plain loops' one-launch cases (1x1, one launch per wait, the finish wait) measured
/// beside the ladder, if a calibration was written there.
pub fn plain_loops(folder: &Path) -> Result<Vec<CalibrationRow>, ExportError> {
    let rows: Vec<CalibrationRow> =
        crate::export::csv::read_rows_if_file(&folder.join(CALIBRATION_CSV))?;
    Ok(rows
        .into_iter()
        .filter(|r| {
            r.shape == "1x1"
                && ((r.batch == 1 && r.wait == "finish") || r.wait == crate::calibrate::LEVEL_WAIT)
        })
        .collect())
}

/// One API's host time per level split three ways: the kernels (device clock), a plain loop
/// of the level's own driver calls with empty kernels (the calibration's level case), and
/// what remains, the harness's own.
fn level_split(c: &Clocks, plain: &[CalibrationRow]) -> Option<String> {
    let levels = c.levels? as f64;
    let replay = plain
        .iter()
        .find(|r| r.wait == crate::calibrate::LEVEL_WAIT && r.api == c.api.label())?;
    let host = c.host_s * 1e6 / levels;
    let kernels = c.kernel_s * 1e6 / levels;
    let driver = replay.plain_us * f64::from(replay.batch);
    Some(format!(
        "{} per level {host:.2} µs on the host = {kernels:.2} µs of kernels + {driver:.2} µs a \
         plain loop of the level's driver calls takes ({}, empty kernels) + {:.2} µs of the \
         harness's own",
        c.api.label(),
        replay.wait_calls,
        host - kernels - driver
    ))
}

/// The sentence for `explain.md`; `None` when a clock is missing on either API.
pub fn sentence(clocks: &[Clocks], plain: &[CalibrationRow]) -> Option<String> {
    if clocks.len() < 2 {
        return None;
    }
    let mut parts: Vec<String> = clocks.iter().map(host_split).collect();
    parts.extend(clocks.iter().filter_map(|c| level_split(c, plain)));
    let mut text = parts.join("; ");
    if let Some(loops) = plain_loop_times(plain) {
        let _ = write!(
            text,
            "; a plain loop of the driver's own calls takes, per empty 1x1 launch and wait, {loops}"
        );
    }
    Some(text)
}

/// One API's host time per run, its kernel time, and what lies beyond the kernel.
fn host_split(c: &Clocks) -> String {
    let share = c.overhead_us() / (c.host_s * 1e6) * 100.0;
    format!(
        "{} {:.2} µs on the host for {:.2} µs of kernel ({:+.2} µs per run beyond the \
         kernel, {share:.1}% of the host time)",
        c.api.label(),
        c.host_s * 1e6,
        c.kernel_s * 1e6,
        c.overhead_us(),
    )
}

/// Each API's plain one-launch loop (not the level case) beside the harness's path.
fn plain_loop_times(plain: &[CalibrationRow]) -> Option<String> {
    let loops: Vec<String> = plain
        .iter()
        .filter(|r| r.wait != crate::calibrate::LEVEL_WAIT)
        .map(|r| {
            format!(
                "{} {:.2} µs ({}; the harness's path {:+.2} µs beside it)",
                r.api, r.plain_us, r.wait_calls, r.overhead_us
            )
        })
        .collect();
    (!loops.is_empty()).then(|| loops.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(comparison: &str, api: Api, timer: TimerKind, median_s: f64) -> MeasurementRow {
        let mut r = crate::plot::tests::m(api.label(), "d", "s", "matvec", "v", 1.0);
        (r.comparison, r.timer, r.median_s, r.levels) = (comparison.into(), timer, median_s, None);
        r
    }

    #[test]
    fn clocks_pair_the_targets_own_rows_with_the_other_clock_rung() {
        let rows = vec![
            row("t::own", Api::OpenCl, TimerKind::DeviceEvent, 100e-6),
            row("t::own", Api::Cuda, TimerKind::DeviceEvent, 90e-6),
            row("t::host-timer", Api::OpenCl, TimerKind::WallClock, 110e-6),
            row("t::host-timer", Api::Cuda, TimerKind::WallClock, 95e-6),
            row("t::fast-math", Api::Cuda, TimerKind::WallClock, 1.0),
            row("tx::own", Api::Cuda, TimerKind::WallClock, 1.0),
        ];
        let c = clocks(&rows, "t");
        assert_eq!(c.len(), 2);
        assert!((c[0].overhead_us() - 10.0).abs() < 1e-9);
        assert!((c[1].overhead_us() - 5.0).abs() < 1e-9);
        let text = sentence(&c, &[]).unwrap();
        assert!(text.contains("OpenCL 110.00 µs on the host for 100.00 µs of kernel (+10.00 µs"));
        assert!(text.contains("CUDA 95.00 µs on the host for 90.00 µs of kernel (+5.00 µs"));
    }

    #[test]
    fn a_missing_clock_gives_no_sentence() {
        let rows = vec![row("t::own", Api::Cuda, TimerKind::DeviceEvent, 1e-6)];
        assert!(sentence(&clocks(&rows, "t"), &[]).is_none());
    }

    #[test]
    fn a_level_is_split_into_kernels_the_drivers_calls_and_the_harness() {
        let mut rows = vec![
            row("bfs::own", Api::Cuda, TimerKind::WallClock, 9.0 * 40e-6),
            row(
                "bfs::device-timer",
                Api::Cuda,
                TimerKind::DeviceEvent,
                9.0 * 10e-6,
            ),
        ];
        rows[0].levels = Some(9);
        let replay = CalibrationRow {
            api: "CUDA".into(),
            device: "d".into(),
            driver: "v".into(),
            shape: "1x1".into(),
            batch: 2,
            wait: crate::calibrate::LEVEL_WAIT.into(),
            wait_calls: "copy, 2 launches, copy".into(),
            reps: 10,
            harness_us: 12.0,
            harness_ci_lo_us: 11.0,
            harness_ci_hi_us: 13.0,
            plain_us: 11.0,
            plain_ci_lo_us: 10.0,
            plain_ci_hi_us: 12.0,
            overhead_us: 1.0,
            harness_events_per_launch: 0.0,
        };
        let c = clocks(&rows, "bfs");
        assert_eq!(c[0].levels, Some(9));
        let text = level_split(&c[0], &[replay]).unwrap();
        assert!(
            text.contains("CUDA per level 40.00 µs on the host = 10.00 µs of kernels + 22.00 µs")
                && text.contains("+ 8.00 µs of the harness's own"),
            "{text}"
        );
    }
}
