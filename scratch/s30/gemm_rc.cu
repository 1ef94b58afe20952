// scratch: util/sgemm_any_shape.cu with RC=1: A's rows in classes of equal alignment (rows cls, cls + P, ...; P = RCA /
// gcd(k, RCA), RCA 4 or 8 floats, the class from blockIdx.y), each class a matrix of mc rows and row stride P k whose k-range from s on
// starts 16-byte aligned in every row: each slice's first s (< 4) k-steps a partial tile of checked loads (as the K
// tail's), the rest 16-byte loads of A whatever k; C's rows of the class P n apart. RC=0: the twin as it is.
#ifndef RC
#define RC 0
#endif
#ifndef FORCEP
#define FORCEP 0
#endif
#ifndef RCA
#define RCA 4  // the alignment (floats, 4 or 8) the classes' rows start their aligned k-range at
#endif
// CUDA C twin of util/sgemm.py's numba kernel: SGEMM on any shape, the same algorithm in C.
// Step 15's hot loop (sgemm_ladder.ipynb) for every block: edge rows of A and columns of B clamped (their results
// are not stored), the K tail loaded once with checks, K split over blockIdx.z into slices of kslice (added by a
// second kernel, splitk_sum*_c; dst and flags, which the thin kernels' fused split-K takes, are not read here).
// Macros: BM, BN, BK, TM, TN, WM, WN, WMI, WNI, PAD, MINB, KG (util.sgemm.Tile); VA / VB: 16-byte loads of A / B;
// VC: 16-byte stores of C (util.sgemm.Plan.vc); SC: C stored through shared memory (util.sgemm.Plan.sc);
// WIDE: 64-bit offsets; FFMA_COLS / FFMA_SNAKE: the order of a k-step's FMAs (util.sgemm.FFMA_ORDERS); SHIFT_B:
// B's 4-byte loads by whole pieces, the right-edge block shifted left to end at column n (util.sgemm.Plan.shift_b);
// ROW_B (with SHIFT_B): those loads spread along rows, a warp's load 32 adjacent floats of a row (util.sgemm.Plan.row_b);
// ONE_LOOP: every k-tile through the last loop, without the first (util.sgemm.Plan.one_loop).
#ifdef BM
#define WARPS_N (BN / WN)
#define NTG (32 * (BM / WM) * WARPS_N)  // the threads of one group of warps (sliced K: KG groups)
#define NT (NTG * KG)
#define LN (WN / (WNI * TN))
#define SM (WM / WMI)
#define SN (WN / WNI)
#define FM (WMI * TM)
#define FN (WNI * TN)
#define A4 (BM * BK / 4 / NT)
#define B4 (BK * BN / 4 / NT)
#if WIDE
typedef long long off_t_;
#else
typedef int off_t_;
#endif
typedef float TileA[2][BK][BM + PAD];
typedef float TileB[2][BK][BN];

// this group's BK / KG k-steps k0, k0 + 1, ... of the tile in buffer buf (all BK of them with one group)
__device__ __forceinline__ void ktile(float (&acc)[FM][FN], const TileA& AsT, const TileB& Bs, int buf, int k0, int am, int bn) {
    float fa[FM], fb[FN];
    #pragma unroll
    for (int kk = k0; kk < k0 + BK / KG; ++kk) {
        #pragma unroll
        for (int mi = 0; mi < WMI; ++mi)
            #pragma unroll
            for (int i = 0; i < TM; ++i) fa[mi * TM + i] = AsT[buf][kk][am + mi * SM + i];
        #pragma unroll
        for (int ni = 0; ni < WNI; ++ni)
            #pragma unroll
            for (int j = 0; j < TN; ++j) fb[ni * TN + j] = Bs[buf][kk][bn + ni * SN + j];
        #pragma unroll
        for (int o = 0; o < (FFMA_COLS ? FN : FM); ++o)  // in the order FFMA_COLS / FFMA_SNAKE name (util.sgemm)
            #pragma unroll
            for (int q = 0; q < (FFMA_COLS ? FM : FN); ++q) {
                const int r = FFMA_SNAKE && o % 2 == 1 ? (FFMA_COLS ? FM : FN) - 1 - q : q;
                const int i = FFMA_COLS ? r : o, j = FFMA_COLS ? o : r;
                acc[i][j] += fa[i] * fb[j];
            }
    }
}

// (row, k) inside the tile of element x of this thread's piece l of A: 4 floats along k
__device__ __forceinline__ int a_row(int t, int l) { return (t + l * NT) / (BK / 4); }
__device__ __forceinline__ int a_k(int t, int l, int x) { return (t + l * NT) % (BK / 4) * 4 + x; }

// (k, column) inside the tile of element x of this thread's piece l of B: 4 floats along a row, or with SPREAD_B
// consecutive threads on consecutive columns (each warp's scalar load reads 128 contiguous bytes); as util/sgemm.py
// (with ROW_B the warp's RB rows, a row's CB runs of 32 columns, the lane's column in each)
#define SPREAD_B (!VB && B4 == 1)
#define PIECE_B (VB || SHIFT_B)  // one walking offset per piece of B (else one per element)
#define CB (BN / 32)             // with ROW_B: a row's runs of 32 columns
#define RB (4 * B4 / CB)         // with ROW_B: the rows of a warp's part of B's tile
__device__ __forceinline__ int b_row(int t, int l, int x) {
    return ROW_B ? (t / 32) * RB + (l * 4 + x) / CB : SPREAD_B ? (t + (l * 4 + x) * NT) / BN : (t + l * NT) / (BN / 4);
}
__device__ __forceinline__ int b_col(int t, int l, int x) {
    return ROW_B ? (l * 4 + x) % CB * 32 + t % 32
                 : SPREAD_B ? (t + (l * 4 + x) * NT) % BN : (t + l * NT) % (BN / 4) * 4 + x;
}

// the tile held in registers -> shared buffer nxt (A transposed)
__device__ __forceinline__ void stage(TileA& AsT, TileB& Bs, int nxt, const float (&ra)[A4][4], const float (&rb)[B4][4], int t) {
    #pragma unroll
    for (int l = 0; l < A4; ++l)
        #pragma unroll
        for (int x = 0; x < 4; ++x) AsT[nxt][a_k(t, l, x)][a_row(t, l)] = ra[l][x];
    #pragma unroll
    for (int l = 0; l < B4; ++l) {
#if VB
        *reinterpret_cast<float4*>(&Bs[nxt][b_row(t, l, 0)][b_col(t, l, 0)]) = make_float4(rb[l][0], rb[l][1], rb[l][2], rb[l][3]);
#else
        #pragma unroll
        for (int x = 0; x < 4; ++x) Bs[nxt][b_row(t, l, x)][b_col(t, l, x)] = rb[l][x];
#endif
    }
}

// a whole tile -> registers from walking offsets, no checks
__device__ __forceinline__ void fetch(const float* __restrict__ a, const float* __restrict__ b, float (&ra)[A4][4],
                                      float (&rb)[B4][4], off_t_ (&pa)[A4], off_t_ (&pb)[B4][4], off_t_ bstep,
                                      off_t_ nrow) {
    #pragma unroll
    for (int l = 0; l < A4; ++l) {
#if VA
        const float4 v = *reinterpret_cast<const float4*>(a + pa[l]);
        ra[l][0] = v.x; ra[l][1] = v.y; ra[l][2] = v.z; ra[l][3] = v.w;
#else
        #pragma unroll
        for (int x = 0; x < 4; ++x) ra[l][x] = a[pa[l] + x];
#endif
        pa[l] += BK;
    }
#if ROW_B
    // one walking offset; the warp's rows nrow (n) apart, a row's runs of 32 floats 32 apart
    off_t_ q = pb[0][0];
    #pragma unroll
    for (int r = 0; r < RB; ++r) {
        #pragma unroll
        for (int c = 0; c < CB; ++c) rb[(r * CB + c) / 4][(r * CB + c) % 4] = b[q + c * 32];
        q += nrow;
    }
    pb[0][0] += bstep;
#else
    #pragma unroll
    for (int l = 0; l < B4; ++l) {
#if VB
        const float4 v = *reinterpret_cast<const float4*>(b + pb[l][0]);
        rb[l][0] = v.x; rb[l][1] = v.y; rb[l][2] = v.z; rb[l][3] = v.w;
        pb[l][0] += bstep;
#elif SHIFT_B
        #pragma unroll
        for (int x = 0; x < 4; ++x) rb[l][x] = b[pb[l][0] + x];
        pb[l][0] += bstep;
#else
        #pragma unroll
        for (int x = 0; x < 4; ++x) { rb[l][x] = b[pb[l][x]]; pb[l][x] += bstep; }
#endif
    }
#endif
}

// row r of the block's tile of A: past the last row, the last row (clamped)
__device__ __forceinline__ off_t_ arow(off_t_ brow, int r, int m) {
    return min(brow + r, (off_t_)m - 1);
}

// column q + x of the block's tile of B, clamped inside the matrix (with VB, q starts a piece clamped as one)
__device__ __forceinline__ off_t_ bcol(off_t_ bcl, int q, int x, int n) {
#if VB
    return min(bcl + q, (off_t_)n - 4) + x;
#else
    return min(bcl + q + x, (off_t_)n - 1);
#endif
}

// the last, partial tile -> registers: zeros past kend (rows and columns recomputed here)
__device__ __forceinline__ void fetch_tail(const float* __restrict__ a, const float* __restrict__ b, float (&ra)[A4][4],
                                           float (&rb)[B4][4], off_t_ k0, off_t_ kend, off_t_ brow, off_t_ bcl,
                                           int m, int n, int k, int t) {
    #pragma unroll
    for (int l = 0; l < A4; ++l)
        #pragma unroll
        for (int x = 0; x < 4; ++x) {
            const off_t_ kq = k0 + a_k(t, l, x);
            ra[l][x] = kq < kend ? a[arow(brow, a_row(t, l), m) * k + kq] : 0.f;
        }
    #pragma unroll
    for (int l = 0; l < B4; ++l)
        #pragma unroll
        for (int x = 0; x < 4; ++x) {
#if VB
            const off_t_ kr = k0 + b_row(t, l, 0), col = bcol(bcl, b_col(t, l, 0), x, n);
#else
            const off_t_ kr = k0 + b_row(t, l, x), col = bcol(bcl, b_col(t, l, x), 0, n);
#endif
            rb[l][x] = kr < kend ? b[kr * n + col] : 0.f;
        }
}

extern "C" __global__ void __launch_bounds__(NT, MINB) gemm_c(const float* __restrict__ a, const float* __restrict__ b,
                                                              float* __restrict__ out, float* __restrict__ dst,
                                                              int* flags, int m, int n, int k, int kslice) {
    __shared__ __align__(16) TileA AsT;
    __shared__ __align__(16) TileB Bs;
    // the group of warps (sliced K) and the thread in it
    const int t = threadIdx.x, g = KG > 1 ? t / NTG : 0, tg = KG > 1 ? t % NTG : t, warp = tg / 32, lane = tg % 32;
    const int k0 = g * (BK / KG);  // the group's first k-step of each tile
#if RC
#if FORCEP  // (a probe of the layout: this many classes whatever k)
    const int P = FORCEP, cls = blockIdx.y % P, ty = blockIdx.y / P;
#else
    const int P = (k & 1) ? RCA : (k & 2) ? RCA / 2 : (k & 4) ? RCA / 4 : 1, cls = blockIdx.y % P, ty = blockIdx.y / P;
#endif
    const int M_ = (m - cls + P - 1) / P;  // the class's rows
    const int s = (RCA - (int)(((long long)cls * k) & (RCA - 1))) & (RCA - 1);  // k-steps before its rows' boundary
    a += (long long)cls * k;
    out += (long long)cls * n;
    const off_t_ KA = (off_t_)P * k;
    const long long LDC = (long long)P * n;
    if ((long long)ty * BM >= M_) return;  // a class with fewer rows: no rows here (the whole block)
#else
    const int ty = blockIdx.y, M_ = m;
    const off_t_ KA = k;
    const long long LDC = n;
#endif
    const int am = (warp / WARPS_N) * WM + (lane / LN) * TM, bn = (warp % WARPS_N) * WN + (lane % LN) * TN;
    // bcl: this block's first column of B; with SHIFT_B the right-edge block's is n - BN, and it stores only the
    // columns from its own BN-aligned start (bcl0) on
#if SHIFT_B
    const off_t_ brow = (off_t_)ty * BM, bcl0 = (off_t_)blockIdx.x * BN, bcl = min(bcl0, (off_t_)n - BN);
#else
    const off_t_ brow = (off_t_)ty * BM, bcl = (off_t_)blockIdx.x * BN;
#endif
    const off_t_ kbeg = (off_t_)blockIdx.z * kslice, kend = min(kbeg + kslice, (off_t_)k);
#if RC
    const off_t_ head = min((off_t_)s, kend - kbeg), KB = kbeg + head;  // the aligned part from KB
#else
    const off_t_ head = 0, KB = kbeg;
#endif
    float acc[FM][FN] = {{0.f}};
    float ra[A4][4], rb[B4][4];
    off_t_ pa[A4], pb[B4][4];  // walking offsets: one per piece; for B's 4-byte loads without SHIFT_B, one per element
    #pragma unroll
    for (int l = 0; l < A4; ++l) pa[l] = arow(brow, a_row(t, l), M_) * KA + KB + a_k(t, l, 0);
#if ROW_B
    pb[0][0] = (KB + b_row(t, 0, 0)) * n + bcl + b_col(t, 0, 0);
#else
    #pragma unroll
    for (int l = 0; l < B4; ++l)
        #pragma unroll
        for (int x = 0; x < (PIECE_B ? 1 : 4); ++x) pb[l][x] = (KB + b_row(t, l, x)) * n + bcol(bcl, b_col(t, l, x), 0, n);
#endif
    const off_t_ bstep = (off_t_)BK * n;
    const off_t_ ntiles = (kend - KB + BK - 1) / BK, nfull = (kend - KB) / BK;
    int buf = 0;
    if (head > 0) {  // the slice's first head k-steps, a partial tile, while the first aligned one is fetched
        fetch_tail(a, b, ra, rb, kbeg, KB, brow, bcl, M_, n, KA, t);
        stage(AsT, Bs, 0, ra, rb, t);
        __syncthreads();
        if (nfull > 0) fetch(a, b, ra, rb, pa, pb, bstep, n);
        else if (ntiles > 0) fetch_tail(a, b, ra, rb, KB, kend, brow, bcl, M_, n, KA, t);
        ktile(acc, AsT, Bs, 0, k0, am, bn);
        if (ntiles > 0) stage(AsT, Bs, 1, ra, rb, t);
        __syncthreads();
        buf = 1;
    } else {
        if (nfull > 0) fetch(a, b, ra, rb, pa, pb, bstep, n);
        else fetch_tail(a, b, ra, rb, KB, kend, brow, bcl, M_, n, KA, t);
        stage(AsT, Bs, 0, ra, rb, t);
        __syncthreads();
    }
    off_t_ j = 0;  // the tile in buffer buf
#if !ONE_LOOP  // (with ONE_LOOP, as numba's, every tile through the loop below)
    for (; j + 1 < nfull; ++j) {  // one tile a pass, as the ladder's C twin: nvcc keeps both buffers' addresses
        fetch(a, b, ra, rb, pa, pb, bstep, n);
        ktile(acc, AsT, Bs, buf, k0, am, bn);
        stage(AsT, Bs, 1 - buf, ra, rb, t);
        __syncthreads();
        buf = 1 - buf;
    }
#endif
    for (; j < ntiles; ++j) {  // the last whole tile and the tail (with ONE_LOOP every tile): one copy of ktile
        const bool more = j + 1 < ntiles;
        if (j + 1 < nfull) fetch(a, b, ra, rb, pa, pb, bstep, n);
        else if (more) fetch_tail(a, b, ra, rb, KB + (j + 1) * BK, kend, brow, bcl, M_, n, KA, t);
        ktile(acc, AsT, Bs, buf, k0, am, bn);
        if (more) stage(AsT, Bs, 1 - buf, ra, rb, t);
        __syncthreads();
        buf = 1 - buf;
    }
#if SC
    // every group's sums into one BM x BN tile in shared memory (group 0 adds the others' in order to its own, each
    // thread only at its own results' places), then every thread stores a column of it, consecutive threads on
    // consecutive columns (numba_kernel's `staged`)
    __shared__ __align__(16) float cs[KG - 1][BM][BN];
    if (g > 0) {
        #pragma unroll
        for (int mi = 0; mi < WMI; ++mi)
            #pragma unroll
            for (int i = 0; i < TM; ++i)
                #pragma unroll
                for (int ni = 0; ni < WNI; ++ni)
                    #pragma unroll
                    for (int jj = 0; jj < TN; ++jj)
                        cs[g - 1][am + mi * SM + i][bn + ni * SN + jj] = acc[mi * TM + i][ni * TN + jj];
    }
    __syncthreads();
    if (g == 0) {
        #pragma unroll
        for (int mi = 0; mi < WMI; ++mi)
            #pragma unroll
            for (int i = 0; i < TM; ++i)
                #pragma unroll
                for (int ni = 0; ni < WNI; ++ni)
                    #pragma unroll
                    for (int jj = 0; jj < TN; ++jj) {
                        float v = acc[mi * TM + i][ni * TN + jj];
                        #pragma unroll
                        for (int h = 0; h < KG - 1; ++h) v += cs[h][am + mi * SM + i][bn + ni * SN + jj];
                        cs[0][am + mi * SM + i][bn + ni * SN + jj] = v;
                    }
    }
    __syncthreads();
    {
        const int c = t % BN;
        const long long col = bcl + c;
#if SHIFT_B
        if (col < n && col >= bcl0) {
#else
        if (col < n) {
#endif
            const long long row0 = brow + t / BN;
            long long p = (long long)blockIdx.z * m * n + row0 * LDC + col;
            #pragma unroll
            for (int e = 0; e < BM / (NT / BN); ++e) {
                if (row0 + e * (NT / BN) < M_) out[p] = cs[0][e * (NT / BN) + t / BN][c];
                p += (long long)(NT / BN) * LDC;
            }
        }
    }
    return;
#elif KG > 1
    // groups 1, 2, ... hand their sums to group 0 through shared memory, which adds them in that order and stores
    __shared__ float red[KG - 1][FM * FN][NTG];  // element-major: conflict-free
    if (g > 0) {
        #pragma unroll
        for (int i = 0; i < FM; ++i)
            #pragma unroll
            for (int c = 0; c < FN; ++c) red[g - 1][i * FN + c][tg] = acc[i][c];
    }
    __syncthreads();
    if (g > 0) return;
    #pragma unroll
    for (int h = 0; h < KG - 1; ++h)
        #pragma unroll
        for (int i = 0; i < FM; ++i)
            #pragma unroll
            for (int c = 0; c < FN; ++c) acc[i][c] += red[h][i * FN + c][tg];
#endif
    const long long base = (long long)blockIdx.z * m * n;
#if VC
    // n % 4 == 0: a lane's 4 columns are all in C or all past it, one 16-byte store; each store's own predicate and
    // the rows' offsets by adds (numba_kernel's form)
    const long long row0 = brow + am, rb0 = base + row0 * LDC + bcl + bn;
    #pragma unroll
    for (int mi = 0; mi < WMI; ++mi)
        #pragma unroll
        for (int i = 0; i < TM; ++i) {
            const bool ok = row0 + mi * SM + i < M_;
            const long long rbase = rb0 + (long long)(mi * SM + i) * LDC;
            #pragma unroll
            for (int ni = 0; ni < WNI; ++ni)
                if (ok && bcl + bn + ni * SN < n)
                    *reinterpret_cast<float4*>(out + rbase + ni * SN) = make_float4(
                        acc[mi * TM + i][ni * TN], acc[mi * TM + i][ni * TN + 1], acc[mi * TM + i][ni * TN + 2],
                        acc[mi * TM + i][ni * TN + 3]);
        }
    return;
#endif
    #pragma unroll
    for (int mi = 0; mi < WMI; ++mi)
        #pragma unroll
        for (int i = 0; i < TM; ++i)
            #pragma unroll
            for (int ni = 0; ni < WNI; ++ni)
                #pragma unroll
                for (int jj = 0; jj < TN; ++jj) {
                    const long long row = brow + am + mi * SM + i, col = bcl + bn + ni * SN + jj;
#if SHIFT_B
                    if (row < M_ && col < n && col >= bcl0) out[base + row * LDC + col] = acc[mi * TM + i][ni * TN + jj];
#else
                    if (row < M_ && col < n) out[base + row * LDC + col] = acc[mi * TM + i][ni * TN + jj];
#endif
                }
}
#else  // compiled without the tile macros: the split-K sum alone

// c[i] = ws[0 * mn + i] + ws[1 * mn + i] + ... in that order (the numba splitk_sum's twin)
extern "C" __global__ void splitk_sum_c(const float* __restrict__ ws, float* __restrict__ c, long long mn, int splits) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < mn; i += (long long)gridDim.x * blockDim.x) {
        float s = ws[i];
        for (int z = 1; z < splits; ++z) s += ws[z * mn + i];
        c[i] = s;
    }
}

// splitk_sum_c with 8 lanes an element (the numba splitk_sum8's twin): lane q adds slices q per .. (q + 1) per - 1 in
// order, the 8 partial sums added by shuffles (xor 1, 2, 4), lane 0 stores; a warp stays whole in the loop; 32-bit
// workspace offsets (splits x mn < 2^32 where it is taken)
extern "C" __global__ void splitk_sum8_c(const float* __restrict__ ws, float* __restrict__ c, long long mn, int splits) {
    const unsigned q = threadIdx.x % 8, per = (splits + 7) / 8;
    const unsigned z0 = min(q * per, (unsigned)splits), z1 = min(z0 + per, (unsigned)splits);
    const long long first = threadIdx.x % 32 / 8, stride = (long long)gridDim.x * blockDim.x / 8;
    for (long long i = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 8; i - first < mn; i += stride) {
        float s = 0.0f;
        if (i < mn)
            for (unsigned z = z0; z < z1; z += 8) {  // 8 slices a pass, the loads first (zeros past z1)
                float v[8];
                #pragma unroll
                for (int u = 0; u < 8; ++u) v[u] = z + u < z1 ? ws[(z + u) * (unsigned)mn + (unsigned)i] : 0.0f;
                #pragma unroll
                for (int u = 0; u < 8; ++u) s += v[u];
            }
        s += __shfl_xor_sync(0xffffffffu, s, 1);
        s += __shfl_xor_sync(0xffffffffu, s, 2);
        s += __shfl_xor_sync(0xffffffffu, s, 4);
        if (q == 0 && i < mn) c[i] = s;
    }
}

// splitk_sum_c four floats a thread, 16-byte loads and stores (mn % 4 == 0, c 16-byte aligned; the numba splitk_sum4's twin)
extern "C" __global__ void splitk_sum4_c(const float* __restrict__ ws, float* __restrict__ c, long long mn, int splits) {
    for (long long i = 4 * (blockIdx.x * (long long)blockDim.x + threadIdx.x); i < mn; i += 4LL * gridDim.x * blockDim.x) {
        float4 s = *reinterpret_cast<const float4*>(ws + i);
        for (int z = 1; z < splits; ++z) {
            const float4 v = *reinterpret_cast<const float4*>(ws + z * mn + i);
            s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w;
        }
        *reinterpret_cast<float4*>(c + i) = s;
    }
}
#endif
