"""One bad module never loses the rest: a size or a peak-list entry of 2^63 or more (no
int64 XLA prints) is a diagnostic in every mode, and in a directory the module that has
one is named with its reason while every other is reported, as is a module whose file
name is not UTF-8 and one whose worker process is killed; the status says "partial" (3).
Ctrl-c while a directory is ranked prints one line."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import BIG, ROOT, SAMPLES, sample
from hlotop.cli import main
from hlotop.loading import directory
from hlotop.loading.loader import load

RUN = SAMPLES / "dirs" / "jax-0.10.2-cpu-train"
SEED3 = Path(sample("seeds/003_a3085531593bac68.txt"))  # allocation 1 at line 4, peak list
PAST = str(1 << 63)  # 9223372036854775808: one past the largest int64
STAGE = "module_0000.jit_stage.cpu_after_optimizations"  # line 2: allocation 0: size 4
SEED = "module_0002.jit__threefry_seed.cpu_after_optimizations"  # its peak list: line 9
SPLIT = "module_0004.jit__threefry_split.cpu_after_optimizations"
NORMAL = "module_0012.jit__normal.cpu_after_optimizations"


def _past_int64(text: str, where: str) -> tuple[str, int]:
    """``text`` (a dump) with allocation 1's size or the peak list's first bytes made
    2^63, and the 1-based line of the change."""
    lines = text.split("\n")
    if where == "allocation size":
        at = next(k for k, line in enumerate(lines) if line.startswith("allocation 1: size "))
        size = lines[at].split("size ", 1)[1].split(",", 1)[0]
        lines[at] = lines[at].replace(f"size {size},", f"size {PAST},", 1)
    else:
        at = next(k for k, line in enumerate(lines) if line.endswith(" (peak):")) + 1
        head, tail = lines[at].split(": ", 1)
        lines[at] = f"{head}: {PAST} {tail.split(' ', 1)[1]}"
    return "\n".join(lines), at + 1


@pytest.mark.parametrize("where", ["allocation size", "peak entry"])
def test_a_size_past_int64_is_a_diagnostic_in_every_report(tmp_path, capsys, where):
    text, line = _past_int64(SEED3.read_text(), where)
    path = tmp_path / "damaged-buffer-assignment.txt"
    path.write_text(text)
    for mode in (["--summary"], ["--json"], ["--export", "csv"]):
        assert main([*mode, str(path)]) == 0, mode
        assert main(["--strict", *mode, str(path)]) == 1, mode
    err = capsys.readouterr().err
    assert "internal error" not in err and "Traceback" not in err
    found = [d for d in load(path).diagnostics if d.line == line]
    assert len(found) == 1 and "below 2^63" in found[0].message, found


@pytest.mark.parametrize("where", ["allocation size", "peak entry"])
def test_a_size_past_int64_is_a_diagnostic_in_the_browser(tmp_path, where):
    """A dump big enough for the browser's first look (BIG, 2.4 MB): it opens, with the
    damaged line among its diagnostics."""
    from hlotop.ui.apps.app import HlotopApp

    source = Path(sample(BIG))
    text, line = _past_int64(source.read_text(), where)
    for sibling in source.parent.glob(source.name.replace("-buffer-assignment.txt", "*")):
        shutil.copy(sibling, tmp_path / sibling.name)
    path = tmp_path / source.name
    path.write_text(text)

    async def run() -> HlotopApp:
        app = HlotopApp(str(path))
        async with app.run_test(size=(120, 40)) as pilot:
            while app.module is None and app.return_code is None:
                await pilot.pause(0.05)
            await app.workers.wait_for_complete()
            await pilot.pause()
        return app

    app = asyncio.run(run())
    assert app.return_code is None, "the browser exited"
    assert any(d.line == line and "below 2^63" in d.message for d in app.module.diagnostics)


def _bad_run(tmp_path: Path) -> Path:
    """The 19-module run with three damaged: module_0000's allocation size and
    module_0002's peak list 2^63 bytes, and module_0004's file names holding a byte
    that is not UTF-8."""
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    stage = run / f"{STAGE}-buffer-assignment.txt"
    stage.write_text(
        stage.read_text().replace("allocation 0: size 4,", f"allocation 0: size {PAST},")
    )
    seed = run / f"{SEED}-live-range.txt"
    seed.write_text(
        seed.read_text().replace("{}: 8 bytes (cumulative", f"{{}}: {PAST} bytes (cumulative")
    )
    for f in run.glob(f"{SPLIT}*"):
        named = os.fsencode(f.name).replace(b"threefry", b"thr\xffefry")
        os.rename(f, os.path.join(os.fsencode(run), named))
    return run


def _hlotop(*args: str) -> subprocess.CompletedProcess:
    """The hlotop command, writing UTF-8 strictly (as under a UTF-8 locale)."""
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "hlotop", *args], capture_output=True, cwd=ROOT, env=env, timeout=120
    )


def test_a_directory_reports_every_good_module_and_why_a_bad_one_is_not(tmp_path):
    run = _bad_run(tmp_path)
    text = _hlotop("--summary", str(run))
    assert text.returncode == 3, text.stderr
    out = text.stdout.decode()
    assert "19 modules" in out and "jit_train_step" in out
    assert "line 2: allocation 0: size 9223372036854775808 is 2^63 or more" in out.replace(
        "\n", " "
    )
    assert "thr\\xffefry_split" in out  # read, its name escaped
    doc = json.loads(_hlotop("--json", str(run)).stdout)
    errors = {m["name"]: m["error"] for m in doc["modules"]}
    assert sum(m["identical"] for m in doc["modules"]) == 19
    assert errors[STAGE].startswith("line 2: allocation 0: size 9223372036854775808")
    assert errors[SEED].startswith("line 9: a peak-list entry of 9223372036854775808 bytes")
    assert errors[SPLIT.replace("threefry", "thr\udcffefry")] is None
    assert sum(e is not None for e in errors.values()) == 2
    assert _hlotop("--json", str(run)).returncode == 3
    diff = _hlotop("diff", "--summary", str(RUN), str(run))
    assert diff.returncode == 3, diff.stderr
    assert f"NEW {STAGE}: line 2: allocation 0" in diff.stdout.decode()
    sides = json.loads(_hlotop("diff", "--json", str(RUN), str(run)).stdout)["programs"]
    assert sum(p["new"] is not None and p["new"]["error"] is not None for p in sides) == 2


def test_the_modules_view_ranks_a_directory_with_bad_modules(tmp_path):
    """The modules view ranks the run (it exited with an internal error): the two
    modules with a size past int64 are in the list, with why their first look failed."""
    from hlotop.ui.apps.modules_app import ModulesApp
    from hlotop.ui.screens.modules import ModulesScreen

    run = _bad_run(tmp_path)

    async def rows() -> list:
        app = ModulesApp(str(run))
        async with app.run_test(size=(120, 40)) as pilot:
            await app.wait_until_ranked()
            await pilot.pause()
            assert isinstance(app.screen, ModulesScreen) and not app.exiting
            return [(r.figures.entry.name, r.figures.error) for r in app.screen.rows]

    shown = asyncio.run(rows())
    assert len(shown) == 18  # 19 modules, two compiled alike
    assert {name for name, error in shown if error} == {STAGE, SEED}


def _with_workers(monkeypatch, read) -> None:
    """Rank modules on two forked workers, each module read by ``read(entry)`` (the
    real reading where it returns None)."""
    import hlotop.process

    real = directory.quick_figures
    monkeypatch.setattr(hlotop.process, "report_workers", lambda: 2)
    monkeypatch.setattr(directory, "quick_figures", lambda entry: read(entry) or real(entry))


@pytest.mark.parametrize("killed", ["always", "once"])
def test_a_worker_killed_on_a_module_loses_that_module_only(tmp_path, monkeypatch, capsys, killed):
    """A worker killed by SIGKILL (as the out-of-memory killer does) while it reads
    module_0012: the others are reported; module_0012 is read again alone, and named
    with the signal if that is killed too (status 3), or reported if not (status 0)."""
    parent, flag = os.getpid(), tmp_path / "killed once"

    def read(entry):
        if os.getpid() != parent and entry.name == NORMAL and not flag.exists():
            if killed == "once":
                flag.touch()
            os.kill(os.getpid(), signal.SIGKILL)

    _with_workers(monkeypatch, read)
    code = main(["--json", str(RUN)])
    doc = json.loads(capsys.readouterr().out)
    errors = {m["name"]: m["error"] for m in doc["modules"]}
    assert sum(m["identical"] for m in doc["modules"]) == 19
    if killed == "always":
        assert code == 3
        assert errors[NORMAL] == (
            "the worker process reading it was killed by SIGKILL "
            "(as the kernel's out-of-memory killer does)"
        )
        assert [n for n, e in errors.items() if e] == [NORMAL]
    else:
        assert code == 0 and not any(errors.values())
        assert flag.exists()
    assert not multiprocessing.active_children()


@pytest.mark.parametrize("command", ["--summary", "diff"])
def test_ctrl_c_while_modules_are_ranked_prints_one_line(tmp_path, monkeypatch, capsys, command):
    """Ctrl-c while the workers read the modules (each waits here until the test lets it
    go): one line, status 130, and no worker left."""
    parent, go = os.getpid(), tmp_path / "go"

    def read(entry):
        if os.getpid() != parent:
            for _ in range(500):  # at most 10 s
                if go.exists():
                    break
                threading.Event().wait(0.02)

    _with_workers(monkeypatch, read)
    threading.Timer(0.5, os.kill, (parent, signal.SIGINT)).start()
    threading.Timer(1.5, go.touch).start()  # the old code waited for its workers
    args = (
        ["--summary", str(RUN)]
        if command == "--summary"
        else ["diff", "--summary", str(RUN), str(RUN)]
    )
    try:
        code = main(args)
    except KeyboardInterrupt:
        pytest.fail("ctrl-c reached the caller: a traceback")
    assert code == 130
    assert capsys.readouterr().err == "hlotop: interrupted\n"
    assert not multiprocessing.active_children()
