// CUDA C twin of sgemm_ladder.ipynb. Step 3: BS x BS tiles of A and B staged in shared memory. Macros: BS.
#include "common.cuh"
extern "C" __global__ void smem_tiles_c(const float* a, const float* b, float* c, int m, int n, int k) {
    __shared__ float As[BS][BS], Bs[BS][BS];
    const int ty = threadIdx.y, tx = threadIdx.x;
    const int row = blockIdx.y * BS + ty, col = blockIdx.x * BS + tx;
    float acc = 0.f;
    for (int k0 = 0; k0 < k; k0 += BS) {
        As[ty][tx] = (row < m && k0 + tx < k) ? a[row * k + k0 + tx] : 0.f;
        Bs[ty][tx] = (k0 + ty < k && col < n) ? b[(k0 + ty) * n + col] : 0.f;
        __syncthreads();
        #pragma unroll
        for (int kk = 0; kk < BS; ++kk) acc += As[ty][kk] * Bs[kk][tx];
        __syncthreads();
    }
    if (row < m && col < n) c[row * n + col] = acc;
}
