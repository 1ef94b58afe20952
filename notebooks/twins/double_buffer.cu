// CUDA C twin of sgemm_ladder.ipynb. Steps 10, 12 and 13: register-staged double buffering. INTERIOR=1 adds the
// unchecked path of inner blocks (12), KK_UNROLL is the k-step loop's unroll (default BK; 1 for "10 C, unroll 1", 2
// for 13), MINB the second __launch_bounds__ argument.
// Macros: BM, BN, BK, WM, WN, WMI, WNI, TM, TN, PAD [, INTERIOR, KK_UNROLL, MINB].
#include "common.cuh"
#define WARPS_N (BN / WN)
#define NT (32 * (BM / WM) * WARPS_N)
#define LN (WN / (WNI * TN))
#define SM (WM / WMI)
#define SN (WN / WNI)
#define A4 (BM * BK / 4 / NT)
#define B4 (BK * BN / 4 / NT)
#ifndef KK_UNROLL
#define KK_UNROLL BK
#endif
#ifndef MINB
#define MINB 1
#endif
#ifndef INTERIOR
#define INTERIOR 0
#endif
#define PRAGMA(x) _Pragma(#x)
#define UNROLL(n) PRAGMA(unroll n)
extern "C" __global__ void __launch_bounds__(NT, MINB) double_buffer_c(const float* a, const float* b, float* c, int m, int n, int k) {
    __shared__ __align__(16) float AsT[2][BK][BM + PAD];
    __shared__ __align__(16) float Bs[2][BK][BN];
    const int t = threadIdx.x, warp = t / 32, lane = t % 32;
    const int am = (warp / WARPS_N) * WM + (lane / LN) * TM, bn = (warp % WARPS_N) * WN + (lane % LN) * TN;
    const int brow = blockIdx.y * BM, bcol = blockIdx.x * BN;
    float acc[WMI * TM][WNI * TN] = {{0.f}}, fa[WMI * TM], fb[WNI * TN];
    float4 ra[A4], rb[B4];
    #pragma unroll
    for (int l = 0; l < A4; ++l) {
        const int r = (t + l * NT) / (BK / 4), q = (t + l * NT) % (BK / 4) * 4;
        const float4 v = load_row4(a, brow + r, q, m, k);
        AsT[0][q][r] = v.x; AsT[0][q + 1][r] = v.y; AsT[0][q + 2][r] = v.z; AsT[0][q + 3][r] = v.w;
    }
    #pragma unroll
    for (int l = 0; l < B4; ++l) {
        const int r = (t + l * NT) / (BN / 4), q = (t + l * NT) % (BN / 4) * 4;
        *reinterpret_cast<float4*>(&Bs[0][r][q]) = load_row4(b, r, bcol + q, k, n);
    }
    __syncthreads();
    const bool inside = INTERIOR && brow + BM <= m && bcol + BN <= n && (k & 3) == 0 && (n & 3) == 0;
    int buf = 0;
    for (int k0 = 0; k0 < k; k0 += BK) {
        const bool more = k0 + BK < k;
        if (more && inside && k0 + 2 * BK <= k) {  // the next tile is whole: no checks
            #pragma unroll
            for (int l = 0; l < A4; ++l) {
                const int r = (t + l * NT) / (BK / 4), q = (t + l * NT) % (BK / 4) * 4;
                ra[l] = *reinterpret_cast<const float4*>(a + (brow + r) * k + k0 + BK + q);
            }
            #pragma unroll
            for (int l = 0; l < B4; ++l) {
                const int r = (t + l * NT) / (BN / 4), q = (t + l * NT) % (BN / 4) * 4;
                rb[l] = *reinterpret_cast<const float4*>(b + (k0 + BK + r) * n + bcol + q);
            }
        } else if (more) {
            #pragma unroll
            for (int l = 0; l < A4; ++l) {
                const int r = (t + l * NT) / (BK / 4), q = (t + l * NT) % (BK / 4) * 4;
                ra[l] = load_row4(a, brow + r, k0 + BK + q, m, k);
            }
            #pragma unroll
            for (int l = 0; l < B4; ++l) {
                const int r = (t + l * NT) / (BN / 4), q = (t + l * NT) % (BN / 4) * 4;
                rb[l] = load_row4(b, k0 + BK + r, bcol + q, k, n);
            }
        }
        UNROLL(KK_UNROLL)
        for (int kk = 0; kk < BK; ++kk) {
            #pragma unroll
            for (int mi = 0; mi < WMI; ++mi)
                #pragma unroll
                for (int i = 0; i < TM; ++i) fa[mi * TM + i] = AsT[buf][kk][am + mi * SM + i];
            #pragma unroll
            for (int ni = 0; ni < WNI; ++ni)
                #pragma unroll
                for (int j = 0; j < TN; ++j) fb[ni * TN + j] = Bs[buf][kk][bn + ni * SN + j];
            #pragma unroll
            for (int i = 0; i < WMI * TM; ++i)
                #pragma unroll
                for (int j = 0; j < WNI * TN; ++j) acc[i][j] += fa[i] * fb[j];
        }
        if (more) {
            const int nxt = 1 - buf;
            #pragma unroll
            for (int l = 0; l < A4; ++l) {
                const int r = (t + l * NT) / (BK / 4), q = (t + l * NT) % (BK / 4) * 4;
                AsT[nxt][q][r] = ra[l].x; AsT[nxt][q + 1][r] = ra[l].y; AsT[nxt][q + 2][r] = ra[l].z; AsT[nxt][q + 3][r] = ra[l].w;
            }
            #pragma unroll
            for (int l = 0; l < B4; ++l) {
                const int r = (t + l * NT) / (BN / 4), q = (t + l * NT) % (BN / 4) * 4;
                *reinterpret_cast<float4*>(&Bs[nxt][r][q]) = rb[l];
            }
        }
        __syncthreads();
        buf = 1 - buf;
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
