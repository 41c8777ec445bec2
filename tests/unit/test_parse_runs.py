"""The runs of ordinary lines a section reader takes in one loop (one match a line, or
one findall for a run of schedule lines) read what reading each line alone reads:
the same model and the same diagnostics, at the same lines, on real dumps and on
damaged copies of them."""

from __future__ import annotations

import pytest

from conftest import SAMPLES
from hlotop.model import Diagnostic
from hlotop.parse import live_range
from hlotop.parse.dump import parse_text
from hlotop.parse.memory_report import MemoryReportSection

# 1912 schedule steps, the longest sample schedule: runs of 1024 and a last one of 889
LONG_SCHEDULE = next((SAMPLES / "jax" / "jax-0.10.2" / "transformer_big").glob("*-live-range.txt"))
ERA_A = next((SAMPLES / "jax" / "jax-0.7.2" / "mlp_train").glob("*-memory-usage-report.txt"))
ERA_B = next((SAMPLES / "jax" / "jax-0.10.2" / "tuple_outputs").glob("*-memory-usage-report.txt"))


def _read(text: str):
    found: list[Diagnostic] = []
    parsed = parse_text("x.txt", text, found)
    return parsed, [(d.line, d.severity, d.message) for d in found]


def _schedule(text: str):
    parsed, found = _read(text)
    live = parsed.live_range
    return live.max_time, live.instruction_sequence, live.buffers, found


def _damaged(text: str, step: int, line: str) -> tuple[str, int]:
    """``text`` with schedule step ``step``'s line replaced by ``line``, and that
    line's 1-based number."""
    lines = text.split("\n")
    at = next(k for k, ln in enumerate(lines) if ln.startswith(f"    {step}:"))
    lines[at] = line
    return "\n".join(lines), at + 1


@pytest.mark.parametrize(
    "damage",
    [
        None,
        (1500, "    1500:"),  # no name: the second run has a line of another form
        (1023, "    1023 fusion.y"),  # the last line of the first run
        (1030, "    1031:fusion.x"),  # a damaged step number, early in the second run
        (1911, "    7:z"),  # the last step's number
    ],
)
@pytest.mark.parametrize("run", [1, 3, 1024, 5000])
def test_a_schedule_read_in_runs_is_the_schedule_read_line_by_line(monkeypatch, damage, run):
    text = LONG_SCHEDULE.read_text()
    line = 0
    if damage is not None:
        text, line = _damaged(text, *damage)
    monkeypatch.setattr(live_range, "_RUN", 10**9)  # one run, read line by line...
    monkeypatch.setattr(live_range, "_SEQUENCE_LINES", _NEVER)  # ...as it was
    expected = _schedule(text)
    monkeypatch.undo()
    monkeypatch.setattr(live_range, "_RUN", run)
    got = _schedule(text)
    assert got == expected
    max_time, sequence, buffers, found = got
    assert (max_time, len(buffers), len(sequence)) == (1912, 1847, 1912)
    # Damage is reported once, at its line, and every other step keeps its name.
    assert [at for at, _, _ in found] == ([line] if damage is not None else [])
    intact = _schedule(LONG_SCHEDULE.read_text())[1]
    damaged = {damage[0]} if damage is not None else set()
    assert [n for k, n in enumerate(sequence) if k not in damaged] == [
        n for k, n in enumerate(intact) if k not in damaged
    ]


@pytest.mark.parametrize(
    "lost, kind",
    [([1500], "lost"), ([1500, 1501, 1502], "lost"), ([7], "lost"), ([1499], "again")],
)
def test_schedule_steps_after_a_lost_or_repeated_line_keep_their_numbers(lost, kind):
    """A line lost from the schedule (or one listed twice) is reported once, and the
    later steps keep the instructions their lines name: the live ranges and the peak
    refer to steps by number. A lost step is shown as MISSING_STEP."""
    text = LONG_SCHEDULE.read_text()
    intact = _schedule(text)[1]
    lines = text.split("\n")
    at = [k for k, ln in enumerate(lines) if ln.split(":")[0].strip() in map(str, lost)]
    at = [k for k in at if lines[k].startswith("    ") and lines[k][4].isdigit()]
    if kind == "lost":
        del lines[at[0] : at[-1] + 1]
        report_line = at[0] + 1  # the first line after the lost ones
    else:
        lines.insert(at[0] + 1, lines[at[0]])
        report_line = at[0] + 2
    max_time, sequence, buffers, found = _schedule("\n".join(lines))
    assert [(line, severity) for line, severity, _ in found] == [(report_line, "warning")]
    assert len(sequence) == len(intact) == max_time
    for k, name in enumerate(intact):
        assert sequence[k] == (live_range.MISSING_STEP if kind == "lost" and k in lost else name)


class _Never:
    """A pattern that finds nothing: every run of the schedule is read line by line."""

    def findall(self, text: str) -> list:
        return []


_NEVER = _Never()


def _report(text: str):
    parsed, found = _read(text)
    return parsed.memory_usage_report, found


@pytest.mark.parametrize(
    "path, after, old, new",
    [
        (ERA_A, "", "", ""),
        (ERA_A, "with their values:", "allocation ", "allocation x"),  # a table's head
        (ERA_A, "allocation\n---", "; ", ";; "),  # the first row of the list
        (ERA_A, "with their values:", "%); ", "%) "),  # a table's first row
        (ERA_A, "allocation\n---", "size ", "sise "),  # a list row's allocation
        (ERA_A, "with their values:", "used_by_n_values", "used_by_values"),  # column names
        (ERA_A, "with their values:", "\t---", "\t-=-"),  # a table's rule
        (ERA_B, "", "", ""),
        (ERA_B, "shapes_list", "; ", ";; "),  # a table's first row
    ],
)
def test_a_report_read_in_runs_is_the_report_read_line_by_line(monkeypatch, path, after, old, new):
    text = path.read_text()
    line = 0
    if old:
        at = text.index(old, text.index(after))
        text = text[:at] + new + text[at + len(old) :]
        line = text.count("\n", 0, at) + 1
    monkeypatch.setattr(MemoryReportSection, "take_run", lambda self, lines, i, *_: i)
    expected = _report(text)
    monkeypatch.undo()
    got = _report(text)
    assert got == expected
    report, found = got
    assert report.allocations or report.memory_spaces
    # Damage is reported first at its line (a table's rows after a damaged head, too).
    assert [at for at, _, _ in found][:1] == ([line] if old else [])
