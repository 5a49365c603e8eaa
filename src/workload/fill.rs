//! The fill family: the "OpenCL Optimization" article's buffer fill (a 10^4 × 10^4 table of
//! one value, 10 calls), in its 1D, float4 and two 2D forms. The kernels are `kernels_*/fill.*`.
//!
//! # Sizes
//!
//! The 1D kernels (`1d`, `1d-exact`, `float4`) take `N` floats; the 2D kernels take
//! `ROWSxCOLS`. `2d-article` puts rows on dimension 0 while the launch covers columns in x,
//! so it takes square tables only (the article's 10^4 × 10^4 is one).
//!
//! # The divisibility rule
//!
//! The harness launches whole work-groups and every kernel has a bound check, as CUDA code
//! does. The article launched OpenCL with a global size of exactly N, and OpenCL 1.2 (what
//! NVIDIA's OpenCL offers) refuses a local size that does not divide the global size
//! (`CL_INVALID_WORK_GROUP_SIZE`): the article's local size of 512 "crashed" for that reason.
//! `1d-exact` is that launch: on OpenCL it is refused by that rule before anything runs
//! whenever N is not a multiple of the local size (the row says so), while CUDA runs it with
//! its grid rounded up and the bound check.
//!
//! # Metric
//!
//! GB/s of stores: 4 bytes per element, nothing read.

use super::reference::{self, Verification};
use super::{Size, Variant, WorkloadError};
use crate::backend::{Api, Arg, LaunchShape};

/// The value every element is filled with (not 0, so a fresh zeroed buffer cannot pass).
pub const VALUE: f32 = 1.5;

/// Whether the variant is a 2D kernel (sized ROWSxCOLS).
pub fn is_2d(variant: &Variant) -> bool {
    variant.name.starts_with("2d")
}

/// Refuses a size the variant cannot take (see the module docs).
pub fn check_size(variant: &Variant, size: Size) -> Result<(), String> {
    let n = size.elements();
    if n == 0 || n >= u64::from(u32::MAX) {
        return Err(format!(
            "{size} has {n} elements; the kernels index with 32-bit integers, from 1 to {}",
            u32::MAX - 1
        ));
    }
    match (is_2d(variant), size.cols) {
        (false, 0) => Ok(()),
        (false, _) => Err(format!("{size} is a table; the 1D fill takes one length N")),
        (true, 0) => Err(format!("{size} is one length; the 2D fill takes ROWSxCOLS")),
        (true, c) if variant.name == "2d-article" && c != size.rows => Err(format!(
            "{size} is not square: the article's kernel puts rows on dimension 0 while the \
             launch covers columns in x"
        )),
        _ => Ok(()),
    }
}

/// The count arguments after the buffer and the value: `n`, or `rows, cols`.
pub fn counts(variant: &Variant, size: Size) -> Vec<Arg> {
    if is_2d(variant) {
        vec![Arg::U32(size.rows as u32), Arg::U32(size.cols as u32)]
    } else {
        vec![Arg::U32(size.elements() as u32)]
    }
}

/// OpenCL 1.2's rule for the article's exact launch (see the module docs); CUDA has none.
pub fn check_launch(
    variant: &Variant,
    size: Size,
    shape: LaunchShape,
    api: Api,
) -> Result<(), WorkloadError> {
    let n = size.elements();
    let local = u64::from(shape.local.max(1));
    if variant.name != "1d-exact" || api != Api::OpenCl || n.is_multiple_of(local) {
        return Ok(());
    }
    Err(WorkloadError::BadLaunch {
        variant: format!("fill/{}", variant.name),
        reason: format!(
            "refused by rule: OpenCL 1.2 needs the global size ({n}) divisible by the local \
             size ({local}), and {n} % {local} = {}; CUDA rounds the grid up and the kernel's \
             bound check drops the extra threads",
            n % local
        ),
    })
}

/// Every element must hold [`VALUE`], exactly.
pub fn check(got: &[f32], n: usize) -> Verification {
    let wrong = got[..n.min(got.len())]
        .iter()
        .map(|g| if *g == VALUE { 0.0 } else { f64::INFINITY })
        .fold(0.0, f64::max);
    let mut v = reference::compare(&[0.0], &[wrong], &[0.0]);
    v.ok = v.ok && got.len() >= n && wrong == 0.0;
    v.checked = n;
    v
}

/// The fake backend's emulation: the value in the first `n` (or rows × cols) elements.
pub fn emulate(args: &[Arg], len: usize) -> Vec<f32> {
    let counts: Vec<u64> = args
        .iter()
        .filter_map(|a| match a {
            Arg::U32(c) => Some(u64::from(*c)),
            _ => None,
        })
        .collect();
    let value = args.iter().find_map(|a| match a {
        Arg::F32(v) => Some(*v),
        _ => None,
    });
    let n = counts.iter().product::<u64>() as usize;
    vec![value.unwrap_or(f32::NAN); n.min(len)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{find_variant, FamilyKind};

    #[test]
    fn sizes_follow_the_kernel_shape() {
        let one = find_variant(FamilyKind::Fill, "1d").unwrap();
        let art = find_variant(FamilyKind::Fill, "2d-article").unwrap();
        let rows = find_variant(FamilyKind::Fill, "2d-rows").unwrap();
        assert!(check_size(one, Size::vector(100)).is_ok());
        assert!(check_size(one, Size::matrix(10, 10)).is_err());
        assert!(check_size(art, Size::matrix(10, 10)).is_ok());
        assert!(check_size(art, Size::matrix(10, 12)).is_err());
        assert!(check_size(rows, Size::matrix(10, 12)).is_ok());
        assert!(check_size(rows, Size::vector(10)).is_err());
        assert!(check_size(one, Size::vector(0)).is_err());
        assert!(check_size(rows, Size::matrix(1 << 16, 1 << 16)).is_err());
    }

    #[test]
    fn the_exact_launch_is_refused_on_opencl_only_when_local_does_not_divide() {
        let v = find_variant(FamilyKind::Fill, "1d-exact").unwrap();
        let n = Size::vector(100_000_000);
        let shape = |local| LaunchShape::linear(1, local);
        let e = check_launch(v, n, shape(512), Api::OpenCl).unwrap_err();
        assert!(e.to_string().contains("% 512 = 256"), "{e}");
        assert!(check_launch(v, n, shape(512), Api::Cuda).is_ok());
        assert!(check_launch(v, n, shape(256), Api::OpenCl).is_ok());
        let plain = find_variant(FamilyKind::Fill, "1d").unwrap();
        assert!(check_launch(plain, n, shape(512), Api::OpenCl).is_ok());
    }

    #[test]
    fn check_wants_every_element() {
        assert!(check(&[VALUE; 5], 5).ok);
        let mut got = [VALUE; 5];
        got[4] = 0.0;
        assert!(!check(&got, 5).ok);
        assert!(!check(&[VALUE; 4], 5).ok);
    }
}
