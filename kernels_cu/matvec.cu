/* Matrix-vector product W = M * V, M of height rows and width columns, row-major.
 * Listings 2-7 of NVIDIA's whitepaper "OpenCL Programming for the CUDA Architecture", kept
 * faithful to the text except where marked "clvscu:" (a correctness fix, always stated).
 * kernels_cl/matvec.cl is the OpenCL twin: same names, parameters and algorithm text.
 *
 * Local memory: the whitepaper passes partialDotProduct as a __local kernel argument; here it
 * is a compile-time array of WG_SIZE floats on both sides, so that both APIs allocate it the
 * same way (CUDA has no __local argument) and the launch local size must equal WG_SIZE.
 */

/* Listing 2: one work-item per row. */
extern "C" __global__ void matvec_listing2(const float* M, uint width, uint height,
                              const float* V, float* W)
{
    /* Each work-item computes one element of W */
    uint y = (blockIdx.x * blockDim.x + threadIdx.x);
    /* clvscu: the whitepaper's launch (239 groups x 256 = 61184 work-items) overshoots the
     * 60989 rows and Listing 2 has no bound check; this check keeps the algorithm and makes
     * the out-of-range work-items do nothing instead of reading and writing past the arrays. */
    if (y < height) {
        const float* row = M + y * width;
        float dotProduct = 0;
        PRAGMA_UNROLL_A
        for (uint x = 0; x < width; ++x)
            dotProduct += row[x] * V[x];
        W[y] = dotProduct;
    }
}

/* Listing 3: each work-item computes several rows (grid-stride over rows). */
extern "C" __global__ void matvec_listing3(const float* M, uint width, uint height,
                              const float* V, float* W)
{
    /* Each work-item computes multiple elements of W */
    for (uint y = (blockIdx.x * blockDim.x + threadIdx.x); y < height; y += (gridDim.x * blockDim.x)) {
        const float* row = M + y * width;
        float dotProduct = 0;
        PRAGMA_UNROLL_A
        for (uint x = 0; x < width; ++x)
            dotProduct += row[x] * V[x];
        W[y] = dotProduct;
    }
}

/* Listing 4: each work-group computes rows; coalesced reads; work-item 0 sums serially. */
extern "C" __global__ void matvec_listing4(const float* M, uint width, uint height,
                              const float* V, float* W)
{
    __shared__ float partialDotProduct[WG_SIZE];
    /* Each work-group computes multiple elements of W */
    for (uint y = blockIdx.x; y < height; y += gridDim.x) {
        const float* row = M + y * width;
        /* Each work-item accumulates as many products as necessary into local variable sum */
        float sum = 0;
        PRAGMA_UNROLL_A
        for (uint x = threadIdx.x; x < width; x += blockDim.x)
            sum += row[x] * V[x];
        /* Each partial dot product is stored in shared memory */
        partialDotProduct[threadIdx.x] = sum;
        /* Synchronize to make sure each work-item is done updating shared memory */
        __syncthreads();
        /* The first work-item in the work-group adds all partial dot products together */
        if (threadIdx.x == 0) {
            float dotProduct = 0;
            PRAGMA_UNROLL_B
            for (uint t = 0; t < blockDim.x; ++t)
                dotProduct += partialDotProduct[t];
            W[y] = dotProduct;
        }
        /* Synchronize to make sure the first work-item is done reading partialDotProduct */
        __syncthreads();
    }
}

/* Listing 5: parallel reduction with interleaved addressing (2-way bank conflicts). */
extern "C" __global__ void matvec_listing5(const float* M, uint width, uint height,
                              const float* V, float* W)
{
    __shared__ float partialDotProduct[WG_SIZE];
    for (uint y = blockIdx.x; y < height; y += gridDim.x) {
        const float* row = M + y * width;
        float sum = 0;
        PRAGMA_UNROLL_A
        for (uint x = threadIdx.x; x < width; x += blockDim.x)
            sum += row[x] * V[x];
        partialDotProduct[threadIdx.x] = sum;
        /* Perform parallel reduction to add each work-item's partial dot product together */
        for (uint stride = 1; stride < blockDim.x; stride *= 2) {
            /* Synchronize to make sure each work-item is done updating shared memory */
            __syncthreads();
            /* Index into the partialDotProduct array where the work-item writes in this step */
            uint index = 2 * stride * threadIdx.x;
            /* Check for valid indices */
            if (index < blockDim.x) {
                partialDotProduct[index] += partialDotProduct[index + stride];
            }
        }
        /* Write the result of the reduction to global memory */
        if (threadIdx.x == 0)
            W[y] = partialDotProduct[0];
        /* Synchronize to make sure the first work-item is done reading partialDotProduct */
        __syncthreads();
    }
}

/* Listing 6: parallel reduction with sequential addressing (no bank conflicts). */
extern "C" __global__ void matvec_listing6(const float* M, uint width, uint height,
                              const float* V, float* W)
{
    __shared__ float partialDotProduct[WG_SIZE];
    /* clvscu: the whitepaper's text misses a ';' after "y < height" in this loop header */
    for (uint y = blockIdx.x; y < height; y += gridDim.x) {
        const float* row = M + y * width;
        float sum = 0;
        PRAGMA_UNROLL_A
        for (uint x = threadIdx.x; x < width; x += blockDim.x)
            sum += row[x] * V[x];
        partialDotProduct[threadIdx.x] = sum;
        for (uint stride = blockDim.x / 2; stride > 0; stride /= 2) {
            __syncthreads();
            /* Only the first work-items in the work-group add elements together */
            if (threadIdx.x < stride) {
                partialDotProduct[threadIdx.x] += partialDotProduct[threadIdx.x + stride];
            }
        }
        if (threadIdx.x == 0)
            W[y] = partialDotProduct[0];
        __syncthreads();
    }
}

/* Listing 7: warp-based parallel reduction, made safe.
 * clvscu: the whitepaper relies on the 32 work-items of a warp executing in lockstep (no
 * barrier between the p[0] += p[s] steps). Since Volta, warps are not guaranteed to be
 * synchronous, so each step here reads, synchronises, writes and synchronises again, with
 * WARP_BARRIER() executed by every work-item (uniform control flow). WARP_BARRIER() is a
 * work-group barrier by default on both sides (WARP_SYNC_WG=1), or __syncwarp() /
 * sub_group_barrier() with WARP_SYNC_WG=0. The whitepaper also declares a second
 * "float warpResult" inside the if-block, shadowing the outer one, so the outer value stays 0;
 * here the outer variable is assigned. The final 8-element step gets the same read/sync/write
 * treatment. Requires a power-of-two work-group size from 64 to 512, as the text states. */
extern "C" __global__ void matvec_listing7(const float* M, uint width, uint height,
                              const float* V, float* W)
{
    __shared__ float partialDotProduct[WG_SIZE];
    for (uint y = blockIdx.x; y < height; y += gridDim.x) {
        const float* row = M + y * width;
        float sum = 0;
        PRAGMA_UNROLL_A
        for (uint x = threadIdx.x; x < width; x += blockDim.x)
            sum += row[x] * V[x];
        partialDotProduct[threadIdx.x] = sum;
        /* Synchronize to make sure each work-item is done writing to partialDotProduct */
        __syncthreads();
        /* Thread local ID within a warp */
        uint id = threadIdx.x & (WARP_SIZE - 1);
        /* Each warp reduces 64 consecutive elements */
        float warpResult = 0;
        bool active = threadIdx.x < blockDim.x / 2;
        float* p = partialDotProduct + (active ? 2 * threadIdx.x - id : 0);
        float v = 0;
        if (active) v = p[0] + p[32];
        WARP_BARRIER();
        if (active) p[0] = v;
        WARP_BARRIER();
        if (active) v = p[0] + p[16];
        WARP_BARRIER();
        if (active) p[0] = v;
        WARP_BARRIER();
        if (active) v = p[0] + p[8];
        WARP_BARRIER();
        if (active) p[0] = v;
        WARP_BARRIER();
        if (active) v = p[0] + p[4];
        WARP_BARRIER();
        if (active) p[0] = v;
        WARP_BARRIER();
        if (active) v = p[0] + p[2];
        WARP_BARRIER();
        if (active) p[0] = v;
        WARP_BARRIER();
        if (active) v = p[0] + p[1];
        WARP_BARRIER();
        if (active) p[0] = v;
        WARP_BARRIER();
        if (active) warpResult = p[0];
        /* Synchronize to make sure each warp is done reading partialDotProduct before it is
         * overwritten in the next step */
        __syncthreads();
        /* The first thread of each warp stores the result of the reduction at the beginning of
         * partialDotProduct */
        if (id == 0)
            partialDotProduct[threadIdx.x / WARP_SIZE] = warpResult;
        /* Synchronize to make sure each warp is done writing to partialDotProduct before it is
         * read in the next step */
        __syncthreads();
        /* Number of remaining elements after the first reduction */
        uint size = blockDim.x / (2 * WARP_SIZE);
        /* blockDim.x is at most 512, so a single warp does the last reduction step */
        bool last = threadIdx.x < size / 2;
        float* q = partialDotProduct + (last ? threadIdx.x : 0);
        if (size >= 8) {
            if (last) v = q[0] + q[4];
            WARP_BARRIER();
            if (last) q[0] = v;
            WARP_BARRIER();
        }
        if (size >= 4) {
            if (last) v = q[0] + q[2];
            WARP_BARRIER();
            if (last) q[0] = v;
            WARP_BARRIER();
        }
        if (size >= 2) {
            if (last) v = q[0] + q[1];
            WARP_BARRIER();
            if (last) q[0] = v;
            WARP_BARRIER();
        }
        /* Write the result of the reduction to global memory */
        if (threadIdx.x == 0)
            W[y] = partialDotProduct[0];
        /* Synchronize to make sure the first work-item is done reading partialDotProduct */
        __syncthreads();
    }
}

/* Listing 7 as printed (warp-synchronous, no synchronisation inside a warp; the shadowing of
 * warpResult is fixed so that the result can be checked at all). UNSAFE on Volta and later:
 * a race by the CUDA memory model. Kept only to demonstrate the hazard; never run by default. */
extern "C" __global__ void matvec_listing7_unsafe(const float* M, uint width, uint height,
                                     const float* V, float* W)
{
    __shared__ float partialDotProduct[WG_SIZE];
    for (uint y = blockIdx.x; y < height; y += gridDim.x) {
        const float* row = M + y * width;
        float sum = 0;
        for (uint x = threadIdx.x; x < width; x += blockDim.x)
            sum += row[x] * V[x];
        partialDotProduct[threadIdx.x] = sum;
        __syncthreads();
        uint id = threadIdx.x & (WARP_SIZE - 1);
        float warpResult = 0;
        if (threadIdx.x < blockDim.x / 2) {
            volatile float* p = partialDotProduct + 2 * threadIdx.x - id;
            p[0] += p[32];
            p[0] += p[16];
            p[0] += p[8];
            p[0] += p[4];
            p[0] += p[2];
            p[0] += p[1];
            warpResult = p[0];
        }
        __syncthreads();
        if (id == 0)
            partialDotProduct[threadIdx.x / WARP_SIZE] = warpResult;
        __syncthreads();
        uint size = blockDim.x / (2 * WARP_SIZE);
        if (threadIdx.x < size / 2) {
            volatile float* p = partialDotProduct + threadIdx.x;
            if (size >= 8)
                p[0] += p[4];
            if (size >= 4)
                p[0] += p[2];
            if (size >= 2)
                p[0] += p[1];
        }
        if (threadIdx.x == 0)
            W[y] = partialDotProduct[0];
        __syncthreads();
    }
}

/* Modern tuned variant: one warp (32 work-items) per row, WG_SIZE / 32 rows per work-group,
 * work-groups stride over row blocks; float4 loads of M and V when rows are 16-byte aligned
 * (width % 4 == 0), scalar tail otherwise; warp-level reduction with sub-group functions /
 * shuffles when USE_SUBGROUPS=1, local memory otherwise. */
extern "C" __global__ void matvec_tuned(const float* M, uint width, uint height,
                           const float* V, float* W)
{
#if !USE_SUBGROUPS
    __shared__ float partial[WG_SIZE];
#endif
    const uint lane = threadIdx.x & (WARP_SIZE - 1);
    const uint warp = threadIdx.x / WARP_SIZE;
    const uint rowsPerGroup = blockDim.x / WARP_SIZE;
    const uint width4 = ((width & 3u) == 0u) ? width / 4u : 0u;
    for (uint base = blockIdx.x * rowsPerGroup; base < height;
         base += gridDim.x * rowsPerGroup) {
        const uint y = base + warp;
        float sum = 0.0f;
        if (y < height) {
            const float* row = M + (size_t)y * width;
            const float4* row4 = (const float4*)row;
            const float4* V4 = (const float4*)V;
            PRAGMA_UNROLL_A
            for (uint x = lane; x < width4; x += WARP_SIZE) {
                const float4 m = row4[x];
                const float4 v = V4[x];
                sum += m.x * v.x + m.y * v.y + m.z * v.z + m.w * v.w;
            }
            for (uint x = width4 * 4u + lane; x < width; x += WARP_SIZE)
                sum += row[x] * V[x];
        }
#if USE_SUBGROUPS
        sum = WARP_SUM(sum);
        if (lane == 0 && y < height)
            W[y] = sum;
#else
        partial[threadIdx.x] = sum;
        __syncthreads();
        for (uint s = WARP_SIZE / 2; s > 0; s >>= 1) {
            if (lane < s)
                partial[threadIdx.x] += partial[threadIdx.x + s];
            __syncthreads();
        }
        if (lane == 0 && y < height)
            W[y] = partial[threadIdx.x];
#endif
    }
}

/* ---- Shape-aware matvec: one algorithm per aspect ratio (clvscu, not in the whitepaper) ----
 * The harness's rule (src/workload/matvec_shapes.rs) picks one of these four from the shape
 * and the device. All four read M with float4 loads when rows are 16-byte aligned
 * (width % 4 == 0) and with scalar loads otherwise, and none uses sub-group functions or warp
 * shuffles: the reductions go through local memory with work-group barriers only, so the
 * twins are the same code on both sides. Index arithmetic stays in 32 bits: the harness
 * refuses matrices of 2^32 elements or more. */

/* Rows in one split-K tile: each V element is loaded once for MV_TILE rows. */
#define MV_TILE 4

/* Row per work-item: for tall matrices with very short rows (a few floats), where a warp per
 * row would leave most lanes idle. Work-items stride over rows. */
extern "C" __global__ void matvec_row_item(const float* M, uint width, uint height,
                              const float* V, float* W)
{
    const uint width4 = ((width & 3u) == 0u) ? width / 4u : 0u;
    const float4* V4 = (const float4*)V;
    for (uint y = (blockIdx.x * blockDim.x + threadIdx.x); y < height; y += (gridDim.x * blockDim.x)) {
        const float* row = M + y * width;
        const float4* row4 = (const float4*)row;
        float sum = 0.0f;
        PRAGMA_UNROLL_A
        for (uint x = 0; x < width4; ++x) {
            const float4 m = row4[x];
            const float4 v = V4[x];
            sum += m.x * v.x + m.y * v.y + m.z * v.z + m.w * v.w;
        }
        for (uint x = width4 * 4u; x < width; ++x)
            sum += row[x] * V[x];
        W[y] = sum;
    }
}

/* Row per warp-sized slice: 32 work-items per row, WG_SIZE / 32 rows per work-group; for tall
 * and square matrices with enough rows to fill the device. The 32 partial sums of a row are
 * added by the slice's first work-item from local memory after one barrier (no sub-group
 * functions, no warp-synchronous code). */
extern "C" __global__ void matvec_row_warp(const float* M, uint width, uint height,
                              const float* V, float* W)
{
    __shared__ float partial[WG_SIZE];
    const uint lane = threadIdx.x & (WARP_SIZE - 1);
    const uint rowsPerGroup = blockDim.x / WARP_SIZE;
    const uint width4 = ((width & 3u) == 0u) ? width / 4u : 0u;
    const float4* V4 = (const float4*)V;
    for (uint base = blockIdx.x * rowsPerGroup; base < height;
         base += gridDim.x * rowsPerGroup) {
        const uint y = base + threadIdx.x / WARP_SIZE;
        float sum = 0.0f;
        if (y < height) {
            const float* row = M + y * width;
            const float4* row4 = (const float4*)row;
            PRAGMA_UNROLL_A
            for (uint x = lane; x < width4; x += WARP_SIZE) {
                const float4 m = row4[x];
                const float4 v = V4[x];
                sum += m.x * v.x + m.y * v.y + m.z * v.z + m.w * v.w;
            }
            for (uint x = width4 * 4u + lane; x < width; x += WARP_SIZE)
                sum += row[x] * V[x];
        }
        partial[threadIdx.x] = sum;
        __syncthreads();
        if (lane == 0 && y < height) {
            float dot = 0.0f;
            for (uint i = 0; i < WARP_SIZE; ++i)
                dot += partial[threadIdx.x + i];
            W[y] = dot;
        }
        /* The slice's first work-item is done reading before the next rows overwrite it */
        __syncthreads();
    }
}

/* Row per work-group: the whole group walks one row (float4, coalesced), then a
 * sequential-addressing tree in local memory; for a few hundred to a few thousand rows that
 * are not long enough to be worth splitting. */
extern "C" __global__ void matvec_row_group(const float* M, uint width, uint height,
                               const float* V, float* W)
{
    __shared__ float partial[WG_SIZE];
    const uint tid = threadIdx.x;
    const uint width4 = ((width & 3u) == 0u) ? width / 4u : 0u;
    const float4* V4 = (const float4*)V;
    for (uint y = blockIdx.x; y < height; y += gridDim.x) {
        const float* row = M + y * width;
        const float4* row4 = (const float4*)row;
        float sum = 0.0f;
        PRAGMA_UNROLL_A
        for (uint x = tid; x < width4; x += blockDim.x) {
            const float4 m = row4[x];
            const float4 v = V4[x];
            sum += m.x * v.x + m.y * v.y + m.z * v.z + m.w * v.w;
        }
        for (uint x = width4 * 4u + tid; x < width; x += blockDim.x)
            sum += row[x] * V[x];
        partial[tid] = sum;
        __syncthreads();
        for (uint s = blockDim.x / 2; s > 0; s >>= 1) {
            if (tid < s)
                partial[tid] += partial[tid + s];
            __syncthreads();
        }
        /* Only work-item 0 reads partial[0], and only it writes partial[0] next: no barrier */
        if (tid == 0)
            W[y] = partial[0];
    }
}

/* Split-K, first pass: the columns are cut into `splits` blocks of whole float4s; a
 * work-group computes the partial dot products of MV_TILE rows over one block, loading each
 * V element once for all MV_TILE rows, and writes them to P[split * height + row]. Groups
 * stride over the (row tile, split) pairs, so any group count is correct. For short, wide
 * matrices: a few hundred rows cannot fill a GPU one row per group. */
extern "C" __global__ void matvec_split_k(const float* M, uint width, uint height,
                             const float* V, float* P, uint splits)
{
    __shared__ float partial[MV_TILE * WG_SIZE];
    const uint tid = threadIdx.x;
    const uint tiles = (height + MV_TILE - 1u) / MV_TILE;
    const uint aligned = ((width & 3u) == 0u) ? 1u : 0u;
    const uint chunk = ((width + splits - 1u) / splits + 3u) & ~3u;
    const float4* V4 = (const float4*)V;
    for (uint t = blockIdx.x; t < tiles * splits; t += gridDim.x) {
        const uint y0 = (t % tiles) * MV_TILE;
        const uint split = t / tiles;
        const uint begin = min(split * chunk, width);
        const uint end = min(begin + chunk, width);
        float sum[MV_TILE];
        for (uint r = 0; r < MV_TILE; ++r)
            sum[r] = 0.0f;
        if (aligned) {
            PRAGMA_UNROLL_A
            for (uint x = begin / 4u + tid; x < end / 4u; x += blockDim.x) {
                const float4 v = V4[x];
                for (uint r = 0; r < MV_TILE; ++r) {
                    if (y0 + r < height) {
                        const float4 m = ((const float4*)(M + (y0 + r) * width))[x];
                        sum[r] += m.x * v.x + m.y * v.y + m.z * v.z + m.w * v.w;
                    }
                }
            }
        } else {
            for (uint x = begin + tid; x < end; x += blockDim.x) {
                const float v = V[x];
                for (uint r = 0; r < MV_TILE; ++r) {
                    if (y0 + r < height)
                        sum[r] += M[(y0 + r) * width + x] * v;
                }
            }
        }
        for (uint r = 0; r < MV_TILE; ++r)
            partial[r * WG_SIZE + tid] = sum[r];
        __syncthreads();
        for (uint s = blockDim.x / 2; s > 0; s >>= 1) {
            if (tid < s) {
                for (uint r = 0; r < MV_TILE; ++r)
                    partial[r * WG_SIZE + tid] += partial[r * WG_SIZE + tid + s];
            }
            __syncthreads();
        }
        if (tid < MV_TILE && y0 + tid < height)
            P[split * height + y0 + tid] = partial[tid * WG_SIZE];
        /* Done reading partial before the next tile overwrites it */
        __syncthreads();
    }
}

/* Split-K, second pass: one work-item per row adds the row's `splits` partial sums (reads of
 * consecutive rows are coalesced). Timed with the first pass, the same on both sides. */
extern "C" __global__ void matvec_split_k_final(const float* P, float* W, uint height,
                                   uint splits)
{
    for (uint y = (blockIdx.x * blockDim.x + threadIdx.x); y < height; y += (gridDim.x * blockDim.x)) {
        float dot = 0.0f;
        for (uint k = 0; k < splits; ++k)
            dot += P[k * height + y];
        W[y] = dot;
    }
}
