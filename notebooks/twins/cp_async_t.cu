// CUDA C twin of sgemm_ladder.ipynb. Step 14: 4-byte cp.async copies transpose A; KK_UNROLL k-steps a pass. Macros:
// BM, BN, BK, WM, WN, WMI, WNI, TM, TN, PAD, STAGES, KK_UNROLL.
#include "common.cuh"
#define WARPS_N (BN / WN)
#define NT (32 * (BM / WM) * WARPS_N)
#define LN (WN / (WNI * TN))
#define SM (WM / WMI)
#define SN (WN / WNI)
#define A1 (BM * BK / NT)
#define B4 (BK * BN / 4 / NT)
#define BMP (BM + PAD)
#define PRAGMA(x) _Pragma(#x)
#define UNROLL(n) PRAGMA(unroll n)
// Copy the tiles at k0 into one stage: A one float a copy, transposed (AsT[k][m]); B 16 bytes a copy.
__device__ __forceinline__ void issue_tile_t(float (*AsT)[BMP], float (*Bs)[BN], const float* a, const float* b,
                                             int m, int n, int k, int brow, int bcol, int k0, int t) {
    #pragma unroll
    for (int l = 0; l < A1; ++l) {
        const int r = (t + l * NT) / BK, q = (t + l * NT) % BK, gr = brow + r, gq = k0 + q;
        const bool in = gr < m && gq < k;
        cp_async4(&AsT[q][r], in ? a + gr * k + gq : a, in ? 4 : 0);
    }
    #pragma unroll
    for (int l = 0; l < B4; ++l) {
        const int r = (t + l * NT) / (BN / 4), q = (t + l * NT) % (BN / 4) * 4, gr = k0 + r, gq = bcol + q;
        if ((n & 3) == 0) {
            const bool in = gr < k && gq < n;
            cp_async16(&Bs[r][q], in ? b + gr * n + gq : b, in ? 16 : 0);
        } else {
            #pragma unroll
            for (int x = 0; x < 4; ++x) {
                const bool in = gr < k && gq + x < n;
                cp_async4(&Bs[r][q + x], in ? b + gr * n + gq + x : b, in ? 4 : 0);
            }
        }
    }
}

extern "C" __global__ void __launch_bounds__(NT) cp_async_t_c(const float* a, const float* b, float* c, int m, int n, int k) {
    __shared__ __align__(16) float AsT[STAGES][BK][BMP];
    __shared__ __align__(16) float Bs[STAGES][BK][BN];
    const int t = threadIdx.x, warp = t / 32, lane = t % 32;
    const int am = (warp / WARPS_N) * WM + (lane / LN) * TM, bn = (warp % WARPS_N) * WN + (lane % LN) * TN;
    const int brow = blockIdx.y * BM, bcol = blockIdx.x * BN;
    const int ntiles = (k + BK - 1) / BK;
    float acc[WMI * TM][WNI * TN] = {{0.f}}, fa[WMI * TM], fb[WNI * TN];
    #pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < ntiles) issue_tile_t(AsT[s], Bs[s], a, b, m, n, k, brow, bcol, s * BK, t);
        cp_async_commit();
    }
    int rd = 0, wr = STAGES - 1;
    for (int tile = 0; tile < ntiles; ++tile) {
        cp_async_wait_stages();  // this thread's copies of `tile` have landed...
        __syncthreads();         // ...everyone's have, and everyone is done with stage wr
        if (tile + STAGES - 1 < ntiles)
            issue_tile_t(AsT[wr], Bs[wr], a, b, m, n, k, brow, bcol, (tile + STAGES - 1) * BK, t);
        cp_async_commit();
        UNROLL(KK_UNROLL)
        for (int kk = 0; kk < BK; ++kk) {
            #pragma unroll
            for (int mi = 0; mi < WMI; ++mi)
                #pragma unroll
                for (int i = 0; i < TM; ++i) fa[mi * TM + i] = AsT[rd][kk][am + mi * SM + i];
            #pragma unroll
            for (int ni = 0; ni < WNI; ++ni)
                #pragma unroll
                for (int j = 0; j < TN; ++j) fb[ni * TN + j] = Bs[rd][kk][bn + ni * SN + j];
            #pragma unroll
            for (int i = 0; i < WMI * TM; ++i)
                #pragma unroll
                for (int j = 0; j < WNI * TN; ++j) acc[i][j] += fa[i] * fb[j];
        }
        rd = rd + 1 < STAGES ? rd + 1 : 0;
        wr = wr + 1 < STAGES ? wr + 1 : 0;
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
