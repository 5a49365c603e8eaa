/* Single-precision GEMM, C = A * B, all three N x N and row-major (the paper's compute-bound
 * case, beside the vendor's cuBLAS SGEMM). kernels_cl/sgemm.cl is the OpenCL twin: same names,
 * parameters and algorithm text.
 *
 * The launch is 1D (groups x WG_SIZE); each kernel maps a work-group to a square output tile
 * and a work-item to a place in it, the same way on both sides. Work-groups stride over the
 * tiles, so any group count computes every tile (the default is one group per tile). The
 * harness refuses N that is not a multiple of the tile. */

#define SG_TS 16

/* Shared-memory tiling: a 16 x 16 work-group computes a 16 x 16 tile of C, one element per
 * work-item, staging 16 x 16 tiles of A and B through local memory. WG_SIZE must be 256. */
extern "C" __global__ void sgemm_tiled16(const float* a, const float* b, float* c,
                            uint n)
{
    __shared__ float as[SG_TS][SG_TS];
    __shared__ float bs[SG_TS][SG_TS];
    uint tx = threadIdx.x % SG_TS;
    uint ty = threadIdx.x / SG_TS;
    uint per_row = n / SG_TS;
    uint tiles = per_row * per_row;
    for (uint t = blockIdx.x; t < tiles; t += gridDim.x) {
        uint row = (t / per_row) * SG_TS + ty;
        uint col = (t % per_row) * SG_TS + tx;
        float acc = 0.0f;
        for (uint k0 = 0; k0 < n; k0 += SG_TS) {
            as[ty][tx] = a[row * n + k0 + tx];
            bs[ty][tx] = b[(k0 + ty) * n + col];
            __syncthreads();
            for (uint k = 0; k < SG_TS; ++k)
                acc += as[ty][k] * bs[k][tx];
            __syncthreads();
        }
        c[row * n + col] = acc;
    }
}

/* Register blocking: a work-group of 256 computes a 128 x 128 tile of C, each work-item an
 * 8 x 8 micro-tile held in registers, stepping through K 8 at a time. Per K-step the group
 * stages a 128 x 8 slice of A (stored transposed, so a work-item reads its 8 A values as two
 * float4) and an 8 x 128 slice of B through local memory, loading both with float4 reads.
 *
 * A work-item's 8 rows are two runs of 4 (ty*4 and 64 + ty*4), likewise its 8 columns: eight
 * neighbouring work-items then read 128 contiguous bytes of local memory per float4 load, with
 * no bank conflict. The transposed A slice has rows of 128 + 4 floats so that the transposing
 * stores of one warp fall in different banks (the pad keeps float4 alignment). */
#define SG_BM 128
#define SG_BK 8
#define SG_PAD 4

extern "C" __global__ void sgemm_blocked(const float* a, const float* b, float* c,
                            uint n)
{
    __shared__ float as[SG_BK][SG_BM + SG_PAD];
    __shared__ float bs[SG_BK][SG_BM];
    uint tid = threadIdx.x;
    uint tx = tid % 16u;
    uint ty = tid / 16u;
    /* Where this work-item loads: A as 128 rows of two float4, B as 8 rows of 32 float4. */
    uint a_row = tid / 2u;
    uint a_col = (tid % 2u) * 4u;
    uint b_row = tid / 32u;
    uint b_col = (tid % 32u) * 4u;
    uint per_row = n / SG_BM;
    uint tiles = per_row * per_row;
    for (uint t = blockIdx.x; t < tiles; t += gridDim.x) {
        uint row0 = (t / per_row) * SG_BM;
        uint col0 = (t % per_row) * SG_BM;
        float acc[8][8];
#pragma unroll
        for (uint i = 0; i < 8u; ++i) {
#pragma unroll
            for (uint j = 0; j < 8u; ++j)
                acc[i][j] = 0.0f;
        }
        const float* a_at = a + (row0 + a_row) * n + a_col;
        const float* b_at = b + b_row * n + col0 + b_col;
        /* The next K-step's slices are read from global memory into registers while this
         * step computes, so their latency hides behind the multiply-adds. */
        float4 av = *(const float4*)a_at;
        float4 bv = *(const float4*)b_at;
        for (uint k0 = 0; k0 < n; k0 += SG_BK) {
            as[a_col + 0u][a_row] = av.x;
            as[a_col + 1u][a_row] = av.y;
            as[a_col + 2u][a_row] = av.z;
            as[a_col + 3u][a_row] = av.w;
            *(float4*)&bs[b_row][b_col] = bv;
            __syncthreads();
            if (k0 + SG_BK < n) {
                av = *(const float4*)(a_at + k0 + SG_BK);
                bv = *(const float4*)(b_at + (k0 + SG_BK) * n);
            }
#pragma unroll
            for (uint k = 0; k < SG_BK; ++k) {
                float4 a_lo = *(float4*)&as[k][ty * 4u];
                float4 a_hi = *(float4*)&as[k][64u + ty * 4u];
                float4 b_lo = *(float4*)&bs[k][tx * 4u];
                float4 b_hi = *(float4*)&bs[k][64u + tx * 4u];
                float ar[8] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
                float br[8] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
                for (uint i = 0; i < 8u; ++i) {
#pragma unroll
                    for (uint j = 0; j < 8u; ++j)
                        acc[i][j] += ar[i] * br[j];
                }
            }
            __syncthreads();
        }
#pragma unroll
        for (uint i = 0; i < 8u; ++i) {
            uint row = row0 + (i < 4u ? ty * 4u + i : 64u + ty * 4u + (i - 4u));
            float* c_row = c + row * n + col0;
            float4 lo;
            float4 hi;
            lo.x = acc[i][0];
            lo.y = acc[i][1];
            lo.z = acc[i][2];
            lo.w = acc[i][3];
            hi.x = acc[i][4];
            hi.y = acc[i][5];
            hi.z = acc[i][6];
            hi.w = acc[i][7];
            *(float4*)(c_row + tx * 4u) = lo;
            *(float4*)(c_row + 64u + tx * 4u) = hi;
        }
    }
}
