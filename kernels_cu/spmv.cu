/* Sparse matrix-vector product y = A x, A in CSR form (val, cols, rowDelimiters), after SHOC's
 * spmv kernels: the scalar kernel gives each row one work-item, the vector kernel one warp of
 * WARP_SIZE work-items. kernels_cl/spmv.cl is the OpenCL twin.
 *
 * Each kernel comes in three read paths of the gathered vector x, the paper's Figs. 4-5 factor:
 *   (plain)  x through a const pointer: ordinary global loads (X_GLOBAL);
 *   _ro      every pointer const restrict, and x read with LOAD_RO (CUDA: __ldg; OpenCL C has
 *            no such built-in, so restrict is its only request for the read-only path; X_RO);
 *   _tex     x through the texture path: an image1d_buffer_t read with read_imagef here, a
 *            texture object read with tex1Dfetch in CUDA (FETCH_F1 in the preludes; X_TEX).
 * Only the reads of x differ between the three: one body per kernel (SPMV_SCALAR_BODY,
 * SPMV_VECTOR_BODY) takes the read as a macro argument, so the matrix is streamed the same
 * way by construction.
 *
 * The scalar kernel's row loop is unroll point A: absent UNROLL_A, each compiler unrolls as it
 * likes (NVRTC unrolls it by 4); a study's `unroll = { A = n }` puts the same pragma there on
 * both sides (the texture-explain study's one-step experiment).
 *
 * The vector kernel: WG_SIZE / SPMV_LANES rows per work-group at a time, grid-striding over
 * the rows so that any group count covers the matrix; its reduction is synchronised with a
 * barrier at every step (SHOC's warp-synchronous form is racy since Volta). The trip count of
 * the row loop is the same for every work-item of a group, so every barrier is reached by all.
 */

/* The three reads of x[i]. */
#define X_GLOBAL(x, i) (x)[i]
#define X_RO(x, i) LOAD_RO(&(x)[i])
#define X_TEX(x, i) FETCH_F1(x, i)

#define SPMV_SCALAR_BODY(READ_X)                                                                   \
    uint myRow = blockIdx.x * blockDim.x + threadIdx.x;                                            \
    if (myRow < dim) {                                                                             \
        float t = 0.0f;                                                                            \
        uint start = rowDelimiters[myRow];                                                         \
        uint end = rowDelimiters[myRow + 1];                                                       \
        PRAGMA_UNROLL_A                                                                            \
        for (uint j = start; j < end; j++) {                                                       \
            uint col = cols[j];                                                                    \
            t += val[j] * READ_X(vec, col);                                                        \
        }                                                                                          \
        out[myRow] = t;                                                                            \
    }

/* Lanes per row of the vector kernel, its vector width: SHOC's warp by default. The tuner's
 * SpMV space (src/tune/space.rs) also tries fewer for short rows; a power of two up to
 * WARP_SIZE, so that a group's rows never straddle a warp. */
#ifndef SPMV_LANES
#define SPMV_LANES WARP_SIZE
#endif
#if SPMV_LANES > WARP_SIZE || (SPMV_LANES & (SPMV_LANES - 1)) != 0
#error "SPMV_LANES must be a power of two up to WARP_SIZE"
#endif

#define SPMV_VECTOR_BODY(READ_X)                                                                   \
    __shared__ float partialSums[WG_SIZE];                                                         \
    uint t = threadIdx.x;                                                                          \
    uint id = t & (SPMV_LANES - 1);                                                                \
    uint warpsPerGroup = blockDim.x / SPMV_LANES;                                                  \
    for (uint base = blockIdx.x * warpsPerGroup; base < dim;                                       \
         base += gridDim.x * warpsPerGroup) {                                                      \
        uint myRow = base + t / SPMV_LANES;                                                        \
        float mySum = 0.0f;                                                                        \
        if (myRow < dim) {                                                                         \
            uint start = rowDelimiters[myRow];                                                     \
            uint end = rowDelimiters[myRow + 1];                                                   \
            for (uint j = start + id; j < end; j += SPMV_LANES) {                                  \
                uint col = cols[j];                                                                \
                mySum += val[j] * READ_X(vec, col);                                                \
            }                                                                                      \
        }                                                                                          \
        partialSums[t] = mySum;                                                                    \
        __syncthreads();                                                                           \
        for (uint s = SPMV_LANES / 2; s > 0; s >>= 1) {                                            \
            if (id < s)                                                                            \
                partialSums[t] += partialSums[t + s];                                              \
            __syncthreads();                                                                       \
        }                                                                                          \
        if (id == 0 && myRow < dim)                                                                \
            out[myRow] = partialSums[t];                                                           \
        __syncthreads();                                                                           \
    }

/* CSR-stream (after CSR-adaptive's stream mode; no sub-group shuffles, which NVIDIA's OpenCL
 * lacks): a work-group takes a block of consecutive rows whose entries are contiguous in val
 * and cols, and loops over them in chunks of SPMV_STREAM_CHUNK entries. Per chunk, work-item t
 * loads entries t, t + WG_SIZE, ... (coalesced, SPMV_STREAM_PER_ITEM independent gathers of x
 * in flight per work-item), multiplies and stores the products in local memory; then each row
 * of the block is summed from local memory by `lanes` work-items. A row longer than a chunk is
 * summed across chunks in the same registers, so any row length is right; only the balance
 * suffers on very long rows.
 *
 * Why: the vector kernel gives each row a warp of 32 (half of them idle at 16 entries per row)
 * and pays seven barriers per 8 rows; the scalar kernel's warp reads 32 rows' runs at once
 * (uncoalesced). Here a block of WG_SIZE * SPMV_STREAM_PER_ITEM entries costs four barriers,
 * and every load of the matrix is coalesced.
 *
 * lanes (work-items per row in the sum) follows the matrix's mean entries per row, nnz / dim:
 * the largest power of two up to 32 with lanes * SPMV_STREAM_PER_ITEM <= mean, so that a block
 * of WG_SIZE / lanes rows holds about one chunk. Every work-item computes it from the same two
 * numbers, so it is uniform, and both APIs take the same value from the same matrix.
 * LOAD reads val and cols, READ_X the gathered x (the three read paths above). */
#define SPMV_STREAM_PER_ITEM 4
#define SPMV_STREAM_CHUNK (WG_SIZE * SPMV_STREAM_PER_ITEM)
#define LOAD_GLOBAL(p, i) (p)[i]
#define LOAD_READ_ONLY(p, i) LOAD_RO(&(p)[i])

#define SPMV_STREAM_BODY(LOAD, READ_X)                                                             \
    __shared__ float products[SPMV_STREAM_CHUNK];                                                  \
    __shared__ float partials[WG_SIZE];                                                            \
    uint t = threadIdx.x;                                                                          \
    uint mean = rowDelimiters[dim] / max(dim, 1u);                                                 \
    uint lanes = 1u;                                                                               \
    while (lanes < WARP_SIZE && lanes * 2u * SPMV_STREAM_PER_ITEM <= mean)                         \
        lanes *= 2u;                                                                               \
    uint lane = t & (lanes - 1u);                                                                  \
    uint rowsPerBlock = WG_SIZE / lanes;                                                           \
    for (uint first = blockIdx.x * rowsPerBlock; first < dim;                                      \
         first += gridDim.x * rowsPerBlock) {                                                      \
        uint last = min(first + rowsPerBlock, dim);                                                \
        uint myRow = first + t / lanes;                                                            \
        uint rowStart = 0u;                                                                        \
        uint rowEnd = 0u;                                                                          \
        if (myRow < last) {                                                                        \
            rowStart = rowDelimiters[myRow];                                                       \
            rowEnd = rowDelimiters[myRow + 1];                                                     \
        }                                                                                          \
        uint blockEnd = rowDelimiters[last];                                                       \
        float mySum = 0.0f;                                                                        \
        for (uint chunk = rowDelimiters[first]; chunk < blockEnd; chunk += SPMV_STREAM_CHUNK) {    \
            CLVSCU_UNROLL_N(SPMV_STREAM_PER_ITEM)                                                  \
            for (uint k = 0u; k < SPMV_STREAM_PER_ITEM; k++) {                                     \
                uint j = chunk + k * WG_SIZE + t;                                                  \
                float p = 0.0f;                                                                    \
                if (j < blockEnd)                                                                  \
                    p = LOAD(val, j) * READ_X(vec, LOAD(cols, j));                                 \
                products[k * WG_SIZE + t] = p;                                                     \
            }                                                                                      \
            __syncthreads();                                                                       \
            uint to = min(rowEnd, chunk + SPMV_STREAM_CHUNK);                                      \
            for (uint j = max(rowStart, chunk) + lane; j < to; j += lanes)                         \
                mySum += products[j - chunk];                                                      \
            __syncthreads();                                                                       \
        }                                                                                          \
        partials[t] = mySum;                                                                       \
        __syncthreads();                                                                           \
        if (lane == 0u && myRow < last) {                                                          \
            float rowSum = 0.0f;                                                                   \
            for (uint k = 0u; k < lanes; k++)                                                      \
                rowSum += partials[t + k];                                                         \
            out[myRow] = rowSum;                                                                   \
        }                                                                                          \
        __syncthreads();                                                                           \
    }

extern "C" __global__ void spmv_csr_scalar(const float* val, const uint* cols,
                              const uint* rowDelimiters, const float* vec,
                              uint dim, float* out)
{
    SPMV_SCALAR_BODY(X_GLOBAL)
}

extern "C" __global__ void spmv_csr_scalar_ro(const float* __restrict__ val,
                                 const uint* __restrict__ cols,
                                 const uint* __restrict__ rowDelimiters,
                                 const float* __restrict__ vec, uint dim,
                                 float* __restrict__ out)
{
    SPMV_SCALAR_BODY(X_RO)
}

extern "C" __global__ void spmv_csr_scalar_tex(const float* val, const uint* cols,
                                  const uint* rowDelimiters,
                                  cudaTextureObject_t vec, uint dim,
                                  float* out)
{
    SPMV_SCALAR_BODY(X_TEX)
}

extern "C" __global__ void spmv_csr_vector(const float* val, const uint* cols,
                              const uint* rowDelimiters, const float* vec,
                              uint dim, float* out)
{
    SPMV_VECTOR_BODY(X_GLOBAL)
}

extern "C" __global__ void spmv_csr_vector_ro(const float* __restrict__ val,
                                 const uint* __restrict__ cols,
                                 const uint* __restrict__ rowDelimiters,
                                 const float* __restrict__ vec, uint dim,
                                 float* __restrict__ out)
{
    SPMV_VECTOR_BODY(X_RO)
}

extern "C" __global__ void spmv_csr_vector_tex(const float* val, const uint* cols,
                                  const uint* rowDelimiters,
                                  cudaTextureObject_t vec, uint dim,
                                  float* out)
{
    SPMV_VECTOR_BODY(X_TEX)
}

extern "C" __global__ void spmv_csr_stream(const float* val, const uint* cols,
                              const uint* rowDelimiters, const float* vec,
                              uint dim, float* out)
{
    SPMV_STREAM_BODY(LOAD_GLOBAL, X_GLOBAL)
}

extern "C" __global__ void spmv_csr_stream_ro(const float* __restrict__ val,
                                 const uint* __restrict__ cols,
                                 const uint* __restrict__ rowDelimiters,
                                 const float* __restrict__ vec, uint dim,
                                 float* __restrict__ out)
{
    SPMV_STREAM_BODY(LOAD_READ_ONLY, X_RO)
}

extern "C" __global__ void spmv_csr_stream_tex(const float* val, const uint* cols,
                                  const uint* rowDelimiters,
                                  cudaTextureObject_t vec, uint dim,
                                  float* out)
{
    SPMV_STREAM_BODY(LOAD_GLOBAL, X_TEX)
}
