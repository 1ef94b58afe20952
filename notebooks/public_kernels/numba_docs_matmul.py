# Source: https://github.com/NVIDIA/numba-cuda/blob/b18b944b2f88a4e840424e49a1b0d29488263b40/numba_cuda/numba/cuda/tests/doc_examples/test_matmul.py
#   (rendered in the numba-cuda docs, "Matrix multiplication":
#    https://nvidia.github.io/numba-cuda/user/examples.html#matrix-multiplication ;
#    same kernel in numba's docs, docs/source/cuda/examples.rst)
# License: BSD-2-Clause (NVIDIA numba-cuda; SPDX header of the source file)
# Description: the docs' naive matrix multiply `matmul` (one thread per C element, K loop over range).
#
# Expected tags (MY EXPECTATION, not ground truth):
#   uncoalesced     - i, j = cuda.grid(2): i comes from threadIdx.x, and is used as the ROW index of
#                     A[i, k] and C[i, j]; consecutive threads in a warp touch addresses a row apart.
#   fp64            - `tmp = 0.0` is a float64 literal; with float32 inputs tmp += A*B is promoted to
#                     float64 (cvt.f64.f32 + add.f64 in the inner loop).
#   range-loop      - `for k in range(A.shape[1])` iterates as int64 (range_iter_int64).
#   int64-index     - shape-derived, int64 address arithmetic for A[i, k], B[k, j].
#   wraparound-check- i, j from cuda.grid are signed and only checked `< shape`, so the negative-index
#                     wraparound select on i/j probably survives (k from range(0, n) should be proven >= 0).
#   low-unroll      - trip count A.shape[1] is runtime; NVVM may only partially unroll (possible).
# The docs themselves say it "performs poorly, because the same matrix elements will be loaded
# multiple times from device memory" (they do not mention coalescing).
#
# Edits: moved out of the test function to module level; removed launch/driver code. Kernel body unchanged.
# Note: the docs' own driver passes np.arange(16).reshape(4,4) (int64) and np.ones (float64); SIGNATURE
# below uses float32, the typical caller for a performance-sensitive matmul.
#
# LAUNCH = {"threadsperblock": (16, 16),
#           "blockspergrid": "(ceil(C.shape[0]/16), ceil(C.shape[1]/16))",
#           "docs_problem_size": "4x4 (toy); realistic: 4096x4096"}

from numba import cuda


@cuda.jit
def matmul(A, B, C):
    """Perform square matrix multiplication of C = A * B."""
    i, j = cuda.grid(2)
    if i < C.shape[0] and j < C.shape[1]:
        tmp = 0.0
        for k in range(A.shape[1]):
            tmp += A[i, k] * B[k, j]
        C[i, j] = tmp


SIGNATURE = "(float32[:, ::1], float32[:, ::1], float32[:, ::1])"
KERNEL = "matmul"
