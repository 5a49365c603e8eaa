/* BabelStream's kernels (Deakin, Price, Martineau and McIntosh-Smith, "GPU-STREAM v2.0",
 * 2016): Copy, Mul, Add, Triad and Dot on arrays of doubles, with its start values and
 * scalar. kernels_cl/stream.cl is the OpenCL twin: same names, parameters and algorithm text.
 *
 * One element per work-item with a bound check; Dot is a grid-stride loop over a fixed
 * number of work-groups, a tree in local memory per work-group (WG_SIZE a power of two),
 * then stream_dot_final sums the work-groups' partial sums in one work-group. stream_init
 * sets the arrays before timing, as BabelStream's init_arrays does. */

#define STREAM_SCALAR 0.4

extern "C" __global__ void stream_init(double* a, double* b, double* c, const double* start, uint n)
{
    uint i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[i] = start[0];
        b[i] = start[1];
        c[i] = start[2];
    }
}

extern "C" __global__ void stream_copy(const double* a, double* c, uint n)
{
    uint i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i];
}

extern "C" __global__ void stream_mul(double* b, const double* c, uint n)
{
    uint i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        b[i] = STREAM_SCALAR * c[i];
}

extern "C" __global__ void stream_add(const double* a, const double* b, double* c, uint n)
{
    uint i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

extern "C" __global__ void stream_triad(double* a, const double* b, const double* c, uint n)
{
    uint i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i] = b[i] + STREAM_SCALAR * c[i];
}

extern "C" __global__ void stream_dot(const double* a, const double* b, double* sums, uint n)
{
    __shared__ double partial[WG_SIZE];
    uint lid = threadIdx.x;
    double sum = 0.0;
    for (uint i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        sum += a[i] * b[i];
    partial[lid] = sum;
    for (uint offset = WG_SIZE / 2u; offset > 0u; offset >>= 1) {
        __syncthreads();
        if (lid < offset)
            partial[lid] += partial[lid + offset];
    }
    if (lid == 0u)
        sums[blockIdx.x] = partial[0];
}

/* One work-group: the sum of the first `groups` partial sums into out[0]. */
extern "C" __global__ void stream_dot_final(const double* sums, double* out, uint groups)
{
    __shared__ double partial[WG_SIZE];
    uint lid = threadIdx.x;
    double sum = 0.0;
    for (uint g = lid; g < groups; g += WG_SIZE)
        sum += sums[g];
    partial[lid] = sum;
    for (uint offset = WG_SIZE / 2u; offset > 0u; offset >>= 1) {
        __syncthreads();
        if (lid < offset)
            partial[lid] += partial[lid + offset];
    }
    if (lid == 0u)
        out[0] = partial[0];
}
