/* Breadth-first search, level-synchronous as in Rodinia's bfs: two kernels per level and a
 * one-word flag that the host reads back to decide whether another level is needed.
 * kernels_cl/bfs.cl is the OpenCL twin: same names, parameters and algorithm text.
 *
 * The graph is in CSR form (offsets has n + 1 entries, edges the targets). mask holds the
 * current frontier, updating the next one, visited every vertex already reached; cost is
 * the level of each vertex (-1 before it is reached). */

/* Expand the frontier: every frontier vertex gives its unvisited neighbours its level + 1.
 * Several frontier vertices may write one neighbour; they all write the same level. */
extern "C" __global__ void bfs_expand(const uint* offsets, const uint* edges,
                         uint* mask, uint* updating,
                         const uint* visited, int* cost, uint n)
{
    uint tid = (blockIdx.x * blockDim.x + threadIdx.x);
    if (tid < n && mask[tid] != 0u) {
        mask[tid] = 0u;
        int next = cost[tid] + 1;
        uint end = offsets[tid + 1u];
        for (uint e = offsets[tid]; e < end; ++e) {
            uint id = edges[e];
            if (visited[id] == 0u) {
                cost[id] = next;
                updating[id] = 1u;
            }
        }
    }
}

/* Make the newly reached vertices the next frontier and raise the flag if there are any. */
extern "C" __global__ void bfs_update(uint* mask, uint* updating, uint* visited,
                         uint* over, uint n)
{
    uint tid = (blockIdx.x * blockDim.x + threadIdx.x);
    if (tid < n && updating[tid] != 0u) {
        mask[tid] = 1u;
        visited[tid] = 1u;
        over[0] = 1u;
        updating[tid] = 0u;
    }
}
