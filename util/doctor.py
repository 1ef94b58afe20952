"""A kernel doctor for numba-cuda: why is this ``@cuda.jit`` kernel slower than it needs to be, and what to change.

    from util.doctor import diagnose
    d = diagnose(kernel, "(float32[:, ::1], float32[:, ::1], float32[:, ::1], int64, int64, int64)", block=1024)
    d                      # in JupyterLab: a findings table with collapsible evidence
    print(d)               # plain text; d.to_json() / d.as_dict() for tools
    d.findings[0].tag, d.findings[0].fix

    python -m util.doctor kernels.py:matmul --sig "(float32[:, ::1], float32[:, ::1], float32[:, ::1], int64)" \
        [--arch sm_90] [--block 256] [--json]

``diagnose`` compiles the kernel once, statically (no GPU): numba's PTX with line information, ptxas's SASS with
the same lines, and numba's typing when a float64 needs explaining. Each finding has a tag, what it costs (hot-loop
instructions, registers and blocks per SM; and what the project's notebooks measured for the same fix, from
``MEASURED``), its evidence (Python lines, PTX, SASS) and the fix as a source change. The tags:

    fp64               float64 arithmetic in a float32 kernel (in loops, or once per thread), and where the
                       double came from: a literal, an annotation, a float64 argument, an int/float mix, a cast
    int64-index        64-bit-only instructions on the hot path, or a 64-bit loop test (Python ints, shapes)
    range-loop         a hot `for ... in range()` loop that keeps numba's range iterator
    wraparound-check   NumPy's negative-index check on the hot loop's accesses (in the loop or hoisted)
    low-unroll         a load-bound hot loop with few global loads in flight per pass
    register-occupancy registers that cap the blocks per SM below half its warps, where ~20% fewer would add a
                       block (needs block= or the kernel's launch_bounds)
    spills             local memory: register spills or a local array indexed at run time
    uncoalesced        consecutive threads (threadIdx.x) accessing addresses a row apart
    scalar-loads       four consecutive 4-byte loads that could be one 16-byte load
    slow-math          IEEE division / square root in loops without fastmath; float64 division and math
                       functions in a float32 kernel

The checks are in util.doctor_checks; the facts they read in util.doctor_facts (machine code, typing) and
util.doctor_source (source, threadIdx.x dataflow). A tag the doctor cannot judge for a kernel is listed in
``Diagnosis.not_judged`` with the reason, never guessed.
"""

from __future__ import annotations

import argparse
import html
import importlib.util
import json
import re
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from .backend import is_kernel
from .doctor_checks import CHECKS, Finding, NotJudged
from .doctor_facts import Facts, gather
from .doctor_source import DoctorError, loop_kind

__all__ = ["MEASURED", "Diagnosis", "DoctorError", "Finding", "diagnose", "main"]


class Measured(NamedTuple):
    """A fix the project's notebooks measured on an NVIDIA H200 (their committed outputs; speedup = time before /
    time after, > 1 means the fix made the kernel faster)."""

    tag: str
    where: str  # notebook, section
    figure: str


# The notebooks' measurements, the one table the findings cite (key -> Measured).
MEASURED: dict[str, Measured] = {
    "k2-step1": Measured("fp64", "numba_vs_cuda_c.ipynb, step 0 -> 1 (float32 accumulator)",
                         "1.07x on the H200 (111.9 -> 104.9 ms)"),
    "variants-f32": Measured("fp64", "matmul_variants.ipynb, variant3 -> variant7 (tmp = np.float32(0))",
                             "1.07x on the H200; 2.2x (1.26 s -> 0.57 s) on the original notebook's GPU, whose "
                             "fp64 rate is 1/64 of fp32"),
    "k2-step2": Measured("int64-index", "numba_vs_cuda_c.ipynb, step 2 (int32 sizes)",
                         "1.09x on the H200 (104.9 -> 95.9 ms); 4.0% of kernel 2's gap to CUDA C over every order "
                         "of the changes (Shapley)"),
    "k2-step3": Measured("register-occupancy", "numba_vs_cuda_c.ipynb, step 3 (launch_bounds(1024, 2))",
                         "1.18x on the H200 (95.9 -> 81.5 ms), through the schedule: 2 blocks per SM before and "
                         "after; 3.8% of the gap over every order (Shapley)"),
    "k2-step4": Measured("range-loop", "numba_vs_cuda_c.ipynb, step 4 (while loop)",
                         "1.28x on the H200 (81.5 -> 63.8 ms); 14.4% of the gap over every order (Shapley)"),
    "k2-step5": Measured("wraparound-check", "numba_vs_cuda_c.ipynb, step 5 (unsigned indices)",
                         "1.52x on the H200 (63.8 -> 41.9 ms); 28.8% of the gap over every order (Shapley)"),
    "k2-step6": Measured("int64-index", "numba_vs_cuda_c.ipynb, step 6 (flat uint32 indexing)",
                         "1.53x on the H200 (41.9 -> 27.5 ms); 5.8% of the gap over every order (Shapley)"),
    "k2-step7": Measured("low-unroll", "numba_vs_cuda_c.ipynb, step 7 (walking indices: unrolled 16x, not 4x)",
                         "1.13x on the H200 (27.5 -> 24.3 ms); 11.3% of the gap over every order (Shapley)"),
    "k2-step8": Measured("int64-index", "numba_vs_cuda_c.ipynb, step 8 (no-wrap int32 indices, util.intrinsics)",
                         "1.12x on the H200 (24.3 -> 21.7 ms), 1.01x of CUDA C; 31.3% of the gap over every order "
                         "(Shapley)"),
    "k2-c-unroll1": Measured("low-unroll", "numba_vs_cuda_c.ipynb, CUDA C side (#pragma unroll 1)",
                             "3.83x slower on the H200 than the 16x-unrolled CUDA C kernel 2"),
    "ladder-2": Measured("uncoalesced", "sgemm_ladder.ipynb, step 1 -> 2 (threadIdx.x along a row of C)",
                         "5.70x on the H200 (276.7 -> 48.5 ms)"),
    "ladder-5a": Measured("range-loop", "sgemm_ladder.ipynb, step 5a -> 5 (uint32 thread indices, while loops)",
                          "3.40x on the H200 (19.8 -> 5.8 ms)"),
    "ladder-6b": Measured("scalar-loads", "sgemm_ladder.ipynb, step 6 -> 6b (16-byte loads through ldg128)",
                          "1.12x on the H200 (6.47 -> 5.76 ms)"),
    "ladder-10b": Measured("scalar-loads", "sgemm_ladder.ipynb, step 10 -> 10b (16-byte loads through ldg128)",
                           "1.10x on the H200 (3.94 -> 3.57 ms)"),
    "ladder-15-launch-bounds": Measured("register-occupancy",
                                        "sgemm_ladder.ipynb, tile search (step 15 with and without "
                                        "launch_bounds=(256, 2))", "1.20x on the H200 (3.62 -> 3.02 ms)"),
}


@dataclass
class Diagnosis:
    """What the doctor found in one kernel: findings, the hot loop, resources, and the tags it could not judge."""

    kernel: str
    arch: str
    signature: str
    block: int | None
    registers: int | None
    local_memory: str | None  # util.sass's "none" or "48 B (16 STL, 14 LDL)"
    shared_bytes: int | None
    hot_loop: dict[str, Any] | None
    findings: list[Finding]
    not_judged: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def tags(self) -> list[str]:
        return [f.tag for f in self.findings]

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["findings"] = [_finding_dict(f) for f in self.findings]
        return out

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.as_dict(), indent=indent)

    def _head(self) -> str:
        res = (f"{self.registers} registers, local memory {self.local_memory}, {self.shared_bytes} B shared"
               if self.registers is not None else "no SASS")
        block = f", {self.block} threads per block" if self.block else ""
        return f"{self.kernel} [{self.arch}{block}]: {res}"

    def _hot(self) -> str:
        h = self.hot_loop
        if not h:
            return "hot loop: none (no loop in the machine code)"
        per = f" ({h['instructions_per_fp_op']} per op)" if h.get("instructions_per_fp_op") else ""
        where = f"line {h['line']} `{h['source']}` ({h['kind']})" if h["line"] else "a loop of no source loop " \
            "(made by the compiler, e.g. in a library function)"
        return (f"hot loop: {where}: {h['sass_instructions']} SASS "
                f"instructions per pass, {h['fp_ops']} floating-point ops{per}, {h['global_loads']} global and "
                f"{h['shared_loads']} shared loads")

    def __str__(self) -> str:
        out = [self._head(), self._hot(),
               f"{len(self.findings)} finding(s)" + (f": {', '.join(self.tags)}" if self.findings else "")]
        for f in self.findings:
            out += [f"\n[{f.tag}] {f.summary}", f"  cost: {f.cost}"]
            out += [f"  measured: {m}" for m in _measured(f)]
            out += [f"  fix: {f.fix}", "  evidence:"]
            for kind, lines in (("source", f.source), ("PTX", f.ptx), ("SASS", f.sass)):
                out += [f"    {kind}: {line}" for line in lines]
        if self.not_judged:
            out.append("\nnot judged: " + "; ".join(f"{t} ({why})" for t, why in self.not_judged.items()))
        out += [f"note: {n}" for n in self.notes]
        return "\n".join(out)

    def __repr__(self) -> str:
        return f"<Diagnosis {self.kernel}: {', '.join(self.tags) or 'no findings'}>"

    def _repr_html_(self) -> str:
        e = html.escape
        rows = []
        for f in self.findings:
            evidence = "".join(f"<b>{kind}</b><pre style='margin:2px 0'>{e(chr(10).join(lines))}</pre>"
                               for kind, lines in (("source", f.source), ("PTX", f.ptx), ("SASS", f.sass)) if lines)
            measured = "".join(f"<br><i>measured: {e(m)}</i>" for m in _measured(f))
            rows.append(f"<tr><td><code>{e(f.tag)}</code></td><td>{e(f.summary)}</td><td>{e(f.cost)}{measured}</td>"
                        f"<td>{e(f.fix)}</td><td><details><summary>lines {e(str(f.lines))}</summary>{evidence}"
                        "</details></td></tr>")
        table = ("<table><thead><tr><th>tag</th><th>finding</th><th>cost</th><th>fix</th><th>evidence</th></tr>"
                 f"</thead><tbody>{''.join(rows)}</tbody></table>" if rows else "<p>No findings.</p>")
        judged = "".join(f"<li><code>{e(t)}</code>: {e(why)}</li>" for t, why in self.not_judged.items())
        notes = "".join(f"<li>{e(n)}</li>" for n in self.notes)
        return (f"<div><p><b>{e(self._head())}</b><br>{e(self._hot())}</p>{table}"
                + (f"<details><summary>not judged ({len(self.not_judged)})</summary><ul>{judged}</ul></details>"
                   if judged else "") + (f"<ul>{notes}</ul>" if notes else "") + "</div>")


def _measured(f: Finding) -> list[str]:
    return [f"{MEASURED[k].where}: {MEASURED[k].figure}" for k in f.refs if k in MEASURED]


def _finding_dict(f: Finding) -> dict[str, Any]:
    return {"tag": f.tag, "summary": f.summary, "cost": f.cost, "fix": f.fix, "lines": f.lines,
            "measured": _measured(f), "evidence": {"source": f.source, "ptx": f.ptx, "sass": f.sass},
            "numbers": f.numbers}


def diagnose(kernel: Any, sig: Any, *, arch: str = "sm_90", block: int | None = None) -> Diagnosis:
    """Compile ``kernel`` for ``sig`` (numba's string form or a tuple of numba types) and ``arch`` statically and
    report its findings. ``block``: threads per block of the launch (for register-occupancy; default: the
    kernel's launch_bounds, else that tag is not judged). Raises DoctorError for input it cannot judge."""
    facts = gather(kernel, sig, arch, block)
    findings: list[Finding] = []
    not_judged: dict[str, str] = {}
    for tag, check in CHECKS.items():
        try:
            result = check(facts)
        except Exception as e:  # noqa: BLE001 - one check's failure must not hide the others' findings
            result = NotJudged(f"the check failed on this kernel ({type(e).__name__}: {e})")
        if isinstance(result, NotJudged):
            not_judged[tag] = result.reason
        else:
            findings += result
    return Diagnosis(facts.name, arch, "(" + ", ".join(map(str, facts.sig)) + ")", facts.block,
                     facts.report.registers if facts.report else None,
                     facts.report.spills if facts.report else None,
                     facts.report.shared_bytes if facts.report else None, _hot_loop(facts), findings, not_judged,
                     _notes(facts))


def _hot_loop(f: Facts) -> dict[str, Any] | None:
    loop, src = f.hot, f.hot_source_loop
    if loop is None:
        return None
    return {"line": src.line if src else None, "source": f.source.line(src.line) if src else "",
            "kind": loop_kind(src), "sass_instructions": loop.size, "fp_ops": loop.fp_ops,
            "instructions_per_fp_op": round(loop.size / loop.fp_ops, 2) if loop.fp_ops else None,
            "global_loads": loop.global_loads, "shared_loads": loop.shared_loads}


def _notes(f: Facts) -> list[str]:
    out = []
    ops = {i.opcode.split(".")[0] for i in f.ptx.instructions}
    if ops & {"atom", "red"}:
        out.append("atomics: judged like other memory accesses; contention on their targets is not judged")
    calls = sorted({m.group(1) for i in f.ptx.instructions if i.opcode.startswith("call")
                    and (m := re.match(r"call(?:\.uni)?\s+(?:\([^)]*\),\s*)?([\w$]+)", i.text))})
    if calls:
        out.append(f"calls to non-inlined functions ({', '.join(calls)[:120]}): their code is not judged")
    out += f.notes
    if f.sass_error:
        out.append(f"ptxas could not assemble the PTX, so the SASS tags are not judged: {f.sass_error}")
    if f.source.devices:
        out.append(f"device functions read for array accesses: {', '.join(sorted(f.source.devices))}")
    return out


# ---- command line --------------------------------------------------------------------------------------------

def load_kernel(spec: str) -> Any:
    """The object ``KERNEL`` of ``FILE.py:KERNEL``, executing FILE.py as a module (util is imported first, so a
    file that does ``from numba import cuda`` gets numba's simulator and the compile child on a CPU machine)."""
    import util  # noqa: F401 - before the user's file imports numba

    path_text, _, name = spec.rpartition(":")
    path = Path(path_text)
    if not path_text or not name or path.suffix != ".py":
        raise DoctorError(f"expected FILE.py:KERNEL (a Python file and the kernel's name in it), got {spec!r}")
    if not path.is_file():
        raise DoctorError(f"no such file: {path}")
    module_name = f"doctor_user_{abs(hash(str(path.resolve())))}"
    loader = importlib.util.spec_from_file_location(module_name, path)
    assert loader is not None and loader.loader is not None
    module = importlib.util.module_from_spec(loader)
    sys.modules[module_name] = module
    folder = str(path.resolve().parent)
    sys.path.insert(0, folder)  # as `python FILE.py` would: the file may import its neighbours
    try:
        loader.loader.exec_module(module)
    except Exception as e:  # noqa: BLE001 - any error of the user's file becomes one clear message
        raise DoctorError(f"running {path} failed before the kernel could be found: {type(e).__name__}: {e}") from None
    finally:
        sys.path.remove(folder)
    if not hasattr(module, name):
        found = sorted(k for k, v in vars(module).items() if is_kernel(v))
        raise DoctorError(f"{path} has no {name!r}; its kernels: {', '.join(found) or 'none'}")
    return getattr(module, name)


def main(argv: list[str] | None = None) -> int:
    """``python -m util.doctor FILE.py:KERNEL --sig SIG [--arch sm_90] [--block N] [--json]``: 0 when the kernel
    was judged, 2 with a one-paragraph message when it could not be."""
    parser = argparse.ArgumentParser(prog="python -m util.doctor", description=__doc__.split("\n\n")[0])
    parser.add_argument("kernel", help="FILE.py:KERNEL, the file that defines the @cuda.jit kernel and its name")
    parser.add_argument("--sig", required=True, help='argument types, e.g. "(float32[:, ::1], float32[::1], int64)"')
    parser.add_argument("--arch", default="sm_90", help="GPU architecture to compile for (default sm_90)")
    parser.add_argument("--block", type=int, default=None, help="threads per block of the launch")
    parser.add_argument("--json", action="store_true", help="print the diagnosis as JSON")
    args = parser.parse_args(argv)
    try:
        result = diagnose(load_kernel(args.kernel), args.sig, arch=args.arch, block=args.block)
    except DoctorError as e:
        print(f"util.doctor: cannot judge {args.kernel}: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - a bug of the doctor's: one paragraph, not a traceback
        print(f"util.doctor: internal error while judging {args.kernel} ({type(e).__name__}: {e}); please report "
              "it with the kernel and the signature", file=sys.stderr)
        return 3
    print(result.to_json() if args.json else result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
