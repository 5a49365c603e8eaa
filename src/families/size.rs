//! The problem size of a study entry.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::error::WorkloadError;

/// The problem size. Matvec: `rows` x `cols`; every other family: `rows` elements, `cols` 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Size {
    pub rows: u64,
    pub cols: u64,
}

impl Size {
    pub fn vector(n: u64) -> Self {
        Size { rows: n, cols: 0 }
    }

    pub fn matrix(rows: u64, cols: u64) -> Self {
        Size { rows, cols }
    }

    /// Elements the problem touches: rows*cols for a matrix, n for a vector.
    pub fn elements(&self) -> u64 {
        if self.cols == 0 {
            self.rows
        } else {
            self.rows.saturating_mul(self.cols)
        }
    }

    /// Parse `60989x1100` (rows x cols), `268435456`, or `2^28`.
    pub fn parse(text: &str) -> Result<Self, WorkloadError> {
        let bad = || WorkloadError::BadSize {
            text: text.to_string(),
        };
        let number = |t: &str| -> Result<u64, WorkloadError> {
            let t = t.trim();
            if let Some((b, e)) = t.split_once('^') {
                let b: u64 = b.trim().parse().map_err(|_| bad())?;
                let e: u32 = e.trim().parse().map_err(|_| bad())?;
                b.checked_pow(e).ok_or_else(bad)
            } else {
                t.replace('_', "").parse().map_err(|_| bad())
            }
        };
        match text.split_once(['x', 'X', '*']) {
            Some((r, c)) => {
                let (rows, cols) = (number(r)?, number(c)?);
                // Every count of the problem is a u64: a size whose elements overflow it
                // would be reported as 2^64 - 1 elements, a number nothing ran.
                rows.checked_mul(cols)
                    .ok_or_else(|| WorkloadError::SizeOverflow {
                        text: text.to_string(),
                    })?;
                Ok(Size::matrix(rows, cols))
            }
            None => Ok(Size::vector(number(text)?)),
        }
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.cols == 0 {
            write!(f, "{}", self.rows)
        } else {
            write!(f, "{}x{}", self.rows, self.cols)
        }
    }
}
