"""The checks of util.doctor: one function per tag, each reading ``Facts`` (util.doctor_facts) and returning its
findings, or ``NotJudged`` with the reason when the kernel gives it nothing to judge.

Every check is conservative: it reports only what the machine code shows and the source explains (a precise
finding is worth more than a guess), and it names the evidence: the Python lines, and the PTX and SASS
instructions with their source lines. ``refs`` name rows of util.doctor.MEASURED, the notebooks' measurements of
the same fix.
"""

from __future__ import annotations

import ast
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from numba.core import types as nbtypes

from .doctor_facts import Facts
from .doctor_source import ROW, UNIFORM, Access, SourceLoop, name_of
from .occupancy import SM90_MAX_THREADS_PER_SM, max_blocks_per_sm
from .sass import category

EVIDENCE_LINES = 8  # PTX or SASS lines shown per finding
MEMORY_OPS = ("LDG", "LDS", "STG", "STS", "LD", "ST")  # global, shared and generic loads and stores


@dataclass
class Finding:
    """One thing that makes the kernel slower than it needs to be, with its cost, evidence and fix."""

    tag: str
    summary: str  # what, where
    cost: str  # what it costs now, and what the fix gives where that can be computed
    fix: str  # the source change
    lines: list[int]  # Python lines involved
    source: list[str] = field(default_factory=list)  # "line N: text"
    ptx: list[str] = field(default_factory=list)  # "line N: instruction"
    sass: list[str] = field(default_factory=list)
    refs: list[str] = field(default_factory=list)  # keys of util.doctor.MEASURED
    numbers: dict[str, Any] = field(default_factory=dict)  # the counts behind ``cost``, machine-readable


@dataclass(frozen=True)
class NotJudged:
    """A tag the doctor could not judge for this kernel, and why."""

    reason: str


Result = list[Finding] | NotJudged


# ---- helpers -----------------------------------------------------------------------------------------------

def _src(f: Facts, lines: list[int] | set[int]) -> list[str]:
    return [f"line {n}: {f.source.line(n)}" for n in sorted(set(lines)) if n and f.source.line(n)]


def _ptx(ins_list: list[Any], limit: int = EVIDENCE_LINES) -> list[str]:
    shown = [f"line {i.line}: {' '.join(i.text.split())}" for i in ins_list[:limit]]
    return shown + ([f"... {len(ins_list) - limit} more"] if len(ins_list) > limit else [])


def _sass(f: Facts, ins_list: list[Any], limit: int = EVIDENCE_LINES) -> list[str]:
    shown = [f"/*{i.address:04x}*/ line {f.lines.get(i.address, 0)}: {i.text}" for i in ins_list[:limit]]
    return shown + ([f"... {len(ins_list) - limit} more"] if len(ins_list) > limit else [])


def _hot_lines(f: Facts) -> set[int]:
    """Source lines of the hot loop's body (the source loop the SASS hot loop runs)."""
    loop = f.hot_source_loop
    return set(range(loop.line, loop.end + 1)) if loop else set()


def _per_op(f: Facts, removed: int = 0) -> str:
    """The hot loop's instructions per floating-point operation now, and with ``removed`` instructions fewer (what
    the fix takes out of the loop, where that can be counted)."""
    loop = f.hot
    if loop is None or not loop.fp_ops:
        return ""
    now = (f"{loop.size} instructions for {loop.fp_ops} floating-point operations per pass "
           f"({loop.size / loop.fp_ops:.1f} each)")
    return now + (f"; without these {removed}: {loop.size - removed} ({(loop.size - removed) / loop.fp_ops:.1f} each)"
                  if removed else "")


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


# ---- fp64 --------------------------------------------------------------------------------------------------

_F64_NOT_WORK = ("mov", "ld.param", "st.param")
_ARITH_PREFIXES = ("add", "sub", "mul", "fma", "mad", "div", "rcp", "sqrt", "rsqrt", "neg", "abs", "min", "max")


def _intended_f64(f: Facts) -> bool:
    """A kernel on float64 (or complex128) arrays computes in double precision on purpose."""
    return any(t.dtype in (nbtypes.float64, nbtypes.complex128) for t in f.arrays().values())


def _f64_lines(f: Facts) -> set[int]:
    """Source lines where the source makes a float64: in the kernel, where numba typed a value float64 or
    complex128; in a device function (not in the kernel's typing), where the line has a float literal or a
    float64 cast. So f64 instructions inside a float32 library function (sinf's argument reduction) are not
    the kernel's."""
    typing = f.typing()
    out = {line for line, stmts in typing.by_line.items()
           if any(st.type in ("float64", "complex128") and not st.expression.startswith(("arg(", "global(", "freevar("))
                  for st in stmts)}
    for dev in f.source.devices.values():
        floats = {v for v, node in _literal_inits(dev.tree) if isinstance(node.value, float)}
        for node in ast.walk(dev.tree):
            line = getattr(node, "lineno", 0)
            if (isinstance(node, ast.Constant) and isinstance(node.value, float) and not _inside_cast(dev.tree, node)) \
                    or (isinstance(node, ast.Call) and name_of(node.func).split(".")[-1] in ("float64", "float")) \
                    or (isinstance(node, ast.Name) and node.id in floats):
                out.add(line)
    return out


def _literal_inits(tree: ast.AST) -> list[tuple[str, ast.Constant]]:
    """(variable, literal) for each ``v = <number literal>`` (or annotated) assignment in ``tree``."""
    out = []
    for node in ast.walk(tree):
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else \
            node.target if isinstance(node, ast.AnnAssign) else None
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and isinstance(value, ast.Constant) and \
                isinstance(value.value, (int, float)) and not isinstance(value.value, bool):
            out.append((target.id, value))
    return out


def check_fp64(f: Facts) -> Result:
    """Double-precision arithmetic in a float32 kernel, on lines where numba typed a value float64, with the
    line and cause of the double. Outside loops it is reported as a once-per-thread cost."""
    if _intended_f64(f):
        return NotJudged("the kernel takes float64 arrays: double precision is taken as intended")
    f64 = [i for i in f.ptx.instructions if "f64" in i.opcode.split(".") and not i.opcode.startswith(_F64_NOT_WORK)]
    if not f64:
        return []
    typed = _f64_lines(f)
    work = [i for i in f64 if i.line in typed]
    hot = [i for i in work if f.in_hot_ptx(i.index) or not (f.ptx.loops or f.loop_lines)]
    if not hot and not any(i.opcode.startswith(_ARITH_PREFIXES) for i in work):
        return []  # only conversions and compares outside loops (e.g. a uint64 compared with an int)
    shown = hot or work
    if not shown:
        return []
    typing = f.typing()
    causes: dict[str, tuple[str, int]] = {}  # cause -> (fix, line)
    for line in sorted({i.line for i in shown}):
        for cause, fix, at in _f64_causes(f, typing, line):
            causes.setdefault(cause, (fix, at))
    sass_f64 = [i for i in f.hot_sass() if category(i.opcode) == "f64"
                or i.opcode.startswith(("F2F.F64", "F2F.F32.F64", "I2F.F64", "F2I.F64"))]
    lines = sorted({i.line for i in shown} | {at for _, at in causes.values()})
    where = "in the hot loop" if hot and f.ptx.loops else "in the unrolled loops" if hot and f.loop_lines else \
        "outside the hot loop (once per thread, or per pass of a colder loop)" if not hot else \
        "in a kernel without loops (all of it is the hot path)"
    cost = (f"{len(shown)} float64 PTX instructions {where}"
            + (f"; the hot loop does {len(sass_f64)} fp64 SASS instructions (DADD/DFMA/DMUL, F2F conversions) per "
               f"pass of {f.hot.size}; in float32 the conversions go and each float64 operation is a float32 one "
               "(kernel 2: 146 -> 137 instructions per pass)" if f.hot and sass_f64 and f.hot_source_loop else "")
            + ". fp64 runs at 1/2 the fp32 rate on an H100/H200, at 1/64 on consumer GPUs (RTX 30xx/40xx, L4)")
    why = "; ".join(causes) or "a value numba typed float64 (see the PTX lines)"
    fixes = "; ".join(dict.fromkeys(fix for fix, _ in causes.values())) or \
        "keep every value float32: wrap literals as np.float32(...) and cast ints with float32(...)"
    return [Finding("fp64", f"float64 arithmetic on line(s) {sorted({i.line for i in shown})} ({where}): {why}",
                    cost, fixes, lines, _src(f, lines), _ptx(shown), _sass(f, sass_f64),
                    ["k2-step1", "variants-f32"], {"f64_ptx": len(shown), "hot": bool(hot),
                                                   "f64_sass_hot_loop": len(sass_f64)})]


def _scope(f: Facts, line: int) -> Any:
    """The Source (kernel or device function) whose ``def`` holds ``line``."""
    return next((d for d in f.source.devices.values() if d.first <= line <= d.last), f.source)


def _f64_causes(f: Facts, typing: Any, line: int) -> list[tuple[str, str, int]]:
    """(cause, fix, line of the fix) for the float64 arithmetic on ``line``."""
    out: list[tuple[str, str, int]] = []
    src = _scope(f, line)
    nodes = [n for n in ast.walk(src.tree) if getattr(n, "lineno", None) == line]
    args = f.args if src is f.source else {}
    for name in dict.fromkeys(n.id for n in nodes if isinstance(n, ast.Name)):
        ty = args.get(name)
        if isinstance(ty, nbtypes.Float) and ty.bitwidth == 64:
            out.append((f"the argument `{name}` is float64 (a Python float passed to the kernel)",
                        f"declare `{name}` float32 in the signature and pass np.float32({name})", f.source.first))
        elif ty is None and (src is not f.source or "float64" in typing.types_of(name)):
            out += _variable_origin(src, name, ints=src is f.source)
    for node in nodes:
        if isinstance(node, ast.Constant) and isinstance(node.value, float) and not _inside_cast(src.tree, node):
            out.append((f"the float literal `{node.value!r}` on line {line} is a Python float (float64)",
                        f"write `np.float32({node.value!r})` instead of `{node.value!r}` on line {line}", line))
        elif isinstance(node, ast.Call) and name_of(node.func).split(".")[-1] in ("float64", "float"):
            text = ast.unparse(node)
            out.append((f"`{text}` on line {line} converts to float64 explicitly",
                        f"write `np.float32({', '.join(map(ast.unparse, node.args))})` instead of `{text}` on line "
                        f"{line}", line))
        elif isinstance(node, ast.Call) and name_of(node.func).startswith("math."):
            out.append((f"`{name_of(node.func)}` on line {line} computes in float64 (its argument is an int or a "
                        "float64)", f"pass it a float32 on line {line}: `{name_of(node.func)}(float32(...))`", line))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and src is f.source and \
                _all_int(f, typing, node):
            out.append((f"`{ast.unparse(node)}` on line {line} divides integers: Python's `/` gives a float64",
                        f"divide float32 values on line {line}: `float32({ast.unparse(node.left)}) / "
                        f"float32({ast.unparse(node.right)})`", line))
    if not out and src is f.source:
        mixed = _int_float_mix(f, typing, line)
        if mixed:
            out.append((f"`{mixed}` on line {line} mixes an integer with a float32: numba computes it in float64",
                        f"cast the integer on line {line}: `float32({mixed.split()[0]})`", line))
    return out


def _variable_origin(src: Any, var: str, ints: bool) -> list[tuple[str, str, int]]:
    """Why the local ``var`` is float64: the float literal (or annotation) it starts from; with ``ints`` (numba
    typed it float64) an int literal too, which numba unifies with float32 to float64."""
    out = []
    for node in ast.walk(src.tree):
        if not (isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None):
            continue
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else \
            getattr(node, "target", None)
        if not (isinstance(target, ast.Name) and target.id == var and isinstance(node.value, ast.Constant)):
            continue
        value, text = node.value.value, ast.unparse(node)
        if isinstance(node, ast.AnnAssign) and name_of(node.annotation) == "float":
            out.append((f"`{var}` starts as `{text}`: numba ignores annotations on locals, and `float` means float64",
                        f"write `{var} = np.float32(0)` instead of `{text}` on line {node.lineno}", node.lineno))
        elif isinstance(value, float):
            out.append((f"`{var}` starts as the float literal `{text}`: a Python float is a float64",
                        f"write `{var} = np.float32({value!r})` instead of `{text}` on line {node.lineno}",
                        node.lineno))
        elif ints and isinstance(value, int) and not isinstance(value, bool):
            out.append((f"`{var}` starts as the int literal `{text}`: numba unifies int and float32 to float64",
                        f"write `{var} = np.float32({value})` instead of `{text}` on line {node.lineno}", node.lineno))
    return out


def _inside_cast(tree: ast.AST, const: ast.Constant) -> bool:
    """Whether a literal is the argument of float32(...) / np.float32(...) (typed float32, not float64)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and const in node.args and name_of(node.func).split(".")[-1] in (
                "float32", "float16", "int32", "int64", "uint32", "uint64", "int16", "int8", "uint8"):
            return True
    return False


def _all_int(f: Facts, typing: Any, node: ast.BinOp) -> bool:
    def is_int(e: ast.expr) -> bool:
        if isinstance(e, ast.Constant):
            return isinstance(e.value, int)
        if isinstance(e, ast.Name):
            ty = f.args.get(e.id)
            if ty is not None:
                return isinstance(ty, nbtypes.Integer)
            found = typing.types_of(e.id)
            return bool(found) and all(re.match(r"u?int\d+|Literal\[int\]", t) for t in found)
        return False
    return is_int(node.left) and is_int(node.right)


def _int_float_mix(f: Facts, typing: Any, line: int) -> str | None:
    """An expression of ``line`` that numba typed float64 from an integer and a float32 operand."""
    stmts = typing.by_line.get(line, [])
    for st in stmts:
        m = re.fullmatch(r"(\S+) ([-+*/]|//) (\S+)", st.expression)
        if st.type != "float64" or not m:
            continue
        kinds = [typing.type_of(v) or "" for v in (m.group(1), m.group(3))]
        if any(k == "float32" for k in kinds) and any(re.match(r"u?int\d+", k) for k in kinds):
            names = [v for v in (m.group(1), m.group(3)) if not v.startswith("$")]
            return f"{names[0] if names else 'an integer'} {m.group(2)} ..."
    return None


# ---- int64 index arithmetic ---------------------------------------------------------------------------------

WIDE_SHARE = 0.05  # share of the hot loop's instructions that are 64-bit helpers, at and above which it is reported


def _wide(ins: Any) -> bool:
    """A SASS instruction that only 64-bit integer arithmetic needs: the high half of an add (.X), of a compare
    (.EX), a sign extension (SHF.R.S32.HI) or a high multiply (IMAD.HI)."""
    parts = ins.opcode.split(".")
    return "X" in parts[1:] or "EX" in parts[1:] or ins.opcode.startswith("SHF.R.S32.HI") or \
        (parts[0] == "IMAD" and "HI" in parts[1:])


def _int64_bounds(f: Facts, header: SourceLoop | None) -> list[str]:
    """The int64 values a loop's test reads: int64 arguments (Python ints) and array shapes; for a loop in a
    device function, the kernel's arguments passed to its parameters."""
    if header is None:
        return []
    test = header.node.test if isinstance(header.node, ast.While) else header.node.iter
    names = _names(test)
    shapes = [f"{name_of(n.value)}.shape" for n in ast.walk(test) if isinstance(n, ast.Attribute) and n.attr == "shape"]
    if header.device:
        dev = f.source.devices.get(header.device)
        calls = [n for n in ast.walk(f.source.tree) if isinstance(n, ast.Call) and name_of(n.func) == header.device]
        names = {a.id for c in calls if dev for p, a in zip(dev.params, c.args)
                 if p in names and isinstance(a, ast.Name)}
    ints = [n for n, t in f.args.items() if isinstance(t, nbtypes.Integer) and t.bitwidth == 64 and n in names]
    return ints + shapes


def check_int64_index(f: Facts) -> Result:
    """64-bit index arithmetic on the hot path: 5% or more of the hot loop's instructions are there only because
    integers are 64-bit (high halves of adds and compares, sign extensions), or the loop test is 64-bit
    (ISETP.EX on the loop's line: an int64 counter or bound, e.g. a Python int or an array's shape)."""
    if f.report is None:
        return NotJudged(f"no SASS ({f.sass_error})")
    region = f.hot_sass()
    if not region:
        return NotJudged("the kernel has no loop")
    access = [i for i in region if i.opcode.split(".")[0] in MEMORY_OPS]
    highs = [i for i in region if "X" in i.opcode.split(".")[1:]]
    wide = [i for i in region if _wide(i)]
    loop = f.hot_ptx_loop
    mul64 = [i for i in f.ptx.instructions[loop[0]:loop[1] + 1] if i.opcode in
             ("mul.lo.s64", "mul.lo.u64", "mad.lo.s64", "mad.lo.u64")] if loop else []
    header = f.hot_source_loop
    bounds = _int64_bounds(f, header)
    test64 = [i for i in (f.hot.instructions if f.hot else []) if i.opcode.startswith("ISETP") and "EX" in
              i.opcode.split(".") and header is not None and f.lines.get(i.address) == header.line] if bounds else []
    ratio = len(highs) / len(access) if access else 0.0
    per_access = len(wide) >= max(3, WIDE_SHARE * len(region))
    if not per_access and not test64:
        return []
    lines = sorted({f.lines.get(i.address, 0) for i in wide + test64} & f.loop_lines) or \
        ([header.line] if header else [])
    int64_sizes = [b for b in bounds if not b.endswith(".shape")]
    hot_lines = {n for n in f.loop_lines if not header or header.line <= n <= header.end}
    two_d = sorted({a.array for a in f.source.accesses if len(a.indices) > 1 and a.line in hot_lines
                    and a.array in f.arrays()})
    fixes, refs = [], []
    if int64_sizes or test64:
        sizes = ", ".join(f"`{n}`" for n in int64_sizes)
        fixes.append("give the loop an int32 counter and bound (numba types Python ints and array shapes as "
                     f"int64{': ' + sizes if sizes else ''}): `int32` in the signature and "
                     "np.int32(...) at the launch, or `n = int32(a.shape[0])`, and `i = int32(0)` ... `i += int32(1)`")
        refs.append("k2-step2")
    if two_d and per_access:
        fixes.append(f"index {', '.join(f'`{a}`' for a in two_d)} as flat 1-D arrays with 32-bit offsets "
                     "(a.reshape(-1) at the launch; `a[x * k + i]` with uint32 x, k, i): a 2-D access multiplies "
                     "by the stride in 64 bits")
        refs.append("k2-step6")
    if per_access:
        fixes.append(("or " if fixes else "") + "promise what C's `int` promises, that the index arithmetic does not "
                     "wrap (numba widens int32 and uint32 arithmetic to 64 bits): `from util.intrinsics import "
                     "add_nsw, mul_nsw, nonneg`, `a[nonneg(add_nsw(row, i))]` with int32 indices; then each address "
                     "is one IMAD.WIDE as in CUDA C")
        refs.append("k2-step8")
    where = "per pass of the hot loop" if f.hot else "in the unrolled loops"
    cost = "; ".join(filter(None, [
        f"{len(wide)} of {len(region)} instructions {where} exist only because integers are 64-bit (high halves "
        f"of adds and compares, sign extensions): {len(highs)} high halves of 64-bit adds for {len(access)} loads "
        f"and stores ({ratio:.2f} per access; CUDA C's kernel 2: 1 per 32 loads)" if per_access else "",
        f"{len(mul64)} 64-bit multiplies in its PTX" if mul64 and per_access else "",
        f"the loop test at line {header.line} compares in 64 bits ({len(test64)} ISETP.EX per pass)" if test64 else "",
        _per_op(f, len(wide) if per_access and f.hot else 0)]))
    return [Finding("int64-index", f"64-bit index arithmetic {where} (line "
                    f"{header.line if header else '?'})", cost, "; ".join(fixes), lines, _src(f, lines),
                    _ptx(mul64), _sass(f, wide if per_access else test64), refs,
                    {"wide_instructions": len(wide), "region_instructions": len(region), "x_halves": len(highs),
                     "accesses": len(access), "x_per_access": round(ratio, 3), "mul64_ptx": len(mul64),
                     "loop_test_64bit": len(test64)})]


# ---- range() loops -----------------------------------------------------------------------------------------

def check_range_loop(f: Facts) -> Result:
    """A ``for ... in range(...)`` hot loop that stays a loop and carries the range iterator's compare/select
    (numba's range_state: NVVM does not strip it, numba issues 4647, 5205)."""
    if not f.source.loops:
        return NotJudged("the kernel has no loop")
    hot = f.hot_source_loop
    carrying = []
    for loop in (lp for lp in f.source.loops if lp.is_range):
        body = [i for lo, hi in f.ptx.loops for i in f.ptx.instructions[lo:hi + 1] if i.line == loop.line]
        selects = [i for i in body if i.opcode.startswith("selp")]
        if selects:
            carrying.append((loop, body))
    if not carrying or hot is None or hot.line not in {lp.line for lp, _ in carrying}:
        return []
    loop, body = next((lp, b) for lp, b in carrying if lp.line == hot.line)
    iterator = [i for i in (f.hot.instructions if f.hot else []) if f.lines.get(i.address) == loop.line]
    others = [lp.line for lp, _ in carrying if lp.line != loop.line]
    cost = (f"{len(iterator)} of the hot loop's {f.hot.size if f.hot else '?'} SASS instructions per pass are the "
            f"iterator's (line {loop.line}); its loop variable may be negative as far as NVVM knows, so the "
            "accesses in the body keep numba's wraparound checks and 64-bit index arithmetic. "
            + _per_op(f, len(iterator))
            + ". A while loop compiles like C's for loop (notebook step 3 -> 4: 119 -> 33 SASS instructions per 4 "
            "FFMA)")
    return [Finding("range-loop", f"the hot loop `{f.source.line(loop.line)}` (line {loop.line}) keeps numba's "
                    "range iterator" + (f"; so do the loops at line(s) {others}" if others else ""),
                    cost, _while_fix(loop), [loop.line], _src(f, [loop.line]), _ptx(body),
                    _sass(f, iterator), ["k2-step4", "ladder-5a"], {"iterator_sass": len(iterator),
                                                                     "iterator_ptx": len(body)})]


def _while_fix(loop: SourceLoop) -> str:
    node = loop.node
    assert isinstance(node, ast.For)
    var = ast.unparse(node.target)
    args = [ast.unparse(a) for a in node.iter.args]
    start, stop, step = ("0", args[0], "1") if len(args) == 1 else (args[0], args[1], args[2] if len(args) > 2 else "1")
    test = ">" if step.startswith("-") else "<"
    return (f"write `{var} = {start}` before the loop and `while {var} {test} {stop}:` instead of "
            f"`{ast.unparse(node).splitlines()[0]}` on line {loop.line}, with `{var} += {step}` as the body's last "
            "statement (and before any `continue`)")


# ---- NumPy's wraparound check ------------------------------------------------------------------------------

def check_wraparound(f: Facts) -> Result:
    """numba's negative-index check (``if i < 0: i += shape``) on accesses of the hot loop: in the loop, or
    hoisted before it. Checks on accesses outside loops cost once per thread and are not reported."""
    checks = f.ptx.wrap_checks
    if not checks:
        return []
    if not f.loop_lines:
        return NotJudged(f"{len(checks)} checks, but the kernel has no loop: they run once per access, not per "
                         "iteration")
    if f.hot_source_loop is not None and f.hot_ptx_loop is None:
        return NotJudged("the hot loop could not be matched in the PTX")
    hot = [c for c in checks if f.in_hot_ptx(c.instructions[-1].index) or any(f.in_hot_ptx(ix) for ix in c.feeds)]
    if not hot:
        return []
    loop = f.hot_ptx_loop
    inside = [c for c in hot if f.ptx.in_loop(c.instructions[-1].index, loop)]
    by_array: dict[str, set[int]] = defaultdict(set)
    for c in hot:
        by_array[c.array or "?"].add(c.dim if c.dim is not None else -1)
    used = {f.ptx.instructions[ix].line for c in hot for ix in c.feeds}
    lines = sorted((used | {c.line for c in hot}) - {0})
    indices, names = _checked_indices(f, by_array, set(lines))
    what = ", ".join(indices) or ", ".join(f"{a} (dims {sorted(d)})" for a, d in by_array.items())
    where = (f"{len(inside)} in the hot loop (per pass)" if inside else
             "hoisted out of the hot loop: once per thread or per pass of an outer loop" if loop else
             "in loops that were unrolled")
    cost = (f"{len(hot)} check(s) ({where}) of {what}: a sign test and a select or add of the array's extent each, "
            "and an index NVVM cannot prove non-negative keeps 64-bit address arithmetic")
    return [Finding("wraparound-check", f"numba's negative-index check on {what}", cost, _unsigned_fix(f, names),
                    lines, _src(f, lines), _ptx([i for c in hot for i in c.instructions]), [], ["k2-step5"],
                    {"checks": len(hot), "in_hot_loop": len(inside)})]


def _checked_indices(f: Facts, by_array: dict[str, set[int]], lines: set[int]) -> tuple[list[str], list[str]]:
    """(```i`` in ``b[i, y]``` texts, the variables in them) for the checked dimensions of the arrays accessed on
    ``lines``."""
    out, names = [], []
    for acc in f.source.accesses:
        if acc.array in by_array and (acc.line in lines or acc.own_line in lines):
            for d in sorted(by_array[acc.array]):
                if 0 <= d < len(acc.indices) and not _provably_unsigned(acc.indices[d]):
                    index = acc.indices[d]
                    text = f"`{ast.unparse(index)}` in `{acc.array}[{', '.join(map(ast.unparse, acc.indices))}]`"
                    out += [text] if text not in out else []
                    names += [n for n in sorted(_names(index)) if n not in names and acc.device is None]
    return out[:6], names


def _unsigned_fix(f: Facts, names: list[str]) -> str:
    """Make the checked indices unsigned where they are made: `x = uint32(...)` on the line that assigns x, a
    uint32 while counter for a range() loop variable."""
    steps = []
    loop_vars = {ast.unparse(lp.node.target): lp for lp in f.source.loops if isinstance(lp.node, ast.For)}
    for name in names:
        if name in loop_vars:
            loop = loop_vars[name]
            args = getattr(loop.node.iter, "args", [])
            start = ast.unparse(args[0]) if len(args) > 1 else "0"
            steps.append(f"count `{name}` with a uint32 while loop from `{name} = uint32({start})` instead of the "
                         f"range() on line {loop.line}")
            continue
        assign = next((n for n in ast.walk(f.source.tree) if isinstance(n, ast.Assign) and len(n.targets) == 1
                       and isinstance(n.targets[0], ast.Name) and n.targets[0].id == name), None)
        if assign is not None:
            steps.append(f"write `{name} = uint32({ast.unparse(assign.value)})` on line {assign.lineno}")
    how = "; ".join(steps[:4]) if steps else "make the indices unsigned (uint32(...) where they are computed)"
    return (f"{how} (numba cannot wrap an unsigned index); or promise a signed index is non-negative: `a[nonneg(i)]`"
            " with `from util.intrinsics import nonneg`")


def _provably_unsigned(node: ast.expr) -> bool:
    return (isinstance(node, ast.Call) and name_of(node.func).split(".")[-1] in ("uint32", "uint64", "nonneg")) \
        or (isinstance(node, ast.Constant) and isinstance(node.value, int) and node.value >= 0)


# ---- unrolling / loads in flight -----------------------------------------------------------------------------

MAX_LOADS_LOW = 8  # global loads per pass of a load-bound loop at or below which unrolling is called low


def check_low_unroll(f: Facts) -> Result:
    """A load-bound hot loop (each global load feeds at most two floating-point operations, no shared memory, no
    barrier, call or atomic) with few global loads per pass: too few loads in flight to cover the latency."""
    if f.report is None:
        return NotJudged(f"no SASS ({f.sass_error})")
    if f.hot is None or f.hot_source_loop is None:
        return NotJudged("the kernel has no loop" if f.hot is None else "the hot loop is no loop of the source")
    loop = f.hot
    loads, shared, fp = loop.global_loads, loop.shared_loads, loop.fp_ops
    if not loads or loads > MAX_LOADS_LOW or shared > loads or fp > 2 * loads:
        return []
    if any(i.opcode.split(".")[0] in ("BAR", "CALL", "ATOM", "ATOMG", "RED", "REDG") for i in loop.instructions):
        return []  # a barrier, a call or an atomic sets this loop's pace, not its loads in flight
    src = f.hot_source_loop
    per_iter = [a for a in f.source.accesses if a.line in _hot_lines(f) and not a.store and a.array in f.arrays()]
    unroll = loads / len(per_iter) if per_iter and loads % len(per_iter) == 0 else None
    lines = [src.line]
    distance = loop.load_to_use
    cost = (f"{loads} global loads in flight per pass of the hot loop"
            + (f" (unrolled {unroll:g}x: {len(per_iter)} loads per iteration)" if unroll else "")
            + f", {fp} floating-point operations"
            + ("" if math.isnan(distance) else f"; load->use distance {distance:.1f} instructions")
            + ". Each pass waits for its loads; CUDA C's kernel 2 is unrolled 16x (32 loads per pass)")
    return [Finding("low-unroll", f"the hot loop (line {src.line}) is load-bound and issues only "
                    f"{loads} global loads per pass", cost,
                    "let NVVM unroll it: compute the addresses as offsets that walk with 32-bit (uint32 or add_nsw) "
                    "arithmetic (kernel 2: `ia += 1; ib += n` instead of `x * k + i` and `i * n + y`, "
                    "numba_vs_cuda_c.ipynb step 7, which NVVM unrolls 16x); or unroll by hand with several "
                    "independent accumulators", lines, _src(f, lines), [],
                    _sass(f, [i for i in loop.instructions if i.opcode.startswith("LDG")]),
                    ["k2-step7", "k2-c-unroll1"], {"global_loads_per_pass": loads, "fp_ops_per_pass": fp,
                                                   "unroll": unroll})]


# ---- registers and occupancy --------------------------------------------------------------------------------

CHEAP_CAP = 0.8  # one more block per SM is suggested only if it needs at most 20% fewer registers


def check_register_occupancy(f: Facts) -> Result:
    """Registers per thread that cap the blocks per SM below what the block size and shared memory allow, when
    that leaves the SM under half its warps (or one block, whose barriers then stall the SM) and one more block
    needs at most 20% fewer registers. A kernel that gets the blocks its launch_bounds ask for is not judged."""
    if f.report is None:
        return NotJudged(f"no SASS ({f.sass_error})")
    if not f.arch.startswith("sm_9"):
        return NotJudged(f"occupancy limits are known here for sm_90 only, not {f.arch}")
    if f.block is None:
        return NotJudged("threads per block unknown: pass block= (or declare launch_bounds)")
    regs, shared, block = f.report.registers, f.report.shared_bytes, f.block
    now = max_blocks_per_sm(regs, block, shared)
    ceiling = max_blocks_per_sm(0, block, shared)
    launch = f.options.get("launch_bounds")
    promised = launch[1] if isinstance(launch, (tuple, list)) and len(launch) > 1 else None
    warps_now, warps_max = now * -(-block // 32), SM90_MAX_THREADS_PER_SM // 32
    if now >= ceiling or (promised and now >= promised):
        return []  # no register limit, or the blocks per SM the kernel's launch_bounds asks for
    target = now + 1
    cap = max((r for r in range(16, 256, 8) if max_blocks_per_sm(r, block, shared) >= target), default=0)
    if cap < CHEAP_CAP * regs or (warps_now >= warps_max // 2 and now > 1):
        return []  # another block costs many registers (spills are likelier than a gain), or half the warps are in
    fix = (f"`@cuda.jit(launch_bounds=({block}, {target}))` (or `max_registers={cap}`): the compiler then keeps "
           f"{cap} registers or fewer and {target} blocks of {block} threads fit on an SM")
    cost = (f"{regs} registers x {block} threads: {now} block(s) per SM ({warps_now} of {warps_max} warps), where "
            f"the block size and {shared} B of shared memory allow {ceiling}; fewer warps to hide latency")
    return [Finding("register-occupancy", f"{regs} registers per thread limit the kernel to {now} block(s) of "
                    f"{block} threads per SM", cost, fix, [f.source.first], _src(f, [f.source.first]), [], [],
                    ["ladder-15-launch-bounds", "k2-step3"], {"registers": regs, "blocks_per_sm": now,
                                                  "blocks_without_register_limit": ceiling,
                                                  "register_cap_for_one_more": cap})]


# ---- local memory --------------------------------------------------------------------------------------------

def check_spills(f: Facts) -> Result:
    """Local memory: register spills, or a ``cuda.local.array`` that could not stay in registers."""
    if f.report is None:
        return NotJudged(f"no SASS ({f.sass_error})")
    r = f.report
    local = [i for i in r.instructions if i.opcode.startswith(("LDL", "STL"))]
    if not (r.stack_bytes or r.local_bytes or local):
        return []
    hot = [i for i in (f.hot.instructions if f.hot else []) if i.opcode.startswith(("LDL", "STL"))]
    local_arrays = {name: line for name, (_, line) in f.source.local_arrays.items()}
    lines = sorted({f.lines.get(i.address, 0) for i in local} - {0})
    touched = sorted({a.array for a in f.source.accesses if a.array in local_arrays and a.line in lines})
    if touched:
        why = (f"the local array(s) {', '.join(f'`{a}`' for a in touched)} live in local memory: numba keeps a "
               "cuda.local.array in registers only when every index is a compile-time constant after unrolling")
        fix = ("index the local array only with constants or loop variables of short constant `range(N)` loops "
               "(which NVVM unrolls fully), or keep the values in scalars")
    else:
        capped = r.registers >= 255 or f.options.get("max_registers") or f.options.get("launch_bounds")
        why = f"register spills at {r.registers} registers per thread" + (
            " (capped by launch_bounds/max_registers)" if capped else "")
        fix = ("relax the register cap (a larger max_registers, or fewer min blocks in launch_bounds)" if capped
               else "keep fewer values live at once (smaller per-thread tiles or accumulators)")
    stores = sum(i.opcode.startswith("STL") for i in local)
    cost = (f"{r.stack_bytes + r.local_bytes} B of local memory per thread; {stores} "
            f"STL and {sum(i.opcode.startswith('LDL') for i in local)} LDL in the kernel, {len(hot)} in the hot loop "
            "(local memory is cached global memory: each access costs an L1 round trip)")
    shown = _src(f, lines + [local_arrays[a] for a in touched])
    return [Finding("spills", why, cost, fix, lines or [f.source.first], shown,
                    [], _sass(f, hot or local), [], {"local_bytes": r.stack_bytes + r.local_bytes,
                                                      "ldl_stl": len(local), "ldl_stl_hot_loop": len(hot)})]


# ---- coalescing ----------------------------------------------------------------------------------------------

def check_uncoalesced(f: Facts) -> Result:
    """Global accesses where consecutive threads (``threadIdx.x``) touch addresses a row (or 32+ bytes) apart:
    a dataflow from ``threadIdx.x`` (and ``cuda.grid``'s x) to each index position, per the arrays' layouts."""
    arrays = f.arrays()
    if not arrays:
        return NotJudged("the kernel takes no arrays")
    bad: list[tuple[Access, str]] = []
    for acc in f.source.accesses:
        ty = arrays.get(acc.array)
        if ty is None or len(acc.indices) != ty.ndim or any(isinstance(i, ast.Slice) for i in acc.indices):
            continue
        why = _stride_apart(f.index_coefs(acc), ty)
        if why:
            bad.append((acc, why))
    looped = [b for b in bad if b[0].loops] if f.loop_lines else bad
    if not looped:
        return []
    lines = sorted({a.line for a, _ in looped})
    shown = list(dict.fromkeys(f"`{a.array}[{', '.join(map(ast.unparse, a.indices))}]`"
                               f"{' (in ' + a.device + ')' if a.device else ''} on line {a.line}: {why}"
                               for a, why in looped))
    assumed = [a for a, _ in looped if arrays[a.array].layout == "A"]
    cost = ("each warp-wide load or store touches 32 different 32-byte sectors instead of 4 consecutive ones: up to "
            "8x the memory transactions" + ("; layout assumed row-major (C): the signature says any layout"
                                            if assumed else ""))
    fixes = []
    if any(arrays[a.array].ndim > 1 for a, _ in looped):
        fixes.append("let threadIdx.x (cuda.grid's x) run along the contiguous index (the last for C order): swap "
                     "the roles of x and y (e.g. `row = cuda.blockIdx.y * 32 + cuda.threadIdx.y`, `col = "
                     "cuda.blockIdx.x * 32 + cuda.threadIdx.x`, index `a[row, col]`), or transpose the array (F "
                     "order), or stage the tile through shared memory")
    if any(arrays[a.array].ndim == 1 for a, _ in looped):
        fixes.append("give consecutive threads consecutive elements: thread t takes `t + j * nthreads` in its j-th "
                     "step instead of `t * n + j`")
    return [Finding("uncoalesced", "consecutive threads access addresses far apart: " + "; ".join(shown[:4]),
                    cost, "; ".join(fixes), lines, _src(f, lines), [], [], ["ladder-2"], {"accesses": len(looped)})]


def _stride_apart(coefs: list[Any], ty: nbtypes.Array) -> str | None:
    """Why consecutive threads' addresses of an access are far apart (its indices move by ``coefs`` from one
    thread to the next along threadIdx.x), or None (coalesced, or unknown)."""
    if any(c is None for c in coefs):
        return None
    fast = 0 if ty.layout == "F" else len(coefs) - 1
    item = ty.dtype.bitwidth // 8 if hasattr(ty.dtype, "bitwidth") else 4
    fast_coef, others = coefs[fast], [c for d, c in enumerate(coefs) if d != fast]
    if fast_coef == UNIFORM and any(c != UNIFORM for c in others):
        return "threadIdx.x moves a non-contiguous index (a row apart)"
    if all(c == UNIFORM for c in others):
        if fast_coef == ROW:
            return "threadIdx.x is multiplied by a run-time size (a row apart)"
        if isinstance(fast_coef, Fraction) and abs(fast_coef) * item >= 32:
            return f"consecutive threads {abs(fast_coef) * item} bytes apart"
    return None


# ---- 16-byte loads -----------------------------------------------------------------------------------------

def check_scalar_loads(f: Facts) -> Result:
    """Four scalar loads of consecutive 4-byte elements (``a[r, q]``, ``a[r, q + 1]`` .. ``a[r, q + 3]``) that
    stayed four 32-bit LDG: numba cannot tell NVVM the row is 16-byte aligned, so it never merges them."""
    if f.report is None:
        return NotJudged(f"no SASS ({f.sass_error})")
    wide = [i for i in f.report.instructions if i.opcode.startswith("LDG") and category(i.opcode) != "LDG.32"]
    if wide:
        return []  # the kernel already loads 16/8 bytes somewhere: its scalar loads are the guarded edge path
    groups = _consecutive_groups(f)
    if not groups:
        return []
    lines = sorted({a.line for g in groups for a in g} | {a.own_line for g in groups for a in g})
    loads = [i for i in f.report.instructions if i.opcode.startswith("LDG") and f.lines.get(i.address) in lines]
    if len(loads) < 4:
        return []
    shown = [f"`{g[0].array}[{', '.join(map(ast.unparse, g[0].indices))}]` .. +3 on line {g[0].line}" for g in groups]
    return [Finding("scalar-loads", "four consecutive 4-byte elements loaded one by one: " + "; ".join(shown[:3]),
                    f"{len(loads)} 32-bit global loads (LDG.E) where one 16-byte LDG.E.128 per four would do: 4x the "
                    "load instructions for these accesses", "load the four with one 16-byte load: `v0, v1, v2, v3 = "
                    "ldg128(a, r, q)` (`from util.intrinsics import ldg128`; the caller guarantees &a[r, q] is "
                    "16-byte aligned, e.g. q % 4 == 0 and rows of a multiple of 4 floats), or ldg128_at(a, i) for "
                    "a flat offset", lines, _src(f, lines), [], _sass(f, loads), ["ladder-6b", "ladder-10b"],
                    {"scalar_loads": len(loads)})]


def _consecutive_groups(f: Facts) -> list[list[Access]]:
    """Loads of one float32/int32 argument array on one line whose contiguous index is E, E+1, E+2, E+3."""
    by_key: dict[tuple[Any, ...], dict[int, Access]] = defaultdict(dict)
    for acc in f.source.accesses:
        ty = f.arrays().get(acc.array)
        if acc.store or ty is None or getattr(ty.dtype, "bitwidth", 0) != 32 or len(acc.indices) != ty.ndim:
            continue
        fast = 0 if ty.layout == "F" else ty.ndim - 1
        base, offset = _split_offset(acc.indices[fast])
        others = tuple(ast.dump(ix) for d, ix in enumerate(acc.indices) if d != fast)
        by_key[(acc.array, acc.own_line, acc.device, base, others)][offset] = acc
    return [[found[o] for o in range(4)] for found in by_key.values() if all(o in found for o in range(4))]


def _split_offset(node: ast.expr) -> tuple[str, int]:
    """``q + 3`` -> ("q", 3); ``q`` -> ("q", 0)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and isinstance(node.right, ast.Constant) \
            and isinstance(node.right.value, int):
        return ast.dump(node.left), node.right.value
    return ast.dump(node), 0


# ---- slow math ---------------------------------------------------------------------------------------------

_IEEE = {"div.rn.f32": "/", "div.rn.ftz.f32": "/", "rcp.rn.f32": "/", "sqrt.rn.f32": "sqrt", "sqrt.rn.ftz.f32": "sqrt",
         "div.rn.f64": "/", "rcp.rn.f64": "/", "sqrt.rn.f64": "sqrt"}
_MATH = ("exp", "log", "log2", "log10", "log1p", "expm1", "pow", "sin", "cos", "tan", "asin", "acos", "atan", "atan2",
         "sinh", "cosh", "tanh", "erf", "erfc", "gamma", "lgamma", "hypot", "cbrt")


def _source_ops(f: Facts, line: int) -> set[str]:
    """What a line's source computes that can become a library sequence: "/", "sqrt", and math function names."""
    out = set()
    for src in [f.source, *f.source.devices.values()]:
        for node in ast.walk(src.tree):
            if getattr(node, "lineno", None) != line:
                continue
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
                out.add("/")
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and _literal_value(node.right) == 0.5:
                out.add("sqrt")
            elif isinstance(node, ast.Call) and name_of(node.func).split(".")[0] in ("math", "np", "numpy", "cmath"):
                name = name_of(node.func).split(".")[-1]
                out.add("sqrt" if name == "sqrt" else name)
    return out


def _literal_value(node: ast.AST) -> Any:
    return node.value if isinstance(node, ast.Constant) else None


def check_slow_math(f: Facts) -> Result:
    """IEEE-exact division and square root (div.rn, sqrt.rn: a dozen instructions and a slow-path branch each)
    written in the source, in loops of a kernel compiled without fastmath; and float64 division, square root and
    math functions in a float32 kernel anywhere (float64 library code is long, and 1/64-rate on consumer GPUs)."""
    if f.options.get("fastmath"):
        return []
    f64_ok = _intended_f64(f)
    found, math_lines = [], set()
    for ins in f.ptx.instructions:
        kind = _IEEE.get(ins.opcode)
        if kind is None or kind not in _source_ops(f, ins.line):
            continue  # a division inside a library function (atan2f ...), not one the source wrote
        double = ins.opcode.endswith("f64")
        if (double and not f64_ok) or (not double and (f.in_hot_ptx(ins.index) or not f.loop_lines)):
            found.append(ins)
    if not f64_ok and any("f64" in i.opcode.split(".") for i in f.ptx.instructions):
        typed = _f64_lines(f)
        for line in sorted(typed):
            names = _source_ops(f, line) & set(_MATH)
            if names and any(i.line == line and "f64" in i.opcode.split(".") for i in f.ptx.instructions):
                math_lines.add(line)
                found += [i for i in f.ptx.instructions if i.line == line and i.opcode.startswith(("fma.rn.f64",
                                                                                                   "ex2", "lg2"))][:2]
    if not found:
        return []
    lines = sorted({i.line for i in found} - {0})
    kinds = Counter(i.opcode for i in found if i.opcode in _IEEE)
    what = [f"{n} {k}" for k, n in kinds.items()] + [f"float64 {'/'.join(sorted(_source_ops(f, ln) & set(_MATH)))} on "
                                                      f"line {ln}" for ln in sorted(math_lines)]
    in_loops = [i for i in found if f.in_hot_ptx(i.index)]
    cost = (f"{', '.join(what)}; {len(in_loops)} of them in the hot loop. An IEEE division or square root expands to "
            "~10-20 SASS instructions with a slow-path branch (with fastmath: MUFU.RCP/MUFU.RSQ and 1-2 FMUL); a "
            "float64 math function is a long float64 sequence")
    fixes = []
    if kinds and any(k.endswith("f32") for k in kinds):
        fixes.append("compile with `@cuda.jit(fastmath=True)` (approximate division and square root) if a few ulp "
                     "are acceptable, or multiply by a reciprocal computed once outside the loop")
    if any(k.endswith("f64") for k in kinds) or math_lines:
        fixes.append("compute in float32: make the operands float32 (np.float32 literals, float32(...) casts) so "
                     "numba calls the float32 functions (expf, sqrtf ...) and divides in float32")
    return [Finding("slow-math", f"IEEE/float64 math on line(s) {lines}: {', '.join(what)}", cost, "; ".join(fixes),
                    lines, _src(f, lines), _ptx(found), [], [], {"ieee_ops": sum(kinds.values()),
                                                                  "f64_math_lines": len(math_lines)})]


CHECKS: dict[str, Callable[[Facts], Result]] = {
    "fp64": check_fp64,
    "int64-index": check_int64_index,
    "range-loop": check_range_loop,
    "wraparound-check": check_wraparound,
    "low-unroll": check_low_unroll,
    "register-occupancy": check_register_occupancy,
    "spills": check_spills,
    "uncoalesced": check_uncoalesced,
    "scalar-loads": check_scalar_loads,
    "slow-math": check_slow_math,
}
