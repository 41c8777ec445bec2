"""The reports' fitted tables (the OOM text's buffers, the grouped live set, the diff's
groups) at 80 columns and narrower: every line fits, and every cell read back from its
column is its whole text, broken only where the text allows (after ``/`` ``.`` ``_``
``-`` or a space, at a shape's commas and braces), never inside a number or a word."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.text import Text

from conftest import SAMPLES
from hlotop.analysis.grouping import group_live_set
from hlotop.loading.loader import load
from hlotop.parse.oom import parse_oom
from hlotop.report.fitted_table import MAX_FLOOR, Column, FittedTable
from hlotop.report.grouped_text import grouped_table, key_column
from hlotop.report.oom_report import render_oom
from hlotop.report.text_fit import OP_NAME_BREAKS, SHAPE_ALL_BREAKS, longest_piece

OOMS = sorted((SAMPLES / "oom").glob("*.txt"))


def _lines(renderable, width: int) -> list[str]:
    out = io.StringIO()
    Console(file=out, width=width, color_system=None, highlight=False).print(renderable)
    return out.getvalue().splitlines()


def _read_back(table: FittedTable, width: int) -> list[list[list[str]]]:
    """The table rendered at ``width``, cut back into its rows and cells: a row starts
    at a line whose first right-justified column is filled; a cell is its lines."""
    shown, widths, gap = table.layout(width)
    lines = _lines(table, width)
    assert all(len(line.rstrip()) <= width for line in lines), lines
    starts = [sum(widths[:k]) + gap * k for k in range(len(shown))]
    anchor = next(k for k, i in enumerate(shown) if table.columns[i].right)
    rows: list[list[list[str]]] = []
    for line in lines[1 : 1 + _row_lines(lines)]:  # under the header, above any note
        cells = [line[s : s + w].strip() for s, w in zip(starts, widths, strict=True)]
        if cells[anchor]:
            rows.append([[c] for c in cells])
        else:
            for parts, cell in zip(rows[-1], cells, strict=True):
                parts.append(cell)
    return [[[p for p in parts if p] for parts in row] for row in rows]


def _row_lines(lines: list[str]) -> int:
    body = lines[1:]
    return next((k for k, line in enumerate(body) if line.startswith("left out at")), len(body))


BREAK_AFTER = "/._-,:"  # a line of a cell may end after these, or before { ( or a space


def _check_cell(lines: list[str], text: str, folds: bool = False) -> None:
    """``lines`` are the whole of ``text``, broken only where it allows (unless the
    table may ``fold`` pieces too long for its narrowest layout)."""
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    if folds:
        return
    at = 0
    for line in lines[:-1]:
        at = text.index(line, at) + len(line)
        assert text[at - 1] in BREAK_AFTER or text[at] in "{( ", (text, lines)


def _check(table: FittedTable, width: int, folds: bool = False) -> None:
    shown = table.layout(width).shown
    read = _read_back(table, width)
    assert len(read) == len(table.rows)
    for got, row in zip(read, table.rows, strict=True):
        for lines, i in zip(got, shown, strict=True):
            _check_cell(lines, row[i].plain if isinstance(row[i], Text) else row[i], folds)


def _oom_tables(path):
    report = parse_oom(path.read_text(), path.name)
    assert report is not None
    tables = [
        part.renderables[1]
        for part in render_oom(report).renderables
        if hasattr(part, "renderables") and isinstance(part.renderables[1], FittedTable)
    ]
    assert len(tables) == (3 if report.entries else 0)  # buffers, by scope, by shape
    return tables


@pytest.mark.parametrize("width", [60, 80, 120, 200])
@pytest.mark.parametrize("path", OOMS, ids=lambda p: p.stem)
def test_an_oom_texts_tables_fit_and_keep_every_cell_whole(path, width):
    """From 80 columns on, nothing is folded but a piece longer than a wrapped column
    is ever kept (MAX_FLOOR: ``jvp(FlaxFalconForCausalLMModule)/``, 33); at 60 a TPU
    text's numbers leave too little room for its longest scope names
    (FlaxGemmaForCausalLMModule/), which are folded, but still whole."""
    for table in _oom_tables(path):
        longest = max(
            (
                longest_piece(c, *col.breaks)
                for row in table.rows
                for c, col in zip(row, table.columns, strict=True)
                if col.breaks
            ),
            default=0,
        )
        _check(table, width, folds=width < 80 or longest > MAX_FLOOR)


def test_the_gpu_buffers_op_names_wrap_at_scopes_at_80_columns():
    buffers = _oom_tables(SAMPLES / "oom" / "gpu-jax-2024-peak-buffers.txt")[0]
    lines = _lines(buffers, 80)
    at = lines[0].index("op_name")  # after the size, the shape's bytes and the shape
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("6 "))
    assert [line[at:].split("  ")[0].strip() for line in lines[start : start + 9]] == [
        "jit(update_fn)/",
        "jit(main)/jvp(Model)/",
        "llm.compute_logits/",
        "Model/embedder.decode/",
        "dot_general[dimension_",
        "numbers=(((2,), (0,)),",
        "((), ())) precision=None",
        "preferred_element_",
        "type=float32]",
    ]
    assert all(len(line) <= 80 for line in lines)


@pytest.mark.parametrize("width", [60, 80])
@pytest.mark.parametrize("name", ["gpt_loop", "transformer_scan", "mlp_adam"])
def test_the_grouped_live_set_fits_with_scopes_and_shapes_whole(name, width):
    module = load(SAMPLES / "cpu" / name)
    grouping = group_live_set(module, ("phase", "scope", "shape"))
    table = grouped_table(grouping).renderables[1]
    assert isinstance(table, FittedTable)
    _check(table, width)
    assert table.layout(width).shown == list(range(6))  # nothing left out


def test_the_column_that_wraps_into_fewest_lines_is_narrowed_first():
    # One long scope against many medium shapes: narrowing the scope column costs one
    # line, the shapes' column one a row.
    scopes = ["jit(train)/GPT/Block_0/attn/c_attn/dot_general"] + ["GPT/ln_f"] * 5
    shapes = ["f32[1024,128,4,64]"] * 6
    columns = [key_column("scope"), key_column("shape"), Column("bytes", right=True)]
    table = FittedTable(columns, [[s, t, "1.00MiB"] for s, t in zip(scopes, shapes, strict=True)])
    shown, widths, gap = table.layout(60)
    assert (shown, gap) == ([0, 1, 2], 2)
    assert widths[1] == len(shapes[0]) and widths[0] < len(scopes[0])
    _check(table, 60)


def test_the_gap_closes_before_an_optional_column_goes_and_the_note_says_which():
    columns = [
        Column("size", right=True),
        Column("shape", SHAPE_ALL_BREAKS),
        Column("extra", optional=1),
    ]
    rows = [["512.00MiB", "f32[4,128,128,9,18]{4,3,0,2,1:T(8,128)}", "x" * 20]]
    table = FittedTable(columns, rows)
    assert table.layout(200) == ([0, 1, 2], [9, 39, 20], 2)
    assert table.layout(42) == ([0, 1, 2], [9, 11, 20], 1)
    assert table.layout(30) == ([0, 1], [9, 20], 1)
    lines = _lines(table, 30)
    assert [line.rstrip() for line in lines[1:3]] == [
        "512.00MiB f32[4,128,128,9,18]",
        "          {4,3,0,2,1:T(8,128)}",
    ]
    assert (
        " ".join(" ".join(lines[3:]).split()) == "left out at 30 columns: extra (--json has them)"
    )


def test_dump_text_is_shown_as_written_never_as_rich_markup():
    op_name = "jit(f)/[bold]dot[/bold]/add[dimension_numbers=(0,)]"
    table = FittedTable([Column("op_name", OP_NAME_BREAKS)], [[op_name]])
    assert _lines(table, 120)[1] == op_name
    closing = FittedTable([Column("op_name", OP_NAME_BREAKS)], [["[/] alone"]])
    assert _lines(closing, 40)[1] == "[/] alone"  # a stray closing tag raised before


def test_a_wrapped_name_breaks_after_a_run_of_separators_and_leaves_no_lone_tail():
    from hlotop.report.text_fit import NAME_BREAKS, wrap

    name = "opt_state_0__mu__params____wte____embedding__.1"
    # greedy filling left "1" alone under the name, broken inside "____"
    assert wrap(name, 46, NAME_BREAKS) == "opt_state_0__mu__params____\nwte____embedding__.1"
    assert wrap(name, 60, NAME_BREAKS) == name
    shape = "f32[4,128,128,9,18]{4,3,0,2,1:T(8,128)}"
    assert wrap(shape, 20, *SHAPE_ALL_BREAKS) == "f32[4,128,128,9,18]\n{4,3,0,2,1:T(8,128)}"
    for width in range(8, 48):
        lines = wrap(name, width, NAME_BREAKS).split("\n")
        assert "".join(lines) == name
        # longer than the line only if it is one piece, left to the table to fold
        assert all(
            len(line) <= width or len(list(filter(None, NAME_BREAKS.split(line)))) == 1
            for line in lines
        )


def test_a_wrapped_columns_header_gives_way_between_its_words():
    """The OOM table's "value in the dump" column, all "-" when nothing links, kept
    17 cells for its header and pushed the instruction out."""
    columns = [Column("op_name", OP_NAME_BREAKS), Column("value in the dump", OP_NAME_BREAKS)]
    table = FittedTable(columns, [["jit(main)/model/layers/26/while/body/mlp/up_proj", "-"]])
    assert table.floor[1] == table.least[1] == 10  # MIN_WRAP, not 17
    shown, widths, _ = table.layout(40)
    assert widths[1] < len("value in the dump")
    lines = _lines(table, 40)
    assert [line[widths[0] + 2 :].strip() for line in lines[:2]] == ["value in", "the dump"]
