"""A dump cut short (full disk, killed job) opens with everything before the cut, and
says it was truncated."""

from __future__ import annotations

from pathlib import Path

from conftest import sample
from hlotop import load

SEED3 = Path(sample("seeds/003_a3085531593bac68.txt"))
LINES = SEED3.read_text().splitlines(keepends=True)


def _cut(tmp_path, upto: str, keep_newline: bool = True, name: str = "cut.txt"):
    """The seed up to (not including) the first line starting with ``upto``."""
    at = next(i for i, line in enumerate(LINES) if line.startswith(upto))
    text = "".join(LINES[:at])
    path = tmp_path / name
    path.write_text(text if keep_newline else text.rstrip("\n"))
    return load(path)


def _truncated(m):
    return [d.message for d in m.diagnostics if d.message.startswith("truncated:")]


def test_cut_inside_the_allocations(tmp_path):
    m = _cut(tmp_path, "allocation 6:")
    assert [a.index for a in m.allocations] == [0, 1, 2, 3, 4, 5]
    assert m.allocations[4].values[1].value.name == "all-reduce.28"
    assert _truncated(m) == [
        "truncated: the file ends before 'Total bytes used': only the allocations were read"
    ]
    assert [d for d in m.diagnostics if d.severity == "error"] == []


def test_cut_after_the_allocations_of_a_split_name(tmp_path):
    """Named like a split module's first file, with no siblings: allocations alone are
    all a jax >= 0.10 -buffer-assignment.txt holds, so each sibling is reported as not
    found, not as truncated (tests/test_partial_input.py has the messages)."""
    m = _cut(
        tmp_path,
        "allocation 6:",
        name="module_0001.f.cpu_after_optimizations-buffer-assignment.txt",
    )
    assert len(m.allocations) == 6
    assert _truncated(m) == []
    assert [d.message.split(":")[0] for d in m.diagnostics] == ["sibling file not found"] * 3


def test_cut_inside_a_value_record(tmp_path):
    m = _cut(tmp_path, " from instruction: %p2.4")
    assert len(m.allocations) == 13 and m.total_bytes_used == 299944008
    last = m.used_values[len(m.used_values) - 1]
    assert last.value.name == "p2.4" and last.instruction_text is None
    (message,) = _truncated(m)
    assert "the last value record (<35 p2.4 @0>)" in message


def test_cut_inside_the_schedule(tmp_path):
    m = _cut(tmp_path, "    9:fusion.10")
    assert len(m.used_values) == 21
    assert m.live_range.instruction_sequence[-1] == "copy-done.1"
    assert _truncated(m) == [
        "truncated: the schedule lists 9 of the 15 steps of 'HloLiveRange (max 15)'"
    ]


def test_cut_mid_line_without_final_newline(tmp_path):
    at = LINES.index("  BufferLiveRange:\n") + 3
    path = tmp_path / "cut.txt"
    path.write_text("".join(LINES[:at]) + LINES[at][:10])  # "    copy-s" cut mid-line
    m = load(path)
    assert any("does not end with a newline" in t for t in _truncated(m))
    assert [b.key for b in m.live_range.buffers] == [("p3.6", ()), ("copy-start.1", ())]
    errors = [d for d in m.diagnostics if d.severity == "error"]
    assert [d.line for d in errors] == [at + 1]  # the half line itself is reported
