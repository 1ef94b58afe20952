"""Read PTX: instruction counts, and the float64 instructions a stray ``tmp = 0`` brings."""

from __future__ import annotations

import re
from collections import Counter

_PTX_OP = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][\w.]*)[\s;]", re.M)


def ptx_op_counts(ptx: str) -> Counter[str]:
    """How many times each PTX instruction (``fma.rn.f32``, ``ld.global.f32``, ``cvt.f64.f32`` ...) appears."""
    if not isinstance(ptx, str):
        raise TypeError(f"expected PTX text (str), got {type(ptx).__name__}")
    return Counter(_PTX_OP.findall(ptx))


def f64_ops(ptx: str) -> Counter[str]:
    """The float64 instructions of ``ptx`` (a ``tmp = 0`` accumulator makes numba compute in float64)."""
    return Counter({op: n for op, n in ptx_op_counts(ptx).items() if "f64" in op.split(".")})


