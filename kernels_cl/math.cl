/* Transcendental chains: compute-bound kernels where the math flags and intrinsics decide the
 * speed. kernels_cu/math.cu is the CUDA twin: same names, parameters and algorithm text; the
 * intrinsic variants call native_sin / native_exp in OpenCL and __sinf / __expf in CUDA (the
 * one spelling pair `clvscu parity` maps for these kernels).
 *
 * Each work-item runs 8 independent chains of FMA_ITERS steps (independent so the latency of
 * one evaluation hides behind the others). A step is one evaluation and one multiply-add:
 *   sin:  x = 0.5 * sin(x) + c_j       exp:  x = 0.25 * exp(-x) + c_j
 * with c_j = 0.5 * in + j / 16. Both maps contract (|derivative| <= 0.5 on the values reached),
 * so x stays in [-1.5, 1.5] (inside [-pi, pi], where __sinf's error bound holds) and the
 * rounding of each step does not grow along the chain: the result can be checked against an
 * f64 reference. The output is the sum of the 8 chains. */

#define MATH_CHAINS(F)                                                                       \
    uint gid = get_global_id(0);                                                             \
    float h = 0.5f * in[gid % n];                                                            \
    float c0 = h, c1 = h + 0.0625f, c2 = h + 0.125f, c3 = h + 0.1875f;                       \
    float c4 = h + 0.25f, c5 = h + 0.3125f, c6 = h + 0.375f, c7 = h + 0.4375f;               \
    float x0 = c0, x1 = c1, x2 = c2, x3 = c3, x4 = c4, x5 = c5, x6 = c6, x7 = c7;            \
    for (uint k = 0; k < FMA_ITERS; ++k) {                                                   \
        x0 = F(x0) + c0;                                                                     \
        x1 = F(x1) + c1;                                                                     \
        x2 = F(x2) + c2;                                                                     \
        x3 = F(x3) + c3;                                                                     \
        x4 = F(x4) + c4;                                                                     \
        x5 = F(x5) + c5;                                                                     \
        x6 = F(x6) + c6;                                                                     \
        x7 = F(x7) + c7;                                                                     \
    }                                                                                        \
    out[gid] = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));

#define MATH_SIN(x) 0.5f * sin(x)
#define MATH_EXP(x) 0.25f * exp(-(x))
#define MATH_NATIVE_SIN(x) 0.5f * native_sin(x)
#define MATH_NATIVE_EXP(x) 0.25f * native_exp(-(x))

/* Precise sin (OpenCL: 4 ulp; CUDA sinf: 2 ulp), unless fast math relaxes it. */
__kernel void math_sin(const __global float* in, __global float* out, uint n)
{
    MATH_CHAINS(MATH_SIN)
}

/* Precise exp (OpenCL: 3 ulp; CUDA expf: 2 ulp), unless fast math relaxes it. */
__kernel void math_exp(const __global float* in, __global float* out, uint n)
{
    MATH_CHAINS(MATH_EXP)
}

/* The hardware approximation: native_sin / __sinf (CUDA: absolute error 2^-21.41 on
 * [-pi, pi]; OpenCL leaves native_* accuracy to the implementation). */
__kernel void math_native_sin(const __global float* in, __global float* out, uint n)
{
    MATH_CHAINS(MATH_NATIVE_SIN)
}

/* The hardware approximation: native_exp / __expf (CUDA: 2 + floor(|1.173 x|) ulp). */
__kernel void math_native_exp(const __global float* in, __global float* out, uint n)
{
    MATH_CHAINS(MATH_NATIVE_EXP)
}
