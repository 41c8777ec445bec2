"""Schedule steps: what runs at a step, what is live there, and the one-line summary
of a step that the timeline and the status bar share. No Textual here."""

from __future__ import annotations

from collections import defaultdict

from rich.text import Text

from hlotop.analysis import ValueInfo
from hlotop.loader import ModuleDump
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
    for info in values:
        if info.live is not None:
            start = min(max(info.live.start, 0), max_time + 1)
            end = min(info.live.end, max_time)
            if end >= start:
                diff[start] += 1
                diff[end + 1] -= 1
    out, running = [], 0
    for t in range(max_time + 1):
        running += diff[t]
        out.append(running)
    return out


def step_summary(dump: ModuleDump, step: int, counts: list[int]) -> Text:
    """``step 11/15 fusion · live 284.00MiB · 9 values · XLA peak``."""
    a = dump.analysis
    text = Text(no_wrap=True, overflow="ellipsis", end="")
    if not a.live_bytes:
        text.append("no live ranges in this dump", style="dim")
        return text
    text.append(f"step {step}/{a.max_time} ", style="bold")
    text.append(printable(instruction_at(dump, step)))
    text.append(f" · live {human_bytes(a.live_bytes[step])} · {counts[step]} values")
    if step == a.peak_step:
        text.append(" · ◆ XLA peak", style="bold red")
    return text


def _xla_order(info: ValueInfo):
    """XLA's peak-list order (as :func:`hlotop.analysis.live_set`), then value id."""
    return (-info.logical_bytes, info.value.name, info.value.shape_index or (), info.value.id)


class LiveIndex:
    """The live set at any step, fast: values are bucketed by start and end step, and
    a move of a few steps updates the previous set instead of scanning every value."""

    _INCREMENTAL = 256  # steps; beyond that a full scan is cheaper

    def __init__(self, values: list[ValueInfo]):
        self.values = [v for v in values if v.live is not None and v.live.start <= v.live.end]
        self.starts: dict[int, list[ValueInfo]] = defaultdict(list)
        self.ends: dict[int, list[ValueInfo]] = defaultdict(list)
        for v in self.values:
            self.starts[v.live.start].append(v)
            self.ends[v.live.end].append(v)
        self.step: int | None = None
        self.live: dict[int, ValueInfo] = {}

    def at(self, step: int) -> list[ValueInfo]:
        """Values live at ``step`` (start <= step <= end), largest first."""
        if self.step is None or abs(step - self.step) > self._INCREMENTAL:
            self.live = {v.value.id: v for v in self.values if v.is_live_at(step)}
        else:
            live, t = self.live, self.step
            while t < step:
                for v in self.ends.get(t, ()):
                    live.pop(v.value.id, None)
                t += 1
                for v in self.starts.get(t, ()):
                    live[v.value.id] = v
            while t > step:
                for v in self.starts.get(t, ()):
                    live.pop(v.value.id, None)
                t -= 1
                for v in self.ends.get(t, ()):
                    live[v.value.id] = v
        self.step = step
        return sorted(self.live.values(), key=_xla_order)
