/* Sum of floats: the classic ladder of parallel reductions, one step per kernel, plus a tuned
 * variant. kernels_cl/reduce.cl is the OpenCL twin: same names, parameters and algorithm text.
 *
 * Every ladder kernel writes one partial sum per work-group to out[group]; the harness then
 * combines the partials with reduce_final (one work-group), the same kernel for both APIs, and
 * both passes are inside the timed region. The steps that halve strides assume a power-of-two
 * WG_SIZE (the harness refuses others, naming the variant); steps 5-6 need WG_SIZE >= 64.
 */

/* Step 1: interleaved addressing with divergent branches (tid % (2s) == 0). */
extern "C" __global__ void reduce_interleaved_divergent(const float* in, float* out, uint n)
{
    __shared__ float sdata[WG_SIZE];
    uint tid = threadIdx.x;
    uint i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (uint s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = sdata[0];
}

/* Step 2: interleaved addressing, no divergence, but shared-memory bank conflicts. */
extern "C" __global__ void reduce_interleaved_bank(const float* in, float* out, uint n)
{
    __shared__ float sdata[WG_SIZE];
    uint tid = threadIdx.x;
    uint i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (uint s = 1; s < blockDim.x; s *= 2) {
        uint index = 2 * s * tid;
        if (index < blockDim.x)
            sdata[index] += sdata[index + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = sdata[0];
}

/* Step 3: sequential addressing (conflict-free); half the work-items idle from the start. */
extern "C" __global__ void reduce_sequential(const float* in, float* out, uint n)
{
    __shared__ float sdata[WG_SIZE];
    uint tid = threadIdx.x;
    uint i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (uint s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = sdata[0];
}

/* Step 4: first add during load: each work-group covers 2 x WG_SIZE elements. */
extern "C" __global__ void reduce_first_add(const float* in, float* out, uint n)
{
    __shared__ float sdata[WG_SIZE];
    uint tid = threadIdx.x;
    uint i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
    float v = (i < n) ? in[i] : 0.0f;
    if (i + blockDim.x < n)
        v += in[i + blockDim.x];
    sdata[tid] = v;
    __syncthreads();
    for (uint s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = sdata[0];
}

/* The last warp's six steps, made safe: read, WARP_BARRIER, write, WARP_BARRIER, executed by
 * every work-item (uniform control flow) with only the first 32 doing arithmetic. The classic
 * version uses a volatile pointer and no synchronisation, relying on lockstep warps, which
 * Volta and later GPUs do not guarantee. */
#define LAST_WARP_STEP(sdata, tid, s)           \
    {                                           \
        float t = 0.0f;                         \
        if (tid < 32)                           \
            t = sdata[tid] + sdata[tid + s];    \
        WARP_BARRIER();                         \
        if (tid < 32)                           \
            sdata[tid] = t;                     \
        WARP_BARRIER();                         \
    }
#define LAST_WARP(sdata, tid)                   \
    LAST_WARP_STEP(sdata, tid, 32)              \
    LAST_WARP_STEP(sdata, tid, 16)              \
    LAST_WARP_STEP(sdata, tid, 8)               \
    LAST_WARP_STEP(sdata, tid, 4)               \
    LAST_WARP_STEP(sdata, tid, 2)               \
    LAST_WARP_STEP(sdata, tid, 1)

/* Step 5: first add during load + the last warp unrolled (safely, see LAST_WARP). */
extern "C" __global__ void reduce_unroll_last_warp(const float* in, float* out, uint n)
{
    __shared__ float sdata[WG_SIZE];
    uint tid = threadIdx.x;
    uint i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
    float v = (i < n) ? in[i] : 0.0f;
    if (i + blockDim.x < n)
        v += in[i + blockDim.x];
    sdata[tid] = v;
    __syncthreads();
    for (uint s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    LAST_WARP(sdata, tid)
    if (tid == 0)
        out[blockIdx.x] = sdata[0];
}

/* The tree above the last warp, completely unrolled for the compile-time WG_SIZE. */
#define UNROLLED_TREE(sdata, tid)                                                   \
    if (WG_SIZE >= 1024) { if (tid < 512) sdata[tid] += sdata[tid + 512]; __syncthreads(); } \
    if (WG_SIZE >= 512) { if (tid < 256) sdata[tid] += sdata[tid + 256]; __syncthreads(); }  \
    if (WG_SIZE >= 256) { if (tid < 128) sdata[tid] += sdata[tid + 128]; __syncthreads(); }  \
    if (WG_SIZE >= 128) { if (tid < 64) sdata[tid] += sdata[tid + 64]; __syncthreads(); }

/* Step 6: completely unrolled for a compile-time work-group size. */
extern "C" __global__ void reduce_complete_unroll(const float* in, float* out, uint n)
{
    __shared__ float sdata[WG_SIZE];
    uint tid = threadIdx.x;
    uint i = blockIdx.x * (WG_SIZE * 2) + threadIdx.x;
    float v = (i < n) ? in[i] : 0.0f;
    if (i + WG_SIZE < n)
        v += in[i + WG_SIZE];
    sdata[tid] = v;
    __syncthreads();
    UNROLLED_TREE(sdata, tid)
    LAST_WARP(sdata, tid)
    if (tid == 0)
        out[blockIdx.x] = sdata[0];
}

/* Step 7: several elements per work-item (grid-stride over 2 x WG_SIZE tiles), then step 6. */
extern "C" __global__ void reduce_multi(const float* in, float* out, uint n)
{
    __shared__ float sdata[WG_SIZE];
    uint tid = threadIdx.x;
    uint gridSize = WG_SIZE * 2 * gridDim.x;
    float v = 0.0f;
    PRAGMA_UNROLL_A
    for (uint i = blockIdx.x * (WG_SIZE * 2) + tid; i < n; i += gridSize) {
        v += in[i];
        if (i + WG_SIZE < n)
            v += in[i + WG_SIZE];
    }
    sdata[tid] = v;
    __syncthreads();
    UNROLLED_TREE(sdata, tid)
    LAST_WARP(sdata, tid)
    if (tid == 0)
        out[blockIdx.x] = sdata[0];
}

/* Tuned: float4 grid-stride loads, then a warp-level reduction (sub-group functions / warp
 * shuffles when USE_SUBGROUPS=1, local memory otherwise), one partial per work-group. */
extern "C" __global__ void WG_BOUND reduce_tuned(const float* in, float* out, uint n)
{
    __shared__ float warpSums[WG_SIZE / WARP_SIZE];
    uint tid = threadIdx.x;
    uint lane = tid & (WARP_SIZE - 1);
    uint warp = tid / WARP_SIZE;
    uint n4 = n / 4u;
    const float4* in4 = (const float4*)in;
    float v = 0.0f;
    PRAGMA_UNROLL_A
    for (uint i = (blockIdx.x * blockDim.x + threadIdx.x); i < n4; i += (gridDim.x * blockDim.x)) {
        float4 x = in4[i];
        v += (x.x + x.y) + (x.z + x.w);
    }
    uint tail = n4 * 4u + (blockIdx.x * blockDim.x + threadIdx.x);
    if (tail < n)
        v += in[tail];
#if USE_SUBGROUPS
    v = WARP_SUM(v);
    if (lane == 0)
        warpSums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        float w = (lane < WG_SIZE / WARP_SIZE) ? warpSums[lane] : 0.0f;
        w = WARP_SUM(w);
        if (lane == 0)
            out[blockIdx.x] = w;
    }
#else
    __shared__ float sdata[WG_SIZE];
    sdata[tid] = v;
    __syncthreads();
    for (uint s = WARP_SIZE / 2; s > 0; s >>= 1) {
        if (lane < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (lane == 0)
        warpSums[warp] = sdata[tid];
    __syncthreads();
    for (uint s = WG_SIZE / WARP_SIZE / 2; s > 0; s >>= 1) {
        if (tid < s)
            warpSums[tid] += warpSums[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = warpSums[0];
#endif
}

/* Second pass, shared by every variant and both APIs: one work-group sums the partials. */
extern "C" __global__ void reduce_final(const float* in, float* out, uint n)
{
    __shared__ float sdata[WG_SIZE];
    uint tid = threadIdx.x;
    float v = 0.0f;
    for (uint i = tid; i < n; i += blockDim.x)
        v += in[i];
    sdata[tid] = v;
    __syncthreads();
    for (uint s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        out[0] = sdata[0];
}
