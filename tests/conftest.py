"""Shared test set-up: sample-dump paths, a clean environment, and screen snapshots
stored in the top-level ``snapshots/`` folder."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_textual_snapshot as _pts

TESTS = Path(__file__).parent
ROOT = TESTS.parent
SAMPLES = ROOT / "sample_dumps"
SEEDS = sorted((SAMPLES / "seeds").glob("*.txt"))
# Real dumps the first-look and preview tests share (paths under sample_dumps/).
BIG = (
    "jax/jax-0.9.2/transformer_big/module_0001.jit_transformer_train_step"
    ".cpu_after_optimizations-buffer-assignment.txt"
)  # 2.4 MB, split layout (+ report)
COMBINED = (
    "jax/jax-0.4.31/scan_layers/module_0001.jit_scan_train_step"
    ".cpu_after_optimizations-buffer-assignment.txt"
)  # 59 kB, combined layout
SMALL = "seeds/000_aa093b3e4f73e23a.txt"


# The proof dumps (sample_dumps/proof: one GPT train step recompiled with each change
# the advice predicts, 22 modules) have tests of their own (test_proof_samples, the
# advice and fit tests); the sweeps over every sample leave them out.
SWEPT_OUT = ("proof",)


def swept(pattern: str) -> list[Path]:
    """The sample files matching ``pattern`` that the sweeps read, in path order."""
    return sorted(
        p for p in SAMPLES.rglob(pattern) if p.relative_to(SAMPLES).parts[0] not in SWEPT_OUT
    )


class _SnapshotsFolder(_pts.SVGImageExtension):
    """pytest-textual-snapshot 1.1.0 has no option for the folder. The path must keep
    the ``tests/..`` form: syrupy decides which snapshots a test module owns by a
    substring match on the test directory, and a plain absolute ``snapshots/`` path
    makes runs of single tests report the others as unused."""

    @classmethod
    def dirname(cls, *, test_location) -> str:
        test_dir = Path(test_location.filepath).parent
        up = Path(*[".."] * len(test_dir.resolve().relative_to(ROOT.resolve()).parts))
        return str(test_dir / up / "snapshots" / test_location.basename)


_pts.SVGImageExtension = _SnapshotsFolder


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch, tmp_path_factory):
    """Screens must not depend on the developer's terminal settings, nor a test on what
    an earlier run left in hlotop's cache (hlotop.loading.record_cache): each test has its own."""
    for var in ("NO_COLOR", "TEXTUAL_THEME", "FORCE_COLOR", "COLUMNS", "LINES"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    yield


def sample(relative: str) -> str:
    """Path of a sample dump, relative to the repo root, as a string."""
    path = SAMPLES / relative
    assert path.exists(), f"missing sample dump {relative}"
    return os.path.relpath(path, os.getcwd()) if str(path).startswith(os.getcwd()) else str(path)


def options_without_help(parser: argparse.ArgumentParser) -> list[str]:
    """The options of ``parser`` (an option's first spelling, a positional argument's
    name) whose help text is empty: ``--help`` says nothing of them."""
    # argparse lists a parser's arguments only in its private ``_actions``: this is the
    # one place the tests read it.
    return [
        a.option_strings[0] if a.option_strings else a.dest
        for a in parser._actions
        if not (a.help or "").strip()
    ]


def hlotop(
    *args: str, stdin: bytes | None = None, timeout: int = 120
) -> subprocess.CompletedProcess:
    """Run the ``hlotop`` command (this interpreter's) from the project's root, with
    ``stdin`` as its standard input; its output is captured as bytes."""
    return subprocess.run(
        [sys.executable, "-m", "hlotop", *args],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        timeout=timeout,
    )


async def exit_after_load(app, size=(80, 24)) -> str:
    """Run a Textual ``app`` until its load workers end; the plain text of the message
    it exits with (its return code is ``app.return_code``)."""
    calls: list[dict] = []
    real = app.exit

    def record(*args, **kwargs):
        calls.append(kwargs)
        real(*args, **kwargs)

    app.exit = record
    async with app.run_test(size=size) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
    return calls[0]["message"].plain


# The fast tier (``pytest -m "not slow"``): tests/unit. Every other folder sweeps every
# sample, drives the browser, or runs hlotop as a process: marked slow here, by folder.
FAST = "unit"


def pytest_collection_modifyitems(items) -> None:
    for item in items:
        folder = Path(str(item.fspath)).parent.name
        if folder != FAST:
            item.add_marker(pytest.mark.slow)
