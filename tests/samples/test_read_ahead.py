"""A split module's records indexed (its ``-buffer-assignment-values.txt``) and live
ranges read (its ``-live-range.txt``) by a worker process (``hlotop.loading.ahead``)
give the same module as read in one process: the same sections, the same diagnostics
with the same lines in the same order, the same figures, the same records; and the
blocks that cross between the processes as columns come back equal."""

from __future__ import annotations

import os
import pickle
import shutil
import time
from dataclasses import fields
from pathlib import Path

import pytest

import hlotop.analysis.analyze as analyze_module
import hlotop.loading.ahead as ahead
from conftest import BIG, SAMPLES, sample
from hlotop.loading.loader import load
from hlotop.model import HloLiveRange
from hlotop.parse.stack_trace import TreeApart

# jax 0.10.2: all four files of a split module
SPLIT_BIG = (
    "jax/jax-0.10.2/transformer_big/module_0016.jit_transformer_train_step"
    ".cpu_after_optimizations-buffer-assignment.txt"
)
SPLIT = [
    BIG,  # a combined dump beside its memory-usage report: read in one process
    SPLIT_BIG,
    "cpu/gpt_loop/module_0004.jit_gpt_train_step.cpu_after_optimizations-buffer-assignment.txt",
    "tpu/v5e_1x1-gpt_loop/module_0000.jit_gpt_train_step.cl_933746096.after_optimizations"
    "-buffer-assignment.txt",
]


@pytest.fixture
def every_file_ahead(monkeypatch):
    """The samples are small: let the worker read them whatever their size."""
    monkeypatch.setattr(ahead, "MIN_BYTES", 0)


def _same_module(a, b) -> None:
    for f in fields(a.sections):
        if f.name in ("used_values", "called_metadata", "entry_parameters"):
            continue  # lazy readers of the same text, compared through what they read

        assert getattr(a.sections, f.name) == getattr(b.sections, f.name), f.name
    for lazy in ("called_metadata", "entry_parameters"):
        read_a, read_b = getattr(a.sections, lazy), getattr(b.sections, lazy)
        assert (read_a is None) == (read_b is None), lazy
        assert read_a is None or read_a() == read_b(), lazy
    assert a.diagnostics == b.diagnostics
    assert a.analysis.peak_step == b.analysis.peak_step
    assert a.analysis.peak_bytes == b.analysis.peak_bytes
    assert a.analysis.live_bytes == b.analysis.live_bytes
    assert a.analysis.occupied_bytes == b.analysis.occupied_bytes
    assert a.analysis.memory_spaces == b.analysis.memory_spaces
    assert [(i.value, i.live, i.logical_bytes) for i in a.analysis.values] == [
        (i.value, i.live, i.logical_bytes) for i in b.analysis.values
    ]


@pytest.mark.parametrize("relative", SPLIT)
@pytest.mark.parametrize("workers", [1, 2, 3])
def test_a_worker_reads_the_same_module(relative, workers, every_file_ahead, monkeypatch):
    handed = _spy_on_starts(monkeypatch)
    alone = load(sample(relative), lazy=True)
    assert handed == []  # no workers: nothing handed over
    with_worker = load(sample(relative), lazy=True, workers=workers)
    dump = Path(sample(relative))
    # The records first, then the live ranges (one worker, or one each with 3 cores).
    assert [Path(key).name for key in handed] == [
        _sibling(dump, kind).name
        for kind in ("buffer-assignment-values", "live-range")
        if _sibling(dump, kind).exists()
    ]
    _same_module(alone, with_worker)
    mine, theirs = alone.sections.used_values, with_worker.sections.used_values
    assert list(theirs) == list(mine)
    assert [theirs.line_of(k) for k in range(len(theirs))] == [
        mine.line_of(k) for k in range(len(mine))
    ]
    assert with_worker.read_records() == alone.read_records()


def test_records_handed_on_are_indexed_here(every_file_ahead, monkeypatch):
    """--json hands the records on as soon as they are indexed: this process indexes
    them, and the worker reads only the live ranges."""
    handed = _spy_on_starts(monkeypatch)
    told = []
    load(sample(SPLIT_BIG), lazy=True, workers=2, on_records=lambda t, f: told.append(t))
    assert [Path(key).name for key in handed] == [
        _sibling(Path(sample(SPLIT_BIG)), "live-range").name
    ]
    assert len(told) == 1 and len(told[0]) > 0


def test_indexed_records_cross_between_processes():
    """The records' index crosses to this process without its lock or parsed records,
    and with the file to read them back from; records read after it are those read
    before."""
    table = load(sample(SPLIT_BIG), lazy=True).sections.used_values
    first = table[0]
    back = pickle.loads(pickle.dumps(table, pickle.HIGHEST_PROTOCOL))
    assert back[0] == first and list(back) == list(table)
    assert back.text_of(len(back) - 1) == table.text_of(len(table) - 1)
    assert not back.text  # read back from the file, not sent


def test_a_worker_reads_the_next_part_before_this_process_takes_one(tmp_path):
    """A part's result is sent while the worker reads the next one: a first result
    bigger than the pipe holds does not keep the worker waiting for this process to
    take it (a big module's live ranges waited 0.3 s for its records to be taken)."""
    marker = tmp_path / "second part read"
    with ahead.PartsAhead(1) as parts:
        keys = parts.start([("first", 1 << 30, _big, ()), ("second", 1 << 30, _mark, (marker,))])
        assert keys == ["first", "second"]
        for _ in range(1000):  # nothing taken yet
            if marker.exists():
                break
            time.sleep(0.01)
        assert marker.exists()
        assert parts.take("second", _broken)[0] == "read"
        assert parts.take("first", _broken)[0] == b"x" * (1 << 20)


def test_meanwhile_runs_once_while_the_worker_reads_and_not_when_the_part_is_here(tmp_path):
    """``meanwhile`` (--summary's imports) fills a wait for the worker: called once, the
    first time a part is taken before the worker has sent it, and not at all when
    every part taken was there already."""
    go = tmp_path / "go"
    calls: list[str] = []

    def meanwhile():
        calls.append("meanwhile")
        go.touch()  # the worker, waiting for this, now finishes its part

    with ahead.PartsAhead(1, meanwhile) as parts:
        parts.start([("slow", 1 << 30, _after, (go,)), ("next", 1 << 30, _mark, (tmp_path / "m",))])
        assert parts.take("slow", _broken)[0] == "read"
        assert parts.take("next", _broken)[0] == "read"
    assert calls == ["meanwhile"]

    calls.clear()
    with ahead.PartsAhead(1, meanwhile) as parts:
        parts.start([("ready", 1 << 30, _mark, (tmp_path / "m2",))])
        for _ in range(1000):  # until the worker has sent it
            if parts._of["ready"].arriving("ready"):
                break
            time.sleep(0.01)
        assert parts.take("ready", _broken)[0] == "read"
    assert calls == []


def _after(go: Path, diagnostics):
    for _ in range(3000):  # until this process's meanwhile says go (30 s at most)
        if go.exists():
            return "read"
        time.sleep(0.01)
    return "timed out"


def _big(diagnostics):
    return b"x" * (1 << 20)  # a pipe holds 64 KiB


def _mark(marker: Path, diagnostics):
    marker.touch()
    return "read"


def _spy_on_starts(monkeypatch) -> list[str]:
    """The keys of the parts handed to a worker from now on."""
    handed: list[str] = []
    real_start = ahead.PartsAhead.start

    def spy(self, parts):
        keys = real_start(self, parts)
        handed.extend(keys)
        return keys

    monkeypatch.setattr(ahead.PartsAhead, "start", spy)
    return handed


def test_a_worker_reports_damaged_lines_where_one_process_does(tmp_path, every_file_ahead):
    """Diagnostics found in the worker's files come back with their lines, in the
    files' order among the others."""
    dump, live = _copy_of_split_big(tmp_path)
    lines = live.read_text().split("\n")
    ranges = [i for i, line in enumerate(lines) if ":" in line and "-" in line.split(":")[-1]]
    lines[ranges[3]] = "    broken{0}:x-y"
    live.write_text("\n".join(lines))
    report = live.with_name(live.name.replace("-live-range", "-memory-usage-report"))
    report.write_text(report.read_text() + "garbage line at the end\n")
    alone = load(dump, lazy=True)
    with_worker = load(dump, lazy=True, workers=1)
    assert any(d.line == ranges[3] + 1 and d.path == str(live) for d in alone.diagnostics)
    assert any(d.path == str(report) for d in alone.diagnostics)
    _same_module(alone, with_worker)


def _copy_of_split_big(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of :data:`SPLIT_BIG`'s files in ``tmp_path``: (its
    ``-buffer-assignment.txt``, its ``-live-range.txt``)."""
    source = Path(sample(SPLIT_BIG))
    prefix = source.name[: -len("-buffer-assignment.txt")]
    for f in source.parent.glob(prefix + "*"):
        shutil.copy(f, tmp_path / f.name)
    return tmp_path / source.name, tmp_path / (prefix + "-live-range.txt")


def test_a_damaged_stack_trace_tree_read_after_the_live_ranges_is_reported_in_turn(
    tmp_path, every_file_ahead
):
    """The worker sends the live ranges before it reads their stack-trace tree; the
    tree's diagnostics still come where one process reports them, among the file's
    others (here a damaged live range before the tree and a truncated last line after
    it), and the tree is the same."""
    dump, live = _copy_of_split_big(tmp_path)
    lines = live.read_text().split("\n")
    header = next(i for i, line in enumerate(lines) if "Stack trace breakdown" in line)
    ranges = [i for i, line in enumerate(lines[:header]) if "-" in line.split(":")[-1]]
    lines[ranges[2]] = "    broken{0}:x-y"
    lines[header + 1] = "      ├── " + lines[header + 1].lstrip()  # a root with no parent
    lines[header + 3] = lines[header + 3].replace("total: ", "total ")
    text = "\n".join(lines).rstrip("\n")  # no last line end
    live.write_text(text)
    alone = load(dump, lazy=True)
    with_worker = load(dump, lazy=True, workers=1)
    mine = [(d.line, d.message) for d in alone.diagnostics if d.path == str(live)]
    last = text.count("\n") + 1
    assert [line for line, _ in mine] == [ranges[2] + 1, header + 2, header + 4, last]
    assert "deeper than its parent" in mine[1][1] and "truncated" in mine[-1][1]
    assert alone.live_range is not None and alone.live_range.stack_trace is not None
    assert alone.live_range.stack_trace.roots
    _same_module(alone, with_worker)


def test_a_tree_lost_with_the_worker_is_read_here(every_file_ahead, monkeypatch):
    """If the worker ends after it sent the live ranges but before their tree, the file
    is read again here for the tree: the module is the same."""
    here = os.getpid()
    real = TreeApart.read

    def dies_in_the_worker(self, path):
        if os.getpid() != here:
            raise SystemExit(1)
        return real(self, path)

    monkeypatch.setattr(TreeApart, "read", dies_in_the_worker)
    read_here = []
    real_read = ahead._read

    def spy(job, args):
        read_here.append(job.__name__)
        return real_read(job, args)

    monkeypatch.setattr(ahead, "_read", spy)  # here (the worker's runs are _work's)
    monkeypatch.setattr(ahead, "_work", real_read)
    alone = load(sample(SPLIT_BIG), lazy=True)
    read_here.clear()
    with_worker = load(sample(SPLIT_BIG), lazy=True, workers=1)
    assert read_here == ["live_ranges_then_tree"]  # read again here for its tree
    assert with_worker.live_range is not None and with_worker.live_range.stack_trace
    _same_module(alone, with_worker)


def test_a_file_the_worker_fails_on_is_read_here(every_file_ahead, monkeypatch):
    """If the worker fails on a part (here: it raises), the part is read in this
    process: the module is the same, diagnostics and all."""
    handed = _spy_on_starts(monkeypatch)
    read_here = []
    real_read = ahead._read

    def spy(job, args):
        read_here.append(job.__name__)
        return real_read(job, args)

    monkeypatch.setattr(ahead, "_work", _broken)  # in the worker
    monkeypatch.setattr(ahead, "_read", spy)  # here
    alone = load(sample(SPLIT_BIG), lazy=True)
    with_worker = load(sample(SPLIT_BIG), lazy=True, workers=1)
    assert [Path(key).name for key in handed] == [
        _sibling(Path(sample(SPLIT_BIG)), kind).name
        for kind in ("buffer-assignment-values", "live-range")
    ]
    # The worker failed on the first part: both are read here after all (the live
    # ranges with their stack-trace tree apart, as the worker reads them).
    assert read_here == ["parse_sibling", "live_ranges_then_tree"]
    _same_module(alone, with_worker)
    assert with_worker.read_records() == alone.read_records()


def _broken(*_args):
    raise OSError("no room for a process")


def _sibling(dump: Path, kind: str) -> Path:
    return dump.with_name(dump.name.replace("-buffer-assignment.txt", f"-{kind}.txt"))


@pytest.mark.parametrize(
    "relative",
    [*SPLIT, "seeds/004_e0d5fae9bf2de249.txt", "jax/jax-0.4.23/mlp_train"],
)
def test_live_range_blocks_cross_as_columns_and_come_back_equal(relative):
    path = SAMPLES / relative
    if path.is_dir():
        path = next(path.glob("*-buffer-assignment.txt"))
    live = load(path, lazy=True).live_range
    assert isinstance(live, HloLiveRange) and live.buffers
    back = pickle.loads(pickle.dumps(live, pickle.HIGHEST_PROTOCOL))
    assert back == live
    assert [b.line for b in back.buffers] == [b.line for b in live.buffers]
    if live.peak is not None:
        assert back.peak == live.peak and back.peak.entries
    if live.stack_trace is not None:
        assert back.stack_trace == live.stack_trace
        assert _shape(back.stack_trace.roots) == _shape(live.stack_trace.roots)


def _shape(nodes) -> list:
    return [(n.label, n.line, _shape(n.children)) for n in nodes]


def test_what_needs_no_live_ranges_is_worked_out_while_the_worker_reads(
    every_file_ahead, monkeypatch
):
    # The values joined and sized, the totals, the padding and memory_analysis() are
    # made once, from the sections read before the live ranges came back, and the
    # analysis uses them: made again (with the live ranges) only without a worker.
    made = []
    real = analyze_module.BeforeLiveRanges.__init__

    def spy(self, sections):
        made.append(sections.live_range)
        real(self, sections)

    monkeypatch.setattr(analyze_module.BeforeLiveRanges, "__init__", spy)
    with_worker = load(sample(SPLIT_BIG), lazy=True, workers=1)
    assert made == [None]
    made.clear()
    alone = load(sample(SPLIT_BIG), lazy=True)
    assert len(made) == 1 and made[0] is alone.sections.live_range
    assert made[0].buffers
    _same_module(alone, with_worker)
