//! Texture reads across the PTX swap (as in results/*/inspect/spmv.*.ptx). NVIDIA's OpenCL
//! (`texmode_independent`) declares a module-level sampler `samp$N` and fetches from a `.param
//! .texref P` naming both: `tex.1d... [P, samp$N, {c}]`. NVRTC (unified mode) loads a `.param
//! .u64 P` texture object into a register (`ld.param.u64 %rdK, [P]`) and fetches through it:
//! `tex.1d... [%rdK, {c}]`. Each becomes the nearest form the other runtime binds, and nothing
//! else changes:
//!
//! * For the CUDA driver, OpenCL's module becomes unified, in NVRTC's form: each `.texref`
//!   parameter becomes a `.u64` texture object, loaded once at the entry into a register
//!   (`%rdtex<N>`) the fetches read; the sampler operand and declaration go (the texture
//!   object holds the sampling state). The driver refuses `.texref` parameters in unified
//!   mode (CUDA_ERROR_INVALID_IMAGE on an H100, driver 580.159.04), hence the registers.
//! * For NVIDIA's OpenCL, NVRTC's texture parameter becomes `.param .texref P` (so the runtime
//!   binds the image there), and its handle is taken with `mov.u64 %rdK, P` instead of loaded.
//!   PTX allows that indirect access in unified mode only, so such a module stays unified.

use std::collections::BTreeMap;

use super::CannotCross;

pub(super) fn declares_sampler(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with(".global .samplerref") || t.starts_with(".samplerref")
}

/// One `tex` instruction of independent mode with its sampler operand dropped:
/// `[P, samp$2, {%r1}]` becomes `[P, {%r1}]`; a fetch without a sampler is unchanged.
pub(super) fn without_sampler(line: &str) -> Result<String, CannotCross> {
    let Some(open) = line.find('[') else {
        return Err(format!("a texture read without operands: `{}`", line.trim()).into());
    };
    let inside = &line[open + 1..];
    let mut parts = inside.splitn(3, ',');
    let (Some(texture), Some(second)) = (parts.next(), parts.next()) else {
        return Err(format!("a texture read not adapted here: `{}`", line.trim()).into());
    };
    if second.trim_start().starts_with('{') {
        return Ok(line.to_string());
    }
    let rest = parts.next().unwrap_or_default();
    Ok(format!("{}[{texture},{rest}", &line[..open]))
}

/// Fed every line in order.
#[derive(Default)]
pub(super) struct TexrefsToRegisters {
    /// The current entry's texture parameters, in order (register `%rdtex<i>` holds the i-th).
    params: Vec<String>,
    in_params: bool,
}

impl TexrefsToRegisters {
    /// Several lines for an entry's `{`: the loads after it.
    pub(super) fn rewrite(&mut self, line: &str) -> Result<String, CannotCross> {
        let t = line.trim_start();
        if t.contains(".entry ") {
            self.params.clear();
            self.in_params = !t.contains(')');
            return Ok(line.to_string());
        }
        if self.in_params {
            if t.starts_with(')') {
                self.in_params = false;
            } else if let Some(name) = t.strip_prefix(".param .texref ") {
                self.params
                    .push(name.trim_end_matches(',').trim().to_string());
                return Ok(line.replacen(".param .texref ", ".param .u64 ", 1));
            }
            return Ok(line.to_string());
        }
        if t == "{" && !self.params.is_empty() {
            let mut out = format!("{line}\n\t.reg .b64 \t%rdtex<{}>;", self.params.len());
            for (i, p) in self.params.iter().enumerate() {
                out.push_str(&format!("\n\tld.param.u64 \t%rdtex{i}, [{p}];"));
            }
            return Ok(out);
        }
        if super::instruction(t).starts_with("tex.") {
            return self.fetch_through_register(line);
        }
        Ok(line.to_string())
    }

    /// `[P, samp$2, {c}]` as `[%rdtexI, {c}]`.
    fn fetch_through_register(&self, line: &str) -> Result<String, CannotCross> {
        let line = without_sampler(line)?;
        for (i, p) in self.params.iter().enumerate() {
            let named = format!("[{p},");
            if line.contains(&named) {
                return Ok(line.replacen(&named, &format!("[%rdtex{i},"), 1));
            }
        }
        Err(format!(
            "a texture read of no texture parameter of its entry: `{}`",
            line.trim()
        )
        .into())
    }
}

/// `[%rdK, {...}]`.
fn fetch_register(line: &str) -> Option<&str> {
    let inside = &line[line.find('[')? + 1..];
    let handle = inside.split(',').next()?.trim();
    handle.starts_with('%').then_some(handle)
}

/// NVRTC's texture parameters: for each parameter whose loaded value a `tex` fetch reads,
/// the register it is loaded into (registers are named per entry, parameters carry the
/// entry's name). A fetch through a register that no earlier `ld.param.u64` of its entry
/// fills is refused: the handle then comes from memory or arithmetic, which does not cross.
pub(super) fn nvrtc_texture_params(text: &str) -> Result<BTreeMap<String, String>, CannotCross> {
    let mut params = BTreeMap::new();
    let mut loads: BTreeMap<&str, &str> = BTreeMap::new();
    for line in text.lines() {
        if line.contains(".entry ") {
            loads.clear();
        }
        if let Some((reg, param)) = parameter_load(line) {
            loads.insert(reg, param);
        }
        let Some(reg) =
            fetch_register(line).filter(|_| super::instruction(line).starts_with("tex."))
        else {
            continue;
        };
        let param = loads.get(reg).ok_or_else(|| {
            format!(
                "a texture read through {reg}, which no parameter load fills: `{}`",
                line.trim()
            )
        })?;
        params.insert(param.to_string(), reg.to_string());
    }
    Ok(params)
}

/// `ld.param.u64 %rd5, [P];` as (`%rd5`, `P`).
fn parameter_load(line: &str) -> Option<(&str, &str)> {
    match super::operands(line).as_slice() {
        ["ld.param.u64", reg, param] => Some((*reg, param.trim_matches(['[', ']']))),
        _ => None,
    }
}

/// NVRTC's load of a texture parameter, rewritten to take the `.texref` handle:
/// `ld.param.u64 %rd5, [P];` becomes `mov.u64 %rd5, P;`. Other lines are unchanged.
pub(super) fn handle_from_texref(line: &str, params: &BTreeMap<String, String>) -> String {
    let t = line.trim_start();
    if !t.starts_with("ld.param.u64") {
        return line.to_string();
    }
    for (param, reg) in params {
        if t.contains(&format!("[{param}]")) && t.contains(reg.as_str()) {
            return format!("\tmov.u64 \t{reg}, {param};");
        }
    }
    line.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sampler_operand_is_dropped_and_nothing_else() {
        let l = "\t@%p1 tex.1d.v4.f32.s32 \t{%f7, %f8, %f9, %f10}, [k_param_3, samp$2, {%r11}];";
        assert_eq!(
            without_sampler(l).unwrap(),
            "\t@%p1 tex.1d.v4.f32.s32 \t{%f7, %f8, %f9, %f10}, [k_param_3, {%r11}];"
        );
        let unified = "\ttex.1d.v4.f32.s32 \t{%f1, %f2, %f3, %f4}, [%rd5, {%r18}];";
        assert_eq!(without_sampler(unified).unwrap(), unified);
        assert!(without_sampler("\ttex.1d.v4.f32.s32 %f1;").is_err());
    }

    #[test]
    fn samplers_are_recognised_at_module_scope() {
        assert!(declares_sampler(
            ".global .samplerref samp$2 = { filter_mode = nearest };"
        ));
        assert!(!declares_sampler(
            "\ttex.1d.v4.f32.s32 {%f1}, [p, samp$2, {%r1}];"
        ));
    }

    #[test]
    fn nvrtc_texture_parameters_are_found_through_their_loads() {
        let text = "\tld.param.u64 \t%rd4, [k_param_2];\n\tld.param.u64 \t%rd5, [k_param_3];\n\
                    \ttex.1d.v4.f32.s32 \t{%f1, %f2, %f3, %f4}, [%rd5, {%r18}];\n";
        let params = nvrtc_texture_params(text).unwrap();
        assert_eq!(params.len(), 1);
        assert_eq!(params["k_param_3"], "%rd5");
        assert_eq!(
            handle_from_texref("\tld.param.u64 \t%rd5, [k_param_3];", &params),
            "\tmov.u64 \t%rd5, k_param_3;"
        );
        let untouched = "\tld.param.u64 \t%rd4, [k_param_2];";
        assert_eq!(handle_from_texref(untouched, &params), untouched);
        // Registers are named per entry: a second entry's %rd5 is its own.
        let two = format!(
            "{text}.visible .entry j(\n\tld.param.u64 \t%rd5, [j_param_0];\n\
             \ttex.1d.v4.f32.s32 \t{{%f1, %f2, %f3, %f4}}, [%rd5, {{%r1}}];\n"
        );
        let params = nvrtc_texture_params(&two).unwrap();
        assert_eq!(
            params.keys().collect::<Vec<_>>(),
            ["j_param_0", "k_param_3"]
        );
        let orphan = "\ttex.1d.v4.f32.s32 \t{%f1, %f2, %f3, %f4}, [%rd9, {%r18}];\n";
        let e = nvrtc_texture_params(orphan).unwrap_err().to_string();
        assert!(e.contains("%rd9"), "{e}");
    }
}
