/* Single-precision GEMM, C = A * B, all three N x N and row-major (the paper's compute-bound
 * case, beside the vendor's cuBLAS SGEMM). kernels_cu/sgemm.cu is the CUDA twin: same names,
 * parameters and algorithm text.
 *
 * The launch is 1D (groups x WG_SIZE); each kernel maps a work-group to a square output tile
 * and a work-item to a place in it, the same way on both sides. Work-groups stride over the
 * tiles, so any group count computes every tile (the default is one group per tile). The
 * harness refuses N that is not a multiple of the tile. */

#define SG_TS 16

/* Shared-memory tiling: a 16 x 16 work-group computes a 16 x 16 tile of C, one element per
 * work-item, staging 16 x 16 tiles of A and B through local memory. WG_SIZE must be 256. */
__kernel void sgemm_tiled16(const __global float* a, const __global float* b, __global float* c,
                            uint n)
{
    __local float as[SG_TS][SG_TS];
    __local float bs[SG_TS][SG_TS];
    uint tx = get_local_id(0) % SG_TS;
    uint ty = get_local_id(0) / SG_TS;
    uint per_row = n / SG_TS;
    uint tiles = per_row * per_row;
    for (uint t = get_group_id(0); t < tiles; t += get_num_groups(0)) {
        uint row = (t / per_row) * SG_TS + ty;
        uint col = (t % per_row) * SG_TS + tx;
        float acc = 0.0f;
        for (uint k0 = 0; k0 < n; k0 += SG_TS) {
            as[ty][tx] = a[row * n + k0 + tx];
            bs[ty][tx] = b[(k0 + ty) * n + col];
            barrier(CLK_LOCAL_MEM_FENCE);
            for (uint k = 0; k < SG_TS; ++k)
                acc += as[ty][k] * bs[k][tx];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        c[row * n + col] = acc;
    }
}

/* Register blocking: a work-group computes an SG_BM x SG_BN tile of C, each work-item an
 * SG_TM x SG_TN micro-tile held in registers, stepping through K SG_BK at a time. The defaults
 * at 256 work-items (128 x 128, K-step 8, 8 x 8 per work-item) are the shipped kernel; the
 * tuner's SGEMM space (src/families/sgemm/tiles.rs) sets the five as defines, with the same text on both
 * sides. Per K-step the group stages an SG_BM x SG_BK slice of A (stored transposed, so a
 * work-item reads its A values as float4) and an SG_BK x SG_BN slice of B through local
 * memory, each work-item loading SG_A_LOADS and SG_B_LOADS float4 of them.
 *
 * A work-item's SG_TM rows are SG_TM / 4 runs of 4, SG_RUN_M apart (ty*4, SG_RUN_M + ty*4, ...),
 * likewise its columns: neighbouring work-items then read contiguous local memory per float4
 * load, with no bank conflict. The transposed A slice has rows of SG_BM + 4 floats so that the
 * transposing stores of one warp fall in different banks (the pad keeps float4 alignment).
 * A work-group size other than (SG_BM / SG_TM) x (SG_BN / SG_TN), or a tile that the group
 * cannot load in whole float4 per work-item, is a compile error, never a wrong answer.
 * The K loop is unroll point A (absent: no pragma, as shipped). */
#ifndef SG_BM
#define SG_BM 128
#endif
#ifndef SG_BN
#define SG_BN 128
#endif
/* Unset, the K-step and the micro-tile follow WG_SIZE, so that every work-group size the
 * variant accepts (64 to 1024) computes the 128 x 128 tile: at 256 they are the shipped K-step 8
 * and 8 x 8. */
#ifndef SG_BK
#if WG_SIZE <= 256
#define SG_BK 8
#elif WG_SIZE <= 512
#define SG_BK 16
#else
#define SG_BK 32
#endif
#endif
#ifndef SG_TM
#if WG_SIZE <= 128
#define SG_TM 16
#elif WG_SIZE <= 512
#define SG_TM 8
#else
#define SG_TM 4
#endif
#endif
#ifndef SG_TN
#if WG_SIZE <= 64
#define SG_TN 16
#elif WG_SIZE <= 256
#define SG_TN 8
#else
#define SG_TN 4
#endif
#endif
#define SG_PAD 4
/* Work-items across and down a tile, and the distance between a work-item's runs of 4. */
#define SG_TX (SG_BN / SG_TN)
#define SG_TY (SG_BM / SG_TM)
#define SG_RUN_N (SG_TX * 4)
#define SG_RUN_M (SG_TY * 4)
#define SG_A_LOADS (SG_BM * SG_BK / 4 / WG_SIZE)
#define SG_B_LOADS (SG_BK * SG_BN / 4 / WG_SIZE)
#if SG_TM % 4 != 0 || SG_TN % 4 != 0 || SG_BK % 4 != 0
#error "sgemm_blocked: SG_TM, SG_TN and SG_BK must be multiples of 4"
#endif
#if WG_SIZE != SG_TX * SG_TY
#error "sgemm_blocked: WG_SIZE must be (SG_BM / SG_TM) * (SG_BN / SG_TN)"
#endif
#if SG_A_LOADS * WG_SIZE * 4 != SG_BM * SG_BK || SG_B_LOADS * WG_SIZE * 4 != SG_BK * SG_BN
#error "sgemm_blocked: each work-item must load whole float4 of both slices"
#endif

__kernel void WG_BOUND sgemm_blocked(const __global float* a, const __global float* b, __global float* c,
                            uint n)
{
    __local float as[SG_BK][SG_BM + SG_PAD];
    __local float bs[SG_BK][SG_BN];
    uint tid = get_local_id(0);
    uint tx = tid % SG_TX;
    uint ty = tid / SG_TX;
    uint per_row = n / SG_BN;
    uint tiles = (n / SG_BM) * per_row;
    for (uint t = get_group_id(0); t < tiles; t += get_num_groups(0)) {
        uint row0 = (t / per_row) * SG_BM;
        uint col0 = (t % per_row) * SG_BN;
        float acc[SG_TM][SG_TN];
#pragma unroll
        for (uint i = 0; i < SG_TM; ++i) {
#pragma unroll
            for (uint j = 0; j < SG_TN; ++j)
                acc[i][j] = 0.0f;
        }
        /* Load l of this work-item: float4 number tid + l * WG_SIZE of each slice, A's as
         * SG_BM rows of SG_BK / 4, B's as SG_BK rows of SG_BN / 4. */
        const __global float* a_at[SG_A_LOADS];
        const __global float* b_at[SG_B_LOADS];
        float4 av[SG_A_LOADS];
        float4 bv[SG_B_LOADS];
#pragma unroll
        for (uint l = 0; l < SG_A_LOADS; ++l) {
            uint f = tid + l * WG_SIZE;
            a_at[l] = a + (row0 + f / (SG_BK / 4)) * n + (f % (SG_BK / 4)) * 4u;
            av[l] = *(const __global float4*)a_at[l];
        }
#pragma unroll
        for (uint l = 0; l < SG_B_LOADS; ++l) {
            uint f = tid + l * WG_SIZE;
            b_at[l] = b + (f / (SG_BN / 4)) * n + col0 + (f % (SG_BN / 4)) * 4u;
            bv[l] = *(const __global float4*)b_at[l];
        }
        /* The next K-step's slices are read from global memory into registers while this
         * step computes, so their latency hides behind the multiply-adds. */
        PRAGMA_UNROLL_A
        for (uint k0 = 0; k0 < n; k0 += SG_BK) {
#pragma unroll
            for (uint l = 0; l < SG_A_LOADS; ++l) {
                uint f = tid + l * WG_SIZE;
                uint a_row = f / (SG_BK / 4);
                uint a_col = (f % (SG_BK / 4)) * 4u;
                as[a_col + 0u][a_row] = av[l].x;
                as[a_col + 1u][a_row] = av[l].y;
                as[a_col + 2u][a_row] = av[l].z;
                as[a_col + 3u][a_row] = av[l].w;
            }
#pragma unroll
            for (uint l = 0; l < SG_B_LOADS; ++l) {
                uint f = tid + l * WG_SIZE;
                *(__local float4*)&bs[f / (SG_BN / 4)][(f % (SG_BN / 4)) * 4u] = bv[l];
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            if (k0 + SG_BK < n) {
#pragma unroll
                for (uint l = 0; l < SG_A_LOADS; ++l)
                    av[l] = *(const __global float4*)(a_at[l] + k0 + SG_BK);
#pragma unroll
                for (uint l = 0; l < SG_B_LOADS; ++l)
                    bv[l] = *(const __global float4*)(b_at[l] + (k0 + SG_BK) * n);
            }
#pragma unroll
            for (uint k = 0; k < SG_BK; ++k) {
                float ar[SG_TM];
                float br[SG_TN];
#pragma unroll
                for (uint r = 0; r < SG_TM / 4; ++r) {
                    float4 v = *(__local float4*)&as[k][r * SG_RUN_M + ty * 4u];
                    ar[r * 4u + 0u] = v.x;
                    ar[r * 4u + 1u] = v.y;
                    ar[r * 4u + 2u] = v.z;
                    ar[r * 4u + 3u] = v.w;
                }
#pragma unroll
                for (uint r = 0; r < SG_TN / 4; ++r) {
                    float4 v = *(__local float4*)&bs[k][r * SG_RUN_N + tx * 4u];
                    br[r * 4u + 0u] = v.x;
                    br[r * 4u + 1u] = v.y;
                    br[r * 4u + 2u] = v.z;
                    br[r * 4u + 3u] = v.w;
                }
#pragma unroll
                for (uint i = 0; i < SG_TM; ++i) {
#pragma unroll
                    for (uint j = 0; j < SG_TN; ++j)
                        acc[i][j] += ar[i] * br[j];
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
#pragma unroll
        for (uint i = 0; i < SG_TM; ++i) {
            uint row = row0 + (i / 4u) * SG_RUN_M + ty * 4u + i % 4u;
            __global float* c_row = c + row * n + col0;
#pragma unroll
            for (uint r = 0; r < SG_TN / 4; ++r) {
                float4 o;
                o.x = acc[i][r * 4u + 0u];
                o.y = acc[i][r * 4u + 1u];
                o.z = acc[i][r * 4u + 2u];
                o.w = acc[i][r * 4u + 3u];
                *(__global float4*)(c_row + r * SG_RUN_N + tx * 4u) = o;
            }
        }
    }
}

/* The same kernel with its tiles declared as float4 arrays, so that every read of a tile is a
 * read of a vector variable rather than of a vector through a cast pointer into a float array
 * (the tiles' elements are where sgemm_blocked keeps them). Whether both second stages then
 * keep 128-bit shared loads is what `clvscu explain` asks of it. */
__kernel void WG_BOUND sgemm_blocked_vec(const __global float* a, const __global float* b, __global float* c,
                            uint n)
{
    __local float4 as4[SG_BK][(SG_BM + SG_PAD) / 4];
    __local float4 bs4[SG_BK][SG_BN / 4];
    uint tid = get_local_id(0);
    uint tx = tid % SG_TX;
    uint ty = tid / SG_TX;
    uint per_row = n / SG_BN;
    uint tiles = (n / SG_BM) * per_row;
    for (uint t = get_group_id(0); t < tiles; t += get_num_groups(0)) {
        uint row0 = (t / per_row) * SG_BM;
        uint col0 = (t % per_row) * SG_BN;
        float acc[SG_TM][SG_TN];
#pragma unroll
        for (uint i = 0; i < SG_TM; ++i) {
#pragma unroll
            for (uint j = 0; j < SG_TN; ++j)
                acc[i][j] = 0.0f;
        }
        /* Load l of this work-item: float4 number tid + l * WG_SIZE of each slice, A's as
         * SG_BM rows of SG_BK / 4, B's as SG_BK rows of SG_BN / 4. */
        const __global float* a_at[SG_A_LOADS];
        const __global float* b_at[SG_B_LOADS];
        float4 av[SG_A_LOADS];
        float4 bv[SG_B_LOADS];
#pragma unroll
        for (uint l = 0; l < SG_A_LOADS; ++l) {
            uint f = tid + l * WG_SIZE;
            a_at[l] = a + (row0 + f / (SG_BK / 4)) * n + (f % (SG_BK / 4)) * 4u;
            av[l] = *(const __global float4*)a_at[l];
        }
#pragma unroll
        for (uint l = 0; l < SG_B_LOADS; ++l) {
            uint f = tid + l * WG_SIZE;
            b_at[l] = b + (f / (SG_BN / 4)) * n + col0 + (f % (SG_BN / 4)) * 4u;
            bv[l] = *(const __global float4*)b_at[l];
        }
        /* The next K-step's slices are read from global memory into registers while this
         * step computes, so their latency hides behind the multiply-adds. */
        PRAGMA_UNROLL_A
        for (uint k0 = 0; k0 < n; k0 += SG_BK) {
#pragma unroll
            for (uint l = 0; l < SG_A_LOADS; ++l) {
                uint f = tid + l * WG_SIZE;
                uint a_row = f / (SG_BK / 4);
                uint a_col = (f % (SG_BK / 4)) * 4u;
                ((__local float*)as4[a_col + 0u])[a_row] = av[l].x;
                ((__local float*)as4[a_col + 1u])[a_row] = av[l].y;
                ((__local float*)as4[a_col + 2u])[a_row] = av[l].z;
                ((__local float*)as4[a_col + 3u])[a_row] = av[l].w;
            }
#pragma unroll
            for (uint l = 0; l < SG_B_LOADS; ++l) {
                uint f = tid + l * WG_SIZE;
                bs4[f / (SG_BN / 4)][f % (SG_BN / 4)] = bv[l];
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            if (k0 + SG_BK < n) {
#pragma unroll
                for (uint l = 0; l < SG_A_LOADS; ++l)
                    av[l] = *(const __global float4*)(a_at[l] + k0 + SG_BK);
#pragma unroll
                for (uint l = 0; l < SG_B_LOADS; ++l)
                    bv[l] = *(const __global float4*)(b_at[l] + (k0 + SG_BK) * n);
            }
#pragma unroll
            for (uint k = 0; k < SG_BK; ++k) {
                float ar[SG_TM];
                float br[SG_TN];
#pragma unroll
                for (uint r = 0; r < SG_TM / 4; ++r) {
                    float4 v = as4[k][r * SG_TY + ty];
                    ar[r * 4u + 0u] = v.x;
                    ar[r * 4u + 1u] = v.y;
                    ar[r * 4u + 2u] = v.z;
                    ar[r * 4u + 3u] = v.w;
                }
#pragma unroll
                for (uint r = 0; r < SG_TN / 4; ++r) {
                    float4 v = bs4[k][r * SG_TX + tx];
                    br[r * 4u + 0u] = v.x;
                    br[r * 4u + 1u] = v.y;
                    br[r * 4u + 2u] = v.z;
                    br[r * 4u + 3u] = v.w;
                }
#pragma unroll
                for (uint i = 0; i < SG_TM; ++i) {
#pragma unroll
                    for (uint j = 0; j < SG_TN; ++j)
                        acc[i][j] += ar[i] * br[j];
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
#pragma unroll
        for (uint i = 0; i < SG_TM; ++i) {
            uint row = row0 + (i / 4u) * SG_RUN_M + ty * 4u + i % 4u;
            __global float* c_row = c + row * n + col0;
#pragma unroll
            for (uint r = 0; r < SG_TN / 4; ++r) {
                float4 o;
                o.x = acc[i][r * 4u + 0u];
                o.y = acc[i][r * 4u + 1u];
                o.z = acc[i][r * 4u + 2u];
                o.w = acc[i][r * 4u + 3u];
                *(__global float4*)(c_row + r * SG_RUN_N + tx * 4u) = o;
            }
        }
    }
}
