/* 2D stencil (St2D): one step of a 9-point stencil on a row-major ROWS x COLS grid, as SHOC's
 * Stencil2D weighs it: the centre, its four edge neighbours and its four corner neighbours,
 * one weight each. Points on the border are copied unchanged. kernels_cu/stencil2d.cu is the
 * CUDA twin: same names, parameters and algorithm text.
 *
 * The launch is 2-D: x over the columns, y over the rows, one point per work-item; both
 * kernels check bounds, so any ROWS x COLS runs. */

/* Naive: every work-item reads its nine points from global memory (the caches serve the
 * reuse). */
__kernel void stencil2d_naive(const __global float* in, __global float* out, uint rows,
                              uint cols, float w_centre, float w_edge, float w_corner)
{
    uint col = get_global_id(0);
    uint row = get_global_id(1);
    if (row >= rows || col >= cols)
        return;
    uint i = row * cols + col;
    if (row == 0 || col == 0 || row + 1 >= rows || col + 1 >= cols) {
        out[i] = in[i];
        return;
    }
    float edge = in[i - cols] + in[i + cols] + in[i - 1] + in[i + 1];
    float corner = in[i - cols - 1] + in[i - cols + 1] + in[i + cols - 1] + in[i + cols + 1];
    out[i] = w_centre * in[i] + w_edge * edge + w_corner * corner;
}

/* The harness defines WG_SIZE_Y for every 2-D launch; a compile without it (a 1-D check of the
 * file) gets one row per work-group. */
#ifndef WG_SIZE_Y
#define WG_SIZE_Y 1
#endif

#define ST2_W (WG_SIZE + 2)
#define ST2_H (WG_SIZE_Y + 2)

/* Local: a work-group stages its WG_SIZE x WG_SIZE_Y points and their one-point halo in local
 * memory (every work-item loading the tile's points in turn), then computes from there. */
__kernel void stencil2d_local(const __global float* in, __global float* out, uint rows,
                              uint cols, float w_centre, float w_edge, float w_corner)
{
    __local float tile[ST2_H][ST2_W];
    uint lx = get_local_id(0);
    uint ly = get_local_id(1);
    uint first_col = get_group_id(0) * WG_SIZE;
    uint first_row = get_group_id(1) * WG_SIZE_Y;
    for (uint k = ly * WG_SIZE + lx; k < ST2_H * ST2_W; k += WG_SIZE * WG_SIZE_Y) {
        /* Unsigned: the halo row and column before the first wrap around and fail the check. */
        uint r = first_row + k / ST2_W - 1;
        uint c = first_col + k % ST2_W - 1;
        tile[k / ST2_W][k % ST2_W] = (r < rows && c < cols) ? in[r * cols + c] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint row = first_row + ly;
    uint col = first_col + lx;
    if (row >= rows || col >= cols)
        return;
    uint i = row * cols + col;
    uint ty = ly + 1;
    uint tx = lx + 1;
    if (row == 0 || col == 0 || row + 1 >= rows || col + 1 >= cols) {
        out[i] = tile[ty][tx];
        return;
    }
    float edge = tile[ty - 1][tx] + tile[ty + 1][tx] + tile[ty][tx - 1] + tile[ty][tx + 1];
    float corner = tile[ty - 1][tx - 1] + tile[ty - 1][tx + 1] + tile[ty + 1][tx - 1] +
                   tile[ty + 1][tx + 1];
    out[i] = w_centre * tile[ty][tx] + w_edge * edge + w_corner * corner;
}
