"""Grid arithmetic and host <-> device transfers."""

from __future__ import annotations

from typing import Any, overload

import numpy as np

from .backend import cuda


def _check_divisor(b: int) -> int:
    if isinstance(b, bool) or not isinstance(b, (int, np.integer)):
        raise TypeError(f"cdiv: divisor must be an int, got {type(b).__name__}")
    if b <= 0:
        raise ValueError(f"cdiv: divisor must be positive, got {b}")
    return int(b)


@overload
def cdiv(a: int, b: int) -> int: ...
@overload
def cdiv(a: tuple[int, ...], b: int | tuple[int, ...]) -> tuple[int, ...]: ...


def cdiv(a, b):
    """Ceiling division ``-(-a // b)``; elementwise for tuples (a tuple by an int divides each element)."""
    if isinstance(a, tuple):
        bs = b if isinstance(b, tuple) else (b,) * len(a)
        if len(bs) != len(a):
            raise ValueError(f"cdiv: tuples of different lengths {a} and {b}")
        return tuple(cdiv(x, y) for x, y in zip(a, bs))
    if isinstance(b, tuple):
        raise TypeError("cdiv: an int divided by a tuple is ambiguous; pass a tuple as the first argument")
    if isinstance(a, bool) or not isinstance(a, (int, np.integer)):
        raise TypeError(f"cdiv: dividend must be an int or a tuple of ints, got {type(a).__name__}")
    b = _check_divisor(b)
    return -(-int(a) // b)


def is_device_array(x: Any) -> bool:
    """True for a numba device array (or the simulator's stand-in)."""
    return hasattr(x, "copy_to_host") and (
        hasattr(x, "__cuda_array_interface__") or type(x).__name__ == "FakeCUDAArray")


def to_d(x: Any) -> Any:
    """Copy a host array-like (numpy array, list, scalar sequence) to a C-contiguous device array."""
    if is_device_array(x):
        raise TypeError("to_d: already a device array; use it as it is (or to_h to bring it back)")
    if isinstance(x, (str, bytes, dict, set)) or x is None:
        raise TypeError(f"to_d: expected a numpy array or array-like of numbers, got {type(x).__name__}")
    arr = np.ascontiguousarray(x)
    if arr.dtype == object or arr.dtype.kind not in "biufc":
        raise TypeError(f"to_d: expected numbers, got an array of dtype {arr.dtype}")
    return cuda.to_device(arr)


def to_h(d: Any) -> np.ndarray:
    """Copy a device array back to a numpy array."""
    if not is_device_array(d):
        raise TypeError(
            f"to_h: expected a device array (from to_d or cuda.device_array), got {type(d).__name__}"
        )
    return d.copy_to_host()
