"""The project's static checks, run by the same command as every other test (the
README's): ruff's lint and format, mypy over the package, and the import-linter
contracts of pyproject.toml (the layers import only downwards, only the ui imports
Textual, only the entry points set the process policy). Each reports what it found."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _run(*command: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tui")}
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env)


@pytest.mark.parametrize(
    "check",
    [
        ("ruff", "check", "--quiet", "."),
        ("ruff", "format", "--check", "--quiet", "."),
        ("mypy",),
        ("lint-imports",),
    ],
    ids=["ruff check", "ruff format", "mypy", "import contracts"],
)
def test_the_tree_passes(check):
    tool = BIN / check[0]
    out = _run(str(tool), *check[1:])
    assert out.returncode == 0, f"{' '.join(check)}:\n{out.stdout}\n{out.stderr}"
