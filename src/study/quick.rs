//! Studies written from the command line: `clvscu run matvec/listing6 --local 64,128,256
//! --size 60989x1100` is the study file this module writes, saved in the output folder so the
//! run can be repeated with `--study`. Every parameter takes a list (`64,128,256`) or a
//! doubling range (`64..1024`, `2^10..2^20`); several lists form a grid, one fair comparison
//! per point. A range that is the only parameter with several values is a sweep instead, so
//! the run draws its sweep chart.

use super::{parse, Study, StudyError};

/// The command line's settings; empty lists keep the study defaults.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QuickRun {
    /// `FAMILY/VARIANT`, or `FAMILY` for all its variants.
    pub target: String,
    pub local: Vec<String>,
    pub size: Vec<String>,
    pub groups: Vec<String>,
    pub index: Vec<String>,
    /// The parameters given as a range (`64..1024`): alone, such a range is a sweep.
    pub ranges: Vec<String>,
    pub reps: Option<u32>,
    pub warmup: Option<u32>,
    pub min_time: Option<f64>,
    pub max_time: Option<f64>,
    pub target_ci: Option<f64>,
    pub timer: Option<String>,
}

/// One setting of a grid point: key, value, and whether TOML quotes the value.
type Setting = (&'static str, String, bool);

/// The most grid points one command line may ask for.
pub const MAX_POINTS: usize = 10_000;

#[derive(Debug, thiserror::Error)]
pub enum QuickError {
    #[error("--{param}: an empty value in '{text}'")]
    EmptyValue { param: String, text: String },
    #[error("--{param}: '{value}' is not a power of two 2^K")]
    NotPowerOfTwo { param: String, value: String },
    #[error("--{param}: '{value}' is not a whole number")]
    NotWhole { param: String, value: String },
    #[error("--{param}: the range {lo}..{hi} is empty")]
    EmptyRange { param: String, lo: u64, hi: u64 },
    #[error("the grid has {0} points or more; at most {max} in one run", max = MAX_POINTS)]
    TooManyPoints(usize),
}

/// Expands `64,128` or `64..256` (doubling) or `2^10..2^12` into its values.
pub fn expand(param: &str, text: &str) -> Result<Vec<String>, QuickError> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim) {
        match part.split_once("..") {
            Some((lo, hi)) => out.extend(doubling(param, lo, hi)?),
            None if part.is_empty() => {
                return Err(QuickError::EmptyValue {
                    param: param.into(),
                    text: text.into(),
                })
            }
            None => out.push(part.to_string()),
        }
    }
    Ok(out)
}

/// `lo, 2 lo, 4 lo, ... <= hi`, written as given (`2^K` stays a power of two).
fn doubling(param: &str, lo: &str, hi: &str) -> Result<Vec<String>, QuickError> {
    let param = param.to_string();
    let value = |s: &str| {
        let pow = s.trim().starts_with("2^");
        let v = length(s.trim()).ok_or_else(|| {
            let (param, value) = (param.clone(), s.into());
            if pow {
                QuickError::NotPowerOfTwo { param, value }
            } else {
                QuickError::NotWhole { param, value }
            }
        })?;
        Ok((v, pow))
    };
    let ((lo, pow), (hi, _)) = (value(lo)?, value(hi)?);
    if lo == 0 || lo > hi {
        return Err(QuickError::EmptyRange { param, lo, hi });
    }
    let mut out = Vec::new();
    let mut v = lo;
    while v <= hi {
        out.push(if pow {
            format!("2^{}", v.trailing_zeros())
        } else {
            v.to_string()
        });
        v = v.saturating_mul(2);
        if out.len() > MAX_POINTS {
            break;
        }
    }
    Ok(out)
}

/// `2^K` or a whole number; `None` for anything else or a power past `u64`.
pub(crate) fn length(text: &str) -> Option<u64> {
    match text.strip_prefix("2^") {
        Some(k) => 1u64.checked_shl(k.parse().ok()?),
        None => text.parse().ok(),
    }
}

fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// A value as TOML writes it: quoted where its key takes text.
fn toml_value(value: &str, quoted: bool) -> String {
    if quoted {
        quote(value)
    } else {
        value.to_string()
    }
}

impl QuickRun {
    /// The study file this command line stands for.
    pub fn study_text(&self) -> Result<String, QuickError> {
        let (family, variant) = match self.target.split_once('/') {
            Some((f, v)) => (f, Some(v)),
            None => (self.target.as_str(), None),
        };
        let mut text = format!(
            "# Written by the command line: clvscu run {}\nname = {}\n\
             description = \"a command-line run of {}\"\n\n[defaults]\nfamily = {}\n",
            self.target,
            quote(&format!("quick-{}", self.target.replace('/', "-"))),
            self.target,
            quote(family)
        );
        let scalars = [
            ("reps", self.reps.map(|r| r.to_string())),
            ("warmup", self.warmup.map(|w| w.to_string())),
            ("min_time", self.min_time.map(|t| format!("{t:?}"))),
            ("max_time", self.max_time.map(|t| format!("{t:?}"))),
            ("target_ci", self.target_ci.map(|t| format!("{t:?}"))),
            ("timer", self.timer.as_deref().map(quote)),
        ];
        for (key, value) in scalars.iter().filter_map(|(k, v)| Some((k, v.as_ref()?))) {
            text.push_str(&format!("{key} = {value}\n"));
        }
        let variant_line = match variant {
            Some(v) => format!("variant = {}\n", quote(v)),
            None => "all_variants = true\n".to_string(),
        };
        if let Some((param, values, quoted)) = self.sweep() {
            text.push_str("\n[[sweep]]\n");
            text.push_str(&variant_line);
            for (key, value, quoted) in self.grid()?.remove(0) {
                if key != param {
                    text.push_str(&format!("{key} = {}\n", toml_value(&value, quoted)));
                }
            }
            let values: Vec<String> = values.iter().map(|v| toml_value(v, quoted)).collect();
            text.push_str(&format!(
                "param = {}\nvalues = [{}]\n",
                quote(param),
                values.join(", ")
            ));
            return Ok(text);
        }
        let grid = self.grid()?;
        for point in &grid {
            text.push_str("\n[[comparison]]\n");
            text.push_str(&variant_line);
            if grid.len() > 1 {
                let name: Vec<String> = point.iter().map(|(k, v, _)| format!("{k}={v}")).collect();
                text.push_str(&format!(
                    "name = {}\n",
                    quote(&format!("{}@{}", self.target, name.join(",")))
                ));
            }
            for (key, value, quoted) in point {
                text.push_str(&format!("{key} = {}\n", toml_value(value, *quoted)));
            }
        }
        Ok(text)
    }

    /// The parameters: (key, values, whether TOML quotes a value).
    fn axes(&self) -> [(&'static str, &Vec<String>, bool); 4] {
        [
            ("size", &self.size, true),
            ("local", &self.local, false),
            ("groups", &self.groups, false),
            ("index", &self.index, true),
        ]
    }

    /// The one parameter that varies, when given as a range: a sweep, so the run draws the
    /// sweep chart (metric against the parameter) rather than a PR bar per value.
    fn sweep(&self) -> Option<(&'static str, &Vec<String>, bool)> {
        let varying: Vec<_> = self
            .axes()
            .into_iter()
            .filter(|(_, values, _)| values.len() > 1)
            .collect();
        match varying.as_slice() {
            [axis] if self.ranges.iter().any(|r| r == axis.0) => Some(*axis),
            _ => None,
        }
    }

    /// Every combination of the listed parameters: (key, value, whether TOML quotes it).
    fn grid(&self) -> Result<Vec<Vec<Setting>>, QuickError> {
        let mut grid: Vec<Vec<Setting>> = vec![Vec::new()];
        for (key, values, quoted) in self.axes() {
            if values.is_empty() {
                continue;
            }
            let next: Vec<Vec<Setting>> = grid
                .iter()
                .flat_map(|p| {
                    values
                        .iter()
                        .map(move |v| [&p[..], &[(key, v.clone(), quoted)]].concat())
                })
                .collect();
            if next.len() > MAX_POINTS {
                return Err(QuickError::TooManyPoints(next.len()));
            }
            grid = next;
        }
        Ok(grid)
    }

    /// The study, resolved and checked like any study file, and its text.
    pub fn study(&self) -> Result<(Study, String), StudyError> {
        let text = self
            .study_text()
            .map_err(|e| StudyError::field("command line", &self.target, e.to_string()))?;
        Ok((parse(&text, "command line")?, text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_doubling_ranges_expand() {
        assert_eq!(expand("local", "64,128").unwrap(), ["64", "128"]);
        assert_eq!(
            expand("local", "64..512").unwrap(),
            ["64", "128", "256", "512"]
        );
        assert_eq!(
            expand("size", "2^10..2^12").unwrap(),
            ["2^10", "2^11", "2^12"]
        );
        let e = |param, text| expand(param, text).unwrap_err().to_string();
        assert!(e("local", "512..64").contains("empty"));
        assert!(e("local", "64,,128").contains("empty value"));
        assert!(e("size", "2^x..2^3").contains("power of two"));
    }

    #[test]
    fn a_grid_of_two_parameters_is_one_named_comparison_per_point() {
        let q = QuickRun {
            target: "matvec/listing6".into(),
            local: vec!["64".into(), "128".into()],
            size: vec!["64x40".into(), "128x40".into()],
            reps: Some(3),
            ..QuickRun::default()
        };
        let (study, text) = q.study().unwrap();
        assert_eq!(study.comparisons.len(), 4);
        assert_eq!(
            study.comparisons[0].id,
            "matvec/listing6@size=64x40,local=64"
        );
        assert_eq!(study.comparisons[3].a.local, 128);
        assert_eq!(study.comparisons[0].a.reps, 3);
        // The text is a study file: reading it back gives the same comparisons.
        let again = parse(&text, "again.toml").unwrap();
        let ids = |s: &Study| {
            s.comparisons
                .iter()
                .map(|c| c.id.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(&again), ids(&study));
    }

    #[test]
    fn a_range_alone_is_a_sweep_and_a_list_or_a_grid_is_not() {
        let q = QuickRun {
            target: "reduce/tuned".into(),
            size: expand("size", "2^12..2^14").unwrap(),
            local: vec!["64".into()],
            ranges: vec!["size".into()],
            ..QuickRun::default()
        };
        let (study, text) = q.study().unwrap();
        assert_eq!(study.comparisons.len(), 3, "{text}");
        for (c, v) in study.comparisons.iter().zip(["2^12", "2^13", "2^14"]) {
            assert_eq!(
                (c.sweep_param.as_str(), c.sweep_value.as_str()),
                ("size", v)
            );
            assert_eq!(c.a.local, 64);
        }
        // The same values as a list, or the range beside a second varying parameter: points.
        let list = QuickRun {
            ranges: Vec::new(),
            ..q.clone()
        };
        let grid = QuickRun {
            local: vec!["64".into(), "128".into()],
            ..q
        };
        for other in [list, grid] {
            let (study, _) = other.study().unwrap();
            assert!(study.comparisons.iter().all(|c| c.sweep_param.is_empty()));
        }
    }

    #[test]
    fn a_family_alone_runs_all_its_variants_and_bad_input_names_the_cause() {
        let q = QuickRun {
            target: "reduce".into(),
            size: vec!["4096".into()],
            local: vec!["64".into()],
            ..QuickRun::default()
        };
        assert!(q.study().unwrap().0.comparisons.len() >= 8);
        let bad = QuickRun {
            target: "matvec/listing6".into(),
            local: vec!["0".into()],
            ..QuickRun::default()
        };
        assert!(bad
            .study()
            .unwrap_err()
            .to_string()
            .contains("work-group size 0"));
    }
}
