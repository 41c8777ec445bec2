"""``hlotop --summary`` on a narrow terminal: the table of the largest values at the peak
fits 80 columns (80x24 over SSH) without breaking a name, a size or a shape; op_name
is shortened or left out first."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from conftest import SAMPLES, swept
from hlotop.loading.loader import load
from hlotop.model.memory_space import space_names
from hlotop.report.summary import (
    MIN_OP_NAME,
    TOP_VALUES,
    PeakTable,
    _PeakRow,
    print_summary,
)
from hlotop.safe_text import printable
from hlotop.units import human_bytes

MODULES = sorted(
    p
    for p in swept("*.txt")
    if p.parent.name == "seeds" or p.name.endswith("-buffer-assignment.txt")
)


def _render(module, width: int) -> list[str]:
    out = io.StringIO()
    print_summary(module, Console(file=out, width=width, color_system=None, highlight=False))
    return out.getvalue().splitlines()


def _table(lines: list[str]) -> list[str]:
    start = next(i for i, line in enumerate(lines) if line.startswith("Largest values"))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start + 1 : end]


@pytest.mark.parametrize("entry", MODULES, ids=[str(p.relative_to(SAMPLES)) for p in MODULES])
def test_the_peak_table_fits_80_columns_with_names_sizes_and_shapes_whole(entry: Path):
    module = load(entry)
    lines = _render(module, 80)
    assert all(len(line) <= 80 for line in lines), [ln for ln in lines if len(ln) > 80]
    table = _table(lines)
    header, rows = table[0], table[1:]
    assert header.split()[:3] == ["#", "value", "bytes"]
    for rank, v in enumerate(module.analysis.peak_values[:TOP_VALUES], 1):
        line = next(ln for ln in rows if ln.split()[0] == str(rank))
        label, shape = printable(v.value.label), printable(v.shape or "?")
        assert f" {human_bytes(v.logical_bytes)}" in line, line
        if f" {label} " not in line:  # a long name, wrapped after a dot, dash or underscore
            first = line[header.index("value") :].split()[0]
            assert label.startswith(first) and first[-1] in "._-", (label, line)
        if len(shape) <= 40:
            assert shape in line, (shape, line)
        else:  # a big tuple: wrapped after its commas, each element whole
            at = rows.index(line)
            text = " ".join(rows[at : at + len(shape)])
            for element in re.split(r"(?<=,) ?", shape):
                for piece in re.split(r"(?=\{)|(?<=:)", element):  # dims, layout, tiles
                    assert piece in text, piece
        op_name = printable(v.op_name or "")
        if op_name and "op_name" in header:
            shown = line[header.index("op_name") :].strip()  # a left-justified column
            assert shown == op_name or (shown.startswith("…") and op_name.endswith(shown[1:])), (
                shown,
                op_name,
            )


def test_the_peak_table_is_unchanged_where_it_fits():
    module = load(SAMPLES / "seeds" / "003_a3085531593bac68.txt")
    header = _table(_render(module, 160))[0]
    assert header.split() == [
        "#",
        "value",
        "bytes",
        "allocated",
        "shape",
        "alloc",
        "space",
        "op_name",
    ]
    assert "  " in header  # two spaces between columns


def _rows(op_name: str, colors=(0, 1)) -> list[_PeakRow]:
    return [
        _PeakRow(
            str(rank),
            f"fusion.{rank}",
            "56.00MiB",
            "56.00MiB" if rank > 1 else "64.00MiB",
            "f32[4096,3584]{1,0:T(8,128)S(1)}",
            str(rank),
            colors[rank % len(colors)],
            f"jit(train_step)/jit(main)/dot_general.{rank}" if op_name else "",
        )
        for rank in range(1, 4)
    ]


def test_what_goes_first_when_the_table_is_too_wide():
    """op_name is cut (its end kept) and then left out, then the allocation number;
    then the columns are one space apart, and the memory space goes last."""
    table = PeakTable(1, _rows(op_name=True), space_names(None), 0)
    everything = ["#", "value", "bytes", "allocated", "shape", "alloc", "space", "op_name"]
    assert table.layout(200) == (everything, {}, 2)
    shown, narrow, gap = table.layout(100)
    assert shown == everything and narrow == {"op_name": 100 - 84} and gap == 2
    assert narrow["op_name"] >= MIN_OP_NAME
    assert table.layout(90)[0] == everything[:-1]
    assert table.layout(80) == (["#", "value", "bytes", "allocated", "shape", "space"], {}, 2)
    assert table.layout(72) == (["#", "value", "bytes", "allocated", "shape", "space"], {}, 1)
    assert table.layout(68) == (["#", "value", "bytes", "allocated", "shape"], {}, 1)


def test_columns_that_say_nothing_go_before_op_name_is_cut():
    """One memory space for every value, no padding (allocated = bytes) or no
    op_name at all: those columns are left out first."""
    rows = [r._replace(allocated=r.bytes) for r in _rows(op_name=True, colors=(0,))]
    shown, narrow, _ = PeakTable(1, rows, space_names(None), 0).layout(110)
    assert shown == ["#", "value", "bytes", "shape", "alloc", "op_name"] and narrow == {}
    shown, _, _ = PeakTable(1, _rows(op_name=False), space_names(None), 0).layout(84)
    assert shown == ["#", "value", "bytes", "allocated", "shape", "alloc", "space"]


def test_names_and_shapes_are_wrapped_only_between_tokens():
    rows = [r._replace(value="a_very_long.fusion_name_that_never_ends.42") for r in _rows(False)]
    out = io.StringIO()
    Console(file=out, width=60, color_system=None).print(PeakTable(1, rows, space_names(None), 0))
    lines = out.getvalue().splitlines()
    assert all(len(line) <= 60 for line in lines)
    text = "\n".join(lines)
    for token in ("a_", "very_", "long.", "fusion_", "f32[4096,3584]", "{1,0:", "T(8,128)"):
        assert token in text, (token, text)


def test_the_files_read_are_one_name_with_its_endings_in_braces_at_80_columns():
    """A split module's four files (and the HLO text beside them) are said once as the
    shell would expand them, wrapped between endings, not across 8 folded lines."""
    import itertools

    module = load(SAMPLES / "tpu" / "v5e_1x1-gpt_loop")
    lines = _render(module, 80)
    head = lines[1 : lines.index("")]
    assert all(len(line) <= 80 and line.startswith("  ") for line in head)
    said = "".join(line.strip() for line in head)
    stem, endings = said[:-1].split("{")
    expanded = [stem + e for e in endings.split(",")]
    assert expanded == [printable(f.path) for f in module.files]
    assert len(expanded) == 5 and expanded[-1].endswith(".after_optimizations.txt")
    # broken only after / . _ - or between two endings
    for a, b in itertools.pairwise(head):
        assert a.rstrip()[-1] in "/._-," or b.strip()[0] in "-.", (a, b)
    combined = load(SAMPLES / "seeds" / "003_a3085531593bac68.txt")
    assert _render(combined, 80)[1] == "  combined: " + printable(combined.files[0].path)
