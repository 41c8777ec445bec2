"""The head of a big dump, shown while the whole of it loads (hlotop.loading.preview), and the
browser swapping the whole dump in for it, on real dumps."""

from __future__ import annotations

import threading
import weakref

import hlotop.loading.preview as preview_module
import hlotop.ui.apps.app as app_module
from conftest import BIG, sample
from hlotop.loading.loader import load
from hlotop.loading.preview import glance, preview
from hlotop.model import AllocationLines
from hlotop.ui.apps.app import HlotopApp
from hlotop.ui.screens.main import MainScreen
from hlotop.ui.screens.overview import OverviewScreen
from hlotop.ui.widgets.allocation_tree import AllocationTree
from hlotop.ui.widgets.status_bar import StatusBar
from hlotop.units import human_bytes
from pilot import TPU, notes, pilot_test, screen_text, started


def _tree(app) -> AllocationTree:
    return app.screen.query_one(AllocationTree)


@pilot_test
async def test_the_browser_shows_the_preview_then_swaps_in_the_whole_dump():
    path = sample(BIG)
    go = threading.Event()

    def slow_load():
        assert go.wait(30)
        return load(path, lazy=True)

    app = HlotopApp(path, open_dump=slow_load, open_preview=lambda: preview(path, from_bytes=0))
    async with app.run_test(size=(120, 40)) as pilot:
        while "preview" not in app.milestones:
            await pilot.pause(0.01)
        screen = app.screen
        assert isinstance(screen, MainScreen) and screen.dump.preview is not None
        head_rows = _tree(app).row_count()
        status = screen.query_one(StatusBar)
        assert "reading all" in status.note.plain
        # The truth at once: every allocation by size, the total and XLA's peak (its
        # step and the sum of its printed list); what is still loading says so by name.
        whole = load(path, lazy=True)
        assert head_rows == len(whole.allocations)
        tree = _tree(app)
        sizes = [tree.row(i)[0].size for i in range(tree.row_count())]
        assert sizes == sorted(sizes, reverse=True)
        text = screen_text(app)
        assert "first" not in text
        assert f"total {human_bytes(whole.total_bytes_used)} in " in text
        a = whole.analysis
        assert f"XLA peak {human_bytes(a.peak_bytes)} at step {a.peak_step}" in text
        assert "values: loading…" in text and "diagnostics: loading…" in text
        assert "live ranges: loading…" in text and "live set: loading…" in text
        assert "0 values" not in text and "0 diagnostics" not in text
        assert app.milestones["allocations"] == app.milestones["preview"]
        # The user moves on while the rest loads: sort by index, third allocation.
        await pilot.press("s", "home", "down", "down")
        chosen = _tree(app).current()[0].index
        go.set()
        while "painted" not in app.milestones:
            await pilot.pause(0.02)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, MainScreen) and screen.dump.preview is None
        tree = _tree(app)
        # Every allocation was there at first; now each can expand to its values.
        assert tree.row_count() == head_rows
        assert any(a.values for a in screen.dump.allocations)
        assert not tree.by_size  # the sort order is kept
        assert tree.current()[0].index == chosen  # and the selection
        assert f"allocation {chosen} " in screen.query_one(StatusBar).selection.plain
        assert screen.query_one(StatusBar).note is None
        assert app.focused is tree


@pilot_test
async def test_a_glance_comes_first_then_its_figures_then_the_whole_dump(monkeypatch):
    """The browser's first look is a glance (hlotop.loading.preview.glance): every
    allocation by size, the total and XLA's peak step, each figure not yet worked out
    labelled as loading; then its allocations, read whole, give XLA's peak bytes and
    JAX's figures; then the whole dump comes."""
    path = sample(BIG)
    figures, whole_dump = threading.Event(), threading.Event()
    real_completed = app_module.completed

    def held_completed(first, **options):
        assert figures.wait(30)
        return real_completed(first, **options)

    def slow_load():
        assert whole_dump.wait(30)
        return load(path, lazy=True)

    monkeypatch.setattr(app_module, "completed", held_completed)
    app = HlotopApp(
        path,
        open_dump=slow_load,
        open_preview=lambda: glance(path, from_bytes=0),
        capacity=(16 << 30, "16 GiB"),
    )
    whole = load(path, lazy=True)
    a = whole.analysis
    async with app.run_test(size=(150, 40)) as pilot:
        while "preview" not in app.milestones:
            await pilot.pause(0.01)
        text = screen_text(app)
        assert _tree(app).row_count() == len(whole.allocations)
        assert f"total {human_bytes(whole.total_bytes_used)} in " in text
        assert f"peak at step {a.peak_step} · bytes: loading…" in text
        assert "memory_analysis: loading…" in text and "memory_analysis arg" not in text
        assert "headroom: loading…" in text  # it needs JAX's figures
        await pilot.press("o")  # not yet: the figures would be missing
        assert not isinstance(app.screen, OverviewScreen)
        assert "still being worked out" in notes(app)
        await pilot.press("down", "down")
        chosen = _tree(app).current()[0].index
        figures.set()
        for _ in range(500):
            if "memory_analysis arg" in screen_text(app):
                break
            await pilot.pause(0.01)
        text = screen_text(app)
        assert f"XLA peak {human_bytes(a.peak_bytes)} at step {a.peak_step}" in text
        stats = a.memory_stats
        assert stats is not None
        assert f"arg {human_bytes(stats.argument_size_in_bytes)} " in text
        assert "headroom " in text and "headroom: loading" not in text
        assert "values: loading…" in text and app.screen.dump.preview is not None
        assert _tree(app).current()[0].index == chosen  # the rows and cursor are kept
        await pilot.press("o")
        assert isinstance(app.screen, OverviewScreen)
        await pilot.pause()
        figures = screen_text(app)
        # What the first look has is XLA's: its printed step and list; hlotop's own
        # measures need the live ranges, and say so.
        assert f"{a.peak_step}  (XLA's printed peak line)" in figures
        assert f"the sum of XLA's list 'Live ranges at {a.peak_step} (peak)'" in figures
        assert "prints no peak list" not in figures
        assert figures.count("loading… (with the values and live ranges)") == 2
        whole_dump.set()  # the figures left open take the whole dump in
        while "painted" not in app.milestones:
            await pilot.pause(0.02)
        await pilot.pause()
        figures = screen_text(app)
        assert isinstance(app.screen, OverviewScreen) and "loading" not in figures
        assert f"Logical at peak   {human_bytes(a.peak_logical_bytes)}" in figures
        assert f"{a.peak_step}  (XLA's sweep)" in figures
        await pilot.press("escape")
        assert app.screen.dump.preview is None
        assert _tree(app).current()[0].index == chosen


@pilot_test
async def test_a_glance_that_cannot_be_completed_waits_for_the_whole_dump(monkeypatch):
    """Working out a glance's figures failing (a bug, say) is not the app's end: the
    figures stay labelled as loading and the whole dump brings them, as when a first
    look itself fails."""

    def broken(first):
        raise RuntimeError("a bug in the first look's figures")

    monkeypatch.setattr(app_module, "completed", broken)
    path = sample(BIG)
    app = HlotopApp(path, open_preview=lambda: glance(path, from_bytes=0))
    async with app.run_test(size=(150, 40)) as pilot:
        await started(app, pilot)
        assert app.return_code is None and app.screen.dump.preview is None
        stats = load(path, lazy=True).analysis.memory_stats
        assert stats is not None
        assert f"arg {human_bytes(stats.argument_size_in_bytes)} " in screen_text(app)


@pilot_test
async def test_a_glance_without_a_printed_total_adds_up_the_sizes_unread(tmp_path, monkeypatch):
    """A dump that prints no 'Total bytes used' (before 2019): the header's total is
    the allocations' sizes added up, from the glance's columns, not by reading every
    allocation on the UI thread."""
    text = open(sample(BIG)).read()
    start = text.index("Total bytes used:")
    cut = tmp_path / "no-total-buffer-assignment.txt"
    cut.write_text(text[:start] + text[text.index("\n", start) + 1 :])
    read: list[int] = []
    real_read = preview_module._read_allocation

    def spy(line_bytes, line):
        read.append(line)
        return real_read(line_bytes, line)

    monkeypatch.setattr(preview_module, "_read_allocation", spy)
    held = threading.Event()  # the completion waits until the end
    real_completed = app_module.completed
    monkeypatch.setattr(app_module, "completed", lambda g: held.wait(30) and real_completed(g))
    first = glance(cut, from_bytes=0)
    assert first is not None and first.total_bytes_used is None
    app = HlotopApp(str(cut), open_dump=lambda: load(cut, lazy=True), open_preview=lambda: first)
    async with app.run_test(size=(150, 40)) as pilot:
        while "preview" not in app.milestones:
            await pilot.pause(0.01)
        sizes = sum(first.allocations.sizes)
        assert f"total {human_bytes(sizes)} in " in screen_text(app)
        assert 0 < len(read) < len(first.allocations)  # the rows shown, the layout's
        held.set()


@pilot_test
async def test_without_a_first_look_every_allocation_shows_with_the_whole_dump():
    app = HlotopApp(sample(TPU))  # small: no first look
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        assert "preview" not in app.milestones
        assert app.milestones["allocations"] == app.milestones["painted"]


@pilot_test
async def test_the_first_look_is_laid_out_for_a_small_terminal_from_its_first_frame():
    """At 80x24 the panes are tabs. Textual sets the size classes on a screen's first
    resize, which comes after its first paint (late while a big dump loads): the first
    look was drawn as the cramped four-pane grid until then. The classes must be there
    as soon as the screen's widgets are made."""
    path = sample(BIG)
    head = preview(path, from_bytes=0)
    seen: list[tuple[bool, ...]] = []

    class Probe(MainScreen):
        def compose(self):
            yield from super().compose()
            seen.append(tuple(self.has_class(c) for c in ("-narrow", "-short", "-wide", "-tall")))

    app = HlotopApp(path, open_dump=lambda: load(path, lazy=True))
    async with app.run_test(size=(80, 24)):
        await app.push_screen(Probe(head))
        assert seen == [(True, True, False, False)]


@pilot_test
async def test_a_records_report_that_comes_after_the_screen_is_taken_down_is_dropped():
    """The background pass reports from a worker thread; a report handled while the app
    closes (the screen's bars already removed) once crashed the app (exit 70)."""
    from hlotop.ui.base.messages import RecordsProgress, RecordsRead
    from hlotop.ui.widgets.summary_bar import SummaryBar

    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        for bar in (*screen.query(StatusBar), *screen.query(SummaryBar)):
            await bar.remove()
        app.post_message(RecordsProgress(5, 10, None))
        app.post_message(RecordsRead(True))
        await pilot.pause()
        assert app.return_code is None and app.is_running


@pilot_test
async def test_the_first_look_is_let_go_once_the_whole_dump_is_shown(monkeypatch):
    """The first look's panes are removed when the whole dump comes, and the collector
    never looks at them (frozen with the dump, hlotop.process): nothing they hold, nor
    query_one's memory of them, keeps the first look's allocation lines alive."""
    path = sample(BIG)
    go = threading.Event()

    def slow_load():
        assert go.wait(30)
        return load(path, lazy=True)

    glanced: list = []  # the glance's allocation lines, read on demand
    real_completed = app_module.completed

    def spy(first, **options):
        glanced.append(weakref.ref(first.sections.allocations))
        return real_completed(first, **options)

    monkeypatch.setattr(app_module, "completed", spy)
    app = HlotopApp(path, open_dump=slow_load, open_preview=lambda: glance(path, from_bytes=0))
    async with app.run_test(size=(120, 40)) as pilot:
        while not glanced:
            await pilot.pause(0.01)
        lines = glanced[0]
        assert isinstance(lines(), AllocationLines)
        for _ in range(500):  # completed: every allocation read, its figures shown
            if "memory_analysis arg" in screen_text(app):
                break
            await pilot.pause(0.01)
        _tree(app).focus()
        await pilot.press("down")
        go.set()
        while "painted" not in app.milestones:
            await pilot.pause(0.02)
        await pilot.pause()
        assert app.screen.dump.preview is None and _tree(app).row_count() > 300
        assert lines() is None
