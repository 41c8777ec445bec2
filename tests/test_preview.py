"""The head of a big dump, shown while the whole of it loads (hlotop.loading.preview), and the
browser swapping the whole dump in for it, on real dumps."""

from __future__ import annotations

import os
import threading

import pytest

from conftest import sample
from hlotop.loading.loader import load
from hlotop.loading.preview import preview
from hlotop.ui.app import HlotopApp
from hlotop.ui.screens.main import MainScreen
from hlotop.ui.widgets.allocation_tree import AllocationTree
from hlotop.ui.widgets.status_bar import StatusBar
from hlotop.ui.widgets.timeline import Timeline
from test_app_pilot import pilot_test

BIG = (
    "jax/jax-0.9.2/transformer_big/module_0001.jit_transformer_train_step"
    ".cpu_after_optimizations-buffer-assignment.txt"
)  # 2.4 MB, split layout (+ report)
COMBINED = (
    "jax/jax-0.4.31/scan_layers/module_0001.jit_scan_train_step"
    ".cpu_after_optimizations-buffer-assignment.txt"
)  # 59 kB, combined layout
SMALL = "seeds/000_aa093b3e4f73e23a.txt"


def _figures(alloc):
    return (
        alloc.index,
        alloc.size,
        alloc.color,
        alloc.kinds,
        tuple((s.value.id, s.offset, s.size, s.shape) for s in alloc.values),
    )


@pytest.mark.parametrize(
    "relative, max_bytes", [(BIG, 64 * 1024), (BIG, 300 * 1024), (COMBINED, 8192)]
)
def test_the_preview_is_the_first_allocations_whole(relative, max_bytes):
    path = sample(relative)
    whole = load(path, lazy=True)
    head = preview(path, max_bytes=max_bytes)
    assert head is not None
    n = len(head.allocations)
    assert 0 < n < len(whole.allocations)
    # The same allocations as the whole load, in the same order, none cut short.
    assert [_figures(a) for a in head.allocations] == [_figures(a) for a in whole.allocations[:n]]
    read, total = head.preview
    assert read == max_bytes
    assert total == sum(os.path.getsize(f.path) for f in whole.files if f.kind != "module-text")
    assert head.live_range is None and not head.diagnostics
    assert whole.preview is None


def test_no_preview_where_it_would_not_help():
    assert preview(sample(SMALL)) is None  # small: the whole load is quick
    assert preview("-") is None
    assert preview("/no/such/dump.txt") is None


def test_the_preview_of_a_split_module_reads_its_allocations_file(tmp_path):
    live_range_file = sample(BIG).replace("-buffer-assignment.txt", "-memory-usage-report.txt")
    head = preview(live_range_file, max_bytes=64 * 1024)
    assert head is not None
    assert head.files[0].path.endswith("-buffer-assignment.txt")
    assert head.name == "module_0001.jit_transformer_train_step.cpu_after_optimizations"


def _tree(app) -> AllocationTree:
    return app.screen.query_one(AllocationTree)


@pilot_test
async def test_the_browser_shows_the_preview_then_swaps_in_the_whole_dump():
    path = sample(BIG)
    go = threading.Event()

    def slow_load():
        assert go.wait(30)
        return load(path, lazy=True)

    app = HlotopApp(
        path, open_dump=slow_load, open_preview=lambda: preview(path, max_bytes=64 * 1024)
    )
    async with app.run_test(size=(120, 40)) as pilot:
        while "preview" not in app.milestones:
            await pilot.pause(0.01)
        screen = app.screen
        assert isinstance(screen, MainScreen) and screen.dump.preview is not None
        head_rows = _tree(app).row_count()
        status = screen.query_one(StatusBar)
        assert "reading all" in status.note.plain
        timeline_text = screen.query_one(Timeline).render_line(0).text
        assert "not read yet" in timeline_text
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
        assert tree.row_count() > head_rows
        assert not tree.by_size  # the sort order is kept
        assert tree.current()[0].index == chosen  # and the selection
        assert f"allocation {chosen} " in screen.query_one(StatusBar).selection.plain
        assert screen.query_one(StatusBar).note is None
        assert app.focused is tree
