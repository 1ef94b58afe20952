"""What util.doctor judges from: a kernel's machine code with source lines, its source, and numba's typing.

``gather(kernel, sig, arch, block)`` compiles the kernel once (``numba_ptx(..., lineinfo=True)``, its device
functions with line information too, then ptxas with ``-lineinfo`` so that every SASS instruction carries its
Python line) and returns ``Facts``:

- the source (util.doctor_source): the kernel's ``def`` and its device functions as ASTs, their loops and array
  accesses, and how each index moves with ``cuda.threadIdx.x`` (``TxFlow``);
- the PTX: instructions with lines, loops, numba's negative-index checks (``WrapCheck``), which parameter
  register is which array's shape or stride;
- the SASS: ``util.sass.analyze`` (registers, spills, instructions), each instruction's source line, and the hot
  loop (``MachineLoop``);
- numba's typing (``Facts.typing``), compiled only when a check asks for it (a second child compile).

Bad input raises ``DoctorError`` with a message that says what to do.
"""

from __future__ import annotations

import re
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from types import CellType, CodeType, FunctionType
from typing import Any

from numba.core import types as nbtypes

from .backend import is_kernel
from .compile import PtxCompileError, numba_ptx, numba_types
from .doctor_source import Access, DoctorError, Source, SourceLoop, TxFlow
from .ptx import PtxInstruction, PtxKernel, ptx_kernels
from .sass import HotLoop, Instruction, KernelReport, analyze, category, find_loops, line_table
from .ship import jit_options, py_func
from .toolchain import ToolchainError, run_tool

SIG_FORM = ('numba\'s string form: the argument types in parentheses, e.g. "(float32[:, ::1], float32[:, ::1], '
            'float32[:, ::1], int64)" (C-contiguous 2-D float32 arrays and a Python int), "(float32[::1], int32)", '
            'or "void(float64[:], float64)"; or a tuple of numba types')


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
    itemsize, data, shape[0..n), strides[0..n), and a number as one parameter. It stops at the first argument
    of another kind (a tuple, a record, a complex): the positions after it are not known here."""
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
            break
    return out


_OPERANDS = re.compile(r"%[\w]+")


def _operands(ins: PtxInstruction) -> list[str]:
    """The operands of a PTX instruction, destination first: ``add.s64 %rd5, %rd4, 32`` -> [%rd5, %rd4, 32]."""
    body = ins.text.split(None, 1)[1] if " " in ins.text or "\t" in ins.text else ""
    if ins.text.startswith("@"):
        body = body.split(None, 1)[1] if " " in body else ""
    return [p.strip().strip("[]{}") for p in body.split(",") if p.strip()]


class PtxFacts:
    """The kernel's PTX: instructions with source lines, loops, registers' definitions and numba's checks."""

    def __init__(self, ptx: str, sig: tuple[nbtypes.Type, ...], params: list[str], filename: str,
                 extents: dict[int, tuple[str, int]] | None = None):
        kernels = ptx_kernels(ptx)
        if not kernels:
            raise DoctorError("numba's PTX has no kernel (.entry): nothing to judge")
        self.kernel: PtxKernel = kernels[0]
        # lines of other files (numba's own device functions, e.g. numba.cuda.random) are not the kernel's: 0
        self.instructions = [i if i.file in (filename, None) else replace(i, line=0) for i in self.kernel.instructions]
        self.loops = self.kernel.loops()
        self.extents = extents or {}  # a constant extent of a shared or local array -> (array, dim)
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
        for _ in range(2):  # copies of a parameter (mov, cvta), or a choice between two arrays' same field (selp:
            for reg, ins_list in self.defs.items():  # `data = a if ... else b`), keep its meaning
                src = _OPERANDS.findall(ins_list[0].text)[1:]
                op = ins_list[0].opcode.split(".")[0]
                if len(ins_list) != 1 or reg in self.param_of or not all(r in self.param_of for r in src[:2]):
                    continue
                if op in ("mov", "cvta") and len(src) == 1:
                    self.param_of[reg] = self.param_of[src[0]]
                elif op == "selp" and len(src) == 3 and self.param_of[src[0]][1:] == self.param_of[src[1]][1:]:
                    (a, field_, dim), b = self.param_of[src[0]], self.param_of[src[1]][0]
                    self.param_of[reg] = (f"{a}/{b}", field_, dim)
        self.users: dict[str, list[PtxInstruction]] = {}  # register -> the instructions that read it
        for ins in self.instructions:
            ops = _OPERANDS.findall(ins.text)
            for reg in set(ops if ins.opcode.startswith(("st.", "@")) else ops[1:]):
                self.users.setdefault(reg, []).append(ins)
        self.wrap_checks = self._wrap_checks()

    def in_loop(self, index: int, loop: tuple[int, int] | None) -> bool:
        return loop is not None and loop[0] <= index <= loop[1]

    def _def(self, reg: str) -> PtxInstruction | None:
        found = self.defs.get(reg, [])
        return found[0] if len(found) == 1 else None

    def _tested(self, reg: str) -> tuple[PtxInstruction, str] | None:
        """(sign test, index register) when ``reg`` is the sign of an index: ``shr.s64 reg, i, 63``,
        ``setp.lt.sNN reg, i, c`` (``i + -c < 0``) or ``and.b64 reg, i, 0x8000000000000000``; None when ``i`` is
        the remainder of Python's ``%`` (whose sign fix-up adds the divisor the same way)."""
        ins = self._def(reg)
        if ins is None:
            return None
        ops = _operands(ins)
        if len(ops) != 3:
            return None
        sign = ((ins.opcode in ("shr.s64", "shr.s32") and ops[2] in ("63", "31"))
                or (ins.opcode.startswith("setp.lt.s") and re.fullmatch(r"-?\d+", ops[2]) is not None)
                or (ins.opcode == "and.b64" and ops[2] == "-9223372036854775808"))
        if not sign:
            return None
        index = self._def(ops[1])
        if index is not None and (index.opcode.startswith("rem.") or (index.opcode.startswith("sub.") and any(
                (d := self._def(r)) is not None and d.opcode.startswith("and.") and _operands(d)[-1].startswith("-")
                for r in _operands(index)[1:]))):
            return None
        return ins, ops[1]

    def _extent(self, operand: str) -> tuple[str, int] | None:
        """(array, dim) when ``operand`` is an array's extent: a shape parameter, or a constant that is an extent
        of one of the kernel's shared or local arrays."""
        if operand in self.param_of and self.param_of[operand][1] == "shape":
            return self.param_of[operand][0], self.param_of[operand][2]
        if re.fullmatch(r"\d+", operand) and int(operand) in self.extents:
            return self.extents[int(operand)]
        return None

    def _wrap_checks(self) -> list[WrapCheck]:
        """numba adds the array's extent to a negative index (NumPy's wraparound): ``and x, sign, extent``,
        ``selp x, extent, 0, sign``, ``selp x, i + extent, i, sign``, or for a constant extent 2**k
        ``shr.u64 x, (i & sign bit), 63 - k``. An added value that is no array's extent is not such a check."""
        out = []
        for ins in self.instructions:
            ops = _operands(ins)
            found = None
            if ins.opcode in ("and.b64", "and.b32") and len(ops) == 3:
                for a, b in ((ops[1], ops[2]), (ops[2], ops[1])):
                    if (test := self._tested(a)) and test[0].opcode.startswith("shr") and (ext := self._extent(b)):
                        found = (test[0], ext)
            elif ins.opcode == "shr.u64" and len(ops) == 3 and ops[2].isdigit():
                test = self._tested(ops[1])
                ext = self._extent(str(2 ** (63 - int(ops[2])))) if test and test[0].opcode == "and.b64" else None
                if test and ext:
                    found = (test[0], ext)
            elif ins.opcode in ("selp.b64", "selp.b32") and len(ops) == 4 and (test := self._tested(ops[3])):
                if ops[2] == "0" and (ext := self._extent(ops[1])):
                    found = (test[0], ext)
                elif ops[2] == test[1] and (add := self._def(ops[1])) is not None and add.opcode.startswith("add."):
                    ext = next((e for r in _operands(add)[1:] if (e := self._extent(r))), None)
                    found = (test[0], ext) if ext else None
            if found:
                out.append(WrapCheck((found[0], ins), found[1][0], found[1][1], frozenset(self._feeds(ins))))
        return out

    def _feeds(self, start: PtxInstruction) -> set[int]:
        """Indices of the loads and stores whose address depends on ``start``'s result (forward dataflow)."""
        first = _OPERANDS.findall(start.text)
        todo, seen, out = [first[0]] if first else [], set(), set()
        while todo:
            reg = todo.pop()
            if reg in seen:
                continue
            seen.add(reg)
            for ins in self.users.get(reg, []):
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
    def fp_ops(self) -> int:
        """Floating-point arithmetic of one pass: FFMA, FADD, FMUL and their f64 and f16 kinds."""
        return fp_ops(self.instructions)

    @property
    def global_loads(self) -> int:
        """Global loads of one pass: LDG, and generic LD (numba's loads from arrays of any layout, ``[:]``)."""
        return sum(i.opcode.split(".")[0] in ("LDG", "LD") for i in self.instructions)

    @property
    def shared_loads(self) -> int:
        return sum(i.opcode.startswith("LDS") for i in self.instructions)

    @property
    def size(self) -> int:
        return len(self.instructions)

    @property
    def load_to_use(self) -> float:
        """util.sass's load->use distance of this loop (NaN when no FFMA reads a loaded value)."""
        return HotLoop(self.start, self.end, self.instructions).load_to_use


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


def cubin_with_lines(ptx: str, arch: str) -> tuple[bytes, str | None]:
    """ptxas ``-lineinfo``: a cubin whose SASS instructions carry the ``.loc`` lines of the PTX, and a note when
    it had to be assembled as relocatable code (``-c``: calls to functions only the CUDA driver links, such as
    cooperative groups' grid sync)."""
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp, "kernel.ptx"), Path(tmp, "kernel.cubin")
        src.write_text(ptx)
        try:
            run_tool("ptxas", f"-arch={arch}", "-lineinfo", "-o", out, src)
            return out.read_bytes(), None
        except ToolchainError as e:
            if "Unresolved extern function" not in str(e):
                raise
            run_tool("ptxas", f"-arch={arch}", "-lineinfo", "-c", "-o", out, src)
            name = re.search(r"Unresolved extern function '([^']+)'", str(e))
            return out.read_bytes(), (f"the kernel calls {name.group(1) if name else 'an external function'}, which "
                                      "only the driver links: SASS read from relocatable code (ptxas -c); its "
                                      "register count may differ a little from the linked kernel's")


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
    notes: list[str] = field(default_factory=list)
    _typing: TypedLines | None = field(default=None, repr=False)
    _device_flows: dict[int, TxFlow] = field(default_factory=dict, repr=False)

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
        loop test), else the innermost loop around that line (device functions' loops included)."""
        if self.hot is None:
            return None
        line = next((self.lines[i.address] for i in reversed(self.hot.instructions) if self.lines.get(i.address)), 0)
        return next((lp for lp in self.source.loops if lp.line == line), None) or self.source.innermost_loop(line)

    @cached_property
    def loop_lines(self) -> set[int]:
        """Source lines inside any loop (kernel's or device function's)."""
        return {n for lp in self.source.loops for n in range(lp.line, lp.end + 1)}

    def hot_sass(self) -> list[Instruction]:
        """The SASS of the hot path: the hot loop's body; without a machine loop, the code of source loops that
        were unrolled away; [] for a kernel without loops."""
        if self.hot is not None and self.hot_source_loop is not None:
            return self.hot.instructions
        if self.report is None:
            return []
        return [i for i in self.report.instructions if self.lines.get(i.address) in self.loop_lines]

    def in_hot_ptx(self, index: int) -> bool:
        """Whether PTX instruction ``index`` is on the hot path (as ``hot_sass``)."""
        if self.hot_source_loop is not None and self.hot_ptx_loop is not None:
            return self.ptx.in_loop(index, self.hot_ptx_loop)
        return self.ptx.instructions[index].line in self.loop_lines

    def index_coefs(self, acc: Access) -> list[Any]:
        """How each index of ``acc`` moves with threadIdx.x (a device function's indices through its call)."""
        if acc.device is None or acc.call is None:
            flow = self.tx
        else:
            key = id(acc.call)
            if key not in self._device_flows:
                dev = self.source.devices[acc.device]
                bound = {p: self.tx.coef(arg) for p, arg in zip(dev.params, acc.call.args)}
                self._device_flows[key] = TxFlow(dev, bound)
            flow = self._device_flows[key]
        return [flow.coef(ix) for ix in acc.indices]

    @cached_property
    def hot_ptx_loop(self) -> tuple[int, int] | None:
        """The PTX loop that matches the SASS hot loop best: most shared source lines, then the closest count of
        loads, stores and floating-point operations (the unrolled loop, not its remainder), then innermost."""
        if self.hot is None or not self.ptx.loops:
            return None
        want = set(self.hot.lines)
        work = self.hot.fp_ops + sum(i.opcode.split(".")[0] in ("LDG", "LDS", "STG", "STS", "LD", "ST")
                                     for i in self.hot.instructions)

        def score(loop: tuple[int, int]) -> tuple[float, int, int]:
            body = self.ptx.instructions[loop[0]:loop[1] + 1]
            have = {i.line for i in body if i.line}
            ptx_work = sum(i.opcode.split(".")[0] in ("ld", "st") and not i.opcode.startswith(("ld.param", "ld.local",
                                                                                                "st.local"))
                           or i.opcode.split(".")[0] in ("fma", "add", "mul", "sub") and i.opcode.endswith(
                               ("f32", "f64", "f16x2")) for i in body)
            return len(want & have) / max(1, len(want | have)), -abs(ptx_work - work), -(loop[1] - loop[0])
        best = max(self.ptx.loops, key=score)
        return best if score(best)[0] > 0 else None

    def typing(self) -> TypedLines:
        """numba's typing of the kernel (a second compile in a child process; done once, when a check asks)."""
        if self._typing is None:
            typed = numba_types(self.kernel, self.sig, cc=arch_cc(self.arch), child=True)
            self._typing = TypedLines(typed.typemap, typed.annotation)
        return self._typing


def gather(kernel: Any, sig: Any, arch: str = "sm_90", block: int | None = None) -> Facts:
    """Compile ``kernel`` for ``sig`` and ``arch`` once, and read its source, PTX and SASS."""
    fn = kernel_function(kernel)
    arg_types = parse_sig(sig, fn)
    cc = arch_cc(arch)
    if block is not None and (isinstance(block, bool) or not isinstance(block, int) or not 1 <= block <= 1024):
        raise DoctorError(f"block must be the threads per block, an int in 1..1024, got {block!r}")
    options = jit_options(kernel)
    rebuilt = _with_device_callees(fn, {})
    target = kernel if rebuilt is fn else rebuilt  # what the compile child gets: the kernel, or its rebuilt function
    source = Source(rebuilt)
    try:
        with _device_lineinfo(source):
            ptx = numba_ptx(target, arg_types, cc=cc, child=True, lineinfo=True,
                            **({} if target is kernel else {k: v for k, v in options.items()
                                                           if k not in ("device", "lineinfo")}))
    except PtxCompileError as e:
        raise DoctorError(f"numba could not compile {fn.__name__} for {arg_types}, so there is nothing to judge; "
                          f"numba says:\n{trim_compiler_message(str(e).split(':', 1)[-1])}") from None
    except (TypeError, ValueError) as e:
        raise DoctorError(f"cannot compile {fn.__name__}: {e}") from None
    extents = {}
    for name, (dims, _) in {**source.local_arrays, **source.shared_arrays}.items():
        for d, extent in enumerate(dims or ()):
            extents.setdefault(extent, (name, d))
    ptx_facts = PtxFacts(ptx, arg_types, source.params, source.filename, extents)
    report, lines, error, note = None, {}, None, None
    try:
        cubin, note = cubin_with_lines(ptx, arch)
        report = analyze(cubin, ptx_facts.kernel.name)
        lines = {a: ln for a, (file, ln) in line_table(cubin, ptx_facts.kernel.name).items()
                 if file == source.filename}
    except ToolchainError as e:
        error = str(e).splitlines()[-1][:300]
    loops = machine_loops(report, lines) if report else []
    if launch := options.get("launch_bounds"):
        block = block or (launch[0] if isinstance(launch, (tuple, list)) else launch)
    notes = [note] if note else []
    if target is not kernel:
        notes.append("@numba.jit (CPU) functions the kernel calls were compiled as device functions, as numba does")
    return Facts(target, fn.__name__, arch, arg_types, options, block, source, ptx_facts, report, lines, loops,
                 hottest(loops), error, notes)


def _with_device_callees(fn: FunctionType, memo: dict[int, Any]) -> FunctionType:
    """``fn``, or a copy of it whose ``@numba.jit`` (CPU) callees are device functions of the same code: numba
    compiles a CPU-jitted function called from a kernel as a device function, but the compile child can only
    be sent device functions (util.ship). Recursive through the callees' own callees; ``memo`` by id."""
    def device_of(value: Any) -> Any:
        if type(value).__name__ != "CPUDispatcher" or not isinstance(getattr(value, "py_func", None), FunctionType):
            return value
        if id(value) not in memo:
            from .backend import cuda

            memo[id(value)] = cuda.jit(device=True)(_with_device_callees(value.py_func, memo))
        return memo[id(value)]

    names = _code_names(fn.__code__)
    swapped = {n: device_of(fn.__globals__[n]) for n in names if n in fn.__globals__}
    swapped = {n: v for n, v in swapped.items() if v is not fn.__globals__[n]}
    cells = tuple(CellType(device_of(c.cell_contents)) for c in fn.__closure__ or ())
    if not swapped and all(a.cell_contents is b.cell_contents for a, b in zip(cells, fn.__closure__ or ())):
        return fn
    copy = FunctionType(fn.__code__, {**fn.__globals__, **swapped}, fn.__name__, fn.__defaults__, cells or None)
    copy.__module__, copy.__qualname__ = fn.__module__, fn.__qualname__
    return copy


def _code_names(code: CodeType) -> set[str]:
    """The global names a code object (and the code nested in it) uses."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, CodeType):
            names |= _code_names(const)
    return names


@contextmanager
def _device_lineinfo(source: Source) -> Iterator[None]:
    """Compile the device functions the kernel calls with line information too, so that their inlined code keeps
    their own lines: their jit options travel to the compile child (util.ship) from ``jit_options`` under the
    simulator and from ``targetoptions`` on a GPU machine; this sets ``lineinfo`` there for the compile."""
    saved, stack = [], list(source.devices.values())
    while stack:
        dev = stack.pop()
        stack += dev.devices.values()
        attr = "jit_options" if isinstance(getattr(dev.dispatcher, "jit_options", None), dict) else "targetoptions"
        options = getattr(dev.dispatcher, attr, None)
        if isinstance(options, dict) and not options.get("lineinfo"):
            saved.append((dev.dispatcher, attr, options))
            setattr(dev.dispatcher, attr, {**options, "lineinfo": True})
    try:
        yield
    finally:
        for dispatcher, attr, options in saved:
            setattr(dispatcher, attr, options)
