/* 3D finite-difference stencil of radius RADIUS (one time step of FDTD3d), written for clvscu
 * in the shape of the FDTD3d sample of NVIDIA's SDK (the kernel the paper's Figs. 6-7 study):
 * one work-item per (x, y) column marching along z with a register queue of 2*RADIUS+1 z
 * values, and a local-memory tile with halos for the x and y neighbours.
 * kernels_cl/stencil.cl is the OpenCL twin: same names, parameters and algorithm text.
 *
 * Grid: nx * ny * nz floats, x fastest, boundary included (no padding). A point is interior
 * when it lies at least RADIUS cells from every face; an interior point gets
 *     out = c[0] * in + sum_{i=1..RADIUS} c[i] * (its six neighbours at distance i),
 * every other point gets its input value unchanged, so every output is written exactly once.
 *
 * Unroll points: A is the outer z loop (the SDK writes "#pragma unroll 9" there), B the radius
 * loop (the SDK's "#pragma unroll 4", a full unroll for RADIUS 4). The queue-shift loops carry
 * no pragma: their trip counts are constants that every compiler unrolls.
 *
 * Coefficients come from a plain global-memory buffer (const float*) on both sides. The SDK
 * keeps them in constant memory; which memory space serves them best is a separate study, so
 * both sides read them the same plain way here.
 *
 * Launch: the harness's shape is 1D. Work-group = a tile of TILE_X x TILE_Y columns (TILE_Y =
 * WG_SIZE / TILE_X), groups = (nx / TILE_X) * (ny / TILE_Y), tiles numbered x fastest. The
 * harness checks nx % TILE_X == 0, ny % TILE_Y == 0, TILE_Y >= RADIUS and nz >= 2*RADIUS+1.
 *
 * Tile knobs (the tuner's stencil space, src/families/stencil/tiles.rs): ST_TILE_X sets the tile's
 * width (default 32, the shipped tile, so the studies run the same kernel); ST_TILE_Y, where
 * given, must be WG_SIZE / ST_TILE_X: a tile that does not match the work-group size, or that
 * is narrower or lower than RADIUS (its first RADIUS rows and columns load the halo), is then
 * a compile error.
 */

#define RADIUS 4
#ifndef ST_TILE_X
#define ST_TILE_X 32
#endif
#define TILE_X ST_TILE_X
#define TILE_Y (WG_SIZE / TILE_X)
#if defined(ST_TILE_Y) && \
    (ST_TILE_X * ST_TILE_Y != WG_SIZE || ST_TILE_Y < RADIUS || ST_TILE_X < RADIUS)
#error "stencil_fdtd3d: WG_SIZE must be ST_TILE_X * ST_TILE_Y, each at least RADIUS"
#endif

extern "C" __global__ void stencil_fdtd3d(const float* input, float* output,
                             const float* coeff, uint nx, uint ny, uint nz)
{
    __shared__ float tile[TILE_Y + 2 * RADIUS][TILE_X + 2 * RADIUS];
    const uint tx = threadIdx.x % TILE_X;
    const uint ty = threadIdx.x / TILE_X;
    const uint tilesX = nx / TILE_X;
    const uint gx = (blockIdx.x % tilesX) * TILE_X + tx;
    const uint gy = (blockIdx.x / tilesX) * TILE_Y + ty;
    /* This column's place in the tile (halo offset included). */
    const uint lx = tx + RADIUS;
    const uint ly = ty + RADIUS;
    const uint plane = nx * ny;
    const bool interiorXY = gx >= RADIUS && gx + RADIUS < nx && gy >= RADIUS && gy + RADIUS < ny;

    /* The register queue: behind[i] holds z - 1 - i, infront[i] holds z + 1 + i. The planes
     * before z = 0 are never read (those outputs are boundary copies). */
    float behind[RADIUS];
    float infront[RADIUS];
    uint idx = gy * nx + gx;
    float current = input[idx];
    for (int i = 0; i < RADIUS; i++) {
        behind[i] = 0.0f;
        infront[i] = input[idx + (i + 1) * plane];
    }

    /* Step through the xy-planes */
    PRAGMA_UNROLL_A
    for (uint z = 0; z < nz; z++) {
        /* Halo above & below, left & right; cells outside the grid are read only by boundary
         * outputs, which are copies, so they get 0 instead of an out-of-range load. */
        if (ty < RADIUS) {
            tile[ty][lx] = gy >= RADIUS ? input[idx - RADIUS * nx] : 0.0f;
            tile[ly + TILE_Y][lx] = gy + TILE_Y < ny ? input[idx + TILE_Y * nx] : 0.0f;
        }
        if (tx < RADIUS) {
            tile[ly][tx] = gx >= RADIUS ? input[idx - RADIUS] : 0.0f;
            tile[ly][lx + TILE_X] = gx + TILE_X < nx ? input[idx + TILE_X] : 0.0f;
        }
        tile[ly][lx] = current;
        __syncthreads();

        /* Compute the output value */
        float value = current;
        if (interiorXY && z >= RADIUS && z + RADIUS < nz) {
            value = coeff[0] * current;
            PRAGMA_UNROLL_B
            for (int i = 1; i <= RADIUS; i++) {
                value += coeff[i] * (infront[i - 1] + behind[i - 1] + tile[ly - i][lx] +
                                     tile[ly + i][lx] + tile[ly][lx - i] + tile[ly][lx + i]);
            }
        }
        output[idx] = value;
        /* Every work-item is done reading the tile before the next plane overwrites it */
        __syncthreads();

        /* Advance the queue (move the thread-front) */
        for (int i = RADIUS - 1; i > 0; i--)
            behind[i] = behind[i - 1];
        behind[0] = current;
        current = infront[0];
        for (int i = 0; i < RADIUS - 1; i++)
            infront[i] = infront[i + 1];
        infront[RADIUS - 1] = z + RADIUS + 1 < nz ? input[idx + (RADIUS + 1) * plane] : 0.0f;
        idx += plane;
    }
}
