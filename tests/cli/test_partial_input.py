"""Honest on partial input, with real dumps: an empty module is a whole dump (XLA's
``0B(-nan%)`` included); a memory-usage report opened without its buffer assignment
says so and what the report holds; a jax >= 0.10 ``-buffer-assignment.txt`` alone, or
on standard input, says its sibling files were not found (it is not cut short).
The partial cases are real sample files copied alone into pytest's tmp_path."""

from __future__ import annotations

import io
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, SAMPLES
from hlotop import load
from hlotop.loading.checks import STDIN_ALLOCATIONS_ONLY
from hlotop.model import Diagnostic, StackTrace
from hlotop.parse.memory_report import TABLE_ROW
from hlotop.parse.stack_trace import TREE_LINE
from hlotop.parse.tokens import NAN

EMPTY = SAMPLES / "jax" / "jax-0.10.2" / "empty_module"
EMPTY_BA = EMPTY / "module_0000.jit_empty.cpu_after_optimizations-buffer-assignment.txt"
EMPTY_REPORT = EMPTY / "module_0000.jit_empty.cpu_after_optimizations-memory-usage-report.txt"
BIG = SAMPLES / "jax" / "jax-0.10.2" / "transformer_big"
BIG_PREFIX = "module_0016.jit_transformer_train_step.cpu_after_optimizations"
TUPLES = SAMPLES / "jax" / "jax-0.10.2" / "tuple_outputs"
TUPLES_PREFIX = "module_0006.jit_tuple_update.cpu_after_optimizations"
MLP_072 = SAMPLES / "jax" / "jax-0.7.2" / "mlp_train"
MLP_072_PREFIX = "module_0001.jit_train_step.cpu_after_optimizations"
GPU = SAMPLES / "gpu" / "vllm-torchxla-a100-m0012"
GPU_PREFIX = "module_0012.SyncTensorsGraph.147.sm_8.0_gpu_after_optimizations"


def hlotop(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "hlotop", *args],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        timeout=60,
    )


def alone(tmp_path: Path, *sources: Path) -> Path:
    """Copies of ``sources`` (real sample files) in a directory of their own; the first."""
    for source in sources:
        shutil.copyfile(source, tmp_path / source.name)
    return tmp_path / sources[0].name


# -- an empty module ----------------------------------------------------------------


def test_the_empty_module_is_a_whole_dump_of_zero_bytes():
    """jax.jit(lambda: ())(): one value, the empty tuple, 0 bytes; XLA's report prints
    its share as 0/0, ``-nan``, and its stack-trace block is the header alone."""
    assert "0B(-nan%)" in EMPTY_REPORT.read_text()
    m = load(EMPTY_BA)
    assert m.diagnostics == []
    assert m.total_bytes_used == 0
    assert [(a.index, a.size) for a in m.allocations] == [(0, 0)]
    assert m.analysis.peak_step == m.live_range.peak.time == 0
    assert m.live_range.stack_trace == StackTrace(0, ())
    (space,) = m.memory_usage_report.memory_spaces
    assert (space.name, space.total_bytes) == ("default", 0)
    (row,) = space.allocations[0].rows
    assert (row.cumulative_size, row.size, row.offset, row.shapes) == ("0B", "0B", 0, ((1, "()"),))
    assert math.isnan(row.percent)


def test_the_nan_share_reads_the_same_both_ways():
    """The report's ``-nan`` row by the one-match path and by the fine grammar: one
    NaN object, so the two rows compare equal (the grammar test relies on it)."""
    (line,) = [ln for ln in EMPTY_REPORT.read_text().splitlines() if "(-nan%)" in ln]
    fast = TABLE_ROW.build(TABLE_ROW.match(line.lstrip("\t")), 5)
    assert fast == TABLE_ROW.read_fine(line, 5) and fast.percent is NAN


def test_a_stack_trace_line_with_a_nan_share_is_read():
    """XLA prints a tree node's share with ``%.1f``: of a 0-byte total it would be
    ``-nan`` (no real tree prints one: empty modules have no nodes). A real line of a
    sample, with its share as printf prints 0/0."""
    lines = (BIG / f"{BIG_PREFIX}-live-range.txt").read_text().splitlines()
    line = next(ln for ln in lines if "(100.0%, total:" in ln)
    node = TREE_LINE.read_fine(line.replace("(100.0%, total:", "(-nan%, total:"), 9)
    assert math.isnan(node.percent) and node.label == TREE_LINE.read_fine(line, 9).label


def test_the_empty_module_is_clean_for_strict_and_json():
    path = str(EMPTY_BA.relative_to(ROOT))
    assert hlotop("--strict", "--summary", path).returncode == 0
    out = hlotop("--strict", "--json", path)
    assert out.returncode == 0, out.stderr
    # Strict JSON: XLA's -nan share has no JSON number, so it is null, never NaN.
    doc = json.loads(out.stdout, parse_constant=lambda name: pytest.fail(f"{name} in JSON"))
    assert (doc["total_bytes_used"], doc["diagnostics"]) == (0, [])
    (row,) = doc["memory_usage_report"]["memory_spaces"][0]["allocations"][0]["rows"]
    assert row["percent"] is None


# -- a memory-usage report alone ------------------------------------------------------


def _report_alone_message(assignment: str, holds: str, era: str = "A") -> str:
    siblings = (
        ""
        if era == "A"
        else " (and, from jax 0.10, its -buffer-assignment-values.txt and -live-range.txt)"
    )
    return (
        "memory-usage report without its buffer assignment (the module's "
        f"-buffer-assignment.txt{siblings} was not found beside it): only the report's total and the "
        "allocations it lists are shown; no value, live range or schedule, hence no XLA "
        "peak step or peak bytes and no memory_analysis() figures "
        f"(open {assignment} to see them); the report lists {holds}"
    )


def test_a_report_alone_says_what_is_missing_and_what_it_holds(tmp_path):
    """Era B (jax 0.10.2): the report's tables and its memory space's total."""
    source = BIG / f"{BIG_PREFIX}-memory-usage-report.txt"
    text = source.read_text()
    assert text.count("cumulative_size;") == 51 and "Total bytes: 8245148 (7.86MiB)" in text
    report = alone(tmp_path, source)
    m = load(report)
    assert [f.kind for f in m.files] == ["memory-usage-report"] and m.allocations == ()
    assert m.diagnostics == [
        Diagnostic(
            str(report),
            0,
            _report_alone_message(
                f"{BIG_PREFIX}-buffer-assignment.txt",
                "51 allocations and a total of 7.86MiB (8245148 bytes)",
                era="B",
            ),
            "warning",
        )
    ]


def test_an_era_a_report_alone_gives_its_total_bytes_used(tmp_path):
    """Era A (jax 0.7.2, combined layout): its own ``Total bytes used`` and the
    allocations it lists, once each."""
    source = MLP_072 / f"{MLP_072_PREFIX}-memory-usage-report.txt"
    text = source.read_text()
    assert text.startswith("Total bytes used: 917336 (895.8KiB)\n")
    assert text.count("; allocation ") == 38
    m = load(alone(tmp_path, source))
    assert [(d.severity, d.line, d.message) for d in m.diagnostics] == [
        (
            "warning",
            0,
            _report_alone_message(
                f"{MLP_072_PREFIX}-buffer-assignment.txt",
                "38 allocations and a total of 895.8KiB (917336 bytes)",
            ),
        )
    ]


def test_a_gpu_report_alone_and_the_exit_codes(tmp_path):
    report = alone(tmp_path, GPU / f"{GPU_PREFIX}-memory-usage-report.txt")
    out = hlotop("--json", str(report))
    assert out.returncode == 0, out.stderr
    (diagnostic,) = json.loads(out.stdout)["diagnostics"]
    assert diagnostic == {
        "path": str(report),
        "line": 0,
        "message": _report_alone_message(
            f"{GPU_PREFIX}-buffer-assignment.txt",
            "18 allocations and a total of 843.94MiB (884935248 bytes)",
        ),
        "severity": "warning",
    }
    strict = hlotop("--strict", "--summary", str(report))
    assert strict.returncode == 1
    assert "memory-usage report without its buffer assignment" in " ".join(
        strict.stdout.decode().split()
    )


def test_a_report_beside_its_buffer_assignment_is_no_warning():
    assert load(GPU / f"{GPU_PREFIX}-memory-usage-report.txt").diagnostics == []


# -- a jax >= 0.10 -buffer-assignment.txt alone, and on standard input ------------------

_SIBLING = "sibling file not found: a jax >= 0.10 dump keeps "
_FLAG = " (XLA writes it unless --xla_dump_buffer_assignment_analysis=false)"


def test_a_split_buffer_assignment_alone_names_its_missing_siblings(tmp_path):
    ba = alone(tmp_path, TUPLES / f"{TUPLES_PREFIX}-buffer-assignment.txt")
    m = load(ba)
    assert len(m.allocations) == 26 and m.total_bytes_used is None
    assert [d for d in m.diagnostics if "truncated" in d.message] == []
    assert m.diagnostics == [
        Diagnostic(
            str(tmp_path / f"{TUPLES_PREFIX}-buffer-assignment-values.txt"),
            0,
            _SIBLING + "'Total bytes used' and the value records (positions, uses, "
            "defining instructions) in its -buffer-assignment-values.txt, so they are not "
            "shown" + _FLAG,
            "warning",
        ),
        Diagnostic(
            str(tmp_path / f"{TUPLES_PREFIX}-live-range.txt"),
            0,
            _SIBLING + "the schedule, every value's live range and XLA's peak in its "
            "-live-range.txt, so the timeline and the peak are not shown" + _FLAG,
            "warning",
        ),
        Diagnostic(
            str(tmp_path / f"{TUPLES_PREFIX}-memory-usage-report.txt"),
            0,
            _SIBLING + "XLA's memory-usage report in its -memory-usage-report.txt, so it "
            "is not shown",
            "warning",
        ),
    ]
    assert hlotop("--summary", str(ba)).returncode == 0
    assert hlotop("--strict", "--summary", str(ba)).returncode == 1


def test_without_the_analysis_files_only_those_two_are_named(tmp_path):
    """--xla_dump_buffer_assignment_analysis=false: the allocations and the report."""
    ba = alone(
        tmp_path,
        TUPLES / f"{TUPLES_PREFIX}-buffer-assignment.txt",
        TUPLES / f"{TUPLES_PREFIX}-memory-usage-report.txt",
    )
    m = load(ba)
    assert [Path(d.path).name for d in m.diagnostics] == [
        f"{TUPLES_PREFIX}-buffer-assignment-values.txt",
        f"{TUPLES_PREFIX}-live-range.txt",
    ]
    assert all(d.message.startswith(_SIBLING) for d in m.diagnostics)


def test_a_split_buffer_assignment_on_stdin_says_its_siblings_cannot_be_read():
    data = (TUPLES / f"{TUPLES_PREFIX}-buffer-assignment.txt").read_bytes()
    m = load("-", stdin=io.TextIOWrapper(io.BytesIO(data)))
    assert len(m.allocations) == 26
    assert m.diagnostics == [Diagnostic("<stdin>", 0, STDIN_ALLOCATIONS_ONLY, "warning")]
    assert STDIN_ALLOCATIONS_ONLY == (
        "only allocations ('BufferAssignment:') on standard input: a jax >= 0.10 dump "
        "keeps 'Total bytes used' and the value records in its "
        "-buffer-assignment-values.txt and the live ranges in its -live-range.txt, sibling "
        "files that standard input cannot name, so they are not shown; open the "
        "-buffer-assignment.txt by its path to read them (if this is an older, combined "
        "dump, it was cut short)"
    )
    out = hlotop("--json", "-", stdin=data)
    assert out.returncode == 0, out.stderr
    assert [d["message"] for d in json.loads(out.stdout)["diagnostics"]] == [STDIN_ALLOCATIONS_ONLY]
    assert hlotop("--strict", "--summary", "-", stdin=data).returncode == 1


def test_a_whole_combined_dump_on_stdin_has_no_warning():
    data = (GPU / f"{GPU_PREFIX}-buffer-assignment.txt").read_bytes()
    assert load("-", stdin=io.TextIOWrapper(io.BytesIO(data))).diagnostics == []
