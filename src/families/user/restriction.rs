//! The restrictions of a user kernel's tuning space, as Kernel Tuner's `restrictions`: each
//! a comparison of two expressions over the tunable names (`local` and the declared
//! defines), e.g. `"TILE * local <= 1024"`. A point is valid when every restriction holds.
//!
//! Each side is an [`Expr`] of the user kernels' evaluator; only the comparison is parsed
//! here, at the first comparison operator outside parentheses.

use super::expr::Expr;

/// The comparisons, longest first, so `<=` is not read as `<`.
const OPERATORS: [&str; 6] = ["<=", ">=", "==", "!=", "<", ">"];

/// A restriction that does not read as a comparison of two expressions over the names.
#[derive(Debug, thiserror::Error)]
pub enum RestrictionError {
    #[error("restriction '{0}' compares nothing: use <=, >=, <, >, == or !=")]
    ComparesNothing(String),
    #[error("restriction '{text}': {source} (names: {names})")]
    Side {
        text: String,
        source: super::expr::ExprError,
        names: String,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Restriction {
    left: Expr,
    op: &'static str,
    right: Expr,
}

impl Restriction {
    /// Parses `text` over `names` (a name's slot is its position in `names`).
    pub fn parse(text: &str, names: &[String]) -> Result<Restriction, RestrictionError> {
        let (at, op) = split_at_comparison(text)
            .ok_or_else(|| RestrictionError::ComparesNothing(text.to_string()))?;
        let slot = |name: &str| names.iter().position(|n| n == name);
        let side = |part: &str| {
            Expr::parse(part.trim(), &slot).map_err(|source| RestrictionError::Side {
                text: text.to_string(),
                source,
                names: names.join(", "),
            })
        };
        Ok(Restriction {
            left: side(&text[..at])?,
            op,
            right: side(&text[at + op.len()..])?,
        })
    }

    /// Whether the restriction holds with `values` as the names' values.
    pub fn holds(&self, values: &[f64]) -> bool {
        let (a, b) = (self.left.eval(values), self.right.eval(values));
        match self.op {
            "<=" => a <= b,
            ">=" => a >= b,
            "<" => a < b,
            ">" => a > b,
            "==" => a == b,
            _ => a != b,
        }
    }
}

/// The byte offset and operator of the first comparison outside parentheses.
fn split_at_comparison(text: &str) -> Option<(usize, &'static str)> {
    let mut depth = 0i32;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ if depth == 0 => {
                let rest = &text[i..];
                if let Some(op) = OPERATORS.iter().find(|op| rest.starts_with(**op)) {
                    return Some((i, op));
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        vec!["local".into(), "ITEMS".into()]
    }

    #[test]
    fn a_restriction_compares_two_expressions_over_the_names() {
        let r = Restriction::parse("ITEMS * local <= 1024", &names()).unwrap();
        assert!(r.holds(&[256.0, 4.0]));
        assert!(!r.holds(&[512.0, 4.0]));
        let r = Restriction::parse("(local % ITEMS) == 0", &names()).unwrap();
        assert!(r.holds(&[64.0, 4.0]) && !r.holds(&[66.0, 4.0]));
    }

    #[test]
    fn a_restriction_without_comparison_or_with_an_unknown_name_is_refused() {
        let e = Restriction::parse("ITEMS * local", &names())
            .unwrap_err()
            .to_string();
        assert!(e.contains("compares nothing"), "{e}");
        let e = Restriction::parse("TILE < 4", &names())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("TILE") && e.contains("names: local, ITEMS"),
            "{e}"
        );
    }
}
