"""A dump cut short (full disk, killed job) opens with everything before the cut, and
says it was truncated."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import SAMPLES, SEEDS, sample
from hlotop import load
from hlotop.cli import main

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


# Figures a cut can change without a word: every one a test below compares.
def _figures(m) -> tuple:
    a = m.analysis
    return (
        m.total_bytes_used,
        len(m.allocations),
        len(a.values),
        len(m.used_values),
        a.max_time,
        a.peak_step,
        a.peak_bytes,
        len(a.peak_values),
        m.live_range.stack_trace if m.live_range is not None else None,
    )


def _line_ends(data: bytes) -> list[int]:
    """Every cut that leaves whole lines: just after each line end but the last."""
    return [i + 1 for i, byte in enumerate(data[:-1]) if byte == ord("\n")]


def _silent_cuts(folder: Path, opened: str, cut: str, every: int = 1) -> tuple[int, list]:
    """Cut the file ``cut`` of the module in ``folder`` (a copy) at its line ends (every
    ``every``-th) and open ``opened``: (how many cuts changed a figure, the line of each
    that did with no diagnostic)."""
    whole = _figures(load(folder / opened))
    data = (folder / cut).read_bytes()
    changed, silent = 0, []
    # A combined dump cut between its peak list and its stack-trace breakdown reads
    # as a whole one printed before the breakdown (V3, 2025-05 to 2025-07): every
    # figure but the breakdown is whole, and no rule can tell. (A split module's
    # live-range file is of an XLA that always prints one: that cut is reported.)
    before_tree = data.find(b"  Stack trace breakdown")
    for at in _line_ends(data)[::every]:
        if at == before_tree and not cut.endswith("-live-range.txt"):
            continue
        (folder / cut).write_bytes(data[:at])
        m = load(folder / opened)
        if _figures(m) != whole:
            changed += 1
            if not m.diagnostics:
                silent.append(data[:at].count(b"\n"))
    (folder / cut).write_bytes(data)
    return changed, silent


@pytest.mark.parametrize("seed", [p.name for p in SEEDS])
def test_a_combined_dump_cut_at_any_line_end_says_so(tmp_path, seed):
    """A file cut exactly at a line end gave no warning in many places (before the live
    ranges, inside them, inside XLA's peak list, inside the stack-trace tree), even
    under --strict: each cut that changes a figure now has a diagnostic."""
    shutil.copy(SAMPLES / "seeds" / seed, tmp_path / seed)
    changed, silent = _silent_cuts(tmp_path, seed, seed)
    assert changed > 20 and silent == []


SPLIT = SAMPLES / "jax" / "jax-0.10.2" / "mlp_train"
MODULE = "module_0014.jit_train_step.cpu_after_optimizations"


@pytest.mark.parametrize(
    ("suffix", "every"),
    [
        ("-live-range.txt", 1),  # every line end: the schedule, live ranges, peak, tree
        ("-buffer-assignment-values.txt", 7),
        ("-buffer-assignment.txt", 3),
    ],
)
def test_a_split_module_cut_at_a_line_end_says_so(tmp_path, suffix, every):
    folder = tmp_path / "split"
    shutil.copytree(SPLIT, folder)
    changed, silent = _silent_cuts(
        folder, MODULE + "-buffer-assignment.txt", MODULE + suffix, every
    )
    assert changed > 20 and silent == []


def test_a_peak_list_cut_short_fails_strict_and_says_the_list_is_short(tmp_path, capsys):
    """A jax dump cut inside its peak list showed XLA's peak as the part listed."""
    folder = tmp_path / "split"
    shutil.copytree(SPLIT, folder)
    live = folder / (MODULE + "-live-range.txt")
    lines = live.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("  Live ranges at"))
    live.write_text("".join(lines[: at + 6]))  # the header and 5 of its 16 entries
    m = load(folder / (MODULE + "-buffer-assignment.txt"))
    (d,) = m.diagnostics
    assert (d.path, d.line, d.severity) == (str(live), at + 6, "warning")
    assert d.message.startswith(
        "truncated: XLA's peak list at step 44 names 5 values, but the live ranges have "
        "16 live there (XLA lists every one)"
    )
    assert main(["--strict", "--summary", str(folder / (MODULE + "-buffer-assignment.txt"))]) == 1
