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
 * shuffles when USE_SUBGROUPS=1, local memory otherwise. MV_VEC (the tuner's vector width,
 * src/tune/spaces3.rs) sets the loads to float (1), float2 (2) or float4 (4, the default: the
 * shipped kernel) when rows are MV_VEC-aligned. */
#ifndef MV_VEC
#define MV_VEC 4
#endif
#if MV_VEC == 4
#define MV_VTYPE float4
#define MV_DOT(m, v) (m.x * v.x + m.y * v.y + m.z * v.z + m.w * v.w)
#elif MV_VEC == 2
#define MV_VTYPE float2
#define MV_DOT(m, v) (m.x * v.x + m.y * v.y)
#elif MV_VEC == 1
#define MV_VTYPE float
#define MV_DOT(m, v) (m * v)
#else
#error "matvec_tuned: MV_VEC must be 1, 2 or 4"
#endif
extern "C" __global__ void matvec_tuned(const float* M, uint width, uint height,
                           const float* V, float* W)
{
#if !USE_SUBGROUPS
    __shared__ float partial[WG_SIZE];
#endif
    const uint lane = threadIdx.x & (WARP_SIZE - 1);
    const uint warp = threadIdx.x / WARP_SIZE;
    const uint rowsPerGroup = blockDim.x / WARP_SIZE;
    const uint width4 = ((width % MV_VEC) == 0u) ? width / MV_VEC : 0u;
    for (uint base = blockIdx.x * rowsPerGroup; base < height;
         base += gridDim.x * rowsPerGroup) {
        const uint y = base + warp;
        float sum = 0.0f;
        if (y < height) {
            const float* row = M + (size_t)y * width;
            const MV_VTYPE* row4 = (const MV_VTYPE*)row;
            const MV_VTYPE* V4 = (const MV_VTYPE*)V;
            PRAGMA_UNROLL_A
            for (uint x = lane; x < width4; x += WARP_SIZE) {
                const MV_VTYPE m = row4[x];
                const MV_VTYPE v = V4[x];
                sum += MV_DOT(m, v);
            }
            for (uint x = width4 * MV_VEC + lane; x < width; x += WARP_SIZE)
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

/* The first pass of split-K for the tile (t % tiles) x column block (t / tiles), shared by
 * matvec_split_k and matvec_split_one: declares y0, split, begin and end, adds the MV_TILE rows'
 * products over the block (V loaded once for all of them), and leaves row r's partial sum in
 * partial[r * WG_SIZE] after a barrier. Needs tid, tiles, chunk, aligned, V4 and partial. */
#define MV_SPLIT_TILE_SUMS()                                                                       \
    const uint y0 = (t % tiles) * MV_TILE;                                                         \
    const uint split = t / tiles;                                                                  \
    const uint begin = min(split * chunk, width);                                                  \
    const uint end = min(begin + chunk, width);                                                    \
    float sum[MV_TILE];                                                                            \
    for (uint r = 0; r < MV_TILE; ++r)                                                             \
        sum[r] = 0.0f;                                                                             \
    if (aligned) {                                                                                 \
        PRAGMA_UNROLL_A                                                                            \
        for (uint x = begin / 4u + tid; x < end / 4u; x += blockDim.x) {                           \
            const float4 v = V4[x];                                                                \
            for (uint r = 0; r < MV_TILE; ++r) {                                                   \
                if (y0 + r < height) {                                                             \
                    const float4 m = ((const float4*)(M + (y0 + r) * width))[x];                   \
                    sum[r] += m.x * v.x + m.y * v.y + m.z * v.z + m.w * v.w;                       \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    } else {                                                                                       \
        for (uint x = begin + tid; x < end; x += blockDim.x) {                                     \
            const float v = V[x];                                                                  \
            for (uint r = 0; r < MV_TILE; ++r) {                                                   \
                if (y0 + r < height)                                                               \
                    sum[r] += M[(y0 + r) * width + x] * v;                                         \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    for (uint r = 0; r < MV_TILE; ++r)                                                             \
        partial[r * WG_SIZE + tid] = sum[r];                                                       \
    __syncthreads();                                                                               \
    for (uint s = blockDim.x / 2; s > 0; s >>= 1) {                                                \
        if (tid < s) {                                                                             \
            for (uint r = 0; r < MV_TILE; ++r)                                                     \
                partial[r * WG_SIZE + tid] += partial[r * WG_SIZE + tid + s];                      \
        }                                                                                          \
        __syncthreads();                                                                           \
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
        MV_SPLIT_TILE_SUMS();
        if (tid < MV_TILE && y0 + tid < height)
            P[split * height + y0 + tid] = partial[tid * WG_SIZE];
        /* Done reading partial before the next tile overwrites it */
        __syncthreads();
    }
}

/* Split-K, second pass: a warp-sized slice of 32 work-items per row adds the row's `splits`
 * partial sums (lanes stride over the splits), then the slice's first work-item adds the 32
 * lane sums from local memory, as in matvec_row_warp. With one work-item per row, a few rows
 * of hundreds of splits made one long chain of dependent loads per row: that chain, not the
 * matrix, set the time of the whole product on few-row, very wide matrices. Timed with the
 * first pass, the same on both sides. */
extern "C" __global__ void matvec_split_k_final(const float* P, float* W, uint height,
                                   uint splits)
{
    __shared__ float partial[WG_SIZE];
    const uint lane = threadIdx.x & (WARP_SIZE - 1);
    const uint rowsPerGroup = blockDim.x / WARP_SIZE;
    for (uint base = blockIdx.x * rowsPerGroup; base < height;
         base += gridDim.x * rowsPerGroup) {
        const uint y = base + threadIdx.x / WARP_SIZE;
        float sum = 0.0f;
        if (y < height) {
            for (uint k = lane; k < splits; k += WARP_SIZE)
                sum += P[k * height + y];
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

/* Split-one: split-K in one launch. The first pass is matvec_split_k's, line for line; then
 * the work-group counts its column block done in count[tile] (an atomic add after a
 * device-wide fence, so that its partial sums are visible before the count is), and the
 * work-group that finishes a row tile's last block adds the tile's `splits` partial sums into
 * W and sets the count back to 0 for the next launch. There is no second launch: each timed
 * launch costs a few microseconds of device time even when it does almost nothing, and on
 * very wide matrices split-k's second launch is a visible part of its gap to the read kernel.
 * The last work-group reads the partial sums through a volatile pointer: other work-groups
 * wrote them during this launch, so they must come from memory, not from a cache line read
 * earlier. count starts at 0 (the harness zeroes it) and is left at 0. */
extern "C" __global__ void matvec_split_one(const float* M, uint width, uint height,
                               const float* V, float* W, float* P,
                               uint splits, uint* count)
{
    __shared__ float partial[MV_TILE * WG_SIZE];
    __shared__ uint last;
    const uint tid = threadIdx.x;
    const uint tiles = (height + MV_TILE - 1u) / MV_TILE;
    const uint aligned = ((width & 3u) == 0u) ? 1u : 0u;
    const uint chunk = ((width + splits - 1u) / splits + 3u) & ~3u;
    const float4* V4 = (const float4*)V;
    const volatile float* Pv = P;
    for (uint t = blockIdx.x; t < tiles * splits; t += gridDim.x) {
        MV_SPLIT_TILE_SUMS();
        if (tid < MV_TILE && y0 + tid < height) {
            P[split * height + y0 + tid] = partial[tid * WG_SIZE];
            GLOBAL_FENCE();
        }
        /* The partial sums are written and fenced (and partial read) before the count */
        __syncthreads();
        if (tid == 0) {
            GLOBAL_FENCE();
            last = (ATOMIC_ADD_U32(count + t % tiles, 1u) == splits - 1u) ? 1u : 0u;
        }
        __syncthreads();
        /* last is the same for the whole work-group: the barriers below are reached by all */
        if (last) {
            for (uint r = 0; r < MV_TILE; ++r) {
                float s = 0.0f;
                if (y0 + r < height) {
                    for (uint k = tid; k < splits; k += blockDim.x)
                        s += Pv[k * height + y0 + r];
                }
                partial[r * WG_SIZE + tid] = s;
            }
            __syncthreads();
            for (uint s = blockDim.x / 2; s > 0; s >>= 1) {
                if (tid < s) {
                    for (uint r = 0; r < MV_TILE; ++r)
                        partial[r * WG_SIZE + tid] += partial[r * WG_SIZE + tid + s];
                }
                __syncthreads();
            }
            if (tid < MV_TILE && y0 + tid < height)
                W[y0 + tid] = partial[tid * WG_SIZE];
            if (tid == 0)
                count[t % tiles] = 0u;
            /* Done reading partial before the next tile overwrites it */
            __syncthreads();
        }
    }
}

/* Rows in one split-wide tile: a work-item loads each float4 of V once for all of them. */
#define MV_WIDE 16
/* Split-wide's local arrays are sized for at most 512 work-items (the harness refuses more),
 * so that a program built with WG_SIZE 1024 for another kernel of this file stays within the
 * 48 KB of static local memory that CUDA allows. */
#define MV_WIDE_WG (WG_SIZE < 512 ? WG_SIZE : 512)

/* Split-wide, first pass (few rows, very wide): split-K with tiles of MV_WIDE rows, so V is
 * read once per 16 rows instead of once per 4 (on 16 x 4194304, split-K's four tiles read the
 * 16 MB vector four times: a quarter more bytes than the matrix alone), and each work-item has
 * MV_WIDE independent float4 loads in flight per step. The work-group's MV_WIDE x WG_SIZE
 * partial sums are added in two steps instead of a log2(WG_SIZE)-step tree per row: WG_SIZE /
 * MV_WIDE work-items per row add MV_WIDE values each (consecutive work-items read consecutive
 * words), then MV_WIDE work-items add those. Output layout and column blocks as matvec_split_k,
 * and the same second pass. */
extern "C" __global__ void matvec_split_wide(const float* M, uint width, uint height,
                                const float* V, float* P, uint splits)
{
    __shared__ float partial[MV_WIDE * MV_WIDE_WG];
    __shared__ float rowSums[MV_WIDE_WG];
    const uint tid = threadIdx.x;
    const uint slice = MV_WIDE_WG / MV_WIDE;
    const uint tiles = (height + MV_WIDE - 1u) / MV_WIDE;
    const uint aligned = ((width & 3u) == 0u) ? 1u : 0u;
    const uint chunk = ((width + splits - 1u) / splits + 3u) & ~3u;
    const float4* V4 = (const float4*)V;
    for (uint t = blockIdx.x; t < tiles * splits; t += gridDim.x) {
        const uint y0 = (t % tiles) * MV_WIDE;
        const uint rows = min(height - y0, (uint)MV_WIDE);
        const uint split = t / tiles;
        const uint begin = min(split * chunk, width);
        const uint end = min(begin + chunk, width);
        float sum[MV_WIDE];
#pragma unroll
        for (uint r = 0; r < MV_WIDE; ++r)
            sum[r] = 0.0f;
        if (aligned) {
            const float4* M4 = (const float4*)(M + y0 * width);
            const uint width4 = width / 4u;
            PRAGMA_UNROLL_A
            for (uint x = begin / 4u + tid; x < end / 4u; x += blockDim.x) {
                const float4 v = V4[x];
#pragma unroll
                for (uint r = 0; r < MV_WIDE; ++r) {
                    if (r < rows) {
                        const float4 m = M4[r * width4 + x];
                        sum[r] += m.x * v.x + m.y * v.y + m.z * v.z + m.w * v.w;
                    }
                }
            }
        } else {
            for (uint x = begin + tid; x < end; x += blockDim.x) {
                const float v = V[x];
#pragma unroll
                for (uint r = 0; r < MV_WIDE; ++r) {
                    if (r < rows)
                        sum[r] += M[(y0 + r) * width + x] * v;
                }
            }
        }
#pragma unroll
        for (uint r = 0; r < MV_WIDE; ++r)
            partial[r * MV_WIDE_WG + tid] = sum[r];
        __syncthreads();
        {
            /* Work-item tid adds row tid / slice's values j, j + slice, ... (j = tid % slice) */
            const uint r = tid / slice;
            const uint j = tid % slice;
            float s = 0.0f;
            for (uint k = 0; k < MV_WIDE; ++k)
                s += partial[r * MV_WIDE_WG + k * slice + j];
            rowSums[tid] = s;
        }
        __syncthreads();
        if (tid < rows) {
            float s = 0.0f;
            for (uint j = 0; j < slice; ++j)
                s += rowSums[tid * slice + j];
            P[split * height + y0 + tid] = s;
        }
        /* Done reading partial and rowSums before the next tile overwrites them */
        __syncthreads();
    }
}

/* Row-slice: widest row, in float4s, that the slice kernel stages; wider rows take the
 * row-per-work-item path. */
#define MV_SLICE_W4 16
/* Rows one work-group finishes per step: one per work-item in the adding phase. */
#define MV_SLICE_ROWS (WG_SIZE < 256 ? WG_SIZE : 256)

/* Row-slice (tall, rows of 5 to 64 floats): a work-item per row reads its row's float4s one
 * after another, so each warp load touches 32 rows 16 bytes each (half of every sector, the
 * other half on the next load). Here the w4 = width / 4 float4s of a row go to w4 consecutive
 * work-items and a work-group covers MV_SLICE_ROWS consecutive rows (one contiguous block of
 * M): every warp load is one contiguous run of 512 bytes, each work-item keeps its V float4 in
 * a register, and has up to MV_SLICE_ROWS / (WG_SIZE / w4) independent loads in flight. The
 * products go to local memory (rows padded to an odd stride, so the adding phase is free of
 * bank conflicts) and one work-item per row adds its row's w4 products. Unaligned or wider
 * rows: one work-item per row from global memory, as matvec_row_item. */
extern "C" __global__ void matvec_row_slice(const float* M, uint width, uint height,
                               const float* V, float* W)
{
    __shared__ float dots[MV_SLICE_ROWS * (MV_SLICE_W4 + 1)];
    const uint tid = threadIdx.x;
    const uint width4 = width / 4u;
    if ((width & 3u) != 0u || width4 == 0u || width4 > MV_SLICE_W4) {
        for (uint y = (blockIdx.x * blockDim.x + threadIdx.x); y < height; y += (gridDim.x * blockDim.x)) {
            float sum = 0.0f;
            for (uint x = 0; x < width; ++x)
                sum += M[y * width + x] * V[x];
            W[y] = sum;
        }
        return;
    }
    const uint stride = width4 | 1u;
    const uint rowStep = blockDim.x / width4;
    const uint c = tid % width4;
    const uint r0 = tid / width4;
    const float4* M4 = (const float4*)M;
    const float4 v = ((const float4*)V)[c];
    for (uint base = blockIdx.x * MV_SLICE_ROWS; base < height;
         base += gridDim.x * MV_SLICE_ROWS) {
        if (r0 < rowStep) {
            PRAGMA_UNROLL_A
            for (uint r = r0; r < MV_SLICE_ROWS; r += rowStep) {
                float d = 0.0f;
                if (base + r < height) {
                    const float4 m = M4[(base + r) * width4 + c];
                    d = m.x * v.x + m.y * v.y + m.z * v.z + m.w * v.w;
                }
                dots[r * stride + c] = d;
            }
        }
        __syncthreads();
        if (tid < MV_SLICE_ROWS && base + tid < height) {
            float sum = 0.0f;
            for (uint j = 0; j < width4; ++j)
                sum += dots[tid * stride + j];
            W[base + tid] = sum;
        }
        /* Done reading dots before the next rows overwrite them */
        __syncthreads();
    }
}

/* Rows one warp-sized slice of row-multi reads per step. */
#define MV_MULTI 4

/* Row-multi (tall, rows of a few hundred floats): row-warp with MV_MULTI rows per warp-sized
 * slice and step. Each work-item issues the loads of all MV_MULTI rows (one V float4 for all
 * of them) before any sum is added up: a row of 256 floats is two float4 per work-item, so
 * row-warp had two loads in flight per work-item and then a barrier; here there are eight.
 * The partial sums go through local memory as in row-warp; work-item r of a slice adds row
 * r's 32 values. */
extern "C" __global__ void matvec_row_multi(const float* M, uint width, uint height,
                               const float* V, float* W)
{
    __shared__ float partial[MV_MULTI * WG_SIZE];
    const uint tid = threadIdx.x;
    const uint lane = tid & (WARP_SIZE - 1);
    const uint first = tid - lane;
    const uint rowsPerGroup = blockDim.x / WARP_SIZE * MV_MULTI;
    const uint width4 = ((width & 3u) == 0u) ? width / 4u : 0u;
    const float4* V4 = (const float4*)V;
    for (uint base = blockIdx.x * rowsPerGroup; base < height;
         base += gridDim.x * rowsPerGroup) {
        const uint y0 = base + threadIdx.x / WARP_SIZE * MV_MULTI;
        float sum[MV_MULTI];
#pragma unroll
        for (uint r = 0; r < MV_MULTI; ++r)
            sum[r] = 0.0f;
        PRAGMA_UNROLL_A
        for (uint x = lane; x < width4; x += WARP_SIZE) {
            const float4 v = V4[x];
#pragma unroll
            for (uint r = 0; r < MV_MULTI; ++r) {
                if (y0 + r < height) {
                    const float4 m = ((const float4*)(M + (y0 + r) * width))[x];
                    sum[r] += m.x * v.x + m.y * v.y + m.z * v.z + m.w * v.w;
                }
            }
        }
        for (uint x = width4 * 4u + lane; x < width; x += WARP_SIZE) {
            const float v = V[x];
#pragma unroll
            for (uint r = 0; r < MV_MULTI; ++r) {
                if (y0 + r < height)
                    sum[r] += M[(y0 + r) * width + x] * v;
            }
        }
#pragma unroll
        for (uint r = 0; r < MV_MULTI; ++r)
            partial[r * WG_SIZE + tid] = sum[r];
        __syncthreads();
        if (lane < MV_MULTI && y0 + lane < height) {
            float dot = 0.0f;
            for (uint i = 0; i < WARP_SIZE; ++i)
                dot += partial[lane * WG_SIZE + first + i];
            W[y0 + lane] = dot;
        }
        /* Done reading partial before the next rows overwrite it */
        __syncthreads();
    }
}

/* ---- Split-flat: M read as one flat stream (rows of any width) ----
 * Rows whose width is not a multiple of 4 are not 16-byte aligned, so the kernels above read
 * them with scalar loads. The matrix as a whole is one contiguous, aligned array of
 * n = width * height floats: split-flat cuts it into tasks of `chunk` floats (a multiple of 4,
 * at most width, so that a task starts 16-byte aligned and spans at most two rows), and the
 * work-items of a group read a task's float4s consecutively, as the read kernel does, whatever
 * the row width. V's columns are then misaligned by the same shift for a whole row. */

/* acc += the float4 m of M times V at columns c..c+3, c % 4 == sh: one aligned float4 of V when
 * sh == 0, else the two aligned float4s around the columns, picked by sh (the same for a whole
 * row, so lanes diverge only at a task's row boundary). The last float4s of V take scalars: the second aligned
 * float4 would reach past V's end when width is not a multiple of 4. Needs V, V4, width4. */
#define MV_FLAT_DOT(acc, m, c, sh)                                                                 \
    {                                                                                              \
        const uint q = (c) >> 2;                                                                   \
        if ((sh) == 0u) {                                                                          \
            const float4 v = V4[q];                                                                \
            acc += m.x * v.x + m.y * v.y + m.z * v.z + m.w * v.w;                                  \
        } else if (q + 2u <= width4) {                                                             \
            const float4 lo = V4[q];                                                               \
            const float4 hi = V4[q + 1u];                                                          \
            if ((sh) == 1u)                                                                        \
                acc += m.x * lo.y + m.y * lo.z + m.z * lo.w + m.w * hi.x;                          \
            else if ((sh) == 2u)                                                                   \
                acc += m.x * lo.z + m.y * lo.w + m.z * hi.x + m.w * hi.y;                          \
            else                                                                                   \
                acc += m.x * lo.w + m.y * hi.x + m.z * hi.y + m.w * hi.z;                          \
        } else {                                                                                   \
            acc += m.x * V[c] + m.y * V[(c) + 1u] + m.z * V[(c) + 2u] + m.w * V[(c) + 3u];         \
        }                                                                                          \
    }

/* Split-flat (very wide rows, any width; the harness gives chunk <= width, a multiple of 4).
 * Task t covers [t * chunk, min((t + 1) * chunk, n)): row r0 up to b (row r0 + 1's first
 * element) and row r0 + 1 from b on. The group adds each row's products, writes the two sums
 * to P[2t] and P[2t + 1], and, as in matvec_split_one, counts the task in count[row] for each
 * row it touched (after a device-wide fence); the group that completes a row (row r is
 * covered by tasks r * width / chunk .. ((r + 1) * width - 1) / chunk) adds the row's partial
 * sums through a volatile pointer, writes W[r] and sets count[r] back to 0 for the next
 * launch. Only the float4 that straddles b and the n % 4 tail of M are read as scalars.
 * Needs WG_SIZE >= 4 (one work-item per scalar). */
extern "C" __global__ void matvec_split_flat(const float* M, uint width, uint height,
                                const float* V, float* W, float* P,
                                uint chunk, uint* count)
{
    __shared__ float partial[2 * WG_SIZE];
    __shared__ uint last[2];
    const uint tid = threadIdx.x;
    const uint n = width * height;
    const uint tasks = n / chunk + ((n % chunk) != 0u ? 1u : 0u);
    const uint width4 = width / 4u;
    const float4* M4 = (const float4*)M;
    const float4* V4 = (const float4*)V;
    const volatile float* Pv = P;
    for (uint t = blockIdx.x; t < tasks; t += gridDim.x) {
        const uint begin = t * chunk;
        const uint end = begin + min(chunk, n - begin);
        const uint r0 = begin / width;
        const uint a = r0 * width;
        const uint b = a + width;
        const uint mid = min(b, end);
        /* The first float4 wholly in row r0 + 1 (b + 3 could overflow near 2^32) */
        const uint b4 = b / 4u + ((b & 3u) != 0u ? 1u : 0u);
        float acc0 = 0.0f;
        float acc1 = 0.0f;
        {
            /* One loop over the task's float4s, each added to its row's sum: a task that
             * straddles two rows takes as many steps as one that does not. Two loops, one per
             * row, took a partial last step each, and unrolled, the two front ends' code for
             * them differed by up to 12% (fair PR 0.89-1.12: the shapes5-twoloops results). */
            const uint sh0 = (0u - a) & 3u;
            const uint sh1 = (0u - b) & 3u;
            const uint midq = mid / 4u;
            PRAGMA_UNROLL_A
            for (uint x = begin / 4u + tid; x < end / 4u; x += blockDim.x) {
                if (x < midq) {
                    const float4 m = M4[x];
                    const uint c = 4u * x - a;
                    MV_FLAT_DOT(acc0, m, c, sh0);
                } else if (x >= b4) {
                    const float4 m = M4[x];
                    const uint c = 4u * x - b;
                    MV_FLAT_DOT(acc1, m, c, sh1);
                }
            }
        }
        {
            /* The elements no float4 above took, one per work-item: the float4 that straddles
             * b, or the n % 4 tail of M. The tail is always in row r0: the last task starts
             * at most a row (chunk <= width) before n, so in the last row. */
            const uint s1 = (b < end) ? 4u * b4 : end;
            const uint e = (mid & ~3u) + tid;
            if (e < s1) {
                if (e < b)
                    acc0 += M[e] * V[e - a];
                else
                    acc1 += M[e] * V[e - b];
            }
        }
        partial[tid] = acc0;
        partial[WG_SIZE + tid] = acc1;
        __syncthreads();
        for (uint s = blockDim.x / 2; s > 0; s >>= 1) {
            if (tid < s) {
                partial[tid] += partial[tid + s];
                partial[WG_SIZE + tid] += partial[WG_SIZE + tid + s];
            }
            __syncthreads();
        }
        if (tid < 2u) {
            P[2u * t + tid] = partial[tid * WG_SIZE];
            GLOBAL_FENCE();
        }
        /* The partial sums are written and fenced (and partial read) before the counts */
        __syncthreads();
        if (tid == 0u) {
            GLOBAL_FENCE();
            const uint need0 = (b - 1u) / chunk - a / chunk + 1u;
            last[0] = (ATOMIC_ADD_U32(count + r0, 1u) == need0 - 1u) ? 1u : 0u;
            last[1] = 0u;
            if (b < end) {
                const uint need1 = (b + width - 1u) / chunk - b / chunk + 1u;
                last[1] = (ATOMIC_ADD_U32(count + r0 + 1u, 1u) == need1 - 1u) ? 1u : 0u;
            }
        }
        __syncthreads();
        /* last[k] is the same for the whole work-group: the barriers below are reached by all */
        for (uint k = 0; k < 2u; ++k) {
            if (last[k]) {
                const uint r = r0 + k;
                const uint first = r * width;
                float s = 0.0f;
                for (uint j = first / chunk + tid; j <= (first + width - 1u) / chunk;
                     j += blockDim.x)
                    s += Pv[2u * j + ((j * chunk < first) ? 1u : 0u)];
                partial[tid] = s;
                __syncthreads();
                for (uint s2 = blockDim.x / 2; s2 > 0; s2 >>= 1) {
                    if (tid < s2)
                        partial[tid] += partial[tid + s2];
                    __syncthreads();
                }
                if (tid == 0u) {
                    W[r] = partial[0];
                    count[r] = 0u;
                }
                /* Done reading partial[0] before it is overwritten */
                __syncthreads();
            }
        }
        /* Done reading last before the next task overwrites it */
        __syncthreads();
    }
}

/* Floats of M one row-pack work-group stages per step: a block of whole rows in local memory
 * (16 KB). */
#define MV_PACK_FLOATS 4096
/* Widest row row-pack stages (V is staged whole, and a step holds at least 4 rows). */
#define MV_PACK_COLS 1024
/* Float4 loads each work-item has in flight before any is staged. */
#define MV_PACK 4

/* Row-pack (tall and narrow: rows of up to 1024 floats, aligned or not): a work-group copies a
 * block of whole rows, 4 or more, to local memory as one contiguous stream of float4s, as the
 * read kernel reads (the block's first row is a multiple of 4, so the block starts on a 16-byte
 * boundary whatever the width: float4 loads for unaligned rows too), MV_PACK loads in flight per
 * work-item. After one barrier, k work-items per row (a power of two, as many as the block's
 * rows leave) multiply a row by V (staged once) and add; the first of the k adds their k sums
 * after a second barrier. The k work-items of row r start r steps of k floats into the row
 * (and wrap), so that the rows a warp adds at once, a multiple of 32 floats apart or not, read
 * different local-memory banks. Wider rows: one work-item per row from global memory. */
extern "C" __global__ void matvec_row_pack(const float* M, uint width, uint height,
                              const float* V, float* W)
{
    __shared__ float4 block[MV_PACK_FLOATS / 4];
    __shared__ float vs[MV_PACK_COLS];
    __shared__ float part[WG_SIZE];
    float* flat = (float*)block;
    const uint tid = threadIdx.x;
    const uint size = blockDim.x;
    /* Rows per step: a multiple of 4, so that every block starts 16-byte aligned. */
    const uint rows = (MV_PACK_FLOATS / width) & ~3u;
    if (width > MV_PACK_COLS || rows == 0u) {
        for (uint y = (blockIdx.x * blockDim.x + threadIdx.x); y < height; y += (gridDim.x * blockDim.x)) {
            float sum = 0.0f;
            for (uint x = 0; x < width; ++x)
                sum += M[y * width + x] * V[x];
            W[y] = sum;
        }
        return;
    }
    for (uint x = tid; x < width; x += size)
        vs[x] = V[x];
    const float4* M4 = (const float4*)M;
    for (uint base = blockIdx.x * rows; base < height; base += gridDim.x * rows) {
        const uint here = min(rows, height - base);
        const uint n = here * width;
        const uint n4 = n / 4u;
        const uint start4 = base * width / 4u;
        for (uint i0 = tid; i0 < n4; i0 += MV_PACK * size) {
            float4 m[MV_PACK];
#pragma unroll
            for (uint u = 0; u < MV_PACK; ++u) {
                if (i0 + u * size < n4)
                    m[u] = M4[start4 + i0 + u * size];
            }
#pragma unroll
            for (uint u = 0; u < MV_PACK; ++u) {
                if (i0 + u * size < n4)
                    block[i0 + u * size] = m[u];
            }
        }
        /* The block's last floats when it is not a whole number of float4s (at most 3) */
        if (4u * n4 + tid < n)
            flat[4u * n4 + tid] = M[base * width + 4u * n4 + tid];
        /* The block (and, the first time, V) is staged before any row is added */
        __syncthreads();
        uint k = 1u;
        while (2u * k * here <= size && 2u * k <= width)
            k *= 2u;
        if (k == 1u) {
            for (uint r = tid; r < here; r += size) {
                float sum = 0.0f;
                for (uint x = 0; x < width; ++x)
                    sum += flat[r * width + x] * vs[x];
                W[base + r] = sum;
            }
        } else {
            const uint r = tid / k;
            const uint p = tid & (k - 1u);
            const uint steps = (width + k - 1u) / k;
            float sum = 0.0f;
            if (r < here) {
                uint j = r % steps;
                for (uint s = 0; s < steps; ++s) {
                    const uint x = p + j * k;
                    if (x < width)
                        sum += flat[r * width + x] * vs[x];
                    j = (j + 1u == steps) ? 0u : j + 1u;
                }
            }
            part[tid] = sum;
        }
        /* The block is read and the k sums of each row written before either is reused */
        __syncthreads();
        if (k > 1u && tid < here) {
            float dot = 0.0f;
            for (uint j = 0; j < k; ++j)
                dot += part[tid * k + j];
            W[base + tid] = dot;
        }
    }
}
