# Source: https://github.com/sgkit-dev/sgkit/pull/498  ("GPU Implementation of Pairwise calculation", aktech;
#   then pystatgen/sgkit). Kernel as it was BEFORE commit 0b187695 "Aggresively type variables":
#   https://github.com/sgkit-dev/sgkit/blob/566a2179db711c5abb38e66060d147b1373c819d/sgkit/distance/metrics.py
#   Fixed version: https://github.com/sgkit-dev/sgkit/commit/0b18769559f556fb8596ad017f02aef589a4bc27
# License: Apache-2.0 (sgkit)
# Description: Pearson-correlation "map" step of a pairwise distance: one thread per (row of x, row of y)
#   pair, each thread walks the full feature dimension accumulating six running sums.
#
# GROUND TRUTH (from the thread + the fixing commit it points to):
#   fp64          - fix replaced `v0 = 0.0` ... `v5 = 0.0` with `types.float32(0)`; aktech in review
#                   (2021-05-05): "Aggresive typecasting of all the variables is done to improve
#                   performance. See this: https://github.com/pystatgen/sgkit/pull/498#issuecomment-804650369".
#   int64-index   - fix cast the thread indices and shapes: `i1 = types.uint32(cuda.grid(2)[types.uint32(0)])`,
#                   `m = types.uint32(x.shape[types.uint32(0)])`; jeromekelleher: "We've told it that `i` is a
#                   uint32 (which is good), but it seems pretty weird to have to *keep* telling it ...".
#   range-loop    - fix replaced `for i in range(m)` with `i = types.uint32(0); while i < m: ...
#                   i = types.uint32(i + types.uint32(1))`.
#   (author's own comment in the code, outside our tags) "assigning variable and only saving the final
#                   value in the array made this significantly faster" -> accumulate in registers, not in
#                   global memory.
#   MY OBSERVATION (not discussed): i1 = cuda.grid(2)[0] (threadIdx.x-derived) selects the ROW x[i1], and
#                   each thread walks its own row -> consecutive threads read addresses a row apart
#                   (uncoalesced loads of x); y[i2] is warp-uniform (broadcast).
#
# Edits: removed the `ArrayLike` type annotations (sgkit.typing import) and `# type: ignore` comments;
#   otherwise verbatim (device function + kernel).
#
# LAUNCH = {"threads_per_block": (32, 32),
#           "blocks_per_grid": "(ceil(out.shape[0]/32), ceil(out.shape[1]/32))",
#           "out": "np.zeros((f.shape[0], g.shape[0], 6), dtype=f.dtype)",
#           "problem_size": "dask chunks of genotype-derived matrices (MalariaGEN; ~250 MB array quoted)"}

from numba import cuda


@cuda.jit(device=True)
def _correlation(x, y, out):
    m = x.shape[0]
    # Note: assigning variable and only saving the final value in the
    # array made this significantly faster.
    v0 = 0.0
    v1 = 0.0
    v2 = 0.0
    v3 = 0.0
    v4 = 0.0
    v5 = 0.0

    for i in range(m):
        if x[i] >= 0 and y[i] >= 0:
            v0 += x[i]
            v1 += y[i]
            v2 += x[i] * x[i]
            v3 += y[i] * y[i]
            v4 += x[i] * y[i]
            v5 += 1

    out[0] = v0
    out[1] = v1
    out[2] = v2
    out[3] = v3
    out[4] = v4
    out[5] = v5


@cuda.jit
def correlation_map_kernel(x, y, out):
    i1, i2 = cuda.grid(2)
    if i1 >= out.shape[0] or i2 >= out.shape[1]:
        # Quit if (x, y) is outside of valid output array boundary
        return

    _correlation(x[i1], y[i2], out[i1][i2])


SIGNATURE = "(float32[:, ::1], float32[:, ::1], float32[:, :, ::1])"
KERNEL = "correlation_map_kernel"
