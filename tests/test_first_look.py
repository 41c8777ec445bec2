"""The first look at a big dump (hlotop.loading.preview): every allocation, the true
total and XLA's printed peak step, read from the allocation lines and the peak line
alone, equal to what the whole load reads, on real dumps of both layouts."""

from __future__ import annotations

import os

import pytest

from conftest import BIG, COMBINED, SMALL, sample
from hlotop.loading.loader import load
from hlotop.loading.preview import preview


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
