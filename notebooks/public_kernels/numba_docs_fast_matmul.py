# Source: https://github.com/NVIDIA/numba-cuda/blob/b18b944b2f88a4e840424e49a1b0d29488263b40/numba_cuda/numba/cuda/tests/doc_examples/test_matmul.py
#   (numba-cuda docs "Matrix multiplication", fast_matmul:
#    https://nvidia.github.io/numba-cuda/user/examples.html#matrix-multiplication ;
#    the kernel cites https://stackoverflow.com/a/64198479/13697228 by Robert Crovella)
# License: BSD-2-Clause (NVIDIA numba-cuda)
# Description: shared-memory tiled matrix multiply (TPB x TPB tiles), the docs' "faster" version.
#
# Expected tags (MY EXPECTATION, not ground truth):
#   range-loop      - `for i in range(bpg)` and `for j in range(TPB)` are int64 range loops.
#   int64-index     - tile offsets `tx + i * TPB`, `ty + i * TPB` computed in int64 (i is int64).
#   low-unroll      - inner `for j in range(TPB)` has a compile-time trip count of 16; worth checking
#                     whether NVVM fully unrolls it (expected to unroll; flag if it does not).
#   (NOT expected)  fp64: tmp = float32(0.0) and sA/sB are float32 -> should be clean.
#   (NOT expected)  uncoalesced: global loads A[y, tx + i*TPB] and B[ty + i*TPB, x] have the
#                   threadIdx.x-derived index in the last (contiguous) dimension -> coalesced.
#   Possible: wraparound-check on tx/ty/x/y-derived indices (signed int32 thread indices).
# Not a perf issue but notable: bpg = cuda.gridDim.x is used as the number of K tiles, which is only
# right for the docs' square/launch setup.
#
# Edits: moved out of the test function to module level; imports `float32` from numba (the test
# imports it from numba.cuda, equivalent); TPB module constant kept. Kernel body unchanged.
#
# LAUNCH = {"threadsperblock": "(TPB, TPB) = (16, 16)",
#           "blockspergrid": "(ceil(C.shape[0]/16), ceil(C.shape[1]/16))",
#           "docs_problem_size": "4x4 and 5x23 @ 23x7 (toy); realistic: 4096x4096"}

from numba import cuda, float32

# Controls threads per block and shared memory usage.
# The computation will be done on blocks of TPBxTPB elements.
# TPB should not be larger than 32 in this example
TPB = 16


@cuda.jit
def fast_matmul(A, B, C):
    """
    Perform matrix multiplication of C = A * B using CUDA shared memory.

    Reference: https://stackoverflow.com/a/64198479/13697228 by @RobertCrovella
    """
    # Define an array in the shared memory
    # The size and type of the arrays must be known at compile time
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)

    x, y = cuda.grid(2)

    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bpg = cuda.gridDim.x  # blocks per grid

    # Each thread computes one element in the result matrix.
    # The dot product is chunked into dot products of TPB-long vectors.
    tmp = float32(0.0)
    for i in range(bpg):
        # Preload data into shared memory
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]

        # Wait until all threads finish preloading
        cuda.syncthreads()

        # Computes partial product on the shared memory
        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]

        # Wait until all threads finish computing
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


SIGNATURE = "(float32[:, ::1], float32[:, ::1], float32[:, ::1])"
KERNEL = "fast_matmul"
