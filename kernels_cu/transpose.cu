/* Matrix transpose (TranP): out = in^T, `in` a row-major ROWS x COLS matrix, `out` the
 * row-major COLS x ROWS one. kernels_cl/transpose.cl is the OpenCL twin: same names, parameters
 * and algorithm text.
 *
 * The launch is 2-D: x over the input's columns, y over its rows. Both kernels check bounds,
 * so any ROWS x COLS runs. */

/* Naive: one element per work-item. The reads along a row are coalesced; the writes land a
 * whole output row (ROWS floats) apart, one memory transaction each. */
extern "C" __global__ void transpose_naive(const float* in, float* out, uint rows, uint cols)
{
    uint col = (blockIdx.x * blockDim.x + threadIdx.x);
    uint row = (blockIdx.y * blockDim.y + threadIdx.y);
    if (row < rows && col < cols)
        out[col * rows + row] = in[row * cols + col];
}

/* Local: a work-group moves one TR_TILE x TR_TILE tile through local memory, so that both the
 * reads and the writes run along rows (coalesced). The tile's rows are TR_TILE + 1 floats
 * long: the work-items of a warp that read one tile column then hit 32 different banks. The
 * work-group is TR_TILE wide (the harness allows no other WG_SIZE) and WG_SIZE_Y tall; each
 * work-item moves the tile rows ly, ly + WG_SIZE_Y, ... */
#define TR_TILE 32

/* The harness defines WG_SIZE_Y for every 2-D launch; a compile without it (a 1-D check of the
 * file) gets one row per work-group. */
#ifndef WG_SIZE_Y
#define WG_SIZE_Y 1
#endif

extern "C" __global__ void transpose_local(const float* in, float* out, uint rows, uint cols)
{
    __shared__ float tile[TR_TILE][TR_TILE + 1];
    uint lx = threadIdx.x;
    uint ly = threadIdx.y;
    uint tile_col = blockIdx.x * TR_TILE;
    uint tile_row = blockIdx.y * TR_TILE;
    for (uint j = ly; j < TR_TILE; j += WG_SIZE_Y) {
        uint row = tile_row + j;
        uint col = tile_col + lx;
        if (row < rows && col < cols)
            tile[j][lx] = in[row * cols + col];
    }
    __syncthreads();
    /* Output row tile_col + j holds input column tile_col + j; its work-items write along it. */
    for (uint j = ly; j < TR_TILE; j += WG_SIZE_Y) {
        uint out_row = tile_col + j;
        uint out_col = tile_row + lx;
        if (out_row < cols && out_col < rows)
            out[out_row * rows + out_col] = tile[lx][j];
    }
}

/* Two copies with the naive kernel's launch and no transpose, for the price of a barrier on
 * a CPU device (Table VI: there local memory cost TranP a factor of 11). `copy` moves one
 * element per work-item; `copy_barrier` holds it in a register across one work-group barrier,
 * which a CPU runtime must honour by suspending or splitting the work-group. Their ratio is
 * the barrier's cost, the only step between them. */
extern "C" __global__ void transpose_copy(const float* in, float* out, uint rows, uint cols)
{
    uint col = (blockIdx.x * blockDim.x + threadIdx.x);
    uint row = (blockIdx.y * blockDim.y + threadIdx.y);
    if (row < rows && col < cols)
        out[row * cols + col] = in[row * cols + col];
}

extern "C" __global__ void transpose_copy_barrier(const float* in, float* out, uint rows, uint cols)
{
    uint col = (blockIdx.x * blockDim.x + threadIdx.x);
    uint row = (blockIdx.y * blockDim.y + threadIdx.y);
    float x = 0.0f;
    if (row < rows && col < cols)
        x = in[row * cols + col];
    __syncthreads();
    if (row < rows && col < cols)
        out[row * cols + col] = x;
}
