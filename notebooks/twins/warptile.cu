// CUDA C twin of sgemm_ladder.ipynb. Step 9: warptiling. Macros: BM, BN, BK, WM, WN, WMI, WNI, TM, TN, PAD.
#include "common.cuh"
#define WARPS_N (BN / WN)
#define NT (32 * (BM / WM) * WARPS_N)
#define LN (WN / (WNI * TN))
#define SM (WM / WMI)
#define SN (WN / WNI)
extern "C" __global__ void __launch_bounds__(NT) warptile_c(const float* a, const float* b, float* c, int m, int n, int k) {
    __shared__ __align__(16) float AsT[BK][BM + PAD];
    __shared__ __align__(16) float Bs[BK][BN];
    const int t = threadIdx.x, warp = t / 32, lane = t % 32;
    const int am = (warp / WARPS_N) * WM + (lane / LN) * TM, bn = (warp % WARPS_N) * WN + (lane % LN) * TN;
    const int brow = blockIdx.y * BM, bcol = blockIdx.x * BN;
    float acc[WMI * TM][WNI * TN] = {{0.f}}, fa[WMI * TM], fb[WNI * TN];
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
            for (int mi = 0; mi < WMI; ++mi)
                #pragma unroll
                for (int i = 0; i < TM; ++i) fa[mi * TM + i] = AsT[kk][am + mi * SM + i];
            #pragma unroll
            for (int ni = 0; ni < WNI; ++ni)
                #pragma unroll
                for (int j = 0; j < TN; ++j) fb[ni * TN + j] = Bs[kk][bn + ni * SN + j];
            #pragma unroll
            for (int i = 0; i < WMI * TM; ++i)
                #pragma unroll
                for (int j = 0; j < WNI * TN; ++j) acc[i][j] += fa[i] * fb[j];
        }
        __syncthreads();
    }
    #pragma unroll
    for (int mi = 0; mi < WMI; ++mi)
        #pragma unroll
        for (int i = 0; i < TM; ++i)
            #pragma unroll
            for (int ni = 0; ni < WNI; ++ni)
                #pragma unroll
                for (int j = 0; j < TN; ++j) {
                    const int row = brow + am + mi * SM + i, col = bcol + bn + ni * SN + j;
                    if (row < m && col < n) c[row * n + col] = acc[mi * TM + i][ni * TN + j];
                }
}
