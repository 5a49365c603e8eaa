//! A study file resolved into comparisons: defaults merged into each entry, each side's
//! settings checked and resolved, sweeps and variant lists expanded.

use super::*;

/// `over`'s settings, and `base`'s where `over` has none; the per-side tables are `over`'s.
fn merge(base: &Spec, over: &Spec) -> Spec {
    macro_rules! pick {
        ($($f:ident),* $(,)?) => {
            Spec {
                $($f: over.$f.clone().or_else(|| base.$f.clone()),)*
                a: over.a.clone(),
                b: over.b.clone(),
            }
        };
    }
    // Every field but `a` and `b`.
    pick! {
        name, family, variant, size, seed, local, groups, program, local_y, groups_y, unroll,
        defines, flags, jit, timer, wait, warmup, turn, reps, max_reps, min_time, max_time,
        target_ci, timeout, index, matrix, expect, param, values, all_variants, kernels, kernel,
        args, global, metric, check, tune,
    }
}

fn resolve_side(spec: &Spec, file: &str, entry: &str) -> Result<Resolved, StudyError> {
    let invalid = |source| StudyError::Invalid {
        file: file.to_string(),
        entry: entry.to_string(),
        source,
    };
    let field = |message: String| StudyError::field(file, entry, message);
    let family = super::family_of(spec).map_err(invalid)?;
    let variant_name = spec
        .variant
        .as_deref()
        .ok_or_else(|| field("field 'variant' is missing".into()))?;
    let variant = find_variant(family, variant_name).map_err(invalid)?;
    let rules = family.family();
    let default_size = rules.spec().default_size;
    let matrix = resolve_matrix(spec, family).map_err(|e| field(e.to_string()))?;
    let size = match &matrix {
        // A file brings its own shape.
        crate::families::matrix::MatrixSource::File { csr, .. } => csr.size(),
        _ => Size::parse(spec.size.as_deref().unwrap_or(default_size))
            .map_err(|e| invalid(e.into()))?,
    };
    rules.check_size(variant, size).map_err(invalid)?;
    let local = spec.local.unwrap_or_else(|| rules.default_local(variant));
    rules.check_local(variant, local).map_err(invalid)?;
    let local_y = second_dimension(variant, spec).map_err(|e| field(e.to_string()))?;
    let timer_text = spec.timer.as_deref().unwrap_or("device-event");
    let timer = TimerKind::parse(timer_text).ok_or_else(|| {
        field(format!(
            "field 'timer' = '{timer_text}' is not a timer; use device-event or wall-clock"
        ))
    })?;
    let wait = spec.wait.as_deref().map(crate::names::parse::<WaitMode>);
    let wait = wait
        .transpose()
        .map_err(|e| field(format!("field 'wait': {e}")))?
        .unwrap_or_default();
    let unroll = spec.unroll.clone().unwrap_or_default();
    if let Some(point) = unroll
        .keys()
        .find(|p| !variant.unroll_points.contains(&p.as_str()))
    {
        return Err(field(format!(
            "field 'unroll': variant {} has no unroll point '{point}' (it has: {})",
            variant.name,
            if variant.unroll_points.is_empty() {
                "none".to_string()
            } else {
                variant.unroll_points.join(", ")
            }
        )));
    }
    if spec.groups == Some(0) {
        // Zero groups would reach the driver as an empty launch and fail verification there.
        return Err(field(
            "field 'groups' = 0: a launch needs at least one work-group (leave 'groups' \
             out for the variant's default)"
                .into(),
        ));
    }
    let (min_time_s, max_time_s, target_ci) = timing(spec).map_err(|e| field(e.to_string()))?;
    let index = crate::names::parse::<IndexWidth>(spec.index.as_deref().unwrap_or("u32"))
        .map_err(|e| field(format!("field 'index': {e}")))?;
    let program = crate::names::parse::<ProgramSource>(spec.program.as_deref().unwrap_or("own"))
        .map_err(|e| field(format!("field 'program': {e}")))?;
    let defines = spec.defines.clone().unwrap_or_default();
    check_defines(&defines).map_err(|e| field(e.to_string()))?;
    let jit = spec.jit.unwrap_or_default();
    jit.check()
        .map_err(|e| field(format!("field 'jit': {e}")))?;
    let reps = spec.reps.unwrap_or(10).max(1);
    Ok(Resolved {
        family,
        variant,
        size,
        seed: spec.seed.unwrap_or(1),
        local,
        groups: spec.groups,
        local_y,
        groups_y: spec.groups_y,
        unroll,
        defines,
        flags: spec.flags.unwrap_or(Flags {
            mad: true,
            ..Default::default()
        }),
        jit,
        timer,
        wait,
        warmup: spec.warmup.unwrap_or(3),
        turn: spec
            .turn
            .unwrap_or(match timer {
                TimerKind::WallClock => WALL_CLOCK_TURN,
                TimerKind::DeviceEvent => 1,
            })
            .max(1),
        reps,
        max_reps: spec.max_reps.unwrap_or(1000).max(reps),
        min_time_s,
        max_time_s,
        target_ci,
        timeout_s: spec.timeout,
        index,
        program,
        matrix,
    })
}

/// `min_time`, `max_time` and `target_ci` in seconds, checked with the repetition limits and
/// `timeout`.
fn timing(spec: &Spec) -> Result<(f64, f64, f64), FieldError> {
    let min_time_s = spec.min_time.unwrap_or(0.2);
    if !(min_time_s.is_finite() && min_time_s >= 0.0) {
        return Err(FieldError::Rule(format!(
            "field 'min_time' = {min_time_s} must be a non-negative number of seconds"
        )));
    }
    if min_time_s > MAX_TIMING_S {
        return Err(FieldError::Rule(format!(
            "field 'min_time' = {min_time_s:e} is above the limit {MAX_TIMING_S} s: the timing \
             of one comparison stops there"
        )));
    }
    let (max_time_s, target_ci) = stopping_rule(spec.max_time, spec.target_ci)?;
    check_limits(spec)?;
    if let Some(t) = spec.timeout.filter(|t| !(t.is_finite() && *t > 0.0)) {
        return Err(FieldError::Rule(format!(
            "field 'timeout' = {t} must be a positive number of seconds"
        )));
    }
    if let Some(t) = spec.timeout {
        check_timeout(t).map_err(|e| FieldError::Rule(format!("field 'timeout': {e}")))?;
    }
    Ok((min_time_s, max_time_s, target_ci))
}

/// The `matrix` key: only for a family that takes one (SpMV); a file is read (and a malformed
/// one refused) here.
fn resolve_matrix(
    spec: &Spec,
    family: FamilyId,
) -> Result<crate::families::matrix::MatrixSource, FieldError> {
    use crate::families::matrix::MatrixSource;
    match &spec.matrix {
        None => Ok(MatrixSource::Uniform),
        Some(m) if family.family().spec().takes_matrix => Ok(MatrixSource::parse(m)?),
        Some(_) => {
            let takers: Vec<&str> = crate::families::all()
                .iter()
                .filter(|f| f.spec().takes_matrix)
                .map(|f| f.id().name())
                .collect();
            Err(FieldError::Rule(format!(
                "field 'matrix' applies to the {} family, not {}",
                takers.join(", "),
                family.name()
            )))
        }
    }
}

fn comparison_from(
    spec: &Spec,
    file: &str,
    entry: &str,
    sweep: (String, String),
) -> Result<Comparison, StudyError> {
    let field = |message: &str| StudyError::field(file, entry, message);
    for side in [&spec.a, &spec.b].into_iter().flatten() {
        if side.a.is_some() || side.b.is_some() || side.param.is_some() {
            return Err(field(
                "a per-side table cannot hold 'a', 'b', 'param' or 'values'",
            ));
        }
        user::check_side(side).map_err(|e| field(&e.to_string()))?;
    }
    let side = |over: &Option<Box<Spec>>| {
        resolve_side(
            &merge(spec, over.as_deref().unwrap_or(&Spec::default())),
            file,
            entry,
        )
    };
    let (a, b) = (side(&spec.a)?, side(&spec.b)?);
    if a.program == ProgramSource::Other && b.program == ProgramSource::Other {
        // Each side would wait for the other's program: one must compile its own source.
        return Err(field(
            "field 'program' = 'other' on both sides: one side must compile its own source (set \
             it in [comparison.opencl] or [comparison.cuda] only)",
        ));
    }
    if spec.name.as_deref().is_some_and(|n| n.trim().is_empty()) {
        // The name is the comparison's key in the CSVs, for `--resume` and `--only`.
        return Err(field(
            "field 'name' is empty; give the comparison a name or leave 'name' out",
        ));
    }
    let base = spec.name.clone().unwrap_or_else(|| a.variant.full_name());
    let id = if sweep.0.is_empty() {
        base
    } else {
        format!("{base}@{}={}", sweep.0, sweep.1)
    };
    let expected_refusal = spec
        .expect
        .as_deref()
        .map(crate::names::parse::<ExpectedRefusal>)
        .transpose()
        .map_err(|e| field(&format!("field 'expect': {e}")))?;
    Ok(Comparison {
        id,
        a,
        b,
        sweep_param: sweep.0,
        sweep_value: sweep.1,
        expected_refusal,
    })
}

pub(super) fn resolve(file_spec: &StudyFile, file: &str) -> Result<Study, StudyError> {
    let mut comparisons = Vec::new();
    let entries = (file_spec.comparisons.iter().enumerate())
        .map(|(i, c)| (format!("comparison #{}", i + 1), c, false))
        .chain(
            (file_spec.sweeps.iter().enumerate())
                .map(|(i, s)| (format!("sweep #{}", i + 1), s, true)),
        );
    for (entry, spec, is_sweep) in entries {
        let mut merged = merge(&file_spec.defaults, spec);
        user::declare(&mut merged, file, &entry)?;
        // A comparison is one point with no sweep parameter.
        let mut points = vec![(String::new(), String::new())];
        if is_sweep {
            let param = merged
                .param
                .clone()
                .ok_or_else(|| StudyError::field(file, &entry, "field 'param' is missing"))?;
            let values = merged.values.clone().unwrap_or_default();
            if values.is_empty() {
                return Err(StudyError::field(
                    file,
                    &entry,
                    "field 'values' is missing or empty",
                ));
            }
            points = values
                .iter()
                .map(|v| (param.clone(), value_text(v)))
                .collect();
        }
        for spec in expand_variants(&merged, file, &entry)? {
            for (param, value) in &points {
                let swept = if is_sweep {
                    apply_sweep(&spec, param, value, file, &entry)?
                } else {
                    spec.clone()
                };
                let sweep = (param.clone(), value.clone());
                comparisons.push(comparison_from(&swept, file, &entry, sweep)?);
            }
        }
    }
    if comparisons.is_empty() {
        return Err(StudyError::field(
            file,
            "study",
            "it has no [[comparison]] and no [[sweep]]: there is nothing to run",
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for c in &comparisons {
        if !seen.insert(c.id.clone()) {
            return Err(StudyError::field(
                file,
                &c.id,
                "two comparisons have the same name; give one a distinct 'name'",
            ));
        }
    }
    Ok(Study {
        name: file_spec.name.clone(),
        description: file_spec.description.clone(),
        file: file.to_string(),
        comparisons,
        sha256: String::new(),
    })
}
