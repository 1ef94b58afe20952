"""CUDA C twins of numba kernels: compiled by NVRTC through cuda.core, launched on a Problem's arrays.

    twin = CudaC(SOURCE, "sgemm_coalesce")
    twin.cubin("sm_90")                      # bytes, no GPU needed (for SASS analysis)
    launch = twin.launch(1024, grid32)       # checked like a numba launch
    run_verified(p, 5, {"CUDA C": launch})   # same arrays, same CUDA events, same checks

The C kernel takes the numba convention's arguments, ``(const float* a, const float* b, float* c,
int m, int n, int k, int extra...)``. It runs on stream handle 0, the default stream numba launches on
and records util.timing's CUDA events on (the legacy default stream, which torch's default stream also
orders with), in numba's primary context: events bracket it exactly as they bracket a numba launch.
Needs cuda.core >= 0.5.1 (numba-cuda 0.30's floor); cubin() without a CUDA driver needs cuda.core >= 0.7.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
from cuda.bindings import driver
from cuda.core import Device, LaunchConfig, ObjectCode, Program, ProgramOptions, Stream
from cuda.core import __version__ as cuda_core_version
from cuda.core import launch as core_launch

from .backend import SIMULATED, cuda, opt_in_dynamic_shared
from .launch import Launch, check_grid, check_nblocks_fn, check_nthreads
from .verify import Problem

DEFAULT_ARCH = "sm_90"  # the H200 this project measures
DEFAULT_SHMEM_LIMIT = 48 * 1024  # dynamic shared memory a kernel may use without opting in
SIMULATOR_MESSAGE = ("CUDA C twins need a GPU; the simulator runs numba kernels only "
                     "(a Registry skips them there; their cubin() still compiles for SASS analysis)")
_ARCH = re.compile(r"sm_\d{2,3}[af]?")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_INT32 = np.iinfo(np.int32)

# NVRTC flags accepted in ``options``, mapped to cuda.core ProgramOptions fields (the same from 0.3 to 1.2)
_SWITCHES = {"lineinfo": "lineinfo", "generate-line-info": "lineinfo", "use_fast_math": "use_fast_math",
             "restrict": "restrict", "G": "debug", "device-debug": "debug",
             "extra-device-vectorization": "extra_device_vectorization"}
_BOOL = {"true": True, "false": False}
_VALUED: dict[str, tuple[str, Callable[[str], Any]]] = {
    "maxrregcount": ("max_register_count", int), "ftz": ("ftz", _BOOL.__getitem__),
    "prec-div": ("prec_div", _BOOL.__getitem__), "prec-sqrt": ("prec_sqrt", _BOOL.__getitem__),
    "fmad": ("fma", _BOOL.__getitem__), "std": ("std", str)}
_LISTS = {"define-macro": "define_macro", "Xptxas": "ptxas_options", "ptxas-options": "ptxas_options",
          "include-path": "include_path"}
SUPPORTED_OPTIONS = ("-lineinfo", "-use_fast_math", "-restrict", "-G", "-extra-device-vectorization",
                     "-maxrregcount=N", "-ftz=true|false", "-prec-div=true|false", "-prec-sqrt=true|false",
                     "-fmad=true|false", "-std=c++17", "-DNAME[=VALUE]", "-IDIR", "-Xptxas=OPTION")


class CudaCCompileError(RuntimeError):
    """A twin's source did not compile to a cubin; the message carries NVRTC's log."""


def program_options(flags: Sequence[str], arch: str, name: str) -> Any:
    """cuda.core ProgramOptions for NVRTC ``flags`` (one or two leading dashes), compiling for ``arch``."""
    if isinstance(flags, (str, bytes)) or not all(isinstance(f, str) for f in flags):
        raise TypeError(f"options must be a list of NVRTC flags, e.g. ['-lineinfo'], got {flags!r}")
    fields: dict[str, Any] = {}
    lists: dict[str, list[str]] = {}
    for flag in flags:
        body = flag.lstrip("-")
        key, has_value, value = body.partition("=")
        try:
            if not flag.startswith("-") or not body:
                raise KeyError(flag)
            if body.startswith("D") and len(body) > 1:
                lists.setdefault("define_macro", []).append(body[1:])
            elif body.startswith("I") and len(body) > 1:
                lists.setdefault("include_path", []).append(body[1:])
            elif key in _SWITCHES and not has_value:
                fields[_SWITCHES[key]] = True
            elif key in _VALUED and value:
                field, parse = _VALUED[key]
                fields[field] = parse(value)
            elif key in _LISTS and value:
                lists.setdefault(_LISTS[key], []).append(value)
            else:
                raise KeyError(flag)
        except (KeyError, ValueError):
            raise ValueError(f"unsupported NVRTC option {flag!r}; CudaC takes {', '.join(SUPPORTED_OPTIONS)}") from None
    return ProgramOptions(name=f"{name}.cu", arch=arch, **fields, **lists)


def nvrtc_cubin(source: str, arch: str, options: Sequence[str], name: str,
                name_expressions: Sequence[str] = ()) -> bytes:
    """Compile CUDA C++ to a cubin for ``arch`` with NVRTC (cuda.core); no GPU needed.

    ``name`` labels the program; ``name_expressions`` (e.g. ``"sgemm<64, 8>"``) instantiate templates.
    """
    program = Program(source, "c++", program_options(options, arch, name))
    try:
        kwargs = {"name_expressions": tuple(name_expressions)} if name_expressions else {}
        return bytes(program.compile("cubin", **kwargs).code)
    finally:
        program.close()


def check_arch(arch: Any) -> str:
    """Validate a real (cubin) architecture name such as ``sm_90`` or ``sm_90a``."""
    if not isinstance(arch, str) or not _ARCH.fullmatch(arch):
        raise ValueError(f"arch must name a real GPU architecture such as 'sm_90' (H200) or 'sm_90a', got {arch!r}")
    return arch


def _check(result: Any, what: str) -> None:
    """Raise a RuntimeError naming the driver error unless ``result`` is CUDA_SUCCESS."""
    if result != driver.CUresult.CUDA_SUCCESS:
        _, name = driver.cuGetErrorName(result)
        raise RuntimeError(f"{what} failed: {name.decode() if isinstance(name, bytes) else name}")


ELEMENT_TYPES = {"<f4": "float32", "<i2": "int16", "<u2": "uint16", "<i4": "int32", "<u4": "uint32"}


def _pointer(arr: Any, what: str, typestrs: tuple[str, ...] = ("<f4",)) -> int:
    """The device address of a C-contiguous device array (numba's or any CUDA array interface) whose elements are
    one of ``typestrs`` (float32 by default; bf16 bits travel as int16)."""
    cai = getattr(arr, "__cuda_array_interface__", None)
    if cai is None or cai["typestr"] not in typestrs or cai.get("strides") is not None:
        kinds = " or ".join(ELEMENT_TYPES[t] for t in typestrs)
        got = f"{type(arr).__name__} of {cai['typestr']}" if cai is not None else type(arr).__name__
        raise TypeError(f"{what} must be a C-contiguous {kinds} device array (as util.verify.Problem holds), got {got}")
    return int(cai["data"][0])


@dataclass
class _Loaded:
    """A twin's kernel loaded on one device, with what launching it needs."""

    device: Any  # cuda.core Device
    kernel: Any  # cuda.core Kernel
    stream: Any  # cuda.core Stream on handle 0: the default stream numba's launches and events use
    param_sizes: tuple[int, ...]
    shmem_allowed: int = DEFAULT_SHMEM_LIMIT


class CudaC:
    """A CUDA C kernel in the numba convention, ``extern "C" __global__ void name(a, b, c, m, n, k, ...)``."""

    def __init__(self, source: str, name: str, *, options: Sequence[str] = (), arch: str | None = None) -> None:
        if not isinstance(source, str) or not source.strip():
            raise TypeError("source must be the CUDA C text of the kernel (a non-empty str)")
        if not isinstance(name, str) or not _IDENT.fullmatch(name):
            raise ValueError(f"name must be the kernel's C identifier, e.g. 'sgemm_coalesce', got {name!r}")
        self.source = source
        self.name = self.__name__ = name
        self.arch = None if arch is None else check_arch(arch)
        program_options(options, self.arch or DEFAULT_ARCH, name)  # reject bad flags now, not at launch
        self.options = tuple(options)
        self._cubins: dict[str, bytes] = {}
        self._loaded: dict[int, _Loaded] = {}

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], name: str, *, options: Sequence[str] = (),
                  arch: str | None = None) -> "CudaC":
        """A twin whose source is a ``.cu`` file; its folder is on the include path (``#include "common.cuh"``)."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no CUDA C source at {path} (paths are relative to the notebook's folder, "
                                    f"{Path.cwd()})")
        return cls(path.read_text(), name, options=[f"-I{path.resolve().parent}", *options], arch=arch)

    def __repr__(self) -> str:
        return f"CudaC({self.name!r}, options={list(self.options)}, arch={self.arch!r})"

    def cubin(self, arch: str | None = None) -> bytes:
        """The kernel compiled by NVRTC for ``arch`` (default: the twin's arch, else sm_90); cached."""
        arch = check_arch(arch or self.arch or DEFAULT_ARCH)
        if arch not in self._cubins:
            try:
                code = nvrtc_cubin(self.source, arch, self.options, self.name)
            except Exception as e:
                raise CudaCCompileError(f"could not compile {self.name} for {arch} with NVRTC "
                                        f"(cuda.core {cuda_core_version}):\n{e}") from e
            if b"\0" + self.name.encode() + b"\0" not in code:
                raise CudaCCompileError(
                    f"the compiled source has no kernel named {self.name!r}: declare it "
                    f'extern "C" __global__ void {self.name}(...) (C++ names are mangled)')
            self._cubins[arch] = code
        return self._cubins[arch]

    def launch(self, nthreads: Any, nblocks_fn: Callable, *, shmem: int = 0, extra: Sequence[int] = ()) -> Launch:
        """Check the launch settings as a numba launch does; return ``launch(problem)``.

        ``launch(p)`` runs the kernel with grid ``nblocks_fn((p.m, p.n), nthreads)``, block ``nthreads`` and
        ``shmem`` bytes of dynamic shared memory on ``(p.a, p.b, p.c, m, n, k, *extra)``.
        """
        block = check_nthreads(nthreads)
        check_nblocks_fn(nblocks_fn)
        if isinstance(shmem, bool) or not isinstance(shmem, (int, np.integer)) or shmem < 0:
            raise ValueError(f"shmem must be a number of bytes of dynamic shared memory (an int >= 0), got {shmem!r}")
        if not isinstance(extra, (list, tuple)) or not all(
                isinstance(x, (int, np.integer)) and not isinstance(x, bool) and _INT32.min <= x <= _INT32.max
                for x in extra):
            raise TypeError(f"extra must be a list of int32 values for the kernel's trailing int parameters, "
                            f"got {extra!r}")
        ints = tuple(np.int32(x) for x in extra)
        nt = nthreads if isinstance(nthreads, tuple) else block[0]
        shmem = int(shmem)

        def launch(p: Problem) -> None:
            grid = check_grid(nblocks_fn((p.m, p.n), nt))
            if SIMULATED:
                raise RuntimeError(SIMULATOR_MESSAGE)
            self._launch(p, grid, block, shmem, ints)

        launch.__name__ = self.name
        return launch

    def call(self, grid: Any, block: Any, *args: Any, shmem: int = 0) -> None:
        """Launch on any arguments: device arrays (passed as pointers; C-contiguous float32, or 16- or 32-bit ints
        such as bf16 bits) and NumPy scalars (``np.int32(m)``, ``np.int64(mn)``: their size must match the C
        parameter's). Checked like ``launch``."""
        grid, block = check_grid(grid), check_nthreads(block)
        if SIMULATED:
            raise RuntimeError(SIMULATOR_MESSAGE)
        values, sizes = [], []
        for i, x in enumerate(args):
            if isinstance(x, (np.int32, np.int64, np.uint32, np.uint64, np.float32, np.float64)):
                values.append(x)
                sizes.append(x.itemsize)
            else:
                values.append(_pointer(x, f"argument {i}", tuple(ELEMENT_TYPES)))
                sizes.append(8)
        ctx = cuda.current_context()
        loaded = self._loaded.get(ctx.device.id) or self._load(ctx)
        if loaded.param_sizes != tuple(sizes):
            raise TypeError(f"{self.name} takes parameters of sizes {list(loaded.param_sizes)} bytes; this call "
                            f"passes {list(sizes)} (arrays are 8-byte pointers; pass ints as np.int32/np.int64)")
        if shmem > loaded.shmem_allowed:
            self._allow_shmem(loaded, shmem)
        try:
            core_launch(loaded.stream, LaunchConfig(grid=grid, block=block, shmem_size=shmem), loaded.kernel,
                        *values)
        except Exception as e:
            raise RuntimeError(f"launching {self.name} with grid={grid}, block={block} failed: {e}") from e

    # ---- on the GPU -------------------------------------------------------------------------------------

    def _launch(self, p: Problem, grid: tuple[int, ...], block: tuple[int, ...], shmem: int,
                ints: tuple[np.int32, ...]) -> None:
        ctx = cuda.current_context()  # numba's primary context, made current if it was not
        loaded = self._loaded.get(ctx.device.id) or self._load(ctx)
        want = (8, 8, 8) + (4,) * (3 + len(ints))
        if loaded.param_sizes != want:
            raise TypeError(
                f"{self.name} takes {len(loaded.param_sizes)} parameters of sizes {list(loaded.param_sizes)} bytes; "
                f"this launch passes (const float* a, const float* b, float* c, int m, int n, int k"
                f"{', int' * len(ints)}), sizes {list(want)}: make the C signature match (extra=... for more ints)")
        if shmem > loaded.shmem_allowed:
            self._allow_shmem(loaded, shmem)
        args = (_pointer(p.a, "a"), _pointer(p.b, "b"), _pointer(p.c, "c"),
                np.int32(p.m), np.int32(p.n), np.int32(p.k), *ints)
        try:
            core_launch(loaded.stream, LaunchConfig(grid=grid, block=block, shmem_size=shmem), loaded.kernel, *args)
        except Exception as e:
            raise RuntimeError(f"launching {self.name} with grid={grid}, block={block}, shmem={shmem} "
                               f"failed: {e}") from e

    def _load(self, ctx: Any) -> _Loaded:
        """Load the kernel for the device of numba's context ``ctx``, in that same (primary) context."""
        device = Device(ctx.device.id)
        device.set_current()  # no-op when numba's primary context is current: cuda.core then shares it
        result, current = driver.cuCtxGetCurrent()
        _check(result, "cuCtxGetCurrent")
        if int(current) != int(ctx.handle):
            raise RuntimeError(f"cuda.core's current context ({int(current):#x}) is not numba's primary context "
                               f"({int(ctx.handle):#x}); create no other CUDA contexts in this process")
        cc = device.compute_capability
        arch = self.arch or f"sm_{cc.major}{cc.minor}"
        cubin = self.cubin(arch)
        try:
            kernel = ObjectCode.from_cubin(cubin, name=f"{self.name}.cubin").get_kernel(self.name)
            sizes = tuple(int(info.size) for info in kernel.arguments_info)
        except Exception as e:
            raise RuntimeError(f"could not load {self.name} compiled for {arch} on {device.name} "
                               f"(compute capability {cc.major}.{cc.minor}): {e}") from e
        loaded = _Loaded(device, kernel, Stream.from_handle(0), sizes)
        self._loaded[ctx.device.id] = loaded
        return loaded

    def _allow_shmem(self, loaded: _Loaded, shmem: int) -> None:
        """Opt the kernel in to ``shmem`` bytes of dynamic shared memory (needed above 48 KB).

        cuda.core's KernelAttributes are read-only (0.3..1.2), so this sets the attribute on the kernel's
        driver handle (Kernel.handle since cuda.core 0.6, Kernel._handle before) with util.backend's
        opt_in_dynamic_shared.
        """
        limit = loaded.device.properties.max_shared_memory_per_block_optin
        if shmem > limit:
            raise ValueError(f"shmem={shmem} bytes is more dynamic shared memory than a block can have on "
                             f"{loaded.device.name} ({limit} bytes)")
        handle = loaded.kernel.handle if hasattr(loaded.kernel, "handle") else loaded.kernel._handle
        opt_in_dynamic_shared(handle, loaded.device.device_id, shmem, self.name)
        loaded.shmem_allowed = shmem
