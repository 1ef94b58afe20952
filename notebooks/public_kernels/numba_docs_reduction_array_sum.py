# Source: https://github.com/NVIDIA/numba-cuda/blob/b18b944b2f88a4e840424e49a1b0d29488263b40/numba_cuda/numba/cuda/tests/doc_examples/test_reduction.py
#   (numba-cuda docs "Shared Memory Reduction": https://nvidia.github.io/numba-cuda/user/examples.html#shared-memory-reduction)
# License: BSD-2-Clause (NVIDIA numba-cuda)
# Description: naive interleaved-addressing block reduction in shared memory (single block).
#   The docs say: "This algorithm can be greatly improved upon by redesigning the inner loop to use
#   sequential memory accesses, and ... keep more threads active" (i.e. divergence / access pattern).
#
# Expected tags (MY EXPECTATION, not ground truth):
#   int64-index     - `s = 1` is int64; `tid % (2 * s)` and `tid + s` are int64 ops (int64 modulo is
#                     expensive on GPU), shr[tid + s] addressed with int64.
#   wraparound-check- shr[tid] / shr[tid + s] / data[i] with signed indices.
#   (NOT in our tags) divergent `tid % (2*s) == 0` interleaved reduction and shared-memory bank
#                     conflicts (stride 2*s) -- the docs' own stated weakness.
#   (NOT expected) fp64: int data.
# Note: nelem (=1024) is a module global used as the shared array size (compile-time constant);
#   the docs' data is np.arange(1024) -> int64, stored into an int32 shared array (narrowing).
#
# Edits: moved out of the test class; `nelem` made a module constant (the docs compute it as len(a)
#   = 1024 before defining the kernel); `int32` imported from numba (docs: numba.cuda.types). Body unchanged.
#
# LAUNCH = {"launch": "array_sum[1, nelem](a)", "problem_size": "1024 int64 elements, 1 block of 1024"}

from numba import cuda
from numba import int32

nelem = 1024


@cuda.jit
def array_sum(data):
    tid = cuda.threadIdx.x
    size = len(data)
    if tid < size:
        i = cuda.grid(1)

        # Declare an array in shared memory
        shr = cuda.shared.array(nelem, int32)
        shr[tid] = data[i]

        # Ensure writes to shared memory are visible
        # to all threads before reducing
        cuda.syncthreads()

        s = 1
        while s < cuda.blockDim.x:
            if tid % (2 * s) == 0:
                # Stride by `s` and add
                shr[tid] += shr[tid + s]
            s *= 2
            cuda.syncthreads()

        # After the loop, the zeroth  element contains the sum
        if tid == 0:
            data[tid] = shr[tid]


SIGNATURE = "(int64[::1],)"
KERNEL = "array_sum"
