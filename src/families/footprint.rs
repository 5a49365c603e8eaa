//! Bytes a problem takes on the host (inputs, the f64 reference and its tolerances, the result
//! read back) and on the device (inputs and outputs). Each family counts its own; the counts
//! are upper estimates that tell "fits" from "cannot fit" before anything is allocated.

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Footprint {
    pub host: u64,
    pub device: u64,
    /// Bytes of the largest single buffer, which a device's largest allocation must hold;
    /// 0 where the family does not count it (its buffers are then checked as they are made).
    pub largest: u64,
}

impl Footprint {
    /// The same with its largest buffer of `floats` 4-byte words.
    pub(crate) fn with_largest(self, floats: u64) -> Footprint {
        Footprint {
            largest: mul(floats, 4),
            ..self
        }
    }
}

/// Saturating sums and products, so an absurd size pins at `u64::MAX` (refused) rather than
/// wrapping to something that fits.
pub(crate) fn mul(a: u64, b: u64) -> u64 {
    a.saturating_mul(b)
}

pub(crate) fn add(a: u64, b: u64) -> u64 {
    a.saturating_add(b)
}

/// `inputs` floats in, `outputs` floats out, `checked` outputs with an f64 reference and its
/// tolerance (16 bytes each), plus `extra` host bytes a generator holds while it works.
pub(crate) fn plain(inputs: u64, outputs: u64, checked: u64, extra: u64) -> Footprint {
    let device = mul(add(inputs, outputs), 4);
    let host = add(add(device, mul(checked, 16)), extra);
    Footprint {
        host,
        device,
        largest: 0,
    }
}
