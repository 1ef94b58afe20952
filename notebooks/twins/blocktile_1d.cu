// CUDA C twin of sgemm_ladder.ipynb. Step 4: TM results of a column per thread. Macros: BM, BN, BK, TM.
#include "common.cuh"
#define NT (BM * BN / TM)
extern "C" __global__ void __launch_bounds__(NT) blocktile_1d_c(const float* a, const float* b, float* c, int m, int n, int k) {
    __shared__ float As[BM][BK], Bs[BK][BN];
    const int t = threadIdx.x, tr = t / BN, tc = t % BN;
    const int brow = blockIdx.y * BM, bcol = blockIdx.x * BN;
    float acc[TM] = {0.f};
    for (int k0 = 0; k0 < k; k0 += BK) {
        #pragma unroll
        for (int l = 0; l < BM * BK / NT; ++l) {
            const int r = (t + l * NT) / BK, q = (t + l * NT) % BK;
            As[r][q] = (brow + r < m && k0 + q < k) ? a[(brow + r) * k + k0 + q] : 0.f;
        }
        #pragma unroll
        for (int l = 0; l < BK * BN / NT; ++l) {
            const int r = (t + l * NT) / BN, q = (t + l * NT) % BN;
            Bs[r][q] = (k0 + r < k && bcol + q < n) ? b[(k0 + r) * n + bcol + q] : 0.f;
        }
        __syncthreads();
        #pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            const float bv = Bs[kk][tc];
            #pragma unroll
            for (int i = 0; i < TM; ++i) acc[i] += As[tr * TM + i][kk] * bv;
        }
        __syncthreads();
    }
    #pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = brow + tr * TM + i, col = bcol + tc;
        if (row < m && col < n) c[row * n + col] = acc[i];
    }
}
