// CUDA C twin of sgemm_ladder.ipynb. Step 5: a TM x TN block per thread. Macros: BM, BN, BK, TM, TN.
#include "common.cuh"
#define NT ((BM / TM) * (BN / TN))
extern "C" __global__ void __launch_bounds__(NT) blocktile_2d_c(const float* a, const float* b, float* c, int m, int n, int k) {
    __shared__ float As[BM][BK], Bs[BK][BN];
    const int t = threadIdx.x, tr = t / (BN / TN), tc = t % (BN / TN);
    const int brow = blockIdx.y * BM, bcol = blockIdx.x * BN;
    float acc[TM][TN] = {{0.f}}, fa[TM], fb[TN];
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
            #pragma unroll
            for (int i = 0; i < TM; ++i) fa[i] = As[tr * TM + i][kk];
            #pragma unroll
            for (int j = 0; j < TN; ++j) fb[j] = Bs[kk][tc * TN + j];
            #pragma unroll
            for (int i = 0; i < TM; ++i)
                #pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += fa[i] * fb[j];
        }
        __syncthreads();
    }
    #pragma unroll
    for (int i = 0; i < TM; ++i)
        #pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int row = brow + tr * TM + i, col = bcol + tc * TN + j;
            if (row < m && col < n) c[row * n + col] = acc[i][j];
        }
}
