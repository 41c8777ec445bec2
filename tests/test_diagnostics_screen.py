"""The diagnostics screen (issue 4): every diagnostic is a row, and Enter on one selects
the allocation or value printed at (or nearest above) its line, on real damaged dumps."""

from __future__ import annotations

from pathlib import Path

from hlotop import load
from hlotop.app import HlotopApp
from hlotop.nearest import ALLOCATION, VALUE, Place, Places
from hlotop.screens.diagnostics import DiagnosticsScreen
from hlotop.screens.main import MainScreen
from hlotop.widgets.diagnostic_list import DiagnosticList

from conftest import sample
from test_app_pilot import pilot_test, screen_text, started
from test_truncated import LINES, SEED3

SPLIT = ("jax/jax-0.10.2/tuple_outputs/module_0006.jit_tuple_update.cpu_after_optimizations"
         "-{}.txt")


def damaged(tmp_path: Path, inserts: dict[int, str], name: str = "damaged.txt") -> Path:
    """Seed 003 with a line inserted before each given 1-based line of the original
    (the inserted line then has that number, if it is the only insert above it)."""
    lines = list(LINES)
    for before in sorted(inserts, reverse=True):
        lines.insert(before - 1, inserts[before] + "\n")
    path = tmp_path / name
    path.write_text("".join(lines))
    return path


def line_of(prefix: str) -> int:
    """1-based line of the seed's first line starting with ``prefix``."""
    return next(i for i, ln in enumerate(LINES, 1) if ln.startswith(prefix))


# -- the pure mapping: (path, line) -> allocation or value --------------------------------

def test_each_line_of_a_combined_dump_leads_to_what_is_printed_at_or_above_it():
    path = str(SEED3)
    places = Places(load(path, lazy=True))
    alloc12 = line_of("allocation 12:")
    assert places.nearest(path, alloc12) == Place(ALLOCATION, 12, path, alloc12)
    assert places.nearest(path, alloc12 + 1) == Place(VALUE, 31, path, alloc12 + 1)
    # A blank line and 'Total bytes used' after the last value line: that value.
    assert places.nearest(path, line_of("Total bytes used")) == Place(VALUE, 41, path, 35)
    # Inside a record: its head; the records' heads are counted, never parsed.
    head = line_of("<5 y.26 @0>")
    assert places.nearest(path, head + 3) == Place(VALUE, 5, path, head)
    # A BufferLiveRange line: its value; the peak list below: the last of them.
    live = line_of("    fusion.10{}:9-11")
    assert places.nearest(path, live) == Place(VALUE, 34, path, live)
    last = max(i for i, ln in enumerate(LINES, 1) if ln.startswith("    ") and "{" in ln
               and ":" in ln and "-" in ln.rsplit(":", 1)[1])
    assert places.nearest(path, len(LINES)).line == last
    # Above the first allocation: the first one below. Whole-file or other files: none.
    assert places.nearest(path, 1) == Place(ALLOCATION, 0, path, 2)
    assert places.nearest(path, 0) is None
    assert places.nearest("elsewhere.txt", 5) is None


def test_a_split_module_maps_each_file_to_its_own_section():
    dump = load(sample(SPLIT.format("buffer-assignment")), lazy=True)
    places = Places(dump)
    by_kind = {f.kind: f.path for f in dump.files}
    first = dump.allocations[0]
    assert places.nearest(by_kind["buffer-assignment"], first.line) == Place(
        ALLOCATION, first.index, by_kind["buffer-assignment"], first.line)
    record = dump.used_values[3]
    assert places.nearest(by_kind["values"], record.line + 1) == Place(
        VALUE, record.value.id, by_kind["values"], record.line)
    live = dump.live_range.buffers[2]
    found = places.nearest(by_kind["live-range"], live.line)
    assert found.kind == VALUE and dump.analysis.by_id[found.id].value.key == live.key
    # The model keeps no lines for the memory-usage report's rows.
    assert places.nearest(by_kind["memory-usage-report"], 5) is None


# -- the screen ---------------------------------------------------------------------------

async def open_diagnostics(app: HlotopApp, pilot) -> tuple[MainScreen, DiagnosticsScreen]:
    main = await started(app, pilot)
    await pilot.press("d")
    await pilot.pause()
    assert isinstance(app.screen, DiagnosticsScreen)
    return main, app.screen


@pilot_test
async def test_enter_on_a_bad_record_line_selects_that_records_value(tmp_path):
    head = line_of("<29 p3.6 @0>")
    path = damaged(tmp_path, {head + 2: "this is not a record line"})
    app = HlotopApp(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        main, screen = await open_diagnostics(app, pilot)
        assert [(d.line, d.severity) for d in screen.diagnostics] == [(head + 2, "error")]
        assert app.focused is screen.query_one(DiagnosticList)
        assert "⏎ goes to value 29 p3.6, printed at line" in screen_text(app)
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is main
        assert main.selected_value == 29
        alloc, slot = main.tree.current()
        assert slot is not None and slot.value.id == 29  # the tree unfolded to it
        assert main.detail.value_id == 29 and main.timeline.row_selected


@pilot_test
async def test_enter_under_an_allocation_line_puts_the_tree_on_that_allocation(tmp_path):
    alloc10 = line_of("allocation 10:")  # 4 values: the allocation, not one of them
    path = damaged(tmp_path, {alloc10 + 1: "garbage under allocation 10"})
    app = HlotopApp(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        main, _ = await open_diagnostics(app, pilot)
        assert main.tree.current()[0].index == 12  # the largest, where it opens
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is main
        alloc, slot = main.tree.current()
        assert alloc.index == 10 and slot is None
        assert main.detail.allocation == 10 and main.selected_value is None


@pilot_test
async def test_keys_move_between_diagnostics_and_each_leads_to_its_own_place(tmp_path):
    """Three damaged places (above the allocations, among the value lines, among the
    live ranges): down/end/home/pgdn move the cursor, Enter goes to each one's place."""
    live = line_of("    fusion.10{}:9-11")
    slot = line_of(" value: <36 fusion.12 @1>")
    path = damaged(tmp_path, {1: "garbage above everything", slot + 1: "garbage slot",
                              live + 1: "garbage live range"})
    expected = [
        ("value", 6),  # first below: allocation 0, which holds only add.27
        ("value", 36),  # the value line above it
        ("value", 34),  # the BufferLiveRange line above it
    ]
    for row, (kind, ident) in enumerate(expected):
        app = HlotopApp(str(path))
        async with app.run_test(size=(80, 24)) as pilot:  # small terminal: tabs
            main, screen = await open_diagnostics(app, pilot)
            listed = screen.query_one(DiagnosticList)
            assert len(screen.diagnostics) == 3
            await pilot.press("end")
            assert listed.cursor == 2
            await pilot.press("home")
            assert listed.cursor == 0
            await pilot.press("pagedown")
            assert listed.cursor == 2
            await pilot.press("up", "up", "j")
            assert listed.cursor == 1
            await pilot.press("home", *["down"] * row)
            await pilot.pause()
            assert listed.cursor == row
            assert f"goes to {kind} {ident} " in screen_text(app)
            await pilot.press("enter")
            await pilot.pause()
            assert app.screen is main and main.selected_value == ident
            assert main.active == "detail"  # as after a search: the detail shows it


@pilot_test
async def test_a_whole_file_diagnostic_has_nowhere_to_go(tmp_path):
    """A split module cut inside its allocations, its siblings missing: warnings at
    line 0 (the whole file). Enter says so and the list stays open; esc closes it."""
    at = line_of("allocation 6:")
    path = tmp_path / "module_0001.f.cpu_after_optimizations-buffer-assignment.txt"
    path.write_text("".join(LINES[:at - 1]))
    app = HlotopApp(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        main, screen = await open_diagnostics(app, pilot)
        lines = [d.line for d in screen.diagnostics]
        assert 0 in lines
        while screen.diagnostics[screen.query_one(DiagnosticList).cursor].line != 0:
            await pilot.press("down")
        await pilot.pause()
        assert "no line to go to" in screen_text(app)
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is main


@pilot_test
async def test_no_diagnostics_says_so_and_closes():
    app = HlotopApp(sample("seeds/003_a3085531593bac68.txt"))
    async with app.run_test(size=(120, 40)) as pilot:
        main, screen = await open_diagnostics(app, pilot)
        assert "No diagnostics: every line of the dump was read." in screen_text(app)
        await pilot.press("enter", "q")
        await pilot.pause()
        assert app.screen is main
