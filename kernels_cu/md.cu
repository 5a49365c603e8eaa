/* Lennard-Jones forces from a neighbour list, after SHOC's MD (compute_lj_force): one
 * work-item per atom, the list stored neighbour-major (neighList[k * nAtoms + i]) so that its
 * reads coalesce, and the neighbours' positions gathered. kernels_cl/md.cl is the OpenCL twin.
 *
 * Three read paths of the gathered positions, as in spmv: plain const pointer; _ro (every
 * pointer const restrict, LOAD_RO on the gather); _tex (a four-channel float texture:
 * image1d_buffer_t with read_imagef / a texture object with tex1Dfetch<float4>, FETCH_F4).
 * One body (MD_LJ_BODY) takes the two reads as macro arguments: the atom's own position
 * (READ_SELF) and a neighbour's (READ_GATHER); everything else is the same text by
 * construction.
 *
 * The reciprocal is __fdividef (CUDA: __fdividef) on both sides: with a plain '/' NVIDIA's
 * OpenCL emits an approximate division and CUDA a correctly rounded one by default, a
 * first-stage difference this comparison is not about.
 */
#define MD_NEIGHBOURS 124
#define MD_CUTSQ 4.5f
#define MD_LJ1 1.5f
#define MD_LJ2 2.0f

/* The reads of position[i]: a plain load, the read-only path, the texture path. */
#define POS_GLOBAL(p, i) (p)[i]
#define POS_RO(p, i) LOAD_RO(&(p)[i])
#define POS_TEX(p, i) FETCH_F4(p, i)

#define MD_LJ_BODY(READ_SELF, READ_GATHER)                                                         \
    uint i = blockIdx.x * blockDim.x + threadIdx.x;                                                \
    if (i < nAtoms) {                                                                              \
        float4 ipos = READ_SELF(position, i);                                                      \
        float fx = 0.0f;                                                                           \
        float fy = 0.0f;                                                                           \
        float fz = 0.0f;                                                                           \
        for (uint k = 0; k < MD_NEIGHBOURS; k++) {                                                 \
            uint j = neighList[k * nAtoms + i];                                                    \
            float4 jpos = READ_GATHER(position, j);                                                \
            float delx = ipos.x - jpos.x;                                                          \
            float dely = ipos.y - jpos.y;                                                          \
            float delz = ipos.z - jpos.z;                                                          \
            float r2 = delx * delx + dely * dely + delz * delz;                                    \
            if (r2 < MD_CUTSQ) {                                                                   \
                float r2inv = __fdividef(1.0f, r2);                                                \
                float r6inv = r2inv * r2inv * r2inv;                                               \
                float f = r2inv * r6inv * (MD_LJ1 * r6inv - MD_LJ2);                               \
                fx += delx * f;                                                                    \
                fy += dely * f;                                                                    \
                fz += delz * f;                                                                    \
            }                                                                                      \
        }                                                                                          \
        force[4 * i] = fx;                                                                         \
        force[4 * i + 1] = fy;                                                                     \
        force[4 * i + 2] = fz;                                                                     \
        force[4 * i + 3] = 0.0f;                                                                   \
    }

extern "C" __global__ void md_lj(const float4* position, const uint* neighList,
                    uint nAtoms, float* force)
{
    MD_LJ_BODY(POS_GLOBAL, POS_GLOBAL)
}

extern "C" __global__ void md_lj_ro(const float4* __restrict__ position,
                       const uint* __restrict__ neighList, uint nAtoms,
                       float* __restrict__ force)
{
    MD_LJ_BODY(POS_GLOBAL, POS_RO)
}

extern "C" __global__ void md_lj_tex(cudaTextureObject_t position, const uint* neighList,
                        uint nAtoms, float* force)
{
    MD_LJ_BODY(POS_TEX, POS_TEX)
}
