// CUDA C twins of tensor_cores.ipynb: GEMMs on mma.sync (TF32 m16n8k8, BF16 m16n8k16), the same algorithm as each numba
// step. Steps 1-2: a 128 x 128 block tile of 8 warps (2 x 4), each warp 64 x 32: 4 x 4 mma tiles of 16 x 8, K in steps
// of 8; steps 3-6 below say what they change.
#define BM 128
#define BN 128
#define WM 64
#define WN 32
#define NT 256

__device__ __forceinline__ unsigned tf32(float x) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
}

__device__ __forceinline__ void mma_tf32(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ float at(const float* p, int r, int q, int rows, int cols) {
    return (r < rows && q < cols) ? p[(long long)r * cols + q] : 0.f;
}

__device__ __forceinline__ void store(float* c, const float (&acc)[4][4][4], int r0, int c0, int g, int t, int m, int n) {
    #pragma unroll
    for (int mt = 0; mt < 4; ++mt)
        #pragma unroll
        for (int nt = 0; nt < 4; ++nt)
            #pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int row = r0 + mt * 16 + g + (e >> 1) * 8, col = c0 + nt * 8 + 2 * t + (e & 1);
                if (row < m && col < n) c[(long long)row * n + col] = acc[mt][nt][e];
            }
}

// step 1: every fragment straight from global memory (rounded to TF32 as it is loaded)
extern "C" __global__ void __launch_bounds__(NT, 2) mma_global_c(const float* a, const float* b, float* c, int m, int n, int k) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int r0 = blockIdx.y * BM + (warp / (BN / WN)) * WM, c0 = blockIdx.x * BN + (warp % (BN / WN)) * WN;
    float acc[4][4][4] = {};
    for (int k0 = 0; k0 < k; k0 += 8) {
        unsigned fa[4][4], fb[4][2];
        #pragma unroll
        for (int mt = 0; mt < 4; ++mt) {
            const int r = r0 + mt * 16 + g;
            fa[mt][0] = tf32(at(a, r, k0 + t, m, k));
            fa[mt][1] = tf32(at(a, r + 8, k0 + t, m, k));
            fa[mt][2] = tf32(at(a, r, k0 + t + 4, m, k));
            fa[mt][3] = tf32(at(a, r + 8, k0 + t + 4, m, k));
        }
        #pragma unroll
        for (int nt = 0; nt < 4; ++nt) {
            const int col = c0 + nt * 8 + g;
            fb[nt][0] = tf32(at(b, k0 + t, col, k, n));
            fb[nt][1] = tf32(at(b, k0 + t + 4, col, k, n));
        }
        #pragma unroll
        for (int mt = 0; mt < 4; ++mt)
            #pragma unroll
            for (int nt = 0; nt < 4; ++nt) mma_tf32(acc[mt][nt], fa[mt], fb[nt]);
    }
    store(c, acc, r0, c0, g, t, m, n);
}

// step 2: a BK = 32 deep tile of A and of B staged in shared memory (rounded to TF32 on the way), fragments from there
#define BK 32
#define PA 4   // pads: the 32 lanes of a fragment read hit 32 different banks
#define PB 8
extern "C" __global__ void __launch_bounds__(NT) mma_smem_c(const float* a, const float* b, float* c, int m, int n, int k) {
    __shared__ unsigned As[BM][BK + PA];
    __shared__ unsigned Bs[BK][BN + PB];
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
    const int brow = blockIdx.y * BM, bcol = blockIdx.x * BN;
    const int wr = (warp / (BN / WN)) * WM, wc = (warp % (BN / WN)) * WN;
    float acc[4][4][4] = {};
    for (int k0 = 0; k0 < k; k0 += BK) {
        #pragma unroll
        for (int i = 0; i < BM * BK / NT; ++i) {
            const int f = tid + i * NT, r = f / BK, q = f % BK;
            As[r][q] = tf32(at(a, brow + r, k0 + q, m, k));
        }
        #pragma unroll
        for (int i = 0; i < BK * BN / NT; ++i) {
            const int f = tid + i * NT, r = f / BN, q = f % BN;
            Bs[r][q] = tf32(at(b, k0 + r, bcol + q, k, n));
        }
        __syncthreads();
        #pragma unroll
        for (int kk = 0; kk < BK; kk += 8) {
            unsigned fa[4][4], fb[4][2];
            #pragma unroll
            for (int mt = 0; mt < 4; ++mt) {
                const int r = wr + mt * 16 + g;
                fa[mt][0] = As[r][kk + t];
                fa[mt][1] = As[r + 8][kk + t];
                fa[mt][2] = As[r][kk + t + 4];
                fa[mt][3] = As[r + 8][kk + t + 4];
            }
            #pragma unroll
            for (int nt = 0; nt < 4; ++nt) {
                fb[nt][0] = Bs[kk + t][wc + nt * 8 + g];
                fb[nt][1] = Bs[kk + t + 4][wc + nt * 8 + g];
            }
            #pragma unroll
            for (int mt = 0; mt < 4; ++mt)
                #pragma unroll
                for (int nt = 0; nt < 4; ++nt) mma_tf32(acc[mt][nt], fa[mt], fb[nt]);
        }
        __syncthreads();
    }
    store(c, acc, brow + wr, bcol + wc, g, t, m, n);
}

// step 3: 16-deep tiles staged by cp.async (raw float32 bits: the tensor cores read the TF32 part), two stages, a block
// of 4 warps (2 x 2) of 64 x 64, each warp 4 x 8 mma tiles a k-step; VEC: 16-byte copies (k % 4 == 0, n % 4 == 0).
// step 4 (STAGES = 3): three stages, rows unpadded and their columns XOR-swizzled, one barrier a tile; step 5 (WNW = 32):
// 8 warps (2 x 4) of 64 x 32; step 6 (BF16): step 3 on bf16 (m16n8k16): a holds A's bf16 bits (m x k), b those of
// W = B^T (n x k); tiles of 32 bf16 along K, a stage row 16 words of bf16 pairs padded to 20; 16-byte copies (k % 8 == 0)
#define BK3 16

__device__ __forceinline__ void mma_bf16(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <bool BF16> struct Operand { typedef float T; };  // an operand element: float, or bf16 as its bits
template <> struct Operand<true> { typedef short T; };

template <int STAGES, bool BF16> struct Pipe {
    static_assert(STAGES == 2 || !BF16, "BF16 is built on step 3 only");
    typedef typename Operand<BF16>::T T;
    static constexpr int AW = STAGES == 2 ? BK3 + 4 : BK3;  // row widths (words): padded, or unpadded and swizzled
    static constexpr int BROWS = BF16 ? BN : BK3, BW = BF16 ? AW : STAGES == 2 ? BN + 8 : BN;  // a B stage: W's n rows, or B's k
    static constexpr int KT = BF16 ? 2 * BK3 : BK3;  // elements of K a tile
    // the column where A[r][c] / B[r][c] sits in a stage
    static __device__ __forceinline__ int sa(int r, int c) { return STAGES == 3 ? c ^ (4 * ((r >> 1) & 3)) : c; }
    static __device__ __forceinline__ int sb(int r, int c) { return STAGES == 3 ? c ^ (8 * (r & 3)) : c; }
};

__device__ __forceinline__ void cp_async_c(void* smem, const void* gmem, int size, int nbytes) {
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    if (size == 16) asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(s), "l"(gmem), "r"(nbytes) : "memory");
    else asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" :: "r"(s), "l"(gmem), "r"(nbytes) : "memory");
}

// tile k0 of B and of A -> stage s, zeros outside the matrices; B's copies first, as the numba kernel issues them
template <bool VEC, int STAGES, int NTH, bool BF16, typename P = Pipe<STAGES, BF16>>
__device__ __forceinline__ void stage3(unsigned (*As)[BM][P::AW], unsigned (*Bs)[P::BROWS][P::BW], int s,
                                       const typename P::T* a, const typename P::T* b, int brow, int bcol, int k0,
                                       int m, int n, int k, int tid) {
    if constexpr (BF16) {  // 128 rows of A and of W, 32 bf16 each: 8 in a 16-byte copy
        #pragma unroll
        for (int i = 0; i < BM * P::KT / 8 / NTH; ++i) {
            const int f = tid + i * NTH, r = f / (P::KT / 8), q = f % (P::KT / 8) * 8;
            bool in = bcol + r < n && k0 + q < k;
            cp_async_c(&Bs[s][r][q / 2], b + (in ? (long long)(bcol + r) * k + k0 + q : 0), 16, in ? 16 : 0);
            in = brow + r < m && k0 + q < k;
            cp_async_c(&As[s][r][q / 2], a + (in ? (long long)(brow + r) * k + k0 + q : 0), 16, in ? 16 : 0);
        }
        return;
    }
    #pragma unroll
    for (int i = 0; i < BK3 * BN / 4 / NTH; ++i) {
        const int f = tid + i * NTH, r = f / (BN / 4), q = f % (BN / 4) * 4;
        if (VEC) {
            const bool in = k0 + r < k && bcol + q < n;
            cp_async_c(&Bs[s][r][P::sb(r, q)], b + (in ? (long long)(k0 + r) * n + bcol + q : 0), 16, in ? 16 : 0);
        } else {
            #pragma unroll
            for (int x = 0; x < 4; ++x) {
                const bool in = k0 + r < k && bcol + q + x < n;
                cp_async_c(&Bs[s][r][P::sb(r, q) + x], b + (in ? (long long)(k0 + r) * n + bcol + q + x : 0), 4, in ? 4 : 0);
            }
        }
    }
    #pragma unroll
    for (int i = 0; i < BM * BK3 / 4 / NTH; ++i) {
        const int f = tid + i * NTH, r = f / (BK3 / 4), q = f % (BK3 / 4) * 4;
        if (VEC) {
            const bool in = brow + r < m && k0 + q < k;
            cp_async_c(&As[s][r][P::sa(r, q)], a + (in ? (long long)(brow + r) * k + k0 + q : 0), 16, in ? 16 : 0);
        } else {
            #pragma unroll
            for (int x = 0; x < 4; ++x) {
                const bool in = brow + r < m && k0 + q + x < k;
                cp_async_c(&As[s][r][P::sa(r, q) + x], a + (in ? (long long)(brow + r) * k + k0 + q + x : 0), 4, in ? 4 : 0);
            }
        }
    }
}

// one k-step (8 of TF32, 16 of bf16: kk counts words): the warp's 4 A and NTN B fragments, then 4 x NTN mma
template <int STAGES, int NTN, bool BF16, typename P = Pipe<STAGES, BF16>>
__device__ __forceinline__ void kstep3(float (&acc)[4][NTN][4], const unsigned (*As)[P::AW], const unsigned (*Bs)[P::BW],
                                       int kk, int wr, int wc, int g, int t) {
    unsigned fa[4][4], fb[NTN][2];
    #pragma unroll
    for (int mt = 0; mt < 4; ++mt) {
        const int r = wr + mt * 16 + g;
        fa[mt][0] = As[r][P::sa(r, kk + t)];
        fa[mt][1] = As[r + 8][P::sa(r + 8, kk + t)];
        fa[mt][2] = As[r][P::sa(r, kk + t + 4)];
        fa[mt][3] = As[r + 8][P::sa(r + 8, kk + t + 4)];
    }
    #pragma unroll
    for (int nt = 0; nt < NTN; ++nt) {
        if (BF16) {  // bf16 pairs along k of W's row wc + 8 nt + g
            fb[nt][0] = Bs[wc + nt * 8 + g][kk + t];
            fb[nt][1] = Bs[wc + nt * 8 + g][kk + t + 4];
        } else {
            fb[nt][0] = Bs[kk + t][P::sb(kk + t, wc + nt * 8 + g)];
            fb[nt][1] = Bs[kk + t + 4][P::sb(kk + t + 4, wc + nt * 8 + g)];
        }
    }
    #pragma unroll
    for (int mt = 0; mt < 4; ++mt)
        #pragma unroll
        for (int nt = 0; nt < NTN; ++nt) {
            if (BF16) mma_bf16(acc[mt][nt], fa[mt], fb[nt]);
            else mma_tf32(acc[mt][nt], fa[mt], fb[nt]);
        }
}

template <bool VEC, int STAGES, int WNW, bool BF16, typename P = Pipe<STAGES, BF16>>
__device__ __forceinline__ void mma_pipe_body(const typename P::T* a, const typename P::T* b, float* c, int m, int n, int k) {
    static_assert(!BF16 || WNW == 64, "BF16 is built on step 3 only");
    constexpr int NTN = WNW / 8, WARPS_N3 = BN / WNW, NTH = 64 * WARPS_N3;
    __shared__ __align__(16) unsigned As[STAGES][BM][P::AW];
    __shared__ __align__(16) unsigned Bs[STAGES][P::BROWS][P::BW];
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
    const int brow = blockIdx.y * BM, bcol = blockIdx.x * BN, wr = (warp / WARPS_N3) * 64, wc = (warp % WARPS_N3) * WNW;
    float acc[4][NTN][4] = {};
    const int ntiles = (k + P::KT - 1) / P::KT;
    stage3<VEC, STAGES, NTH, BF16>(As, Bs, 0, a, b, brow, bcol, 0, m, n, k, tid);
    asm volatile("cp.async.commit_group;" ::: "memory");
    if (STAGES == 2) {
        for (int kt = 0; kt < ntiles; ++kt) {
            if (kt + 1 < ntiles) stage3<VEC, STAGES, NTH, BF16>(As, Bs, (kt + 1) % 2, a, b, brow, bcol, (kt + 1) * P::KT, m, n, k, tid);
            asm volatile("cp.async.commit_group;" ::: "memory");
            asm volatile("cp.async.wait_group 1;" ::: "memory");
            __syncthreads();
            const int s = kt % 2;
            kstep3<STAGES, NTN, BF16>(acc, As[s], Bs[s], 0, wr, wc, g, t);
            kstep3<STAGES, NTN, BF16>(acc, As[s], Bs[s], 8, wr, wc, g, t);
            __syncthreads();
        }
    } else {
        if (ntiles > 1) stage3<VEC, STAGES, NTH, BF16>(As, Bs, 1, a, b, brow, bcol, P::KT, m, n, k, tid);
        asm volatile("cp.async.commit_group;" ::: "memory");
        for (int kt = 0; kt < ntiles; ++kt) {
            asm volatile("cp.async.wait_group 1;" ::: "memory");
            __syncthreads();
            if (kt + 2 < ntiles) stage3<VEC, STAGES, NTH, BF16>(As, Bs, (kt + 2) % 3, a, b, brow, bcol, (kt + 2) * P::KT, m, n, k, tid);
            asm volatile("cp.async.commit_group;" ::: "memory");
            const int s = kt % 3;
            kstep3<STAGES, NTN, BF16>(acc, As[s], Bs[s], 0, wr, wc, g, t);
            kstep3<STAGES, NTN, BF16>(acc, As[s], Bs[s], 8, wr, wc, g, t);
        }
    }
    #pragma unroll
    for (int mt = 0; mt < 4; ++mt)
        #pragma unroll
        for (int nt = 0; nt < NTN; ++nt)
            #pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int row = brow + wr + mt * 16 + g + (e >> 1) * 8, col = bcol + wc + nt * 8 + 2 * t + (e & 1);
                if (row < m && col < n) c[(long long)row * n + col] = acc[mt][nt][e];
            }
}

#define PIPE_KERNEL(name, T, vec, stages, wnw, bf16) \
    extern "C" __global__ void __launch_bounds__(64 * BN / wnw, 2) name(const T* a, const T* b, float* c, int m, int n, int k) { \
        mma_pipe_body<vec, stages, wnw, bf16>(a, b, c, m, n, k); \
    }
PIPE_KERNEL(mma_pipe16_c, float, true, 2, 64, false)
PIPE_KERNEL(mma_pipe4_c, float, false, 2, 64, false)
PIPE_KERNEL(mma_pipe3_16_c, float, true, 3, 64, false)
PIPE_KERNEL(mma_pipe3_4_c, float, false, 3, 64, false)
PIPE_KERNEL(mma_pipe5_16_c, float, true, 2, 32, false)
PIPE_KERNEL(mma_pipe5_4_c, float, false, 2, 32, false)
PIPE_KERNEL(mma_bf16_pipe_c, short, true, 2, 64, true)
