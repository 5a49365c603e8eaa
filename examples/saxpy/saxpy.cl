/* SAXPY, y = a * x + y: the OpenCL half of the example kernel pair (saxpy.toml). */
__kernel void saxpy(const uint n, const float a, __global const float *x, __global float *y)
{
    uint i = get_global_id(0);
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}
