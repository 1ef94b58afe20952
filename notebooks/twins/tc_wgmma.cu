// CUDA C twins of tensor_cores.ipynb's steps 7-10: Hopper's warpgroup MMA (wgmma, sm_90a), A and B read from
// shared memory through descriptors; the same algorithm as the notebook's make_wgmma. A block of two warpgroups
// computes a 128 x 256 tile of C = A @ W^T (A: m x k, W = B^T: n x k, K contiguous in both), each warpgroup 64 x 256
// with one m64n256 wgmma per k-step. A stage holds 128 bytes of K of A's 128 rows and W's 256 rows (48 KB), the
// 16-byte chunk c of row r at chunk c ^ (r % 8) (the 128-byte swizzle wgmma reads); 4 stages in dynamic shared memory;
// tile kt + 2 is copied (cp.async) while the tensor cores work on tiles kt and kt - 1.
#define BM7 128
#define BN7 256
#define STAGES7 4
#define ROWB 128               // bytes of K a stage row holds: 32 TF32 or 64 bf16
#define NT7 (2 * BM7)          // a warpgroup (128 threads) per 64 rows
#define RSTEP (NT7 / 8)        // rows between one thread's copies (8 threads copy a row's 8 chunks)

__device__ __forceinline__ unsigned long long sw128_desc(unsigned addr) {  // as util.intrinsics.sw128_desc
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | 1ull << 16 | (1024ull >> 4) << 32 | 1ull << 62;
}

// the accumulators pass through the wait (tied), so that no use of them moves above it
template <int PENDING> __device__ __forceinline__ void wgmma_wait(float (&d)[128]) {
    asm volatile("wgmma.wait_group.sync.aligned %128;" : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127]) : "n"(PENDING) : "memory");
}

__device__ __forceinline__ void wgmma_tf32(float (&d)[128], unsigned long long da, unsigned long long db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, 1, 1, 1;"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
                 : "l"(da), "l"(db) : "memory");
}

__device__ __forceinline__ void wgmma_bf16(float (&d)[128], unsigned long long da, unsigned long long db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, 1, 1, 1, 0, 0;"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
                 : "l"(da), "l"(db) : "memory");
}

// this thread's copies of each tile: the flat index of its rows' first element of K (row tid / 8 + i RSTEP, 16-byte
// chunk tid % 8) and the bytes each copies (0 outside the matrix: zero fill)
template <typename T, int ROWS>
__device__ __forceinline__ void sources(long long (&src)[ROWS], int (&nbytes)[ROWS], int row0, int nrows, int k, int tid) {
    const int r = tid / 8, c = tid % 8;
    #pragma unroll
    for (int i = 0; i < ROWS; ++i) {
        const int row = row0 + r + i * RSTEP;
        const bool inside = row < nrows;
        const int q = c * (16 / sizeof(T));
        src[i] = (long long)(inside ? row : 0) * k + (q < k ? q : 0);  // a chunk past K: 0
        nbytes[i] = inside ? 16 : 0;
    }
}

// one tile: ROWS copies of 16 bytes from K offset kofs to shared address dst on (RSTEP rows apart)
template <typename T, int ROWS>
__device__ __forceinline__ void load(unsigned dst, const T* p, const long long (&src)[ROWS], const int (&nbytes)[ROWS],
                                     int kofs, bool kin) {
    const int ko = kin ? kofs : 0;
    #pragma unroll
    for (int i = 0; i < ROWS; ++i)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;"
                     :: "r"(dst + i * RSTEP * ROWB), "l"(p + src[i] + ko), "r"(kin ? nbytes[i] : 0) : "memory");
}

// the (row, column) of this block's tile: its place in the 2-D grid, or (GROUP > 0, steps 9-10) in a group of GROUP
// rows of tiles, walked down the group's rows first
template <int GROUP>
__device__ __forceinline__ void tile_of(int m, int n, unsigned& tr, unsigned& tc) {
    if (GROUP == 0) {
        tr = blockIdx.y;
        tc = blockIdx.x;
        return;
    }
    const unsigned tm = (m + BM7 - 1) / BM7, tn = (n + BN7 - 1) / BN7, pid = blockIdx.x;
    const unsigned first = pid / (GROUP * tn) * GROUP, rows = min(tm - first, (unsigned)GROUP), inner = pid % (GROUP * tn);
    tr = first + inner % rows;
    tc = inner / rows;
}

template <typename T, int GROUP>  // T: float (TF32) or short (the bits of bf16)
__device__ __forceinline__ void wgmma_body(const T* a, const T* w, float* c, int m, int n, int k) {
    constexpr bool BF16 = sizeof(T) == 2;
    constexpr int BK = ROWB / sizeof(T), NA = BM7 / RSTEP, NB = BN7 / RSTEP, A_B = BM7 * ROWB, STAGE_B = (BM7 + BN7) * ROWB;
    extern __shared__ unsigned char smem[];
    const unsigned addr0 = (unsigned)__cvta_generic_to_shared(smem);
    const unsigned sbase = addr0 + ((1024 - (addr0 & 1023)) & 1023);  // 1024-byte aligned: the swizzle's period
    const int tid = threadIdx.x, wg = tid / 128;
    float acc[BN7 / 2];
    #pragma unroll
    for (int i = 0; i < BN7 / 2; ++i) acc[i] = 0.f;
    long long srca[NA], srcb[NB];
    int nba[NA], nbb[NB];
    unsigned tr, tc;
    tile_of<GROUP>(m, n, tr, tc);
    sources<T, NA>(srca, nba, tr * BM7, m, k, tid);
    sources<T, NB>(srcb, nbb, tc * BN7, n, k, tid);
    const int r8 = tid / 8, c8 = tid % 8;
    const unsigned dst0 = sbase + r8 * ROWB + (c8 ^ (r8 % 8)) * 16;  // r8 % 8 is that of all this thread's rows
    const int klim = max(k - c8 * (int)(16 / sizeof(T)), 0);  // its chunk of K is inside the matrix while kofs < klim
    const int ntiles = (k + BK - 1) / BK;
    #pragma unroll
    for (int p = 0; p < STAGES7 - 2; ++p) {
        if (p < ntiles) {
            load<T, NA>(dst0 + p * STAGE_B, a, srca, nba, p * BK, p * BK < klim);
            load<T, NB>(dst0 + p * STAGE_B + A_B, w, srcb, nbb, p * BK, p * BK < klim);
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
    }
    for (int kt = 0; kt < ntiles; ++kt) {
        asm volatile("cp.async.wait_group %0;" :: "n"(STAGES7 - 3) : "memory");  // my copies of tile kt landed
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");             // ... visible to the tensor cores
        __syncthreads();                        // ... everyone's; and every warpgroup is done with tile kt - 2
        const unsigned s = kt % STAGES7;
        const unsigned long long da = sw128_desc(sbase + s * STAGE_B + wg * 64 * ROWB), db = sw128_desc(sbase + s * STAGE_B + A_B);
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
        #pragma unroll
        for (int j = 0; j < ROWB / 32; ++j) {  // k-steps of 32 bytes
            if (BF16) wgmma_bf16(acc, da + 2 * j, db + 2 * j);
            else wgmma_tf32(acc, da + 2 * j, db + 2 * j);
        }
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        const int nxt = kt + STAGES7 - 2;
        if (nxt < ntiles) {  // into the stage of tile kt - 2
            const unsigned so = dst0 + (nxt % STAGES7) * STAGE_B;
            const int kofs = nxt * BK;
            load<T, NA>(so, a, srca, nba, kofs, kofs < klim);
            load<T, NB>(so + A_B, w, srcb, nbb, kofs, kofs < klim);
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
        wgmma_wait<1>(acc);  // this warpgroup's wgmma of tile kt - 1 are done: one group stays queued
    }
    wgmma_wait<0>(acc);
    const int lane = tid % 32, g = lane / 4, t = lane % 4;
    const int row0 = tr * BM7 + wg * 64 + (tid % 128) / 32 * 16 + g, bcol = tc * BN7;
    #pragma unroll
    for (int j = 0; j < BN7 / 8; ++j) {
        const int col = bcol + 8 * j + 2 * t;
        #pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = row0 + 8 * h;
            if (row < m) {
                if (col < n) c[(long long)row * n + col] = acc[4 * j + 2 * h];
                if (col + 1 < n) c[(long long)row * n + col + 1] = acc[4 * j + 2 * h + 1];
            }
        }
    }
}

#define WGMMA_KERNEL(name, T, group) \
    extern "C" __global__ void __launch_bounds__(NT7, 1) name(const T* a, const T* w, float* c, int m, int n, int k) { \
        wgmma_body<T, group>(a, w, c, m, n, k); \
    }
WGMMA_KERNEL(wgmma_tf32_g0_c, float, 0)  // step 7
WGMMA_KERNEL(wgmma_bf16_g0_c, short, 0)  // step 8
WGMMA_KERNEL(wgmma_tf32_g8_c, float, 8)  // step 9
WGMMA_KERNEL(wgmma_bf16_g8_c, short, 8)  // step 10
