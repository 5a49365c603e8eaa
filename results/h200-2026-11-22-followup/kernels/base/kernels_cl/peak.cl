/* Peak kernels (the paper's section IV-A) and the launch-overhead kernel.
 * kernels_cu/peak.cu is the CUDA twin: same names, parameters and algorithm text. */

/* Read bandwidth: coalesced float4 grid-stride reads; one store per work-item keeps the
 * compiler from removing the loads. */
__kernel void peak_read(const __global float* in, __global float* out, uint n)
{
    uint n4 = n / 4u;
    const __global float4* in4 = (const __global float4*)in;
    float v = 0.0f;
    for (uint i = get_global_id(0); i < n4; i += get_global_size(0)) {
        float4 x = in4[i];
        v += (x.x + x.y) + (x.z + x.w);
    }
    uint tail = n4 * 4u + get_global_id(0);
    if (tail < n)
        v += in[tail];
    out[get_global_id(0)] = v;
}

/* Copy bandwidth through a kernel: float4 grid-stride copy. */
__kernel void peak_copy(const __global float* in, __global float* out, uint n)
{
    uint n4 = n / 4u;
    const __global float4* in4 = (const __global float4*)in;
    __global float4* out4 = (__global float4*)out;
    for (uint i = get_global_id(0); i < n4; i += get_global_size(0))
        out4[i] = in4[i];
    uint tail = n4 * 4u + get_global_id(0);
    if (tail < n)
        out[tail] = in[tail];
}

/* Peak FLOPS: 8 independent chains of FMA_ITERS multiply-adds per work-item (x = x*a + b),
 * written as a*b+c so both compilers contract them with fmad/-cl-mad-enable on. */
__kernel void peak_fma(const __global float* in, __global float* out, uint n)
{
    uint gid = get_global_id(0);
    float a = in[gid % n];
    float b = 0.5f - a * 0.25f;
    float x0 = a, x1 = a + 1.0f, x2 = a + 2.0f, x3 = a + 3.0f;
    float x4 = a + 4.0f, x5 = a + 5.0f, x6 = a + 6.0f, x7 = a + 7.0f;
    float m = 0.999f;
    PRAGMA_UNROLL_A
    for (uint k = 0; k < FMA_ITERS; ++k) {
        x0 = x0 * m + b;
        x1 = x1 * m + b;
        x2 = x2 * m + b;
        x3 = x3 * m + b;
        x4 = x4 * m + b;
        x5 = x5 * m + b;
        x6 = x6 * m + b;
        x7 = x7 * m + b;
    }
    out[gid] = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
}

/* Launch overhead: a 1 x 1 kernel whose only work is one store, so a launch can be verified. */
__kernel void launch_empty(const __global float* in, __global float* out, uint n)
{
    if (get_global_id(0) == 0)
        out[0] = (float)n;
}
