# Source: https://github.com/numba/numba-examples/blob/c423f5419a459f5ab8874fda6d39bb5ea05d04b2/examples/finance/blackscholes/blackscholes_cuda.py
#   (numba/numba-examples "Black-Scholes" benchmark, implementation "numba_gpu")
# License: BSD-2-Clause (numba/numba-examples LICENSE, "Copyright (c) 2017, Numba")
# Description: one-option-per-thread Black-Scholes pricing with a cumulative-normal device function.
#   Loop-free kernel (math-heavy). The benchmark's input generator runs it with BOTH float64 and
#   float32 arrays, while Riskfree=0.02 and Volatility=0.30 are always passed as Python floats.
#
# Expected tags (MY EXPECTATION, for the float32 specialisation in SIGNATURE):
#   fp64            - R and V are float64 scalars and A1..A5, RSQRT2PI, 0.5, 1.0, 0.2316419 are float64
#                     literals, so with float32 arrays essentially the whole computation (log, exp,
#                     sqrt, polynomial) is promoted to float64 and only truncated on store.
#   slow-math       - float64 math.log / math.exp / math.sqrt and IEEE divisions (S/X, 1.0/(...),
#                     (...)/(V*sqrtT)); fastmath is not enabled.
#   (NOT expected) range-loop / low-unroll: no loops.
#   int64-index     - minor: i from threadIdx/blockIdx compared with int64 shape.
#   (NOT expected) uncoalesced: i-th element of 1-D arrays.
#
# Edits: none to the kernel or cnd_cuda; host wrapper dropped.
#
# LAUNCH = {"blockdim": "(1024, 1)", "griddim": "(ceil(N / 1024), 1)",
#           "problem_size": "N in {1000, 100000, 1000000, 4000000}, dtype float64 and float32"}

import math

import numpy as np

from numba import cuda


@cuda.jit(device=True)
def cnd_cuda(d):
    A1 = 0.31938153
    A2 = -0.356563782
    A3 = 1.781477937
    A4 = -1.821255978
    A5 = 1.330274429
    RSQRT2PI = 0.39894228040143267793994605993438
    K = 1.0 / (1.0 + 0.2316419 * math.fabs(d))
    ret_val = (RSQRT2PI * math.exp(-0.5 * d * d) *
               (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5))))))
    if d > 0:
        ret_val = 1.0 - ret_val
    return ret_val


@cuda.jit
def black_scholes_cuda_kernel(callResult, putResult, S, X,
                       T, R, V):
    #    S = stockPrice
    #    X = optionStrike
    #    T = optionYears
    #    R = Riskfree
    #    V = Volatility
    i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    if i >= S.shape[0]:
        return
    sqrtT = math.sqrt(T[i])
    d1 = (math.log(S[i] / X[i]) + (R + 0.5 * V * V) * T[i]) / (V * sqrtT)
    d2 = d1 - V * sqrtT
    cndd1 = cnd_cuda(d1)
    cndd2 = cnd_cuda(d2)

    expRT = math.exp((-1. * R) * T[i])
    callResult[i] = (S[i] * cndd1 - X[i] * expRT * cndd2)
    putResult[i] = (X[i] * expRT * (1.0 - cndd2) - S[i] * (1.0 - cndd1))


SIGNATURE = "(float32[::1], float32[::1], float32[::1], float32[::1], float32[::1], float64, float64)"
KERNEL = "black_scholes_cuda_kernel"
