//! The limits and consistency rules a study's values are held to: counts no measurement
//! needs, watchdog limits, seeds a JSON reader reads back exactly, defines that cannot
//! smuggle a flag, and the second dimension of a launch.

use std::collections::BTreeMap;

use super::Spec;
use crate::families::Variant;
use crate::kernels::defines;
use crate::names::is_identifier;

/// A study key whose value breaks one of the rules of a study file; the message names the key.
#[derive(Debug, thiserror::Error)]
pub enum FieldError {
    #[error("{0}")]
    Rule(String),
    #[error(transparent)]
    Define(#[from] defines::DefineError),
    #[error("field 'matrix': {0}")]
    Matrix(#[from] crate::families::matrix::MatrixError),
}
use FieldError::Rule;

/// Macros the harness itself defines for every build: a study may not override them (they
/// are held equal, or varied through their own keys: `local`, `unroll`).
pub const RESERVED_DEFINES: &[&str] = &["WG_SIZE", "FMA_ITERS", "UNROLL_A", "UNROLL_B"];

/// Prefixes of the harness's own macro names, reserved likewise.
const RESERVED_PREFIXES: &[&str] = &["CLVSCU_", "PRAGMA_UNROLL_", "UNROLL_"];

/// The most repetitions, warm-up runs or groups a study may ask for: far beyond any useful
/// measurement, and small enough that a typo cannot run for days.
pub const MAX_REPS: u32 = 1_000_000;
pub const MAX_GROUPS: u32 = 1 << 24;

/// The default `turn` with the wall-clock timer. The first command after the APIs switch on
/// one GPU waits for a context switch (about 130 µs on an H100: a 1 x 1 launch took 145 µs
/// with the APIs alternating and 11 µs (CUDA) / 17 µs (OpenCL) with one API alone), which the
/// host clock counts and the device clock does not; so each side runs several repetitions in a
/// row, the first of each turn untimed.
pub const WALL_CLOCK_TURN: u32 = 10;

fn is_number(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    !digits.is_empty()
        && digits
            .trim_end_matches(['u', 'U', 'f', 'F'])
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.')
}

/// Defines reach the compiler as `-DNAME=VALUE`: a name must be an identifier the harness
/// does not own, and a value an identifier or a number, so no define can smuggle a flag.
pub(super) fn check_defines(defines: &BTreeMap<String, String>) -> Result<(), FieldError> {
    for (name, value) in defines {
        if !is_identifier(name) {
            return Err(Rule(format!(
                "field 'defines': '{name}' is not a macro name (letters, digits and _)"
            )));
        }
        if RESERVED_DEFINES.contains(&name.as_str())
            || RESERVED_PREFIXES.iter().any(|p| name.starts_with(p))
        {
            return Err(Rule(format!(
                "field 'defines': {name} is the harness's own macro; set it through its own \
                 key ('local' for WG_SIZE, 'unroll' for UNROLL_*), not as a define (reserved: \
                 {}, and names starting {})",
                RESERVED_DEFINES.join(", "),
                RESERVED_PREFIXES.join(", ")
            )));
        }
        defines::check_api_name(name)?;
        if !(is_identifier(value) || is_number(value)) {
            return Err(Rule(format!(
                "field 'defines': {name} = '{value}': a value must be a number or an \
                 identifier (compiler flags go in 'flags')"
            )));
        }
    }
    Ok(())
}

/// The work-group size in y: only 2-D kernels have one (default 16); a 1-D kernel given
/// `local_y` or `groups_y` is refused rather than launched with a dimension it ignores.
pub(super) fn second_dimension(variant: &Variant, spec: &Spec) -> Result<u32, FieldError> {
    if !variant.default_groups.is_planar() {
        if let Some((key, _)) = [("local_y", spec.local_y), ("groups_y", spec.groups_y)]
            .into_iter()
            .find(|(_, v)| v.is_some_and(|v| v != 1))
        {
            return Err(Rule(format!(
                "field '{key}': {}/{} is a 1-D kernel; '{key}' applies to 2-D kernels only",
                variant.family.name(),
                variant.name
            )));
        }
        return Ok(1);
    }
    for (key, v) in [("local_y", spec.local_y), ("groups_y", spec.groups_y)] {
        if v == Some(0) {
            return Err(Rule(format!(
                "field '{key}' = 0: a 2-D launch needs at least 1"
            )));
        }
    }
    Ok(spec.local_y.unwrap_or(16))
}

/// How often the session's watchdog looks: a study's shorter limit could not be kept.
pub const WATCHDOG_TICK: std::time::Duration = std::time::Duration::from_millis(50);

/// The longest watchdog limit of one launch: a week. Longer is no limit at all, and a value
/// past what a `Duration` holds (1e308 s) would otherwise end the run in a panic.
pub const MAX_TIMEOUT_S: f64 = 7.0 * 24.0 * 3600.0;

#[derive(Debug, thiserror::Error)]
pub enum TimeoutError {
    #[error(
        "{0} s is below {tick} s, the interval at which the watchdog looks: a shorter limit \
         could not be kept",
        tick = WATCHDOG_TICK.as_secs_f64()
    )]
    TooShort(f64),
    #[error(
        "{0:e} s is more than the longest watchdog limit, {max} s (a week)",
        max = MAX_TIMEOUT_S
    )]
    TooLong(f64),
}

/// Refuses a watchdog limit above [`MAX_TIMEOUT_S`] or below [`WATCHDOG_TICK`], naming the bound.
pub fn check_timeout(seconds: f64) -> Result<(), TimeoutError> {
    if seconds < WATCHDOG_TICK.as_secs_f64() {
        return Err(TimeoutError::TooShort(seconds));
    }
    if seconds > MAX_TIMEOUT_S {
        return Err(TimeoutError::TooLong(seconds));
    }
    Ok(())
}

/// Refuses counts no measurement needs, naming the limit, and `reps` above `max_reps`.
pub(super) fn check_limits(spec: &Spec) -> Result<(), FieldError> {
    let counts = [
        ("reps", spec.reps, MAX_REPS),
        ("max_reps", spec.max_reps, MAX_REPS),
        ("warmup", spec.warmup, MAX_REPS),
        ("turn", spec.turn, MAX_REPS),
        ("groups", spec.groups, MAX_GROUPS),
        ("groups_y", spec.groups_y, MAX_GROUPS),
    ];
    for (key, value, limit) in counts {
        if let Some(v) = value.filter(|v| *v > limit) {
            return Err(Rule(format!(
                "field '{key}' = {v} is above the limit {limit}"
            )));
        }
    }
    if let Some(seed) = spec.seed.filter(|s| *s > MAX_SEED) {
        return Err(Rule(format!(
            "field 'seed' = {seed} is above the limit {MAX_SEED}"
        )));
    }
    // Keys that contradict each other are refused, rather than letting one silently win.
    match (spec.reps, spec.max_reps) {
        (Some(reps), Some(max)) if reps > max => Err(Rule(format!(
            "field 'reps' = {reps} is above field 'max_reps' = {max}; raise 'max_reps' or \
             lower 'reps'"
        ))),
        _ => Ok(()),
    }
}

/// The largest seed: 2^53 - 1, the largest integer a JSON reader that holds numbers as
/// doubles (a browser, the HTML report) reads back exactly.
pub const MAX_SEED: u64 = (1 << 53) - 1;
