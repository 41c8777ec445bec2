"""The diagnostics screen (issue 4): every diagnostic is a row, and Enter on one selects
the allocation or value printed at (or nearest above) its line, on real damaged dumps."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import sample
from fuzzing import apply, mutations
from hlotop import load
from hlotop.analysis.nearest import ALLOCATION, VALUE, Place, Places
from hlotop.loading.loader import LoadError
from hlotop.ui.apps.app import HlotopApp
from hlotop.ui.screens.diagnostics import DiagnosticsScreen
from hlotop.ui.screens.main import MainScreen
from hlotop.ui.widgets.diagnostic_list import DiagnosticList
from pilot import pilot_test, screen_text, started

SEED3 = Path(sample("seeds/003_a3085531593bac68.txt"))
LINES = SEED3.read_text().splitlines(keepends=True)

SPLIT = "jax/jax-0.10.2/tuple_outputs/module_0006.jit_tuple_update.cpu_after_optimizations-{}.txt"
# jax 0.9.2: a combined dump and an era B memory-usage report (tables name no allocation).
BIG = Path(sample("jax/jax-0.9.2/transformer_big"))
# jax 0.7.2: a combined dump and an era A report (a list of allocations, then each table).
ERA_A = Path(sample("jax/jax-0.7.2/mlp_train"))


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
    # A BufferLiveRange line: its value; the peak header: the last of them.
    live = line_of("    fusion.10{}:9-11")
    assert places.nearest(path, live) == Place(VALUE, 34, path, live)
    header = line_of("  Live ranges at 11 (peak):")
    assert places.nearest(path, header) == Place(VALUE, 46, path, header - 1)  # tuple.31{}
    # A V1 peak line names no index: the instruction's value live at the peak
    # (copy-start{} ends at 10, copy-start{0} at 11, the peak).
    copy_start = line_of("    copy-start: 24 bytes")
    assert places.nearest(path, copy_start) == Place(VALUE, 39, path, copy_start)
    assert places.nearest(path, len(LINES)) == Place(VALUE, 42, path, len(LINES))  # p0.1
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
        ALLOCATION, first.index, by_kind["buffer-assignment"], first.line
    )
    record = dump.used_values[3]
    assert places.nearest(by_kind["values"], record.line + 1) == Place(
        VALUE, record.value.id, by_kind["values"], record.line
    )
    live = dump.live_range.buffers[2]
    found = places.nearest(by_kind["live-range"], live.line)
    assert found.kind == VALUE and dump.analysis.by_id[found.id].value.key == live.key
    # The peak list (V4) and the memory-usage report (era B) have their lines too.
    peak = dump.live_range.peak
    found = places.nearest(by_kind["live-range"], peak.entries[1].line)
    assert dump.analysis.by_id[found.id].value.label == "x.1"
    report = places.nearest(by_kind["memory-usage-report"], 5)
    assert report.line == 5 and report.kind == VALUE


def copy_damaged(src: Path, tmp_path: Path, suffix: str, inserts: dict[int, str]) -> Path:
    """Copy a sample module's files into ``tmp_path``, inserting a line into the one
    whose name ends with ``suffix`` before each given 1-based line of the original
    (with several inserts, each later one moves down by the ones above it). Returns
    the path of the damaged file."""
    damaged_path = None
    for f in sorted(src.iterdir()):
        text = f.read_text()
        if f.name.endswith(suffix):
            lines = text.splitlines(keepends=True)
            for before in sorted(inserts, reverse=True):
                lines.insert(before - 1, inserts[before] + "\n")
            text = "".join(lines)
            damaged_path = tmp_path / f.name
        (tmp_path / f.name).write_text(text)
    assert damaged_path is not None
    return damaged_path


def test_era_b_report_tables_lead_to_their_allocations_in_xla_order():
    """transformer_big, jax 0.9.2: the report's first table is allocation 1859's (the
    largest, 4974080 bytes; value 59477 copy.653 alone at offset 0, f32[64,192] 48.0KiB);
    the next two, of equal size 49152, are allocations 0 and 1, in index order."""
    dump = load(str(next(BIG.glob("*-buffer-assignment.txt"))), lazy=True)
    places = Places(dump)
    report = str(next(BIG.glob("*-memory-usage-report.txt")))
    lines = Path(report).read_text().splitlines()
    assert lines[2].strip().startswith("cumulative_size;")  # line 3: the first table
    assert places.nearest(report, 3) == Place(ALLOCATION, 1859, report, 3)
    assert places.nearest(report, 4) == Place(ALLOCATION, 1859, report, 3)  # its dashes
    assert lines[4].split(";")[2:4] == ["            0", "                1"]
    assert places.nearest(report, 5) == Place(VALUE, 59477, report, 5)
    assert places.nearest(report, 60) == Place(ALLOCATION, 1859, report, 60)  # 3 values
    assert lines[230].strip().startswith("The rest 252 values")
    assert places.nearest(report, 231) == Place(ALLOCATION, 1859, report, 230)
    assert places.nearest(report, 233) == Place(ALLOCATION, 0, report, 233)
    assert places.nearest(report, 235) == Place(ALLOCATION, 0, report, 235)  # 14 values
    assert places.nearest(report, 237) == Place(ALLOCATION, 1, report, 237)
    # Above the first table (the memory space's header): the first one below.
    assert places.nearest(report, 1) == Place(ALLOCATION, 1859, report, 3)


def test_a_lost_table_header_in_an_era_b_report_costs_no_other_pairing(tmp_path):
    """Allocation 0's column line (line 233) garbled: its row is read as one more row
    of allocation 1859's table, but starts again from a smaller cumulative size, so
    it still leads to allocation 0, and the next table to allocation 1."""
    copy_damaged(BIG, tmp_path, "-buffer-assignment.txt", {})
    original = next(BIG.glob("*-memory-usage-report.txt"))
    lines = original.read_text().splitlines(keepends=True)
    assert lines[232].lstrip().startswith("cumulative_size;")
    lines[232] = "  cumulative_size;  (garbled)\n"
    report = tmp_path / original.name
    report.write_text("".join(lines))
    dump = load(str(next(tmp_path.glob("*-buffer-assignment.txt"))), lazy=True)
    assert [(d.path, d.line) for d in dump.diagnostics] == [(str(report), 233)]
    places = Places(dump)
    path = str(report)
    assert places.nearest(path, 233) == Place(ALLOCATION, 1859, path, 230)  # the row above
    assert places.nearest(path, 235) == Place(ALLOCATION, 0, path, 235)
    assert places.nearest(path, 237) == Place(ALLOCATION, 1, path, 237)


def test_era_a_report_lines_lead_to_the_allocation_they_name():
    dump = load(str(next(ERA_A.glob("*-buffer-assignment.txt"))), lazy=True)
    places = Places(dump)
    report = str(next(ERA_A.glob("*-memory-usage-report.txt")))
    lines = Path(report).read_text().splitlines()
    listed = next(
        i
        for i, ln in enumerate(lines, 1)
        if ln.endswith(
            "allocation 0: size 256.0KiB, "
            "parameter 2, shape |f32[256,256]| at ShapeIndex {}, maybe-live-out:"
        )
    )
    assert places.nearest(report, listed) == Place(ALLOCATION, 0, report, listed)
    header = lines.index("allocation 37: size 432.0KiB, preallocated-temp:") + 1
    assert places.nearest(report, header) == Place(ALLOCATION, 37, report, header)
    # The row at offset 262144 holds one value: <192 dot_general.11 @0> (size=32768).
    row = next(i for i, ln in enumerate(lines, 1) if "       262144;" in ln)
    assert places.nearest(report, row) == Place(VALUE, 192, report, row)
    shared = next(i for i, ln in enumerate(lines, 1) if "       393216;" in ln)  # 3 values
    assert places.nearest(report, shared) == Place(ALLOCATION, 37, report, shared)


def test_the_peak_list_and_the_stack_tree_lead_to_the_values_xla_listed():
    dump = load(sample(SPLIT.format("live-range")), lazy=True)
    places = Places(dump)
    path = next(f.path for f in dump.files if f.kind == "live-range")
    lines = Path(path).read_text().splitlines()
    x1 = lines.index("    x.1{}: 65536 bytes (cumulative: 131072 bytes)") + 1
    assert places.nearest(path, x1) == Place(VALUE, 90, path, x1)  # <90 x.1 @0>
    last = lines.index("    wrapped_add{}: 4 bytes (cumulative: 154640 bytes)") + 1
    assert places.nearest(path, last) == Place(VALUE, 87, path, last)  # <87 wrapped_add @0>
    # The stack-trace tree has no places of its own: the peak list's last line.
    assert lines[last].startswith("  Stack trace breakdown")
    assert places.nearest(path, len(lines)) == Place(VALUE, 87, path, last)


REPORT_MODULES = [
    ERA_A,
    BIG.parent / "tuple_outputs",
    Path(sample(SPLIT.format("buffer-assignment"))).parent,
]


@pytest.mark.parametrize("module", REPORT_MODULES, ids=lambda p: f"{p.parent.name}/{p.name}")
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_damage_to_a_report_or_peak_list_leads_somewhere_or_nowhere(module, data):
    """Mutations of the memory-usage report or the file with the peak list (fuzzing.py's
    truncate, delete, duplicate, swap, insert, flip): every diagnostic leads to a place
    in its own file, at or above its line, or below it only when nothing is above it
    (the file's first place), or to none; building the places never raises."""
    files = sorted(module.iterdir())
    victims = [f for f in files if f.name.endswith(("-memory-usage-report.txt", "-live-range.txt"))]
    if not any(f.name.endswith("-live-range.txt") for f in files):
        victims += [f for f in files if f.name.endswith("-buffer-assignment.txt")]
    victim = data.draw(st.sampled_from(victims))
    raw = victim.read_bytes()
    muts = data.draw(st.lists(mutations(raw.count(b"\n"), len(raw)), min_size=1, max_size=4))
    with tempfile.TemporaryDirectory() as tmp:
        for f in files:
            (Path(tmp) / f.name).write_bytes(apply(raw, muts)[0] if f == victim else f.read_bytes())
        try:
            dump = load(str(next(Path(tmp).glob("*-buffer-assignment.txt"))), lazy=True)
        except LoadError:
            return
        places = Places(dump)
        for d in dump.diagnostics:
            found = places.nearest(d.path, d.line)
            if found is not None:
                assert found.path == d.path and d.line > 0
                assert found.line <= d.line or found == places.nearest(d.path, 1)


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
        alloc, slot = main.allocation_tree.current()
        assert slot is not None and slot.value.id == 29  # the tree unfolded to it
        assert main.detail.value_id == 29 and main.timeline.row_selected


@pilot_test
async def test_enter_under_an_allocation_line_puts_the_tree_on_that_allocation(tmp_path):
    alloc10 = line_of("allocation 10:")  # 4 values: the allocation, not one of them
    path = damaged(tmp_path, {alloc10 + 1: "garbage under allocation 10"})
    app = HlotopApp(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        main, _ = await open_diagnostics(app, pilot)
        assert main.allocation_tree.current()[0].index == 12  # the largest, where it opens
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is main
        alloc, slot = main.allocation_tree.current()
        assert alloc.index == 10 and slot is None
        assert main.detail.allocation == 10 and main.selected_value is None


@pilot_test
async def test_keys_move_between_diagnostics_and_each_leads_to_its_own_place(tmp_path):
    """Three damaged places (above the allocations, among the value lines, among the
    live ranges): down/end/home/pgdn move the cursor, Enter goes to each one's place."""
    live = line_of("    fusion.10{}:9-11")
    slot = line_of(" value: <36 fusion.12 @1>")
    path = damaged(
        tmp_path,
        {1: "garbage above everything", slot + 1: "garbage slot", live + 1: "garbage live range"},
    )
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
    path.write_text("".join(LINES[: at - 1]))
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


@pilot_test
async def test_enter_on_report_diagnostics_selects_their_allocation_or_value(tmp_path):
    """transformer_big (jax 0.9.2) with three garbage lines in its era B report: under
    the first table's row of one value (copy.653, in allocation 1859), under a row of 3
    values of allocation 1859, and under allocation 0's only row (14 values)."""
    path = copy_damaged(
        BIG,
        tmp_path,
        "-memory-usage-report.txt",
        {6: "garbage row", 61: "garbage row", 236: "garbage row"},
    )
    dump_path = next(tmp_path.glob("*-buffer-assignment.txt"))
    app = HlotopApp(str(dump_path))
    async with app.run_test(size=(120, 40)) as pilot:
        main, screen = await open_diagnostics(app, pilot)
        assert [(d.path, d.line) for d in screen.diagnostics] == [
            (str(path), 6),
            (str(path), 62),
            (str(path), 238),
        ]
        assert "⏎ goes to value 59477 copy.653, printed at line 5" in screen_text(app)
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is main and main.selected_value == 59477
        alloc, slot = main.allocation_tree.current()
        assert alloc.index == 1859 and slot is not None and slot.value.id == 59477
        for row, index, printed in ((1, 1859, 61), (2, 0, 237)):
            await pilot.press("d")
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, DiagnosticsScreen)
            await pilot.press(*["down"] * row)
            await pilot.pause()
            assert f"⏎ goes to allocation {index} " in screen_text(app)
            assert f"printed at line {printed}" in screen_text(app)
            await pilot.press("enter")
            await pilot.pause()
            assert app.screen is main
            alloc, slot = main.allocation_tree.current()
            assert alloc.index == index and slot is None
            assert main.detail.allocation == index


@pilot_test
async def test_enter_on_an_era_a_report_diagnostic_selects_the_value_at_that_row(tmp_path):
    """mlp_train (jax 0.7.2): a garbage line under the era A report's row at offset
    262144 of allocation 37, where value 192 dot_general.11 is alone."""
    report = next(ERA_A.glob("*-memory-usage-report.txt"))
    row = next(
        i for i, ln in enumerate(report.read_text().splitlines(), 1) if "       262144;" in ln
    )
    path = copy_damaged(ERA_A, tmp_path, "-memory-usage-report.txt", {row + 1: "\tgarbage"})
    app = HlotopApp(str(next(tmp_path.glob("*-buffer-assignment.txt"))))
    async with app.run_test(size=(80, 24)) as pilot:
        main, screen = await open_diagnostics(app, pilot)
        assert [(d.path, d.line) for d in screen.diagnostics] == [(str(path), row + 1)]
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is main and main.selected_value == 192
        assert main.detail.value_id == 192
