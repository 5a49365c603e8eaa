/* Constant memory as a fairness factor (Fang, Varbanescu & Sips 2011, Figs. 3 and 8).
 * kernels_cl/constant.cl is the OpenCL twin: same names and algorithm text. The one spelling
 * the twins differ in beyond the usual ones: data in constant memory is a __constant kernel
 * parameter there and a __constant__ module symbol of the same name here (the parity check
 * pairs exactly these two spellings). The harness fills both the same way, before timing. */

/* The nine taps of a 3x3 filter F (row-major) at the window whose top-left pixel is p, in an
 * image of row length w. The same expression for the filter in constant and global memory. */
#define SOBEL_9(F, p, w) \
    (F[0] * p[0] + F[1] * p[1] + F[2] * p[2] \
     + F[3] * p[w] + F[4] * p[w + 1u] + F[5] * p[w + 2u] \
     + F[6] * p[2u * w] + F[7] * p[2u * w + 1u] + F[8] * p[2u * w + 2u])

/* Sobel in X with its coefficients as literals ([-1 0 1; -2 0 2; -1 0 1]): the compiler sees
 * the zero column and reads six pixels, where a filter in memory costs nine. */
#define SOBEL_X_LITERAL(p, w) \
    ((p[2] - p[0]) + 2.0f * (p[w + 2u] - p[w]) + (p[2u * w + 2u] - p[2u * w]))

/* The filter and the table in constant memory: module symbols, filled by the harness before
 * timing (cuModuleGetGlobal + a copy). TABLE holds up to 8192 entries (32 KiB). */
__constant__ float FILTER[9];
__constant__ float TABLE[8192];

/* Sobel in X on a grey float image of w x h pixels (row-major): one work-item per pixel on a
 * 2D launch; the outermost rows and columns are written as 0. Three placements of the filter:
 * constant memory, global memory, literals. */
extern "C" __global__ void sobel_constant(const float* in, float* out,
                                          uint w, uint h)
{
    uint x = (blockIdx.x * blockDim.x + threadIdx.x);
    uint y = (blockIdx.y * blockDim.y + threadIdx.y);
    if (x >= w || y >= h)
        return;
    float v = 0.0f;
    if (x > 0u && y > 0u && x + 1u < w && y + 1u < h) {
        const float* p = in + (y - 1u) * w + (x - 1u);
        v = SOBEL_9(FILTER, p, w);
    }
    out[y * w + x] = v;
}

extern "C" __global__ void sobel_global(const float* in, float* out,
                                        const float* FILTER, uint w, uint h)
{
    uint x = (blockIdx.x * blockDim.x + threadIdx.x);
    uint y = (blockIdx.y * blockDim.y + threadIdx.y);
    if (x >= w || y >= h)
        return;
    float v = 0.0f;
    if (x > 0u && y > 0u && x + 1u < w && y + 1u < h) {
        const float* p = in + (y - 1u) * w + (x - 1u);
        v = SOBEL_9(FILTER, p, w);
    }
    out[y * w + x] = v;
}

extern "C" __global__ void sobel_literal(const float* in, float* out, uint w, uint h)
{
    uint x = (blockIdx.x * blockDim.x + threadIdx.x);
    uint y = (blockIdx.y * blockDim.y + threadIdx.y);
    if (x >= w || y >= h)
        return;
    float v = 0.0f;
    if (x > 0u && y > 0u && x + 1u < w && y + 1u < h) {
        const float* p = in + (y - 1u) * w + (x - 1u);
        v = SOBEL_X_LITERAL(p, w);
    }
    out[y * w + x] = v;
}

/* Broadcast (the whitepaper's rule for constant memory: a read is served at once when all
 * work-items of a warp read one address, and serialised over the distinct addresses
 * otherwise). Each work-item reads every one of the n entries of TABLE once (n a power of
 * two) and sums them. Uniform: at step k every work-item reads entry k + group; divergent:
 * work-item l reads entry k + group + l, so a warp reads 32 neighbouring addresses. The group
 * id keeps the compiler from folding the index; every read is a distinct address of its
 * work-item, so none can be reused from a register. */
#define BROADCAST_UNIFORM(k, n) (((k) + blockIdx.x) & ((n) - 1u))
#define BROADCAST_DIVERGENT(k, n) (((k) + blockIdx.x + threadIdx.x) & ((n) - 1u))

extern "C" __global__ void broadcast_constant_uniform(float* out, uint n)
{
    float acc = 0.0f;
    for (uint k = 0u; k < n; ++k)
        acc += TABLE[BROADCAST_UNIFORM(k, n)];
    out[(blockIdx.x * blockDim.x + threadIdx.x)] = acc;
}

extern "C" __global__ void broadcast_constant_divergent(float* out, uint n)
{
    float acc = 0.0f;
    for (uint k = 0u; k < n; ++k)
        acc += TABLE[BROADCAST_DIVERGENT(k, n)];
    out[(blockIdx.x * blockDim.x + threadIdx.x)] = acc;
}

extern "C" __global__ void broadcast_global_uniform(const float* TABLE, float* out, uint n)
{
    float acc = 0.0f;
    for (uint k = 0u; k < n; ++k)
        acc += TABLE[BROADCAST_UNIFORM(k, n)];
    out[(blockIdx.x * blockDim.x + threadIdx.x)] = acc;
}

extern "C" __global__ void broadcast_global_divergent(const float* TABLE, float* out, uint n)
{
    float acc = 0.0f;
    for (uint k = 0u; k < n; ++k)
        acc += TABLE[BROADCAST_DIVERGENT(k, n)];
    out[(blockIdx.x * blockDim.x + threadIdx.x)] = acc;
}
