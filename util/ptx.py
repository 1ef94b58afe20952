"""Read PTX: instruction counts, and the float64 instructions a stray ``tmp = 0`` brings."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

_PTX_OP = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][\w.]*)[\s;]", re.M)


def ptx_op_counts(ptx: str) -> Counter[str]:
    """How many times each PTX instruction (``fma.rn.f32``, ``ld.global.f32``, ``cvt.f64.f32`` ...) appears."""
    if not isinstance(ptx, str):
        raise TypeError(f"expected PTX text (str), got {type(ptx).__name__}")
    return Counter(_PTX_OP.findall(ptx))


def f64_ops(ptx: str) -> Counter[str]:
    """The float64 instructions of ``ptx`` (a ``tmp = 0`` accumulator makes numba compute in float64)."""
    return Counter({op: n for op, n in ptx_op_counts(ptx).items() if "f64" in op.split(".")})




# ---- PTX instructions with their source lines (for util.doctor) ---------------------------------------------

_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+\d+")
_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"', re.M)
_LABEL = re.compile(r"^\s*(\$?[\w$]+):\s*$")
_ENTRY = re.compile(r"^\s*\.(?:visible\s+|weak\s+)?\.entry\s+([\w$]+)", re.M)
_BRA = re.compile(r"\bbra(?:\.uni)?\s+([\w$]+)\s*;")


@dataclass(frozen=True)
class PtxInstruction:
    """One PTX instruction of a kernel body, with the source position of the ``.loc`` before it."""

    index: int  # position in the kernel's body (0 = first instruction)
    opcode: str  # ``ld.global.f32``, ``mul.lo.s64`` ... (predicate guard dropped)
    text: str  # the instruction as written, without the trailing ``;``
    file: str | None  # the source file of the last ``.loc`` (None before any)
    line: int  # its line; 0 where the compiler gave no line (``.loc 1 0 1``)

    @property
    def branch_target(self) -> str | None:
        """The label a ``bra`` jumps to."""
        m = _BRA.search(self.text + ";") if self.opcode.startswith("bra") else None
        return m.group(1) if m else None


@dataclass(frozen=True)
class PtxKernel:
    """The body of one ``.entry`` of a PTX module: its instructions and labels (label -> index of the
    instruction after it)."""

    name: str
    instructions: list[PtxInstruction]
    labels: dict[str, int]

    def loops(self) -> list[tuple[int, int]]:
        """(first, last) instruction indices of each loop: a branch back to an earlier label closes one."""
        ends: dict[int, int] = {}
        for ins in self.instructions:
            target = ins.branch_target
            if target in self.labels and self.labels[target] <= ins.index:
                start = self.labels[target]
                ends[start] = max(ends.get(start, 0), ins.index)
        return sorted(ends.items())


def ptx_kernels(ptx: str) -> list[PtxKernel]:
    """Every kernel (``.entry``) of ``ptx`` with its instructions, each tagged with its ``.loc`` source line
    (PTX compiled with ``lineinfo=True`` has them; without, every line is 0 and file None)."""
    if not isinstance(ptx, str):
        raise TypeError(f"expected PTX text (str), got {type(ptx).__name__}")
    files = {int(n): path for n, path in _FILE.findall(ptx)}
    out = []
    for m in _ENTRY.finditer(ptx):
        body_start = ptx.index("{", m.end())
        depth, pos = 0, body_start
        for pos in range(body_start, len(ptx)):  # the matching closing brace
            depth += {"{": 1, "}": -1}.get(ptx[pos], 0)
            if depth == 0:
                break
        instructions: list[PtxInstruction] = []
        labels: dict[str, int] = {}
        file, line = None, 0
        for raw in ptx[body_start + 1:pos].splitlines():
            text = raw.split("//", 1)[0].strip()
            if not text or text.startswith(("{", "}")):
                continue
            if loc := _LOC.match(text):
                file, line = files.get(int(loc.group(1))), int(loc.group(2))
            elif label := _LABEL.match(text):
                labels[label.group(1)] = len(instructions)
            elif not text.startswith("."):
                op = _PTX_OP.match(text + " ")
                if op:
                    instructions.append(PtxInstruction(len(instructions), op.group(1), text.rstrip(";").strip(),
                                                       file, line))
        out.append(PtxKernel(m.group(1), instructions, labels))
    return out
