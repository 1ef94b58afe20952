"""What util.doctor judges from: a kernel's source, its PTX and SASS with source lines, and numba's typing.

``gather(kernel, sig, arch, block)`` compiles the kernel once (``numba_ptx(..., lineinfo=True)``, then ptxas with
``-lineinfo`` so that every SASS instruction carries its Python line) and returns ``Facts``:

- the source: the kernel's ``def`` as an AST with the file's line numbers, its loops, its array accesses, the
  device functions it calls, and for each index expression how it moves with ``cuda.threadIdx.x`` (``TxFlow``);
- the PTX: instructions with lines, loops, numba's negative-index checks (``WrapCheck``), which parameter
  register is which array's shape or stride;
- the SASS: ``util.sass.analyze`` (registers, spills, instructions), each instruction's source line, and the hot
  loop (``MachineLoop``);
- numba's typing (``Facts.typing``), compiled only when a check asks for it (a second child compile).

Bad input raises ``DoctorError`` with a message that says what to do.
"""

from __future__ import annotations

import ast
import operator
import re
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from pathlib import Path
from types import FunctionType
from typing import Any

from numba.core import types as nbtypes

from .backend import is_kernel
from .compile import PtxCompileError, numba_ptx, numba_types
from .ptx import PtxInstruction, PtxKernel, ptx_kernels
from .sass import Instruction, KernelReport, analyze, category, find_loops, line_table
from .ship import closure_values, jit_options, parse_def, py_func
from .toolchain import ToolchainError, run_tool

SIG_FORM = ('numba\'s string form: the argument types in parentheses, e.g. "(float32[:, ::1], float32[:, ::1], '
            'float32[:, ::1], int64)" (C-contiguous 2-D float32 arrays and a Python int), "(float32[::1], int32)", '
            'or "void(float64[:], float64)"; or a tuple of numba types')


class DoctorError(ValueError):
    """The doctor cannot judge this input; the message says why and what to do."""


# ---- input -----------------------------------------------------------------------------------------------

def kernel_function(kernel: Any) -> FunctionType:
    """The Python function of a ``@cuda.jit`` kernel; DoctorError for anything else (device functions too)."""
    if not is_kernel(kernel):
        what = "a plain Python function" if isinstance(kernel, FunctionType) else type(kernel).__name__
        raise DoctorError(f"expected a @cuda.jit kernel, got {what}: decorate the function with @cuda.jit "
                          "(`from numba import cuda`, after `import util`) and pass the decorated kernel")
    fn = py_func(kernel)
    if jit_options(kernel).get("device"):
        raise DoctorError(f"{fn.__name__} is a device function (@cuda.jit(device=True)), not a kernel: the doctor "
                          "judges kernels; pass the kernel that calls it (its code is inlined there)")
    return fn


def parse_sig(sig: Any, fn: FunctionType) -> tuple[nbtypes.Type, ...]:
    """``sig`` (numba's string form or a tuple of numba types) as one numba type per parameter of ``fn``."""
    from numba.core import sigutils

    if isinstance(sig, str):
        text = sig.strip()
        text = "void" + text if text.startswith("(") else text
        try:
            args, _ = sigutils.normalize_signature(text)
        except Exception as e:  # numba evaluates the string: NameError, SyntaxError, TypeError ...
            raise DoctorError(f"cannot read the signature {sig!r} ({type(e).__name__}: {e}); write it in "
                              f"{SIG_FORM}") from None
    elif isinstance(sig, (tuple, list)) and all(isinstance(t, nbtypes.Type) for t in sig):
        args = tuple(sig)
    else:
        raise DoctorError(f"sig must be a string or a tuple of numba types, got {sig!r}; write it in {SIG_FORM}")
    params = list(fn.__code__.co_varnames[:fn.__code__.co_argcount])
    if len(args) != len(params):
        raise DoctorError(f"{fn.__name__}({', '.join(params)}) takes {len(params)} arguments but the signature "
                          f"has {len(args)} types; give one type per argument in {SIG_FORM}")
    return tuple(args)


def arch_cc(arch: str) -> tuple[int, int]:
    """``sm_90`` -> (9, 0); ``sm_100a`` -> (10, 0)."""
    m = re.fullmatch(r"sm_(\d+)(\d)a?", arch) if isinstance(arch, str) else None
    if not m:
        raise DoctorError(f"arch must name a GPU architecture such as 'sm_90' (H100/H200), got {arch!r}")
    return int(m.group(1)), int(m.group(2))


def trim_compiler_message(text: str, limit: int = 1200) -> str:
    """numba's error without the child's preamble and numba's boilerplate: the exception line and what follows
    it, up to ``limit`` characters."""
    lines = [line for line in text.splitlines() if line.strip()]
    start = next((i for i, line in enumerate(lines) if re.match(r"^\w*(Error|Exception)\b", line)), 0)
    kept = [line for line in lines[start:] if "numba.readthedocs" not in line and not line.startswith("For more")]
    out = "\n".join(kept)
    return out if len(out) <= limit else out[:limit] + " ..."


# ---- source ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Access:
    """An array subscript in the kernel's source (or in a device function it calls)."""

    array: str  # the array's name where it is subscripted
    indices: tuple[ast.expr, ...]
    line: int  # the line in the kernel whose code does it (a device function's call site)
    own_line: int  # the line of the subscript itself
    store: bool
    loops: tuple[int, ...]  # header lines of the kernel's loops around it, outermost first
    device: str | None = None  # the device function it is in


@dataclass(frozen=True)
class SourceLoop:
    """A ``for`` or ``while`` loop of the kernel's source."""

    line: int  # header line
    end: int  # last line of the body
    node: ast.For | ast.While

    @property
    def is_range(self) -> bool:
        it = getattr(self.node, "iter", None)
        return isinstance(it, ast.Call) and _name_of(it.func) == "range"


def loop_kind(loop: SourceLoop | None) -> str:
    """``for ... in range()``, ``while``, ``for`` or ``unknown`` (no source loop matched)."""
    if loop is None:
        return "unknown"
    return "for ... in range()" if loop.is_range else "while" if isinstance(loop.node, ast.While) else "for"


def _name_of(node: ast.AST) -> str:
    """``cuda.threadIdx.x`` -> "cuda.threadIdx.x"; "" for anything that is not a dotted name."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _name_of(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


class Source:
    """The kernel's ``def`` as an AST with the file's line numbers, and the device functions it calls."""

    def __init__(self, fn: FunctionType):
        self.fn = fn
        self.filename = fn.__code__.co_filename
        self.tree = _parsed(fn)
        self.first, self.last = self.tree.lineno, self.tree.end_lineno or self.tree.lineno
        _, padded = parse_def(fn)
        self.text = {i + 1: line for i, line in enumerate(padded.splitlines()) if line.strip()}
        self.namespace = {**fn.__globals__, **closure_values(fn)}
        self.params = [a.arg for a in self.tree.args.args]
        self.loops = [SourceLoop(n.lineno, n.end_lineno or n.lineno, n) for n in ast.walk(self.tree)
                      if isinstance(n, (ast.For, ast.While))]
        self.devices = self._device_functions()
        self.accesses = self._accesses()

    def line(self, number: int) -> str:
        """The source text of a line of the kernel (or of a device function it calls), stripped."""
        if number in self.text:
            return self.text[number].strip()
        for dev in self.devices.values():
            if number in dev.text:
                return dev.text[number].strip()
        return ""

    def constant(self, name: str) -> int | float | None:
        """The value of a global or closure variable that numba freezes into the kernel as a number."""
        value = self.namespace.get(name)
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    def loops_around(self, line: int) -> list[SourceLoop]:
        """The kernel's loops whose body holds ``line``, outermost first."""
        return sorted((lp for lp in self.loops if lp.line <= line <= lp.end), key=lambda lp: lp.line)

    def innermost_loop(self, line: int) -> SourceLoop | None:
        around = self.loops_around(line)
        return around[-1] if around else None

    def call_lines(self, device: str) -> list[int]:
        """Lines of the kernel that call the device function ``device`` (by the name it has here)."""
        return sorted({n.lineno for n in ast.walk(self.tree)
                       if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == device})

    def _device_functions(self) -> dict[str, Source]:
        """Name -> Source of every device function the kernel calls directly (their own calls are not followed:
        their lines reach the kernel's line table through the call site)."""
        out: dict[str, Source] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                value = self.namespace.get(node.func.id)
                if is_kernel(value) and jit_options(value).get("device") and node.func.id not in out:
                    try:
                        out[node.func.id] = Source(py_func(value))
                    except (ValueError, TypeError, OSError, SyntaxError):
                        continue  # no source to read: its accesses are not judged
        return out

    def _accesses(self) -> list[Access]:
        out = []
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
                out.append(self._access(node, node.lineno, None))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self.devices:
                dev = self.devices[node.func.id]
                params = dict(zip(dev.params, node.args))
                for sub in ast.walk(dev.tree):
                    if isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Name):
                        arg = params.get(sub.value.id)
                        if isinstance(arg, ast.Name):  # the device function's array parameter -> the kernel's
                            renamed = ast.Subscript(ast.Name(arg.id, ast.Load()), sub.slice, sub.ctx)
                            ast.copy_location(renamed, sub)
                            out.append(self._access(renamed, node.lineno, node.func.id))
        return out

    def _access(self, node: ast.Subscript, line: int, device: str | None) -> Access:
        indices = tuple(node.slice.elts) if isinstance(node.slice, ast.Tuple) else (node.slice,)
        loops = tuple(lp.line for lp in self.loops_around(line))
        return Access(node.value.id, indices, line, node.lineno, isinstance(node.ctx, ast.Store), loops, device)


def _parsed(fn: FunctionType) -> ast.FunctionDef:
    """The ``def`` of ``fn`` parsed with the line numbers it has in its file (DoctorError without source)."""
    try:
        _, padded = parse_def(fn)
    except (ValueError, TypeError) as e:
        raise DoctorError(str(e)) from None
    node = ast.parse(padded).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


# ---- how indices move with threadIdx.x --------------------------------------------------------------------

UNIFORM = Fraction(0)
ROW = "row"  # a multiple of a run-time value (x * n): consecutive threads a row apart
Coef = Fraction | str | None  # d(index)/d(threadIdx.x): a number, ROW, or None (unknown)

_TX = ("threadIdx.x", "laneid")
_UNIFORM_ATTRS = ("threadIdx.y", "threadIdx.z", "blockIdx.x", "blockIdx.y", "blockIdx.z", "blockDim.x",
                  "blockDim.y", "blockDim.z", "gridDim.x", "gridDim.y", "gridDim.z", "warpsize")
_CASTS = ("int32", "int64", "uint32", "uint64", "intp", "uintp", "int16", "uint16", "int8", "uint8", "int",
          "nonneg")


class TxFlow:
    """How much each variable of the kernel changes from one thread to the next along ``threadIdx.x``.

    A flow-insensitive fixed point over the kernel's assignments: ``cuda.threadIdx.x`` and the x of
    ``cuda.grid(...)`` move by 1, block indices, sizes, parameters and constants by 0; ``+``, ``-``, ``*`` by a
    constant, ``//`` and ``%`` by a multiple of 32 and integer casts are followed; a product with a run-time value
    is ``ROW`` (a row apart); a variable assigned two different ways, or anything else, is unknown (None), and an
    unknown index is never called uncoalesced.
    """

    def __init__(self, source: Source):
        self.source = source
        self.env: dict[str, Any] = {p: UNIFORM for p in source.params}
        self.constants: dict[str, float] = {}
        assigns = [n for n in ast.walk(source.tree) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign,
                                                                       ast.For))]
        counts = Counter(t.id for n in assigns for target in (n.targets if isinstance(n, ast.Assign) else [n.target])
                         for t in ast.walk(target) if isinstance(t, ast.Name))
        self.assigned = set(counts)
        self.once = {name for name, n in counts.items() if n == 1}
        for _ in range(8):  # a few rounds reach the fixed point for kernels' short def-use chains
            before = dict(self.env)
            seen: dict[str, Any] = {}
            for node in assigns:
                for name, coef in self._bindings(node):
                    seen[name] = _join(seen.get(name, _BOTTOM), coef)
            self.env.update(seen)
            if self.env == before:
                break

    def coef(self, node: ast.expr) -> Coef:
        value = self._eval(node)
        return None if isinstance(value, tuple) or value is _BOTTOM else value

    def _bindings(self, node: ast.AST) -> list[tuple[str, Any]]:
        if isinstance(node, ast.For):
            it = node.iter
            if isinstance(node.target, ast.Name) and isinstance(it, ast.Call) and _name_of(it.func) == "range":
                args = it.args
                start = self._eval(args[0]) if len(args) >= 2 else UNIFORM
                step = self._eval(args[2]) if len(args) == 3 else UNIFORM
                return [(node.target.id, start if step == UNIFORM else None)]
            return [(n.id, None) for n in ast.walk(node.target) if isinstance(n, ast.Name)]
        if isinstance(node, ast.AugAssign):
            if isinstance(node.target, ast.Name):
                return [(node.target.id, self._binop(node.op, self._eval(node.target), self._eval(node.value),
                                                     node.target, node.value))]
            return []
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if node.value is None:
            return []
        value = self._eval(node.value)
        number = _literal(node.value)
        if number is not None and len(targets) == 1 and isinstance(targets[0], ast.Name) and \
                targets[0].id in self.once:
            self.constants[targets[0].id] = number
        out = []
        for target in targets:
            if isinstance(target, ast.Name):
                out.append((target.id, value))
            elif isinstance(target, ast.Tuple):
                parts = value if isinstance(value, tuple) and len(value) == len(target.elts) else \
                    (None,) * len(target.elts)
                out += [(t.id, p) for t, p in zip(target.elts, parts) if isinstance(t, ast.Name)]
        return out

    def _eval(self, node: ast.expr) -> Any:
        name = _name_of(node)
        if name:
            tail = ".".join(name.split(".")[-2:])
            if tail in _TX or name.endswith(".laneid"):
                return Fraction(1)
            if tail in _UNIFORM_ATTRS:
                return UNIFORM
            if isinstance(node, ast.Name):
                if node.id in self.env:
                    return self.env[node.id]
                if node.id in self.assigned:
                    return _BOTTOM
                return UNIFORM if self.source.constant(node.id) is not None else None
            return None
        if isinstance(node, ast.Constant):
            return UNIFORM if isinstance(node.value, (int, float)) else None
        if isinstance(node, ast.BinOp):
            return self._binop(node.op, self._eval(node.left), self._eval(node.right), node.left, node.right)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = self._eval(node.operand)
            return -inner if isinstance(inner, Fraction) else inner
        if isinstance(node, ast.Call):
            func = _name_of(node.func)
            if func.endswith("grid") and node.args:
                ndim = _literal(node.args[0])
                if ndim == 1:
                    return Fraction(1)
                if ndim in (2, 3):
                    return (Fraction(1),) + (UNIFORM,) * (int(ndim) - 1)
            if func.split(".")[-1] in _CASTS and len(node.args) == 1:
                return self._eval(node.args[0])
            return None
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            whole = self.env.get(node.value.id)
            index = _literal(node.slice)
            if isinstance(whole, tuple) and index is not None and 0 <= index < len(whole):
                return whole[int(index)]
        return None

    def _binop(self, op: ast.operator, a: Any, b: Any, left: ast.expr, right: ast.expr) -> Any:
        if a is _BOTTOM or b is _BOTTOM:
            return _BOTTOM
        if isinstance(a, tuple) or isinstance(b, tuple) or a is None or b is None:
            return None
        if isinstance(op, (ast.Add, ast.Sub)):
            if isinstance(a, Fraction) and isinstance(b, Fraction):
                return a + b if isinstance(op, ast.Add) else a - b
            return ROW if UNIFORM in (a, b) else None
        if isinstance(op, ast.Mult):
            if a == UNIFORM and b == UNIFORM:
                return UNIFORM
            if a != UNIFORM and b != UNIFORM:
                return None
            moving, other = (a, right) if b == UNIFORM else (b, left)
            factor = self._value(other)
            if factor is not None and isinstance(moving, Fraction):
                return moving * Fraction(factor)
            return ROW
        if isinstance(op, (ast.FloorDiv, ast.Mod)):
            if a == UNIFORM and b == UNIFORM:
                return UNIFORM
            divisor = self._value(right)
            if divisor is None or b != UNIFORM or not isinstance(a, Fraction) or divisor <= 0:
                return None
            warp_multiple = divisor % 32 == 0
            if isinstance(op, ast.FloorDiv):
                return UNIFORM if warp_multiple and abs(a) <= 1 else a / Fraction(divisor)
            return a if warp_multiple else None
        return None

    def _value(self, node: ast.expr) -> float | None:
        """A compile-time number: a literal, a frozen global/closure constant, or a local set to a literal."""
        number = _literal(node)
        if number is not None:
            return number
        if isinstance(node, ast.Name):
            return self.constants.get(node.id, self.source.constant(node.id))
        if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
            a, b = self._value(node.left), self._value(node.right)
            if a is not None and b is not None:
                try:
                    return _ARITH[type(node.op)](a, b)
                except ArithmeticError:
                    return None
        return None


_BOTTOM = object()  # a variable whose assignments have not been evaluated yet
_ARITH = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
          ast.Mod: operator.mod}


def _literal(node: ast.AST) -> float | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _literal(node.operand)
        return -inner if inner is not None else None
    return None


def _join(a: Any, b: Any) -> Any:
    if a is _BOTTOM:
        return b
    if b is _BOTTOM:
        return a
    return a if a == b else None


# ---- PTX -------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class WrapCheck:
    """NumPy's negative-index check in PTX: a sign test of an index that adds the array's extent."""

    instructions: tuple[PtxInstruction, ...]  # sign test ... the instruction that takes the extent
    array: str | None  # the array whose shape is added, when the parameter is known
    dim: int | None
    feeds: frozenset[int]  # PTX instruction indices of the loads/stores whose address depends on it

    @property
    def line(self) -> int:
        return self.instructions[-1].line


def _param_fields(sig: tuple[nbtypes.Type, ...], params: list[str]) -> dict[int, tuple[str, str, int]]:
    """Kernel parameter index -> (argument, field, dim): numba passes an array as meminfo, parent, nitems,
    itemsize, data, shape[0..n), strides[0..n). Empty when an argument's layout is not known here."""
    out: dict[int, tuple[str, str, int]] = {}
    pos = 0
    for name, ty in zip(params, sig):
        if isinstance(ty, nbtypes.Array):
            for j, fname in enumerate(("meminfo", "parent", "nitems", "itemsize", "data")):
                out[pos + j] = (name, fname, 0)
            for d in range(ty.ndim):
                out[pos + 5 + d] = (name, "shape", d)
                out[pos + 5 + ty.ndim + d] = (name, "strides", d)
            pos += 5 + 2 * ty.ndim
        elif isinstance(ty, (nbtypes.Integer, nbtypes.Float, nbtypes.Boolean)):
            out[pos] = (name, "value", 0)
            pos += 1
        else:
            return {}
    return out


_OPERANDS = re.compile(r"%[\w]+")


class PtxFacts:
    """The kernel's PTX: instructions with source lines, loops, registers' definitions and numba's checks."""

    def __init__(self, ptx: str, sig: tuple[nbtypes.Type, ...], params: list[str]):
        kernels = ptx_kernels(ptx)
        if not kernels:
            raise DoctorError("numba's PTX has no kernel (.entry): nothing to judge")
        self.kernel: PtxKernel = kernels[0]
        self.instructions = self.kernel.instructions
        self.loops = self.kernel.loops()
        fields = _param_fields(sig, params)
        self.param_of: dict[str, tuple[str, str, int]] = {}
        self.defs: dict[str, list[PtxInstruction]] = {}
        for ins in self.instructions:
            ops = _OPERANDS.findall(ins.text)
            if ins.opcode.startswith("ld.param") and ops and (m := re.search(r"_param_(\d+)", ins.text)):
                if int(m.group(1)) in fields:
                    self.param_of[ops[0]] = fields[int(m.group(1))]
            if ops and not ins.opcode.startswith(("st.", "bra", "ret", "bar", "red.", "@")):
                self.defs.setdefault(ops[0], []).append(ins)
        for _ in range(2):  # copies of a parameter register (mov, cvta) keep its meaning
            for reg, ins_list in self.defs.items():
                src = _OPERANDS.findall(ins_list[0].text)[1:]
                if len(ins_list) == 1 and ins_list[0].opcode.split(".")[0] in ("mov", "cvta") and len(src) == 1 \
                        and src[0] in self.param_of and reg not in self.param_of:
                    self.param_of[reg] = self.param_of[src[0]]
        self.wrap_checks = self._wrap_checks()

    def in_loop(self, index: int, loop: tuple[int, int] | None) -> bool:
        return loop is not None and loop[0] <= index <= loop[1]

    def memory_ops(self) -> list[PtxInstruction]:
        return [i for i in self.instructions if i.opcode.split(".")[0] in ("ld", "st", "atom", "red")
                and not i.opcode.startswith("ld.param")]

    def _def(self, reg: str) -> PtxInstruction | None:
        found = self.defs.get(reg, [])
        return found[0] if len(found) == 1 else None

    def _sign_test(self, reg: str) -> PtxInstruction | None:
        """The instruction that makes ``reg`` the sign of an index: ``shr.s64 reg, x, 63`` or
        ``setp.lt.sNN reg, x, 0``."""
        ins = self._def(reg)
        if ins is None:
            return None
        parts = [p.strip() for p in ins.text.split(None, 1)[-1].split(",")]
        if ins.opcode in ("shr.s64", "shr.s32") and parts[-1] in ("63", "31"):
            return ins
        if ins.opcode.startswith("setp.lt.s") and parts[-1] == "0":
            return ins
        return None

    def _wrap_checks(self) -> list[WrapCheck]:
        """``and x, sign, shape`` / ``selp x, shape, 0, sign`` / ``selp x, i + shape, i, sign``: numba adds the
        array's extent to a negative index (NumPy's wraparound). An extent that is not an array's shape (a
        constant, as in Python's ``%``) is not such a check."""
        out = []
        for ins in self.instructions:
            op = ins.opcode
            if op not in ("and.b64", "selp.b64", "and.b32", "selp.b32"):
                continue
            ops = _OPERANDS.findall(ins.text)[1:]
            tests = [t for reg in ops if (t := self._sign_test(reg))]
            if not tests:
                continue
            shape = next((self.param_of[r] for r in ops if self.param_of.get(r, ("", ""))[1] == "shape"), None)
            if shape is None:  # selp x, i + shape, i, p: the extent comes through an add
                for reg in ops:
                    add = self._def(reg)
                    if add is not None and add.opcode.startswith("add."):
                        shape = next((self.param_of[r] for r in _OPERANDS.findall(add.text)[1:]
                                      if self.param_of.get(r, ("", ""))[1] == "shape"), None)
                        if shape:
                            break
            if shape is None:
                continue
            out.append(WrapCheck((tests[0], ins), shape[0], shape[2], frozenset(self._feeds(ins))))
        return out

    def _feeds(self, start: PtxInstruction) -> set[int]:
        """Indices of the loads and stores whose address depends on ``start``'s result (forward dataflow)."""
        users: dict[str, list[PtxInstruction]] = {}
        for ins in self.instructions:
            for reg in set(_OPERANDS.findall(ins.text)[1:]) | (set(_OPERANDS.findall(ins.text))
                                                               if ins.opcode.startswith(("st.", "@")) else set()):
                users.setdefault(reg, []).append(ins)
        first = _OPERANDS.findall(start.text)
        todo, seen, out = [first[0]] if first else [], set(), set()
        while todo:
            reg = todo.pop()
            if reg in seen:
                continue
            seen.add(reg)
            for ins in users.get(reg, []):
                base = ins.opcode.split(".")[0]
                if base in ("ld", "st", "atom", "red") and f"[{reg}" in ins.text.replace(" ", ""):
                    out.add(ins.index)
                elif base not in ("ld", "st", "atom", "red", "setp", "bra"):
                    dest = _OPERANDS.findall(ins.text)
                    if dest:
                        todo.append(dest[0])
        return out


# ---- SASS ------------------------------------------------------------------------------------------------

FP_ARITH = frozenset({"FFMA", "FADD", "FMUL", "DFMA", "DADD", "DMUL", "HFMA2", "HADD2", "HMUL2"})


def fp_ops(instructions: list[Instruction]) -> int:
    """Floating-point arithmetic instructions (FFMA, FADD, FMUL and their f64 and f16 kinds): the useful work."""
    return sum(i.opcode.split(".")[0] in FP_ARITH for i in instructions)


@dataclass
class MachineLoop:
    """A loop of the SASS: its address range, own instructions (nested loops left out) and source lines."""

    start: int
    end: int
    instructions: list[Instruction]  # the whole body, nested loops included
    own: list[Instruction]  # the body without nested loops
    lines: Counter[int]  # source line -> instructions of the whole body attributed to it

    @property
    def mix(self) -> Counter[str]:
        return Counter(category(i.opcode) for i in self.instructions)

    def count(self, prefix: str) -> int:
        return sum(n for cat, n in self.mix.items() if cat.startswith(prefix))

    @property
    def fp_ops(self) -> int:
        """Floating-point arithmetic of one pass: FFMA, FADD, FMUL and their f64 and f16 kinds."""
        return fp_ops(self.instructions)

    @property
    def global_loads(self) -> int:
        return sum(i.opcode.startswith("LDG") for i in self.instructions)

    @property
    def shared_loads(self) -> int:
        return sum(i.opcode.startswith("LDS") for i in self.instructions)

    @property
    def size(self) -> int:
        return len(self.instructions)


def machine_loops(report: KernelReport, lines: dict[int, int]) -> list[MachineLoop]:
    """Every loop of the kernel's SASS with its source lines."""
    ranges = find_loops(report.instructions)
    out = []
    for lo, hi in ranges:
        body = [i for i in report.instructions if lo <= i.address <= hi]
        inner = [(a, b) for a, b in ranges if lo <= a and b <= hi and (a, b) != (lo, hi)]
        own = [i for i in body if not any(a <= i.address <= b for a, b in inner)]
        out.append(MachineLoop(lo, hi, body, own, Counter(lines[i.address] for i in body if lines.get(i.address))))
    return out


def hottest(loops: list[MachineLoop]) -> MachineLoop | None:
    """The loop whose own body has the most floating-point work (FFMA first, as util.sass.hot_loop), then the
    most memory instructions; innermost on ties."""
    def rank(lp: MachineLoop) -> tuple[int, ...]:
        own = Counter(category(i.opcode) for i in lp.own)
        fp = fp_ops(lp.own)
        mem = sum(n for c, n in own.items() if c.startswith(("LDG", "LDS", "STG", "STS", "LDL")))
        return own["FFMA"], own["f64"], fp, mem, -(lp.end - lp.start)
    return max(loops, key=rank) if loops else None


def cubin_with_lines(ptx: str, arch: str) -> bytes:
    """ptxas ``-lineinfo``: a cubin whose SASS instructions carry the ``.loc`` lines of the PTX."""
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp, "kernel.ptx"), Path(tmp, "kernel.cubin")
        src.write_text(ptx)
        run_tool("ptxas", f"-arch={arch}", "-lineinfo", "-o", out, src)
        return out.read_bytes()


# ---- typing ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TypedStatement:
    """One statement of numba's typed IR: ``target = expression :: type``."""

    target: str
    expression: str
    type: str


class TypedLines:
    """numba's type annotation by source line: what each line computes and in which type."""

    _HEADER = re.compile(r"^\s*# --- LINE (\d+) ---")
    _STMT = re.compile(r"^\s*#\s+(\S+) = (.*?)\s+:: (.+)$")

    def __init__(self, typemap: dict[str, str], annotation: str):
        self.typemap = typemap
        self.by_line: dict[int, list[TypedStatement]] = {}
        line = 0
        for text in annotation.splitlines():
            if m := self._HEADER.match(text):
                line = int(m.group(1))
            elif (m := self._STMT.match(text)) and line:
                self.by_line.setdefault(line, []).append(TypedStatement(*m.groups()))

    def types_of(self, var: str) -> set[str]:
        """The types numba gave ``var`` and its SSA versions (``tmp``, ``tmp.1`` ...)."""
        return {t for k, t in self.typemap.items() if k == var or re.fullmatch(rf"{re.escape(var)}\.\d+", k)}

    def type_of(self, ssa: str) -> str | None:
        return self.typemap.get(ssa)


# ---- all of it -------------------------------------------------------------------------------------------

@dataclass
class Facts:
    """Everything the checks read, compiled once for one kernel and signature."""

    kernel: Any
    name: str
    arch: str
    sig: tuple[nbtypes.Type, ...]
    options: dict[str, Any]
    block: int | None
    source: Source
    ptx: PtxFacts
    report: KernelReport | None  # None when ptxas could not assemble the PTX (SASS checks not judged)
    lines: dict[int, int]  # SASS address -> source line
    loops: list[MachineLoop]
    hot: MachineLoop | None
    sass_error: str | None = None
    _typing: TypedLines | None = field(default=None, repr=False)

    @property
    def args(self) -> dict[str, nbtypes.Type]:
        return dict(zip(self.source.params, self.sig))

    def arrays(self) -> dict[str, nbtypes.Array]:
        return {n: t for n, t in self.args.items() if isinstance(t, nbtypes.Array)}

    @cached_property
    def tx(self) -> TxFlow:
        return TxFlow(self.source)

    @cached_property
    def hot_source_loop(self) -> SourceLoop | None:
        """The source loop the SASS hot loop runs: the loop whose header line its backward branch carries (the
        loop test), else the innermost loop around that line, else (a device function's line) the innermost
        loop around its call."""
        if self.hot is None:
            return None
        line = next((self.lines[i.address] for i in reversed(self.hot.instructions) if self.lines.get(i.address)), 0)
        header = next((lp for lp in self.source.loops if lp.line == line), None)
        if header is not None or self.source.innermost_loop(line) is not None:
            return header or self.source.innermost_loop(line)
        calls = [c for name, dev in self.source.devices.items() if line in dev.text for c in self.source.call_lines(name)]
        inner = [lp for c in calls if (lp := self.source.innermost_loop(c)) is not None]
        return inner[0] if inner else None

    @cached_property
    def hot_ptx_loop(self) -> tuple[int, int] | None:
        """The PTX loop that matches the SASS hot loop best (most shared source lines; innermost on ties)."""
        if self.hot is None or not self.ptx.loops:
            return None
        want = set(self.hot.lines)
        accesses = sum(category(i.opcode)[:3] in ("LDG", "LDS", "STG", "STS") for i in self.hot.instructions)

        def score(loop: tuple[int, int]) -> tuple[float, int, int]:
            body = self.ptx.instructions[loop[0]:loop[1] + 1]
            have = {i.line for i in body if i.line}
            memory = sum(i.opcode.startswith(("ld.global", "ld.shared", "st.global", "st.shared")) for i in body)
            return len(want & have) / max(1, len(want | have)), -abs(memory - accesses), -(loop[1] - loop[0])
        best = max(self.ptx.loops, key=score)
        return best if score(best)[0] > 0 else None

    def typing(self) -> TypedLines:
        """numba's typing of the kernel (a second compile in a child process; done once, when a check asks)."""
        if self._typing is None:
            typed = numba_types(self.kernel, self.sig, cc=arch_cc(self.arch))
            self._typing = TypedLines(typed.typemap, typed.annotation)
        return self._typing


def gather(kernel: Any, sig: Any, arch: str = "sm_90", block: int | None = None) -> Facts:
    """Compile ``kernel`` for ``sig`` and ``arch`` once, and read its source, PTX and SASS."""
    fn = kernel_function(kernel)
    types = parse_sig(sig, fn)
    cc = arch_cc(arch)
    if block is not None and (isinstance(block, bool) or not isinstance(block, int) or not 1 <= block <= 1024):
        raise DoctorError(f"block must be the threads per block, an int in 1..1024, got {block!r}")
    source = Source(fn)
    options = jit_options(kernel)
    try:
        ptx = numba_ptx(kernel, types, cc=cc, lineinfo=True)
    except PtxCompileError as e:
        raise DoctorError(f"numba could not compile {fn.__name__} for {types}, so there is nothing to judge; "
                          f"numba says:\n{trim_compiler_message(str(e).split(':', 1)[-1])}") from None
    except (TypeError, ValueError) as e:
        raise DoctorError(f"cannot compile {fn.__name__}: {e}") from None
    ptx_facts = PtxFacts(ptx, types, source.params)
    report, lines, error = None, {}, None
    try:
        cubin = cubin_with_lines(ptx, arch)
        report = analyze(cubin, ptx_facts.kernel.name)
        lines = {a: ln for a, (f, ln) in line_table(cubin, ptx_facts.kernel.name).items()}
    except ToolchainError as e:  # e.g. a call to a function only the CUDA driver links (grid sync)
        error = str(e).splitlines()[-1][:300]
    loops = machine_loops(report, lines) if report else []
    if launch := options.get("launch_bounds"):
        block = block or (launch[0] if isinstance(launch, (tuple, list)) else launch)
    return Facts(kernel, fn.__name__, arch, types, options, block, source, ptx_facts, report, lines, loops,
                 hottest(loops), error)
