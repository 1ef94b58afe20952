// CUDA C twin of sgemm_ladder.ipynb. Step 15: inner blocks take an unchecked loop of their own, 8 k-steps unrolled.
// Macros: BM, BN, BK, WM, WN, WMI, WNI, TM, TN, PAD [, MINB].
#include "common.cuh"
#define WARPS_N (BN / WN)
#define NT (32 * (BM / WM) * WARPS_N)
#define LN (WN / (WNI * TN))
#define SM (WM / WMI)
#define SN (WN / WNI)
#define FM (WMI * TM)
#define FN (WNI * TN)
#define A4 (BM * BK / 4 / NT)
#define B4 (BK * BN / 4 / NT)
#ifndef MINB
#define MINB 1
#endif
typedef float TileA[2][BK][BM + PAD];
typedef float TileB[2][BK][BN];

// all BK k-steps of the tile in buffer buf
__device__ __forceinline__ void ktile(float (&acc)[FM][FN], const TileA& AsT, const TileB& Bs, int buf, int am, int bn) {
    float fa[FM], fb[FN];
    #pragma unroll
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
        for (int i = 0; i < FM; ++i)
            #pragma unroll
            for (int j = 0; j < FN; ++j) acc[i][j] += fa[i] * fb[j];
    }
}

// the tile held in registers -> shared buffer nxt (A transposed)
__device__ __forceinline__ void stage(TileA& AsT, TileB& Bs, int nxt, const float4 (&ra)[A4], const float4 (&rb)[B4], int t) {
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

extern "C" __global__ void __launch_bounds__(NT, MINB) lean_c(const float* a, const float* b, float* c, int m, int n, int k) {
    __shared__ __align__(16) TileA AsT;
    __shared__ __align__(16) TileB Bs;
    const int t = threadIdx.x, warp = t / 32, lane = t % 32;
    const int am = (warp / WARPS_N) * WM + (lane / LN) * TM, bn = (warp % WARPS_N) * WN + (lane % LN) * TN;
    const int brow = blockIdx.y * BM, bcol = blockIdx.x * BN;
    float acc[FM][FN] = {{0.f}};
    float4 ra[A4], rb[B4];
    #pragma unroll
    for (int l = 0; l < A4; ++l) {
        const int r = (t + l * NT) / (BK / 4), q = (t + l * NT) % (BK / 4) * 4;
        ra[l] = load_row4(a, brow + r, q, m, k);
    }
    #pragma unroll
    for (int l = 0; l < B4; ++l) {
        const int r = (t + l * NT) / (BN / 4), q = (t + l * NT) % (BN / 4) * 4;
        rb[l] = load_row4(b, r, bcol + q, k, n);
    }
    stage(AsT, Bs, 0, ra, rb, t);
    __syncthreads();
    int buf = 0, k0 = 0;
    if (brow + BM <= m && bcol + BN <= n && k % BK == 0 && (n & 3) == 0) {  // inner block: no checks
        const float* pa[A4];
        const float* pb[B4];
        #pragma unroll
        for (int l = 0; l < A4; ++l)
            pa[l] = a + (brow + (t + l * NT) / (BK / 4)) * k + BK + (t + l * NT) % (BK / 4) * 4;
        #pragma unroll
        for (int l = 0; l < B4; ++l)
            pb[l] = b + (BK + (t + l * NT) / (BN / 4)) * n + bcol + (t + l * NT) % (BN / 4) * 4;
        for (int kt = 1; kt < k / BK; ++kt) {
            #pragma unroll
            for (int l = 0; l < A4; ++l) { ra[l] = *reinterpret_cast<const float4*>(pa[l]); pa[l] += BK; }
            #pragma unroll
            for (int l = 0; l < B4; ++l) { rb[l] = *reinterpret_cast<const float4*>(pb[l]); pb[l] += BK * n; }
            ktile(acc, AsT, Bs, buf, am, bn);
            stage(AsT, Bs, 1 - buf, ra, rb, t);
            __syncthreads();
            buf = 1 - buf;
        }
        k0 = k - BK;
    }
    for (; k0 < k; k0 += BK) {  // edge blocks, and the last tile of inner ones
        const bool more = k0 + BK < k;
        if (more) {
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
        ktile(acc, AsT, Bs, buf, am, bn);
        if (more) stage(AsT, Bs, 1 - buf, ra, rb, t);
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
