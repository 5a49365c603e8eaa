/* clvscu prelude for OpenCL C. Prepended to every OpenCL kernel file; kernels_cu/prelude.cu is
 * its CUDA twin. Both define the same macros so the kernel text of the twins stays the same.
 *
 * Defines given by the harness (identical -D set for both APIs, from one configuration):
 *   WG_SIZE        work-group size (threads per block), a compile-time constant
 *   UNROLL_<P>     unroll factor at unroll point P; absent = no pragma at that loop
 *   WARP_SYNC_WG   1: warp-level steps synchronise with a work-group barrier (default, fair);
 *                  0: with a sub-group barrier (needs cl_khr_subgroups)
 *   USE_SUBGROUPS  1: the tuned variants use sub-group reductions; 0: local memory
 *   CLVSCU_INDEX   index width of the work-item functions: 32 (default) narrows them to
 *                  32 bits, the width of CUDA's built-in variables; 64 keeps OpenCL's 64-bit
 *                  size_t, which the CUDA prelude then matches; 0 leaves each API its own
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
 * WG_SIZE: OpenCL's reqd_work_group_size, CUDA's __launch_bounds__ (its twin). Without it the
 * compilers plan for any size the device allows. NVIDIA's OpenCL reports a work-group limit
 * of 256 for every kernel compiled without it (clGetKernelWorkGroupInfo, 10-40 registers),
 * where the CUDA driver allows 1024 for the same PTX: the one-step test of that limit. */
#if defined(REQD_WG) && REQD_WG
#define WG_BOUND __attribute__((reqd_work_group_size(WG_SIZE, 1, 1)))
#else
#define WG_BOUND
#endif

#ifndef CLVSCU_INDEX
#define CLVSCU_INDEX 32
#endif
#if CLVSCU_INDEX == 32
/* size_t work-item functions make every index expression 64-bit (and truncated where a kernel
 * stores it in a uint); CUDA's threadIdx/blockIdx/blockDim are 32-bit. Narrowed here so both
 * sides do the same index arithmetic. A macro does not expand inside itself, so the inner
 * call is the real function. */
#define get_global_id(d) ((uint)get_global_id(d))
#define get_local_id(d) ((uint)get_local_id(d))
#define get_group_id(d) ((uint)get_group_id(d))
#define get_local_size(d) ((uint)get_local_size(d))
#define get_num_groups(d) ((uint)get_num_groups(d))
#define get_global_size(d) ((uint)get_global_size(d))
#endif

#if WARP_SYNC_WG
#define WARP_BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#else
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#define WARP_BARRIER() sub_group_barrier(CLK_LOCAL_MEM_FENCE)
#endif

#if USE_SUBGROUPS
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#define WARP_SUM(x) sub_group_reduce_add(x)
#endif

/* One-launch forms (matvec_split_one): a fence that makes a work-item's global writes visible
 * to the whole device before its later ones (CUDA's twin: __threadfence), and an atomic add on
 * a global uint that returns the old value (CUDA's twin: atomicAdd).
 * OpenCL C 1.2 has no such fence: mem_fence orders a work-item's accesses as its own
 * work-group sees them, and NVIDIA's OpenCL compiles it to a work-group-scope fence. Through
 * it, split-one's last work-group once read a partial sum that another work-group had not yet
 * made visible (verification failed on an H200, 2026-11-23). NVIDIA's OpenCL compiler
 * (which defines __NV_CL_C_VERSION) takes inline PTX, so there the fence is the device-scope
 * one that CUDA's __threadfence is; other platforms keep mem_fence (PoCL's CPU device keeps
 * memory coherent). */
#ifdef __NV_CL_C_VERSION
#define GLOBAL_FENCE() asm volatile("membar.gl;" ::: "memory")
#else
#define GLOBAL_FENCE() mem_fence(CLK_GLOBAL_MEM_FENCE)
#endif
#define ATOMIC_ADD_U32(p, x) atomic_add((p), (x))

/* Read paths of the gather kernels (spmv, md). LOAD_RO(p): a load the kernel means to be
 * read-only; OpenCL C has no __ldg, so here it is a plain load and the kernel's const restrict
 * pointers are the only request for the read-only path. FETCH_F1 / FETCH_F4: one texel of an
 * image1d_buffer_t of one or four float channels. */
#define LOAD_RO(p) (*(p))
#define FETCH_F1(t, i) read_imagef((t), (int)(i)).x
#define FETCH_F4(t, i) read_imagef((t), (int)(i))
