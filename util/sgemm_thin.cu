// CUDA C twins of util/sgemm_thin.py's numba kernels: SGEMM where C has few rows (THIN_ROWS) or few columns
// (THIN_COLS), the large operand read once, coalesced, with 4-byte loads, and C with one row and B 16-byte aligned
// (THIN_ROWS_VEC: 16-byte loads; its macros NW, VROWS, CB, WIDE, MINB, FUSE), and C with one column (THIN_COLS_VEC:
// lanes along k; its macros NW, CROWS, CLOADS, VA, WIDE, MINB, FUSE), and C with one row and few columns
// (THIN_ROWS_FEW: lanes along k, B read flat; its macros NW, S, FSTEPS, WIDE, MINB, FUSE); the same algorithms, line
// for line.
// Macros: W (rows / columns of C a block computes), WIDE (64-bit offsets), KP (the deepest K slice: Thin.kmax),
// SHARED_FLOATS, NW (warps a block), MINB (launch bounds' blocks an SM), FUSE (the last block of an output tile adds
// its slices: util/splitk.cuh); THIN_COLS also R (rows a lane) and WP (a k-step's padded row of B).
#if WIDE
typedef long long off_t_;
#else
typedef int off_t_;
#endif
#define NT (32 * NW)
#include "splitk.cuh"

#ifdef THIN_ROWS
#define JPR (KP / NT)  // elements of a row of A's slice a thread stages
#define SJ (W * JPR)

// the FMAs of k-steps k4 .. k4 + 3 (B's rows in bv; A's from shared memory, 4 values of a row at once)
__device__ __forceinline__ void group(float (&acc)[W][4], const float (&bv)[4][4], const float* sh, unsigned k4) {
    #pragma unroll
    for (int i = 0; i < W; ++i) {
        const float4 av = *reinterpret_cast<const float4*>(sh + i * KP + k4);
        #pragma unroll
        for (int c = 0; c < 4; ++c) {
            acc[i][c] += av.x * bv[0][c];
            acc[i][c] += av.y * bv[1][c];
            acc[i][c] += av.z * bv[2][c];
            acc[i][c] += av.w * bv[3][c];
        }
    }
}

// C's rows r0 .. r0 + W, columns c0 .. c0 + 128, over slice blockIdx.z of K, into out[blockIdx.z] (and with several
// and FUSE, the tile's last block adds them into dst, C)
extern "C" __global__ void __launch_bounds__(NT, MINB)
gemm_rows_c(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out, float* __restrict__ dst,
            int* flags, int m, int n, int k, int kslice) {
    __shared__ __align__(16) float sh[SHARED_FLOATS];
    const unsigned t = threadIdx.x, lane = t % 32, w = t / 32;
    const off_t_ r0 = (off_t_)blockIdx.y * W, c0 = (off_t_)blockIdx.x * 128, kb = (off_t_)blockIdx.z * kslice;
    const off_t_ ks = min(kb + kslice, (off_t_)k) - kb;
    // A[r0 + i, kb + q] -> sh[i * KP + q] for every q < KP (zeros from ks on; a row past m: the last row), loads
    // first; the stores unpredicated (behind a predicate each, the shared window's base was read again for each)
    float v[SJ];
    #pragma unroll
    for (int j = 0; j < SJ; ++j) {
        const off_t_ q = t + NT * (j % JPR), row = min(r0 + j / JPR, (off_t_)m - 1);
        v[j] = q < ks ? a[row * k + kb + q] : 0.0f;
    }
    #pragma unroll
    for (int j = 0; j < SJ; ++j) {
        sh[j / JPR * KP + (unsigned)(t + NT * (j % JPR))] = v[j];
    }
    off_t_ col[4];  // this lane's columns c0 + lane + 32 c, clamped to the last (their results are not stored)
    #pragma unroll
    for (int c = 0; c < 4; ++c) col[c] = min(c0 + lane + 32 * c, (off_t_)n - 1);
    float acc[W][4], bv[4][4];
    #pragma unroll
    for (int i = 0; i < W; ++i)
        #pragma unroll
        for (int c = 0; c < 4; ++c) acc[i][c] = 0.0f;
    __syncthreads();
    const off_t_ full = ks / 4, step = (off_t_)(4 * NW) * n;  // whole groups of 4 k-steps: warp w takes w, w + 4, ...
    off_t_ g = w, pb = (kb + 4 * g) * n;
    for (; g < full; g += NW, pb += step) {
        #pragma unroll
        for (int u = 0; u < 4; ++u)
            #pragma unroll
            for (int c = 0; c < 4; ++c) bv[u][c] = __ldcs(b + pb + u * (off_t_)n + col[c]);
        group(acc, bv, sh, (unsigned)(4 * g));
    }
    if (4 * g < ks) {  // the slice's last, partial group: its k-steps past ks are zeros in A's slice
        #pragma unroll
        for (int u = 0; u < 4; ++u)
            #pragma unroll
            for (int c = 0; c < 4; ++c) bv[u][c] = 4 * g + u < ks ? __ldcs(b + pb + u * (off_t_)n + col[c]) : 0.0f;
        group(acc, bv, sh, (unsigned)(4 * g));
    }
    // warps 1, 2, 3 hand their sums to warp 0 through the same shared buffer, which adds them in that order
    __syncthreads();
    if (w > 0) {
        #pragma unroll
        for (int i = 0; i < W; ++i)
            #pragma unroll
            for (int c = 0; c < 4; ++c) sh[(w - 1) * (W * 128) + i * 128 + c * 32 + lane] = acc[i][c];
    }
    __syncthreads();
    if (w == 0) {
        #pragma unroll
        for (int h = 0; h < NW - 1; ++h)
            #pragma unroll
            for (int i = 0; i < W; ++i)
                #pragma unroll
                for (int x = 0; x < 4; ++x) acc[i][x] += sh[h * W * 128 + i * 128 + x * 32 + lane];
        const off_t_ base = (off_t_)blockIdx.z * m * n;
        #pragma unroll
        for (int i = 0; i < W; ++i) {
            const off_t_ row = r0 + i;
            if (row < m) {
                #pragma unroll
                for (int x = 0; x < 4; ++x) {
                    const off_t_ cc = c0 + lane + 32 * x;
                    if (cc < n) out[base + row * n + cc] = acc[i][x];
                }
            }
        }
    }
#if FUSE
    add_slices<W, 128, NT>(out, dst, flags, m, n, r0, c0);  // the tile's last block adds the slices
#endif
}
#endif

#ifdef THIN_COLS
#define SJ (KP * W / NT)  // elements of B's slice a thread stages

// the FMAs of this lane's k-step q (A's values for its R rows in av; B's row q from shared memory)
__device__ __forceinline__ void step(float (&acc)[R][W], const float (&av)[R], const float* sh, unsigned q) {
    float bw[W];
    #pragma unroll
    for (int j = 0; j < W; ++j) bw[j] = sh[q * WP + j];
    #pragma unroll
    for (int ri = 0; ri < R; ++ri)
        #pragma unroll
        for (int j = 0; j < W; ++j) acc[ri][j] += av[ri] * bw[j];
}

// C's rows r0 .. r0 + 16 R, columns c0 .. c0 + W, over slice blockIdx.z of K, into out[blockIdx.z] (and with
// several and FUSE, the tile's last block adds them into dst, C)
extern "C" __global__ void __launch_bounds__(NT, MINB)
gemm_cols_c(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out, float* __restrict__ dst,
            int* flags, int m, int n, int k, int kslice) {
    __shared__ __align__(16) float sh[SHARED_FLOATS];
    const unsigned t = threadIdx.x, lane = t % 32, w = t / 32, kr = lane % 8;
    const off_t_ r0 = (off_t_)blockIdx.y * (4 * NW * R) + (w * (4 * R) + lane / 8);  // this lane's rows r0 + 4 ri
    const off_t_ c0 = (off_t_)blockIdx.x * W, kb = (off_t_)blockIdx.z * kslice;
    const off_t_ ks = min(kb + kslice, (off_t_)k) - kb;
    // B[kb + q, c0 + j] -> sh[q * WP + j] for every q < KP (zeros from ks on and past column n), the loads first; the
    // stores unpredicated (as in gemm_rows_c)
    const unsigned tq = t / W, tc = t % W;
    const off_t_ col = c0 + tc, pb = (kb + tq) * n + col;
    float v[SJ];
    #pragma unroll
    for (int s = 0; s < SJ; ++s) {
        const off_t_ q = tq + s * (NT / W);
        v[s] = q < ks && col < n ? b[pb + (off_t_)(s * (NT / W)) * n] : 0.0f;
    }
    const unsigned sb = tq * WP + tc;
    #pragma unroll
    for (int s = 0; s < SJ; ++s) sh[sb + s * (NT / W) * WP] = v[s];
    off_t_ pa[R];  // walking offsets of this lane's rows of A (a row past m: the last row; not stored)
    #pragma unroll
    for (int ri = 0; ri < R; ++ri) pa[ri] = min(r0 + 4 * ri, (off_t_)m - 1) * k + kb + kr;
    float acc[R][W], av[4][R];
    #pragma unroll
    for (int ri = 0; ri < R; ++ri)
        #pragma unroll
        for (int j = 0; j < W; ++j) acc[ri][j] = 0.0f;
    __syncthreads();
    const off_t_ full = ks / 32;  // whole passes of 32 k-steps: 4 steps of 8 lanes
    off_t_ p = 0;
    for (; p < full; ++p) {
        #pragma unroll
        for (int u = 0; u < 4; ++u)
            #pragma unroll
            for (int ri = 0; ri < R; ++ri) av[u][ri] = a[pa[ri] + 8 * u];
        #pragma unroll
        for (int u = 0; u < 4; ++u) step(acc, av[u], sh, (unsigned)(32 * p) + 8 * u + kr);
        #pragma unroll
        for (int ri = 0; ri < R; ++ri) pa[ri] += 32;
    }
    if (32 * p < ks) {  // the last, partial pass: k-steps past ks are zeros in B's slice, and not loaded of A
        #pragma unroll
        for (int u = 0; u < 4; ++u) {
            const bool live = 32 * p + 8 * u + kr < ks;
            #pragma unroll
            for (int ri = 0; ri < R; ++ri) av[u][ri] = live ? a[pa[ri] + 8 * u] : 0.0f;
        }
        #pragma unroll
        for (int u = 0; u < 4; ++u) step(acc, av[u], sh, (unsigned)(32 * p) + 8 * u + kr);
    }
    // the 8 lanes along k add their sums: each gets the same, in the same order
    #pragma unroll
    for (int ri = 0; ri < R; ++ri)
        #pragma unroll
        for (int j = 0; j < W; ++j) {
            float x = acc[ri][j];
            x += __shfl_xor_sync(0xffffffffu, x, 1);
            x += __shfl_xor_sync(0xffffffffu, x, 2);
            x += __shfl_xor_sync(0xffffffffu, x, 4);
            acc[ri][j] = x;
        }
    const off_t_ base = (off_t_)blockIdx.z * m * n;  // lane kr stores the columns j with j % 8 == kr
    #pragma unroll
    for (int ri = 0; ri < R; ++ri) {
        const off_t_ row = r0 + 4 * ri;
        if (row < m) {
            #pragma unroll
            for (int j = 0; j < W; ++j)
                if (kr == j % 8 && c0 + j < n) out[base + row * n + c0 + j] = acc[ri][j];
        }
    }
#if FUSE
    add_slices<4 * NW * R, W, NT>(out, dst, flags, m, n, (off_t_)blockIdx.y * (4 * NW * R), c0);  // the last block adds
#endif
}
#endif

#ifdef THIN_ROWS_VEC
// C's columns c0 .. c0 + CB of its one row over slice blockIdx.z of K, into out[blockIdx.z] (with FUSE, the tile's
// last block adds the slices into dst, C); n % 4 == 0 and B 16-byte aligned. NW warps, VROWS rows of B in flight each;
// a warp's lanes on G = 128 / CB rows at once (CB / 4 lanes a row).
#define G (128 / CB)
#define L (CB / 4)
extern "C" __global__ void __launch_bounds__(NT, MINB)
gemm_rows_vec_c(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
                float* __restrict__ dst, int* flags, int m, int n, int k, int kslice) {
    __shared__ float red[NW * G][CB];
    const unsigned t = threadIdx.x, w = t / 32, lane = t % 32, q = w * G + lane / L;  // q: this lane's row of NW G
    const off_t_ c0 = (off_t_)blockIdx.x * CB, kb = (off_t_)blockIdx.z * kslice, kend = min(kb + kslice, (off_t_)k);
    const off_t_ col = min(c0 + lane % L * 4, (off_t_)n - 4);  // the last block's clamped to the last 4 (not stored)
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    off_t_ r = kb + q, pb = r * n + col;  // rows kb + q, kb + q + NW G, ...
    const off_t_ step = (off_t_)(NW * G) * n;
    for (; r + (VROWS - 1) * NW * G < kend; r += VROWS * NW * G, pb += VROWS * step) {  // VROWS rows in flight
        float av[VROWS];
        float4 bv[VROWS];
        #pragma unroll
        for (int u = 0; u < VROWS; ++u) {
            av[u] = a[r + u * NW * G];
            bv[u] = __ldcs(reinterpret_cast<const float4*>(b + pb + u * step));
        }
        #pragma unroll
        for (int u = 0; u < VROWS; ++u) {
            acc[0] += av[u] * bv[u].x;
            acc[1] += av[u] * bv[u].y;
            acc[2] += av[u] * bv[u].z;
            acc[3] += av[u] * bv[u].w;
        }
    }
    for (; r < kend; r += NW * G, pb += step) {  // the slice's last rows, one at a time
        const float x = a[r];
        const float4 v = __ldcs(reinterpret_cast<const float4*>(b + pb));
        acc[0] += x * v.x;
        acc[1] += x * v.y;
        acc[2] += x * v.z;
        acc[3] += x * v.w;
    }
    #pragma unroll
    for (int j = 0; j < 4; ++j) red[q][lane % L * 4 + j] = acc[j];
    __syncthreads();
    if (t < CB) {  // thread t adds column c0 + t's sums in the order of their first rows
        float s = -0.0f;  // -0.0 + x is x: the first sum is red[0][t] itself (as util/sgemm_thin.py's)
        #pragma unroll
        for (int h = 0; h < NW * G; ++h) s += red[h][t];
        const off_t_ c = c0 + t;
        if (c < n) out[(off_t_)blockIdx.z * n + c] = s;
    }
#if FUSE
    add_slices<1, CB, NT>(out, dst, flags, m, n, 0, c0);  // the tile's last block adds the slices
#endif
}
#endif

#ifdef THIN_COLS_VEC
// C = A x: C's rows r0 .. r0 + NW CROWS of its one column over slice blockIdx.z of K, into out[blockIdx.z] (with
// FUSE, the tile's last block adds the slices into dst, C); n == 1. Each warp CROWS rows, its lanes along k, CLOADS
// loads a row in flight; VA: 16-byte loads (k % 4 == 0, A and B 16-byte aligned), else 4-byte.
#define BMV (NW * CROWS)
#define CL (VA ? 4 : 1)  // floats a lane loads at once

// a pass's loads: B's values at q + 32 CL j into xv[j], each row's of A into av[i][j]; where not whole, those at or
// past kend are zeros, not loaded
__device__ __forceinline__ void load_pass(const float* __restrict__ a, const float* __restrict__ b,
                                          float (&av)[CROWS][CLOADS][CL], float (&xv)[CLOADS][CL],
                                          const off_t_ (&pa)[CROWS], off_t_ q, off_t_ kend, bool whole) {
    #pragma unroll
    for (int j = 0; j < CLOADS; ++j) {
        const off_t_ qj = q + 32 * CL * j;
        const bool live = whole || qj < kend;
#if VA
        const float4 v = live ? __ldg(reinterpret_cast<const float4*>(b + qj)) : make_float4(0.f, 0.f, 0.f, 0.f);
        xv[j][0] = v.x; xv[j][1] = v.y; xv[j][2] = v.z; xv[j][3] = v.w;
#else
        xv[j][0] = live ? __ldg(b + qj) : 0.0f;
#endif
    }
    #pragma unroll
    for (int i = 0; i < CROWS; ++i)
        #pragma unroll
        for (int j = 0; j < CLOADS; ++j) {
            const off_t_ qj = q + 32 * CL * j;
            const bool live = whole || qj < kend;
#if VA
            const float4 v = live ? __ldcs(reinterpret_cast<const float4*>(a + (pa[i] + qj)))
                                  : make_float4(0.f, 0.f, 0.f, 0.f);
            av[i][j][0] = v.x; av[i][j][1] = v.y; av[i][j][2] = v.z; av[i][j][3] = v.w;
#else
            av[i][j][0] = live ? __ldcs(a + (pa[i] + qj)) : 0.0f;  // the offset first, as numba forms it
#endif
        }
}

__device__ __forceinline__ void fma_pass(float (&acc)[CROWS], const float (&av)[CROWS][CLOADS][CL],
                                         const float (&xv)[CLOADS][CL]) {
    #pragma unroll
    for (int i = 0; i < CROWS; ++i)
        #pragma unroll
        for (int j = 0; j < CLOADS; ++j)
            #pragma unroll
            for (int e = 0; e < CL; ++e) acc[i] += av[i][j][e] * xv[j][e];
}

extern "C" __global__ void __launch_bounds__(NT, MINB)
gemm_cols_vec_c(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
                float* __restrict__ dst, int* flags, int m, int n, int k, int kslice) {
    const unsigned t = threadIdx.x, lane = t % 32, w = t / 32;
    const off_t_ r0 = (off_t_)blockIdx.y * BMV + w * CROWS;  // this warp's rows r0, r0 + 1, ...
    const off_t_ kb = (off_t_)blockIdx.z * kslice, kend = min(kb + kslice, (off_t_)k);
    off_t_ pa[CROWS];  // offsets of this warp's rows (a row past m: the last row; not stored)
    #pragma unroll
    for (int i = 0; i < CROWS; ++i) pa[i] = min(r0 + i, (off_t_)m - 1) * k;
    float acc[CROWS], av[CROWS][CLOADS][CL], xv[CLOADS][CL];
    #pragma unroll
    for (int i = 0; i < CROWS; ++i) acc[i] = 0.0f;
    off_t_ q = kb + lane * CL;  // this lane's first k-step; a pass covers q + 32 CL j, j < CLOADS
    // whole passes (with VA, CL values at once: kend % 4 == 0)
    for (; q + 32 * CL * (CLOADS - 1) < kend; q += 32 * CL * CLOADS) {
        load_pass(a, b, av, xv, pa, q, kend, true);
        fma_pass(acc, av, xv);
    }
    if (q < kend) {  // the slice's last, partial pass: its loads at or past kend are zeros
        load_pass(a, b, av, xv, pa, q, kend, false);
        fma_pass(acc, av, xv);
    }
    #pragma unroll
    for (int i = 0; i < CROWS; ++i) {  // the 32 lanes add a row's sums: each gets the same, in the same order
        float x = acc[i];
        x += __shfl_xor_sync(0xffffffffu, x, 16);
        x += __shfl_xor_sync(0xffffffffu, x, 8);
        x += __shfl_xor_sync(0xffffffffu, x, 4);
        x += __shfl_xor_sync(0xffffffffu, x, 2);
        x += __shfl_xor_sync(0xffffffffu, x, 1);
        acc[i] = x;
    }
    #pragma unroll
    for (int i = 0; i < CROWS; ++i) {  // lane i stores row r0 + i
        const off_t_ row = r0 + i;
        if (lane == (unsigned)i && row < m) out[(off_t_)blockIdx.z * m + row] = acc[i];
    }
#if FUSE
    add_slices<BMV, 1, NT>(out, dst, flags, m, n, (off_t_)blockIdx.y * BMV, 0);  // the tile's last block adds them
#endif
}
#endif

#ifdef THIN_ROWS_FEW
// C's one row, its n <= S columns, over slice blockIdx.z of K, into out[blockIdx.z] (with FUSE, the tile's last block
// adds the slices into dst, C). NW warps, lanes along k: a warp's 32 rows of B (32 n floats) read flat, lane l's slot
// u < n element l + 32 u, of row (l + 32 u) / n, whose A value lane (l + 32 u) / n loaded; FSTEPS steps of 32 rows in
// flight a lane.
#define STEP (32 * NW)
__device__ __forceinline__ void few_fma(float (&acc)[S], const float (&av)[FSTEPS], const float (&bv)[FSTEPS][S],
                                        const int (&src)[S]) {
    #pragma unroll
    for (int v = 0; v < FSTEPS; ++v)
        #pragma unroll
        for (int u = 0; u < S; ++u) acc[u] += __shfl_sync(0xffffffffu, av[v], src[u]) * bv[v][u];
}

extern "C" __global__ void __launch_bounds__(NT, MINB)
gemm_rows_few_c(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
                float* __restrict__ dst, int* flags, int m, int n, int k, int kslice) {
    __shared__ float red[NW][32 * S];  // each warp's 32 x n sums, row-major
    __shared__ float part[NW][S];      // each warp's column sums
    const unsigned t = threadIdx.x, w = t / 32, lane = t % 32, un = n;
    const off_t_ kb = (off_t_)blockIdx.z * kslice, kend = min(kb + kslice, (off_t_)k);
    int src[S];  // slot u's row in the warp's 32, the lane holding its A value (a slot past n: any lane; its B is 0)
    float acc[S];
    #pragma unroll
    for (int u = 0; u < S; ++u) {
        src[u] = (lane + 32 * u) / un % 32;
        acc[u] = 0.0f;
    }
    float av[FSTEPS], bv[FSTEPS][S];
    off_t_ r = kb + w * 32, pb = r * n + lane;  // the warp's first row; slot 0's element of B
    const off_t_ stepb = (off_t_)STEP * n;
    for (; r + (FSTEPS - 1) * STEP + 32 <= kend; r += FSTEPS * STEP, pb += FSTEPS * stepb) {  // FSTEPS whole steps
        #pragma unroll
        for (int v = 0; v < FSTEPS; ++v) {
            av[v] = a[r + v * STEP + lane];
            #pragma unroll
            for (int u = 0; u < S; ++u) bv[v][u] = (unsigned)u < un ? __ldcs(b + pb + v * stepb + 32 * u) : 0.0f;
        }
        few_fma(acc, av, bv, src);
    }
    if (r < kend) {  // the slice's last, partial pass: rows at or past kend are zeros, not loaded
        #pragma unroll
        for (int v = 0; v < FSTEPS; ++v) {
            const off_t_ rv = r + v * STEP, lim = (kend - rv) * n;  // this step's elements before kend
            av[v] = rv + lane < kend ? a[rv + lane] : 0.0f;
            #pragma unroll
            for (int u = 0; u < S; ++u)
                bv[v][u] = (unsigned)u < un && (off_t_)(lane + 32 * u) < lim
                               ? __ldcs(b + pb + v * stepb + 32 * u) : 0.0f;
        }
        few_fma(acc, av, bv, src);
    }
    #pragma unroll
    for (int u = 0; u < S; ++u)
        if ((unsigned)u < un) red[w][lane + 32 * u] = acc[u];
    __syncthreads();
    if (lane < un) {  // lane j adds column j of its warp's 32 rows, in row order
        float s = -0.0f;
        #pragma unroll
        for (int i = 0; i < 32; ++i) s += red[w][i * un + lane];
        part[w][lane] = s;
    }
    __syncthreads();
    if (t < un) {  // thread j adds column j's warp sums in warp order
        float s = -0.0f;
        #pragma unroll
        for (int h = 0; h < NW; ++h) s += part[h][t];
        out[(off_t_)blockIdx.z * n + t] = s;
    }
#if FUSE
    add_slices<1, S, NT>(out, dst, flags, m, n, 0, 0);  // the tile's last block adds the slices
#endif
}
#endif
