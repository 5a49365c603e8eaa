/* Peak kernels (the paper's section IV-A) and the launch-overhead kernel.
 * kernels_cl/peak.cl is the OpenCL twin: same names, parameters and algorithm text. */

/* Read bandwidth: coalesced float4 grid-stride reads; one store per work-item keeps the
 * compiler from removing the loads. */
extern "C" __global__ void peak_read(const float* in, float* out, uint n)
{
    uint n4 = n / 4u;
    const float4* in4 = (const float4*)in;
    float v = 0.0f;
    for (uint i = (blockIdx.x * blockDim.x + threadIdx.x); i < n4; i += (gridDim.x * blockDim.x)) {
        float4 x = in4[i];
        v += (x.x + x.y) + (x.z + x.w);
    }
    uint tail = n4 * 4u + (blockIdx.x * blockDim.x + threadIdx.x);
    if (tail < n)
        v += in[tail];
    out[(blockIdx.x * blockDim.x + threadIdx.x)] = v;
}

/* Copy bandwidth through a kernel: float4 grid-stride copy. */
extern "C" __global__ void peak_copy(const float* in, float* out, uint n)
{
    uint n4 = n / 4u;
    const float4* in4 = (const float4*)in;
    float4* out4 = (float4*)out;
    for (uint i = (blockIdx.x * blockDim.x + threadIdx.x); i < n4; i += (gridDim.x * blockDim.x))
        out4[i] = in4[i];
    uint tail = n4 * 4u + (blockIdx.x * blockDim.x + threadIdx.x);
    if (tail < n)
        out[tail] = in[tail];
}

/* Peak FLOPS: 8 independent chains of FMA_ITERS multiply-adds per work-item (x = x*a + b),
 * written as a*b+c so both compilers contract them with fmad/-cl-mad-enable on. */
extern "C" __global__ void peak_fma(const float* in, float* out, uint n)
{
    uint gid = (blockIdx.x * blockDim.x + threadIdx.x);
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
extern "C" __global__ void launch_empty(const float* in, float* out, uint n)
{
    if ((blockIdx.x * blockDim.x + threadIdx.x) == 0)
        out[0] = (float)n;
}
