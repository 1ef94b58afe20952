"""Run the project's notebooks headlessly into HTML reports (nbclient executes, nbconvert renders).

Usage::

    python scripts/execute_notebooks.py [NOTEBOOK ...] [--output DIR] [--param NAME=VALUE ...]
        [--timeout SECONDS] [--jobs N] [--simulator] [--in-place [--allow-simulator-outputs]] [--list]

With no notebook named it runs every ``notebooks/*.ipynb`` of the repository, in sorted order. For each
notebook it writes ``DIR/<name>.ipynb`` (executed, error output included when it failed) and
``DIR/<name>.html`` (images embedded, no script loaded from the network), then ``DIR/index.html`` with one
row per notebook: status, duration, device, link, and for a failure ``ename: evalue`` and the failing cell.
``DIR`` defaults to ``reports/`` (git-ignored). The exit status is 1 when any notebook failed.

Conventions for notebook authors:

* Device: print one line ``device: <name>``, i.e. ``print("device:", util.device_name())``. The index
  shows the first stdout line of that form (under the simulator ``util.device_name()`` is ``simulator``).
* Headline: print one line ``headline: <the notebook's answer in one line>``, computed by the notebook (e.g.
  ``headline: numba kernel 2 at 1.00x CUDA C``). The index shows the last stdout line of that form beside
  the notebook's status, so that a shared report answers its question at a glance.
* Sizes: set them in one cell tagged ``parameters`` (papermill's convention). Under the simulator that cell
  chooses small sizes itself from ``util.SIMULATED``; the executor sets no sizes. ``--param NAME=VALUE``
  always wins: a cell tagged ``injected-parameters`` assigning the values goes right after the
  ``parameters`` cell (an earlier run's injected cell is removed first). VALUE is a Python literal
  (``ast.literal_eval``), otherwise a string. A notebook without a ``parameters`` cell, or whose
  ``parameters`` cell assigns no such NAME, fails with a message saying so; the others still run.
* Cells are numbered as Jupyter numbers them (``In [j]``): the j-th code cell run, in progress lines
  (``[i/N] name: cell j/M, 12.3s elapsed``) and in error messages alike.

Device: the GPU is used when the CUDA driver library loads (the test ``util.backend`` makes; it is repeated
here because importing ``util`` imports numba, which this process does not need). Otherwise, or with
``--simulator``, or when ``NUMBA_ENABLE_CUDASIM=1`` is already set, kernels start with
``NUMBA_ENABLE_CUDASIM=1`` and every report carries a banner saying times are simulator wall time.
``--in-place`` writes each executed notebook that succeeded back over its source; it is refused under the
simulator (committed notebooks carry GPU outputs) unless ``--allow-simulator-outputs`` is given.
``--jobs N`` runs N notebooks at once, under the simulator only (on one GPU they would spoil each other's
timings); under the simulator N defaults to the CPUs this process may use.
"""

from __future__ import annotations

import argparse
import ast
import ctypes
import html
import keyword
import os
import re
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import nbformat
from jinja2 import DictLoader
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbconvert import HTMLExporter
from traitlets.config import Config

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = REPO / "notebooks"
REPORTS = REPO / "reports"
KERNEL = "python3"
PARAMETERS_TAG = "parameters"
INJECTED_TAG = "injected-parameters"
DEVICE_LINE = re.compile(r"^device: (.+)$", re.MULTILINE)
HEADLINE = re.compile(r"^headline: (.+)$", re.MULTILINE)
SIMULATOR_BANNER = (
    "Executed in numba's CUDA simulator at small sizes: times are simulator wall time, not GPU time"
)
BANNER_STYLE = (
    "margin:0 0 1em;padding:.6em 1em;border:2px solid #b35c00;background:#fff3e0;"
    "color:#5c2e00;font-weight:bold"
)

# JupyterLab's template without require.js or MathJax from a CDN (math stays TeX source, readable offline).
_TEMPLATE = "report.html.j2"
_TEMPLATES = {
    _TEMPLATE: """{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block body_header -%}
{{ super() }}
{%- if resources.simulator_banner %}
<div class="simulator-banner" style="{{ resources.banner_style }}">{{ resources.simulator_banner }}</div>
{%- endif %}
{%- endblock body_header -%}
"""
}


class CannotRun(ValueError):
    """A notebook cannot be run as asked: unreadable, or ``--param`` does not apply to it."""


@dataclass(frozen=True)
class Job:
    """One notebook to run and where its results go."""

    index: int
    total: int
    source: Path
    output_dir: Path
    params: dict[str, Any]
    timeout: int
    simulated: bool
    in_place: bool


@dataclass(frozen=True)
class Outcome:
    """What running one notebook gave."""

    name: str
    ok: bool
    seconds: float
    device: str
    error: str | None
    html: Path | None
    headline: str = ""


def cuda_driver_present() -> bool:
    """True when the CUDA driver library loads (a GPU machine), as ``util.backend`` decides."""
    for name in ("libcuda.so.1", "libcuda.so", "nvcuda.dll"):
        try:
            ctypes.CDLL(name)
            return True
        except OSError:
            continue
    return False


def parse_param(text: str) -> tuple[str, Any]:
    """``NAME=VALUE`` -> (NAME, VALUE as a Python literal, else the string)."""
    name, sep, raw = text.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier() or keyword.iskeyword(name):
        raise argparse.ArgumentTypeError(
            f"{text!r}: write NAME=VALUE with NAME a Python variable name, e.g. --param size=256"
        )
    try:
        return name, ast.literal_eval(raw.strip())
    except (ValueError, SyntaxError):
        return name, raw


def assigned_names(source: str) -> set[str] | None:
    """Variable names a cell assigns anywhere, or None when it is not plain Python (magics)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}


def inject_parameters(nb: nbformat.NotebookNode, params: dict[str, Any], name: str) -> None:
    """Drop earlier injected-parameters cells; with params, add one after the ``parameters`` cell."""
    nb.cells = [cell for cell in nb.cells if INJECTED_TAG not in cell.metadata.get("tags", [])]
    if not params:
        return
    where = next(
        (i for i, cell in enumerate(nb.cells) if PARAMETERS_TAG in cell.metadata.get("tags", [])), None
    )
    if where is None:
        raise CannotRun(
            f"{name} has no cell tagged {PARAMETERS_TAG!r}, so --param {', '.join(params)} cannot apply: "
            f"tag the cell that sets its sizes {PARAMETERS_TAG!r}, or do not pass --param for it"
        )
    known = assigned_names(nb.cells[where].source)
    unknown = sorted(set(params) - known) if known is not None else []
    if unknown:
        raise CannotRun(
            f"{name}: its {PARAMETERS_TAG!r} cell sets no {', '.join(unknown)}; "
            f"it sets {', '.join(sorted(known)) or 'nothing'}"
        )
    source = "# Parameters\n" + "".join(f"{key} = {value!r}\n" for key, value in params.items())
    cell = nbformat.v4.new_code_cell(source, metadata={"tags": [INJECTED_TAG]})
    if nb.nbformat_minor < 5:  # cell ids came with nbformat 4.5
        del cell["id"]
    nb.cells.insert(where + 1, cell)


def prepare(source: Path, params: dict[str, Any]) -> nbformat.NotebookNode:
    """Read a notebook and inject the ``--param`` values."""
    try:
        nb = nbformat.read(source, as_version=4)
    except (OSError, ValueError) as exc:  # not there, or not a notebook's JSON
        raise CannotRun(f"{source.name} cannot be read: {exc}") from exc
    inject_parameters(nb, params, source.name)
    return nb


def printed(nb: nbformat.NotebookNode, pattern: re.Pattern[str]) -> list[str]:
    """Every stdout line of the notebook's outputs that matches ``pattern`` (its first group), in order."""
    found = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and output.get("name") == "stdout":
                found += [m.group(1).strip() for m in pattern.finditer(output.get("text", ""))]
    return found


def device_of(nb: nbformat.NotebookNode, simulated: bool) -> str:
    """The device a notebook printed as ``device: <name>``; else what the executor knows."""
    lines = printed(nb, DEVICE_LINE)
    if lines:
        return lines[0]
    return "simulator" if simulated else "unknown (no 'device: <name>' printed)"


def headline_of(nb: nbformat.NotebookNode) -> str:
    """The last ``headline: ...`` line the notebook printed, or "" when it printed none."""
    lines = printed(nb, HEADLINE)
    return lines[-1] if lines else ""


def kernel_env(simulated: bool) -> dict[str, str]:
    """The kernel's environment: ours, with numba's CUDA simulator switched on when simulated."""
    env = dict(os.environ)
    if simulated:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    return env


def export_html(nb: nbformat.NotebookNode, name: str, nb_dir: Path, path: Path, simulated: bool) -> None:
    """Render ``nb`` to a self-contained HTML page (embedded images, banner under the simulator)."""
    exporter = HTMLExporter(
        template_name="lab", template_file=_TEMPLATE, extra_loaders=[DictLoader(_TEMPLATES)], embed_images=True
    )
    resources = {
        "metadata": {"name": name, "path": str(nb_dir)},
        "simulator_banner": SIMULATOR_BANNER if simulated else "",
        "banner_style": BANNER_STYLE,
    }
    body, _ = exporter.from_notebook_node(nb, resources=resources)
    path.write_text(body, encoding="utf-8")


def progress(line: str) -> None:
    """One whole line in one write: print() writes the text and its newline separately, so lines from
    notebooks run in parallel worker processes could splice into each other on the shared stdout."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity where the OS has one, else all)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def execute_notebook(job: Job) -> Outcome:
    """Run one notebook in its own folder, write its executed copy and HTML, and say how it went."""
    name = job.source.stem
    prefix = f"[{job.index}/{job.total}] {name}"
    nb_dir = job.source.parent
    started = time.perf_counter()
    progress(f"{prefix}: starting {job.source}")
    try:
        nb = prepare(job.source, job.params)
    except CannotRun as exc:
        progress(f"{prefix}: FAILED, not run: {exc}")
        return Outcome(name, False, 0.0, "not run", str(exc), None)

    total_cells = sum(1 for cell in nb.cells if cell.cell_type == "code" and cell.source.strip())
    current = 0

    def on_cell_execute(cell: nbformat.NotebookNode, cell_index: int) -> None:
        nonlocal current
        current += 1
        progress(f"{prefix}: cell {current}/{total_cells}, {time.perf_counter() - started:.1f}s elapsed")

    error = None
    # The kernel talks over Unix sockets in a folder of its own, not TCP ports: jupyter_client picks free
    # TCP ports by binding and releasing them, so two kernels starting at once can be handed the same port
    # and one never answers (jupyter/jupyter_client#487; "Kernel didn't respond in 60 seconds" under --jobs).
    with tempfile.TemporaryDirectory(prefix="nbk-") as sockets:
        client = NotebookClient(
            nb,
            config=Config({"KernelManager": {"transport": "ipc", "ip": str(Path(sockets) / "k")}}),
            timeout=job.timeout,
            kernel_name=KERNEL,
            resources={"metadata": {"path": str(nb_dir)}},
            record_timing=False,  # no per-cell timestamps: refreshed notebooks differ in outputs only
            on_cell_execute=on_cell_execute,
        )
        try:
            client.execute(env=kernel_env(job.simulated))
        except CellExecutionError as exc:
            error = f"{exc.ename}: {exc.evalue} (cell {current})"
        except Exception as exc:  # a timeout, a dead kernel, a kernel that did not start: report, run the others
            where = f"cell {current}" if current else "before the first cell"
            first_line = (str(exc).strip().splitlines() or [""])[0]
            error = f"{type(exc).__name__}: {first_line} ({where})"
    seconds = time.perf_counter() - started

    nbformat.write(nb, job.output_dir / f"{name}.ipynb")
    html_path = job.output_dir / f"{name}.html"
    export_html(nb, name, nb_dir, html_path, job.simulated)
    if error is None:
        progress(f"{prefix}: ok in {seconds:.1f}s")
        if job.in_place:
            nbformat.write(nb, job.source)
            progress(f"{prefix}: written back over {job.source}")
    else:
        progress(f"{prefix}: FAILED after {seconds:.1f}s: {error}")
        if job.in_place:
            progress(f"{prefix}: not written back over {job.source}: it failed")
    return Outcome(name, error is None, seconds, device_of(nb, job.simulated), error, html_path, headline_of(nb))


def write_index(outcomes: list[Outcome], output_dir: Path, simulated: bool, seconds: float) -> Path:
    """``index.html``: one row per notebook (status, duration, device, link, error)."""
    rows = []
    for outcome in outcomes:
        link = (
            f'<a href="{html.escape(outcome.html.name)}">{html.escape(outcome.name)}</a>'
            if outcome.html
            else html.escape(outcome.name)
        )
        status = "ok" if outcome.ok else "FAILED"
        rows.append(
            f'<tr class="{status.lower()}"><td>{link}</td><td>{html.escape(outcome.headline)}</td><td>{status}</td>'
            f"<td>{outcome.seconds:.1f} s</td><td>{html.escape(outcome.device)}</td>"
            f"<td>{html.escape(outcome.error or '')}</td></tr>"
        )
    failed = sum(not outcome.ok for outcome in outcomes)
    banner = f'<div class="simulator-banner" style="{BANNER_STYLE}">{SIMULATOR_BANNER}</div>' if simulated else ""
    page = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Notebook reports</title>
<style>
body {{ font-family: sans-serif; margin: 2em; }}
table {{ border-collapse: collapse; }}
th, td {{ border: 1px solid #ccc; padding: .3em .8em; text-align: left; vertical-align: top; }}
tr.failed td:nth-child(3) {{ color: #b00; font-weight: bold; }}
</style>
</head>
<body>
{banner}
<h1>Notebook reports</h1>
<p>{len(outcomes)} notebooks, {failed} failed, {seconds:.1f} s wall time in all;
run {datetime.now().isoformat(timespec="seconds")}.</p>
<table>
<tr><th>Notebook</th><th>Headline</th><th>Status</th><th>Duration</th><th>Device</th><th>Error</th></tr>
{chr(10).join(rows)}
</table>
</body>
</html>
"""
    path = output_dir / "index.html"
    path.write_text(page, encoding="utf-8")
    return path


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    parser = argparse.ArgumentParser(
        description="Execute the notebooks headlessly into reports/ (executed .ipynb, .html, index.html)."
    )
    parser.add_argument("notebooks", nargs="*", type=Path, metavar="NOTEBOOK",
                        help="notebooks to run (default: notebooks/*.ipynb, sorted)")
    parser.add_argument("--output", type=Path, default=REPORTS, metavar="DIR",
                        help="where reports go (default: reports/ at the repository root)")
    parser.add_argument("--param", type=parse_param, action="append", default=[], metavar="NAME=VALUE",
                        help="override a variable of the notebooks' 'parameters' cell (repeatable)")
    parser.add_argument("--timeout", type=int, default=900, metavar="SECONDS",
                        help="per-cell timeout (default: 900)")
    parser.add_argument("--jobs", type=int, default=None, metavar="N",
                        help="notebooks run at once, simulator only (default: on a GPU 1, under the simulator "
                             "as many as the CPUs this process may use)")
    parser.add_argument("--simulator", action="store_true",
                        help="use numba's CUDA simulator even when a GPU is present")
    parser.add_argument("--in-place", action="store_true",
                        help="also write each executed notebook that succeeded back over its source")
    parser.add_argument("--allow-simulator-outputs", action="store_true",
                        help="let --in-place write simulator outputs into the notebooks")
    parser.add_argument("--list", action="store_true", help="print the notebooks that would run, then stop")
    return parser


def resolve_notebooks(parser: argparse.ArgumentParser, named: list[Path]) -> list[Path]:
    """The notebooks to run: those named (checked), else all of notebooks/ in sorted order."""
    if not named:
        return sorted(NOTEBOOKS.glob("*.ipynb"))
    paths = [path.resolve() for path in named]
    for path in paths:
        if path.suffix != ".ipynb" or not path.is_file():
            parser.error(f"{path}: no such notebook (name .ipynb files, or none for all of {NOTEBOOKS})")
    stems = [path.stem for path in paths]
    clashes = sorted({stem for stem in stems if stems.count(stem) > 1})
    if clashes:
        parser.error(f"several notebooks named {', '.join(clashes)}: their reports would overwrite each other")
    return paths


def main(argv: list[str] | None = None) -> int:
    """Run the notebooks; 0 when all succeeded, 1 when any failed."""
    parser = build_parser()
    args = parser.parse_args(argv)
    notebooks = resolve_notebooks(parser, args.notebooks)
    if args.list:
        for path in notebooks:
            print(path)
        return 0
    if not notebooks:
        parser.error(f"no notebooks in {NOTEBOOKS}: add one or name one")
    if args.timeout <= 0 or (args.jobs is not None and args.jobs <= 0):
        parser.error("--timeout and --jobs take positive numbers")
    simulated = args.simulator or os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" or not cuda_driver_present()
    if args.jobs is None:
        args.jobs = min(len(notebooks), usable_cpus()) if simulated else 1
    if args.in_place and simulated and not args.allow_simulator_outputs:
        parser.error(
            "--in-place under numba's CUDA simulator: committed notebooks must carry GPU outputs. "
            "Run on a GPU machine, or add --allow-simulator-outputs if you mean it."
        )
    if args.jobs > 1 and not simulated:
        parser.error("--jobs > 1 on a GPU: notebooks sharing one GPU spoil each other's timings; use --jobs 1")

    output_dir = args.output.resolve()
    output_dir.mkdir(parents=True, exist_ok=True)
    mode = "numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1)" if simulated else "GPU"
    print(f"{len(notebooks)} notebooks on {mode}, {args.jobs} at a time, reports in {output_dir}", flush=True)
    params = dict(args.param)
    jobs = [
        Job(i, len(notebooks), path, output_dir, params, args.timeout, simulated, args.in_place)
        for i, path in enumerate(notebooks, start=1)
    ]
    started = time.perf_counter()
    if args.jobs == 1:
        outcomes = [execute_notebook(job) for job in jobs]
    else:
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            outcomes = list(pool.map(execute_notebook, jobs))
    seconds = time.perf_counter() - started
    index = write_index(outcomes, output_dir, simulated, seconds)

    print("\nnotebook durations:")
    for outcome in outcomes:
        status = "ok" if outcome.ok else "FAILED"
        detail = f"  {outcome.error}" if outcome.error else ""
        headline = f"  {outcome.headline}" if outcome.headline else ""
        print(f"  {status:<6} {outcome.seconds:7.1f}s  {outcome.name}{headline}{detail}")
    failed = sum(not outcome.ok for outcome in outcomes)
    print(f"total wall time {seconds:.1f}s; {failed} of {len(outcomes)} failed; index: {index}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
