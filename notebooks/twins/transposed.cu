// CUDA C twin of sgemm_ladder.ipynb. Steps 7 and 8: A's tile stored k-major, rows padded by PAD floats. Macros: BM,
// BN, BK, TM, TN, PAD.
#include "common.cuh"
#define NT ((BM / TM) * (BN / TN))
extern "C" __global__ void __launch_bounds__(NT) transposed_c(const float* a, const float* b, float* c, int m, int n, int k) {
    __shared__ __align__(16) float AsT[BK][BM + PAD];
    __shared__ __align__(16) float Bs[BK][BN];
    const int t = threadIdx.x, tr = t / (BN / TN), tc = t % (BN / TN);
    const int brow = blockIdx.y * BM, bcol = blockIdx.x * BN;
    float acc[TM][TN] = {{0.f}}, fa[TM], fb[TN];
    for (int k0 = 0; k0 < k; k0 += BK) {
        #pragma unroll
        for (int l = 0; l < BM * BK / 4 / NT; ++l) {
            const int r = (t + l * NT) / (BK / 4), q = (t + l * NT) % (BK / 4) * 4;
            const float4 v = load_row4(a, brow + r, k0 + q, m, k);
            AsT[q][r] = v.x; AsT[q + 1][r] = v.y; AsT[q + 2][r] = v.z; AsT[q + 3][r] = v.w;
        }
        #pragma unroll
        for (int l = 0; l < BK * BN / 4 / NT; ++l) {
            const int r = (t + l * NT) / (BN / 4), q = (t + l * NT) % (BN / 4) * 4;
            *reinterpret_cast<float4*>(&Bs[r][q]) = load_row4(b, k0 + r, bcol + q, k, n);
        }
        __syncthreads();
        #pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            #pragma unroll
            for (int i = 0; i < TM; ++i) fa[i] = AsT[kk][tr * TM + i];
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
