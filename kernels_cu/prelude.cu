/* clvscu prelude for CUDA C. Prepended to every CUDA kernel file; kernels_cl/prelude.cl is
 * its OpenCL twin. Both define the same macros so the kernel text of the twins stays the same.
 *
 * Defines given by the harness (identical -D set for both APIs, from one configuration):
 *   WG_SIZE        work-group size (threads per block), a compile-time constant
 *   UNROLL_<P>     unroll factor at unroll point P; absent = no pragma at that loop
 *   WARP_SYNC_WG   1: warp-level steps synchronise with a block barrier (default, fair);
 *                  0: with __syncwarp()
 *   USE_SUBGROUPS  1: the tuned variants use warp shuffles; 0: shared memory
 *   CLVSCU_INDEX   index width of the built-in index variables: 32 (default) keeps CUDA's
 *                  own 32 bits, which the OpenCL prelude then matches; 64 widens them to
 *                  64 bits, the width of OpenCL's size_t; 0 leaves each API its own
 */
#define CLVSCU_STR(x) #x
#define CLVSCU_PRAGMA(x) _Pragma(CLVSCU_STR(x))
/* Expands its argument first, so UNROLL_POINT(UNROLL_A) becomes _Pragma("unroll 4"). */
#define CLVSCU_UNROLL_N(n) CLVSCU_PRAGMA(unroll n)

#ifdef UNROLL_A
#define PRAGMA_UNROLL_A CLVSCU_UNROLL_N(UNROLL_A)
#else
#define PRAGMA_UNROLL_A
#endif
#ifdef UNROLL_B
#define PRAGMA_UNROLL_B CLVSCU_UNROLL_N(UNROLL_B)
#else
#define PRAGMA_UNROLL_B
#endif

#ifndef WG_SIZE
#error "WG_SIZE must be defined by the harness"
#endif
#ifndef WARP_SYNC_WG
#define WARP_SYNC_WG 1
#endif
#ifndef USE_SUBGROUPS
#define USE_SUBGROUPS 0
#endif

#define WARP_SIZE 32

/* WG_BOUND: with REQD_WG=1 (a study define) the kernel tells the compiler its work-group size,
 * WG_SIZE: CUDA's __launch_bounds__, OpenCL's reqd_work_group_size (its twin). See
 * kernels_cl/prelude.cl. */
#if defined(REQD_WG) && REQD_WG
#define WG_BOUND __launch_bounds__(WG_SIZE)
#else
#define WG_BOUND
#endif

typedef unsigned int uint;

#ifndef CLVSCU_INDEX
#define CLVSCU_INDEX 32
#endif
#if CLVSCU_INDEX == 64
/* OpenCL's work-item functions return a 64-bit size_t: widened here so both sides do the same
 * 64-bit index arithmetic. A macro does not expand inside itself, so the inner name is the
 * real built-in variable. */
struct clvscu_index3 {
    unsigned long long x, y, z;
};
__device__ __forceinline__ clvscu_index3 clvscu_widen(uint3 v) {
    clvscu_index3 r = {v.x, v.y, v.z};
    return r;
}
__device__ __forceinline__ clvscu_index3 clvscu_widen(dim3 v) {
    clvscu_index3 r = {v.x, v.y, v.z};
    return r;
}
#define threadIdx clvscu_widen(threadIdx)
#define blockIdx clvscu_widen(blockIdx)
#define blockDim clvscu_widen(blockDim)
#define gridDim clvscu_widen(gridDim)
#endif

#if WARP_SYNC_WG
#define WARP_BARRIER() __syncthreads()
#else
#define WARP_BARRIER() __syncwarp()
#endif

#if USE_SUBGROUPS
__device__ __forceinline__ float clvscu_warp_sum(float x) {
    for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2)
        x += __shfl_down_sync(0xffffffffu, x, offset);
    return __shfl_sync(0xffffffffu, x, 0);
}
#define WARP_SUM(x) clvscu_warp_sum(x)
#endif

/* One-launch forms (matvec_split_one): a fence that makes a thread's global writes visible to
 * the whole device before its later ones (OpenCL's twin: a device-scope membar.gl on NVIDIA), and
 * an atomic add on a global uint that returns the old value (OpenCL's twin: atomic_add). */
#define GLOBAL_FENCE() __threadfence()
#define ATOMIC_ADD_U32(p, x) atomicAdd((p), (x))

/* Read paths of the gather kernels (spmv, md). LOAD_RO(p): a load through the read-only data
 * path (__ldg, ld.global.nc); the OpenCL twin has no such built-in and relies on the kernel's
 * const restrict pointers. FETCH_F1 / FETCH_F4: one texel of a texture object over a linear
 * buffer of one or four float channels. */
#define LOAD_RO(p) __ldg(p)
#define FETCH_F1(t, i) tex1Dfetch<float>((t), (int)(i))
#define FETCH_F4(t, i) tex1Dfetch<float4>((t), (int)(i))
