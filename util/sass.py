"""Read SASS: parse cuobjdump's output, find a kernel's hot loop, count its instruction mix, compare kernels.

    report = analyze(cubin_from_ptx(numba_ptx(kernel, sig)))       # util.compile makes the cubin, no GPU
    report.registers, report.spills, report.hot_loop.instr_per_ffma
    side_by_side({"numba": report, "CUDA C": analyze(twin.cubin())})  # one table

``analyze`` runs ``cuobjdump -res-usage -sass`` (from the CUDA 13 wheels) on a cubin. The hot loop is the loop
whose own body has the most FFMA; its numbers are static counts of one pass.
"""

from __future__ import annotations

import html
import re
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from .toolchain import run_tool

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

    @property
    def bank_pairs(self) -> int:
        """A static proxy for register bank conflicts: over the loop's FFMAs, the source operands that share a
        register bank with another source of the same FFMA, in a model of two banks (register number mod 2),
        leaving out operands read from the operand reuse cache (``.reuse``); ``FFMA R1, R2, R4, R6`` counts 2
        (three sources in bank 0: two beyond the first), ``FFMA R1, R2.reuse, R4, R7`` 0. A model, not the
        hardware's documented rule: docs/notes.md has how it tracked the measured dispatch stalls and times of
        util.sgemm's FMA orders (it tells row by row from the others, not the others apart)."""
        total = 0
        for ins in self.instructions:
            if ins.opcode != "FFMA":
                continue
            srcs = re.findall(r"(?<![\w.])R(\d+)(\.reuse)?", ins.text.split(ins.opcode, 1)[1])[1:]
            banks = [int(r) % 2 for r, reuse in srcs if not reuse]
            total += len(banks) - len(set(banks))
        return total

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
    def prologue(self) -> list[Instruction]:
        """The instructions before the kernel's first barrier (BAR): its set-up and first loads (all, without one)."""
        end = next((x for x, i in enumerate(self.instructions) if i.opcode.startswith("BAR")), len(self.instructions))
        return self.instructions[:end]

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


# ---- comparison table ----------------------------------------------------------------------------------

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


def global_loads(report: KernelReport) -> str:
    """Every global load instruction of the kernel (a static count, edge paths included) by width, e.g.
    ``"8×32 2×128"``; ``cp.async`` copies as ``"30×LDGSTS"``."""
    cats = Counter(category(i.opcode) for i in report.instructions)
    widths = [f"{n}×{c.split('.')[1]}" for c, n in sorted(cats.items()) if c.startswith("LDG.")]
    copies = sum(i.opcode.startswith("LDGSTS") for i in report.instructions)
    return " ".join(widths + ([f"{copies}×LDGSTS"] if copies else [])) or "0"


@dataclass(repr=False)
class SassTable:
    """Kernels' static SASS numbers, one row each; prints as markdown, shows as HTML in a notebook."""

    reports: dict[str, KernelReport]
    extra: dict[str, dict[str, Any]] = field(default_factory=dict)  # label -> more columns after the name

    def rows(self) -> list[dict[str, Any]]:
        return [{"kernel": label, **self.extra.get(label, {}), "registers": r.registers, "spills": r.spills,
                 **_loop_cells(r.hot_loop), "global loads (kernel)": global_loads(r)}
                for label, r in self.reports.items()]

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


def side_by_side(reports: Mapping[str, KernelReport],
                 extra: Mapping[str, Mapping[str, Any]] | None = None) -> SassTable:
    """One table comparing kernels: registers, spills, the hot loop's size and instruction mix, and the
    kernel's global loads by width; ``extra``: more columns per label (e.g. threads, blocks per SM)."""
    if not isinstance(reports, Mapping) or not all(isinstance(r, KernelReport) for r in reports.values()):
        raise TypeError("side_by_side takes a dict {label: analyze(cubin)}")
    return SassTable(dict(reports), {k: dict(v) for k, v in (extra or {}).items()})


# ---- source lines of SASS instructions (for util.doctor) -----------------------------------------------------

_LINE_INFO = re.compile(r'^\s*//## File "([^"]*)", line (\d+)(.*)$')
_SECTION = re.compile(r"^\.text\.(\S+):\s*$")


def line_table(cubin: bytes, kernel: str | None = None) -> dict[int, tuple[str, int]]:
    """SASS address -> (source file, line) for one function of a cubin assembled with line information
    (``ptxas -lineinfo`` from PTX that has ``.loc`` directives, e.g. ``numba_ptx(..., lineinfo=True)``).

    Read from ``nvdisasm --print-line-info-inline``: where a device function was inlined, the line is the
    innermost one (inside the device function). ``kernel``: the short or full name, as ``analyze`` takes it
    (may be left out when the cubin has one function). Empty when the cubin has no line information.
    """
    if not isinstance(cubin, (bytes, bytearray)) or not bytes(cubin[:4]) == b"\x7fELF":
        raise TypeError(f"expected a cubin (ELF bytes), got {type(cubin).__name__}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "kernel.cubin")
        path.write_bytes(bytes(cubin))
        dump = run_tool("nvdisasm", "--print-line-info-inline", "--print-code", path)
    tables: dict[str, dict[int, tuple[str, int]]] = {}
    current: dict[int, tuple[str, int]] | None = None
    where: tuple[str, int] | None = None
    group: list[tuple[str, int]] = []  # the comments before one instruction: the innermost (inlined) line first
    for line in dump.splitlines():
        if m := _SECTION.match(line):
            current, where, group = tables.setdefault(m.group(1), {}), None, []
        elif m := _LINE_INFO.match(line):
            group.append((m.group(1), int(m.group(2))))
        elif current is not None and (m := _INSTR.match(line)):
            where, group = (group[0] if group else where), []
            if where is not None:
                current[int(m.group(1), 16)] = where
    if kernel is None:
        if len(tables) > 1:
            raise ValueError(f"the cubin has {len(tables)} functions {[short_name(s) for s in tables]}: pass kernel=")
        return next(iter(tables.values()), {})
    matches = [s for s in tables if s == kernel] or [s for s in tables if short_name(s) == kernel]
    return tables[matches[0]] if len(matches) == 1 else {}
