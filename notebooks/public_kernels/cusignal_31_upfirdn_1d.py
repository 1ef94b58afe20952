# Source: https://github.com/rapidsai/cusignal/pull/31  ("[REVIEW] Added streams and double/complex64/
#   complex128 functionality", mnicely): "I would like to determine why my Numba kernels are running so
#   much slower than my CuPy kernels."
#   Code: https://github.com/rapidsai/cusignal/blob/c588e93d7edae72eb31724b50d482d692efe7fff/python/cusignal/_upfirdn.py
#   (first commit of the PR branch, 2020-03-11; the decorator comments with register counts are the
#   ones quoted in the PR description).
# License: Apache-2.0 (file header: "Copyright (c) 2019-2020, NVIDIA CORPORATION")
# Description: 1-D polyphase upfirdn (upsample / FIR / downsample), grid-stride over outputs, inner loop
#   over the filter taps of one phase.
#
# GROUND TRUTH (from the thread):
#   int64-index        - gmarkall (2020-03-12): "we're seeing some extra register usage with Numba in
#                        this case because of the typing of integer variables as `int64` when they could
#                        have been `int32`." (The merged version wraps the index math in cp.int32(...);
#                        PR #66 later calls it the "int type casting optimization ... previously add[ed]
#                        to the Numba 1d kernel".)
#   register-occupancy - PR description: Numba "38 registers - 157-190us" vs CuPy raw kernel
#                        "21 registers - ~10us" (float32). Caveat: the author struck that paragraph
#                        through and wrote "I've moved Systems profiling to a second GPU (no X-server)
#                        and I'm getting comparable results"; later PR #66: "CuPy kernels are roughly 2x
#                        faster". Also mnicely: "I noticed 10 additional registers being used when I use
#                        int32 instead of int64" (int32 *arguments* alone made it worse: 48 registers).
#   MY OBSERVATION (not discussed in the thread, outside our tags): `out[i] += ...` inside the tap loop
#                        is a global read-modify-write per tap, where the CuPy kernel accumulates in a
#                        register (`float temp`); also range-loop / wraparound-check on the grid-stride
#                        range(X, out.shape[0], strideX) are my expectation only.
#
# Edits: none to the kernel; the decorator (explicit signature, fastmath=True) and its commented-out
#   alternatives are as published. `int32` is imported only because the commented alternative uses it.
#
# LAUNCH = {"threadsperblock": 256, "blockspergrid": "numSM * 20",
#           "problem_size": "resample_poly example in PR #25: 1e8 samples, up=2, down=3 (float32/float64)"}

import math

from numba import cuda, float32, float64, int32, int64, void


# @cuda.jit(fastmath=True) # 38 registers - 157-190us
# @cuda.jit(void(float32[:], float32[:], int32, int32, int32, int32, int32, float32[:],), fastmath=True) # 48 registers - 160-190us
@cuda.jit(void(float32[:], float32[:], int64, int64, int64, int64, int64, float32[:],), fastmath=True) # 38 registers - 157-190us
def _numba_upfirdn_1d_float(x, h_trans_flip, up, down, x_shape_a, h_per_phase, padded_len, out):

    X = cuda.grid(1)
    strideX = cuda.gridsize(1)

    for i in range(X, out.shape[0], strideX):

        x_idx = ((i * down) // up) % padded_len
        h_idx = (i * down) % up * h_per_phase

        x_conv_idx = x_idx - h_per_phase + 1
        if x_conv_idx < 0:
            h_idx -= x_conv_idx
            x_conv_idx = 0

        # If axis = 0, we need to know each column in x.
        for x_conv_idx in range(x_conv_idx, x_idx + 1):
            if x_conv_idx < x_shape_a and x_conv_idx >= 0:
                out[i] += x[x_conv_idx] * h_trans_flip[h_idx]
            h_idx += 1


SIGNATURE = "(float32[:], float32[:], int64, int64, int64, int64, int64, float32[:])"
KERNEL = "_numba_upfirdn_1d_float"
DECORATOR_OPTIONS = {"fastmath": True}
