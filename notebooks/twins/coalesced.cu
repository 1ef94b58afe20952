// CUDA C twin of sgemm_ladder.ipynb. Step 2: threadIdx.x along a row of C (coalesced B loads and C stores). No
// macros.
#include "common.cuh"
extern "C" __global__ void coalesced_c(const float* a, const float* b, float* c, int m, int n, int k) {
    const int row = blockIdx.y * 32 + threadIdx.y, col = blockIdx.x * 32 + threadIdx.x;
    if (row < m && col < n) {
        float acc = 0.f;
        for (int i = 0; i < k; ++i) acc += a[row * k + i] * b[i * n + col];
        c[row * n + col] = acc;
    }
}
