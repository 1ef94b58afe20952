# Source: https://github.com/numba/numba-examples/blob/c423f5419a459f5ab8874fda6d39bb5ea05d04b2/examples/density_estimation/histogram/gpu.py
#   (numba/numba-examples, "Histogram" benchmark, implementation "numba_gpu")
# License: BSD-2-Clause (numba/numba-examples LICENSE, "Copyright (c) 2017, Numba")
# Description: grid-stride histogram kernel calling a @numba.jit helper (compute_bin) that the source
#   itself marks as deliberately float64: "SPEEDTIP: Remove the float64 casts if you don't need to
#   exactly reproduce NumPy".
#
# Expected tags (MY EXPECTATION, not ground truth):
#   fp64            - compute_bin casts x, xmin, xmax to np.float64 (explicit), and
#                     `bin_width = (xmax - xmin) / nbins` mixes float with int64 nbins.
#   slow-math       - IEEE float64 division per element in compute_bin (div.rn.f64 inside the loop).
#   range-loop      - grid-stride `for i in range(start, x.shape[0], stride)`.
#   wraparound-check- start = cuda.grid(1) is signed, so the range can't be proven non-negative:
#                     x[i] likely keeps the negative-index select.
#   int64-index     - int64 induction / address math; compute_bin returns int32-or-None (Optional)
#                     which is then compared against int64 shape.
#   (NOT expected) uncoalesced: x[i] with grid-stride i is coalesced. Atomics on a small histogram
#                  (contention) are the real bottleneck for few bins -- not in our tag list.
#
# Edits: copied `compute_bin` (device helper, @numba.jit, called from the kernel) and the `histogram`
#   kernel verbatim; dropped the host driver functions and the unrelated min_max kernel.
#
# LAUNCH = {"launch": "histogram[64, 64](a_gpu, a_min, a_max, histogram_out)",
#           "problem_size": "1e3..3e6 float32 or float64 normal samples; nbins 10 or 1000 (bench.yaml/impl.py)",
#           "a_min/a_max": "numpy scalars of the array dtype (from min_max_array_gpu.copy_to_host())"}

import numpy as np

import numba
from numba import cuda


@numba.jit(nopython=True)
def compute_bin(x, n, xmin, xmax):
    # special case to mirror NumPy behavior for last bin
    if x == xmax:
        return n - 1 # a_max always in last bin

    # SPEEDTIP: Remove the float64 casts if you don't need to exactly reproduce NumPy
    bin = np.int32(n * (np.float64(x) - np.float64(xmin)) / (np.float64(xmax) - np.float64(xmin)))

    if bin < 0 or bin >= n:
        return None
    else:
        return bin


@cuda.jit
def histogram(x, xmin, xmax, histogram_out):
    nbins = histogram_out.shape[0]
    bin_width = (xmax - xmin) / nbins

    start = cuda.grid(1)
    stride = cuda.gridsize(1)

    for i in range(start, x.shape[0], stride):
        # note that calling a numba.jit function from CUDA automatically
        # compiles an equivalent CUDA device function!
        bin_number = compute_bin(x[i], nbins, xmin, xmax)

        if bin_number >= 0 and bin_number < histogram_out.shape[0]:
            cuda.atomic.add(histogram_out, bin_number, 1)


SIGNATURE = "(float32[::1], float32, float32, int32[::1])"
KERNEL = "histogram"
