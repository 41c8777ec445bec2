"""``hlotop diff OLD_DIR NEW_DIR`` on two whole ``--xla_dump_to`` runs: every program
paired by name (its module number and a TPU compiler's build left out), its XLA peak
and total on both sides, the programs only one run compiled, and ``--fail-over`` as a
CI gate on each program both compiled. (The README's own CI example, ``hlotop diff
--summary --fail-over 5% main/ branch/``, stopped at "19 modules here; name one".)"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import SAMPLES, hlotop
from hlotop import load
from hlotop.loading.directory import list_modules, pair_modules, program_of, rank_modules

RUN = SAMPLES / "dirs" / "jax-0.10.2-cpu-train"  # 19 modules of one training run
TRAIN = "jit_gpt_train_step.cpu_after_optimizations"


def _copy(module: Path, into: Path, number: str) -> None:
    """The files of one split module folder, renumbered as another run would."""
    for f in module.glob("module_0004.*"):
        shutil.copy(f, into / f.name.replace("module_0004", f"module_{number}"))


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    """Two runs: the GPT train step at batch 8 (OLD) and 16 (NEW) under different
    module numbers, the same small modules in both but one each only in one run."""
    old, new = tmp_path / "old", tmp_path / "new"
    for side, small, gpt, number in (
        (old, ("0000", "0002", "0004", "0008", "0012"), "gpt_loop", "0040"),
        (new, ("0000", "0002", "0006", "0008", "0012"), "gpt_loop_batch16", "0041"),
    ):
        side.mkdir()
        for n in small:
            for f in RUN.glob(f"module_{n}.*"):
                shutil.copy(f, side / f.name)
        _copy(SAMPLES / "cpu" / gpt, side, number)
    return old, new


def test_programs_are_named_without_the_runs_numbers_and_the_compilers_build():
    assert program_of("module_0034.jit_train_step.cpu_after_optimizations") == (
        "jit_train_step.cpu_after_optimizations"
    )
    assert program_of("module_0000.jit_gpt_train_step.cl_933746096.after_optimizations") == (
        "jit_gpt_train_step.after_optimizations"
    )
    assert program_of("SyncTensorsGraph.12") == "SyncTensorsGraph.12"


def test_the_programs_pair_by_name_and_in_module_order(runs):
    old, new = (rank_modules(list_modules(side)) for side in runs)
    pairs = pair_modules(old, new)
    named = [
        (p.program, p.old and p.old.entry.name[:11], p.new and p.new.entry.name[:11]) for p in pairs
    ]
    assert named[0] == (TRAIN, "module_0040", "module_0041")  # the largest first
    assert ("jit__normal.cpu_after_optimizations", "module_0008", "module_0008") in named
    assert ("jit__normal.cpu_after_optimizations", "module_0012", "module_0012") in named
    assert ("jit__threefry_split.cpu_after_optimizations", "module_0004", None) in named
    assert ("jit_unstack.cpu_after_optimizations", None, "module_0006") in named
    assert len(pairs) == 7


def test_the_gate_names_the_program_that_grew_and_the_json_has_xlas_peaks(runs, monkeypatch):
    old, new = map(str, runs)
    monkeypatch.setenv("COLUMNS", "160")
    failed = hlotop("diff", "--summary", "--fail-over", "5%", old, new)
    assert failed.returncode == 1
    assert failed.stderr.decode().strip() == (
        "hlotop diff: jit_gpt_train_step: XLA's peak grew by 64.43MiB (+84.5%), from "
        "76.24MiB to 140.67MiB: over the 5% allowed"
    )
    passed = hlotop("diff", "--summary", "--fail-over", "90%", old, new)
    assert passed.returncode == 0
    row = next(x for x in passed.stdout.decode().splitlines() if x.startswith("jit_gpt"))
    # XLA's peak, the total and memory_analysis()'s temp, each with its change
    assert row.split()[1:] == [
        "76.24MiB",
        "140.67MiB",
        "+64.43MiB",
        "(+84.5%)",
        "+65.93MiB",
        "(+84.8%)",
        "+65.93MiB",
        "(+95.2%)",
        "0040",
        "→",
        "0041",
    ]
    doc = json.loads(hlotop("diff", "--json", old, new).stdout)
    train = doc["programs"][0]
    before = load(SAMPLES / "cpu" / "gpt_loop").analysis.peak_bytes
    after = load(SAMPLES / "cpu" / "gpt_loop_batch16").analysis.peak_bytes
    assert (train["program"], train["old"]["peak_bytes"], train["new"]["peak_bytes"]) == (
        TRAIN,
        before,
        after,
    )
    assert train["delta"]["peak_bytes"] == after - before and doc["over"] == []
    only = {p["program"]: (p["old"] is None, p["new"] is None) for p in doc["programs"]}
    assert only["jit_unstack.cpu_after_optimizations"] == (True, False)
    assert only["jit__threefry_split.cpu_after_optimizations"] == (False, True)


def test_a_run_against_itself_shows_no_change_and_passes_a_zero_gate(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    same = hlotop("diff", "--summary", "--fail-over", "0%", str(RUN), str(RUN))
    assert same.returncode == 0 and same.stderr == b""
    out = same.stdout.decode()
    said = " ".join(out.split())
    assert "19 in both runs (0 with a larger XLA peak), 0 only in NEW, 0 only in OLD" in said
    lines = out.splitlines()
    assert all(len(line) <= 80 for line in lines)
    table = lines[lines.index(next(x for x in lines if x.startswith("program"))) + 1 :]
    rows = [line.split() for line in table if line.startswith("jit")]
    assert len(rows) == 19 and all(row[3:5] == ["0B", "0B"] for row in rows)
    assert "jit_broadcast_in_dim" in out  # program names whole, not wrapped


def test_one_module_against_a_whole_run_takes_the_runs_module_of_its_program(runs, tmp_path):
    """``hlotop diff before.txt after_run/``: the run's module that compiles the same
    program is the other side (said on stderr); none or several: a one-line error
    that names them."""
    old, new = runs
    one = hlotop("diff", "--json", str(SAMPLES / "cpu" / "gpt_loop"), str(new))
    assert one.returncode == 0
    assert one.stderr.decode().startswith("hlotop diff: NEW is ") and TRAIN in one.stderr.decode()
    doc = json.loads(one.stdout)
    assert doc["new"]["module"] == "module_0041." + TRAIN
    back = hlotop("diff", "--json", str(old), str(SAMPLES / "cpu" / "gpt_loop_batch16"))
    assert (
        back.returncode == 0 and json.loads(back.stdout)["old"]["module"] == "module_0040." + TRAIN
    )
    none = hlotop(
        "diff", "--summary", str(SAMPLES / "seeds" / "003_a3085531593bac68.txt"), str(new)
    )
    assert none.returncode == 2 and none.stderr.decode().count("\n") == 1
    assert "6 modules here, none of them 003_a3085531593bac68" in none.stderr.decode()
    _copy(SAMPLES / "cpu" / "gpt_loop_batch16", new, "0042")
    two = hlotop("diff", "--summary", str(SAMPLES / "cpu" / "gpt_loop"), str(new))
    assert two.returncode == 2 and f"2 of them {TRAIN}: module_0041." in two.stderr.decode()
