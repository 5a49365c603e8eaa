//! BabelStream's five kernels (Deakin et al., "GPU-STREAM v2.0", 2016; github.com/UoB-HPC/
//! BabelStream) with its conventions, so that its users can place clvscu's numbers beside
//! theirs: arrays of `N` doubles (2^25 by default), its start values and scalar, and for `dot`
//! 4 work-groups per compute unit, the configuration BabelStream 5.0's CUDA version reports.
//! The kernels are `kernels_*/stream.*`.
//!
//! Each variant runs alone, on the arrays as they stand before that kernel in BabelStream's
//! first iteration ([`before`]), set on the device before timing as `init_arrays` sets them;
//! each kernel writes an array it does not read, so every timed run computes the same values.
//! Verified as `check_solution` does: every element within 100 machine epsilons (relative) of
//! the iterations replayed on scalars, the dot product within 1e-8 (relative). Metric: GB/s
//! (1e9 bytes/s) of the arrays as BabelStream counts them (see `work`).

use crate::backend::fake::FakeLaunch;
use crate::backend::{self, Arg, LaunchShape};
use crate::families::emulation::{floats, words};
use crate::families::error::WorkloadError;
use crate::families::family::{check_cover, vectors, Family, FamilySpec, InputChoice, QuickSize};
use crate::families::footprint::{add, mul, Footprint};
use crate::families::plan::{Build, Built, ExecError, Inputs, Ran, SideConfig};
use crate::families::reference::Verification;
use crate::families::variant::{bare, pow2, GroupRule, Variant};
use crate::rows::{FamilyId, Metric, Size};

const ID: FamilyId = FamilyId::new("stream");

/// BabelStream's start values of a, b and c, and its scalar (the kernels' `STREAM_SCALAR`).
pub const START: Arrays = Arrays {
    a: 0.1,
    b: 0.2,
    c: 0.0,
};
pub const SCALAR: f64 = 0.4;

/// BabelStream's work-group size (its CUDA `TBSIZE`), given to every variant by default.
const LOCAL: u32 = 1024;

/// Dot's tolerance, relative: BabelStream's for doubles.
const DOT_TOLERANCE: f64 = 1e-8;

/// In BabelStream's order within one iteration.
const VARIANTS: [Variant; 5] = [
    stream_variant("copy", "stream_copy", "c = a"),
    stream_variant("mul", "stream_mul", "b = scalar * c"),
    stream_variant("add", "stream_add", "c = a + b"),
    stream_variant("triad", "stream_triad", "a = b + scalar * c"),
    pow2(
        bare(
            ID,
            "dot",
            "stream_dot",
            GroupRule::PerComputeUnit(4),
            "sum of a * b: a grid-stride loop on 4 work-groups per compute unit, a tree \
                 per work-group, one work-group's final sum",
        ),
        1,
        1024,
    ),
];

const fn stream_variant(name: &'static str, kernel: &'static str, about: &'static str) -> Variant {
    bare(ID, name, kernel, GroupRule::Cover { per_item: 1 }, about)
}

/// The one value each array holds (BabelStream's arrays stay uniform).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Arrays {
    pub a: f64,
    pub b: f64,
    pub c: f64,
}

/// Applies the array kernel `name` to `x` (Dot writes no array).
fn apply(name: &str, x: &mut Arrays) {
    match name {
        "copy" => x.c = x.a,
        "mul" => x.b = SCALAR * x.c,
        "add" => x.c = x.a + x.b,
        "triad" => x.a = x.b + SCALAR * x.c,
        _ => {}
    }
}

/// The arrays before kernel `name` in BabelStream's first iteration (earlier kernels replayed).
pub fn before(name: &str) -> Arrays {
    let mut x = START;
    for k in VARIANTS.iter().map(|v| v.name).take_while(|k| *k != name) {
        apply(k, &mut x);
    }
    x
}

/// What kernel `name` leaves in its result at `n` elements from the arrays `x`: the value of
/// the array it writes, or Dot's sum.
pub fn expected(name: &str, x: Arrays, n: u64) -> f64 {
    let mut after = x;
    apply(name, &mut after);
    match name {
        "copy" | "add" => after.c,
        "mul" => after.b,
        "triad" => after.a,
        _ => x.a * x.b * n as f64,
    }
}

/// Doubles as the u32 words of a buffer, low word first as little-endian devices hold them.
pub fn double_words(x: &[f64]) -> Vec<u32> {
    x.iter()
        .flat_map(|d| {
            let bits = d.to_bits();
            [bits as u32, (bits >> 32) as u32]
        })
        .collect()
}

/// The doubles of `double_words`.
pub fn doubles(words: &[u32]) -> Vec<f64> {
    words
        .chunks_exact(2)
        .map(|w| f64::from_bits(u64::from(w[0]) | (u64::from(w[1]) << 32)))
        .collect()
}

/// The doubles of buffer argument `i` of a fake launch.
fn read_doubles(l: &FakeLaunch<'_>, i: usize) -> backend::Result<Vec<f64>> {
    Ok(doubles(&words(l.read(i)?)))
}

fn write_doubles(l: &mut FakeLaunch<'_>, i: usize, x: &[f64]) -> backend::Result<()> {
    l.write(i, floats(double_words(x)))
}

/// `stream_init(a, b, c, start, n)`.
fn emulate_init(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let (start, n) = (read_doubles(l, 3)?, l.count(4)?);
    for (array, value) in start.iter().enumerate().take(3) {
        write_doubles(l, array, &vec![*value; n])?;
    }
    Ok(())
}

/// The array kernels, element by element: `(inputs, output, kernel)` by argument position.
fn emulate_array(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let name = l.kernel.trim_start_matches("stream_").to_string();
    // Argument positions of a, b and c in each kernel (its written array among them).
    let (a, b, c, out) = match name.as_str() {
        "copy" => (Some(0), None, Some(1), 1),
        "mul" => (None, Some(0), Some(1), 0),
        "add" => (Some(0), Some(1), Some(2), 2),
        _ => (Some(0), Some(1), Some(2), 0),
    };
    let n = l.count(l.args.len() - 1)?;
    let get = |l: &FakeLaunch<'_>, at: Option<usize>| match at {
        Some(i) => read_doubles(l, i),
        None => Ok(vec![0.0; n]),
    };
    let (xa, xb, xc) = (get(l, a)?, get(l, b)?, get(l, c)?);
    let result: Vec<f64> = (0..n)
        .map(|i| {
            let x = Arrays {
                a: xa[i],
                b: xb[i],
                c: xc[i],
            };
            expected(&name, x, 1)
        })
        .collect();
    write_doubles(l, out, &result)
}

/// `stream_dot(a, b, sums, n)`: one partial sum per work-group, grid-stride.
fn emulate_dot(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let (a, b, n) = (read_doubles(l, 0)?, read_doubles(l, 1)?, l.count(3)?);
    let shape = l.shape;
    let (items, local) = (shape.global() as usize, shape.local as usize);
    let mut sums = vec![0.0; shape.groups as usize];
    for i in 0..n {
        sums[(i % items) / local] += a[i] * b[i];
    }
    write_doubles(l, 2, &sums)
}

/// `stream_dot_final(sums, out, groups)`.
fn emulate_dot_final(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let (sums, groups) = (read_doubles(l, 0)?, l.count(2)?);
    write_doubles(l, 1, &[sums[..groups].iter().sum()])
}

pub struct Stream;

impl Family for Stream {
    fn spec(&self) -> &FamilySpec {
        const SPEC: FamilySpec = FamilySpec {
            default_size: "2^25",
            default_local: Some(LOCAL),
            quick_size: Some(QuickSize::same("2^22")),
            variants: &VARIANTS,
            test_sizes: &vectors([1, 1000, 4097, 100_003]),
            emulations: &[
                ("stream_init", emulate_init),
                ("stream_dot", emulate_dot),
                ("stream_dot_final", emulate_dot_final),
                ("stream_*", emulate_array),
            ],
            // Each variant starts from its own point of BabelStream's iteration.
            inputs_per_variant: true,
            ..FamilySpec::new(ID, "stream", Metric::Bandwidth)
        };
        &SPEC
    }

    /// BabelStream's counts: 2 arrays of doubles for Copy, Mul and Dot, 3 for Add and Triad;
    /// one flop per element for Mul and Add, two for Triad and Dot.
    fn work(&self, variant: &str, size: Size, _global: u64) -> (u64, u64) {
        let n = size.rows;
        let (arrays, flops) = match variant {
            "copy" => (2, 0),
            "mul" => (2, 1),
            "add" => (3, 1),
            "triad" => (3, 2),
            _ => (2, 2),
        };
        (mul(mul(n, 8), arrays), mul(n, flops))
    }

    /// Three device arrays of doubles and a result of one read back.
    fn footprint(&self, size: Size) -> Footprint {
        let bytes = mul(size.rows, 8);
        Footprint {
            host: bytes,
            device: add(mul(bytes, 3), 1 << 20),
            largest: bytes,
        }
    }

    /// The array kernels take one element per work-item.
    fn check_launch(
        &self,
        variant: &Variant,
        size: Size,
        side: &SideConfig,
    ) -> Result<(), WorkloadError> {
        if variant.name == "dot" {
            return Ok(());
        }
        check_cover(variant, side.shape, 1, size.rows, |covered| {
            format!("cover {covered} elements, fewer than {}", size.rows)
        })
    }

    fn inputs(&self, variant: &'static Variant, size: Size, _: u64, _: InputChoice<'_>) -> Inputs {
        let x = before(variant.name);
        let want = expected(variant.name, x, size.rows);
        let tolerance = if variant.name == "dot" {
            DOT_TOLERANCE
        } else {
            100.0 * f64::EPSILON
        };
        Inputs::new(size, Vec::new(), Vec::new())
            .with_ints(vec![double_words(&[x.a, x.b, x.c])])
            .with_reference(vec![want], vec![tolerance])
    }

    fn build(&self, cx: &mut Build<'_>) -> Result<Built, ExecError> {
        let kernel = cx.kernel()?;
        let program = cx.program()?;
        let n = cx.inputs.size.rows;
        let shape = cx.side.shape;
        let start = cx.upload_u32(&cx.inputs.ints[0])?;
        let len = 2 * n as usize;
        let (a, b, c) = (cx.output(len)?, cx.output(len)?, cx.output(len)?);
        let count = Arg::U32(n as u32);
        let init = cx.backend.kernel(program, "stream_init")?;
        let cover = LaunchShape::linear(n.div_ceil(u64::from(shape.local)) as u32, shape.local);
        let init_args = [a, b, c, start].map(Arg::Buffer);
        cx.backend
            .launch(init, cover, &[init_args.as_slice(), &[count]].concat())?;
        let buffers = |x: &[_]| x.iter().copied().map(Arg::Buffer).collect::<Vec<_>>();
        let (args, result) = match cx.variant.name {
            "copy" => (buffers(&[a, c]), c),
            "mul" => (buffers(&[b, c]), b),
            "add" => (buffers(&[a, b, c]), c),
            "triad" => (buffers(&[a, b, c]), a),
            _ => {
                // Dot: partial sums on the configured work-groups, then one work-group's sum.
                let last = cx.backend.kernel(program, "stream_dot_final")?;
                let sums = cx.output(2 * shape.groups as usize)?;
                let out = cx.output(2)?;
                let partial = cx.launch(kernel, [buffers(&[a, b, sums]), vec![count]].concat());
                let total = crate::families::plan::Step::Kernel {
                    kernel: last,
                    shape: LaunchShape::linear(1, shape.local),
                    args: vec![Arg::Buffer(sums), Arg::Buffer(out), Arg::U32(shape.groups)],
                };
                let mut built = Built::into(vec![partial, total], out, 2);
                built.outputs.push((sums, 2 * shape.groups as usize));
                return Ok(built);
            }
        };
        let step = cx.launch(kernel, [args, vec![count]].concat());
        Ok(Built::into(vec![step], result, len))
    }

    fn check(&self, ran: &Ran, inputs: &Inputs, got: &[f32]) -> Verification {
        let (want, tolerance) = (inputs.reference[0], inputs.tolerances[0]);
        let got = doubles(&words(got));
        // Dot's result is one double; an array kernel's is the whole array.
        let expected_len = if ran.variant == "dot" {
            1
        } else {
            inputs.size.rows as usize
        };
        // Relative, or absolute where `want` is 0; NaN counts as infinite.
        let max_error = got
            .iter()
            .map(|g| (g - want).abs() / if want == 0.0 { 1.0 } else { want.abs() })
            .map(|e| if e.is_nan() { f64::INFINITY } else { e })
            .fold(0.0, f64::max);
        Verification {
            ok: got.len() >= expected_len && max_error <= tolerance,
            max_error,
            tolerance,
            checked: got.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::tests::no_matrix;

    /// BabelStream's first iteration, replayed: the values its check_solution starts from.
    #[test]
    fn the_replay_follows_babelstreams_order() {
        assert_eq!(before("copy"), START);
        assert_eq!(before("mul").c, 0.1);
        assert_eq!(before("add").b, SCALAR * 0.1);
        assert_eq!(before("triad").c, 0.1 + SCALAR * 0.1);
        let dot = before("dot");
        assert_eq!(dot.a, SCALAR * 0.1 + SCALAR * (0.1 + SCALAR * 0.1));
        assert_eq!(expected("dot", dot, 10), dot.a * dot.b * 10.0);
    }

    #[test]
    fn bytes_are_counted_as_babelstream_counts_them() {
        let n = Size::vector(1 << 25);
        assert_eq!(Stream.work("copy", n, 0).0, (2 * 8) << 25);
        assert_eq!(Stream.work("triad", n, 0).0, (3 * 8) << 25);
        assert_eq!(Stream.work("dot", n, 0).0, (2 * 8) << 25);
    }

    #[test]
    fn doubles_travel_as_words_and_a_wrong_or_short_result_fails() {
        let x = [0.1, -3.5e300, 0.0];
        assert_eq!(doubles(&double_words(&x)), x);
        let inputs = Stream.inputs(&VARIANTS[0], Size::vector(3), 0, no_matrix());
        let ran = Ran {
            variant: "copy",
            shape: LaunchShape::linear(1, 4),
            flags: vec![],
        };
        let good = floats(double_words(&[0.1; 3]));
        assert!(Stream.check(&ran, &inputs, &good).ok);
        let bad = floats(double_words(&[0.1, 0.1, 0.1 + 1e-12]));
        assert!(!Stream.check(&ran, &inputs, &bad).ok);
        assert!(!Stream.check(&ran, &inputs, &good[..4]).ok);
        assert!(!Stream.check(&ran, &inputs, &[f32::NAN; 6]).ok);
    }
}
