"""Figures worked out when first read (hlotop.model.figures: OnFirstRead,
CurveOnFirstRead, ValuesById): a report that never shows them never pays for them, and
once read they are the very figures worked out at once, made once even when two
threads read them together."""

from __future__ import annotations

import threading
from pathlib import Path

from hlotop.analysis.occupancy import occupied_bytes_per_step
from hlotop.analysis.peak import live_bytes_per_step
from hlotop.loading.loader import load
from hlotop.model import CurveOnFirstRead, OnFirstRead, ValuesById

# A real TPU train step (split files): four memory spaces, a schedule of 627 steps.
TPU_GPT = (
    Path(__file__).parents[2]
    / "sample_dumps/tpu/v5e_1x1-gpt_scan"
    / "module_0000.jit_gpt_train_step.cl_933746096.after_optimizations-buffer-assignment.txt"
)


def test_the_curves_of_a_loaded_dump_are_worked_out_when_first_read(monkeypatch):
    import hlotop.analysis.analyze as analyze

    made = []
    real = analyze.live_bytes_per_step
    monkeypatch.setattr(analyze, "live_bytes_per_step", lambda *a: made.append(1) or real(*a))
    a = load(TPU_GPT, lazy=True).analysis
    assert isinstance(a.live_bytes, CurveOnFirstRead) and isinstance(a.occupied_bytes, OnFirstRead)
    assert a.peak_step is not None and not made  # the peak, without the curve
    live = [i for i in a.values if i.live is not None]
    expected = live_bytes_per_step(live, a.max_time)
    assert a.live_bytes == expected and list(a.live_bytes) == list(expected) and made == [1]
    assert (
        len(a.live_bytes) == a.max_time + 1 and a.live_bytes[a.peak_step] == expected[a.peak_step]
    )
    assert a.live_bytes.index(max(expected)) == expected.index(max(expected))
    assert a.live_bytes[:3] == expected[:3]
    a.live_bytes[0]
    assert made == [1]  # once
    assert dict(a.occupied_bytes) == occupied_bytes_per_step(live, a.allocation_of, a.max_time)
    assert sorted(a.occupied_bytes) == [0, 1, 2, 6]  # each colour with an allocation


def test_settle_works_the_curves_out_once_for_two_threads_at_once():
    calls = []
    gate = threading.Event()

    def make():
        calls.append(1)
        gate.wait(5)
        return {0: [1, 2, 3]}

    curves = OnFirstRead(make)
    readers = [threading.Thread(target=lambda: len(curves)) for _ in range(2)]
    for reader in readers:
        reader.start()
    gate.set()
    for reader in readers:
        reader.join(5)
    assert calls == [1] and curves == {0: [1, 2, 3]}

    a = load(TPU_GPT, lazy=True).analysis
    a.settle()
    assert a.live_bytes._made is not None and a.occupied_bytes._made is not None


def test_values_by_id_look_up_as_a_dict_of_the_values_would():
    a = load(TPU_GPT, lazy=True).analysis
    index = ValuesById(a.values)
    assert len(index) == len(a.values) and index._made is None  # nothing laid out yet
    by_dict = {i.value.id: i for i in a.values}
    for vid in [*list(by_dict)[::97], -5, 10**9, "7"]:
        assert (vid in index) == (vid in by_dict)
        assert index.get(vid) == by_dict.get(vid)
    assert list(index) == list(by_dict)
