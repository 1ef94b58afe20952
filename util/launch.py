"""Launch settings checked the same way for numba kernels and CUDA C twins, and a numba kernel's launch.

A *launch* is a function ``launch(problem)`` that runs one kernel on a ``util.verify.Problem``'s arrays; timing,
the Registry and the CUDA C twins all take launches. Bad settings (a block of 2048 threads, a grid of zeros,
a kernel argument that is a string) raise a clear error when the launch is made, not deep inside a driver call.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .backend import is_kernel, kernel_name
from .memory import is_device_array
from .verify import Problem

Launch = Callable[[Problem], None]


def check_nthreads(nthreads: Any) -> tuple[int, ...]:
    """Validate a block shape: an int or a tuple of up to 3 ints, 1..1024 threads in all."""
    dims = nthreads if isinstance(nthreads, tuple) else (nthreads,)
    if not 1 <= len(dims) <= 3 or any(isinstance(d, bool) or not isinstance(d, (int, np.integer)) for d in dims):
        raise TypeError(f"nthreads must be an int or a tuple of up to 3 ints, got {nthreads!r}")
    total = int(np.prod(dims))
    if any(d < 1 for d in dims) or total > 1024:
        raise ValueError(f"nthreads must give 1..1024 threads per block (a CUDA limit), got {nthreads!r}")
    return tuple(int(d) for d in dims)


def check_grid(grid: Any) -> tuple[int, ...]:
    """Validate what nblocks_fn returned: a positive int or a tuple of up to 3 positive ints."""
    dims = grid if isinstance(grid, tuple) else (grid,)
    if (not 1 <= len(dims) <= 3
            or any(isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1 for d in dims)):
        raise ValueError(
            f"nblocks_fn must return a grid: a positive int or a tuple of up to 3 positive ints "
            f"(e.g. cdiv(outp_shape, (32, 32))), got {grid!r}")
    return tuple(int(d) for d in dims)


def check_nblocks_fn(nblocks_fn: Any) -> None:
    """Validate nblocks_fn: a function (outp_shape, nthreads) -> grid."""
    if not callable(nblocks_fn):
        raise TypeError("nblocks_fn must be a function (outp_shape, nthreads) -> grid, "
                        "e.g. lambda outp_shape, nthreads: cdiv(outp_shape, (32, 32))")


def check_kernel_args(kernel_args: Any) -> tuple:
    """Validate extra kernel arguments: a list or tuple of numbers or device arrays."""
    if not isinstance(kernel_args, (list, tuple)):
        raise TypeError(f"kernel_args must be a list or tuple of extra arguments (e.g. [32]), "
                        f"got {type(kernel_args).__name__}")
    for x in kernel_args:
        if not (isinstance(x, (int, float, np.number)) or is_device_array(x)):
            raise TypeError(f"kernel_args may hold numbers and device arrays only, got {x!r} "
                            f"({type(x).__name__})")
    return tuple(kernel_args)


def numba_launch(kernel: Any, nthreads: Any, nblocks_fn: Callable, kernel_args: Sequence = (),
                 flat: bool = False) -> Launch:
    """Check a numba kernel's launch settings and return ``launch(problem)``.

    The kernel is called as ``kernel[nblocks_fn((m, n), nthreads), nthreads](a, b, c, m, n, k, *kernel_args)``.
    """
    if not is_kernel(kernel):
        raise TypeError(f"{getattr(kernel, '__name__', kernel)!r} is not a CUDA kernel: decorate it with "
                        "@cuda.jit (from util import cuda)")
    block = check_nthreads(nthreads)
    extra = check_kernel_args(kernel_args)
    check_nblocks_fn(nblocks_fn)
    nt = nthreads if isinstance(nthreads, tuple) else block[0]

    def launch(p: Problem) -> None:
        grid = check_grid(nblocks_fn((p.m, p.n), nt))
        kernel[grid, block](*p.args(flat), *extra)

    launch.__name__ = kernel_name(kernel)
    return launch
