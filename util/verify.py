"""SGEMM test problems: random inputs, a float64 reference, NaN poisoning and an elementwise check.

With ``precision="tf32"`` or ``"bf16"`` the random inputs are rounded to TF32 or bf16 values (still stored as
float32), so that a tensor-core kernel multiplies exactly the numbers the reference does; products of such values
are exact in float32, and the tolerance adds, to float32's random walk, a bias of two units in the last place per
k-step of 8 (``TC_STEP_ERROR``) for the tensor cores' accumulation, which rounds toward zero.

The tolerance is scaled to fp32 rounding. For C = A @ B with random inputs, the rounding error of
element (i, j) of a float32 dot product of length k is a random walk of size about
``u * sqrt(k) * ||a_i * b_j||_2`` (u = 2**-24). We allow ``TOL_FACTOR`` times that: float32 kernels in
any summation order pass with a wide margin, while a 0.1% error, a TF32 product, a missing term or a
single NaN fail.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .backend import SIMULATED, cuda
from .memory import to_d

U32 = 2.0**-24  # unit roundoff of float32
TOL_FACTOR = 16.0
PRECISIONS = ("fp32", "tf32", "bf16")  # what a Problem's inputs are rounded to (stored as float32 either way)
# Tensor cores add each k-step's products into the float32 accumulator rounding toward zero (Fasi et al., "Numerical
# behavior of NVIDIA tensor cores", PeerJ CS 2021): the error is a bias that grows with the number of k-steps, not
# with its square root. Measured: cuBLAS TF32 fails the float32 tolerance at 8192^3 and passes at 4096^3 (H200).
TC_STEP_ERROR = 2.0 * 2.0**-23  # allowed per k-step of 8, relative to sqrt(sum a^2 b^2): twice one RZ ulp


def _torch():
    import torch  # imported lazily: heavy, and only needed for checking

    return torch


def check_sizes(**sizes: Any) -> None:
    """Raise a clear error unless every size is a positive int."""
    for name, v in sizes.items():
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{name} must be a positive int, got {v!r} ({type(v).__name__})")
        if v <= 0:
            raise ValueError(f"{name} must be positive, got {v}")


def round_to(x: Any, precision: str) -> Any:
    """float32 values (a NumPy array or a torch tensor) rounded to ``precision``: TF32 to nearest with ties away
    from zero (as cvt.rna.tf32.f32), bf16 to nearest even (as cvt.rn.bf16); fp32 unchanged."""
    if precision == "fp32":
        return x
    if isinstance(x, np.ndarray):
        bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
        if precision == "tf32":
            bits = (bits + 0x1000) & 0xFFFFE000
        else:
            bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
        return bits.astype(np.uint32).view(np.float32)
    torch = _torch()
    if precision == "bf16":
        return x.to(torch.bfloat16).to(torch.float32)
    bits = x.view(torch.int32)
    return ((bits + 0x1000) & -0x2000).view(torch.float32)  # finite inputs: |x| < 1 here


@dataclass
class Check:
    """The outcome of comparing a kernel's output with the float64 reference."""

    correct: bool
    nan_count: int
    bad_count: int
    worst: str  # the worst element, described for a person
    max_err_over_tol: float

    def __str__(self) -> str:
        if self.correct:
            return f"correct (max error {self.max_err_over_tol:.3g} of tolerance)"
        return f"WRONG: {self.bad_count} bad elements ({self.nan_count} NaN/unwritten); worst {self.worst}"


@dataclass
class Problem:
    """C = A @ B in float32 with A (m x k), B (k x n) random in [-1, 1); C lives on the device."""

    m: int
    n: int
    k: int
    seed: int = 0
    precision: str = "fp32"
    c_offset: int = 0  # C starts this many floats past an allocation (1-3: not 16-byte aligned), for kernels that care
    a: Any = field(init=False, repr=False)
    b: Any = field(init=False, repr=False)
    c: Any = field(init=False, repr=False)
    c_buffer: Any = field(init=False, repr=False)  # the allocation C lies in, c_offset floats in (a device array)
    # precision "bf16" only (else None): the bf16 bits of A (m x k) and of B transposed (n x k, so that C = A @ W^T
    # with W = bt16, k contiguous in both), as int16 device arrays for kernels that read bf16 inputs
    a16: Any = field(init=False, repr=False)
    bt16: Any = field(init=False, repr=False)
    _nan: Any = field(init=False, repr=False)  # a NaN array to copy over C (simulator)
    _tensors: Any = field(init=False, repr=False)  # torch tensors that own A, B, C on a GPU
    _tensors16: Any = field(init=False, repr=False)  # torch bf16 tensors that own a16 and bt16 on a GPU
    _bt: Any = field(init=False, repr=False, default=None)  # B transposed, made on first use of .bt
    _expected: Any = field(init=False, repr=False)
    _tol: Any = field(init=False, repr=False)

    def __post_init__(self) -> None:
        check_sizes(m=self.m, n=self.n, k=self.k)
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, got {self.precision!r}")
        if isinstance(self.c_offset, bool) or not isinstance(self.c_offset, int) or not 0 <= self.c_offset <= 3:
            raise ValueError(f"c_offset is 0-3 floats past an allocation's start, got {self.c_offset!r}")
        mn, off = self.m * self.n, self.c_offset
        torch = _torch()
        if SIMULATED or not torch.cuda.is_available():
            rng = np.random.default_rng(self.seed)
            a = round_to(rng.uniform(-1.0, 1.0, (self.m, self.k)).astype(np.float32), self.precision)
            b = round_to(rng.uniform(-1.0, 1.0, (self.k, self.n)).astype(np.float32), self.precision)
            self.a, self.b = to_d(a), to_d(b)
            self.c_buffer = cuda.device_array(mn + off, dtype=np.float32)
            self.c = self.c_buffer[off:].reshape(self.m, self.n)
            self._nan, self._tensors = to_d(np.full((self.m, self.n), np.nan, dtype=np.float32)), None
            self._tensors16 = None
            if self.precision == "bf16":  # the rounded values' top 16 bits are their bf16 patterns
                self.a16, self.bt16 = (to_d((x.view(np.uint32) >> 16).astype(np.uint16).view(np.int16))
                                       for x in (a, np.ascontiguousarray(b.T)))
            else:
                self.a16 = self.bt16 = None
            a64, b64 = torch.from_numpy(a).double(), torch.from_numpy(b).double()
        else:  # made on the GPU (milliseconds, even at 8192^2), shared with numba without a copy
            gen = torch.Generator(device="cuda")
            gen.manual_seed(self.seed)
            a_t = torch.empty((self.m, self.k), dtype=torch.float32, device="cuda").uniform_(-1.0, 1.0, generator=gen)
            b_t = torch.empty((self.k, self.n), dtype=torch.float32, device="cuda").uniform_(-1.0, 1.0, generator=gen)
            a_t, b_t = round_to(a_t, self.precision), round_to(b_t, self.precision)
            c_buf = torch.empty(mn + off, dtype=torch.float32, device="cuda")
            c_t = c_buf[off:].view(self.m, self.n)
            self.c_buffer = cuda.as_cuda_array(c_buf)
            self._tensors, self._nan = (a_t, b_t, c_t), None
            self.a, self.b, self.c = (cuda.as_cuda_array(t) for t in self._tensors)
            self._tensors16 = None
            self.a16 = self.bt16 = None
            if self.precision == "bf16":  # exact: the values are bf16 already
                self._tensors16 = (a_t.to(torch.bfloat16), b_t.t().contiguous().to(torch.bfloat16))
                self.a16, self.bt16 = (cuda.as_cuda_array(t.view(torch.int16)) for t in self._tensors16)
            a64, b64 = a_t.double(), b_t.double()
        self._expected = a64 @ b64
        scale = torch.sqrt((a64 * a64) @ (b64 * b64))
        self._tol = TOL_FACTOR * U32 * np.sqrt(self.k) * scale
        if self.precision != "fp32":  # tensor cores round each k-step's sum toward zero: a bias, linear in k
            self._tol += TC_STEP_ERROR * -(-self.k // 8) * scale
        self._tol += np.finfo(np.float32).tiny

    @property
    def bt(self) -> Any:
        """B transposed (n x k, float32, a device array) for kernels that want K contiguous in B too; precision "tf32"
        only (else None). Made on first use (and kept), so that kernels that do not read it do not pay its memory."""
        if self.precision != "tf32":
            return None
        if self._bt is None:
            if self._tensors is not None:  # on the GPU: a torch tensor owns it
                self._bt = self._tensors[1].t().contiguous()
            else:
                self._bt = to_d(np.ascontiguousarray(self.b.copy_to_host().T))
        return cuda.as_cuda_array(self._bt) if self._tensors is not None else self._bt

    @property
    def flops(self) -> float:
        return 2.0 * self.m * self.n * self.k

    def args(self, flat: bool = False) -> tuple:
        """``(a, b, c, m, n, k)`` as the kernels take them; 1-D row-major views with ``flat=True``."""
        if flat:
            return (self.a.reshape(self.m * self.k), self.b.reshape(self.k * self.n),
                    self.c.reshape(self.m * self.n), self.m, self.n, self.k)
        return (self.a, self.b, self.c, self.m, self.n, self.k)

    def poison(self) -> None:
        """Fill C with NaN so that an element a kernel fails to write is caught."""
        if self._tensors is not None:
            self._tensors[2].fill_(float("nan"))
        else:
            self.c.copy_to_device(self._nan)

    def output(self):
        """C as a float64 torch tensor beside the reference (zero-copy on the GPU)."""
        torch = _torch()
        if self._tensors is not None:
            cuda.synchronize()
            return self._tensors[2].to(torch.float64)
        return torch.from_numpy(self.c.copy_to_host()).to(torch.float64)

    def check(self) -> Check:
        """Compare every element of C with the float64 reference."""
        torch = _torch()
        got = self.output()
        err = (got - self._expected).abs()
        ratio = torch.where(torch.isfinite(got), err / self._tol, torch.full_like(err, float("inf")))
        nan_count = int((~torch.isfinite(got)).sum())
        bad_count = int((ratio > 1.0).sum())
        flat_idx = int(torch.argmax(ratio))
        i, j = divmod(flat_idx, self.n)
        worst_ratio = float(ratio.view(-1)[flat_idx])
        worst = (f"C[{i},{j}] = {float(got[i, j]):.7g}, expected {float(self._expected[i, j]):.7g} "
                 f"(tolerance {float(self._tol[i, j]):.2g})")
        return Check(bad_count == 0, nan_count, bad_count, worst, worst_ratio)
