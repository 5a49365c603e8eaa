/* A 512-point forward FFT per work-group, in the style of SHOC's FFT (the kernel behind the
 * paper's Table V): 64 work-items, each doing 8-point DFTs in registers, twiddles, and local
 * memory exchanges between the three radix-8 passes (512 = 8 x 8 x 8).
 * kernels_cu/fft.cu is the CUDA twin: same names, parameters and algorithm text.
 *
 * Data are interleaved complex floats (re, im), one batch of 512 points after another;
 * X[k] = sum_n x[n] exp(-2 pi j n k / 512), unscaled. The launch needs WG_SIZE == 64 and one
 * work-group per batch (the harness refuses other shapes); groups past the last batch return.
 *
 * Derivation (four-step, twice): with n = n1 + 64 n2 and k = 8 k1 + k2,
 *   X[8 k1 + k2] = sum_n1 W64^(n1 k1) W512^(n1 k2) sum_n2 x[n1 + 64 n2] W8^(n2 k2),
 * so pass 1 (work-item t = n1) is an 8-point DFT over n2 and a twiddle W512^(t k2); the
 * 64-point DFT over n1 is split the same way (n1 = a + 8 b, k1 = 8 c + d): pass 2 (work-item
 * k2 = t % 8, a = t / 8) is an 8-point DFT over b and a twiddle W64^(a d); pass 3 (work-item
 * k2 = t % 8, d = t / 8) is an 8-point DFT over a, giving X[64 c + 8 d + k2] = X[64 c + t],
 * so the stores are as coalesced as the loads.
 *
 * Twiddles are precomputed: tw[m] = exp(-2 pi j m / 512) for m < 512, computed by the host
 * in f64 and rounded to float, the same table for both APIs. Computing them in the kernel with
 * the accurate cos/sin would inline the library's range reduction (slow paths included) 28
 * times, and its branches and shifts would swamp the FFT's own instructions in Table V; the
 * intrinsics (native_cos, __cosf) differ between the APIs. The 14 table reads per work-item
 * hit the cache (4 KB, shared by every work-group). */

#define FFT_SQRT1_2 0.70710678118654752f

/* (xr, xi) *= w, a complex float2. */
#define FFT_TWIDDLE(xr, xi, w)                  \
    {                                           \
        float2 c = w;                           \
        float tr = xr * c.x - xi * c.y;         \
        xi = xr * c.y + xi * c.x;               \
        xr = tr;                                \
    }

/* Radix-2 butterfly of elements a and b of the register arrays xr, xi. */
#define FFT_BFLY(a, b)                                          \
    {                                                           \
        float tr = xr[a] - xr[b], ti = xi[a] - xi[b];           \
        xr[a] += xr[b];                                         \
        xi[a] += xi[b];                                         \
        xr[b] = tr;                                             \
        xi[b] = ti;                                             \
    }
/* Element k times W8^2 = -j, W8^1 = (1 - j) / sqrt 2 and W8^3 = -(1 + j) / sqrt 2. */
#define FFT_MUL_W8_2(k) { float tr = xi[k]; xi[k] = -xr[k]; xr[k] = tr; }
#define FFT_MUL_W8_1(k) { float tr = FFT_SQRT1_2 * (xr[k] + xi[k]); xi[k] = FFT_SQRT1_2 * (xi[k] - xr[k]); xr[k] = tr; }
#define FFT_MUL_W8_3(k) { float tr = FFT_SQRT1_2 * (xi[k] - xr[k]); xi[k] = -FFT_SQRT1_2 * (xr[k] + xi[k]); xr[k] = tr; }
#define FFT_SWAP(a, b) { float tr = xr[a], ti = xi[a]; xr[a] = xr[b]; xi[a] = xi[b]; xr[b] = tr; xi[b] = ti; }

/* In-register 8-point DFT of xr, xi, decimation in frequency; the two swaps undo the
 * bit-reversed order, so element k holds X[k]. */
#define FFT8()                                                                  \
    FFT_BFLY(0, 4) FFT_BFLY(1, 5) FFT_BFLY(2, 6) FFT_BFLY(3, 7)                 \
    FFT_MUL_W8_1(5) FFT_MUL_W8_2(6) FFT_MUL_W8_3(7)                             \
    FFT_BFLY(0, 2) FFT_BFLY(1, 3) FFT_BFLY(4, 6) FFT_BFLY(5, 7)                 \
    FFT_MUL_W8_2(3) FFT_MUL_W8_2(7)                                             \
    FFT_BFLY(0, 1) FFT_BFLY(2, 3) FFT_BFLY(4, 5) FFT_BFLY(6, 7)                 \
    FFT_SWAP(1, 4) FFT_SWAP(3, 6)

/* The forward 512-point FFT of batch get_group_id(0); n is the total number of points. The
 * pointers advance by work-item functions directly, so CLVSCU_INDEX sets the width of the
 * address arithmetic as in the other kernels. */
__kernel void fft512_forward(const __global float2* in, __global float2* out,
                             const __global float2* tw, uint n)
{
    __local float sr[512];
    __local float si[512];
    float xr[8], xi[8];
    if (get_group_id(0) * 512 >= n)
        return;
    in += get_group_id(0) * 512 + get_local_id(0);
    out += get_group_id(0) * 512 + get_local_id(0);
    uint t = get_local_id(0);
    uint k2 = t % 8;
    uint hi = t / 8;

    /* Pass 1: DFT over n2 (stride 64 in global memory), twiddle W512^(t k2) = tw[t k2]. */
    for (uint j = 0; j < 8; ++j) {
        float2 v = in[64 * j];
        xr[j] = v.x;
        xi[j] = v.y;
    }
    FFT8()
    for (uint j = 1; j < 8; ++j)
        FFT_TWIDDLE(xr[j], xi[j], tw[t * j])
    for (uint j = 0; j < 8; ++j) {
        sr[j * 64 + t] = xr[j];
        si[j * 64 + t] = xi[j];
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    /* Pass 2: DFT over b of row k2 (a = hi), twiddle W64^(a d) = tw[8 a d]. */
    for (uint j = 0; j < 8; ++j) {
        xr[j] = sr[k2 * 64 + hi + 8 * j];
        xi[j] = si[k2 * 64 + hi + 8 * j];
    }
    FFT8()
    for (uint j = 1; j < 8; ++j)
        FFT_TWIDDLE(xr[j], xi[j], tw[8 * hi * j])
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint j = 0; j < 8; ++j) {
        sr[k2 * 64 + 8 * j + hi] = xr[j];
        si[k2 * 64 + 8 * j + hi] = xi[j];
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    /* Pass 3: DFT over a of row k2 (d = hi); X[64 c + t] is element c. */
    for (uint j = 0; j < 8; ++j) {
        xr[j] = sr[k2 * 64 + 8 * hi + j];
        xi[j] = si[k2 * 64 + 8 * hi + j];
    }
    FFT8()
    for (uint j = 0; j < 8; ++j) {
        out[64 * j].x = xr[j];
        out[64 * j].y = xi[j];
    }
}
