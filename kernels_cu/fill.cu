/* The fill article's kernels ("OpenCL Optimization": fill a 10^4 x 10^4 table with one value).
 * kernels_cl/fill.cl is the OpenCL twin: same names, parameters and algorithm text. Every kernel
 * has a bound check, so a launch rounded up to whole work-groups writes nothing extra. */

/* The article's 1D kernel: one float per work-item. */
extern "C" __global__ void fill_1d(float* out, float value, uint n)
{
    uint i = (blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n)
        out[i] = value;
}

/* The article's vectorised kernel: one float4 per work-item; the first work-item also
 * writes the n % 4 floats past the last whole float4 (the article's "correct code"). */
extern "C" __global__ void fill_float4(float* out, float value, uint n)
{
    uint i = (blockIdx.x * blockDim.x + threadIdx.x);
    uint n4 = n / 4u;
    float4 v;
    v.x = value;
    v.y = value;
    v.z = value;
    v.w = value;
    if (i < n4)
        ((float4*)out)[i] = v;
    if (i == 0u)
        for (uint t = n4 * 4u; t < n; ++t)
            out[t] = value;
}

/* float4's launch with scalar stores: four floats per work-item, one store each, a quarter of
 * the buffer apart, so that each store of a warp is coalesced. Against `fill_1d` it changes
 * the work per work-item (and the number of work-groups); against `fill_float4` only the
 * width of the store. The first work-item writes the n % 4 tail, as float4's does. */
extern "C" __global__ void fill_scalar4(float* out, float value, uint n)
{
    uint i = (blockIdx.x * blockDim.x + threadIdx.x);
    uint n4 = n / 4u;
    if (i < n4) {
        out[i] = value;
        out[i + n4] = value;
        out[i + 2u * n4] = value;
        out[i + 3u * n4] = value;
    }
    if (i == 0u)
        for (uint t = n4 * 4u; t < n; ++t)
            out[t] = value;
}

/* 2D with columns on dimension 0: neighbouring work-items store to neighbouring addresses
 * (coalesced). */
extern "C" __global__ void fill_2d_rows(float* out, float value, uint rows, uint cols)
{
    uint col = (blockIdx.x * blockDim.x + threadIdx.x);
    uint row = (blockIdx.y * blockDim.y + threadIdx.y);
    if (row < rows && col < cols)
        out[row * cols + col] = value;
}

/* The article's 2D kernel: rows on dimension 0, so neighbouring work-items store a whole row
 * apart (strided). */
extern "C" __global__ void fill_2d_article(float* out, float value, uint rows, uint cols)
{
    uint row = (blockIdx.x * blockDim.x + threadIdx.x);
    uint col = (blockIdx.y * blockDim.y + threadIdx.y);
    if (row < rows && col < cols)
        out[row * cols + col] = value;
}
