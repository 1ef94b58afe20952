"""Static PTX/SASS analysis for sm_90 that needs no GPU: why is a numba kernel slower than its CUDA C twin?

    ptx = numba_ptx(coalesced, (float32[:, ::1],) * 3 + (int32,) * 3)        # numba kernel -> PTX
    f64_ops(ptx)                                                               # a float64 accumulator?
    numba = analyze(cubin_from_ptx(ptx))                                       # ptxas -> registers, hot loop
    twin = analyze(cuda_c_cubin(CUDA_C_SOURCE, "sgemm_coalesce"))              # NVRTC -> the same report
    side_by_side({"numba": numba, "CUDA C": twin})                             # one table

Under numba's simulator (a CPU machine) numba's compiler is replaced in this process, so ``numba_ptx``
compiles in a subprocess: it ships the kernel's source, the signature and the globals the kernel uses.
The SASS comes from ptxas on numba's PTX; on a GPU numba links through nvJitLink (LTO) instead, which
can schedule a little differently, so counts are close to, not always identical with, what runs.
"""

from __future__ import annotations

import ast
import dis
import hashlib
import html
import inspect
import json
import os
import pickle
import re
import subprocess
import sys
import tempfile
import textwrap
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import BuiltinFunctionType, CodeType, FunctionType, ModuleType
from typing import Any, Mapping, Sequence

import numpy as np
from numba.core import types as nbtypes

from .backend import SIMULATED, cuda, is_kernel
from .cuda_c import check_arch, nvrtc_cubin
from .toolchain import run_tool

ARCH = "sm_90"

# ---- numba kernel -> PTX ------------------------------------------------------------------------------

PTX_OPTIONS = ("debug", "lineinfo", "fastmath", "opt", "launch_bounds")  # what compile_ptx takes
# jit options that do not change a kernel's PTX (linking, caching, launch-time settings, inlining of
# the kernel itself); accepted and ignored. ``max_registers`` becomes a ``.maxnreg`` directive.
NO_PTX_EFFECT = ("lto", "cache", "extensions", "shared_memory_carveout", "inline", "forceinline", "device", "link")
DEVICE_OPTIONS = ("device", "inline", "forceinline", "fastmath", "opt", "debug", "lineinfo")

_PTX_CACHE: dict[Any, str] = {}


class PtxCompileError(RuntimeError):
    """numba could not compile a kernel to PTX."""


def numba_ptx(kernel: Any, sig: Sequence[nbtypes.Type], *, cc: tuple[int, int] = (9, 0), **jit_options: Any) -> str:
    """PTX of a ``@cuda.jit`` kernel (or a plain Python function) for the argument types ``sig``.

    The kernel's own jit options (``fastmath``, ``launch_bounds``, ``max_registers``, ``lineinfo``, ``opt``,
    ``debug``) apply, overridden by ``jit_options``. ``max_registers`` is written into the PTX as
    ``.maxnreg`` (what ``--maxrregcount`` does when numba links on a GPU); ``launch_bounds`` gives
    ``.maxntid``/``.minnctapersm``. Results are cached on (source, globals, sig, cc, options).
    """
    fn = _py_func(kernel)
    sig = _check_sig(fn, sig)
    options = {**_jit_options(kernel), **jit_options}
    ptx_options, max_registers = _split_options(fn.__name__, options)
    if SIMULATED:
        job = {"kernel": _spec(fn, {}, set()), "sig": sig, "cc": tuple(cc), "options": ptx_options}
        key: Any = hashlib.sha256(pickle.dumps(job)).hexdigest()
        if key not in _PTX_CACHE:
            _PTX_CACHE[key] = _compile_in_subprocess(job, fn.__name__)
    elif _compiled_for(kernel, sig, cc, jit_options):  # already compiled for this GPU: reuse, don't recompile
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


def numba_types(kernel: Any, sig: Sequence[nbtypes.Type], *, cc: tuple[int, int] = (9, 0)) -> Typing:
    """Run numba's type inference on a kernel for ``sig`` (no GPU needed) and return its decisions."""
    fn = _py_func(kernel)
    sig = _check_sig(fn, sig)
    if not SIMULATED:  # numba's real compiler is in this process
        key: Any = (fn, sig, tuple(cc))
        if key not in _TYPES_CACHE:
            from numba.cuda.compiler import compile_cuda

            cres = compile_cuda(fn, nbtypes.void, sig, cc=tuple(cc))
            typemap = {k: str(v) for k, v in cres.type_annotation.typemap.items()}
            _TYPES_CACHE[key] = Typing(fn.__name__, typemap, str(cres.type_annotation))
        return _TYPES_CACHE[key]
    job = {"kernel": _spec(fn, {}, set()), "sig": sig, "cc": tuple(cc), "what": "types"}
    key = hashlib.sha256(pickle.dumps(job)).hexdigest()
    if key not in _TYPES_CACHE:
        out = json.loads(_compile_in_subprocess(job, fn.__name__))
        _TYPES_CACHE[key] = Typing(fn.__name__, out["typemap"], out["annotation"])
    return _TYPES_CACHE[key]


def _compiled_for(kernel: Any, sig: tuple, cc: tuple[int, int], jit_options: Mapping[str, Any]) -> bool:
    """Whether a real dispatcher already holds this signature, compiled for ``cc`` with these options."""
    if not (is_kernel(kernel) and hasattr(kernel, "inspect_asm") and tuple(sig) in getattr(kernel, "overloads", {})):
        return False
    own = getattr(kernel, "targetoptions", {})
    same_options = all(own.get(k) == v for k, v in jit_options.items())
    return same_options and tuple(cuda.get_current_device().compute_capability) == tuple(cc)


def _py_func(kernel: Any) -> FunctionType:
    """The Python function behind a kernel, a device function, or a plain function."""
    fn = (getattr(kernel, "py_func", None) or getattr(kernel, "fn", None)) if is_kernel(kernel) else kernel
    if not isinstance(fn, FunctionType):
        raise TypeError(f"expected a @cuda.jit kernel or a Python function, got {type(kernel).__name__}; "
                        "define the kernel with `@cuda.jit` (from util import cuda) and pass it as it is")
    return fn


def _check_sig(fn: FunctionType, sig: Any) -> tuple[nbtypes.Type, ...]:
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


def _jit_options(kernel: Any) -> dict[str, Any]:
    """The jit options a kernel (or device function) was declared with."""
    if not is_kernel(kernel):
        return {}
    if hasattr(kernel, "targetoptions"):  # a real dispatcher
        return {k: v for k, v in kernel.targetoptions.items() if v is not None}
    options: dict[str, Any] = {"device": kernel._device, "fastmath": kernel._fastmath}
    if hasattr(kernel, "jit_options"):  # kept by util.backend's simulator jit
        return {**options, **{k: v for k, v in kernel.jit_options.items() if v is not None}}
    # a kernel made by numba's own simulator jit keeps only device/fastmath: read the decorator in the source
    fn = _py_func(kernel)
    node, _ = _parse_def(fn)
    namespace = {**fn.__globals__, **_closure(fn)}
    for dec in node.decorator_list:
        callee = dec.func if isinstance(dec, ast.Call) else None
        name = callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", None)
        if isinstance(dec, ast.Call) and name == "jit":
            for kw in dec.keywords:
                if kw.arg is not None:
                    expr = compile(ast.Expression(kw.value), fn.__code__.co_filename, "eval")
                    options[kw.arg] = eval(expr, namespace)
    return options


def _split_options(name: str, options: Mapping[str, Any]) -> tuple[dict[str, Any], int | None]:
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


# -- shipping a kernel to a compiler subprocess (the simulator replaces numba's compiler in this process) --

def _parse_def(fn: FunctionType) -> tuple[ast.FunctionDef, str]:
    """The ``def`` node of ``fn`` and its source without decorators, padded to keep its line numbers."""
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as e:
        raise ValueError(f"cannot read the source of {fn.__qualname__} ({e}); define it in a .py file or a "
                         "notebook cell (functions made by exec() of a string have no source)") from None
    text = textwrap.dedent("".join(lines))
    node = ast.parse(text).body[0]
    if not isinstance(node, ast.FunctionDef):
        raise TypeError(f"{fn.__qualname__} must be defined with `def` (not lambda or async def)")
    body = "".join(text.splitlines(True)[node.lineno - 1:])
    return node, "\n" * (first + node.lineno - 2) + body


def _closure(fn: FunctionType) -> dict[str, Any]:
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    try:
        return {name: cell.cell_contents for name, cell in cells.items()}
    except ValueError:
        raise ValueError(f"{fn.__qualname__} uses a variable of its enclosing function that is not set yet") from None


def _global_names(code: CodeType) -> set[str]:
    names = {ins.argval for ins in dis.get_instructions(code) if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    for const in code.co_consts:
        if isinstance(const, CodeType):
            names |= _global_names(const)
    return names


def _is_constant(value: Any) -> bool:
    """Values numba freezes into the code as constants, and that pickle."""
    if isinstance(value, tuple):
        return all(_is_constant(v) for v in value)
    if isinstance(value, type):
        return issubclass(value, np.generic)
    return isinstance(value, (bool, int, float, complex, str, type(None), np.generic, np.ndarray, np.dtype,
                              nbtypes.Type))


def _importable(value: Any) -> bool:
    """A builtin function, numpy ufunc or util helper (util.intrinsics) that the subprocess can import by
    module and name."""
    module_name = getattr(value, "__module__", None) or ""
    module = sys.modules.get(module_name)
    return ((isinstance(value, (BuiltinFunctionType, np.ufunc)) or module_name.split(".")[0] == "util")
            and getattr(module, getattr(value, "__name__", ""), None) is value)


def _spec(fn: FunctionType, options: dict[str, Any], active: set[int]) -> dict[str, Any]:
    """A picklable description of ``fn``: its source, its globals and closure values, and jit options."""
    if id(fn) in active:
        raise ValueError(f"{fn.__qualname__} is recursive: numba_ptx cannot ship recursive device functions")
    active = active | {id(fn)}
    _, source = _parse_def(fn)
    values = _closure(fn)
    values.update({n: fn.__globals__[n] for n in sorted(_global_names(fn.__code__)) if n in fn.__globals__})
    shipped: dict[str, tuple[str, Any]] = {}
    for name, value in values.items():
        if isinstance(value, ModuleType):
            shipped[name] = ("module", value.__name__)
        elif is_kernel(value):
            opts = _jit_options(value)
            if not opts.get("device"):
                raise TypeError(f"{fn.__qualname__} calls the kernel {name}; a kernel can only call device "
                                f"functions: declare it with @cuda.jit(device=True)")
            dev_opts = {k: v for k, v in opts.items() if k in DEVICE_OPTIONS}
            shipped[name] = ("device", _spec(_py_func(value), dev_opts, active))
        elif _is_constant(value):
            shipped[name] = ("value", value)
        elif _importable(value):  # `from math import sqrt`
            shipped[name] = ("attr", (value.__module__, value.__name__))
        else:
            raise TypeError(
                f"numba_ptx cannot send the global {name!r} ({type(value).__name__}) used by {fn.__qualname__} "
                "to the compiler subprocess, which can rebuild modules, numba types, numbers, strings, numpy "
                "scalars/dtypes/arrays, tuples of these, builtin functions and numpy ufuncs, and "
                f"@cuda.jit(device=True) functions: make {name!r} one of these, or pass it to the kernel as an "
                "argument.")
    return {"name": fn.__name__, "module": fn.__module__, "filename": fn.__code__.co_filename,
            "source": source, "options": options, "globals": shipped}


# Rebuilding a shipped function (see _spec) in a compiler child process; shared by util.mlir's child.
_REBUILD = r'''
def remember(filename, source):
    """Put the function's lines into linecache so the compiler's error messages can quote them."""
    lines = list(linecache.cache.get(filename, (0, None, [], filename))[2])
    new = source.splitlines(True)
    lines += ["\n"] * (len(new) - len(lines))
    for i, line in enumerate(new):
        if line.strip():
            lines[i] = line
    linecache.cache[filename] = (0, None, lines, filename)


def build(spec):
    """The function a _spec describes, rebuilt with this process's compiler. The child defines the hooks:
    MODULES (module aliases), device_jit(options), attr(module, name) and typ(expr)."""
    ns = {"__name__": spec["module"]}
    for name, (kind, value) in spec["globals"].items():
        if kind == "module":
            ns[name] = MODULES.get(value) or importlib.import_module(value)
        elif kind == "device":
            ns[name] = device_jit(value["options"])(build(value))
        elif kind == "attr":
            ns[name] = attr(*value)
        elif kind == "type":
            ns[name] = typ(value)
        else:
            ns[name] = value
    remember(spec["filename"], spec["source"])
    exec(compile(spec["source"], spec["filename"], "exec"), ns)
    return ns[spec["name"]]
'''

_CHILD = r'''
import importlib, json, linecache, pickle, sys, types
from numba import cuda
import numba.cuda.dispatcher

job = pickle.load(sys.stdin.buffer)
# numba compiles a called device function for the current GPU; there is none here: use the target's cc
numba.cuda.dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=job["cc"])


MODULES = {}


def device_jit(options):
    return cuda.jit(**options)


def attr(module, name):
    return getattr(importlib.import_module(module), name)


''' + _REBUILD + r'''

try:
    if job.get("what") == "types":
        from numba.cuda.compiler import compile_cuda
        from numba.core import types as nbt
        cres = compile_cuda(build(job["kernel"]), nbt.void, job["sig"], cc=job["cc"])
        typemap = {k: str(v) for k, v in cres.type_annotation.typemap.items()}
        sys.stdout.write(json.dumps({"typemap": typemap, "annotation": str(cres.type_annotation)}))
    else:
        ptx, _ = cuda.compile_ptx(build(job["kernel"]), job["sig"], cc=job["cc"], **job["options"])
        sys.stdout.write(ptx)
except Exception as e:
    sys.stderr.write(f"{type(e).__name__}: {e}")
    sys.exit(1)
'''


def _compile_in_subprocess(job: dict[str, Any], name: str) -> str:
    """Run numba's real compiler in a fresh Python without the simulator."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    proc = subprocess.run([sys.executable, "-c", _CHILD], input=pickle.dumps(job), capture_output=True,
                          env=env, check=False)
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip()
        raise PtxCompileError(f"numba could not compile {name} for {job['sig']}:\n{err[-4000:]}")
    return proc.stdout.decode()


# ---- PTX instruction counts ---------------------------------------------------------------------------

_PTX_OP = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][\w.]*)[\s;]", re.M)


def ptx_op_counts(ptx: str) -> Counter[str]:
    """How many times each PTX instruction (``fma.rn.f32``, ``ld.global.f32``, ``cvt.f64.f32`` ...) appears."""
    if not isinstance(ptx, str):
        raise TypeError(f"expected PTX text (str), got {type(ptx).__name__}")
    return Counter(_PTX_OP.findall(ptx))


def f64_ops(ptx: str) -> Counter[str]:
    """The float64 instructions of ``ptx`` (a ``tmp = 0`` accumulator makes numba compute in float64)."""
    return Counter({op: n for op, n in ptx_op_counts(ptx).items() if "f64" in op.split(".")})


# ---- compiling to a cubin -----------------------------------------------------------------------------

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


# ---- SASS analysis ------------------------------------------------------------------------------------

# integer ALU work: index arithmetic, comparisons, selects (SEL is how numba's negative-index wrap shows up)
_INT_OPS = {"IMAD", "IADD3", "IADD", "IADD32I", "VIADD", "VIADDMNMX", "LEA", "SHF", "SHL", "SHR", "LOP3", "LOP",
            "LOP32I", "ISETP", "IMNMX", "VIMNMX", "IABS", "IMUL", "IMUL32I", "IDP", "POPC", "FLO", "BREV", "BMSK",
            "SGXT", "ISCADD", "SEL", "PRMT"}
_FP32_OPS = {"FADD", "FADD32I", "FMUL", "FMUL32I", "FMNMX", "FSETP", "FSET", "FSEL", "MUFU", "FCHK", "FSWZADD"}
_F64_OPS = {"DFMA", "DADD", "DMUL", "DSETP", "DSET", "DMNMX"}
_CONVERSIONS = {"F2F", "F2I", "I2F", "I2I", "F2FP", "I2FP", "FRND", "F2IP", "I2IP"}
_BRANCHES = {"BRA", "BRX", "JMP", "JMX", "CALL", "RET", "EXIT", "BSSY", "BSYNC", "BREAK", "WARPSYNC"}
_MEMORY = {"LDG", "STG", "LDS", "STS", "LDL", "STL"}
_WIDTHS = {"128": 128, "64": 64, "U16": 16, "S16": 16, "U8": 8, "S8": 8}

_INSTR = re.compile(r"^\s*/\*([0-9a-fA-F]+)\*/\s+(.*?)\s*;")
_FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)")
_RESOURCES = re.compile(r"^\s*Function\s+(\S+):\s*\n\s*(.*)$", re.M)


def category(opcode: str) -> str:
    """The instruction-mix bucket of a SASS opcode (``LDG.E.128`` -> ``LDG.128``, ``IMAD.WIDE`` -> ``int``)."""
    parts = opcode.split(".")
    base = parts[0]
    if base in _MEMORY:
        width = next((_WIDTHS[p] for p in parts[1:] if p in _WIDTHS), 32)
        return f"{base}.{width}"
    if base.startswith("FFMA"):
        return "FFMA"
    if base in _FP32_OPS:
        return "fp32 other"
    if base in _F64_OPS:
        return "f64"
    if base in _INT_OPS or (base.startswith("U") and base[1:] in _INT_OPS):  # U*: the uniform datapath
        return "int"
    if base in _CONVERSIONS:
        return "conversion"
    if base in _BRANCHES:
        return "branch"
    return "other"


@dataclass(frozen=True)
class Instruction:
    """One SASS instruction: its address, its opcode with modifiers, and its text."""

    address: int
    opcode: str
    text: str  # as cuobjdump prints it, predicate included

    @property
    def branch_target(self) -> int | None:
        """The address a direct branch (BRA) jumps to."""
        if self.opcode.split(".")[0] != "BRA":
            return None
        targets = re.findall(r"0x([0-9a-fA-F]+)", self.text.split(self.opcode, 1)[1])
        return int(targets[-1], 16) if targets else None


def _operands(text: str, opcode: str) -> tuple[str, str | None, set[str]]:
    """(opcode, destination register, source registers) of one SASS instruction, e.g.
    ``FFMA R26, R22, R21, R11`` -> ("FFMA", "R26", {"R22", "R21", "R11"})."""
    args = text.split(opcode, 1)[1] if opcode in text else ""
    regs = re.findall(r"(?<![\w.])R\d+", args)
    return opcode, (regs[0] if regs else None), set(regs[1:])


def parse_sass(text: str) -> list[Instruction]:
    """The instructions of one function's SASS in cuobjdump's format (``/*0270*/  LDG.E R19, [...] ;``)."""
    out = []
    for line in text.splitlines():
        m = _INSTR.match(line)
        if m:
            body = m.group(2)
            tokens = body.split()
            opcode = tokens[1] if tokens[0].startswith("@") else tokens[0]
            out.append(Instruction(int(m.group(1), 16), opcode, body))
    return out


@dataclass
class HotLoop:
    """A kernel's hot loop (see ``hot_loop``): its SASS and instruction mix (static counts of one pass)."""

    start: int  # address of the loop head (the backward branch's target)
    end: int  # address of the backward branch
    instructions: list[Instruction] = field(repr=False)
    ffma_per_iteration: int = 1  # FFMA per iteration of the source loop, to turn FFMA into an unroll factor

    @property
    def lines(self) -> list[str]:
        return [f"/*{i.address:04x}*/ {i.text}" for i in self.instructions]

    @property
    def opcodes(self) -> Counter[str]:
        return Counter(i.opcode for i in self.instructions)

    @property
    def mix(self) -> Counter[str]:
        """Instructions by category: FFMA, fp32 other, f64, LDG.32/LDG.128/..., LDS.*, STS.*, LDL.*, STL.*,
        int, conversion, branch, other."""
        return Counter(category(i.opcode) for i in self.instructions)

    def count(self, prefix: str) -> int:
        """Instructions whose category starts with ``prefix`` (``"LDG"`` counts every width)."""
        return sum(n for cat, n in self.mix.items() if cat.startswith(prefix))

    @property
    def size(self) -> int:
        return len(self.instructions)

    @property
    def ffma(self) -> int:
        return self.count("FFMA")

    @property
    def instr_per_ffma(self) -> float:
        return self.size / self.ffma if self.ffma else float("inf")

    @property
    def unroll(self) -> float:
        """FFMA in the loop / FFMA per source iteration: how many iterations one pass does."""
        return self.ffma / self.ffma_per_iteration

    @property
    def vector_load_share(self) -> float:
        """Share of the global and shared loads that are wider than 32 bits."""
        loads = [c for i in self.instructions if (c := category(i.opcode)).startswith(("LDG.", "LDS."))]
        return sum(int(c.split(".")[1]) > 32 for c in loads) / len(loads) if loads else 0.0

    @property
    def load_to_use(self) -> float:
        """Mean number of instructions between a global load (LDG) and the first FFMA that reads its register,
        following the loop around (a load for the next trip counts to its use there). Larger means more of the
        load's latency is covered by other work: the compiler issued it earlier."""
        ops = [_operands(i.text, i.opcode) for i in self.instructions]
        n, gaps = len(ops), []
        for p, (op, dst, _) in enumerate(ops):
            if not op.startswith("LDG") or dst is None:
                continue
            for d in range(1, n + 1):
                op2, dst2, srcs2 = ops[(p + d) % n]
                if op2.startswith("FFMA") and dst in srcs2:
                    gaps.append(d)
                    break
                if dst2 == dst:  # overwritten before any FFMA read it
                    break
        return sum(gaps) / len(gaps) if gaps else float("nan")

    def __str__(self) -> str:
        mix = ", ".join(f"{cat} {n}" for cat, n in self.mix.most_common())
        return (f"loop {self.start:#06x}-{self.end:#06x}: {self.size} instructions, {self.ffma} FFMA "
                f"({self.instr_per_ffma:.1f} instr/FFMA, unroll {self.unroll:g}); {mix}")


def find_loops(instructions: Sequence[Instruction]) -> list[tuple[int, int]]:
    """(head, backward-branch) address ranges of the loops: a branch to an earlier address closes a loop."""
    ends: dict[int, int] = {}
    for ins in instructions:
        target = ins.branch_target
        if target is not None and target < ins.address:
            ends[target] = max(ends.get(target, 0), ins.address)
    return sorted(ends.items())


def hot_loop(instructions: Sequence[Instruction], ffma_per_iteration: int = 1) -> HotLoop | None:
    """The loop whose own body (loops nested in it not counted) has the most FFMA, innermost on ties
    (then most DFMA); None without a loop. The body is the address range head..backward branch."""
    loops = find_loops(instructions)
    if not loops:
        return None

    def body(lo: int, hi: int) -> list[Instruction]:
        return [i for i in instructions if lo <= i.address <= hi]

    def own(lo: int, hi: int) -> list[Instruction]:
        inner = [(a, b) for a, b in loops if lo <= a and b <= hi and (a, b) != (lo, hi)]
        return [i for i in body(lo, hi) if not any(a <= i.address <= b for a, b in inner)]

    def rank(loop: tuple[int, int]) -> tuple[int, int, int]:
        cats = Counter(category(i.opcode) for i in own(*loop))
        return cats["FFMA"], cats["f64"], -(loop[1] - loop[0])

    lo, hi = max(loops, key=rank)
    return HotLoop(lo, hi, body(lo, hi), ffma_per_iteration)


@dataclass
class KernelReport:
    """Resources and hot loop of one kernel in a cubin (``analyze``)."""

    name: str  # short name: "variant8" for numba's _ZN8__main__8variant8B2v1..., "sgemm_coalesce"
    symbol: str  # the full symbol in the cubin
    arch: str
    registers: int
    stack_bytes: int  # per-thread stack frame: register spills and local arrays (STL/LDL go here)
    local_bytes: int  # other local memory per thread
    shared_bytes: int  # static shared memory per block
    sass: str = field(repr=False)  # the kernel's SASS, one instruction per line
    instructions: list[Instruction] = field(repr=False)
    hot_loop: HotLoop | None = None

    @property
    def local_loads(self) -> int:
        return sum(i.opcode.startswith("LDL") for i in self.instructions)

    @property
    def local_stores(self) -> int:
        return sum(i.opcode.startswith("STL") for i in self.instructions)

    @property
    def spills(self) -> str:
        """``"none"`` or ``"48 B (16 STL, 14 LDL)"``: local memory per thread and the instructions using it."""
        if not (self.stack_bytes or self.local_bytes or self.local_stores or self.local_loads):
            return "none"
        return f"{self.stack_bytes + self.local_bytes} B ({self.local_stores} STL, {self.local_loads} LDL)"

    def __str__(self) -> str:
        head = (f"{self.name} [{self.arch}]: {self.registers} registers, spills/local memory: {self.spills}, "
                f"{self.shared_bytes} B shared")
        return f"{head}\n  {self.hot_loop if self.hot_loop else 'no loop'}"


def short_name(symbol: str) -> str:
    """The function's own name in an Itanium-mangled symbol (numba's or C++'s); other names unchanged."""
    if not symbol.startswith("_Z"):
        return symbol
    if symbol[2:3] != "N":  # _Z<len><name><argument types>: a top-level name (numba-cuda-mlir, C++)
        m = re.match(r"_Z(\d+)", symbol)
        return symbol[m.end():m.end() + int(m.group(1))] if m else symbol
    s, i, last = symbol, 3, None
    while i < len(s) and s[i] in "0123456789B":
        tag = s[i] == "B"  # an ABI tag (B<len><name>) follows the name it decorates
        j = i + tag
        k = j
        while k < len(s) and s[k].isdigit():
            k += 1
        if k == j:
            break
        n = int(s[j:k])
        if not tag:
            last = s[k:k + n]
        i = k + n
    return last or symbol


def _cuobjdump(cubin: bytes) -> str:
    if not isinstance(cubin, (bytes, bytearray)) or not bytes(cubin[:4]) == b"\x7fELF":
        hint = " (that looks like PTX: pass cubin_from_ptx(ptx))" if isinstance(cubin, str) else ""
        raise TypeError(f"expected a cubin (ELF bytes from cubin_from_ptx or cuda_c_cubin){hint}, "
                        f"got {type(cubin).__name__}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "kernel.cubin")
        path.write_bytes(bytes(cubin))
        return run_tool("cuobjdump", "-res-usage", "-sass", path)


def _functions_sass(dump: str) -> dict[str, str]:
    """Function symbol -> its SASS (encodings dropped), from cuobjdump -sass output."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in dump.splitlines():
        m = _FUNCTION.match(line)
        if m:
            current = out.setdefault(m.group(1), [])
        elif current is not None and _INSTR.match(line):
            current.append(re.sub(r"\s*/\* 0x[0-9a-f]+ \*/\s*$", "", line).rstrip())
    return {name: "\n".join(lines) for name, lines in out.items()}


def analyze(cubin: bytes, kernel: str | None = None, *, ffma_per_iteration: int = 1) -> KernelReport:
    """Registers, stack/local/shared bytes, SASS and hot loop of ``kernel`` (its short or full name; may be
    left out when the cubin has one function). ``ffma_per_iteration``: FFMA one source-loop iteration does
    (1 for ``tmp += a[x, i] * b[i, y]``), so that ``hot_loop.unroll`` counts iterations per pass."""
    if isinstance(ffma_per_iteration, bool) or not isinstance(ffma_per_iteration, int) or ffma_per_iteration < 1:
        raise ValueError(f"ffma_per_iteration must be a positive int, got {ffma_per_iteration!r}")
    dump = _cuobjdump(cubin)
    sass = _functions_sass(dump)
    arch = m.group(1) if (m := re.search(r"code for (sm_\w+)", dump)) else "unknown"
    if kernel is None:
        if len(sass) != 1:
            raise ValueError(f"the cubin has {len(sass)} functions {[short_name(s) for s in sass]}: pass kernel=")
        symbol = next(iter(sass))
    else:
        matches = [s for s in sass if s == kernel] or [s for s in sass if short_name(s) == kernel]
        if len(matches) != 1:
            why = "no function" if not matches else "several functions"
            raise ValueError(f"{why} named {kernel!r} in the cubin; it has {[short_name(s) for s in sass]}")
        symbol = matches[0]
    resources = {name: dict(re.findall(r"(\w+):(\d+)", values)) for name, values in _RESOURCES.findall(dump)}
    res = resources.get(symbol, {})
    instructions = parse_sass(sass[symbol])
    return KernelReport(short_name(symbol), symbol, arch, int(res.get("REG", 0)), int(res.get("STACK", 0)),
                        int(res.get("LOCAL", 0)), int(res.get("SHARED", 0)), sass[symbol], instructions,
                        hot_loop(instructions, ffma_per_iteration))


# ---- comparison table and occupancy -------------------------------------------------------------------

def _loop_cells(loop: HotLoop | None) -> dict[str, Any]:
    if loop is None:
        return dict.fromkeys(("hot-loop instr", "FFMA", "instr/FFMA", "unroll", "LDG", "LDS", "int arith",
                              "conversions", "branches", "f64", "LDL/STL"), "—")
    return {"hot-loop instr": loop.size, "FFMA": loop.ffma,
            "instr/FFMA": f"{loop.instr_per_ffma:.1f}" if loop.ffma else "—", "unroll": f"{loop.unroll:g}",
            "LDG": _widths(loop, "LDG"), "LDS": _widths(loop, "LDS"), "int arith": loop.count("int"),
            "conversions": loop.count("conversion"), "branches": loop.count("branch"), "f64": loop.count("f64"),
            "LDL/STL": loop.count("LDL") + loop.count("STL")}


def _widths(loop: HotLoop, kind: str) -> str:
    """``"16"`` or ``"4 (4×128-bit)"``: the count, with the vector widths when not all 32-bit."""
    by_width = {int(c.split(".")[1]): n for c, n in loop.mix.items() if c.startswith(kind + ".")}
    total = sum(by_width.values())
    wide = [f"{n}×{w}-bit" for w, n in sorted(by_width.items(), reverse=True) if w != 32]
    return f"{total} ({', '.join(wide)})" if wide else str(total)


@dataclass(repr=False)
class SassTable:
    """Kernels' static SASS numbers, one row each; prints as markdown, shows as HTML in a notebook."""

    reports: dict[str, KernelReport]

    def rows(self) -> list[dict[str, Any]]:
        return [{"kernel": label, "registers": r.registers, "spills": r.spills,
                 **_loop_cells(r.hot_loop)} for label, r in self.reports.items()]

    def caption(self) -> str:
        arches = sorted({r.arch for r in self.reports.values()})
        return (f"Static SASS analysis ({', '.join(arches)}; ptxas/NVRTC, no GPU run): hot loop = the loop "
                "with the most FFMA; counts are instructions in one pass of it")

    def markdown(self) -> str:
        rows = self.rows()
        cols = list(rows[0]) if rows else []
        out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        return "\n".join(out + ["| " + " | ".join(str(row[c]) for c in cols) + " |" for row in rows])

    def __str__(self) -> str:
        return self.caption() + "\n" + self.markdown()

    __repr__ = __str__

    def _repr_html_(self) -> str:
        rows = self.rows()
        cols = list(rows[0]) if rows else []
        head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(str(row[c]))}</td>" for c in cols) + "</tr>"
                       for row in rows)
        return (f"<p><b>{html.escape(self.caption())}</b></p>"
                f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


def side_by_side(reports: Mapping[str, KernelReport]) -> SassTable:
    """One table comparing kernels: registers, spills, and the hot loop's size and instruction mix."""
    if not isinstance(reports, Mapping) or not all(isinstance(r, KernelReport) for r in reports.values()):
        raise TypeError("side_by_side takes a dict {label: analyze(cubin)}")
    return SassTable(dict(reports))


# sm_90 (H100/H200) limits, as in CUDA's cuda_occupancy.h
SM90_REGS_PER_SM = 65536
SM90_REG_ALLOC_UNIT = 256  # registers are given to a warp in blocks of 256
SM90_SUB_PARTITIONS = 4
SM90_MAX_REGS_PER_THREAD = 255
SM90_MAX_THREADS_PER_SM = 2048
SM90_MAX_THREADS_PER_BLOCK = 1024
SM90_MAX_BLOCKS_PER_SM = 32
SM90_SHARED_PER_SM = 228 * 1024
SM90_SHARED_PER_BLOCK = 227 * 1024  # with opt-in; 48 KB without
SM90_SHARED_RESERVED_PER_BLOCK = 1024  # taken by the driver from every block
SM90_SHARED_ALLOC_UNIT = 128


def max_blocks_per_sm(registers: int, threads_per_block: int, shared_bytes: int = 0) -> int:
    """How many blocks of a kernel fit on one sm_90 SM at once: the least of three limits.

    - threads: 2048 per SM (64 warps), at most 32 blocks; a block takes ceil(threads / 32) warps.
    - registers: a warp gets ``registers * 32`` rounded up to 256; each of the 4 SM sub-partitions has
      65536 / 4 registers, so an SM holds 4 * floor(16384 / regs_per_warp) warps; blocks = that // warps.
    - shared memory: a block takes its shared bytes + 1 KB reserved, rounded up to 128 B, of 228 KB per SM
      (at most 227 KB per block, above 48 KB only with opt-in).
    0 when one block does not fit (over 255 registers, 1024 threads or 227 KB of shared memory).
    """
    for name, v in (("registers", registers), ("threads_per_block", threads_per_block), ("shared_bytes", shared_bytes)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise ValueError(f"{name} must be a non-negative int, got {v!r}")
    if threads_per_block == 0:
        raise ValueError("threads_per_block must be at least 1")
    if (registers > SM90_MAX_REGS_PER_THREAD or threads_per_block > SM90_MAX_THREADS_PER_BLOCK
            or shared_bytes > SM90_SHARED_PER_BLOCK):
        return 0
    warps = -(-threads_per_block // 32)
    by_threads = min(SM90_MAX_THREADS_PER_SM // 32 // warps, SM90_MAX_BLOCKS_PER_SM)
    regs_per_warp = -(-registers * 32 // SM90_REG_ALLOC_UNIT) * SM90_REG_ALLOC_UNIT
    if regs_per_warp * -(-warps // SM90_SUB_PARTITIONS) * SM90_SUB_PARTITIONS > SM90_REGS_PER_SM:
        return 0  # the hardware's per-block register check
    by_regs = (SM90_REGS_PER_SM // SM90_SUB_PARTITIONS // regs_per_warp * SM90_SUB_PARTITIONS // warps
               if regs_per_warp else by_threads)
    units = -(-(shared_bytes + SM90_SHARED_RESERVED_PER_BLOCK) // SM90_SHARED_ALLOC_UNIT)
    by_shared = SM90_SHARED_PER_SM // (units * SM90_SHARED_ALLOC_UNIT)
    return min(by_threads, by_regs, by_shared)
