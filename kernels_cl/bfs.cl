/* Breadth-first search, level-synchronous as in Rodinia's bfs: two kernels per level and a
 * one-word flag that the host reads back to decide whether another level is needed.
 * kernels_cu/bfs.cu is the CUDA twin: same names, parameters and algorithm text.
 *
 * The graph is in CSR form (offsets has n + 1 entries, edges the targets). mask holds the
 * current frontier, updating the next one, visited every vertex already reached; cost is
 * the level of each vertex (-1 before it is reached). */

/* Expand the frontier: every frontier vertex gives its unvisited neighbours its level + 1.
 * Several frontier vertices may write one neighbour; they all write the same level. */
__kernel void bfs_expand(const __global uint* offsets, const __global uint* edges,
                         __global uint* mask, __global uint* updating,
                         const __global uint* visited, __global int* cost, uint n)
{
    uint tid = get_global_id(0);
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
__kernel void bfs_update(__global uint* mask, __global uint* updating, __global uint* visited,
                         __global uint* over, uint n)
{
    uint tid = get_global_id(0);
    if (tid < n && updating[tid] != 0u) {
        mask[tid] = 1u;
        visited[tid] = 1u;
        over[0] = 1u;
        updating[tid] = 0u;
    }
}
