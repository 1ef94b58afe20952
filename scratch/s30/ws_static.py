"""Static check of the warp-specialized twin (scratch/s30/gemm_ws.cu), sm_90: registers, spills, the compute threads'
hot loop (FFMA, LDS, barriers) beside the twin's own variants on the same tile.
Run from the project root: NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=. python scratch/s30/ws_static.py"""
from pathlib import Path

import util.sgemm as S
from util.cuda_c import CudaC
from util.sass import analyze

SRC = Path(__file__).with_name("gemm_ws.cu")


def ws_twin(tile, stages=3, lag=1, minb=None, sc=False, order="row", cw=1):
    """The WS twin: the twin's macros for its 4-byte variant on ``tile`` (S.c_twin's), and the copier's."""
    base = S.c_twin(False, False, False, tile, order, sc=sc)
    return CudaC.from_file(SRC, "gemm_c", options=[*base.options, "-DWS=1", f"-DSTAGES={stages}", f"-DLAG={lag}",
                                                   f"-DWS_MINB={minb or tile.MINB}", f"-DCW={cw}"])


if __name__ == "__main__":
    for tile, sc in ((S.TINY_TILE, True), (S.SMALL_TILE, False), (S.TILE, False)):
        for stages, lag, minb in ((3, 1, None), (3, 2, None), (2, 1, None), (4, 1, None)):
            try:
                r = analyze(ws_twin(tile, stages, lag, minb, sc).cubin("sm_90"), "gemm_c")
            except Exception as e:
                print(tile.name, stages, lag, "FAILED", str(e)[:300])
                continue
            loop = r.hot_loop
            print(f"{tile.name} WS stages {stages} lag {lag}: registers {r.registers}, spills {r.spills}, shared "
                  f"{r.shared_bytes} B; hot loop {len(loop.instructions) if loop else None} instructions, "
                  f"FFMA {loop.ffma if loop else None}; {dict(sorted((loop.opcodes if loop else {}).items()))}")
        for va, vb in ((True, True), (False, False)):
            r = analyze(S.c_twin(va, vb, False, tile, sc=sc and not vb, shift_b=not vb and tile is not S.TILE).cubin("sm_90"),
                        "gemm_c")
            print(f"  twin {tile.name} va {va} vb {vb}: registers {r.registers}, spills {r.spills}, hot loop "
                  f"{len(r.hot_loop.instructions)} instructions")
