//! The generated SpMV matrices and MD systems are the same numbers whatever the thread count:
//! their hashes below were taken from the sequential code that the parallel code replaced, so
//! a committed result's inputs are the inputs a new run builds.

use clvscu::families::matrix::{self, MatrixSource};
use clvscu::families::spmv;
use clvscu::families::{md, Size};
use sha2::{Digest, Sha256};

fn words(h: &mut Sha256, w: impl IntoIterator<Item = u64>) {
    for v in w {
        h.update(v.to_le_bytes());
    }
}

fn matrix_hash(m: &MatrixSource) -> String {
    let a = m.build(Size::parse("2^13x2^17").unwrap(), 7);
    let (y, sum) = spmv::reference(&a, &matrix::x_vector(a.cols, 7));
    let mut h = Sha256::new();
    words(
        &mut h,
        a.row_ptr.iter().chain(&a.col).map(|&v| u64::from(v)),
    );
    words(&mut h, a.val.iter().map(|v| u64::from(v.to_bits())));
    words(&mut h, y.iter().chain(&sum).map(|v| v.to_bits()));
    format!("{:x}", h.finalize())
}

fn md_hash() -> String {
    let p = md::inputs(Size::parse("24^3").unwrap(), 7);
    let mut h = Sha256::new();
    words(&mut h, p.positions.iter().map(|v| u64::from(v.to_bits())));
    words(&mut h, p.list.iter().map(|&v| u64::from(v)));
    words(
        &mut h,
        p.reference.iter().chain(&p.tolerances).map(|v| v.to_bits()),
    );
    format!("{:x}", h.finalize())
}

#[test]
fn generated_matrices_and_their_references_are_the_sequential_codes_bit_for_bit() {
    for (m, want) in [
        (
            MatrixSource::Uniform,
            "42dd54fde1ecff0743f17709c54ee5b01325497bd38235c76707b993ab6e7711",
        ),
        (
            MatrixSource::Banded,
            "5efcde6a26c16a4882f040d4c831e25c4fcebaae95e1146d6969385c2ebc0acf",
        ),
        (
            MatrixSource::PowerLaw,
            "b03df0878878a35c419d48c13c37e1ab27cbe0cab19e7c5040e9e35609c7a237",
        ),
    ] {
        assert_eq!(matrix_hash(&m), want, "{}", m.name());
    }
}

#[test]
fn the_md_system_and_its_forces_are_the_sequential_codes_bit_for_bit() {
    assert_eq!(
        md_hash(),
        "400319c90408cfac86f9d8c70297309ab518e9de93e9ca98104680b07c09876c"
    );
}
