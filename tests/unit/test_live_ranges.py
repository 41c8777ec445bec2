"""The live-range block as columns (hlotop.model.LiveRanges, PeakEntries and
StackTrace.of_columns): a schedule's BufferLiveRange lines, its peak list (optional
fields: V1 has no ShapeIndex, V3+ a cumulative count) and its stack-trace tree read a
run at a time into columns (LineForm.take_columns) give the values, and stop at the
line, that reading them one match a line (LineForm.take) gives, on every sample and on
damaged copies; the columns are the objects, made once (a few one by one, then all at
once), and cross between processes as the columns."""

from __future__ import annotations

import math
import pickle
import threading

import pytest

from conftest import swept
from hlotop.model import (
    BufferLiveRange,
    HloLiveRange,
    LiveRanges,
    PeakEntries,
    PeakEntry,
    StackTrace,
    StackTraceNode,
    column_rows,
)
from hlotop.parse import line_form
from hlotop.parse.dump import split_lines
from hlotop.parse.live_range import BUFFER_LINE, PEAK_LINE
from hlotop.parse.stack_trace import STACK_HEADER_PREFIX, TREE_LINE, StackTraceSection
from hlotop.parse.tokens import NAN, VALUE_REF, Sink

LIVE_RANGE_FILES = sorted(
    p for p in swept("*.txt") if "  BufferLiveRange:" in p.read_text(errors="replace")
)
DAMAGES = [
    None,
    ("{}:", "{}"),  # no steps
    (":", ": "),  # a space after the colon
    ("{", "{{"),  # a brace too many
]


def _block(path, header: str) -> list[str]:
    """The indented lines after the line ``header`` (or starting with it) in ``path``."""
    lines = split_lines(path.read_text(errors="replace"))
    start = next(k for k, line in enumerate(lines) if line.startswith(header)) + 1
    end = next((k for k in range(start, len(lines)) if not lines[k].startswith("    ")), len(lines))
    return lines[start:end]


def _by_objects(form, lines: list[str], i: int) -> tuple[int, list[tuple]]:
    made: list = []
    stop = form.take(lines, i, len(lines), 7, made.append)
    return stop, made


def _by_columns(form, fields, lines: list[str], i: int) -> tuple[int, list]:
    columns: tuple[list, ...] = tuple([] for _ in fields)  # the last: line numbers
    stop = form.take_columns(lines, i, len(lines), 7, columns)
    return stop, list(zip(*columns, strict=True))


def _fields_of(made: list, fields: tuple[str, ...]) -> list[tuple]:
    return [tuple(getattr(m, f) for f in fields) for m in made]


BUFFER_FIELDS = ("name", "shape_index", "start", "end", "line")
PEAK_FIELDS = ("name", "shape_index", "bytes", "cumulative", "line")
PEAK_FILES = sorted(
    p for p in swept("*.txt") if "  Live ranges at " in p.read_text(errors="replace")
)
TREE_FILES = sorted(
    p for p in swept("*.txt") if STACK_HEADER_PREFIX in p.read_text(errors="replace")
)


@pytest.mark.parametrize("damage", DAMAGES)
@pytest.mark.parametrize("run", [1, 3, 1024])
@pytest.mark.parametrize(
    ("form", "fields", "files", "header"),
    [
        (BUFFER_LINE, BUFFER_FIELDS, LIVE_RANGE_FILES, "  BufferLiveRange:"),
        (PEAK_LINE, PEAK_FIELDS, PEAK_FILES, "  Live ranges at "),
    ],
    ids=["live ranges", "peak list"],
)
def test_lines_read_into_columns_as_one_match_a_line_reads_them(
    monkeypatch, damage, run, form, fields, files, header
):
    monkeypatch.setattr(line_form, "RUN", run)
    read, absent = 0, set()
    for path in files:
        lines = _block(path, header)
        if damage is not None and len(lines) > 4:
            at = len(lines) * 2 // 3
            lines[at] = lines[at].replace(*damage, 1)
        for i in (0, len(lines) // 2):
            stop, made = _by_objects(form, lines, i)
            rows = _fields_of(made, fields)
            assert _by_columns(form, fields, lines, i) == (stop, rows), (path, i)
            read += len(rows)
            absent |= {k for row in rows for k, v in enumerate(row) if v is None}
    assert read > 1000
    if form is PEAK_LINE:  # V1 lines (no index) and V2 lines (no cumulative) among them
        assert absent == {1, 3}


def test_a_form_with_a_nested_part_is_not_read_into_columns():
    form = line_form.LineForm("value reference", VALUE_REF)
    with pytest.raises(ValueError, match="nested"):
        form.take_columns(["<1 a>"], 0, 1, 1, ([], []))


def test_an_optional_field_that_may_match_nothing_is_not_read_into_columns():
    form = line_form.LineForm(
        "odd", line_form.Lit("x"), line_form.Opt(line_form.Field("tail", r".*", "anything"))
    )
    with pytest.raises(ValueError, match="may match"):
        form.take_columns(["xy"], 0, 1, 1, ([], []))


def _tree_by_objects(lines: list[str]) -> StackTrace:
    """The tree as the per-line reader built it before: one node a line, each hung
    under the last node of the depth above it."""
    roots: list[StackTraceNode] = []
    path: list[StackTraceNode] = []
    for k, line in enumerate(lines):
        m = TREE_LINE.match(line)
        assert m is not None
        node = TREE_LINE.build(m, 7 + k)
        del path[node.depth :]
        (path[-1].children if node.depth and path else roots).append(node)
        path.append(node)
    return StackTrace(0, roots)


@pytest.mark.parametrize("run", [1, 5, 1024])
def test_the_stack_trace_tree_read_into_columns_is_the_tree_of_objects(monkeypatch, run):
    monkeypatch.setattr(line_form, "RUN", run)
    nodes = 0
    for path in TREE_FILES:
        lines = [
            line for line in _block(path, STACK_HEADER_PREFIX) if TREE_LINE.match(line) is not None
        ]
        section = StackTraceSection(Sink(str(path), []))
        section.seen = True
        assert section.take_run(lines, 0, len(lines), 7) == len(lines)
        tree = section.finish()
        assert tree is not None and tree._roots is None  # nothing made yet
        assert tree == _tree_by_objects(lines), path
        nodes += len(lines)
    assert nodes > 100


def test_a_peak_list_given_objects_is_kept_as_columns_with_nan_the_one_nan():
    entries = [PeakEntry("a", (0,), 16, 16, 3), PeakEntry("b", None, 8, None, 4)]
    columns = PeakEntries.of(entries)
    assert list(columns.bytes) == [16, 8] and columns.cumulatives == [16, None]
    assert list(columns) == entries
    back = pickle.loads(pickle.dumps(PeakEntries(*columns.columns())))
    assert back._objects is None and back == columns and list(back) == entries
    from hlotop.parse.tokens import percent_values

    assert percent_values(["12.5", "-nan", "nan"])[1:] == [NAN, NAN]
    assert all(v is NAN for v in percent_values(["-nan", "nan"]))


def test_a_stack_trace_crosses_between_processes_as_columns():
    section = StackTraceSection(Sink("t", []))
    section.seen, section.total = True, 96
    lines = [
        "    a (100.0%, total: 96 bytes, current: 64 bytes, remaining: 32 bytes)",
        "      └── b (33.3%, total: 32 bytes, current: 32 bytes, remaining: 0 bytes)",
        "    c (-nan%, total: 0 bytes, current: 0 bytes, remaining: 0 bytes)",
    ]
    section.take_run(lines, 0, 3, 1)
    tree = section.finish()
    assert tree is not None
    assert tree.roots[1].percent is NAN
    back = pickle.loads(pickle.dumps(tree, pickle.HIGHEST_PROTOCOL))
    assert back._roots is None  # nothing made on the way
    assert [r.label for r in back.roots] == ["a", "c"]
    assert back.roots[0] == tree.roots[0] and back.roots[0].children[0].label == "b"
    assert math.isnan(back.roots[1].percent)  # (a NaN that crossed is not the one NAN)


def _columns(objects: list[BufferLiveRange]) -> LiveRanges:
    rows = [(r.name, r.shape_index, r.start, r.end, r.line) for r in objects]
    return LiveRanges(*zip(*rows, strict=True))


def _ranges() -> list[BufferLiveRange]:
    return [
        BufferLiveRange("fusion.1", (), 0, 4, 10),
        BufferLiveRange("tuple.2", (1, 0), 2, 9, 11),
        BufferLiveRange("param.0", (), 0, 12, 12),
    ]


def test_the_columns_are_the_ranges_as_objects_made_once():
    objects = _ranges()
    columns = _columns(objects)
    assert len(columns) == 3
    assert list(columns) == objects
    assert columns[1] == objects[1] and columns[1:] == tuple(objects[1:])
    assert columns[0] is columns[0] and next(iter(columns)) is columns[0]
    assert columns == tuple(objects) and tuple(objects) == columns
    assert columns == LiveRanges.of(objects) and hash(columns) == hash(tuple(objects))
    assert columns != LiveRanges.of(objects[:2])
    assert list(columns.ends) == [4, 9, 12]


def test_a_schedule_given_objects_keeps_them_as_columns():
    live = HloLiveRange(12, ("a",) * 13, tuple(_ranges()), None, None, 1)
    assert isinstance(live.buffers, LiveRanges)
    assert list(live.buffers) == _ranges()


def test_live_ranges_cross_between_processes_as_columns_and_read_back_the_same():
    columns = LiveRanges.of(_ranges())
    back = pickle.loads(pickle.dumps(columns, pickle.HIGHEST_PROTOCOL))
    assert back._objects is None  # nothing made on the way
    assert back == columns and list(back) == _ranges()
    live = HloLiveRange(12, ("a",) * 13, columns, None, None, 1)
    again = pickle.loads(pickle.dumps(live, pickle.HIGHEST_PROTOCOL))
    assert again == live and again.buffers._objects is None


def test_threads_asking_at_once_get_the_same_objects():
    objects = _ranges() * 20_000
    columns = _columns(objects)
    seen: list[BufferLiveRange] = []
    threads = [threading.Thread(target=lambda: seen.append(columns[0])) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(r) for r in seen}) == 1


def test_a_few_rows_are_made_one_by_one_then_all_at_once(monkeypatch):
    monkeypatch.setattr(column_rows, "ONE_BY_ONE", 2)
    objects = _ranges() * 3
    columns = _columns(objects)
    first, last = columns[0], columns[-1]
    assert columns._objects is None and set(columns._some) == {0, 8}
    third = columns[4]  # the third asked for: all of them
    assert columns._objects is not None and third == objects[4]
    assert columns[0] is first and columns[8] is last and list(columns) == objects
