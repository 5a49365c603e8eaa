/* DXT1 texture compression (DXTC) of an RGBA8 image, one 4 x 4 block per work-item, after
 * the idea of the CUDA SDK sample dxtc with a simpler endpoint fit. kernels_cu/dxtc.cu is
 * the CUDA twin: same names, parameters and algorithm text.
 *
 * A pixel is one uint, red in its low byte, then green and blue (alpha is ignored). Per
 * block: the endpoints are the per-channel maximum (colour 0) and minimum (colour 1) of its
 * pixels, the bounding box's corners, each rounded down to RGB 5:6:5; the palette is the two
 * endpoints expanded back to 8 bits and the two colours a third and two thirds of the way
 * from colour 0 to colour 1 (integer division); each pixel takes the 2-bit index of its
 * nearest palette colour (squared distance, the lowest index on a tie). The block is two
 * uints: colour 0 | colour 1 << 16, then the indices, pixel t of the block (row-major) at
 * bits 2t. Integers throughout, so the host reference matches bit for bit. */

#define DXT_BITS(c) (((c) == 1u) ? 6u : 5u)

__kernel void dxt1_compress(const __global uint* pixels, __global uint* blocks, uint width, uint height)
{
    uint b = get_global_id(0);
    uint blocks_x = width / 4u;
    if (b >= blocks_x * (height / 4u))
        return;
    uint x0 = (b % blocks_x) * 4u;
    uint y0 = (b / blocks_x) * 4u;
    uint texel[16];
    uint lo[3];
    uint hi[3];
    for (uint c = 0u; c < 3u; ++c) {
        lo[c] = 255u;
        hi[c] = 0u;
    }
    for (uint t = 0u; t < 16u; ++t) {
        uint p = pixels[(y0 + t / 4u) * width + x0 + t % 4u];
        texel[t] = p;
        for (uint c = 0u; c < 3u; ++c) {
            uint v = (p >> (8u * c)) & 255u;
            lo[c] = (v < lo[c]) ? v : lo[c];
            hi[c] = (v > hi[c]) ? v : hi[c];
        }
    }
    /* Endpoints in 5:6:5 (red in the high bits) and expanded back to 8 bits per channel. */
    uint color0 = 0u;
    uint color1 = 0u;
    uint palette[4][3];
    for (uint c = 0u; c < 3u; ++c) {
        uint bits = DXT_BITS(c);
        uint q0 = hi[c] >> (8u - bits);
        uint q1 = lo[c] >> (8u - bits);
        uint place = (c == 0u) ? 11u : ((c == 1u) ? 5u : 0u);
        color0 |= q0 << place;
        color1 |= q1 << place;
        uint e0 = (q0 << (8u - bits)) | (q0 >> (2u * bits - 8u));
        uint e1 = (q1 << (8u - bits)) | (q1 >> (2u * bits - 8u));
        palette[0][c] = e0;
        palette[1][c] = e1;
        palette[2][c] = (2u * e0 + e1) / 3u;
        palette[3][c] = (e0 + 2u * e1) / 3u;
    }
    uint indices = 0u;
    for (uint t = 0u; t < 16u; ++t) {
        uint best = 0u;
        int best_distance = 0x7fffffff;
        for (uint k = 0u; k < 4u; ++k) {
            int distance = 0;
            for (uint c = 0u; c < 3u; ++c) {
                int d = (int)((texel[t] >> (8u * c)) & 255u) - (int)palette[k][c];
                distance += d * d;
            }
            if (distance < best_distance) {
                best_distance = distance;
                best = k;
            }
        }
        indices |= best << (2u * t);
    }
    blocks[2u * b] = color0 | (color1 << 16);
    blocks[2u * b + 1u] = indices;
}
