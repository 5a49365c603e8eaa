/* Sparse matrix-vector product y = A x, A in CSR form (val, cols, rowDelimiters), after SHOC's
 * spmv kernels: the scalar kernel gives each row one work-item, the vector kernel one warp of
 * WARP_SIZE work-items. kernels_cu/spmv.cu is the CUDA twin.
 *
 * Each kernel comes in three read paths of the gathered vector x, the paper's Figs. 4-5 factor:
 *   (plain)  x through a const pointer: ordinary global loads;
 *   _ro      every pointer const restrict, and x read with LOAD_RO (CUDA: __ldg; OpenCL C has
 *            no such built-in, so restrict is its only request for the read-only path);
 *   _tex     x through the texture path: an image1d_buffer_t read with read_imagef here, a
 *            texture object read with tex1Dfetch in CUDA (FETCH_F1 in the preludes).
 * Only the reads of x differ between the three; the matrix is streamed the same way.
 *
 * The vector kernel: WG_SIZE / WARP_SIZE rows per work-group at a time, grid-striding over
 * the rows so that any group count covers the matrix; its reduction is synchronised with a
 * barrier at every step (SHOC's warp-synchronous form is racy since Volta). The trip count of
 * the row loop is the same for every work-item of a group, so every barrier is reached by all.
 */

__kernel void spmv_csr_scalar(const __global float* val, const __global uint* cols,
                              const __global uint* rowDelimiters, const __global float* vec,
                              uint dim, __global float* out)
{
    uint myRow = get_global_id(0);
    if (myRow < dim) {
        float t = 0.0f;
        uint start = rowDelimiters[myRow];
        uint end = rowDelimiters[myRow + 1];
        for (uint j = start; j < end; j++) {
            uint col = cols[j];
            t += val[j] * vec[col];
        }
        out[myRow] = t;
    }
}

__kernel void spmv_csr_scalar_ro(const __global float* restrict val,
                                 const __global uint* restrict cols,
                                 const __global uint* restrict rowDelimiters,
                                 const __global float* restrict vec, uint dim,
                                 __global float* restrict out)
{
    uint myRow = get_global_id(0);
    if (myRow < dim) {
        float t = 0.0f;
        uint start = rowDelimiters[myRow];
        uint end = rowDelimiters[myRow + 1];
        for (uint j = start; j < end; j++) {
            uint col = cols[j];
            t += val[j] * LOAD_RO(&vec[col]);
        }
        out[myRow] = t;
    }
}

__kernel void spmv_csr_scalar_tex(const __global float* val, const __global uint* cols,
                                  const __global uint* rowDelimiters,
                                  __read_only image1d_buffer_t vec, uint dim,
                                  __global float* out)
{
    uint myRow = get_global_id(0);
    if (myRow < dim) {
        float t = 0.0f;
        uint start = rowDelimiters[myRow];
        uint end = rowDelimiters[myRow + 1];
        for (uint j = start; j < end; j++) {
            uint col = cols[j];
            t += val[j] * FETCH_F1(vec, col);
        }
        out[myRow] = t;
    }
}

__kernel void spmv_csr_vector(const __global float* val, const __global uint* cols,
                              const __global uint* rowDelimiters, const __global float* vec,
                              uint dim, __global float* out)
{
    __local float partialSums[WG_SIZE];
    uint t = get_local_id(0);
    uint id = t & (WARP_SIZE - 1);
    uint warpsPerGroup = get_local_size(0) / WARP_SIZE;
    for (uint base = get_group_id(0) * warpsPerGroup; base < dim;
         base += get_num_groups(0) * warpsPerGroup) {
        uint myRow = base + t / WARP_SIZE;
        float mySum = 0.0f;
        if (myRow < dim) {
            uint start = rowDelimiters[myRow];
            uint end = rowDelimiters[myRow + 1];
            for (uint j = start + id; j < end; j += WARP_SIZE) {
                uint col = cols[j];
                mySum += val[j] * vec[col];
            }
        }
        partialSums[t] = mySum;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint s = WARP_SIZE / 2; s > 0; s >>= 1) {
            if (id < s)
                partialSums[t] += partialSums[t + s];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (id == 0 && myRow < dim)
            out[myRow] = partialSums[t];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

__kernel void spmv_csr_vector_ro(const __global float* restrict val,
                                 const __global uint* restrict cols,
                                 const __global uint* restrict rowDelimiters,
                                 const __global float* restrict vec, uint dim,
                                 __global float* restrict out)
{
    __local float partialSums[WG_SIZE];
    uint t = get_local_id(0);
    uint id = t & (WARP_SIZE - 1);
    uint warpsPerGroup = get_local_size(0) / WARP_SIZE;
    for (uint base = get_group_id(0) * warpsPerGroup; base < dim;
         base += get_num_groups(0) * warpsPerGroup) {
        uint myRow = base + t / WARP_SIZE;
        float mySum = 0.0f;
        if (myRow < dim) {
            uint start = rowDelimiters[myRow];
            uint end = rowDelimiters[myRow + 1];
            for (uint j = start + id; j < end; j += WARP_SIZE) {
                uint col = cols[j];
                mySum += val[j] * LOAD_RO(&vec[col]);
            }
        }
        partialSums[t] = mySum;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint s = WARP_SIZE / 2; s > 0; s >>= 1) {
            if (id < s)
                partialSums[t] += partialSums[t + s];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (id == 0 && myRow < dim)
            out[myRow] = partialSums[t];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

__kernel void spmv_csr_vector_tex(const __global float* val, const __global uint* cols,
                                  const __global uint* rowDelimiters,
                                  __read_only image1d_buffer_t vec, uint dim,
                                  __global float* out)
{
    __local float partialSums[WG_SIZE];
    uint t = get_local_id(0);
    uint id = t & (WARP_SIZE - 1);
    uint warpsPerGroup = get_local_size(0) / WARP_SIZE;
    for (uint base = get_group_id(0) * warpsPerGroup; base < dim;
         base += get_num_groups(0) * warpsPerGroup) {
        uint myRow = base + t / WARP_SIZE;
        float mySum = 0.0f;
        if (myRow < dim) {
            uint start = rowDelimiters[myRow];
            uint end = rowDelimiters[myRow + 1];
            for (uint j = start + id; j < end; j += WARP_SIZE) {
                uint col = cols[j];
                mySum += val[j] * FETCH_F1(vec, col);
            }
        }
        partialSums[t] = mySum;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint s = WARP_SIZE / 2; s > 0; s >>= 1) {
            if (id < s)
                partialSums[t] += partialSums[t + s];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (id == 0 && myRow < dim)
            out[myRow] = partialSums[t];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
