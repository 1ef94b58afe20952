"""Which int32 ops numba keeps in 32 bits (PTX). NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=. python scratch/typing/probe_ops.py"""
from numba import int32, uint32, types
from util import cuda
from util.compile import numba_ptx
from util.intrinsics import add_nsw


def k_add(a, x, y):
    a[0] = int32(x + y)


def k_min(a, x, y):
    a[0] = min(x, y)


def k_div(a, x, y):
    a[0] = int32(x // int32(16))


def k_udiv(a, x, y):
    a[0] = int32(uint32(x) // uint32(16))


def k_shr(a, x, y):
    a[0] = int32(x >> int32(4))


def k_nsw(a, x, y):
    a[0] = add_nsw(x, y)


for f in (k_add, k_min, k_div, k_udiv, k_shr, k_nsw):
    ptx = numba_ptx(f, (types.int32[::1], int32, int32))
    body = [l.strip() for l in ptx.splitlines() if l.strip() and not l.strip().startswith(("//", ".", "{", "}", "ld.param", "ret", "cvta", "mov.u64"))]
    print(f.__name__, [l for l in body if any(s in l for s in ("64", "32"))][:8])
