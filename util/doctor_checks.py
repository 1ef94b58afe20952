"""The checks of util.doctor: one function per tag, each reading ``Facts`` (util.doctor_facts) and returning its
findings, or ``NotJudged`` with the reason when the kernel gives it nothing to judge.

Every check is conservative: it reports only what the machine code shows and the source explains (a precise
finding is worth more than a guess), and it names the evidence: the Python lines, and the PTX and SASS
instructions with their source lines. ``refs`` name rows of util.doctor.MEASURED, the notebooks' measurements of
the same fix.
"""

from __future__ import annotations

import ast
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable

from numba.core import types as nbtypes

from .doctor_facts import ROW, UNIFORM, Access, Facts, SourceLoop, _name_of
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


def _per_op(f: Facts) -> str:
    loop = f.hot
    if loop is None or not loop.fp_ops:
        return ""
    return f"{loop.size} instructions for {loop.fp_ops} floating-point operations per pass ({loop.size / loop.fp_ops:.1f} each)"


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _nodes_on(f: Facts, line: int) -> list[ast.AST]:
    return [n for n in ast.walk(f.source.tree) if getattr(n, "lineno", None) == line]


# ---- fp64 --------------------------------------------------------------------------------------------------

_F64_NOT_WORK = ("mov", "ld.param", "st.param")


def check_fp64(f: Facts) -> Result:
    """Double-precision instructions in a float32 kernel's hot path, with the line and cause of the double."""
    arrays = f.arrays()
    if any(t.dtype in (nbtypes.float64, nbtypes.complex128) for t in arrays.values()):
        return NotJudged("the kernel takes float64 arrays: double precision is taken as intended")
    f64 = [i for i in f.ptx.instructions if "f64" in i.opcode.split(".") and not i.opcode.startswith(_F64_NOT_WORK)]
    if not f64:
        return []
    hot = [i for i in f64 if any(lo <= i.index <= hi for lo, hi in f.ptx.loops)] if f.ptx.loops else f64
    if not hot:
        return NotJudged(f"{len(f64)} float64 instructions, all outside loops (lines "
                         f"{sorted({i.line for i in f64})}): once per thread, not judged a cost")
    typing = f.typing()
    causes: dict[str, tuple[str, int]] = {}  # cause -> (fix, line)
    for line in sorted({i.line for i in hot if i.line}):
        for cause, fix, at in _f64_causes(f, typing, line):
            causes.setdefault(cause, (fix, at))
    sass_f64 = [i for i in (f.hot.instructions if f.hot else []) if category(i.opcode) == "f64"
                or i.opcode.startswith(("F2F.F64", "F2F.F32.F64", "I2F.F64", "F2I.F64"))]
    lines = sorted({i.line for i in hot if i.line} | {at for _, at in causes.values()})
    cost = (f"{len(hot)} float64 PTX instructions in loops"
            + (f"; the hot loop does {len(sass_f64)} fp64 SASS instructions (DADD/DFMA/DMUL and F2F conversions) "
               f"per pass, {f.hot.fp_ops} floating-point operations in all" if f.hot and sass_f64 else "")
            + ". fp64 runs at 1/2 the fp32 rate on an H100/H200 but 1/64 on consumer GPUs (RTX 30xx/40xx, L4)")
    why = "; ".join(causes) or "a value numba typed float64 (see the PTX lines)"
    fixes = "; ".join(dict.fromkeys(fix for fix, _ in causes.values())) or \
        "keep every value float32: wrap literals as np.float32(...) and cast ints with float32(...)"
    return [Finding("fp64", f"float64 arithmetic in the loop at line(s) {sorted({i.line for i in hot if i.line})}: "
                    f"{why}", cost, fixes, lines, _src(f, lines), _ptx(hot), _sass(f, sass_f64),
                    ["k2-step1", "variants-f32"], {"f64_ptx_in_loops": len(hot), "f64_sass_hot_loop": len(sass_f64)})]


def _f64_causes(f: Facts, typing: Any, line: int) -> list[tuple[str, str, int]]:
    """(cause, fix, line of the fix) for the float64 arithmetic numba put on ``line``."""
    out: list[tuple[str, str, int]] = []
    nodes = _nodes_on(f, line)
    args = f.args
    seen_vars: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Name) and node.id not in seen_vars:
            seen_vars.add(node.id)
            ty = args.get(node.id)
            if ty is not None and isinstance(ty, nbtypes.Float) and ty.bitwidth == 64:
                out.append((f"the argument `{node.id}` is float64 (a Python float passed to the kernel)",
                            f"declare `{node.id}` float32 in the signature and pass np.float32({node.id})",
                            f.source.first))
            elif ty is None and "float64" in typing.types_of(node.id):
                out += _variable_origin(f, node.id)
    for node in nodes:
        if isinstance(node, ast.Constant) and isinstance(node.value, float) and not _inside_cast(f, node):
            out.append((f"the float literal `{node.value!r}` on line {line} is a Python float (float64)",
                        f"write `np.float32({node.value!r})` instead of `{node.value!r}` on line {line}", line))
        elif isinstance(node, ast.Call) and _name_of(node.func).startswith("math."):
            out.append((f"`{_name_of(node.func)}` on line {line} computes in float64 (its argument is an int or a "
                        "float64)", f"pass it a float32 on line {line}: `{_name_of(node.func)}(float32(...))`", line))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and _all_int(f, typing, node):
            out.append((f"`{ast.unparse(node)}` on line {line} divides integers: Python's `/` gives a float64",
                        f"divide float32 values on line {line}: `float32({ast.unparse(node.left)}) / "
                        f"float32({ast.unparse(node.right)})`", line))
    if not out:
        mixed = _int_float_mix(f, typing, line)
        if mixed:
            out.append((f"`{mixed}` on line {line} mixes an integer with a float32: numba computes it in float64",
                        f"cast the integer on line {line}: `float32({mixed.split()[0]})`", line))
    return out


def _variable_origin(f: Facts, var: str) -> list[tuple[str, str, int]]:
    """Why numba typed the local ``var`` float64: the literal or annotation it starts from."""
    out = []
    for node in ast.walk(f.source.tree):
        value = target = annotation = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            target, value, annotation = node.target.id, node.value, node.annotation
        if target != var or value is None:
            continue
        text = ast.unparse(node)
        if annotation is not None and _name_of(annotation) == "float":
            out.append((f"`{var}` starts as `{text}`: numba ignores annotations on locals, and `float` means float64",
                        f"write `{var} = np.float32(0)` instead of `{text}` on line {node.lineno}", node.lineno))
        elif isinstance(value, ast.Constant) and isinstance(value.value, bool) is False and \
                isinstance(value.value, int):
            out.append((f"`{var}` starts as the int literal `{text}`: numba unifies int and float32 to float64",
                        f"write `{var} = np.float32({value.value})` instead of `{text}` on line {node.lineno}",
                        node.lineno))
        elif isinstance(value, ast.Constant) and isinstance(value.value, float):
            out.append((f"`{var}` starts as the float literal `{text}`: a Python float is a float64",
                        f"write `{var} = np.float32({value.value!r})` instead of `{text}` on line {node.lineno}",
                        node.lineno))
    return out


def _inside_cast(f: Facts, const: ast.Constant) -> bool:
    """Whether a literal is the argument of float32(...) / np.float32(...) (typed float32, not float64)."""
    for node in ast.walk(f.source.tree):
        if isinstance(node, ast.Call) and const in node.args and _name_of(node.func).split(".")[-1] in (
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

X_PER_ACCESS = 0.5  # 64-bit add halves per memory access above which index arithmetic counts as 64-bit


def check_int64_index(f: Facts) -> Result:
    """64-bit address arithmetic per access in the hot loop: the high halves of 64-bit adds (IADD3.X, IMAD.X,
    LEA.HI.X) per load or store, and 64-bit multiplies (mul.lo.s64) in the PTX loop."""
    if f.report is None:
        return NotJudged(f"no SASS ({f.sass_error})")
    if f.hot is None:
        return NotJudged("the kernel has no loop")
    access = [i for i in f.hot.instructions if i.opcode.split(".")[0] in MEMORY_OPS]
    if not access:
        return NotJudged("the hot loop has no loads or stores")
    highs = [i for i in f.hot.instructions if "X" in i.opcode.split(".")[1:]]
    loop = f.hot_ptx_loop
    mul64 = [i for i in f.ptx.instructions[loop[0]:loop[1] + 1] if loop and i.opcode in
             ("mul.lo.s64", "mul.lo.u64", "mad.lo.s64", "mad.lo.u64")] if loop else []
    ratio = len(highs) / len(access)
    if ratio < X_PER_ACCESS and not (mul64 and ratio >= X_PER_ACCESS / 2):
        return []
    hot_lines = _hot_lines(f)
    lines = sorted({f.lines.get(i.address, 0) for i in highs} & hot_lines) or sorted(hot_lines)
    int64_sizes = [n for n, t in f.args.items() if isinstance(t, nbtypes.Integer) and t.bitwidth == 64
                   and any(n in _names(node) for lp in [f.hot_source_loop] if lp for node in [lp.node])]
    two_d = sorted({a.array for a in f.source.accesses if len(a.indices) > 1 and a.line in hot_lines
                    and a.array in f.arrays()})
    fixes, refs = [], []
    if int64_sizes:
        fixes.append(f"pass the sizes as int32 ({', '.join(f'`{n}`' for n in int64_sizes)} are int64: Python ints "
                     "are int64 to numba): `int32` in the signature and np.int32(...) at the launch")
        refs.append("k2-step2")
    if two_d:
        fixes.append(f"index {', '.join(f'`{a}`' for a in two_d)} as flat 1-D arrays with 32-bit offsets "
                     "(a.reshape(-1) at the launch; `a[x * k + i]` with uint32 x, k, i): a 2-D access multiplies "
                     "by the stride in 64 bits")
        refs.append("k2-step6")
    fixes.append("or promise what C's `int` promises, that the index arithmetic does not wrap: "
                 "`from util.intrinsics import add_nsw, mul_nsw, nonneg`, `a[nonneg(add_nsw(row, i))]`; then each "
                 "address is one IMAD.WIDE as in CUDA C")
    refs.append("k2-step8")
    cost = (f"{len(highs)} high halves of 64-bit adds (IADD3.X/IMAD.X/LEA.HI.X) for {len(access)} loads and stores "
            f"per pass of the hot loop ({ratio:.2f} per access; CUDA C's kernel 2: 1 per 32 loads)"
            + (f", and {len(mul64)} 64-bit multiplies in its PTX" if mul64 else "") + f"; {_per_op(f)}")
    return [Finding("int64-index", f"64-bit index arithmetic per access in the hot loop (line "
                    f"{f.hot_source_loop.line if f.hot_source_loop else '?'})", cost, "; ".join(fixes), lines,
                    _src(f, lines), _ptx(mul64), _sass(f, highs), refs,
                    {"x_halves": len(highs), "accesses": len(access), "x_per_access": round(ratio, 3),
                     "mul64_ptx": len(mul64)})]


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
            "accesses in the body keep numba's wraparound checks and 64-bit index arithmetic. " + _per_op(f)
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
    loop = f.hot_ptx_loop
    if f.ptx.loops:
        if loop is None:
            return NotJudged("the hot loop could not be matched in the PTX")
        hot = [c for c in checks if f.ptx.in_loop(c.instructions[-1].index, loop)
               or any(f.ptx.in_loop(ix, loop) for ix in c.feeds)]
    else:
        hot = checks
    if not hot:
        return []
    inside = [c for c in hot if f.ptx.in_loop(c.instructions[-1].index, loop)]
    by_array: dict[str, set[int]] = defaultdict(set)
    for c in hot:
        by_array[c.array or "?"].add(c.dim if c.dim is not None else -1)
    used = {f.ptx.instructions[ix].line for c in hot for ix in c.feeds}
    lines = sorted((used | {c.line for c in hot}) - {0})
    indices = _checked_indices(f, by_array, set(lines))
    what = ", ".join(indices) or ", ".join(f"{a} (dims {sorted(d)})" for a, d in by_array.items())
    where = (f"{len(inside)} in the hot loop (per pass)" if inside else "hoisted before the hot loop (per thread)")
    cost = (f"{len(hot)} checks ({where}) of the indices {what}: a sign test and a select or add of the array's "
            "extent each, and an index NVVM cannot prove non-negative keeps 64-bit address arithmetic")
    return [Finding("wraparound-check", f"numba's negative-index check on {what}", cost,
                    "make the indices unsigned, e.g. `x = uint32(cuda.blockIdx.x * 32 + cuda.threadIdx.x // 32)` "
                    "and a `uint32` loop counter (numba cannot wrap an unsigned index), or promise a signed one is "
                    "non-negative: `a[nonneg(i)]` with `from util.intrinsics import nonneg`",
                    lines, _src(f, lines), _ptx([i for c in hot for i in c.instructions]), [], ["k2-step5"], {"checks": len(hot), "in_hot_loop": len(inside)})]


def _checked_indices(f: Facts, by_array: dict[str, set[int]], lines: set[int]) -> list[str]:
    """``b[i, y]: i`` for the checked dimensions of the arrays accessed on ``lines``."""
    out = []
    for acc in f.source.accesses:
        if acc.array in by_array and acc.line in lines:
            for d in sorted(by_array[acc.array]):
                if 0 <= d < len(acc.indices) and not _provably_unsigned(acc.indices[d]):
                    text = f"`{ast.unparse(acc.indices[d])}` in `{acc.array}[{', '.join(map(ast.unparse, acc.indices))}]`"
                    if text not in out:
                        out.append(text)
    return out[:6]


def _provably_unsigned(node: ast.expr) -> bool:
    return (isinstance(node, ast.Call) and _name_of(node.func).split(".")[-1] in ("uint32", "uint64", "nonneg")) \
        or (isinstance(node, ast.Constant) and isinstance(node.value, int) and node.value >= 0)


# ---- unrolling / loads in flight -----------------------------------------------------------------------------

MAX_LOADS_LOW = 8  # global loads per pass of a load-bound loop at or below which unrolling is called low


def check_low_unroll(f: Facts) -> Result:
    """A load-bound hot loop (each global load feeds at most two floating-point operations, no shared memory)
    with few global loads per pass: too few loads in flight to cover the memory latency."""
    if f.report is None:
        return NotJudged(f"no SASS ({f.sass_error})")
    if f.hot is None:
        return NotJudged("the kernel has no loop")
    loop = f.hot
    loads, shared, fp = loop.global_loads, loop.shared_loads, loop.fp_ops
    if not loads or loads > MAX_LOADS_LOW or shared > loads or fp > 2 * loads:
        return []
    src = f.hot_source_loop
    per_iter = [a for a in f.source.accesses if src and a.line in _hot_lines(f) and not a.store
                and a.array in f.arrays()]
    unroll = loads / len(per_iter) if per_iter and loads % len(per_iter) == 0 else None
    lines = [src.line] if src else []
    cost = (f"{loads} global loads in flight per pass of the hot loop"
            + (f" (unrolled {unroll:g}x: {len(per_iter)} loads per iteration)" if unroll else "")
            + f", {fp} floating-point operations" + (f"; load->use distance {distance:.1f} instructions" if
                                                   (distance := loop_load_to_use(f)) == distance else "") + ". "
            "Each pass waits for its loads; CUDA C's kernel 2 is unrolled 16x (32 loads per pass)")
    return [Finding("low-unroll", f"the hot loop (line {src.line if src else '?'}) is load-bound and issues only "
                    f"{loads} global loads per pass", cost,
                    "let NVVM unroll it: write the indices as offsets that walk (`ia += 1; ib += n` instead of "
                    "recomputing `x * k + i` and `i * n + y`) with 32-bit (uint32 or add_nsw) arithmetic, as in "
                    "numba_vs_cuda_c.ipynb step 7 (NVVM then unrolls 16x); or unroll by hand with several "
                    "independent accumulators", lines, _src(f, lines), [],
                    _sass(f, [i for i in loop.instructions if i.opcode.startswith("LDG")]),
                    ["k2-step7", "k2-c-unroll1"], {"global_loads_per_pass": loads, "fp_ops_per_pass": fp,
                                                   "unroll": unroll})]


def loop_load_to_use(f: Facts) -> float:
    from .sass import HotLoop

    assert f.hot is not None
    return HotLoop(f.hot.start, f.hot.end, f.hot.instructions).load_to_use


# ---- registers and occupancy --------------------------------------------------------------------------------

CHEAP_CAP = 0.8  # one more block per SM is suggested only if it needs at most 20% fewer registers

def check_register_occupancy(f: Facts) -> Result:
    """Registers per thread that cap the blocks per SM below what the block size and shared memory allow."""
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
    if cap < CHEAP_CAP * regs or (warps_now >= warps_max // 4 and now > 1):
        return []  # another block would cost many registers (spills), or a quarter of the SM's warps are there
    fix = (f"`@cuda.jit(launch_bounds=({block}, {target}))` (or `max_registers={cap}`): the compiler then keeps "
           f"{cap} registers or fewer and {target} blocks of {block} threads fit on an SM")
    cost = (f"{regs} registers x {block} threads: {now} block(s) per SM ({warps_now} of {warps_max} warps), where "
            f"the block size and {shared} B of shared memory allow {ceiling}; fewer warps to hide latency")
    return [Finding("register-occupancy", f"{regs} registers per thread limit the kernel to {now} block(s) of "
                    f"{block} threads per SM", cost, fix, [f.source.first], _src(f, [f.source.first]), [], [],
                    ["ladder-15-launch-bounds"], {"registers": regs, "blocks_per_sm": now,
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
    local_arrays = {t.id: n.lineno for n in ast.walk(f.source.tree) if isinstance(n, ast.Assign)
                    for t in n.targets if isinstance(t, ast.Name) and isinstance(n.value, ast.Call)
                    and _name_of(n.value.func).endswith("local.array")}
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
    cost = (f"{r.stack_bytes + r.local_bytes} B of local memory per thread; {sum(i.opcode.startswith('STL') for i in local)} "
            f"STL and {sum(i.opcode.startswith('LDL') for i in local)} LDL in the kernel, {len(hot)} in the hot loop "
            "(local memory is cached global memory: each access costs an L1 round trip)")
    return [Finding("spills", why, cost, fix, lines or [f.source.first], _src(f, lines + [local_arrays[a] for a in touched]),
                    [], _sass(f, hot or local), [], {"local_bytes": r.stack_bytes + r.local_bytes,
                                                      "ldl_stl": len(local), "ldl_stl_hot_loop": len(hot)})]


# ---- coalescing ----------------------------------------------------------------------------------------------

def check_uncoalesced(f: Facts) -> Result:
    """Global accesses where consecutive threads (``threadIdx.x``) touch addresses a row (or 32+ bytes) apart:
    a dataflow from ``threadIdx.x`` (and ``cuda.grid``'s x) to each index position, per the arrays' layouts."""
    arrays = f.arrays()
    if not arrays:
        return NotJudged("the kernel takes no arrays")
    flow = f.tx
    bad: list[tuple[Access, str]] = []
    for acc in f.source.accesses:
        ty = arrays.get(acc.array)
        if ty is None or len(acc.indices) != ty.ndim or any(isinstance(i, ast.Slice) for i in acc.indices):
            continue
        why = _stride_apart(flow, acc, ty)
        if why:
            bad.append((acc, why))
    looped = [b for b in bad if b[0].loops] if f.loops or f.ptx.loops else bad
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
    return [Finding("uncoalesced", "consecutive threads access addresses a row apart: " + "; ".join(shown[:4]),
                    cost, "let threadIdx.x (cuda.grid's x) run along the last, contiguous index: swap the roles of "
                    "x and y in the index computation (e.g. `row = cuda.blockIdx.y * 32 + cuda.threadIdx.y`, "
                    "`col = cuda.blockIdx.x * 32 + cuda.threadIdx.x`, and index `a[row, col]`), or stage the tile "
                    "through shared memory", lines, _src(f, lines), [], [], ["ladder-2"],
                    {"accesses": len(looped)})]


def _stride_apart(flow: Any, acc: Access, ty: nbtypes.Array) -> str | None:
    """Why consecutive threads' addresses of this access are far apart, or None (coalesced or unknown)."""
    coefs = [flow.coef(ix) for ix in acc.indices]
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

_IEEE = ("div.rn.f32", "sqrt.rn.f32", "rcp.rn.f32", "div.rn.ftz.f32", "sqrt.rn.ftz.f32")


def check_slow_math(f: Facts) -> Result:
    """IEEE-exact float32 division and square root (div.rn.f32, sqrt.rn.f32: a dozen instructions and a branch to a
    slow path each) in the hot path of a kernel compiled without fastmath."""
    if f.options.get("fastmath"):
        return []
    ieee = [i for i in f.ptx.instructions if i.opcode in _IEEE]
    if not ieee:
        return []
    if f.ptx.loops:
        ieee = [i for i in ieee if any(lo <= i.index <= hi for lo, hi in f.ptx.loops)]
        if not ieee:
            return []
    lines = sorted({i.line for i in ieee} - {0})
    kinds = Counter(i.opcode for i in ieee)
    return [Finding("slow-math", f"IEEE float32 {', '.join(k.split('.')[0] for k in kinds)} on line(s) {lines}",
                    f"{', '.join(f'{n} {k}' for k, n in kinds.items())} in loops; each expands to ~10-20 SASS "
                    "instructions with a slow-path branch (fastmath: 2-3, MUFU.RCP/MUFU.RSQ)",
                    "compile with `@cuda.jit(fastmath=True)` (approximate division and square root, flush "
                    "denormals) if a few ulp are acceptable, or multiply by a reciprocal computed once outside the "
                    "loop", lines, _src(f, lines), _ptx(ieee), [], [], {"ieee_ops": len(ieee)})]


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
