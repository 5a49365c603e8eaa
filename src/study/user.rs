//! A study entry that names the user's own kernel pair (`kernels = { cl = ..., cu = ... }`):
//! its files read beside the study file, its declaration checked and its family registered,
//! after which the entry is an ordinary one of that family.

use std::path::Path;

use super::{FieldError, Spec, StudyError};
use crate::families::declared::{Declared, UserKernel};

/// The keys that belong to a kernel pair, and whether `spec` sets each.
fn pair_keys(spec: &Spec) -> [(&'static str, bool); 7] {
    [
        ("kernels", spec.kernels.is_some()),
        ("kernel", spec.kernel.is_some()),
        ("args", spec.args.is_some()),
        ("global", spec.global.is_some()),
        ("metric", spec.metric.is_some()),
        ("check", spec.check.is_some()),
        ("tune", spec.tune.is_some()),
    ]
}

/// Refuses a kernel pair's key in a per-side table: both sides run the same kernel.
pub(super) fn check_side(side: &Spec) -> Result<(), FieldError> {
    match pair_keys(side).into_iter().find(|(_, set)| *set) {
        Some((key, _)) => Err(FieldError::Rule(format!(
            "field '{key}' describes the kernel pair, which both sides run: set it on the entry, \
             not in a per-side table"
        ))),
        None => Ok(()),
    }
}

/// Where `entry` names a kernel pair: reads its files (relative to the study `file`), checks
/// the declaration, registers its family and points the entry at it (`family`, `variant`).
pub(super) fn declare(spec: &mut Spec, file: &str, entry: &str) -> Result<(), StudyError> {
    let field = |message: String| StudyError::field(file, entry, message);
    let Some(files) = spec.kernels.clone() else {
        return match pair_keys(spec).into_iter().find(|(_, set)| *set) {
            Some((key, _)) => Err(field(format!(
                "field '{key}' belongs to a kernel pair of your own: it needs \
                 kernels = {{ cl = \"FILE.cl\", cu = \"FILE.cu\" }}"
            ))),
            None => Ok(()),
        };
    };
    for (key, set) in [
        ("variant", spec.variant.is_some()),
        ("all_variants", spec.all_variants.is_some()),
        ("matrix", spec.matrix.is_some()),
    ] {
        if set {
            return Err(field(format!(
                "field '{key}' applies to the built-in families, not to a kernel pair of your own"
            )));
        }
    }
    let kernel = spec.kernel.clone().ok_or_else(|| {
        field("field 'kernel' is missing: the kernel's name in both files".into())
    })?;
    let base = Path::new(file).parent().unwrap_or(Path::new(""));
    let read = |name: &str| -> Result<(String, String), StudyError> {
        let path = base.join(name);
        let shown = path.display().to_string();
        let text = crate::input_file::read_text_capped(&path, crate::input_file::STUDY_CAP)
            .map_err(|source| StudyError::Io {
                path: shown.clone(),
                source,
            })?;
        Ok((shown, text))
    };
    let declared = Declared {
        family: spec.family.clone().unwrap_or_else(|| kernel.clone()),
        kernel: &kernel,
        cl: read(&files.cl)?,
        cu: read(&files.cu)?,
        args: spec.args.as_deref().unwrap_or_default(),
        global: spec.global.as_deref(),
        metric: spec.metric.as_ref(),
        check: spec.check.as_ref(),
        tune: spec.tune.as_ref(),
        local: spec.local,
        size: spec.size.clone().unwrap_or_else(|| "2^20".into()),
    };
    let decl = UserKernel::declare(declared).map_err(|e| field(e.to_string()))?;
    let id = crate::families::register_user(decl).map_err(|e| field(e.to_string()))?;
    spec.family = Some(id.name().to_string());
    spec.variant = Some(kernel);
    Ok(())
}
