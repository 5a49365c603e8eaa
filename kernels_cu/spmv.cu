/* Sparse matrix-vector product y = A x, A in CSR form (val, cols, rowDelimiters), after SHOC's
 * spmv kernels: the scalar kernel gives each row one work-item, the vector kernel one warp of
 * WARP_SIZE work-items. kernels_cl/spmv.cl is the OpenCL twin.
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

extern "C" __global__ void spmv_csr_scalar(const float* val, const uint* cols,
                              const uint* rowDelimiters, const float* vec,
                              uint dim, float* out)
{
    uint myRow = blockIdx.x * blockDim.x + threadIdx.x;
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

extern "C" __global__ void spmv_csr_scalar_ro(const float* __restrict__ val,
                                 const uint* __restrict__ cols,
                                 const uint* __restrict__ rowDelimiters,
                                 const float* __restrict__ vec, uint dim,
                                 float* __restrict__ out)
{
    uint myRow = blockIdx.x * blockDim.x + threadIdx.x;
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

extern "C" __global__ void spmv_csr_scalar_tex(const float* val, const uint* cols,
                                  const uint* rowDelimiters,
                                  cudaTextureObject_t vec, uint dim,
                                  float* out)
{
    uint myRow = blockIdx.x * blockDim.x + threadIdx.x;
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

extern "C" __global__ void spmv_csr_vector(const float* val, const uint* cols,
                              const uint* rowDelimiters, const float* vec,
                              uint dim, float* out)
{
    __shared__ float partialSums[WG_SIZE];
    uint t = threadIdx.x;
    uint id = t & (WARP_SIZE - 1);
    uint warpsPerGroup = blockDim.x / WARP_SIZE;
    for (uint base = blockIdx.x * warpsPerGroup; base < dim;
         base += gridDim.x * warpsPerGroup) {
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
        __syncthreads();
        for (uint s = WARP_SIZE / 2; s > 0; s >>= 1) {
            if (id < s)
                partialSums[t] += partialSums[t + s];
            __syncthreads();
        }
        if (id == 0 && myRow < dim)
            out[myRow] = partialSums[t];
        __syncthreads();
    }
}

extern "C" __global__ void spmv_csr_vector_ro(const float* __restrict__ val,
                                 const uint* __restrict__ cols,
                                 const uint* __restrict__ rowDelimiters,
                                 const float* __restrict__ vec, uint dim,
                                 float* __restrict__ out)
{
    __shared__ float partialSums[WG_SIZE];
    uint t = threadIdx.x;
    uint id = t & (WARP_SIZE - 1);
    uint warpsPerGroup = blockDim.x / WARP_SIZE;
    for (uint base = blockIdx.x * warpsPerGroup; base < dim;
         base += gridDim.x * warpsPerGroup) {
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
        __syncthreads();
        for (uint s = WARP_SIZE / 2; s > 0; s >>= 1) {
            if (id < s)
                partialSums[t] += partialSums[t + s];
            __syncthreads();
        }
        if (id == 0 && myRow < dim)
            out[myRow] = partialSums[t];
        __syncthreads();
    }
}

extern "C" __global__ void spmv_csr_vector_tex(const float* val, const uint* cols,
                                  const uint* rowDelimiters,
                                  cudaTextureObject_t vec, uint dim,
                                  float* out)
{
    __shared__ float partialSums[WG_SIZE];
    uint t = threadIdx.x;
    uint id = t & (WARP_SIZE - 1);
    uint warpsPerGroup = blockDim.x / WARP_SIZE;
    for (uint base = blockIdx.x * warpsPerGroup; base < dim;
         base += gridDim.x * warpsPerGroup) {
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
        __syncthreads();
        for (uint s = WARP_SIZE / 2; s > 0; s >>= 1) {
            if (id < s)
                partialSums[t] += partialSums[t + s];
            __syncthreads();
        }
        if (id == 0 && myRow < dim)
            out[myRow] = partialSums[t];
        __syncthreads();
    }
}
