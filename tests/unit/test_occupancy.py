"""Occupied bytes per step (hlotop.analysis.occupancy) on small allocations whose every
step is worked out by hand, and against a brute-force union of the live slices: the
difference-array path (no two live slices overlap, XLA's rule) and the exact sweep (two
do: a TPU ConcatBitcast output over its operands) agree with it."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

from hlotop.analysis.occupancy import Occupancy, _overlap, curve_peak, occupied_bytes_per_step
from hlotop.model import BufferAllocation, BufferLiveRange, HloValue, ValueInfo, ValueSlot

# A real TPU train step (split files), whose temporary allocation's slices take turns.
TPU_GPT = (
    Path(__file__).parents[2]
    / "sample_dumps/tpu/v5e_1x1-gpt_scan"
    / "module_0000.jit_gpt_train_step.cl_933746096.after_optimizations-buffer-assignment.txt"
)


def _value(vid: int, alloc: int, offset: int, size: int, start: int, end: int) -> ValueInfo:
    value = HloValue(vid, f"v{vid}", None)
    slot = ValueSlot(value, alloc, offset, size, "f32[]", 0)
    return ValueInfo(value, slot, live=BufferLiveRange(value.name, (), start, end))


def _brute(values: list[ValueInfo], colors: dict[int, int], max_time: int) -> dict:
    out = {color: [0] * (max_time + 1) for color in set(colors.values())}
    for step in range(max_time + 1):
        for alloc, color in colors.items():
            covered = set()
            for v in values:
                s, r = v.slot, v.live
                if s.allocation == alloc and r.start <= step <= r.end:
                    covered.update(range(s.offset, s.offset + s.size))
            out[color][step] += len(covered)
    return out


def _occupied(values, colors, max_time):
    allocs = {a: BufferAllocation(a, 1 << 20, color=c) for a, c in colors.items()}
    got = occupied_bytes_per_step(values, allocs, max_time)
    return {color: list(curve) for color, curve in got.items()}


def test_slices_that_take_turns_add_up_and_a_shared_slice_counts_once():
    values = [
        _value(1, 0, 0, 8, 0, 2),  # [0, 8) at steps 0-2
        _value(2, 0, 0, 8, 3, 4),  # the same bytes, reused from step 3
        _value(3, 0, 8, 8, 1, 3),  # [8, 16): touches the first slice, never overlaps it
        _value(4, 0, 8, 8, 2, 2),  # shares [8, 16) with value 3 (a bitcast): counted once
        _value(5, 1, 0, 4, 0, 4),  # another allocation, another memory space
    ]
    got = _occupied(values, {0: 0, 1: 1}, 5)
    assert got == {0: [8, 16, 16, 16, 8, 0], 1: [4, 4, 4, 4, 4, 0]}
    assert got == _brute(values, {0: 0, 1: 1}, 5)


def test_a_slice_over_live_slices_is_counted_as_their_union():
    # A ConcatBitcast output [0, 16) starts at the step its operands [0, 8) and [8, 16)
    # end: at step 2 the three are live and occupy 16 bytes, not 32.
    values = [_value(1, 0, 0, 8, 0, 2), _value(2, 0, 8, 8, 1, 2), _value(3, 0, 0, 16, 2, 3)]
    assert _occupied(values, {0: 0}, 4) == {0: [8, 16, 16, 16, 0]}


@pytest.mark.parametrize(
    ("spans", "overlap"),
    [
        ([(0, 8, 0, 2), (8, 16, 0, 2)], False),  # side by side
        ([(0, 8, 0, 2), (0, 8, 3, 5)], False),  # one after the other
        ([(0, 8, 0, 2), (4, 12, 2, 3)], True),  # share bytes 4-7 at step 2
        ([(0, 16, 0, 9), (4, 8, 5, 5)], True),  # one inside the other
        ([(0, 8, 0, 2), (8, 16, 3, 4), (4, 12, 5, 6)], False),
    ],
)
def test_overlap_is_two_live_slices_sharing_bytes(spans, overlap):
    assert _overlap(spans) is overlap
    assert _overlap(list(reversed(spans))) is overlap


@pytest.mark.parametrize(("pairwise", "block"), [(0, 1), (0, 2), (0, 256), (12, 256), (1000, 1)])
def test_the_pairwise_check_and_the_sweep_agree_on_random_spans(pairwise, block, monkeypatch):
    """Up to ``_PAIRWISE`` spans every pair is compared, above it the spans are swept
    (the live offsets in blocks of up to twice ``_BLOCK``): with the bound set to none,
    the default and all, and blocks of one, two and the default, each finds an overlap
    exactly where two spans share bytes at a common step."""
    import hlotop.analysis.occupancy as occupancy

    monkeypatch.setattr(occupancy, "_PAIRWISE", pairwise)
    monkeypatch.setattr(occupancy, "_BLOCK", block)
    rng = random.Random(5)
    seen = set()
    for trial in range(400):
        spans = []
        for _ in range(rng.randint(1, 30)):
            offset, first = rng.randrange(0, 200, 4), rng.randint(0, 40)
            spans.append((offset, offset + rng.choice([4, 8]), first, first + rng.randint(0, 3)))
        brute = any(
            a[0] < b[1] and b[0] < a[1] and a[2] <= b[3] and b[2] <= a[3]
            for a, b in itertools.combinations(spans, 2)
        )
        assert _overlap(spans) is brute, trial
        seen.add(brute)
    assert seen == {True, False}


def test_random_allocations_match_the_union_of_their_live_slices():
    rng = random.Random(9)
    for trial in range(200):
        values = []
        for vid in range(rng.randint(1, 12)):
            offset = rng.choice([0, 4, 8, 12, 16])
            size = rng.choice([4, 8, 12])
            start = rng.randint(0, 9)
            values.append(
                _value(vid, rng.randint(0, 2), offset, size, start, start + rng.randint(0, 4))
            )
        colors = {0: 0, 1: 1, 2: 0}
        assert _occupied(values, colors, 14) == _brute(values, colors, 14), trial


def test_the_peaks_are_the_curves_peaks_with_or_without_overlaps():
    """Each space's peak comes from the sums of its live slices where the slices live
    at their maximum do not overlap, else from its curve: over random allocations, half
    of them with a slice laid over others, the same (earliest step, bytes) as the
    curve's own peak, both ways taken."""
    rng = random.Random(11)
    ways = set()
    for trial in range(300):
        values = []
        for vid in range(rng.randint(1, 12)):
            offset, size, start = rng.choice([0, 8, 16, 24]), 8, rng.randint(0, 9)
            values.append(
                _value(vid, rng.randint(0, 2), offset, size, start, start + rng.randint(0, 4))
            )
        if trial % 2:  # a slice over the others of its allocation, at the busiest step
            start = rng.randint(0, 9)
            values.append(_value(99, rng.randint(0, 2), 0, 32, start, start + rng.randint(0, 4)))
        colors = {0: 0, 1: 1, 2: 0}
        allocs = {a: BufferAllocation(a, 1 << 20, color=c) for a, c in colors.items()}
        occupancy = Occupancy(values, allocs, 14)
        peaks = occupancy.peaks()
        curves = _brute(values, colors, 14)
        assert peaks == {c: curve_peak(curve) for c, curve in curves.items()}, trial
        ways.add(any(curve_peak(occupancy.sums[c]) != peaks[c] for c in peaks))
    assert ways == {True, False}  # the sums' peak taken, and the curve's


def test_the_curves_are_worked_out_only_when_first_read(monkeypatch):
    """A report that shows only the peaks never checks the allocations whose slices take
    turns; the curves, first read, are those of occupied_bytes_per_step."""
    import hlotop.analysis.occupancy as occupancy
    from hlotop.analysis.analyze import analyze
    from hlotop.loading.loader import load

    checked = []
    real = occupancy._overlap
    monkeypatch.setattr(occupancy, "_overlap", lambda spans: checked.append(1) or real(spans))
    module = load(TPU_GPT, lazy=True)
    assert module.analysis.memory_spaces and not checked
    curves = dict(module.analysis.occupied_bytes)
    assert checked
    a = analyze(module.sections)
    assert curves == occupied_bytes_per_step(a.values, a.allocation_of, a.max_time)
    assert {s.color: (s.peak_step, s.peak_bytes) for s in a.memory_spaces} == {
        c: curve_peak(curve) for c, curve in curves.items()
    }


def test_values_without_a_slot_or_a_live_range_occupy_nothing():
    lone = ValueInfo(HloValue(7, "p", None), live=BufferLiveRange("p", (), 0, 3))
    idle = _value(8, 0, 0, 8, 0, 0)
    idle.live = None
    assert _occupied([lone, idle], {0: 0}, 3) == {0: [0, 0, 0, 0]}
    assert list(itertools.chain.from_iterable(_occupied([], {0: 0}, 2).values())) == [0, 0, 0]


@pytest.mark.parametrize("block", [3, 256])
def test_the_sweep_over_a_packed_heap_finds_the_one_overlap(block, monkeypatch):
    """A heap as XLA packs a temporary allocation: 64 slots of mixed sizes, each reused
    by 60 values one after another (3840 spans, up to 64 live at once, so the sweep's
    blocks split and empty): no overlap; a span over the whole heap after the last
    step overlaps nothing; one over a slot's first bytes at the step a value there
    starts overlaps it, whichever slot."""
    import hlotop.analysis.occupancy as occupancy

    monkeypatch.setattr(occupancy, "_BLOCK", block)
    rng = random.Random(7)
    spans, offset = [], 0
    for _ in range(64):
        size, step = rng.choice([16, 64, 256]), rng.randint(0, 3)
        for _ in range(60):
            length = rng.randint(0, 5)
            spans.append((offset, offset + size, step, step + length))
            step += length + 1 + rng.randint(0, 2)
        offset += size
    rng.shuffle(spans)
    assert _overlap(spans) is False
    after = max(span[3] for span in spans) + 1
    assert _overlap([*spans, (0, offset, after, after + 3)]) is False
    for taken in rng.sample(spans, 20):
        over = (taken[0], taken[0] + 4, taken[2], taken[2])
        assert _overlap([*spans, over]) is True, taken


@pytest.mark.parametrize("piece", [1, 3, 1 << 14])
def test_running_sums_are_made_a_piece_at_a_time_as_in_one_pass(piece, monkeypatch):
    """The per-step curves' running sums come a piece at a time (a browser's keys wait
    for one call into C): the same sums, at every piece size, the curves' too."""
    from array import array
    from itertools import accumulate

    import hlotop.analysis.peak as peak

    monkeypatch.setattr(peak, "_SUM_PIECE", piece)
    rng = random.Random(3)
    for n in (0, 1, 2, 3, 4, 7, 100, 20000):
        diff = [rng.randint(-(1 << 40), 1 << 40) for _ in range(n)]
        assert peak.running_sums(diff) == array("q", accumulate(diff)), n
    values = []
    for vid in range(40):
        offset, size, start = rng.choice([0, 8, 16]), rng.choice([4, 8]), rng.randint(0, 9)
        values.append(_value(vid, vid % 3, offset, size, start, start + rng.randint(0, 4)))
    colors = {0: 0, 1: 1, 2: 0}
    assert _occupied(values, colors, 14) == _brute(values, colors, 14)
    logical = {step: 0 for step in range(15)}
    for v in values:
        v.logical_bytes = v.slot.size
        for step in range(v.live.start, v.live.end + 1):
            logical[step] += v.slot.size
    assert list(peak.live_bytes_per_step(values, 14)) == list(logical.values())


CPU_TRAIN = (
    Path(__file__).parents[2]
    / "sample_dumps/dirs/jax-0.10.2-cpu-train"
    / "module_0034.jit_train_step.cpu_after_optimizations-buffer-assignment.txt"
)


@pytest.mark.parametrize("dump", [TPU_GPT, CPU_TRAIN], ids=["tpu-gpt", "cpu-train"])
def test_a_lone_slice_is_added_as_its_one_span_would_be(dump, monkeypatch):
    """The value that alone occupies a slice of its allocation is added to the sums
    straight (occupancy._add_lone), not through the slice and span lists of every
    value: the sums and peaks are those of the span path on a real dump, and on values
    whose live ranges the schedule clips or of which one has no live range."""
    import hlotop.analysis.occupancy as occupancy
    from hlotop.loading.loader import load

    a = load(dump, lazy=True).analysis
    clipped = [_value(1, 0, 0, 8, -2, 3), _value(2, 1, 0, 8, 4, 30), _value(3, 2, 0, 8, 9, 9)]
    clipped += [_value(4, 2, 8, 8, 0, 1), _value(5, 3, 0, 4, 1, 2), _value(6, 3, 0, 4, 2, 2)]
    clipped[-1].live = None
    allocs = {i: BufferAllocation(i, 64, color=i % 2) for i in range(4)}
    cases = [(a.values, a.allocation_of, a.max_time), (clipped, allocs, 5)]
    fast = [Occupancy(*case) for case in cases]
    monkeypatch.setattr(occupancy, "_add_lone", lambda slices, *_: list(slices()))
    slow = [Occupancy(*case) for case in cases]
    assert any(s for s in fast[0].sums.values()) and sum(fast[1].sums[0]) > 0
    for f, s in zip(fast, slow, strict=True):
        assert {c: list(v) for c, v in f.sums.items()} == {c: list(v) for c, v in s.sums.items()}
        assert f.peaks() == s.peaks() and f.curves() == s.curves()
    assert list(fast[1].sums[0]) == [16, 16, 8, 8, 0, 0]  # 1 (0-3), 4 (0-1); 3 clipped out
