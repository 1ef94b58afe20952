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

The largest of these times binds (``times``, ``binding``): the floor, the kernel's time if no resource made
another wait. ``predict`` adds that: each scheduler's warps cycle through the resources as
customers of a closed queueing network (the issue slots, ALU, IMAD and fp64 pipes of their scheduler and their
quarter of the SM's L1 load pipe as queues, the load round trips as a pure delay), solved exactly by mean value
analysis (``mva``), so that two resources near their limit, or a resource near its limit while warps wait on
loads, each lengthen the pass. Rates are the architecture's (``Machine``); the round trip of a load generation is
the one figure measured on the GPU (``calibrate_round_trip`` on a kernel whose loop is one generation).
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
    """The resource that takes longest, and its time: the floor (``predict`` adds the queueing)."""
    name = max(resource_times, key=resource_times.get)
    return name, resource_times[name]


def mva(demands: Sequence[float], delay: float, customers: int) -> tuple[float, list[float]]:
    """Exact mean value analysis of a closed network of single-server queues with service ``demands`` (cycles a
    customer needs of each per cycle of its own: here per loop pass) and a pure ``delay``, with ``customers``
    circulating. Returns (cycles a customer takes per pass, each queue's utilization)."""
    if customers < 1 or delay < 0 or any(d < 0 for d in demands):
        raise ValueError(f"need customers >= 1 and non-negative demands and delay, got {customers}, {demands}, {delay}")
    queue = [0.0] * len(demands)
    throughput = 0.0
    for n in range(1, customers + 1):
        residence = [d * (1.0 + q) for d, q in zip(demands, queue)]
        throughput = n / (delay + sum(residence))
        queue = [throughput * r for r in residence]
    return customers / throughput, [throughput * d for d in demands]


@dataclass(frozen=True)
class Prediction:
    """``predict``'s answer: the kernel's seconds, the resource that binds (the largest of ``times``), and each
    queue's utilization under the predicted load (1.0: busy every cycle)."""

    seconds: float
    binds: str
    utilization: dict[str, float]


def _queues(cost: LoopCost, machine: Machine) -> dict[str, float]:
    """Cycles of each queue per pass of one warp, as one scheduler's warps see them."""
    return {"issue": cost.issue / machine.issue_per_smsp, "int ALU": cost.alu / machine.alu_per_smsp,
            "IMAD": cost.imad / machine.imad_per_smsp, "fp64": cost.fp64 / machine.fp64_per_smsp,
            # the SM's L1 load pipe, shared by its schedulers: a quarter of it for each of four
            "L1 load pipe": cost.loads * machine.smsp_per_sm / machine.wavefronts_per_sm}


def predict(cost: LoopCost, machine: Machine, passes_per_warp: float, waves: float) -> Prediction:
    """The kernel's time by mean value analysis of one scheduler's warps (``machine.warps_per_sm /
    smsp_per_sm`` customers) over its queues, with ``cost.generations`` round trips of delay a pass."""
    queues = _queues(cost, machine)
    cycles, util = mva(list(queues.values()), cost.generations * machine.round_trip,
                       machine.warps_per_sm // machine.smsp_per_sm)
    binds, _ = binding(times(cost, machine, passes_per_warp, waves))
    return Prediction(waves * passes_per_warp * cycles / machine.clock_hz, binds, dict(zip(queues, util)))


def calibrate_round_trip(cost: LoopCost, machine: Machine, passes_per_warp: float, waves: float,
                         seconds: float) -> float:
    """The round trip (cycles) for which ``predict`` gives the measured ``seconds`` for this kernel (bisection;
    the predicted time grows with the round trip). Use a kernel with load generations, ideally one a pass."""
    if cost.generations < 1:
        raise ValueError("the reference kernel's loop must wait on at least one load generation a pass")
    if predict(cost, machine.with_(round_trip=0.0), passes_per_warp, waves).seconds > seconds:
        raise ValueError(f"the queues alone predict more than the measured {seconds} s: nothing left for latency")
    lo, hi = 0.0, 1.0
    while predict(cost, machine.with_(round_trip=hi), passes_per_warp, waves).seconds < seconds:
        hi *= 2.0
        if hi > 1e9:
            raise ValueError(f"no round trip of under 1e9 cycles makes this kernel take {seconds} s")
    for _ in range(60):
        mid = (lo + hi) / 2
        if predict(cost, machine.with_(round_trip=mid), passes_per_warp, waves).seconds < seconds:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2
