/* Constant memory as a fairness factor (Fang, Varbanescu & Sips 2011, Figs. 3 and 8).
 * kernels_cl/constant.cl is the OpenCL twin: same names and algorithm text. The one spelling
 * the twins differ in beyond the usual ones: data in constant memory is a __constant kernel
 * parameter there and a __constant__ module symbol of the same name here (the parity check
 * pairs exactly these two spellings). The harness fills both the same way, before timing. */

/* The filter and the table in constant memory: module symbols, filled by the harness before
 * timing (cuModuleGetGlobal + a copy). TABLE holds up to 8192 entries (32 KiB). */
__constant__ float FILTER[9];
__constant__ float TABLE[8192];

/* Sobel in X on a grey float image of w x h pixels (row-major), on a 2D launch; the outermost
 * rows and columns are written as 0. Three placements of the filter: constant memory, global
 * memory, literals.
 *
 * Each work-item computes SOBEL_ROWS pixels down one column (rows y0 .. y0 + SOBEL_ROWS - 1 of
 * column x) and slides the 3x3 window down in registers: a pixel row enters the window once,
 * with three reads (left, centre, right), where one work-item per pixel reads nine pixels
 * (six for the literals) and every image row is read by three rows of work-items. Why this
 * is faster: with one pixel per work-item Sobel reached about 1.9 TB/s on both the H100 and
 * the H200, whose device copies differ by 40% (0.62x and 0.47x of the copy): the SMs' load
 * issue (L1 requests, two per misaligned row read) bounded it, not DRAM. Three reads per
 * pixel instead of nine, and the index arithmetic and border tests paid once per column
 * strip, leave DRAM as the bound. What is computed, and the bytes counted (one read and one
 * write of the image), are unchanged; the harness launches rows / (local_y * SOBEL_ROWS)
 * groups in y (src/families/constmem/mod.rs, SOBEL_ROWS there too).
 *
 * The filter taps are read once per work-item: a store to `out` may alias a filter in global
 * memory, so a compiler would otherwise re-read all nine taps for every pixel; reading them
 * once in every placement keeps the three placements the same text. */
#define SOBEL_ROWS 8

/* The nine taps of a 3x3 filter F (row-major), read once into registers f0 .. f8. */
#define SOBEL_TAPS(F)                                                                              \
    float f0 = F[0], f1 = F[1], f2 = F[2], f3 = F[3], f4 = F[4], f5 = F[5], f6 = F[6], f7 = F[7],  \
          f8 = F[8]

/* The filter over the window: rows a (above), b (centre), c (below), each (left, centre,
 * right). SOBEL_9: the taps in registers; SOBEL_X_LITERAL: Sobel in X with its coefficients as
 * literals ([-1 0 1; -2 0 2; -1 0 1]): the compiler sees the zero column and never reads the
 * centre pixels, where a filter in memory costs nine. */
#define SOBEL_9()                                                                                  \
    (f0 * a0 + f1 * a1 + f2 * a2 + f3 * b0 + f4 * b1 + f5 * b2 + f6 * c0 + f7 * c1 + f8 * c2)
#define SOBEL_X_LITERAL() ((a2 - a0) + 2.0f * (b2 - b0) + (c2 - c0))

/* One work-item's column strip; EXPR is SOBEL_9() or SOBEL_X_LITERAL(). */
#define SOBEL_STRIP(EXPR)                                                                          \
    uint x = (blockIdx.x * blockDim.x + threadIdx.x);                                              \
    uint y = (blockIdx.y * blockDim.y + threadIdx.y) * SOBEL_ROWS;                                 \
    if (x >= w || y >= h)                                                                          \
        return;                                                                                    \
    uint yEnd = min(y + SOBEL_ROWS, h);                                                            \
    if (x == 0u || x + 1u == w) {                                                                  \
        for (; y < yEnd; ++y)                                                                      \
            out[y * w + x] = 0.0f;                                                                 \
        return;                                                                                    \
    }                                                                                              \
    if (y == 0u) {                                                                                 \
        out[x] = 0.0f;                                                                             \
        y = 1u;                                                                                    \
        if (y >= yEnd)                                                                             \
            return;                                                                                \
    }                                                                                              \
    const float* p = in + (y - 1u) * w + (x - 1u);                                                 \
    float a0 = p[0], a1 = p[1], a2 = p[2];                                                         \
    p += w;                                                                                        \
    float b0 = p[0], b1 = p[1], b2 = p[2];                                                         \
    /* Rows y .. yStop - 1 have a row below; the last row of the image is a border. */             \
    uint yStop = min(yEnd, h - 1u);                                                                \
    PRAGMA_UNROLL_A                                                                                \
    for (; y < yStop; ++y) {                                                                       \
        p += w;                                                                                    \
        float c0 = p[0], c1 = p[1], c2 = p[2];                                                     \
        out[y * w + x] = EXPR;                                                                     \
        a0 = b0;                                                                                   \
        a1 = b1;                                                                                   \
        a2 = b2;                                                                                   \
        b0 = c0;                                                                                   \
        b1 = c1;                                                                                   \
        b2 = c2;                                                                                   \
    }                                                                                              \
    if (y < yEnd)                                                                                  \
        out[y * w + x] = 0.0f;

extern "C" __global__ void sobel_constant(const float* in, float* out,
                                          uint w, uint h)
{
    SOBEL_TAPS(FILTER);
    SOBEL_STRIP(SOBEL_9())
}

extern "C" __global__ void sobel_global(const float* in, float* out,
                                        const float* FILTER, uint w, uint h)
{
    SOBEL_TAPS(FILTER);
    SOBEL_STRIP(SOBEL_9())
}

extern "C" __global__ void sobel_literal(const float* in, float* out, uint w, uint h)
{
    SOBEL_STRIP(SOBEL_X_LITERAL())
}

/* The _x4 kernels: the same filter, SOBEL_COLS (4) columns per work-item as well as SOBEL_ROWS
 * rows, each image row entering the window as one aligned float4 (columns x .. x + 3) and two
 * scalar neighbours (x - 1, x + 4), and each output row leaving as one float4 store. Why: at
 * one column per work-item a row costs three loads (two for the literals) and a store per
 * pixel, and the H200 ran Sobel at 0.76x its device copy with DRAM not yet the bound; here it
 * is three loads and a store per four pixels, as few requests per byte as a float4 copy. The
 * border columns 0 and w - 1 are computed from a clamped neighbour and then written as 0, so
 * the interior has no test per pixel. The rows are 16-byte aligned only where w is a multiple
 * of 4: the harness refuses other widths for these kernels (src/families/constmem/mod.rs), and
 * launches w / 4 work-items in x. */
#define SOBEL_COLS 4

/* EXPR9 over the window columns (l, m, r) of rows a, b, c. */
#define SOBEL_9_AT(a0, a1, a2, b0, b1, b2, c0, c1, c2)                                             \
    (f0 * (a0) + f1 * (a1) + f2 * (a2) + f3 * (b0) + f4 * (b1) + f5 * (b2) + f6 * (c0) +           \
     f7 * (c1) + f8 * (c2))
#define SOBEL_X_LITERAL_AT(a0, a1, a2, b0, b1, b2, c0, c1, c2)                                     \
    (((a2) - (a0)) + 2.0f * ((b2) - (b0)) + ((c2) - (c0)))

/* One float4 of zeros stored at out + i. */
#define SOBEL_STORE_ZERO4(i)                                                                       \
    {                                                                                              \
        float4 z;                                                                                  \
        z.x = 0.0f;                                                                                \
        z.y = 0.0f;                                                                                \
        z.z = 0.0f;                                                                                \
        z.w = 0.0f;                                                                                \
        *(float4*)(out + (i)) = z;                                                        \
    }

/* Row r of the window: its float4 and its two neighbours, from the row starting at `row`. */
#define SOBEL_LOAD4(R)                                                                             \
    float4 R = *(const float4*)(row + x);                                                          \
    float R##l = row[left];                                                                        \
    float R##r = row[right]

/* One work-item's strip of 4 columns; AT is SOBEL_9_AT or SOBEL_X_LITERAL_AT. */
#define SOBEL_STRIP4(AT)                                                                           \
    uint x = (blockIdx.x * blockDim.x + threadIdx.x) * SOBEL_COLS;                                 \
    uint y = (blockIdx.y * blockDim.y + threadIdx.y) * SOBEL_ROWS;                                 \
    if (x >= w || y >= h)                                                                          \
        return;                                                                                    \
    uint yEnd = min(y + SOBEL_ROWS, h);                                                            \
    if (y == 0u) {                                                                                 \
        SOBEL_STORE_ZERO4(x)                                                                       \
        y = 1u;                                                                                    \
        if (y >= yEnd)                                                                             \
            return;                                                                                \
    }                                                                                              \
    /* Clamped into the row at the borders, where the result is overwritten with 0. */             \
    uint left = x == 0u ? x : x - 1u;                                                              \
    uint right = x + SOBEL_COLS == w ? x + SOBEL_COLS - 1u : x + SOBEL_COLS;                       \
    const float* row = in + (y - 1u) * w;                                                          \
    SOBEL_LOAD4(a);                                                                                \
    row += w;                                                                                      \
    SOBEL_LOAD4(b);                                                                                \
    uint yStop = min(yEnd, h - 1u);                                                                \
    PRAGMA_UNROLL_A                                                                                \
    for (; y < yStop; ++y) {                                                                       \
        row += w;                                                                                  \
        SOBEL_LOAD4(c);                                                                            \
        float4 o;                                                                                  \
        o.x = AT(al, a.x, a.y, bl, b.x, b.y, cl, c.x, c.y);                                        \
        o.y = AT(a.x, a.y, a.z, b.x, b.y, b.z, c.x, c.y, c.z);                                     \
        o.z = AT(a.y, a.z, a.w, b.y, b.z, b.w, c.y, c.z, c.w);                                     \
        o.w = AT(a.z, a.w, ar, b.z, b.w, br, c.z, c.w, cr);                                        \
        if (x == 0u)                                                                               \
            o.x = 0.0f;                                                                            \
        if (x + SOBEL_COLS == w)                                                                   \
            o.w = 0.0f;                                                                            \
        *(float4*)(out + y * w + x) = o;                                                  \
        a = b;                                                                                     \
        al = bl;                                                                                   \
        ar = br;                                                                                   \
        b = c;                                                                                     \
        bl = cl;                                                                                   \
        br = cr;                                                                                   \
    }                                                                                              \
    if (y < yEnd)                                                                                  \
        SOBEL_STORE_ZERO4(y * w + x)
extern "C" __global__ void sobel_constant_x4(const float* in, float* out,
                                             uint w, uint h)
{
    SOBEL_TAPS(FILTER);
    SOBEL_STRIP4(SOBEL_9_AT)
}

extern "C" __global__ void sobel_global_x4(const float* in, float* out,
                                           const float* FILTER, uint w, uint h)
{
    SOBEL_TAPS(FILTER);
    SOBEL_STRIP4(SOBEL_9_AT)
}

extern "C" __global__ void sobel_literal_x4(const float* in, float* out, uint w, uint h)
{
    SOBEL_STRIP4(SOBEL_X_LITERAL_AT)
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
