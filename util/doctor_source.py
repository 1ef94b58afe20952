"""The kernel's source for util.doctor: its ``def`` and the device functions it calls as ASTs with the file's line
numbers, their loops and array accesses, and how each index moves from one thread to the next (``TxFlow``).

Everything here reads Python source only: it says where in the source a machine-code fact (util.doctor_facts)
comes from, and which accesses consecutive threads make a row apart (the ``uncoalesced`` tag).
"""

from __future__ import annotations

import ast
import io
import operator
import tokenize
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from types import FunctionType
from typing import Any

from .backend import is_kernel
from .ship import closure_values, jit_options, parse_def, py_func


class DoctorError(ValueError):
    """The doctor cannot judge this input; the message says why and what to do."""


# ---- source ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Access:
    """An array subscript in the kernel's source, or in a device function it calls (then ``array`` is the kernel's
    array passed to it, and ``call`` the call)."""

    array: str  # the array's name in the kernel
    indices: tuple[ast.expr, ...]  # in the scope of the function it is written in
    line: int  # the kernel's line that does it (a device function's call site)
    own_line: int  # the line of the subscript itself
    store: bool
    loops: tuple[int, ...]  # header lines of the loops around it (kernel's and device function's), outermost first
    device: str | None = None  # the device function it is in
    call: ast.Call | None = None


@dataclass(frozen=True)
class SourceLoop:
    """A ``for`` or ``while`` loop of the kernel or of a device function it calls (same file)."""

    line: int  # header line
    end: int  # last line of the body
    node: ast.For | ast.While
    device: str | None = None

    @property
    def is_range(self) -> bool:
        it = getattr(self.node, "iter", None)
        return isinstance(it, ast.Call) and name_of(it.func) == "range"


def loop_kind(loop: SourceLoop | None) -> str:
    """``for ... in range()``, ``while``, ``for`` or ``unknown`` (no source loop matched)."""
    if loop is None:
        return "unknown"
    return "for ... in range()" if loop.is_range else "while" if isinstance(loop.node, ast.While) else "for"


def name_of(node: ast.AST) -> str:
    """``cuda.threadIdx.x`` -> "cuda.threadIdx.x"; "" for anything that is not a dotted name."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = name_of(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


def _strip_comment(text: str) -> str:
    """A source line without its trailing ``# comment``."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return text
    comment = next((t for t in tokens if t.type == tokenize.COMMENT), None)
    return text[:comment.start[1]].rstrip() if comment else text


class Source:
    """A kernel's (or device function's) ``def`` as an AST with the file's line numbers, and the device functions
    it calls, recursively. ``loops`` and ``accesses`` include those of device functions in the same file (their
    lines are the file's, so the PTX and SASS line tables reach them)."""

    def __init__(self, fn: FunctionType, device: str | None = None, dispatcher: Any = None,
                 _seen: frozenset[int] = frozenset()):
        self.fn, self.device, self.dispatcher = fn, device, dispatcher  # a device function: its name and object
        self.filename = fn.__code__.co_filename
        self.tree = _parsed(fn)
        self.first, self.last = self.tree.lineno, self.tree.end_lineno or self.tree.lineno
        _, padded = parse_def(fn)
        self.text = {i + 1: line for i, line in enumerate(padded.splitlines()) if line.strip()}
        self.namespace = {**fn.__globals__, **closure_values(fn)}
        self.params = [a.arg for a in self.tree.args.args]
        self.devices = self._device_functions(_seen | {id(fn)})
        self.loops = [SourceLoop(n.lineno, n.end_lineno or n.lineno, n, device) for n in ast.walk(self.tree)
                      if isinstance(n, (ast.For, ast.While))]
        for dev in self.devices.values():
            if dev.filename == self.filename:
                self.loops += [lp for lp in dev.loops if lp not in self.loops]
        self.accesses = self._accesses()
        self.local_arrays = self._arrays("local")  # name -> (extents or None, line)
        self.shared_arrays = self._arrays("shared")

    def line(self, number: int) -> str:
        """The source text of a line of the kernel (or of a device function it calls), without its comment."""
        for src in [self, *self.devices.values()]:
            if number in src.text and src.filename == self.filename:
                return _strip_comment(src.text[number].strip())
        return ""

    def constant(self, name: str) -> int | float | None:
        """The value of a global or closure variable that numba freezes into the kernel as a number."""
        value = self.namespace.get(name)
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    def loops_around(self, line: int) -> list[SourceLoop]:
        """The loops whose body holds ``line``, outermost first; for a line of a device function, the kernel's
        loops around its calls too."""
        own = [lp for lp in self.loops if lp.line <= line <= lp.end]
        for name, dev in self.devices.items():
            if dev.first <= line <= dev.last and dev.filename == self.filename:
                own += [lp for c in self.call_lines(name) for lp in self.loops_around(c) if lp not in own]
        return sorted(own, key=lambda lp: (lp.device is not None, lp.line))

    def innermost_loop(self, line: int) -> SourceLoop | None:
        around = self.loops_around(line)
        return around[-1] if around else None

    def call_lines(self, device: str) -> list[int]:
        """Lines of this function that call the device function ``device`` (by the name it has here)."""
        return sorted({n.lineno for n in ast.walk(self.tree)
                       if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == device})

    def evaluate(self, node: ast.expr, locals_: dict[str, float] | None = None) -> float | None:
        """A compile-time number: a literal, a frozen global/closure constant, ``locals_``, and + - * // % of
        those (None for anything else)."""
        number = _literal(node)
        if number is not None:
            return number
        if isinstance(node, ast.Name):
            return (locals_ or {}).get(node.id, self.constant(node.id))
        if isinstance(node, ast.Call) and name_of(node.func).split(".")[-1] in _CASTS and len(node.args) == 1:
            return self.evaluate(node.args[0], locals_)
        if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
            a, b = self.evaluate(node.left, locals_), self.evaluate(node.right, locals_)
            if a is not None and b is not None:
                try:
                    return _ARITH[type(node.op)](a, b)
                except ArithmeticError:
                    return None
        return None

    def _arrays(self, kind: str) -> dict[str, tuple[tuple[int, ...] | None, int]]:
        """``cuda.{kind}.array`` variables: name -> (their constant extents, or None; the line)."""
        out = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                    name_of(node.value.func).endswith(f"{kind}.array"):
                call = node.value
                shape = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "shape"), None)
                if shape is None:
                    continue
                dims = [self.evaluate(d) for d in (shape.elts if isinstance(shape, ast.Tuple) else [shape])]
                extents = tuple(int(d) for d in dims) if all(d is not None for d in dims) else None
                out.update({t.id: (extents, node.lineno) for t in node.targets if isinstance(t, ast.Name)})
        return out

    def _device_functions(self, seen: frozenset[int]) -> dict[str, Source]:
        """Name -> Source of every device function this function calls (recursively; not recursive ones)."""
        out: dict[str, Source] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id not in out:
                value = self.namespace.get(node.func.id)
                if is_kernel(value) and jit_options(value).get("device") and id(py_func(value)) not in seen:
                    try:
                        out[node.func.id] = Source(py_func(value), node.func.id, value, seen)
                    except (DoctorError, TypeError, OSError, SyntaxError):
                        continue  # no source to read: its accesses are not judged
        return out

    def _accesses(self) -> list[Access]:
        """Subscripts of this function's arrays, and those of the device functions it calls on arrays it passes
        them (one level: the device function's array parameter renamed to the argument)."""
        out = []
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
                out.append(self._access(node, node.lineno, None, None))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self.devices:
                dev = self.devices[node.func.id]
                params = dict(zip(dev.params, node.args))
                for sub in ast.walk(dev.tree):
                    if isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Name):
                        arg = params.get(sub.value.id)
                        if isinstance(arg, ast.Name):
                            renamed = ast.Subscript(ast.Name(arg.id, ast.Load()), sub.slice, sub.ctx)
                            ast.copy_location(renamed, sub)
                            out.append(self._access(renamed, node.lineno, node.func.id, node))
        return out

    def _access(self, node: ast.Subscript, line: int, device: str | None, call: ast.Call | None) -> Access:
        indices = tuple(node.slice.elts) if isinstance(node.slice, ast.Tuple) else (node.slice,)
        loops = tuple(lp.line for lp in self.loops_around(node.lineno if device else line))
        return Access(node.value.id, indices, line, node.lineno, isinstance(node.ctx, ast.Store), loops, device, call)


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

    def __init__(self, source: Source, params: dict[str, Any] | None = None):
        self.source = source
        self.env: dict[str, Any] = {p: UNIFORM for p in source.params} | (params or {})
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
            if isinstance(node.target, ast.Name) and isinstance(it, ast.Call) and name_of(it.func) == "range":
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
        name = name_of(node)
        if name:
            tail = ".".join(name.split(".")[-2:])
            if tail in _TX or name.endswith(".laneid"):
                return Fraction(1)
            if tail in _UNIFORM_ATTRS or name.split(".")[-1] in ("shape", "size", "ndim", "strides"):
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
            func = name_of(node.func)
            if func.endswith("grid") and node.args:
                ndim = _literal(node.args[0])
                if ndim == 1:
                    return Fraction(1)
                if ndim in (2, 3):
                    return (Fraction(1),) + (UNIFORM,) * (int(ndim) - 1)
            if func.split(".")[-1] in _CASTS and len(node.args) == 1:
                return self._eval(node.args[0])
            args = [self._eval(a) for a in node.args]
            if func.endswith(("gridsize", "syncthreads_count")) or (args and all(a == UNIFORM for a in args)):
                return UNIFORM  # the same arguments in every thread give the same value
            return _BOTTOM if _BOTTOM in args else None
        if isinstance(node, ast.Subscript):
            whole = self._eval(node.value)
            index = _literal(node.slice)
            if isinstance(whole, tuple) and index is not None and 0 <= index < len(whole):
                return whole[int(index)]
            parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if whole == UNIFORM and all(not isinstance(p, ast.Slice) and self._eval(p) == UNIFORM for p in parts):
                return UNIFORM  # one element (or a shape) that every thread reads alike
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
        return self.source.evaluate(node, self.constants)


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
