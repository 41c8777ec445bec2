"""The first look at a big dump (hlotop.loading.preview): every allocation, the true
total and XLA's printed peak step, read from the allocation lines and the peak line
alone, equal to what the whole load reads, on real dumps of both layouts; and the
glance it starts from, whose allocations are read from their lines when first asked
for (hlotop.model.AllocationLines)."""

from __future__ import annotations

import os
from array import array
from pathlib import Path

import pytest

import hlotop.loading.preview as preview_module
import hlotop.model.allocation_lines as allocation_lines
from conftest import BIG, COMBINED, SMALL, sample
from hlotop.loading.loader import load
from hlotop.loading.preview import completed, glance, preview
from hlotop.model import AllocationLines, BufferAllocation
from hlotop.ui.screens.main import PaneIndexes
from hlotop.ui.view_models.tree_layout import TreeLayout


def _head(alloc):
    """What an allocation line says (the first look has no value lines yet)."""
    return (
        alloc.index,
        alloc.size,
        alloc.color,
        alloc.kinds,
        alloc.parameter_shape,
        alloc.output_shape,
        alloc.line,
    )


@pytest.mark.parametrize("relative", [BIG, COMBINED, "seeds/003_a3085531593bac68.txt"])
def test_the_first_look_has_every_allocation_the_total_and_the_peak_step(relative):
    path = sample(relative)
    whole = load(path)
    first = preview(path, from_bytes=0)
    assert first is not None and first.preview is not None
    assert [_head(a) for a in first.allocations] == [_head(a) for a in whole.allocations]
    assert all(a.values == () for a in first.allocations)  # they come with the whole load
    assert first.total_bytes_used == whole.total_bytes_used is not None
    assert sum(a.size for a in first.allocations) == sum(a.size for a in whole.allocations)
    assert first.analysis.totals_by_color == whole.analysis.totals_by_color
    assert first.analysis.totals_by_kind == whole.analysis.totals_by_kind
    # XLA's printed step, which the whole load computes with XLA's sweep.
    assert whole.live_range.peak is not None
    assert first.analysis.peak_step == whole.live_range.peak.time == whole.analysis.peak_step
    read, total = first.preview
    assert 0 < read <= total
    assert total == sum(os.path.getsize(f.path) for f in whole.files if f.kind != "module-text")
    assert first.live_range is None and not first.diagnostics and len(first.used_values) == 0


def test_a_dump_without_a_peak_line_has_no_peak_step_at_first(tmp_path):
    text = open(sample(COMBINED)).read()
    start = text.index("  Live ranges at ")
    cut = tmp_path / "no-peak-buffer-assignment.txt"
    cut.write_text(text[:start])
    first = preview(cut, from_bytes=0)
    assert first is not None and first.analysis.peak_step is None
    assert len(first.allocations) == len(load(cut).allocations)


@pytest.mark.parametrize(
    "relative",
    [
        COMBINED,  # alone
        "jax/jax-0.4.35/scan_layers/module_0001.jit_scan_train_step"
        ".cpu_after_optimizations-buffer-assignment.txt",  # beside its memory-usage report
    ],
)
def test_a_combined_dump_named_as_a_split_modules_first_file_is_read_to_its_allocations_end(
    relative, monkeypatch
):
    """XLA names a combined dump ``*-buffer-assignment.txt``, as it names a split
    module's first file, and jax 0.4.35 writes a memory-usage report beside it. The
    first look passes over its text up to the line after its allocations, not the
    whole file (it took all of a 110 MB dump: 0.06 s more for the pass and 0.04 s more
    to count the lines)."""
    path = sample(relative)
    text = open(path, "rb").read()
    end = text.index(b"\n", text.index(b"\nTotal bytes used:") + 1) + 1
    passed_over: list[bytes] = []
    take = preview_module._allocations
    monkeypatch.setattr(
        preview_module, "_allocations", lambda head: take(passed_over.append(head) or head)
    )
    first = glance(path, from_bytes=0)
    assert first is not None and first.files[0].path == path
    assert passed_over == [text[:end]] and end < len(text)
    lines = first.sections.allocations
    whole = load(path)
    assert [_head(a) for a in lines] == [_head(a) for a in whole.allocations]
    assert first.total_bytes_used == whole.total_bytes_used is not None
    assert first.analysis.peak_step == whole.analysis.peak_step is not None


def test_the_first_look_of_a_split_module_reads_its_allocations_file():
    report = sample(BIG).replace("-buffer-assignment.txt", "-memory-usage-report.txt")
    first = preview(report, from_bytes=0)
    assert first is not None
    assert first.files[0].path.endswith("-buffer-assignment.txt")
    assert first.name == "module_0001.jit_transformer_train_step.cpu_after_optimizations"
    assert first.analysis.peak_step == load(report).analysis.peak_step


def test_no_first_look_where_it_would_not_help():
    assert preview(sample(SMALL)) is None  # small: the whole load is as quick
    assert preview(sample(BIG)) is not None  # 2.4 MB
    assert preview("-") is None
    assert preview("/no/such/dump.txt") is None


# -- the glance: allocations read from their lines on first use -------------------------
@pytest.fixture
def reads(monkeypatch) -> list[int]:
    """The line number of every allocation line a glance reads from here on."""
    read: list[int] = []
    real = preview_module._read_allocation

    def spy(text: bytes, line: int) -> BufferAllocation:
        read.append(line)
        return real(text, line)

    monkeypatch.setattr(preview_module, "_read_allocation", spy)
    return read


@pytest.mark.parametrize("relative", [BIG, COMBINED, "seeds/003_a3085531593bac68.txt"])
def test_a_glance_has_the_first_look_with_each_allocation_read_on_first_use(relative, reads):
    path = sample(relative)
    whole = load(path)
    first = glance(path, from_bytes=0)
    assert first is not None and first.reading_allocations and reads == []
    allocations = first.allocations
    assert isinstance(allocations, AllocationLines)
    # The columns, read without any allocation: the tree's order and the legend's
    # totals come from them.
    assert list(allocations.indexes) == [a.index for a in whole.allocations]
    assert list(allocations.sizes) == [a.size for a in whole.allocations]
    assert list(allocations.colors) == [a.color for a in whole.allocations]
    assert first.analysis.totals_by_color == whole.analysis.totals_by_color
    assert first.total_bytes_used == whole.total_bytes_used
    assert first.analysis.peak_step == whole.analysis.peak_step is not None
    # Not worked out yet: no figure stands for them.
    assert first.analysis.memory_stats is None and first.analysis.totals_by_kind == {}
    assert first.analysis.peak_bytes_source is None and first.analysis.peak_bytes == 0
    assert reads == []
    largest = max(whole.allocations, key=lambda a: (a.size, -a.index))
    shown = first.analysis.allocation_of[largest.index]
    assert _head(shown)[:-1] == _head(largest)[:-1]
    # That one only, and once; before the lines are counted (the first screen needs
    # none), with no line.
    assert reads == [0] and shown.line == 0
    assert first.analysis.allocation_of[largest.index] is allocations.in_order(True)[0]
    assert len(reads) == 1
    # Read whole, it is the first look preview() gives, with the allocations read (as
    # columns, each made anew when read): the lines counted first, the one read before
    # given its own.
    done = completed(first)
    assert not done.reading_allocations
    assert [_head(a) for a in done.allocations] == [_head(a) for a in whole.allocations]
    assert all(
        a == b and a.line == b.line for a, b in zip(done.allocations, allocations, strict=True)
    )
    assert [a.line for a in done.allocations] == [a.line for a in whole.allocations]
    assert shown.line == largest.line > 0
    others = [a.line for a in whole.allocations if a.index != largest.index]
    assert sorted(reads[1:]) == others  # each once
    full = preview(path, from_bytes=0)
    assert full is not None
    for field in ("totals_by_kind", "totals_by_color", "memory_stats", "memory_spaces"):
        assert getattr(done.analysis, field) == getattr(full.analysis, field), field
    # memory_analysis()'s sizes are the first look's too; peak_memory_in_bytes needs the
    # value lines, which it does not read
    assert done.analysis.memory_stats.as_dict() == whole.analysis.memory_stats.as_dict()
    assert done.analysis.memory_stats.peak_memory_in_bytes is None
    printed = sum(e.bytes for e in whole.live_range.peak.entries)
    assert done.analysis.peak_bytes == full.analysis.peak_bytes == printed
    assert done.analysis.peak_bytes_source == "list"


def test_a_glance_is_laid_out_from_its_largest_allocations_only(reads):
    first = glance(sample(BIG), from_bytes=0)
    assert first is not None and len(first.allocations) > 300
    layout = PaneIndexes.of(first).tree
    assert len(reads) == 200  # the rows the widths are taken from
    lines = first.allocations
    size_of = dict(zip(lines.indexes, lines.sizes, strict=True))
    by_size = [(size_of[i], -i) for i in layout.by_size.indexes]
    assert by_size == sorted(by_size, reverse=True) and len(by_size) == len(lines)
    whole = TreeLayout.of(completed(first))
    assert (layout.idx_w, layout.space_w) == (whole.idx_w, whole.space_w)
    assert layout.alloc_w <= whole.alloc_w


def test_a_glance_counts_lines_where_an_allocation_line_is_damaged(tmp_path):
    """A line that starts as an allocation line and is not one: the whole load reports
    it and goes on; the glance leaves it out too, and numbers the others right."""
    text = open(sample(COMBINED)).read().split("\n")
    at = next(i for i, line in enumerate(text) if line.startswith("allocation 3:"))
    text.insert(at, "allocation 99: size lots, constant:")
    damaged = tmp_path / "damaged-buffer-assignment.txt"
    damaged.write_text("\n".join(text))
    whole = load(damaged)
    assert any(d.line == at + 1 for d in whole.diagnostics)
    first = glance(damaged, from_bytes=0)
    assert first is not None
    assert [_head(a) for a in first.allocations] == [_head(a) for a in whole.allocations]


def _lines(n: int = 3) -> AllocationLines:
    texts = [f"allocation {k}: size {10 * (k % 2) + 5}:".encode() for k in range(n)]

    def read(text: bytes, line: int) -> BufferAllocation:
        index, size = text.decode().removeprefix("allocation ").rstrip(":").split(": size ")
        return BufferAllocation(int(index), int(size), line=line)

    column = lambda f: array("q", [f(k) for k in range(n)])  # noqa: E731
    return AllocationLines(
        texts,
        column(lambda k: k),
        column(lambda k: 10 * (k % 2) + 5),
        column(lambda k: 0),
        read,
        lambda: column(lambda k: 2 + 2 * k),
    )


def test_allocation_lines_read_each_line_once_in_any_order():
    lines = _lines(4)
    assert [a.size for a in lines.in_order(True)] == [15, 15, 5, 5]
    assert lines.in_order(True).indexes == [1, 3, 0, 2]  # equal sizes by index
    assert lines.in_order(False).indexes == [0, 1, 2, 3]
    assert lines[1] is lines.in_order(True)[0] is lines.by_index()[1]
    # Read before the lines are counted: with none, then given theirs, equal either way.
    first = lines[1:3]
    assert [a.line for a in first] == [0, 0] and first[0] == BufferAllocation(1, 15, line=4)
    assert list(lines) == [lines[k] for k in range(4)] and len(lines) == 4  # counts them
    assert [a.line for a in first] == [4, 6] and lines[0].line == 2  # the rest read with it
    assert 7 not in lines.by_index() and len(lines.by_index()) == 4


def test_allocation_lines_out_of_index_order_are_sorted_by_index():
    # XLA prints allocations by index; a dump that does not (edited, or damaged) is
    # sorted all the same.
    lines = _lines(4)
    shuffled = AllocationLines(
        [lines.texts[k] for k in (2, 0, 3, 1)],
        array("q", [2, 0, 3, 1]),
        array("q", [5, 5, 15, 15]),
        lines.colors,
        lines._read,
        lambda: array("q", [2, 4, 6, 8]),
    )
    assert shuffled.in_order(False).indexes == [0, 1, 2, 3]
    assert shuffled.in_order(True).indexes == [1, 3, 0, 2]  # equal sizes by index
    assert [a.index for a in shuffled.in_order(False)] == [0, 1, 2, 3]


@pytest.mark.parametrize("order", [(0, 1, 2, 3), (2, 0, 3, 1), (0, 1, 2, 5)])
def test_allocations_by_index_are_a_mapping_whatever_the_order(order):
    """By index: the lines' own positions when they are in index order from 0 (as XLA
    prints them: no map is made), else a map. Either way a mapping: no index outside
    the dump is found, not even one that counts from the end."""
    lines = _lines(4)
    by_index = AllocationLines(
        [lines.texts[k % 4] for k in order],
        array("q", order),
        lines.sizes,
        lines.colors,
        lambda text, line: (text, line),
        lambda: array("q", [2, 4, 6, 8]),
    ).by_index()
    assert sorted(by_index) == sorted(order) and len(by_index) == 4
    by_index.lines.count_lines()  # first: each then read with its own line
    assert [by_index[k][1] for k in order] == [2, 4, 6, 8]
    for missing in (-1, 4 if 4 not in order else 6, "1", None):
        assert missing not in by_index and by_index.get(missing) is None
        with pytest.raises(KeyError):
            by_index[missing]


def test_allocation_lines_need_a_value_of_every_column_for_every_line():
    lines = _lines(2)
    with pytest.raises(ValueError, match="one item per allocation line"):
        AllocationLines([b"x"], lines.indexes, lines.sizes, lines.colors, lambda t, n: t, list)
    short = AllocationLines(
        lines.texts, lines.indexes, lines.sizes, lines.colors, lambda t, n: t, lambda: array("q")
    )
    with pytest.raises(ValueError, match="a line number is needed"):
        short.count_lines()


def test_a_glance_leaves_the_aliases_to_completed(monkeypatch):
    """The HLO text beside a dump gives memory_analysis()'s aliases: its first line, a
    twelve-thousand-entry one in a 256-layer model. The first screen needs none of it:
    the glance does not read it, completed() does, and has the whole load's aliases."""
    folder = Path(sample("tpu/v5e_1x1-donation"))
    path = next(folder.glob("*-buffer-assignment.txt"))
    whole = load(path)
    assert whole.sections.input_output_alias  # the sample donates its parameters
    read = []
    real = preview_module.read_io_alias

    def spy(p):
        read.append(p)
        return real(p)

    monkeypatch.setattr(preview_module, "read_io_alias", spy)
    first = glance(path, from_bytes=0)
    assert first is not None and first.sections.input_output_alias is None and read == []
    done = completed(first)
    assert len(read) == 1
    assert done.sections.input_output_alias == whole.sections.input_output_alias
    assert done.analysis.memory_stats.as_dict() == whole.analysis.memory_stats.as_dict()
    assert done.analysis.memory_stats.alias_source == "input_output_alias"


def test_completed_gives_way_to_keys_as_it_reads_the_allocations(monkeypatch):
    """The browser's load thread completes a glance with a pause between pieces of
    allocations (where it waits while keys come in): the same first look, with a pause
    after each piece."""
    monkeypatch.setattr(allocation_lines, "PAUSE_EVERY", 100)
    path = sample(BIG)
    paused = []
    first = glance(path, from_bytes=0)
    assert first is not None and len(first.allocations) > 300
    done = completed(first, pause=lambda: paused.append(len(paused)))
    assert len(paused) == -(-len(first.allocations) // 100)
    plain = completed(glance(path, from_bytes=0))
    assert [_head(a) for a in done.allocations] == [_head(a) for a in plain.allocations]
    assert done.analysis.memory_stats == plain.analysis.memory_stats is not None
    assert done.analysis.totals_by_kind == plain.analysis.totals_by_kind
