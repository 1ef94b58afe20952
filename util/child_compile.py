"""The compiler child of ``util.compile``: numba's real compiler, in a process without the simulator.

    python -c "from util.child_compile import main, exit_now; exit_now(main())" < job.pickle

Reads a pickled job ``{"kernel": util.ship.spec(...), "sig": (...), "cc": (9, 0), "options": {...}}`` from stdin
and writes the kernel's PTX to stdout; with ``"what": "types"`` it writes numba's typing as JSON instead. On
failure it writes the compiler's message to stderr and exits 1. Started with ``NUMBA_ENABLE_CUDASIM=0``.
"""

from __future__ import annotations

import gc
import json
import os
import pickle
import sys
import types


def main() -> int:
    # one compile, then exit: the cyclic collector only slows numba's compile down here (0.6 s of 6 s on ladder
    # step 15, docs/notes.md)
    gc.disable()
    job = pickle.load(sys.stdin.buffer)
    from numba import cuda
    import numba.cuda.dispatcher

    from util.ship import Hooks, build

    # numba compiles a called device function for the current GPU; there is none here: use the target's cc
    numba.cuda.dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=job["cc"])
    hooks = Hooks(device_jit=lambda options: cuda.jit(**options))
    try:
        fn = build(job["kernel"], hooks)
        if job.get("what") == "types":
            from numba.core import types as nbt
            from numba.cuda.compiler import compile_cuda

            cres = compile_cuda(fn, nbt.void, job["sig"], cc=job["cc"])
            typemap = {k: str(v) for k, v in cres.type_annotation.typemap.items()}
            sys.stdout.write(json.dumps({"typemap": typemap, "annotation": str(cres.type_annotation)}))
        else:
            ptx, _ = cuda.compile_ptx(fn, job["sig"], cc=job["cc"], **job["options"])
            sys.stdout.write(ptx)
    except Exception as e:
        sys.stderr.write(f"{type(e).__name__}: {e}")
        return 1
    return 0


def exit_now(code: int) -> None:
    """Flush and leave without the interpreter's teardown: freeing numba's and LLVM's objects one by one took
    about 3 s of a 9.9 s compile of ladder step 15 (docs/notes.md); the process is done with them."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    exit_now(main())
