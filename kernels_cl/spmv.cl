/* Sparse matrix-vector product y = A x, A in CSR form (val, cols, rowDelimiters), after SHOC's
 * spmv kernels: the scalar kernel gives each row one work-item, the vector kernel one warp of
 * WARP_SIZE work-items. kernels_cu/spmv.cu is the CUDA twin.
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
    uint myRow = get_global_id(0);                                                                 \
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
    __local float partialSums[WG_SIZE];                                                            \
    uint t = get_local_id(0);                                                                      \
    uint id = t & (SPMV_LANES - 1);                                                                \
    uint warpsPerGroup = get_local_size(0) / SPMV_LANES;                                           \
    for (uint base = get_group_id(0) * warpsPerGroup; base < dim;                                  \
         base += get_num_groups(0) * warpsPerGroup) {                                              \
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
        barrier(CLK_LOCAL_MEM_FENCE);                                                              \
        for (uint s = SPMV_LANES / 2; s > 0; s >>= 1) {                                            \
            if (id < s)                                                                            \
                partialSums[t] += partialSums[t + s];                                              \
            barrier(CLK_LOCAL_MEM_FENCE);                                                          \
        }                                                                                          \
        if (id == 0 && myRow < dim)                                                                \
            out[myRow] = partialSums[t];                                                           \
        barrier(CLK_LOCAL_MEM_FENCE);                                                              \
    }

__kernel void spmv_csr_scalar(const __global float* val, const __global uint* cols,
                              const __global uint* rowDelimiters, const __global float* vec,
                              uint dim, __global float* out)
{
    SPMV_SCALAR_BODY(X_GLOBAL)
}

__kernel void spmv_csr_scalar_ro(const __global float* restrict val,
                                 const __global uint* restrict cols,
                                 const __global uint* restrict rowDelimiters,
                                 const __global float* restrict vec, uint dim,
                                 __global float* restrict out)
{
    SPMV_SCALAR_BODY(X_RO)
}

__kernel void spmv_csr_scalar_tex(const __global float* val, const __global uint* cols,
                                  const __global uint* rowDelimiters,
                                  __read_only image1d_buffer_t vec, uint dim,
                                  __global float* out)
{
    SPMV_SCALAR_BODY(X_TEX)
}

__kernel void spmv_csr_vector(const __global float* val, const __global uint* cols,
                              const __global uint* rowDelimiters, const __global float* vec,
                              uint dim, __global float* out)
{
    SPMV_VECTOR_BODY(X_GLOBAL)
}

__kernel void spmv_csr_vector_ro(const __global float* restrict val,
                                 const __global uint* restrict cols,
                                 const __global uint* restrict rowDelimiters,
                                 const __global float* restrict vec, uint dim,
                                 __global float* restrict out)
{
    SPMV_VECTOR_BODY(X_RO)
}

__kernel void spmv_csr_vector_tex(const __global float* val, const __global uint* cols,
                                  const __global uint* rowDelimiters,
                                  __read_only image1d_buffer_t vec, uint dim,
                                  __global float* out)
{
    SPMV_VECTOR_BODY(X_TEX)
}
