// CUDA C twin of sgemm_ladder.ipynb. Step 11: cp.async into a ring of STAGES buffers, A row-major. Macros: BM, BN,
// BK, WM, WN, WMI, WNI, TM, TN, STAGES.
#include "common.cuh"
#define WARPS_N (BN / WN)
#define NT (32 * (BM / WM) * WARPS_N)
#define LN (WN / (WNI * TN))
#define LM (32 / LN)
#define SM (WM / WMI)
#define SN (WN / WNI)
#define A4 (BM * BK / 4 / NT)
#define B4 (BK * BN / 4 / NT)
#define BKP (BK + 4)
// Copy the A and B tiles starting at k0 into stage s (zeros outside the matrices).
__device__ __forceinline__ void issue_tile(float (*As)[BKP], float (*Bs)[BN], const float* a, const float* b,
                                           int m, int n, int k, int brow, int bcol, int k0, int t) {
    #pragma unroll
    for (int l = 0; l < A4; ++l) {
        const int r = (t + l * NT) / (BK / 4), q = (t + l * NT) % (BK / 4) * 4, gr = brow + r, gq = k0 + q;
        if ((k & 3) == 0) {
            const bool in = gr < m && gq < k;
            cp_async16(&As[r][q], in ? a + gr * k + gq : a, in ? 16 : 0);
        } else {
            #pragma unroll
            for (int x = 0; x < 4; ++x) {
                const bool in = gr < m && gq + x < k;
                cp_async4(&As[r][q + x], in ? a + gr * k + gq + x : a, in ? 4 : 0);
            }
        }
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

extern "C" __global__ void __launch_bounds__(NT) cp_async_c(const float* a, const float* b, float* c, int m, int n, int k) {
    __shared__ __align__(16) float As[STAGES][BM][BKP];  // A row-major: cp.async copies, it cannot transpose
    __shared__ __align__(16) float Bs[STAGES][BK][BN];
    const int t = threadIdx.x, warp = t / 32, lane = t % 32;
    const int am = (warp / WARPS_N) * WM + lane / LN;  // a lane's rows: am + mi * SM + i * LM (interleaved)
    const int bn = (warp % WARPS_N) * WN + (lane % LN) * TN;
    const int brow = blockIdx.y * BM, bcol = blockIdx.x * BN;
    const int ntiles = (k + BK - 1) / BK;
    float acc[WMI * TM][WNI * TN] = {{0.f}}, fa[WMI * TM][4], fb[WNI * TN];
    #pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < ntiles) issue_tile(As[s], Bs[s], a, b, m, n, k, brow, bcol, s * BK, t);
        cp_async_commit();
    }
    for (int tile = 0; tile < ntiles; ++tile) {
        cp_async_wait_stages();  // this thread's copies of `tile` have landed...
        __syncthreads();         // ...everyone's have, and everyone is done with tile - 1
        const int next = tile + STAGES - 1;
        if (next < ntiles) issue_tile(As[next % STAGES], Bs[next % STAGES], a, b, m, n, k, brow, bcol, next * BK, t);
        cp_async_commit();
        const int s = tile % STAGES;
        #pragma unroll
        for (int kc = 0; kc < BK; kc += 4) {
            #pragma unroll
            for (int mi = 0; mi < WMI; ++mi)
                #pragma unroll
                for (int i = 0; i < TM; ++i)
                    *reinterpret_cast<float4*>(fa[mi * TM + i]) = *reinterpret_cast<const float4*>(&As[s][am + mi * SM + i * LM][kc]);
            #pragma unroll
            for (int kq = 0; kq < 4; ++kq) {
                #pragma unroll
                for (int ni = 0; ni < WNI; ++ni)
                    #pragma unroll
                    for (int j = 0; j < TN; ++j) fb[ni * TN + j] = Bs[s][kc + kq][bn + ni * SN + j];
                #pragma unroll
                for (int i = 0; i < WMI * TM; ++i)
                    #pragma unroll
                    for (int j = 0; j < WNI * TN; ++j) acc[i][j] += fa[i][kq] * fb[j];
            }
        }
    }
    #pragma unroll
    for (int mi = 0; mi < WMI; ++mi)
        #pragma unroll
        for (int i = 0; i < TM; ++i)
            #pragma unroll
            for (int ni = 0; ni < WNI; ++ni)
                #pragma unroll
                for (int j = 0; j < TN; ++j) {
                    const int row = brow + am + mi * SM + i * LM, col = bcol + bn + ni * SN + j;
                    if (row < m && col < n) c[row * n + col] = acc[mi * TM + i][ni * TN + j];
                }
}
