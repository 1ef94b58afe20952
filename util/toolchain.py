"""Find the CUDA binary tools (ptxas, cuobjdump, nvdisasm): the ``nvidia-cuda-*`` pip wheels, else a CUDA toolkit."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
from functools import cache
from pathlib import Path

# tool -> the pip package (CUDA 13 toolkit wheel) that ships it
PACKAGES = {
    "ptxas": "nvidia-cuda-nvcc",
    "cuobjdump": "nvidia-cuda-cuobjdump",
    "nvdisasm": "nvidia-cuda-nvdisasm",
}


class ToolchainError(RuntimeError):
    """A CUDA tool is missing or failed."""


@cache
def tool(name: str) -> Path:
    """The path of ``name`` (a key of ``PACKAGES``): from its pip wheel, else from a CUDA toolkit (PATH,
    ``$CUDA_HOME/bin``, ``/usr/local/cuda/bin``) as on GPU machines that have the toolkit but not the wheels."""
    if name not in PACKAGES:
        raise ValueError(f"unknown CUDA tool {name!r}; known: {', '.join(PACKAGES)}")
    package = PACKAGES[name]
    hint = f"install it with `pip install '{package}>=13,<14'` (it is a dependency of this project)"
    try:
        files = importlib.metadata.distribution(package).files or []
    except importlib.metadata.PackageNotFoundError:
        cuda_bin = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin")
        system = shutil.which(name) or shutil.which(name, path=cuda_bin)
        if system:
            return Path(system).resolve()
        raise ToolchainError(f"{name} not found: the pip package {package} is not installed and no CUDA toolkit "
                             f"on PATH or in {cuda_bin} has it; {hint}") from None
    for f in files:
        if f.parent.name == "bin" and f.name in (name, f"{name}.exe"):
            path = Path(f.locate()).resolve()
            if path.is_file() and os.access(path, os.X_OK):
                return path
    raise ToolchainError(f"{name} not found in the installed pip package {package} (a broken install?); "
                         f"reinstall: `pip install --force-reinstall '{package}>=13,<14'`")


def run_tool(name: str, *args: str | os.PathLike[str]) -> str:
    """Run a CUDA tool and return its stdout (stderr appended); raise ToolchainError with its message on failure."""
    proc = subprocess.run([str(tool(name)), *map(str, args)], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ToolchainError(f"{name} failed (exit {proc.returncode}): {(proc.stderr or proc.stdout).strip()}")
    return proc.stdout + proc.stderr
