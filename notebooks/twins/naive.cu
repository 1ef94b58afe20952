// CUDA C twin of sgemm_ladder.ipynb. Step 1: one thread per element of C, threadIdx.x down a column of C. No
// macros.
#include "common.cuh"
extern "C" __global__ void naive_c(const float* a, const float* b, float* c, int m, int n, int k) {
    const int row = blockIdx.x * 32 + threadIdx.x, col = blockIdx.y * 32 + threadIdx.y;
    if (row < m && col < n) {
        float acc = 0.f;
        for (int i = 0; i < k; ++i) acc += a[row * k + i] * b[i * n + col];
        c[row * n + col] = acc;
    }
}
