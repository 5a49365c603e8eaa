//! Markdown: human-readable tables of Performance Ratios and measurements, for reports and
//! pull-request comments. The CSV stays the source of truth; these tables round numbers.

use crate::rows::{MeasurementRow, PrRow, Status};

/// `x` with `digits` significant digits (at least 1), trailing zeros kept (`1.00`); scientific
/// below 1e-3 and from 1e6 up (`123456` reads better than `1.23e5`); `NaN`, `inf`, `-inf`.
pub fn format_sig(x: f64, digits: usize) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    if x == 0.0 {
        return "0".to_string();
    }
    let digits = digits.max(1);
    // Scientific formatting rounds to `digits` first, so its exponent already accounts for a
    // value like 9.996 rounding up to 10.0.
    let sci = format!("{:.*e}", digits - 1, x);
    let exponent = sci
        .split_once('e')
        .and_then(|(_, e)| e.parse::<i64>().ok())
        .unwrap_or(0);
    if !(-3..6).contains(&exponent) {
        return sci;
    }
    let decimals = usize::try_from(digits as i64 - 1 - exponent).unwrap_or(0);
    format!("{x:.decimals$}")
}

/// Makes text safe inside a Markdown table cell: pipes become `&#124;` (renderers disagree on
/// an escaped `\|`, never on an entity), line breaks spaces, and raw HTML stays text.
pub fn cell(text: &str) -> String {
    // A CR LF is one break, so one space.
    no_html(text)
        .replace('|', "&#124;")
        .replace("\r\n", "\n")
        .replace(['\r', '\n'], " ")
}

/// `text` with every `<` that could open raw HTML (a letter, `/`, `!` or `?` after it)
/// written `&lt;`: a folder or comparison named `<img onerror=…>` stays text in a Markdown
/// viewer. A `<` before a space or a digit (`p < 0.05`) is left as it reads.
pub fn no_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let opens = chars
            .peek()
            .is_some_and(|n| n.is_ascii_alphabetic() || matches!(n, '/' | '!' | '?'));
        if c == '<' && opens {
            out.push_str("&lt;");
        } else {
            out.push(c);
        }
    }
    out
}

/// A Markdown table: the header, its alignment line (`true`: right-aligned, for numbers) and
/// the rows of formatted cells, every cell through [`cell`] so none can break the table.
pub fn table(columns: &[(impl AsRef<str>, bool)], rows: &[Vec<String>]) -> String {
    let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
    let mut out = line(columns.iter().map(|(c, _)| cell(c.as_ref())).collect());
    out.push_str(&line(
        columns
            .iter()
            .map(|(_, right)| if *right { "---:" } else { "---" }.to_string())
            .collect(),
    ));
    for row in rows {
        out.push_str(&line(row.iter().map(|c| cell(c)).collect()));
    }
    out
}

/// Significant digits of the Performance Ratio and its CI: enough to read the 0.9/1.1 band.
const PR_DIGITS: usize = 3;
/// Significant digits of metrics and times: beyond this it is noise anyway.
const VALUE_DIGITS: usize = 4;

/// A Markdown table of Performance Ratios, one line per comparison; the differing steps let an
/// unfair PR explain itself.
pub fn pr_table(rows: &[PrRow]) -> String {
    let columns = [
        ("comparison", false),
        ("size", false),
        ("local×groups", true),
        ("perf A", true),
        ("perf B", true),
        ("unit", false),
        ("PR [95% CI]", true),
        ("verdict", false),
        ("fair", false),
        ("differing steps", false),
    ];
    let mut lines = Vec::new();
    for r in rows {
        let steps: Vec<&str> = r.steps().collect();
        lines.push(vec![
            r.comparison.clone(),
            r.size.clone(),
            format!("{}×{}", r.local_size, r.groups),
            format_sig(r.metric_a, VALUE_DIGITS),
            format_sig(r.metric_b, VALUE_DIGITS),
            r.metric_unit.unit().to_string(),
            format!(
                "{} [{}, {}]",
                format_sig(r.pr, PR_DIGITS),
                format_sig(r.pr_ci_lo, PR_DIGITS),
                format_sig(r.pr_ci_hi, PR_DIGITS)
            ),
            // The words the terminal and the report use.
            crate::stats::verdict_word(r.pr, r.pr_ci_lo, r.pr_ci_hi),
            if r.fair { "yes" } else { "no" }.to_string(),
            steps.join("; "),
        ]);
    }
    table(&columns, &lines)
}

/// A Markdown table of measurements. Time and metric only for rows with status `ok`: a failed
/// row's numbers were never verified and must not be read as results.
pub fn measurement_table(rows: &[MeasurementRow]) -> String {
    let columns = [
        ("comparison", false),
        ("api", false),
        ("local×groups", true),
        ("median time (ms)", true),
        ("metric", true),
        ("status", false),
    ];
    let mut lines = Vec::new();
    for r in rows {
        let (time, metric) = if r.status == Status::Ok {
            (
                format_sig(r.median_s * 1e3, VALUE_DIGITS),
                format!(
                    "{} {}",
                    format_sig(r.metric, VALUE_DIGITS),
                    r.metric_unit.unit()
                )
                .trim_end()
                .to_string(),
            )
        } else {
            ("-".to_string(), "-".to_string())
        };
        lines.push(vec![
            r.comparison.clone(),
            r.api.label().to_string(),
            format!("{}×{}", r.local_size, r.groups),
            time,
            metric,
            r.status.to_string(),
        ]);
    }
    table(&columns, &lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::{Api, FamilyId, Metric, TimerKind};
    use proptest::prelude::*;

    #[test]
    fn format_sig_known_values() {
        assert_eq!(format_sig(0.98765, 3), "0.988");
        assert_eq!(format_sig(1.0, 3), "1.00");
        assert_eq!(format_sig(1.05, 3), "1.05");
        assert_eq!(format_sig(9.996, 3), "10.0");
        assert_eq!(format_sig(0.99951, 3), "1.00");
        assert_eq!(format_sig(123.456, 4), "123.5");
        assert_eq!(format_sig(123456.0, 3), "123456");
        assert_eq!(format_sig(1234567.0, 3), "1.23e6");
        assert_eq!(format_sig(0.000123, 3), "1.23e-4");
        assert_eq!(format_sig(0.00123, 3), "0.00123");
        assert_eq!(format_sig(-2.5, 2), "-2.5");
        assert_eq!(format_sig(0.0, 3), "0");
        assert_eq!(format_sig(f64::NAN, 3), "NaN");
        assert_eq!(format_sig(f64::INFINITY, 3), "inf");
        assert_eq!(format_sig(7.0, 0), "7");
    }

    #[test]
    fn cell_escapes_pipes_and_line_breaks() {
        assert_eq!(cell("a|b\nc\r\nd\re\\|"), "a&#124;b c d e\\&#124;");
        // A comparison named like a tag stays text in a run's summary and the fair gaps.
        assert_eq!(cell("<img src=x> p < 1"), "&lt;img src=x> p < 1");
    }

    fn pr_row() -> PrRow {
        PrRow {
            run_id: "r".into(),
            study: "s".into(),
            comparison: "mv|tiled".into(),
            device_a: "d".into(),
            device_b: "d".into(),
            api_a: Api::OpenCl,
            api_b: Api::Cuda,
            family: FamilyId::Matvec,
            variant: "mv|tiled".into(),
            size: "60989x1100".into(),
            local_size: 256,
            groups: 120,
            metric_unit: Metric::Bandwidth,
            metric_a: 812.345,
            metric_b: 850.0,
            pr: 0.955_700_1,
            pr_ci_lo: 0.941,
            pr_ci_hi: 0.97,
            similar: true,
            similar_tight: false,
            fair: false,
            differing_steps: "compiler: -O3 vs -O2;unroll: 4 vs none;".into(),
            timer: "device-event".into(),
            sweep_param: String::new(),
            sweep_value: String::new(),
        }
    }

    #[test]
    fn pr_table_known_row() {
        let table = pr_table(&[pr_row()]);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 3, "{table}");
        assert_eq!(
            lines[0],
            "| comparison | size | local×groups | perf A | perf B | unit | PR [95% CI] | verdict \
             | fair | differing steps |"
        );
        assert_eq!(
            lines[1],
            "| --- | --- | ---: | ---: | ---: | --- | ---: | --- | --- | --- |"
        );
        assert_eq!(
            lines[2],
            "| mv&#124;tiled | 60989x1100 | 256×120 | 812.3 | 850.0 | GB/s | 0.956 [0.941, 0.970] \
             | similar | no | compiler: -O3 vs -O2; unroll: 4 vs none |"
        );
    }

    #[test]
    fn pr_table_labels_tight_and_not_similar() {
        // The words come from the CI: inside ±5%, and wholly below the band.
        let mut tight = pr_row();
        (tight.pr, tight.pr_ci_lo, tight.pr_ci_hi) = (0.99, 0.97, 1.01);
        tight.fair = true;
        tight.differing_steps = String::new();
        let mut far = pr_row();
        (far.pr, far.pr_ci_lo, far.pr_ci_hi) = (0.5, 0.45, 0.55);
        let table = pr_table(&[tight, far]);
        let lines: Vec<&str> = table.lines().collect();
        assert!(
            lines[2].ends_with("| similar (±5%) | yes |  |"),
            "{}",
            lines[2]
        );
        assert!(lines[3].contains("| 2.00× slower | no |"), "{}", lines[3]);
    }

    fn measurement(status: Status) -> MeasurementRow {
        MeasurementRow {
            run_id: "r".into(),
            study: "s".into(),
            comparison: "reduce6".into(),
            api: Api::Cuda,
            device: "d".into(),
            platform: "p".into(),
            driver: "1".into(),
            api_version: "12".into(),
            family: FamilyId::Reduce,
            variant: "reduce6".into(),
            size: "1024".into(),
            elements: 1024,
            local_size: 256,
            groups: 4,
            global_size: 1024,
            local_y: 1,
            groups_y: 1,
            unroll: String::new(),
            flags: String::new(),
            timer: TimerKind::DeviceEvent,
            warmup: 1,
            reps: 10,
            median_s: 0.001_234_56,
            min_s: 0.001,
            mean_s: 0.0013,
            mad_s: 0.0001,
            ci_lo_s: 0.0012,
            ci_hi_s: 0.0013,
            outliers: 0,
            metric: 3.325_49,
            metric_unit: Metric::Bandwidth,
            metric_ci_lo: 3.2,
            metric_ci_hi: 3.4,
            bytes: 4096,
            flops: 1024,
            peak_gbs: None,
            verified: status == Status::Ok,
            max_error: 0.0,
            status,
            error: String::new(),
            sweep_param: String::new(),
            sweep_value: String::new(),
            wait_mode: Some(crate::rows::WaitMode::Spin),
            queued_to_submit_s: None,
            submit_to_start_s: None,
            turn: Some(1),
            levels: None,
            front_end: None,
            kernel_work_group_limit: None,
            registers: None,
            spill_bytes: None,
            shared_bytes: None,
        }
    }

    #[test]
    fn measurement_table_known_rows() {
        let table = measurement_table(&[measurement(Status::Ok), measurement(Status::BuildFailed)]);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(
            lines[0],
            "| comparison | api | local×groups | median time (ms) | metric | status |"
        );
        assert_eq!(
            lines[2],
            "| reduce6 | CUDA | 256×4 | 1.235 | 3.325 GB/s | ok |"
        );
        assert_eq!(
            lines[3],
            "| reduce6 | CUDA | 256×4 | - | - | build-failed |"
        );
        assert_eq!(lines.len(), 4);
    }

    proptest! {
        #[test]
        fn any_text_keeps_the_table_shape(
            variant in any::<String>(), steps in any::<String>(), timer in "[a-z|\n/]{0,6}",
        ) {
            let mut row = pr_row();
            row.variant = variant;
            row.differing_steps = steps;
            row.timer = timer;
            let table = pr_table(&[row]);
            let lines: Vec<&str> = table.lines().collect();
            prop_assert_eq!(lines.len(), 3);
            // Pipes delimit cells: every line must have the header's 11.
            let delimiters = |l: &str| l.matches('|').count();
            prop_assert_eq!(delimiters(lines[2]), delimiters(lines[0]));
        }

        #[test]
        fn format_sig_keeps_the_value(x in -1e9f64..1e9, digits in 1usize..8) {
            let s = format_sig(x, digits);
            let back: f64 = s.parse().unwrap();
            // Rounding to `digits` significant digits moves a value by at most half a unit in
            // the last place kept.
            let tolerance = 0.5 * 10f64.powi(1 - digits as i32) * x.abs() * (1.0 + 1e-9);
            prop_assert!((back - x).abs() <= tolerance, "{} -> {}", x, s);
        }
    }
}
