"""Ship a kernel's Python source to a compiler child process, and rebuild it there.

numba's simulator replaces numba's compiler in its own process, and numba-cuda-mlir needs another NumPy than
numba-cuda: in both cases a kernel is compiled in a child Python. ``spec(fn)`` describes a function so that a
child can rebuild it: its source (padded so that line numbers in compiler messages stay right), the values of
the globals and closure variables it uses, and the device functions it calls, recursively. ``build(spec, hooks)``
is the child's half. The children are the modules ``util.child_compile`` and ``util.child_mlir``.
"""

from __future__ import annotations

import ast
import dis
import importlib
import inspect
import linecache
import sys
import textwrap
from dataclasses import dataclass
from types import BuiltinFunctionType, CodeType, FunctionType, ModuleType
from typing import Any, Callable

import numpy as np

from .backend import is_kernel

DEVICE_OPTIONS = ("device", "inline", "forceinline", "fastmath", "opt", "debug", "lineinfo")


def py_func(kernel: Any) -> FunctionType:
    """The Python function behind a kernel, a device function, or a plain function."""
    fn = (getattr(kernel, "py_func", None) or getattr(kernel, "fn", None)) if is_kernel(kernel) else kernel
    if not isinstance(fn, FunctionType):
        raise TypeError(f"expected a @cuda.jit kernel or a Python function, got {type(kernel).__name__}; "
                        "define the kernel with `@cuda.jit` (from util import cuda) and pass it as it is")
    return fn


def parse_def(fn: FunctionType) -> tuple[ast.FunctionDef, str]:
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


def closure_values(fn: FunctionType) -> dict[str, Any]:
    """The values of the variables ``fn`` takes from its enclosing function."""
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    try:
        return {name: cell.cell_contents for name, cell in cells.items()}
    except ValueError:
        raise ValueError(f"{fn.__qualname__} uses a variable of its enclosing function that is not set yet") from None


def jit_options(kernel: Any) -> dict[str, Any]:
    """The jit options a kernel (or device function) was declared with (``{}`` for a plain function)."""
    if not is_kernel(kernel):
        return {}
    if hasattr(kernel, "targetoptions"):  # a real dispatcher
        return {k: v for k, v in kernel.targetoptions.items() if v is not None}
    options: dict[str, Any] = {"device": kernel._device, "fastmath": kernel._fastmath}
    if hasattr(kernel, "jit_options"):  # kept by util.backend's simulator jit
        return {**options, **{k: v for k, v in kernel.jit_options.items() if v is not None}}
    # a kernel made by numba's own simulator jit keeps only device/fastmath: read the decorator in the source
    fn = py_func(kernel)
    node, _ = parse_def(fn)
    namespace = {**fn.__globals__, **closure_values(fn)}
    for dec in node.decorator_list:
        callee = dec.func if isinstance(dec, ast.Call) else None
        name = callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", None)
        if isinstance(dec, ast.Call) and name == "jit":
            for kw in dec.keywords:
                if kw.arg is not None:
                    expr = compile(ast.Expression(kw.value), fn.__code__.co_filename, "eval")
                    options[kw.arg] = eval(expr, namespace)
    return options


def _global_names(code: CodeType) -> set[str]:
    names = {ins.argval for ins in dis.get_instructions(code) if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    for const in code.co_consts:
        if isinstance(const, CodeType):
            names |= _global_names(const)
    return names


def _is_constant(value: Any) -> bool:
    """Values numba freezes into the code as constants, and that pickle."""
    from numba.core import types as nbtypes  # the parent's numba (a child rebuilds without it)

    if isinstance(value, tuple):
        return all(_is_constant(v) for v in value)
    if isinstance(value, type):
        return issubclass(value, np.generic)
    return isinstance(value, (bool, int, float, complex, str, type(None), np.generic, np.ndarray, np.dtype,
                              nbtypes.Type))


def _importable(value: Any) -> bool:
    """A builtin function, numpy ufunc or util helper (util.intrinsics) that the child can import by module and
    name."""
    module_name = getattr(value, "__module__", None) or ""
    module = sys.modules.get(module_name)
    return ((isinstance(value, (BuiltinFunctionType, np.ufunc)) or module_name.split(".")[0] == "util")
            and getattr(module, getattr(value, "__name__", ""), None) is value)


def spec(fn: FunctionType, options: dict[str, Any] | None = None, _active: frozenset[int] = frozenset()) -> dict:
    """A picklable description of ``fn``: its source, its globals and closure values, and jit ``options``."""
    if id(fn) in _active:
        raise ValueError(f"{fn.__qualname__} is recursive: recursive device functions cannot be shipped")
    active = _active | {id(fn)}
    _, source = parse_def(fn)
    values = closure_values(fn)
    values.update({n: fn.__globals__[n] for n in sorted(_global_names(fn.__code__)) if n in fn.__globals__})
    shipped: dict[str, tuple[str, Any]] = {}
    for name, value in values.items():
        if isinstance(value, ModuleType):
            shipped[name] = ("module", value.__name__)
        elif is_kernel(value):
            opts = jit_options(value)
            if not opts.get("device"):
                raise TypeError(f"{fn.__qualname__} calls the kernel {name}; a kernel can only call device "
                                f"functions: declare it with @cuda.jit(device=True)")
            dev_opts = {k: v for k, v in opts.items() if k in DEVICE_OPTIONS}
            shipped[name] = ("device", spec(py_func(value), dev_opts, active))
        elif _is_constant(value):
            shipped[name] = ("value", value)
        elif _importable(value):  # `from math import sqrt`
            shipped[name] = ("attr", (value.__module__, value.__name__))
        else:
            raise TypeError(
                f"cannot send the global {name!r} ({type(value).__name__}) used by {fn.__qualname__} to a compiler "
                "child process, which can rebuild modules, numba types, numbers, strings, numpy "
                "scalars/dtypes/arrays, tuples of these, builtin functions and numpy ufuncs, and "
                f"@cuda.jit(device=True) functions: make {name!r} one of these, or pass it to the kernel as an "
                "argument.")
    return {"name": fn.__name__, "module": fn.__module__, "filename": fn.__code__.co_filename,
            "source": source, "options": dict(options or {}), "globals": shipped}


# ---- the child's half --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Hooks:
    """How a child rebuilds what a spec names with its own compiler."""

    device_jit: Callable[[dict[str, Any]], Callable]  # jit options -> a decorator for device functions
    attr: Callable[[str, str], Any] = lambda module, name: getattr(importlib.import_module(module), name)
    typ: Callable[[str], Any] | None = None  # a numba type's expression -> this compiler's type
    modules: dict[str, Any] | None = None  # module aliases: name -> the module to use instead


def remember(filename: str, source: str) -> None:
    """Put the function's lines into linecache so the compiler's error messages can quote them."""
    lines = list(linecache.cache.get(filename, (0, None, [], filename))[2])
    new = source.splitlines(True)
    lines += ["\n"] * (len(new) - len(lines))
    for i, line in enumerate(new):
        if line.strip():
            lines[i] = line
    linecache.cache[filename] = (0, None, lines, filename)


def build(described: dict[str, Any], hooks: Hooks) -> FunctionType:
    """The function a ``spec`` describes, rebuilt with this process's compiler."""
    ns: dict[str, Any] = {"__name__": described["module"]}
    for name, (kind, value) in described["globals"].items():
        if kind == "module":
            ns[name] = (hooks.modules or {}).get(value) or importlib.import_module(value)
        elif kind == "device":
            ns[name] = hooks.device_jit(value["options"])(build(value, hooks))
        elif kind == "attr":
            ns[name] = hooks.attr(*value)
        elif kind == "type":
            if hooks.typ is None:
                raise TypeError(f"{name!r} is a shipped type expression and this child cannot rebuild types")
            ns[name] = hooks.typ(value)
        else:
            ns[name] = value
    remember(described["filename"], described["source"])
    exec(compile(described["source"], described["filename"], "exec"), ns)
    return ns[described["name"]]
