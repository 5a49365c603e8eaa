//! How one study entry becomes several: a sweep's values applied one at a time, and
//! `all_variants` expanded to the family's variants.

use super::{Spec, StudyError};
use crate::families;

pub(super) fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

pub(super) fn apply_sweep(
    spec: &Spec,
    param: &str,
    value: &str,
    file: &str,
    entry: &str,
) -> Result<Spec, StudyError> {
    let field = |message: String| StudyError::field(file, entry, message);
    let number = || {
        value.parse::<u32>().map_err(|_| {
            field(format!(
                "sweep value '{value}' of '{param}' is not a whole number"
            ))
        })
    };
    let mut s = spec.clone();
    match param {
        "local" => s.local = Some(number()?),
        "groups" => s.groups = Some(number()?),
        "local_y" => s.local_y = Some(number()?),
        "size" => s.size = Some(value.to_string()),
        "index" => s.index = Some(value.to_string()),
        p if p.starts_with("unroll.") => {
            let mut u = s.unroll.clone().unwrap_or_default();
            u.insert(p.trim_start_matches("unroll.").to_string(), number()?);
            s.unroll = Some(u);
        }
        other => {
            return Err(field(format!(
            "sweep parameter '{other}' is not one of: local, local_y, groups, size, index, unroll.<point>"
        )))
        }
    }
    Ok(s)
}

pub(super) fn expand_variants(
    spec: &Spec,
    file: &str,
    entry: &str,
) -> Result<Vec<Spec>, StudyError> {
    if spec.all_variants != Some(true) {
        return Ok(vec![spec.clone()]);
    }
    let family = super::family_of(spec).map_err(|source| StudyError::Invalid {
        file: file.to_string(),
        entry: entry.to_string(),
        source,
    })?;
    Ok(families::user_variants_of(family)
        .into_iter()
        .map(|v| {
            let mut s = spec.clone();
            s.variant = Some(v.name.to_string());
            s
        })
        .collect())
}
