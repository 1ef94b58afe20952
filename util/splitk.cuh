// The C twin of util/splitk.py's add_slices: the last block of an output tile to finish adds its slices of K.
// Every thread of the block calls it after its slice's stores to ws (slice blockIdx.z of m x n); the block that
// counts gridDim.z in flags[tile] adds the tile's slices in slice order (U slices' loads at once; -0.0 past the
// last, which adds nothing), writes C and sets the counter to zero.
#pragma once

template <int TBM, int TBN, int TNT>
__device__ __forceinline__ void add_slices(const float* ws, float* __restrict__ c, int* flags, int m, int n,
                                           long long brow, long long bcol) {
    constexpr int E = TBM * TBN > TNT ? TBM * TBN / TNT : 1, U = 16 / E < 1 ? 1 : 16 / E;  // elements, slices_a_round
    static_assert(E * TNT == TBM * TBN || TBM * TBN <= TNT, "the tile splits evenly over the threads");
    __shared__ int last;
    const unsigned t = threadIdx.x;
    const int nz = gridDim.z;
    __syncthreads();  // the block's stores of its slice, ordered before thread 0's fence (it is cumulative)
    if (t == 0) {
        __threadfence();  // ... and so visible to the whole GPU before the block is counted
        const int tile = blockIdx.y * gridDim.x + blockIdx.x;
        const int done = atomicAdd(flags + tile, 1);
        last = done == nz - 1;
        if (done == nz - 1) {
            flags[tile] = 0;  // ready for the next call
            __threadfence();  // the other blocks' slices, seen after their count (the block's loads follow)
        }
    }
    __syncthreads();
    if (!last) return;
    const long long mn = (long long)m * n, rows = min((long long)m - brow, (long long)TBM),
                    cols = min((long long)n - bcol, (long long)TBN), first = brow * n + bcol;
    float acc[E];
    #pragma unroll
    for (int i = 0; i < E; ++i) acc[i] = -0.0f;
    long long base = first;  // the tile's corner in slice z
    for (int z = 0; z < nz; z += U, base += U * mn) {
        float v[U][E];
        #pragma unroll
        for (int u = 0; u < U; ++u)  // U x E independent loads: all in flight at once
            #pragma unroll
            for (int i = 0; i < E; ++i) {
                const unsigned e = t + i * TNT;
                const long long r = e / TBN, q = e % TBN;
                const bool mine = TBM * TBN >= TNT || e < TBM * TBN;  // every thread has elements, or the first
                v[u][i] = z + u < nz && mine && r < rows && q < cols ? __ldcg(ws + base + u * mn + r * n + q) : -0.0f;
            }
        #pragma unroll
        for (int u = 0; u < U; ++u)
            #pragma unroll
            for (int i = 0; i < E; ++i) acc[i] += v[u][i];
    }
    #pragma unroll
    for (int i = 0; i < E; ++i) {
        const unsigned e = t + i * TNT;
        const long long r = e / TBN, q = e % TBN;
        if ((TBM * TBN >= TNT || e < TBM * TBN) && r < rows && q < cols) c[first + r * n + q] = acc[i];
    }
}
