# Source: https://github.com/eth-cscs/PythonHPC/blob/ca462474bc5065f254fb61b8a7c6ad78df11d31a/numba-cuda/3.memory-optimization.ipynb
#   (ETH Zurich / CSCS "High-Performance Computing with Python" course, numba-cuda part 3
#    "Understanding the memory performance of the GPU"; Fortran-layout variant in numba-cuda/src/matvec.py)
# License: BSD-3-Clause (eth-cscs/PythonHPC LICENSE, "Copyright (c) 2019, Swiss National Supercomputing Center (CSCS)")
# Description: matrix-vector product y = alpha*A@x + beta*y with one thread per ROW of a C-ordered A.
#
# Tags: uncoalesced is ESTABLISHED BY THE COURSE ITSELF (tutorial, so listed under examples):
#   notebook: "In this arrangement subsequent threads access non-contiguous memory ... we only achieve
#   1/4 of [the memory bandwidth]"; PR https://github.com/eth-cscs/PythonHPC/pull/8 measured
#   "Standard kernel (C-layout): 107.66 GB/s" vs "(F-layout): 513.42 GB/s (Fortran layout allows
#   coalescing of the memory accesses in the input array)" on a P100.
# My additional expectations:
#   range-loop      - `for j in range(M)` (int64).
#   int64-index     - A[i, j] address = i*stride0 + j*8 in int64.
#   wraparound-check- i from cuda.grid(1) is signed (checked only `i >= N`).
#   (NOT a pitfall) fp64: the data is float64 by design (`prod = 0.0` matches).
#
# Edits: none; explicit signature string kept in the decorator as published.
#
# LAUNCH = {"block_size": 128, "num_blocks": "ceil(N / 128)", "problem_size": "N = 1024 (exercise: increase it)"}

from numba import cuda


@cuda.jit('void(float64, Array(float64, 2, "C"), Array(float64, 1, "C"), '
          'float64, Array(float64, 1, "C"))')
def _gemv_cuda(alpha, A, x, beta, y):
    i = cuda.grid(1)
    N, M = A.shape
    if i >= N:
        return

    prod = 0.0
    for j in range(M):
        prod += A[i, j]*x[j]

    y[i] = alpha*prod + beta*y[i]


SIGNATURE = "(float64, float64[:, ::1], float64[::1], float64, float64[::1])"
KERNEL = "_gemv_cuda"
