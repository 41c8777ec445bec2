"""Analysis: XLA's peak rule, live bytes per step, live sets, totals."""

from __future__ import annotations

import random

import pytest

from conftest import BIG, SEEDS, sample
from hlotop import load
from hlotop.analysis.analyze import BeforeLiveRanges, analyze, live_set, xla_peak_step


def test_peak_sweep_counts_starts_before_ends_at_the_same_step():
    # Seed 002's shape: three 4608-byte converts end at step 6, concatenate (13824) is
    # live 6-7 and convert.3 (6912) starts at 7. At step 7 XLA adds convert.3 before
    # freeing the converts, so 7 beats 6 although fewer bytes are live at 7.
    ranges = [(0, 8, 2304)] * 3 + [
        (3, 6, 4608),
        (4, 6, 4608),
        (5, 6, 4608),
        (6, 7, 13824),
        (7, 8, 6912),
    ]
    assert xla_peak_step(ranges) == (7, 41472)


def test_peak_sweep_takes_the_earliest_maximum_and_zero_when_empty():
    assert xla_peak_step([(0, 0, 10), (2, 3, 10)]) == (0, 10)
    # A range ending at step 1 is freed at step 2, after step 2's starts.
    assert xla_peak_step([(0, 1, 10), (2, 3, 10)]) == (2, 20)
    assert xla_peak_step([]) == (0, 0)
    assert xla_peak_step([(0, 0, 0)]) == (0, 0)
    for last in (None, 3, 9):  # event by event, and every step summed
        assert xla_peak_step([(0, 0, 10), (2, 3, 10)], last) == (0, 10)
        assert xla_peak_step([(0, 1, 10), (2, 3, 10)], last) == (2, 20)
        assert xla_peak_step([], last) == (0, 0) == xla_peak_step([(0, 0, 0)], last)


@pytest.mark.parametrize("seed", range(40))
def test_the_peak_sweep_over_every_step_is_the_sweep_over_events(seed):
    """The sweep event by event, and summed over every step in C where the ranges are
    near one another: XLA's own order of events (starts, then ends, at each step where
    one happens) gives the same step and bytes, also for damaged ranges (ending before
    they start, or at steps far apart)."""
    rng = random.Random(seed)
    spans = []
    for _ in range(rng.randrange(1, 60)):
        start = rng.randrange(0, 50)
        end = start + rng.randrange(-3, 20) if seed % 5 else rng.choice([start, 10**7])
        spans.append((start, max(end, -1), rng.choice([0, 4, 8, 1024, rng.randrange(1, 10**6)])))
    assert xla_peak_step(spans) == _xla_sweep(spans)
    assert xla_peak_step(iter(spans)) == _xla_sweep(spans)  # any iterable
    last = max(max(start, end) for start, end, _ in spans)
    if last < 10**6:  # every step summed, where the ranges are near one another
        assert xla_peak_step(spans, last) == _xla_sweep(spans)
        assert xla_peak_step(iter(spans), last + 5) == _xla_sweep(spans)


def _xla_sweep(spans):
    """HloLiveRange::ComputePeakMemoryMoment as XLA writes it: events sorted by (time,
    is_end), an end at end + 1; the first strict maximum."""
    events = sorted(
        [(start, False, size) for start, _, size in spans]
        + [(end + 1, True, size) for _, end, size in spans]
    )
    usage = peak = peak_time = 0
    for time, is_end, size in events:
        usage += -size if is_end else size
        if usage > peak:
            peak, peak_time = usage, time
    return peak_time, peak


@pytest.mark.parametrize("path", SEEDS, ids=lambda p: p.name[:3])
def test_printed_peak_entries_match_the_value_sizes(path):
    m = load(path)
    peak = m.live_range.peak
    by_key = {(i.value.name, i.value.shape_index or ()): i for i in m.analysis.values}
    for e in peak.entries:
        if peak.variant == "V1":
            # V1 prints ByteSizeOf of the defining instruction; the name may repeat.
            sizes = {
                i.sweep_bytes
                for k, i in by_key.items()
                if k[0] == e.name and i.is_live_at(peak.time)
            }
            assert e.bytes in sizes
        else:
            assert by_key[(e.name, e.shape_index)].logical_bytes == e.bytes
    if peak.variant != "V1":
        assert m.analysis.peak_bytes == sum(e.bytes for e in peak.entries)
        assert [(i.value.name, i.value.shape_index or ()) for i in m.analysis.peak_values] == [
            (e.name, e.shape_index) for e in peak.entries
        ]


def test_live_bytes_per_step_and_live_set():
    m = load(sample("seeds/002_c2e226da3172e77e.txt"))
    a = m.analysis
    assert len(a.live_bytes) == a.max_time + 1 == 9
    assert a.live_bytes[6] == 3 * 2304 + 3 * 4608 + 13824
    assert a.live_bytes[7] == 27648
    assert a.live_bytes[a.peak_step] == a.peak_bytes
    assert [i.value.name for i in live_set(a.values, 4)] == [
        "convert",
        "convert.1",
        "args_0_.1",
        "args_1_.1",
        "args_2_.1",
    ]


def test_totals_by_kind_and_memory_space_tpu():
    m = load(sample("seeds/003_a3085531593bac68.txt"))
    a = m.analysis
    assert a.totals_by_color[1] == 90177536 and a.totals_by_color[2] == 8
    assert sum(a.totals_by_color.values()) == 299944008
    assert a.totals_by_kind["thread-local"] == 3 * 512
    assert a.totals_by_kind["parameter"] == 3 * 58720256 + 16777216 + 512
    assert a.totals_by_kind["constant"] == 0


def test_tuple_value_sizes_tpu():
    a = load(sample("seeds/003_a3085531593bac68.txt")).analysis
    start = a.by_id[30]  # copy-start.1{}: the tuple's pointer table
    assert (start.logical_bytes, start.sweep_bytes, start.allocated_bytes) == (24, 24, 32)
    elem = a.by_id[31]  # copy-start.1{0}: a VMEM array; the sweep still counts 24
    assert (elem.logical_bytes, elem.sweep_bytes, elem.color) == (16777216, 24, 1)
    assert elem.shape == "f32[8,128,4096]{2,1,0:T(8,128)S(1)}"


def test_occupied_bytes_count_shared_slices_once():
    # jax 0.10.2 mlp_train donates its parameters: XLA's peak figure (the sum of the
    # live values, 1 032 880 bytes as its stack-trace header prints) exceeds the bytes
    # allocated; the slices those values occupy do not.
    from conftest import SAMPLES

    entry = next((SAMPLES / "jax" / "jax-0.10.2" / "mlp_train").glob("*-buffer-assignment.txt"))
    m = load(entry)
    a = m.analysis
    assert a.peak_bytes == m.live_range.stack_trace.total == 1032880
    assert a.peak_bytes > m.total_bytes_used
    assert a.peak_occupied_bytes <= m.total_bytes_used
    # Seed 003: nothing shares a slice at the peak, and p0.1's slot is padded to 512.
    t = load(sample("seeds/003_a3085531593bac68.txt")).analysis
    assert t.peak_occupied_bytes == t.peak_logical_bytes - 4 + 512


def test_values_by_id_answers_as_a_dict_of_the_values():
    """Analysis.by_id (ValuesById, a bisection over the values sorted by id) gives
    what a dict of the values by id gives, for ids it holds and ids it does not
    (synthetic negative ones included), and None or a str asked for."""
    from hlotop.loading.loader import load
    from hlotop.model import ValuesById

    a = load(sample("seeds/003_a3085531593bac68.txt")).analysis
    as_dict = {i.value.id: i for i in a.values}
    assert isinstance(a.by_id, ValuesById) and len(a.by_id) == len(as_dict)
    for vid in range(min(as_dict) - 3, max(as_dict) + 3):
        assert a.by_id.get(vid) == as_dict.get(vid)
        assert (vid in a.by_id) == (vid in as_dict)
    assert list(a.by_id) == sorted(as_dict)
    assert a.by_id.get(None) is None and "x" not in a.by_id
    with pytest.raises(KeyError):
        a.by_id[max(as_dict) + 1]


def test_what_was_worked_out_before_the_live_ranges_is_used_only_for_its_own_sections():
    one, other = (load(sample(p), lazy=True) for p in ("seeds/002_c2e226da3172e77e.txt", BIG))
    wrong = BeforeLiveRanges(other.sections)
    assert not wrong.holds(one.sections)
    again = analyze(one.sections, [], "x", wrong)  # worked out afresh: the same figures
    assert (again.peak_step, again.peak_bytes, again.memory_stats) == (
        one.analysis.peak_step,
        one.analysis.peak_bytes,
        one.analysis.memory_stats,
    )
    assert [(i.value, i.live, i.sweep_bytes) for i in again.values] == [
        (i.value, i.live, i.sweep_bytes) for i in one.analysis.values
    ]
    before = BeforeLiveRanges(one.sections)
    assert before.holds(one.sections)
    analyze(one.sections, [], "x", before)
    with pytest.raises(RuntimeError, match="joined to live ranges already"):
        before.values.join(one.sections.live_range)
