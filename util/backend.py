"""The one place that imports a CUDA Python compiler (numba-cuda today, numba-cuda-mlir as an option).

Everything else in the project, notebooks included, takes ``cuda`` from here. Choosing the compiler:
``UTIL_COMPILER=numba-cuda`` (default) or ``UTIL_COMPILER=numba-cuda-mlir``, set before ``util`` is
imported. Without a CUDA driver, numba-cuda falls back to its simulator (``NUMBA_ENABLE_CUDASIM=1``),
which must be decided before numba is first imported: import ``util`` before numba. An explicit
``NUMBA_ENABLE_CUDASIM=0`` keeps numba's real compiler without a driver (kernels compile, none can run): the
compiler child of ``util.compile`` runs so.
"""

from __future__ import annotations

import ctypes
import os
import sys
import warnings
from typing import Any

COMPILERS = ("numba-cuda", "numba-cuda-mlir")


def _driver_present() -> bool:
    """True when the CUDA driver library can be loaded (a GPU machine)."""
    for name in ("libcuda.so.1", "libcuda.so", "nvcuda.dll"):
        try:
            ctypes.CDLL(name)
            return True
        except OSError:
            continue
    return False


COMPILER = os.environ.get("UTIL_COMPILER", "numba-cuda")
if COMPILER not in COMPILERS:
    raise ValueError(f"UTIL_COMPILER={COMPILER!r}: choose one of {', '.join(COMPILERS)}")

HAS_DRIVER = _driver_present()

if COMPILER == "numba-cuda":
    if not HAS_DRIVER and "NUMBA_ENABLE_CUDASIM" not in os.environ:
        if "numba" in sys.modules:
            warnings.warn(
                "No CUDA driver found and numba was imported before util without NUMBA_ENABLE_CUDASIM=1: "
                "kernels cannot run. Import util first, or set NUMBA_ENABLE_CUDASIM=1.",
                stacklevel=2,
            )
        else:
            os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    from numba import cuda  # noqa: E402
    from numba import config as _numba_config  # noqa: E402

    SIMULATED: bool = bool(_numba_config.ENABLE_CUDASIM)
    if SIMULATED:
        _sim_jit = cuda.jit
        # Options that only steer code generation; the simulator runs Python and has no use for them.
        _CODEGEN_ONLY = ("launch_bounds", "max_registers", "lineinfo")

        def _jit(*args, **kwargs):
            """The simulator's cuda.jit, accepting (and ignoring) code-generation-only options. Every option
            given is kept on the kernel as ``jit_options``, for static compilation (util.sass)."""
            given = dict(kwargs)
            for key in _CODEGEN_ONLY:
                kwargs.pop(key, None)
            made = _sim_jit(*args, **kwargs)

            def keep(kernel):
                if is_kernel(kernel):
                    kernel.jit_options = given
                return kernel

            if is_kernel(made):
                return keep(made)
            return lambda fn: keep(made(fn))  # cuda.jit(...) used as a decorator factory

        _jit.__doc__ = _sim_jit.__doc__
        cuda.jit = _jit

        from numba.cuda.simulator.kernel import FakeCUDAKernel as _FakeKernel  # noqa: E402

        _sim_call = _FakeKernel.__call__

        def _call_on_one_cpu(self, *args):
            """A simulated launch, its threads kept to the CPU the launching thread is on.

            The simulator runs a block as one Python thread per CUDA thread while the launching thread polls
            them in a busy loop (``BlockManager.run``). Spread over several cores, those threads hand the GIL
            from core to core and a launch takes several times longer than on one (3-4x, docs/notes.md).
            Linux only (CPU affinity is per thread there, and threads inherit it); the launching thread's own
            affinity is put back afterwards, so compiler processes it starts later may use every CPU."""
            if not hasattr(os, "sched_setaffinity") or len(before := os.sched_getaffinity(0)) == 1:
                return _sim_call(self, *args)  # nothing to narrow: a device function, or already one CPU
            os.sched_setaffinity(0, {_current_cpu(before)})
            try:
                return _sim_call(self, *args)
            finally:
                os.sched_setaffinity(0, before)

        _FakeKernel.__call__ = _call_on_one_cpu
else:  # pragma: no cover - needs a GPU and the optional numba-cuda-mlir package
    if not HAS_DRIVER:
        raise RuntimeError(
            "numba-cuda-mlir has no simulator and needs a CUDA driver even to compile; "
            "unset UTIL_COMPILER (numba-cuda) on a machine without a GPU."
        )
    from numba_cuda_mlir import cuda  # type: ignore[no-redef]  # noqa: E402

    SIMULATED = False


def _current_cpu(allowed: set[int]) -> int:
    """The CPU the calling thread last ran on (``/proc/thread-self/stat``, field 39), else the lowest allowed."""
    try:
        with open("/proc/thread-self/stat", encoding="ascii") as stat:
            cpu = int(stat.read().rpartition(")")[2].split()[36])
    except (OSError, ValueError, IndexError):
        return min(allowed)
    return cpu if cpu in allowed else min(allowed)


def is_kernel(obj: object) -> bool:
    """True for a ``@cuda.jit`` kernel (numba-cuda's dispatcher, the simulator's fake kernel, numba-cuda-mlir's)."""
    return type(obj).__name__ in ("CUDADispatcher", "FakeCUDAKernel", "Dispatcher", "MLIRDispatcher") and hasattr(
        obj, "__getitem__"
    )


def kernel_name(kernel: object) -> str:
    """The Python name of a ``@cuda.jit`` kernel (what profilers' mangled names contain)."""
    fn = getattr(kernel, "py_func", None) or getattr(kernel, "fn", None) or kernel
    return getattr(fn, "__name__", type(kernel).__name__)


def device_name() -> str:
    """The GPU's name, or ``"simulator"`` under numba's CUDA simulator."""
    if SIMULATED:
        return "simulator"
    name = cuda.get_current_device().name
    return name.decode() if isinstance(name, bytes) else str(name)


def versions() -> dict[str, str]:
    """The versions that decide what this project measures: the compiler packages, NumPy, torch, cuda-core and
    the CUDA driver (``"none"`` without one)."""
    from importlib import metadata

    out = {}
    for package in ("numba-cuda", "numba", "llvmlite", "numpy", "torch", "cuda-core"):
        try:
            out[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            out[package] = "not installed"
    out["CUDA driver"] = "none"
    if HAS_DRIVER:
        from cuda.bindings import driver

        err, version = driver.cuDriverGetVersion()
        if int(err) == 0:
            out["CUDA driver"] = f"{version // 1000}.{version % 1000 // 10}"
    return out


def versions_line() -> str:
    """``versions: numba-cuda 0.30.4, numba 0.68.1, ...``: the line each notebook prints beside its device."""
    return "versions: " + ", ".join(f"{k} {v}" for k, v in versions().items())


def synchronize() -> None:
    """Wait for all work on the current device."""
    cuda.synchronize()


MAX_SHARED_PER_BLOCK = 227 * 1024  # bytes of shared memory a block may opt in to on sm_90 (H100, H200)


def allow_dynamic_shared(kernel: object, sig: tuple, nbytes: int) -> None:
    """Let a numba kernel, compiled for ``sig``, launch with ``nbytes`` of dynamic shared memory: above 48 KB a
    kernel must opt in, which numba-cuda 0.30 has no option for (NVIDIA/numba-cuda#94), so this sets the driver's
    attribute on the compiled function. Nothing to do under the simulator."""
    if isinstance(nbytes, bool) or not isinstance(nbytes, int) or not 0 <= nbytes <= MAX_SHARED_PER_BLOCK:
        raise ValueError(f"nbytes must be an int in 0..{MAX_SHARED_PER_BLOCK} (a block's shared memory on sm_90), "
                         f"got {nbytes!r}")
    if not is_kernel(kernel):
        raise TypeError(f"{kernel!r} is not a @cuda.jit kernel")
    if SIMULATED:
        return
    if COMPILER != "numba-cuda":  # pragma: no cover - numba-cuda-mlir
        raise NotImplementedError("allow_dynamic_shared: numba-cuda only")
    fn = kernel.compile(tuple(sig))._codelibrary.get_cufunc()
    opt_in_dynamic_shared(fn.handle, fn.device.id, nbytes, kernel_name(kernel))


def opt_in_dynamic_shared(handle: Any, device_id: int, nbytes: int, what: str) -> None:
    """Set a loaded kernel's (a CUkernel handle's) limit of dynamic shared memory on device ``device_id`` to
    ``nbytes``, through the driver; a RuntimeError naming the driver's error if it refuses. numba kernels
    (allow_dynamic_shared) and the CUDA C twins (util.cuda_c) both come here."""
    from cuda.bindings import driver

    (err,) = driver.cuKernelSetAttribute(
        driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, nbytes, handle,
        driver.CUdevice(device_id))
    if err != driver.CUresult.CUDA_SUCCESS:
        _, name = driver.cuGetErrorName(err)
        raise RuntimeError(f"allowing {what} {nbytes} bytes of dynamic shared memory (cuKernelSetAttribute) failed: "
                           f"{name.decode() if isinstance(name, bytes) else name}")
