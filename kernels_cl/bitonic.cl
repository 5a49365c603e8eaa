/* Sorting network (STNW): bitonic sort of unsigned 32-bit keys, ascending, after the CUDA
 * SDK's sortingNetworks (Batcher 1968). kernels_cu/bitonic.cu is the CUDA twin: same names,
 * parameters and algorithm text.
 *
 * The network sorts a power-of-two count P of keys; keys past n read as the largest key, so
 * they end up past the n real ones. In step (k, j) the pair (i, i + j) with (i & j) == 0 is
 * put in ascending order where (i & k) == 0, in descending order elsewhere.
 *
 * bitonic_local works on a block of 2 * WG_SIZE keys in local memory: with k_merge == 0 it
 * runs every step k = 2 .. block from in to out (the first stages); with k_merge > 0 it runs
 * the steps j = block / 2 .. 1 of stage k_merge on out in place. bitonic_global runs one step
 * (k, j) with j >= block over the whole array, one work-item per pair. WG_SIZE is a power of
 * two (the harness refuses others). */

#define SORT_BLOCK (2 * WG_SIZE)

__kernel void bitonic_local(const __global uint* in, __global uint* out, uint n, uint k_merge)
{
    __local uint keys[SORT_BLOCK];
    uint lid = get_local_id(0);
    uint base = get_group_id(0) * SORT_BLOCK;
    keys[lid] = (base + lid < n) ? in[base + lid] : 0xffffffffu;
    keys[lid + WG_SIZE] = (base + lid + WG_SIZE < n) ? in[base + lid + WG_SIZE] : 0xffffffffu;
    uint k_first = (k_merge == 0u) ? 2u : k_merge;
    uint k_last = (k_merge == 0u) ? SORT_BLOCK : k_merge;
    for (uint k = k_first; k <= k_last; k <<= 1) {
        uint j_first = (k < SORT_BLOCK) ? (k >> 1) : WG_SIZE;
        for (uint j = j_first; j > 0u; j >>= 1) {
            barrier(CLK_LOCAL_MEM_FENCE);
            uint i = 2u * j * (lid / j) + (lid % j);
            uint lo = keys[i];
            uint hi = keys[i + j];
            uint ascending = ((base + i) & k) == 0u;
            if ((lo > hi) == ascending) {
                keys[i] = hi;
                keys[i + j] = lo;
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    out[base + lid] = keys[lid];
    out[base + lid + WG_SIZE] = keys[lid + WG_SIZE];
}

/* One step (k, j) over the whole array of get_global_size(0) pairs. */
__kernel void bitonic_global(__global uint* data, uint k, uint j)
{
    uint t = get_global_id(0);
    uint i = 2u * j * (t / j) + (t % j);
    uint lo = data[i];
    uint hi = data[i + j];
    uint ascending = (i & k) == 0u;
    if ((lo > hi) == ascending) {
        data[i] = hi;
        data[i + j] = lo;
    }
}
