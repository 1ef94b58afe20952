// Helpers every CUDA C twin of sgemm_ladder.ipynb includes (#include "common.cuh").
#pragma once

// A[r, q:q+4] of a rows x cols row-major matrix, zeros outside it; one float4 load when aligned.
__device__ __forceinline__ float4 load_row4(const float* __restrict__ p, int r, int q, int rows, int cols) {
    if (r < rows && q + 3 < cols && (cols & 3) == 0)
        return *reinterpret_cast<const float4*>(p + r * cols + q);
    float4 v;
    v.x = (r < rows && q     < cols) ? p[r * cols + q]     : 0.f;
    v.y = (r < rows && q + 1 < cols) ? p[r * cols + q + 1] : 0.f;
    v.z = (r < rows && q + 2 < cols) ? p[r * cols + q + 2] : 0.f;
    v.w = (r < rows && q + 3 < cols) ? p[r * cols + q + 3] : 0.f;
    return v;
}

// cp.async: global -> shared without a trip through registers; src_bytes < size fills the rest with zeros.
__device__ __forceinline__ void cp_async16(float* smem, const float* gmem, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :: "r"((unsigned)__cvta_generic_to_shared(smem)), "l"(gmem), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async4(float* smem, const float* gmem, int src_bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n"
                 :: "r"((unsigned)__cvta_generic_to_shared(smem)), "l"(gmem), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
#ifdef STAGES  // a ring of STAGES buffers: wait until at most STAGES - 2 groups are in flight
__device__ __forceinline__ void cp_async_wait_stages() { asm volatile("cp.async.wait_group %0;\n" :: "n"(STAGES - 2) : "memory"); }
#endif
