# Source: https://github.com/NVIDIA/numba-cuda/blob/b18b944b2f88a4e840424e49a1b0d29488263b40/numba_cuda/numba/cuda/tests/doc_examples/test_laplace.py
#   (numba-cuda docs "1D Heat Equation": https://nvidia.github.io/numba-cuda/user/examples.html#d-heat-equation)
# License: BSD-2-Clause (NVIDIA numba-cuda)
# Description: 1D heat-equation stencil, one thread per point, time loop inside the kernel with a
#   cooperative-groups grid.sync() between steps (needs a cooperative launch; the docs use forall()).
#
# Expected tags (MY EXPECTATION, not ground truth):
#   range-loop      - `for step in range(timesteps)` (int64 induction; `step % 2` is an int64 modulo).
#   int64-index     - i +/- 1 and len(data) - 1 computed in int64.
#   wraparound-check- data[i - 1] with signed i (i derived from cuda.grid) keeps the negative-index
#                     select; the i == 0 branch guarantees i - 1 >= 0 but the compiler may not see it.
#   (NOT a pitfall) fp64: data is np.zeros(size) -> float64 and k = 0.25 (Python float): the fp64 math
#                   is what the user asked for; a doctor should only flag it if it can tell float32 would do.
#   Notable: buffer swap by branch (`data = buf_0` / `buf_1`) each step.
#
# Edits: moved out of the test class to module level; removed plotting/driver. Kernel body unchanged.
#
# LAUNCH = {"launch": "solve_heat_equation.forall(len(data))(buf_0, buf_1, niter, 0.25)",
#           "problem_size": "size = 1001 float64 points, niter = 10000", "cooperative": True}

from numba import cuda


@cuda.jit
def solve_heat_equation(buf_0, buf_1, timesteps, k):
    i = cuda.grid(1)

    # Don't continue if our index is outside the domain
    if i >= len(buf_0):
        return

    # Prepare to do a grid-wide synchronization later
    grid = cuda.cg.this_grid()

    for step in range(timesteps):
        # Select the buffer from the previous timestep
        if (step % 2) == 0:
            data = buf_0
            next_data = buf_1
        else:
            data = buf_1
            next_data = buf_0

        # Get the current temperature associated with this point
        curr_temp = data[i]

        # Apply formula from finite difference equation
        if i == 0:
            # Left wall is held at T = 0
            next_temp = curr_temp + k * (data[i + 1] - (2 * curr_temp))
        elif i == len(data) - 1:
            # Right wall is held at T = 0
            next_temp = curr_temp + k * (data[i - 1] - (2 * curr_temp))
        else:
            # Interior points are a weighted average of their neighbors
            next_temp = curr_temp + k * (
                data[i - 1] - (2 * curr_temp) + data[i + 1]
            )

        # Write new value to the next buffer
        next_data[i] = next_temp

        # Wait for every thread to write before moving on
        grid.sync()


SIGNATURE = "(float64[::1], float64[::1], int64, float64)"
KERNEL = "solve_heat_equation"
