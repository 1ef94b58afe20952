"""scripts/execute_notebooks.py on tiny notebooks made in tmp_path, with real ipykernel kernels."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "execute_notebooks.py"
PNG_1X1 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def _load_script() -> ModuleType:
    """The script as a module (it is no installed package): the importlib recipe for a source file."""
    spec = importlib.util.spec_from_file_location("execute_notebooks", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


en = _load_script()


def _write(path: Path, *cells: nbformat.NotebookNode) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(new_notebook(cells=list(cells)), path)
    return path


def _parameters(source: str) -> nbformat.NotebookNode:
    return new_code_cell(source, metadata={"tags": ["parameters"]})


def _stdout(nb: nbformat.NotebookNode) -> str:
    return "".join(
        out.get("text", "") for cell in nb.cells for out in cell.get("outputs", []) if out.get("name") == "stdout"
    )


def _row(index_html: str, name: str) -> str:
    found = re.search(rf'<tr class="\w+"><td><a href="{name}\.html">{name}</a>.*?</tr>', index_html)
    assert found, f"no row for {name} in index.html"
    return found.group(0)


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Three notebooks (the middle one fails) run as a script, two at a time, in simulator mode."""
    base = tmp_path_factory.mktemp("suite")
    nb_dir = base / "nbs"
    _write(
        nb_dir / "a_ok.ipynb",
        new_markdown_cell("# passes"),
        new_code_cell(
            "import os\nprint('device: Test GPU 9000')\nprint('headline: draft')\nprint('cwd:', os.getcwd())\n"
            "print('cudasim:', os.environ.get('NUMBA_ENABLE_CUDASIM'))\n"
            "from ipykernel.kernelapp import IPKernelApp\nprint('transport:', IPKernelApp.instance().transport)"
        ),
        new_code_cell(f"import base64\nfrom IPython.display import Image\nImage(data=base64.b64decode('{PNG_1X1}'))"),
        new_code_cell("print('headline: a_ok computed 42 < 43')"),
    )
    _write(nb_dir / "b_bad.ipynb", new_code_cell("a = 1"), new_code_cell("1 / 0"), new_code_cell("print('after')"))
    _write(nb_dir / "c_ok.ipynb", new_code_cell("print('c ran')"))
    out = base / "reports"
    names = ["a_ok", "b_bad", "c_ok"]
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), *(str(nb_dir / f"{n}.ipynb") for n in names),
         "--output", str(out), "--simulator", "--jobs", "2"],
        cwd=base, capture_output=True, text=True, timeout=120,
    )
    return {"proc": proc, "nb_dir": nb_dir, "out": out, "names": names,
            "index": (out / "index.html").read_text()}


def test_failing_notebook_does_not_stop_the_others(suite: dict) -> None:
    proc, out = suite["proc"], suite["out"]
    assert proc.returncode == 1, proc.stdout + proc.stderr
    for name in suite["names"]:
        assert (out / f"{name}.ipynb").is_file() and (out / f"{name}.html").is_file()
    bad = nbformat.read(out / "b_bad.ipynb", as_version=4)
    assert [o["ename"] for o in bad.cells[1].outputs if o.output_type == "error"] == ["ZeroDivisionError"]
    assert bad.cells[2].outputs == []  # nothing runs after the failure
    assert "c ran" in _stdout(nbformat.read(out / "c_ok.ipynb", as_version=4))
    row = _row(suite["index"], "b_bad")
    assert "<td>FAILED</td>" in row and "ZeroDivisionError: division by zero (cell 2)" in row
    for name in ("a_ok", "c_ok"):
        assert "<td>ok</td>" in _row(suite["index"], name)
    assert "FAILED after" in proc.stdout and "ZeroDivisionError: division by zero (cell 2)" in proc.stdout


def test_progress_and_timings_are_printed(suite: dict) -> None:
    stdout = suite["proc"].stdout
    # Two notebooks run at once: each progress line arrives whole, never spliced into another's.
    progress = [line for line in stdout.splitlines() if re.search(r"\[\d/3\]", line)]
    assert all(len(re.findall(r"\[\d/3\]", line)) == 1 and line.startswith("[") for line in progress), stdout
    assert re.search(r"^\[1/3\] a_ok: cell 1/3, \d+\.\ds elapsed$", stdout, re.MULTILINE), stdout
    assert re.search(r"^\[1/3\] a_ok: cell 3/3, \d+\.\ds elapsed$", stdout, re.MULTILINE)
    assert re.search(r"^\[2/3\] b_bad: cell 2/3, ", stdout, re.MULTILINE)
    assert not re.search(r"b_bad: cell 3/3", stdout)
    assert re.search(r"^  ok +\d+\.\ds  c_ok$", stdout, re.MULTILINE)
    assert re.search(r"^total wall time \d+\.\ds; 1 of 3 failed", stdout, re.MULTILINE)


def test_kernel_runs_in_the_notebook_folder_under_the_simulator(suite: dict) -> None:
    text = _stdout(nbformat.read(suite["out"] / "a_ok.ipynb", as_version=4))
    assert f"cwd: {suite['nb_dir']}\n" in text
    assert "cudasim: 1\n" in text
    assert "transport: ipc\n" in text  # Unix sockets: no TCP port race between kernels started together
    assert "<td>Test GPU 9000</td>" in _row(suite["index"], "a_ok")  # from its 'device: ...' line
    assert "<td>simulator</td>" in _row(suite["index"], "c_ok")  # printed none: the executor's mode


def test_index_shows_each_notebooks_last_headline(suite: dict) -> None:
    assert "<td>a_ok computed 42 &lt; 43</td>" in _row(suite["index"], "a_ok")  # the last one, escaped
    assert "draft" not in _row(suite["index"], "a_ok")
    assert re.search(r"^  ok +\d+\.\ds  a_ok  a_ok computed 42 < 43$", suite["proc"].stdout, re.MULTILINE)


def test_reports_carry_the_simulator_banner_and_work_offline(suite: dict) -> None:
    assert en.SIMULATOR_BANNER in suite["index"]
    for name in suite["names"]:
        page = (suite["out"] / f"{name}.html").read_text()
        assert en.SIMULATOR_BANNER in page
        assert not re.search(r"<script[^>]*\bsrc=", page)  # no require.js / MathJax from a CDN
    assert "data:image/png;base64," in (suite["out"] / "a_ok.html").read_text()


def test_param_override_injects_a_cell_and_in_place_writes_back(tmp_path: Path) -> None:
    source = _write(
        tmp_path / "p.ipynb",
        _parameters("x = 1\nlabel = 'a'"),
        new_code_cell("print('x is', x, label)"),
    )
    argv = [str(source), "--output", str(tmp_path / "out"), "--param", "x=5", "--param", "label=hello world",
            "--simulator", "--in-place", "--allow-simulator-outputs"]
    assert en.main(argv) == 0
    for path in (tmp_path / "out" / "p.ipynb", source):
        nb = nbformat.read(path, as_version=4)
        assert nb.cells[0].source == "x = 1\nlabel = 'a'"
        assert nb.cells[1].metadata["tags"] == ["injected-parameters"]
        assert "x = 5\n" in nb.cells[1].source and "label = 'hello world'\n" in nb.cells[1].source
        assert _stdout(nb) == "x is 5 hello world\n"


def test_bad_params_fail_those_notebooks_with_a_clear_message(tmp_path: Path) -> None:
    no_cell = _write(tmp_path / "no_cell.ipynb", new_code_cell("y = 1"))
    other = _write(tmp_path / "other.ipynb", _parameters("x = 1"), new_code_cell("print(x)"))
    out = tmp_path / "out"
    assert en.main([str(no_cell), str(other), "--output", str(out), "--param", "y=2", "--simulator"]) == 1
    index = (out / "index.html").read_text()
    assert "no_cell.ipynb has no cell tagged &#x27;parameters&#x27;" in index
    assert "other.ipynb: its &#x27;parameters&#x27; cell sets no y; it sets x" in index
    assert not (out / "other.ipynb").exists()  # never run


def test_inject_parameters_replaces_an_earlier_injected_cell() -> None:
    nb = new_notebook(cells=[_parameters("n = 8"), new_code_cell("n = 9", metadata={"tags": ["injected-parameters"]})])
    en.inject_parameters(nb, {}, "t.ipynb")
    assert [c.source for c in nb.cells] == ["n = 8"]
    en.inject_parameters(nb, {"n": 16}, "t.ipynb")
    assert [c.source for c in nb.cells] == ["n = 8", "# Parameters\nn = 16\n"]


def test_parse_param() -> None:
    assert en.parse_param("n=256") == ("n", 256)
    assert en.parse_param("sizes=[64, 128]") == ("sizes", [64, 128])
    assert en.parse_param("timer=cupti") == ("timer", "cupti")
    for bad in ("n", "2n=1", "class=1"):
        with pytest.raises(Exception, match="NAME=VALUE"):
            en.parse_param(bad)


def test_in_place_is_refused_under_the_simulator(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _write(tmp_path / "n.ipynb", new_code_cell("print(1)"))
    before = source.read_text()
    with pytest.raises(SystemExit) as exit_info:
        en.main([str(source), "--in-place", "--simulator", "--output", str(tmp_path / "out")])
    assert exit_info.value.code == 2
    assert "committed notebooks must carry GPU outputs" in capsys.readouterr().err
    assert source.read_text() == before and not (tmp_path / "out").exists()


def test_parallel_jobs_are_refused_on_a_gpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(en, "cuda_driver_present", lambda: True)
    monkeypatch.delenv("NUMBA_ENABLE_CUDASIM", raising=False)
    source = _write(tmp_path / "n.ipynb", new_code_cell("print(1)"))
    with pytest.raises(SystemExit):
        en.main([str(source), "--jobs", "2", "--output", str(tmp_path / "out")])
    assert "spoil each other's timings" in capsys.readouterr().err


def test_list_prints_the_repository_notebooks_sorted() -> None:
    proc = subprocess.run([sys.executable, str(SCRIPT), "--list"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert [Path(line) for line in proc.stdout.splitlines()] == sorted((ROOT / "notebooks").glob("*.ipynb"))
