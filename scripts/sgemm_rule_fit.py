"""The recorded search behind util.sgemm's cost rule: on a seeded set of random shapes, the numba SGEMM forced to each
tile and to a ladder of slice counts, verified and timed in one interleaved run per shape (shuffled, L2 flushed,
launch overhead hidden); then the rule's fitted constants (``util.sgemm.CostModel``: a block's fixed cost, the
workspace rate, the sum's launch, the operand-panel rate, each tile's fixed cost a round, and what a last round of
fewer blocks than an SM holds costs) chosen on a grid, by coordinate descent, to lose the least against the fastest
timed choice.

    python scripts/sgemm_rule_fit.py --measure [--runs 5]   (GPU machine) time the choices, write
                                                             util/sgemm_rule_fit.json (and stop: the fit is
                                                             the next command's)
    python scripts/sgemm_rule_fit.py --measure --missing    the same, keeping the record's times of the shapes
                                                             it has (after a new family is added, or to finish
                                                             a run cut short: the record is written after
                                                             each shape)
    python scripts/sgemm_rule_fit.py                        (anywhere) fit the constants to the record, and print
                                                             how the rule loses with them and with util.sgemm.COST

The loss of a rule on a shape is time(its choice) / time(the fastest timed choice), the choice taken among the timed
ones. The shapes are random (log-uniform sizes), not the notebook's study, which stays a test of the rule.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
from pathlib import Path

SEED, COUNT = 16, 96
# A second family drawn the same way from a seed of its own, N and K then rounded up to a multiple of 4, so that
# both operands take 16-byte loads: a log-uniform draw gives that about once in 16, and the kernels' relative speeds
# differ with the loads (the first 96 held 5 such shapes)
ALIGNED_SEED, ALIGNED_COUNT = 17, 48
# A third family with short K (8..128 log-uniform, m and n as above): there a block's fixed costs weigh most against
# its few k-tiles, and the first two families start at k = 128
SHORT_SEED, SHORT_COUNT = 18, 48
# A fourth family of near-square outputs (n within a factor sqrt(2) of m, m in 256..8192, k as the first family's),
# N and K rounded up to a multiple of 4: the shapes users most often have, which independent log-uniform m and n
# rarely draw with both operands aligned (the first three families hold 2 such shapes, 6 without the bound on m)
SQUARE_SEED, SQUARE_COUNT = 19, 48
# A fifth family of mid-sized near-square outputs with long K (m in 256..2048, n as the fourth's, k in 2048..16384),
# N and K rounded up to a multiple of 4: where the 128 x 128 tile needs many slices to fill the GPU and the sliced
# 64 x 64 tile few, so the rule's cost of the split weighs most (the fourth family holds 4 such shapes)
LONG_SEED, LONG_COUNT = 20, 48
LADDER = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)
WAVE_SECONDS = tuple(us * 1e-6 for us in (0, 0.5, 1, 1.5, 2, 3, 4, 6, 8, 10, 12, 16, 24))
GRID = {  # the fitted constants' candidates (with WAVE_SECONDS for each tile's wave cost: ``grid``)
    "block_overhead_tiles": (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0),
    "workspace_bytes_per_s": (0.75e12, 1e12, 1.5e12, 2e12, 3e12, 4e12, 6e12),
    "second_launch_s": (0.0, 1e-6, 2e-6, 3e-6, 4e-6, 6e-6, 8e-6, 12e-6, 16e-6),
    "operand_bytes_per_s": (4e12, 6e12, 8e12, 10e12, 12e12, 16e12, 24e12, 32e12, 48e12),
    "wave_vc_seconds": WAVE_SECONDS,
    "partial_round": (0.5, 0.6, 0.7, 0.8, 0.9, 1.0),  # one fraction for every tile of S.TILES
}
RECORD = Path(__file__).resolve().parents[1] / "util" / "sgemm_rule_fit.json"


def _draw(seed: int, count: int, aligned: bool, k_range: tuple[float, float] = (7, 14),
          square: bool = False, m_range: tuple[float, float] = (8, 13)) -> list[tuple[int, int, int]]:
    """``count`` shapes, log-uniform: m and n in 64..8192 (``square``: m in 2^m_range, n / m in 2^(-1/2)..2^(1/2)),
    k in 2^k_range; ``aligned``: n and k rounded up to a multiple of 4; at most 2^33 multiply-adds."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        if square:
            m = int(2 ** rng.uniform(*m_range))
            n, k = int(m * 2 ** rng.uniform(-0.5, 0.5)), int(2 ** rng.uniform(*k_range))
        else:
            m, n, k = (int(2 ** rng.uniform(6, 13)), int(2 ** rng.uniform(6, 13)), int(2 ** rng.uniform(*k_range)))
        if aligned:
            n, k = -(-n // 4) * 4, -(-k // 4) * 4
        if m * n * k <= 2**33:
            out.append((m, n, k))
    return out


def shapes() -> list[tuple[int, int, int]]:
    """COUNT random shapes: m and n log-uniform in 64..8192, k in 128..16384, at most 2^33 multiply-adds; then
    ALIGNED_COUNT more from ALIGNED_SEED, with n and k rounded up to a multiple of 4; then SHORT_COUNT from SHORT_SEED
    with k in 8..128; then SQUARE_COUNT from SQUARE_SEED with m in 256..8192 and n / m in 2^(-1/2)..2^(1/2), n and k
    rounded up to a multiple of 4; then LONG_COUNT from LONG_SEED as those, with m in 256..2048 and k in 2048..16384."""
    return (_draw(SEED, COUNT, False) + _draw(ALIGNED_SEED, ALIGNED_COUNT, True)
            + _draw(SHORT_SEED, SHORT_COUNT, False, (3, 7)) + _draw(SQUARE_SEED, SQUARE_COUNT, True, square=True)
            + _draw(LONG_SEED, LONG_COUNT, True, (11, 14), square=True, m_range=(8, 11)))


FAMILIES = (("the first family", COUNT), ("the aligned family", ALIGNED_COUNT), ("the short-K family", SHORT_COUNT),
            ("the near-square family", SQUARE_COUNT), ("the long-K near-square family", LONG_COUNT))  # shapes()' order


def options(S, m: int, n: int, k: int, sms: int) -> list[tuple[str, int]]:
    """(tile name, slices) to time: for each tile, the valid slice counts nearest the ladder, up to four full
    waves of blocks (and one slice always)."""
    out = []
    for t in S.TILES:
        valid = S.slice_counts(k, t)
        tiles = math.ceil(m / t.BM) * math.ceil(n / t.BN)
        picks = {min(valid, key=lambda v: abs(v - s)) for s in LADDER}
        out += [(t.name, s) for s in sorted(picks) if s == 1 or tiles * s <= 4 * sms * t.MINB]
    return out


def measure(runs: int, missing: bool) -> None:
    import util
    from util import sgemm as S
    from util.bench import Registry

    if util.SIMULATED:
        raise SystemExit("needs a GPU: the fit is to timed choices (the simulator's wall time says nothing)")
    sms = S._sms()
    tiles = {t.name: t for t in S.TILES}
    record, t0 = [], time.perf_counter()
    todo = shapes()
    kept, timed = {}, 0
    if missing and RECORD.exists():  # the record's entries of shapes() stay; only the shapes it lacks are timed
        old = json.loads(RECORD.read_text())
        here = (util.device_name(), sms, util.versions_line())
        if (old["device"], old["sms"], old["versions"]) != here:
            raise SystemExit(f"--missing: the record is from {old['device']} ({old['sms']} SMs; {old['versions']}), "
                             f"this is {here[0]} ({here[1]} SMs; {here[2]}): measure every shape (without --missing)")
        # an entry whose choices are not today's (a tile added or gone) is timed again
        drawn = set(todo)
        kept = {tuple(e["shape"]): e for e in old["shapes"] if tuple(e["shape"]) in drawn
                and set(e["us"]) == {f"{name} s={s}" for name, s in options(S, *e["shape"], sms)}}
    for i, (m, n, k) in enumerate(todo):
        if (m, n, k) in kept:
            record.append(kept[(m, n, k)])
            continue
        timed += 1
        reg = Registry()
        opts = options(S, m, n, k, sms)
        for name, s in opts:
            S.register(reg, f"{name} s={s}", None, tile=tiles[name], splits=s)  # numba alone
        reg.cublas()
        tab = reg.run(m, n, k, runs=runs, shuffle=True, hide_launch=True, verbose=False)
        wrong = [r.name for r in tab.results if not r.correct]
        if wrong:
            raise SystemExit(f"{m}x{n}x{k}: wrong results from {wrong}: fix the kernel before recording")
        us = {f"{name} s={s}": round(tab[f"{name} s={s}"].median * 1e6, 2) for name, s in opts}
        best = min(us, key=us.get)
        record.append({"shape": [m, n, k], "cublas_us": round(tab[tab.baseline].median * 1e6, 2), "us": us})
        print(f"[{time.perf_counter() - t0:4.0f} s] {i + 1}/{len(todo)} {m}x{n}x{k}: {len(us)} choices, fastest {best} "
              f"{us[best]:.1f} us ({100 * record[-1]['cublas_us'] / us[best]:.0f}% of cuBLAS)", flush=True)
        # written after each shape, with the kept entries still ahead, so that a run cut short leaves all it has:
        # --missing then times only the rest (the fit refuses a record that does not hold every shape)
        how = f" --missing (timed in this run: {timed} shapes; the others kept from the record before)" if kept else ""
        _write(record + [kept[s] for s in todo[i + 1:] if s in kept], sms, how)
    print("written:", RECORD if timed else "nothing: the record holds every shape already")


def _write(record: list[dict], sms: int, how: str) -> None:
    """The record (``how``: what the command line adds), through a temporary file so that it is never half-written."""
    import util

    tmp = RECORD.with_name(RECORD.name + ".tmp")
    tmp.write_text(json.dumps({
        "about": "util.sgemm's forced choices (tile, slices) timed on random shapes (scripts/sgemm_rule_fit.py); "
                 "us: each choice's median in one interleaved, verified run",
        "device": util.device_name(), "sms": sms, "versions": util.versions_line(),
        "command": "python scripts/sgemm_rule_fit.py --measure" + how, "shapes": record}, indent=1) + "\n")
    tmp.replace(RECORD)


def ranked(S, model, entry: dict, sms: int, tiles=None) -> list[str]:
    """The record entry's timed choices ("<tile> s=<slices>") of ``tiles`` (default S.TILES), the one ``model``
    estimates cheapest first; on a tie the earlier tile of S.TILES, then fewer slices, as plan() breaks it."""
    by_name = {t.name: t for t in S.TILES}
    m, n, k = entry["shape"]
    vb = n % 4 == 0  # the record's arrays start 16-byte aligned
    choices = [(key, by_name[key.split(" s=")[0]], int(key.split(" s=")[1])) for key in entry["us"]]
    return [c[0] for c in sorted((c for c in choices if tiles is None or c[1] in tiles),
                                 key=lambda c: (model.estimate(m, n, k, c[1], c[2], sms,
                                                               S.stores16(c[1], vb, c[2], True)),
                                                S.TILES.index(c[1]), c[2]))]


def pick(S, model, entry: dict, sms: int, tiles=None) -> str:
    """The record entry's timed choice that ``model`` takes among those of ``tiles``: the first of ``ranked``."""
    return ranked(S, model, entry, sms, tiles)[0]


def losses(S, model, record: list[dict], sms: int) -> list[float]:
    """Per shape: time(the model's choice among the timed ones) / time(the fastest timed one)."""
    return [entry["us"][pick(S, model, entry, sms)] / min(entry["us"].values()) for entry in record]


def score(ls: list[float]) -> float:
    """The geometric-mean loss."""
    return math.exp(sum(math.log(x) for x in ls) / len(ls))


def grid(S) -> dict[str, tuple[float, ...]]:
    """GRID and, as "wave <tile>", the candidates of each tile's entry of CostModel.wave_seconds (every tile of
    S.TILES, in its order)."""
    return {**GRID, **{f"wave {t.name}": WAVE_SECONDS for t in S.TILES}}


def model_of(S, values: dict[str, float]):
    """The CostModel of S.TILES with S.COST's tile_seconds and the constants in ``values`` (``grid``'s names;
    "partial_round" the fraction of every tile of S.TILES). S.NARROW_TILES keep their own (S.NARROW_COST)."""
    from dataclasses import replace

    return replace(S.COST, wave_seconds=tuple((t.name, values[f"wave {t.name}"]) for t in S.TILES),
                   partial_round=tuple((t.name, values["partial_round"]) for t in S.TILES),
                   **{k: v for k, v in values.items() if not k.startswith("wave ") and k != "partial_round"})


def fit(S, record: list[dict], sms: int):
    """The CostModel of ``grid``'s candidates with the least geometric-mean loss that coordinate descent finds (the
    whole grid has 10^9 points): from three starts (every constant at its first, middle or last candidate), each
    constant in the grid's order set to the candidate that loses least with the others held (the earlier candidate on
    a tie), until a round changes none; the best of the three ends (the earlier start on a tie)."""
    candidates_of = grid(S)
    ends = []
    for pick in (lambda c: c[0], lambda c: c[len(c) // 2], lambda c: c[-1]):
        values = {name: pick(candidates) for name, candidates in candidates_of.items()}
        best = score(losses(S, model_of(S, values), record, sms))
        changed = True
        while changed:
            changed = False
            for name, candidates in candidates_of.items():
                for v in candidates:
                    trial = {**values, name: v}
                    s = score(losses(S, model_of(S, trial), record, sms))
                    if s < best - 1e-12:
                        best, values, changed = s, trial, True
        ends.append((best, values))
    return model_of(S, min(ends, key=lambda e: e[0])[1])


def report(label: str, ls: list[float]) -> str:
    return (f"{label}: geomean loss {score(ls):.3f}, worst {max(ls):.3f}, within 3% on "
            f"{sum(x <= 1.03 for x in ls)} of {len(ls)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--measure", action="store_true", help="time the choices on a GPU and write the record")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--missing", action="store_true",
                    help="with --measure: keep the record's times and time only the shapes it lacks")
    args = ap.parse_args()
    if args.missing and not args.measure:
        ap.error("--missing goes with --measure")
    if args.measure:  # the fit is CPU work: run the script again without --measure, anywhere
        measure(args.runs, args.missing)
        return
    import util  # noqa: F401
    from util import sgemm as S

    data = json.loads(RECORD.read_text())
    record, sms = data["shapes"], data["sms"]
    if [tuple(e["shape"]) for e in record] != shapes():
        raise SystemExit(f"{RECORD} does not hold shapes() in order: measure it again (--measure, on a GPU machine)")
    fitted = fit(S, record, sms)
    print(f"record: {len(record)} shapes, {data['device']}, {sms} SMs")
    print("fitted:", fitted)
    print("util.sgemm.COST:", S.COST)
    print(report("fitted", losses(S, fitted, record, sms)))
    print(report("util.sgemm.COST", losses(S, S.COST, record, sms)))
    start = 0
    for label, count in FAMILIES:
        part = record[start:start + count]
        start += count
        print(report(f"util.sgemm.COST on {label} ({len(part)})", losses(S, S.COST, part, sms)))
    halves = (record[0::2], record[1::2])
    for i, (train, test) in enumerate((halves, halves[::-1])):
        held = fit(S, train, sms)
        print(report(f"fitted on half {i + 1}, tested on the other", losses(S, held, test, sms)))


if __name__ == "__main__":
    main()
