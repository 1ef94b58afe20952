"""A floor model of a load-and-FMA loop: which resource of the SM sets its time, predicted from static SASS.

For one pass of a kernel's hot loop (util.sass.HotLoop) it counts what each resource must do, per SM sub-partition
(SMSP, one warp scheduler) or per SM, for all resident warps to make one pass each (a *wave-pass*):

- ``issue``: every instruction takes one issue slot of its scheduler (1 per cycle);
- ``int ALU``: integer and logic instructions (IADD3, LOP3, ISETP, SEL, SHF, LEA ...), half a warp per cycle;
- ``IMAD``: integer multiply-adds, on the FMA-heavy pipe, half a warp per cycle;
- ``fp64``: double-precision instructions (DADD, DFMA, DMUL, conversions to and from fp64), at the GPU's fp64
  rate;
- ``L1 load pipe``: one global load instruction of a warp is one L1 wavefront here (a broadcast or 32 consecutive
  floats), one wavefront per cycle per SM;
- ``latency``: a warp issues in order, so an instruction that needs a load's result stops it until the load
  returns; the loads issued after that wait form the next *generation*. A pass costs its number of generations
  times the latency of one round trip, the same for all warps, which run side by side.

The largest of these times binds. Rates are the architecture's (machine ``Machine``); the round-trip latency is
measured on the GPU (``Machine.round_trip``). The model ignores what two resources near their limit do to each
other (queueing), so where two are close it predicts too little: compare with the measured time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Sequence

from .sass import Instruction

_ALU = {"IADD3", "IADD", "LOP3", "LOP", "ISETP", "SEL", "SHF", "SHL", "SHR", "LEA", "IABS", "IMNMX", "VIMNMX",
        "VIADD", "PRMT", "SGXT", "BMSK", "POPC", "FLO", "BREV", "IADD32I", "LOP32I"}
_FP64 = {"DADD", "DFMA", "DMUL", "DSETP", "DMNMX", "F2F", "F2I", "I2F"}
_REG = re.compile(r"(?<![\w.])(U?R\d+|U?P\d)")


@dataclass(frozen=True)
class Machine:
    """What the model needs of a GPU: counts and per-cycle rates (warp instructions per cycle)."""

    name: str
    sms: int
    clock_hz: float
    warps_per_sm: int  # resident warps of the kernel's launch (64 for two blocks of 1024 threads on sm_90)
    fp64_per_smsp: float  # double-precision warp instructions per cycle per SMSP
    round_trip: float  # cycles from a load's issue to its result for a warp under this kernel's load (measured)
    issue_per_smsp: float = 1.0
    alu_per_smsp: float = 0.5
    imad_per_smsp: float = 0.5
    wavefronts_per_sm: float = 1.0
    smsp_per_sm: int = 4

    def with_(self, **changes) -> "Machine":
        return replace(self, **changes)


@dataclass(frozen=True)
class LoopCost:
    """Per pass of a hot loop: instructions by resource, and load generations (static, from SASS)."""

    issue: int
    alu: int
    imad: int
    fp64: int
    loads: int
    generations: int


def loop_cost(instructions: Sequence[Instruction]) -> LoopCost:
    """Count a loop pass's instructions by resource and its load generations under in-order issue."""
    counts = dict(issue=0, alu=0, imad=0, fp64=0, loads=0)
    for ins in instructions:
        base = ins.opcode.split(".")[0]
        counts["issue"] += 1
        if base == "LDG":
            counts["loads"] += 1
        elif base.startswith("IMAD") or base == "IMUL":
            counts["imad"] += 1
        elif base in _FP64:
            counts["fp64"] += 1
        elif base in _ALU:
            counts["alu"] += 1
    return LoopCost(**counts, generations=load_generations(instructions))


def load_generations(instructions: Sequence[Instruction], passes: int = 4) -> int:
    """How many times per pass, in the steady state, a warp issuing in order must wait for a load of the
    generation in flight (each wait starts a new generation of loads)."""
    made_by: dict[str, int] = {}  # register -> the load generation its value waits on (-1: none)
    current = 0
    waits = 0
    for _ in range(passes):
        waits = 0
        for ins in instructions:
            regs = _REG.findall(ins.text.split(ins.opcode, 1)[1]) if ins.opcode in ins.text else []
            base = ins.opcode.split(".")[0]
            dst, srcs = ([], regs) if base in ("BRA", "STG", "STS") else (regs[:1], regs[1:])
            need = max([made_by.get(s, -1) for s in srcs] + [-1])
            if need >= current:
                current = need + 1
                waits += 1
            for r in dst:
                made_by[r] = current if base == "LDG" else need
    return waits


def times(cost: LoopCost, machine: Machine, passes_per_warp: float, waves: float) -> dict[str, float]:
    """Seconds each resource needs for the whole kernel: waves x passes x (cycles per wave-pass) / clock."""
    per_smsp = machine.warps_per_sm / machine.smsp_per_sm
    cycles = {
        "issue": per_smsp * cost.issue / machine.issue_per_smsp,
        "int ALU": per_smsp * cost.alu / machine.alu_per_smsp,
        "IMAD": per_smsp * cost.imad / machine.imad_per_smsp,
        "fp64": per_smsp * cost.fp64 / machine.fp64_per_smsp,
        "L1 load pipe": machine.warps_per_sm * cost.loads / machine.wavefronts_per_sm,
        "latency": cost.generations * machine.round_trip,
    }
    return {k: waves * passes_per_warp * c / machine.clock_hz for k, c in cycles.items()}


def binding(resource_times: dict[str, float]) -> tuple[str, float]:
    """The resource that takes longest, and its time: the model's prediction."""
    name = max(resource_times, key=resource_times.get)
    return name, resource_times[name]
