"""Measure, verify and explain numba-cuda SGEMM kernels (against CUDA C and cuBLAS).

Import ``util`` before numba: without a GPU it switches numba to its CUDA simulator.
"""

from .backend import COMPILER, SIMULATED, cuda, device_name, versions, versions_line
from .memory import cdiv, to_d, to_h
from .timing import Result, cuda_mean_runtime, measure_runtime, run_verified
from .verify import Check, Problem

__all__ = [
    "COMPILER", "SIMULATED", "cuda", "device_name", "versions", "versions_line",
    "cdiv", "to_d", "to_h",
    "Result", "cuda_mean_runtime", "measure_runtime", "run_verified",
    "Check", "Problem",
]
