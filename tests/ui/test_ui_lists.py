"""Pilot tests of the lists' filter (f) and order (s) on real dumps: each list pane
(allocation tree, timeline rows, live set, grouped live set) shows only what the filter
keeps and says so in its title, Esc clears it, and ``s`` sorts the focused pane only."""

from __future__ import annotations

from test_grouped_view import settle
from textual import events
from textual.widgets import Input

from conftest import sample
from hlotop.analysis.peak import live_set
from hlotop.analysis.value_order import natural
from hlotop.loading.loader import load
from hlotop.ui.apps.app import HlotopApp
from hlotop.ui.apps.modules_app import ModulesApp
from hlotop.ui.screens.directory_module import DirectoryMainScreen
from hlotop.ui.screens.modules import ModulesScreen
from hlotop.ui.screens.search import SearchScreen
from hlotop.ui.widgets.filter_bar import FilterBar
from pilot import TPU, notes, pilot_test, screen_text, started

GPT = "tpu/v5e_1x1-gpt_loop"  # op_names (jit(gpt_train_step)/...), peak at step 367


def ids(values) -> list[int]:
    return [i.value.id for i in values]


async def type_filter(app: HlotopApp, pilot, pane: str, text: str, end: str = "enter"):
    """Focus ``pane`` (1-3), press f, type ``text``, then ``end`` (enter or escape)."""
    await pilot.press(pane, "f")
    await pilot.pause()
    await pilot.press(*text)
    await settle(app, pilot)
    if end:
        await pilot.press(end)
        await settle(app, pilot)


@pilot_test
async def test_f_filters_the_live_set_and_says_so_and_esc_clears_it():
    dump = load(sample(GPT))
    a = dump.analysis
    peak = a.peak_values
    expected = [i for i in peak if "attn" in (i.op_name or "")]
    assert 0 < len(expected) < len(peak)
    app = HlotopApp(sample(GPT))
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await started(app, pilot)
        live = screen.live
        await type_filter(app, pilot, "3", "op_name:attn", end="")
        bar = screen.query_one(FilterBar)
        assert bar.is_open and app.focused is bar.query_one(Input)
        assert [i.value.id for i in live.live] == [i.value.id for i in expected]  # XLA's order
        await pilot.press("enter")
        await pilot.pause()
        assert not bar.is_open and app.focused is live
        assert live.border_title == "3 Peak breakdown · step 367 · filter: op_name:attn"
        summary = live.pinned_lines()[0].plain
        assert f"{len(expected)} of {len(peak)} values" in summary
        assert "logical of 23.26MiB" in summary
        # The shares stay shares of the whole step: the last row's is the matches' share.
        last = live.render_row(len(expected) - 1).plain
        share = 100 * sum(i.logical_bytes for i in expected) / sum(i.logical_bytes for i in peak)
        assert f"{share:5.1f}%" in last
        assert "filter: op_name:attn" in screen_text(app)
        # Stepping keeps the filter: the live set at the next step, filtered.
        await pilot.press("2", "right")
        await pilot.pause()
        step = a.peak_step + 1
        at_step = [i for i in live_set(a.values, step) if "attn" in (i.op_name or "")]
        assert [i.value.id for i in live.live] == [i.value.id for i in at_step]
        await pilot.press("3", "escape")  # esc in the pane clears its filter
        await pilot.pause()
        assert live.matches is None and len(live.live) == len(live_set(a.values, step))
        assert "filter" not in live.border_title


@pilot_test
async def test_f_filters_the_timeline_rows_and_keeps_the_selection():
    dump = load(sample(TPU))
    vmem = [v.value.id for v in dump.analysis.values if v.color == 1 and v.live is not None]
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        timeline = screen.timeline
        await pilot.press("2")
        while timeline.rows[timeline.row].value.id != 36:
            await pilot.press("down")
        await pilot.pause()
        assert screen.selected_value == 36  # fusion.12, in S(1) VMEM
        await type_filter(app, pilot, "2", "space:vmem")
        assert sorted(v.value.id for v in timeline.rows) == sorted(vmem) == [31, 36, 39, 41]
        assert timeline.border_title == "2 Timeline (4 of 18 live ranges) · filter: space:vmem"
        assert timeline.rows[timeline.row].value.id == 36 and timeline.row_selected
        # A value the filter leaves out, selected elsewhere, has no row here.
        screen.select_value(29)
        await pilot.pause()
        assert not timeline.row_selected
        # The filter bar opens with the filter so far; esc there clears it.
        await pilot.press("f")
        await pilot.pause()
        assert screen.query_one("#filter-input", Input).value == "space:vmem"
        await pilot.press("escape")
        await pilot.pause()
        assert timeline.matches is None and len(timeline.rows) == 18
        assert app.focused is timeline


@pilot_test
async def test_f_filters_the_allocation_tree_to_the_allocations_of_matching_values():
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        tree = screen.allocation_tree
        await type_filter(app, pilot, "1", "name:fusion")
        # fusion.10 in allocation 4; fusion.12 and fusion in 12 (with 2 values more).
        assert [tree.row(i)[0].index for i in range(tree.row_count())] == [12, 4]
        assert tree.border_title == "1 Allocations (2 of 13, by size) · filter: name:fusion"
        assert "(2 of 4 values)" in tree.render_row(0).plain
        await pilot.press("right")  # expanded: only its matching values
        await pilot.pause()
        assert [tree.row(i)[1].value.label for i in (1, 2)] == ["fusion.12", "fusion"]
        await type_filter(app, pilot, "1", "kind:param shape:bf16")
        assert tree.row_count() == 0 and "No allocation holds" in screen_text(app)


@pilot_test
async def test_f_filters_the_grouped_view_to_the_matching_values():
    dump = load(sample(GPT))
    peak = dump.analysis.peak_values
    dots = {i.value.id for i in peak if "dot_general" in (i.op_name or "")}
    app = HlotopApp(sample(GPT))
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await started(app, pilot)
        await pilot.press("v")
        await settle(app, pilot)
        view = screen.grouped_view
        await type_filter(app, pilot, "3", "op_name:dot_general")
        tree = view.group_tree
        values = {i.value.id for r in tree.grouping.rows for i in r.values}
        assert values == dots
        assert tree.total == sum(i.logical_bytes for i in peak if i.value.id in dots)
        assert view.pinned_lines()[0].plain.startswith(f"{len(dots)} of {len(peak)} values")
        assert view.border_title.endswith("· filter: op_name:dot_general")
        assert screen.live.matches is None  # the flat live set has a filter of its own
        await pilot.press("escape")
        await pilot.pause()
        assert view.matches is None
        assert len({i.value.id for r in view.group_tree.grouping.rows for i in r.values}) == len(
            peak
        )


@pilot_test
async def test_esc_in_a_module_opened_from_a_directory_clears_the_filter_first():
    """There esc also goes back to the modules list: not while a filter is shown."""
    app = ModulesApp(sample("dirs/jax-0.10.2-cpu-train"))
    async with app.run_test(size=(120, 40)) as pilot:
        await app.wait_until_filled()
        await pilot.pause()
        await pilot.press("enter")
        await app.wait_until_loaded()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DirectoryMainScreen)
        await type_filter(app, pilot, "3", "fusion")
        assert screen.live.matches is not None
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen and screen.live.matches is None
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ModulesScreen)


@pilot_test
async def test_slash_in_the_filter_bar_is_text_not_a_search():
    app = HlotopApp(sample(GPT))
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await started(app, pilot)
        await type_filter(app, pilot, "3", "block_1/attn", end="")
        assert not isinstance(app.screen, SearchScreen)
        assert screen.query_one("#filter-input", Input).value == "block_1/attn"
        await pilot.press("enter", "slash")  # the bar closed: / searches again
        await pilot.pause()
        assert isinstance(app.screen, SearchScreen)


@pilot_test
async def test_the_filter_bar_at_80x24_names_the_pane_and_its_keys():
    app = HlotopApp(sample(GPT))
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        await type_filter(app, pilot, "3", "attn", end="")
        lines = screen_text(app).splitlines()
        bar = next(
            line for line in lines if line.startswith(" filter Live set (⏎ keep, esc clear):")
        )
        assert any("3 Peak breakdown · step 367 · filter: attn" in line for line in lines)
        # The text typed starts where the widest pane's prompt ends, whichever pane
        # is named (a prompt that changed width laid the screen out again: a frame).
        widest = len(" filter Allocations (⏎ keep, esc clear): ")
        assert bar[widest - 1 :].startswith(" attn")
        await pilot.press("escape")
        await type_filter(app, pilot, "1", "attn", end="")
        lines = screen_text(app).splitlines()
        bar = next(line for line in lines if line.startswith(" filter Allocations (⏎ keep"))
        assert bar[widest - 1 :].startswith(" attn")


@pilot_test
async def test_f_on_the_detail_says_it_is_not_a_list():
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        await pilot.press("4", "f")
        await pilot.pause()
        assert not screen.query_one(FilterBar).is_open
        assert "not a list" in notes(app)


# -- s: each pane its own order ------------------------------------------------------------


@pilot_test
async def test_s_sorts_the_live_set_by_each_order_in_turn():
    dump = load(sample(GPT))
    peak = dump.analysis.peak_values
    keys = {
        "start step": lambda i: (i.live.start, i.value.id),
        "end step": lambda i: (i.live.end, i.live.start, i.value.id),
        "name": lambda i: (natural(i.value.label), i.value.id),
        "memory space": lambda i: (i.color, -i.logical_bytes, i.live.start, i.value.id),
    }
    app = HlotopApp(sample(GPT))
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await started(app, pilot)
        live = screen.live
        tree_first = screen.allocation_tree.row(0)
        await pilot.press("3")
        for title, key in keys.items():
            await pilot.press("s")
            await pilot.pause()
            assert live.border_title == f"3 Peak breakdown · step 367 · by {title}"
            assert ids(live.live) == ids(sorted(peak, key=key)), title
        await pilot.press("s")  # back to size: XLA's order
        await pilot.pause()
        assert ids(live.live) == ids(peak) and "by" not in live.border_title
        assert screen.allocation_tree.row(0) == tree_first  # pane 1 untouched


@pilot_test
async def test_s_sorts_the_timeline_rows_and_keeps_the_selected_row():
    dump = load(sample(TPU))
    rows = [v for v in dump.analysis.values if v.live is not None]
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        timeline = screen.timeline
        screen.select_value(36)
        await pilot.press("2")
        await pilot.pause()
        await pilot.press("s", "s")  # start -> end -> name
        await pilot.pause()
        assert timeline.border_title == "2 Timeline (18 live ranges) · by name"
        assert [v.value.label for v in timeline.rows] == sorted(
            (v.value.label for v in rows), key=natural
        )
        assert timeline.rows[timeline.row].value.id == 36 and timeline.row_selected
        await pilot.press("s", "s")  # space, then size
        await pilot.pause()
        assert [v.logical_bytes for v in timeline.rows] == sorted(
            (v.logical_bytes for v in rows), reverse=True
        )


@pilot_test
async def test_s_in_the_grouped_view_sorts_its_groups_not_the_allocation_tree():
    """Before, ``s`` was the screen's and re-sorted pane 1 whichever pane had the focus."""
    app = HlotopApp(sample(GPT))
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await started(app, pilot)
        tree = screen.allocation_tree
        await pilot.press("v")
        await settle(app, pilot)
        view = screen.grouped_view
        await pilot.press("s")
        await settle(app, pilot)
        assert tree.by_size and "by size" in tree.border_title
        assert view.by_name and "· by name" in view.border_title
        tops = [n.label for n in view.rows if n.depth == 0]
        assert tops == sorted(tops, key=natural) and len(tops) > 1


@pilot_test
async def test_on_a_big_dump_the_filter_is_matched_once_the_typing_pauses():
    """Above ``at_once`` values the matches are worked out in a thread worker, started
    only once the typing pauses: the letters typed in a burst are shown at once, and
    the pane takes the matches of the whole word."""
    app = HlotopApp(sample("jax/jax-0.9.2/transformer_big"))  # 3,504 values
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        screen.lists.at_once = 100
        screen.lists.typing_pause = 0.5  # long enough to look between the keys and it
        timeline = screen.timeline
        await pilot.press("2", "f")
        await pilot.pause()
        await pilot.press(*"fusion")
        assert screen.query_one("#filter-input", Input).value == "fusion"
        # Typed in a burst: the worker waits for the pause, none has started yet.
        assert screen.lists.matching
        assert not [w for w in app.screen.workers if w.group == "filter"]
        await settle(app, pilot)
        while screen.lists.matching:
            await pilot.pause(0.01)
        await settle(app, pilot)
        assert timeline.matches is not None and timeline.matches.filter.text == "fusion"
        assert timeline.rows and all("fusion" in v.value.label for v in timeline.rows)
        assert "filter: fusion" in timeline.border_title


@pilot_test
async def test_keys_read_with_f_land_in_the_filter_bar():
    """``f`` and the filter's words read at once (pasted, or typed within a frame) went
    to the pane that had the focus: Textual hands each key to the widget focused when
    it is read, before ``f`` has moved the focus. They land in the bar now, and the
    advice (``a``) does not open."""
    app = HlotopApp(sample(GPT))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        await pilot.press("3")
        await pilot.pause()
        for key in ("f", "a", "t", "t", "n"):  # one read: queued before any is handled
            app.post_message(events.Key(key, key))
        await pilot.pause()
        assert app.screen is screen and screen.filter_bar.text == "attn"
        await pilot.press("enter", "s")
        assert screen.focused is screen.live and screen.live.order == "start"
        assert screen.live.matches is not None and screen.live.matches.filter.text == "attn"
