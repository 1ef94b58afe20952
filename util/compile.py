"""Compile without a GPU: numba kernels to PTX (and numba's typing), PTX and CUDA C to sm_90 cubins.

    ptx = numba_ptx(coalesced, (float32[:, ::1],) * 3 + (int32,) * 3)        # numba kernel -> PTX
    cubin = cubin_from_ptx(ptx)                                                # ptxas -> cubin
    twin = cuda_c_cubin(CUDA_C_SOURCE, "sgemm_coalesce")                       # NVRTC -> cubin

Under numba's simulator (a CPU machine) numba's compiler is replaced in this process, so ``numba_ptx`` and
``numba_types`` compile in a child process (``util.child_compile``), to which ``util.ship`` sends the
kernel's source, the signature and the globals the kernel uses. The SASS of a cubin is read by ``util.sass``.
On a GPU numba links through nvJitLink (LTO) instead of ptxas, which can schedule a little differently.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import pickle
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import FunctionType
from typing import Any, Mapping, Sequence

from numba.core import types as nbtypes

from .backend import SIMULATED, cuda, is_kernel
from .cuda_c import check_arch, nvrtc_cubin
from .ship import jit_options, py_func, spec
from .toolchain import run_tool

ARCH = "sm_90"

PTX_OPTIONS = ("debug", "lineinfo", "fastmath", "opt", "launch_bounds")  # what compile_ptx takes
# jit options that do not change a kernel's PTX (linking, caching, launch-time settings, inlining of
# the kernel itself); accepted and ignored. ``max_registers`` becomes a ``.maxnreg`` directive.
NO_PTX_EFFECT = ("lto", "cache", "extensions", "shared_memory_carveout", "inline", "forceinline", "device", "link")

_PTX_CACHE: dict[Any, str] = {}


class PtxCompileError(RuntimeError):
    """numba could not compile a kernel to PTX."""


def numba_ptx(kernel: Any, sig: Sequence[nbtypes.Type], *, cc: tuple[int, int] = (9, 0), child: bool | None = None,
              **options: Any) -> str:
    """PTX of a ``@cuda.jit`` kernel (or a plain Python function) for the argument types ``sig``.

    The kernel's own jit options (``fastmath``, ``launch_bounds``, ``max_registers``, ``lineinfo``, ``opt``,
    ``debug``) apply, overridden by ``options``. ``max_registers`` is written into the PTX as
    ``.maxnreg`` (what ``--maxrregcount`` does when numba links on a GPU); ``launch_bounds`` gives
    ``.maxntid``/``.minnctapersm``. Results are cached on (source, globals, sig, cc, options). ``child``: compile
    in the compiler child process (default: under the simulator only), where every device function the kernel
    calls is compiled afresh with the options it carries, as on a CPU machine.
    """
    fn = py_func(kernel)
    sig = check_sig(fn, sig)
    merged = {**jit_options(kernel), **options}
    ptx_options, max_registers = split_options(fn.__name__, merged)
    if SIMULATED if child is None else child:
        job = {"kernel": spec(fn), "sig": sig, "cc": tuple(cc), "options": ptx_options}
        key: Any = hashlib.sha256(pickle.dumps(job)).hexdigest()
        if key not in _PTX_CACHE:
            _PTX_CACHE[key] = _compile_in_child(job, fn.__name__)
    elif _compiled_for(kernel, sig, cc, options):  # already compiled for this GPU: reuse, don't recompile
        return _with_maxnreg(kernel.inspect_asm(sig), max_registers)
    else:
        key = (fn, sig, tuple(cc), tuple(sorted(ptx_options.items())))
        if key not in _PTX_CACHE:
            _PTX_CACHE[key] = cuda.compile_ptx(fn, sig, cc=tuple(cc), **ptx_options)[0]
    return _with_maxnreg(_PTX_CACHE[key], max_registers)


@dataclass(frozen=True)
class Typing:
    """What numba's type inference decided for a kernel: its typemap and its annotated source."""

    name: str
    typemap: dict[str, str]  # SSA variable (``tmp``, ``tmp.1`` ...) -> numba type
    annotation: str  # numba's own type-annotated IR, as ``inspect_types()`` prints it

    def types_of(self, var: str) -> list[str]:
        """The distinct types numba gave ``var`` and its SSA versions (``tmp``, ``tmp.1``, ``tmp.2`` ...)."""
        found = [t for k, t in self.typemap.items() if k == var or re.fullmatch(rf"{re.escape(var)}\.\d+", k)]
        return sorted(set(found))

    def lines_about(self, var: str) -> list[str]:
        """numba's annotated IR lines that assign ``var`` or update it in place (type after ``::``)."""
        v = re.escape(var)
        pat = re.compile(rf"^\s*#\s+({v}(\.\d+)?\s*=|\S+\s*=\s*inplace_binop\(.*lhs={v}(\.\d+)?,)")
        return [line.strip().lstrip("#").strip() for line in self.annotation.splitlines() if pat.match(line)]


_TYPES_CACHE: dict[Any, Typing] = {}


def numba_types(kernel: Any, sig: Sequence[nbtypes.Type], *, cc: tuple[int, int] = (9, 0),
                child: bool | None = None) -> Typing:
    """Run numba's type inference on a kernel for ``sig`` (no GPU needed) and return its decisions (``child``: as
    for ``numba_ptx``)."""
    fn = py_func(kernel)
    sig = check_sig(fn, sig)
    if not (SIMULATED if child is None else child):  # numba's real compiler is in this process
        key: Any = (fn, sig, tuple(cc))
        if key not in _TYPES_CACHE:
            from numba.cuda.compiler import compile_cuda

            cres = compile_cuda(fn, nbtypes.void, sig, cc=tuple(cc))
            typemap = {k: str(v) for k, v in cres.type_annotation.typemap.items()}
            _TYPES_CACHE[key] = Typing(fn.__name__, typemap, str(cres.type_annotation))
        return _TYPES_CACHE[key]
    job = {"kernel": spec(fn), "sig": sig, "cc": tuple(cc), "what": "types"}
    key = hashlib.sha256(pickle.dumps(job)).hexdigest()
    if key not in _TYPES_CACHE:
        out = json.loads(_compile_in_child(job, fn.__name__))
        _TYPES_CACHE[key] = Typing(fn.__name__, out["typemap"], out["annotation"])
    return _TYPES_CACHE[key]


def _compiled_for(kernel: Any, sig: tuple, cc: tuple[int, int], options: Mapping[str, Any]) -> bool:
    """Whether a real dispatcher already holds this signature, compiled for ``cc`` with these options."""
    if not (is_kernel(kernel) and hasattr(kernel, "inspect_asm") and tuple(sig) in getattr(kernel, "overloads", {})):
        return False
    own = getattr(kernel, "targetoptions", {})
    same_options = all(own.get(k) == v for k, v in options.items())
    return same_options and tuple(cuda.get_current_device().compute_capability) == tuple(cc)


def check_sig(fn: FunctionType, sig: Any) -> tuple[nbtypes.Type, ...]:
    """``sig`` as a tuple of numba types, one per parameter of ``fn``; a clear error otherwise."""
    example = ("e.g. (float32[:, ::1], float32[:, ::1], float32[:, ::1], int32, int32, int32) "
               "with `from numba import float32, int32`")
    if not isinstance(sig, (tuple, list)) or not all(isinstance(t, nbtypes.Type) for t in sig):
        raise TypeError(f"sig must be a tuple of numba types, one per argument of {fn.__name__}, {example}; "
                        f"got {sig!r}")
    params = list(inspect.signature(fn).parameters)
    if len(sig) != len(params):
        raise TypeError(f"{fn.__name__}({', '.join(params)}) takes {len(params)} arguments but sig has "
                        f"{len(sig)} types; give one numba type per argument, {example}")
    return tuple(sig)


def split_options(name: str, options: Mapping[str, Any]) -> tuple[dict[str, Any], int | None]:
    """(compile_ptx keyword arguments, max_registers) from jit options; bad options raise."""
    unknown = sorted(set(options) - set(PTX_OPTIONS) - set(NO_PTX_EFFECT) - {"max_registers"})
    if unknown:
        raise TypeError(f"unknown jit option(s) {unknown} for {name}; known: "
                        f"{', '.join(PTX_OPTIONS + ('max_registers',) + NO_PTX_EFFECT)}")
    if options.get("device"):
        raise TypeError(f"{name} is a device function (device=True), not a kernel; pass the kernel that calls it")
    if options.get("link"):
        raise ValueError(f"{name} links external code (link=...): its PTX alone is not the whole kernel, "
                         "so it cannot be analysed here")
    max_registers = options.get("max_registers")
    if max_registers is not None and (isinstance(max_registers, bool) or not isinstance(max_registers, int)
                                      or not 1 <= max_registers <= 255):
        raise ValueError(f"max_registers must be an int in 1..255, got {max_registers!r}")
    return {k: options[k] for k in PTX_OPTIONS if options.get(k) is not None}, max_registers


def _with_maxnreg(ptx: str, max_registers: int | None) -> str:
    """Cap every kernel entry of ``ptx`` at ``max_registers`` registers per thread (``.maxnreg``)."""
    if max_registers is None:
        return ptx
    out, n = re.subn(r"(\.entry\s[^{]*?)\n\{", lambda m: f"{m.group(1)}\n.maxnreg {max_registers}\n{{", ptx)
    if n == 0:
        raise ValueError("no kernel (.entry) in this PTX to apply max_registers to")
    return out


def _compile_in_child(job: dict[str, Any], name: str) -> str:
    """Run numba's real compiler in a fresh Python without the simulator (``util.child_compile``)."""
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "0"}  # "0": util.backend keeps numba's real compiler
    repo = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (repo, os.environ.get("PYTHONPATH"))))
    # started with -c, not -m: run as __main__ the same compile spent 2.5 s more in the kernel (four times the
    # page mappings) on ladder step 15, docs/notes.md
    start = "from util.child_compile import main, exit_now; exit_now(main())"
    proc = subprocess.run([sys.executable, "-c", start], input=pickle.dumps(job),
                          capture_output=True, env=env, check=False)
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip()
        raise PtxCompileError(f"numba could not compile {name} for {job['sig']}:\n{err[-4000:]}")
    return proc.stdout.decode()


# ---- to a cubin ----------------------------------------------------------------------------------------

def cubin_from_ptx(ptx: str, arch: str = ARCH) -> bytes:
    """Assemble PTX into a cubin for ``arch`` with ptxas (from the nvidia-cuda-nvcc wheel)."""
    if not isinstance(ptx, str) or ".entry" not in ptx:
        raise TypeError("expected PTX text with a kernel (.entry), e.g. from numba_ptx(kernel, sig)")
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp, "kernel.ptx"), Path(tmp, "kernel.cubin")
        src.write_text(ptx)
        run_tool("ptxas", f"-arch={check_arch(arch)}", "-o", out, src)
        return out.read_bytes()


def cuda_c_cubin(source: str, names: str | Sequence[str], arch: str = ARCH, options: Sequence[str] = ()) -> bytes:
    """Compile CUDA C++ to a cubin with NVRTC (cuda.core); no GPU needed.

    ``names``: the kernel name(s) to keep, e.g. ``"sgemm_coalesce"`` for an ``extern "C"`` kernel or
    ``"sgemm<64, 8>"`` to instantiate a template. ``options``: NVRTC flags as util.cuda_c.CudaC takes them,
    e.g. ``["-use_fast_math", "-maxrregcount=64"]``. (For a CudaC twin, ``analyze(twin.cubin())``.)
    """
    names = (names,) if isinstance(names, str) else tuple(names)
    if not names or not all(isinstance(n, str) and n for n in names):
        raise TypeError(f"names must be a kernel name or a list of them, e.g. 'sgemm_coalesce', got {names!r}")
    return nvrtc_cubin(source, check_arch(arch), options, names[0].split("<")[0], name_expressions=names)
