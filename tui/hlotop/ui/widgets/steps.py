"""Schedule steps: what runs at a step, what is live there, and the one-line summary
of a step that the timeline and the status bar share. No Textual here."""

from __future__ import annotations

import gc
from array import array
from bisect import bisect_left, bisect_right
from itertools import accumulate

from rich.text import Text

from hlotop.model import ModuleDump, ValueInfo
from hlotop.safe_text import printable
from hlotop.units import human_bytes


def instruction_at(dump: ModuleDump, step: int) -> str:
    """The instruction scheduled at ``step``, or ``"(end of program)"`` past the
    sequence (live-out values and parameters run to ``max``)."""
    seq = dump.live_range.instruction_sequence if dump.live_range else ()
    return seq[step] if 0 <= step < len(seq) else "(end of program)"


def live_counts(values: list[ValueInfo], max_time: int) -> list[int]:
    """How many values are live at each step 0..max_time."""
    diff = [0] * (max_time + 2)
    stop = max_time + 1
    for info in values:
        live = info.live
        if live is not None:
            start = live.start
            start = 0 if start < 0 else stop if start > stop else start
            end = live.end if live.end < max_time else max_time
            if end >= start:
                diff[start] += 1
                diff[end + 1] -= 1
    return list(accumulate(diff[:stop]))


def no_live_ranges(dump: ModuleDump) -> str:
    """Why a dump shows no live ranges: it has none, or (the first look at a big dump)
    they are still loading."""
    if dump.preview is not None:
        return "live ranges: loading…"
    return "no live ranges in this dump"


def step_summary(dump: ModuleDump, step: int, counts: list[int]) -> Text:
    """``step 11/15 fusion · live 284.00MiB · 9 values · XLA peak``."""
    a = dump.analysis
    text = Text(no_wrap=True, overflow="ellipsis", end="")
    if not a.live_bytes:
        text.append(no_live_ranges(dump), style="dim")
        return text
    text.append(f"step {step}/{a.max_time} ", style="bold")
    text.append(printable(instruction_at(dump, step)))
    text.append(f" · live {human_bytes(a.live_bytes[step])} · {counts[step]} values")
    if step == a.peak_step:
        text.append(" · ◆ XLA peak", style="bold red")
    return text


def _xla_order(info: ValueInfo):
    """XLA's peak-list order (as :func:`hlotop.analysis.analyze.live_set`), then value id."""
    return (-info.logical_bytes, info.value.name, info.value.shape_index or (), info.value.id)


def _start(info: ValueInfo) -> int:
    return info.live.start


def _end(info: ValueInfo) -> int:
    return info.live.end


class StepIndex:
    """The values that have a live range, ordered for the timeline (by start step,
    then id), with the live count at every step: built once per dump (a few passes
    over the values, most at C speed) and shared by the timeline and the live set."""

    def __init__(self, values: list[ValueInfo], max_time: int):
        rows = [v for v in values if v.live is not None]
        ids = [v.value.id for v in rows]
        if any(a > b for a, b in zip(ids, ids[1:], strict=False)):
            rows.sort(key=lambda v: v.value.id)
        rows.sort(key=_start)  # stable: by start, then id
        self.rows = rows
        self.row_of = {v.value.id: i for i, v in enumerate(rows)}
        self.max_time = max_time
        self.counts = live_counts(rows, max_time)


class LiveIndex:
    """The live set at any step, fast: values are kept sorted by start step and by end
    step, and a move of a few steps updates the previous set instead of scanning every
    value."""

    _INCREMENTAL = 256  # steps; beyond that a full scan is cheaper

    def __init__(self, values: list[ValueInfo], steps: StepIndex | None = None):
        self._source = (values, steps)
        self._built = False
        self.step: int | None = None
        self.live: dict[int, ValueInfo] = {}

    def _build(self) -> None:
        """On the first look (the live set opens at the peak, which needs no index)."""
        values, steps = self._source
        rows = (
            steps.rows
            if steps is not None
            else sorted((v for v in values if v.live is not None), key=_start)
        )
        self.values = [v for v in rows if v.live.start <= v.live.end]  # by start
        self.by_end = sorted(self.values, key=_end)
        self.starts = array("q", [v.live.start for v in self.values])  # no GC traversal
        self.ends = array("q", [v.live.end for v in self.by_end])
        self._built = True
        # Kept for the app's life, and built after the app froze what it loaded: out of
        # every later GC pass too (each pass walked these 100k-item lists: ~15 ms a
        # step key at 100 MB, every 25 keys).
        gc.freeze()

    def _starting(self, step: int) -> list[ValueInfo]:
        return self.values[bisect_left(self.starts, step) : bisect_right(self.starts, step)]

    def _ending(self, step: int) -> list[ValueInfo]:
        return self.by_end[bisect_left(self.ends, step) : bisect_right(self.ends, step)]

    def at(self, step: int) -> list[ValueInfo]:
        """Values live at ``step`` (start <= step <= end), largest first."""
        if not self._built:
            self._build()
        if self.step is None or abs(step - self.step) > self._INCREMENTAL:
            # Started at or before the step (a prefix of the start order), not ended.
            started = self.values[: bisect_right(self.starts, step)]
            self.live = {v.value.id: v for v in started if v.live.end >= step}
        else:
            live, t = self.live, self.step
            while t < step:
                for v in self._ending(t):
                    live.pop(v.value.id, None)
                t += 1
                for v in self._starting(t):
                    live[v.value.id] = v
            while t > step:
                for v in self._starting(t):
                    live.pop(v.value.id, None)
                t -= 1
                for v in self._ending(t):
                    live[v.value.id] = v
        self.step = step
        return sorted(self.live.values(), key=_xla_order)
