//! DXT1 texture compression (DXTC in Fang, Varbanescu & Sips 2011, Table II, from NVIDIA's SDK
//! sample dxtc): a `ROWSxCOLS` RGBA8 image, both sides multiples of 4, compressed to one 8-byte
//! DXT1 block per 4 x 4 pixels (`kernels_*/dxtc.*`).
//!
//! One variant, `bbox`, one block per work-item: the endpoints are the corners of the block's
//! colour bounding box rounded to 5:6:5, and every pixel takes the 2-bit index of the nearest
//! of the four palette colours (the SDK sample fits the endpoints along the principal axis
//! instead, a refinement of the same scheme). All integer arithmetic, so [`compress_block`]
//! on the host gives the blocks bit for bit, and the result is checked word by word. Metric:
//! GB/s of the image read (4 bytes per pixel) and the blocks written (8 bytes per 16 pixels).

use crate::backend::fake::FakeLaunch;
use crate::backend::{self, Arg};
use crate::families::emulation::{floats, words};
use crate::families::error::WorkloadError;
use crate::families::family::{
    bad_size, check_cover, matrices, matrix_size, Family, FamilySpec, InputChoice, QuickSize,
};
use crate::families::footprint::{add, mul, plain, Footprint};
use crate::families::plan::{Build, Built, ExecError, Inputs, SideConfig};
use crate::families::reference;
use crate::families::variant::{bare, GroupRule, Variant};
use crate::rows::{FamilyId, Metric, Size};

const ID: FamilyId = FamilyId::new("dxtc");

const VARIANTS: [Variant; 1] = [bare(
    ID,
    "bbox",
    "dxt1_compress",
    GroupRule::Grid,
    "one 4x4 block per work-item: bounding-box endpoints in 5:6:5, nearest of four \
         palette colours per pixel",
)];

/// Bits of each channel (red, green, blue) in 5:6:5.
const CHANNEL_BITS: [u32; 3] = [5, 6, 5];

/// Blocks of a `size` image (4 x 4 pixels each).
fn block_count(size: Size) -> u64 {
    (size.rows / 4).saturating_mul(size.cols / 4)
}

/// The DXT1 block of the 4 x 4 pixels at block (`bx`, `by`) of a `width`-pixel-wide image:
/// the kernel's arithmetic, step for step.
pub fn compress_block(pixels: &[u32], width: usize, bx: usize, by: usize) -> [u32; 2] {
    let texel: Vec<u32> = (0..16)
        .map(|t| pixels[(4 * by + t / 4) * width + 4 * bx + t % 4])
        .collect();
    let channel = |p: u32, c: usize| (p >> (8 * c)) & 255;
    let (mut color0, mut color1) = (0u32, 0u32);
    let mut palette = [[0u32; 3]; 4];
    for c in 0..3 {
        let hi = texel.iter().map(|p| channel(*p, c)).max().unwrap_or(0);
        let lo = texel.iter().map(|p| channel(*p, c)).min().unwrap_or(0);
        let bits = CHANNEL_BITS[c];
        let (q0, q1) = (hi >> (8 - bits), lo >> (8 - bits));
        let place = [11, 5, 0][c];
        color0 |= q0 << place;
        color1 |= q1 << place;
        let e0 = (q0 << (8 - bits)) | (q0 >> (2 * bits - 8));
        let e1 = (q1 << (8 - bits)) | (q1 >> (2 * bits - 8));
        palette[0][c] = e0;
        palette[1][c] = e1;
        palette[2][c] = (2 * e0 + e1) / 3;
        palette[3][c] = (e0 + 2 * e1) / 3;
    }
    let mut indices = 0u32;
    for (t, p) in texel.iter().enumerate() {
        let distance = |k: usize| -> i32 {
            (0..3)
                .map(|c| {
                    let d = channel(*p, c) as i32 - palette[k][c] as i32;
                    d * d
                })
                .sum()
        };
        // The first of the nearest: `min_by_key` keeps the first of equal keys.
        let best = (0..4).min_by_key(|k| distance(*k)).unwrap_or(0) as u32;
        indices |= best << (2 * t);
    }
    [color0 | (color1 << 16), indices]
}

/// Every block of a `rows` x `cols` image, row of blocks after row of blocks.
pub fn compress(pixels: &[u32], rows: usize, cols: usize) -> Vec<u32> {
    let (bx, by) = (cols / 4, rows / 4);
    (0..bx * by)
        .flat_map(|b| compress_block(pixels, cols, b % bx, b / bx))
        .collect()
}

/// A test image: smooth colour ramps with noise of up to 31 levels per channel, so blocks
/// span a small colour range as a photograph's do, and no two blocks are alike.
pub fn test_image(rows: usize, cols: usize, seed: u64) -> Vec<u32> {
    reference::hashed(rows * cols, seed, 0x6478_7463, |at, noise| {
        let (y, x) = (at / cols.max(1), at % cols.max(1));
        let n = |c: u32| ((noise >> (8 * c)) & 31) as usize;
        let r = (x + n(0)) & 255;
        let g = (y + n(1)) & 255;
        let b = (x + y) / 2 + n(2);
        (r | (g << 8) | ((b & 255) << 16)) as u32 | 0xff00_0000
    })
}

/// `dxt1_compress(pixels, blocks, width, height)`: the reference itself.
fn emulate_compress(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let pixels = words(l.read(0)?);
    let (cols, rows) = (l.count(2)?, l.count(3)?);
    l.write(1, floats(compress(&pixels, rows, cols)))
}

pub struct Dxtc;

impl Family for Dxtc {
    fn spec(&self) -> &FamilySpec {
        const SPEC: FamilySpec = FamilySpec {
            default_size: "8192x8192",
            quick_size: Some(QuickSize::same("1024x1024")),
            variants: &VARIANTS,
            // One block, a row and a column of blocks, and images whose block count no work-group
            // size divides.
            test_sizes: &matrices([(4, 4), (4, 64), (36, 4), (100, 260), (256, 132)]),
            emulations: &[("dxt1_compress", emulate_compress)],
            ..FamilySpec::new(ID, "dxtc", Metric::Bandwidth)
        };
        &SPEC
    }

    fn work(&self, _variant: &str, size: Size, _global: u64) -> (u64, u64) {
        (add(mul(size.elements(), 4), mul(block_count(size), 8)), 0)
    }

    fn footprint(&self, size: Size) -> Footprint {
        let blocks = mul(block_count(size), 2);
        plain(size.elements(), blocks, blocks, 0)
    }

    /// A matrix of pixels whose sides are multiples of 4, within 32-bit indices.
    fn check_size(&self, variant: &Variant, size: Size) -> Result<(), WorkloadError> {
        // A length is refused as one first, in `matrix_size`.
        if size.cols != 0 && (!size.rows.is_multiple_of(4) || !size.cols.is_multiple_of(4)) {
            return Err(bad_size(
                variant,
                format!("{size}: DXT1 compresses 4x4 blocks, so both sides must be multiples of 4"),
            ));
        }
        matrix_size(variant, size, "this family takes an image")
    }

    /// One work-item per block.
    fn groups(&self, _variant: &Variant, size: Size, local: u32) -> u64 {
        block_count(size).div_ceil(u64::from(local.max(1)))
    }

    fn check_launch(
        &self,
        variant: &Variant,
        size: Size,
        side: &SideConfig,
    ) -> Result<(), WorkloadError> {
        let blocks = block_count(size);
        check_cover(variant, side.shape, 1, blocks, |covered| {
            format!("compress {covered} blocks, fewer than the image's {blocks}")
        })
    }

    fn inputs(&self, _: &'static Variant, size: Size, seed: u64, _: InputChoice<'_>) -> Inputs {
        let (rows, cols) = (size.rows as usize, size.cols as usize);
        let image = test_image(rows, cols, seed);
        let want = compress(&image, rows, cols);
        Inputs::new(size, Vec::new(), Vec::new())
            .with_ints(vec![image])
            .with_words(want)
    }

    fn build(&self, cx: &mut Build<'_>) -> Result<Built, ExecError> {
        let kernel = cx.kernel()?;
        let size = cx.inputs.size;
        let pixels = cx.upload_u32(&cx.inputs.ints[0])?;
        let len = 2 * block_count(size) as usize;
        let blocks = cx.output(len)?;
        let args = vec![
            Arg::Buffer(pixels),
            Arg::Buffer(blocks),
            Arg::U32(size.cols as u32),
            Arg::U32(size.rows as u32),
        ];
        Ok(Built::into(vec![cx.launch(kernel, args)], blocks, len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes pixel `t` of a block the way a GPU's texture unit would (4-colour mode).
    fn decode(block: [u32; 2], t: usize) -> [u32; 3] {
        let expand = |color: u32, c: usize| {
            let bits = CHANNEL_BITS[c];
            let q = (color >> [11, 5, 0][c]) & ((1 << bits) - 1);
            (q << (8 - bits)) | (q >> (2 * bits - 8))
        };
        let (c0, c1) = (block[0] & 0xffff, block[0] >> 16);
        let k = (block[1] >> (2 * t)) & 3;
        let mut out = [0; 3];
        for (c, o) in out.iter_mut().enumerate() {
            let (e0, e1) = (expand(c0, c), expand(c1, c));
            *o = [e0, e1, (2 * e0 + e1) / 3, (e0 + 2 * e1) / 3][k as usize];
        }
        out
    }

    #[test]
    fn a_solid_block_is_its_colour_with_index_zero() {
        let pixels = vec![0xff10_2040u32; 16];
        let block = compress_block(&pixels, 4, 0, 0);
        assert_eq!(block[0] & 0xffff, block[0] >> 16);
        assert_eq!(block[1], 0);
        assert_eq!(decode(block, 5), [0x42, 0x20, 0x10]);
    }

    #[test]
    fn two_colours_take_the_two_endpoints() {
        // Colours exact in 5:6:5: black, white, and white at odd pixels.
        let pixels: Vec<u32> = (0..16)
            .map(|t| if t % 2 == 1 { 0xffff_ffff } else { 0xff00_0000 })
            .collect();
        let block = compress_block(&pixels, 4, 0, 0);
        assert_eq!(block[0], 0xffff);
        assert_eq!(
            block[1], 0x1111_1111,
            "even pixels (black) take index 1, odd ones 0"
        );
    }

    /// The compression loses little on the test image: a block's channels span at most the
    /// ramp's 3 levels and the noise's 31, and the endpoints are rounded down by up to 7, so
    /// no decoded channel is further than 41 from its pixel; the mean stays far below.
    #[test]
    fn the_test_image_decodes_close_to_itself() {
        let (rows, cols) = (64, 96);
        let image = test_image(rows, cols, 7);
        let blocks = compress(&image, rows, cols);
        let (mut worst, mut total) = (0, 0);
        for b in 0..blocks.len() / 2 {
            let (bx, by) = (b % (cols / 4), b / (cols / 4));
            for t in 0..16 {
                let p = image[(4 * by + t / 4) * cols + 4 * bx + t % 4];
                let got = decode([blocks[2 * b], blocks[2 * b + 1]], t);
                for (c, g) in got.iter().enumerate() {
                    let error = ((p >> (8 * c)) & 255).abs_diff(*g);
                    worst = worst.max(error);
                    total += error;
                }
            }
        }
        let mean = f64::from(total) / (rows * cols * 3) as f64;
        assert!(
            worst <= 41 && mean < 8.0,
            "worst channel error {worst}, mean {mean}"
        );
    }

    #[test]
    fn sizes_must_be_images_of_whole_blocks() {
        let v = &VARIANTS[0];
        assert!(Dxtc.check_size(v, Size::matrix(8, 12)).is_ok());
        assert!(Dxtc.check_size(v, Size::matrix(8, 10)).is_err());
        assert!(Dxtc.check_size(v, Size::vector(64)).is_err());
    }
}
