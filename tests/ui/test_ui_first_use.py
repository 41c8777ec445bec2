"""What a new user ran into on first use (issue 9), each checked as the user met it:
keys in, what the screen shows out."""

from __future__ import annotations

import re
import threading

import pytest
from rich.cells import cell_len
from textual import events
from textual.color import Color
from textual.geometry import Region

from conftest import sample
from hlotop.loading.loader import load
from hlotop.loading.preview import preview
from hlotop.ui.apps.app import HlotopApp
from hlotop.ui.base.textual_compat import screen_lines, screen_strips
from hlotop.ui.screens.main import MainScreen
from hlotop.ui.screens.search import SearchScreen
from hlotop.ui.widgets.row_list import RowList
from hlotop.ui.widgets.timeline import Timeline
from pilot import TPU, pilot_test, started

JAX_BIG = (
    "jax/jax-0.10.2/transformer_big/module_0016.jit_transformer_train_step."
    "cpu_after_optimizations-buffer-assignment.txt"
)  # 1 000+ allocations, long op_names: both scrollbars in every list pane


def burst(app: HlotopApp, *keys: str) -> None:
    """Hand ``keys`` to the app at once, as a terminal does when they are typed (or
    pasted) faster than a frame: none is handled before the last is queued."""
    for key in keys:
        event = events.Key(key, key if len(key) == 1 else None)
        event.set_sender(app)
        app.post_message(event)


def cursor_on_screen(pane: RowList) -> bool:
    """Whether the cursor row is drawn where it can be seen: above the horizontal
    scrollbar, under the fixed lines."""
    y = pane.fixed_height + pane.cursor - pane.scroll_offset.y
    return pane.fixed_height <= y < pane.scrollable_content_region.height


# -- keys typed in the same burst as a pane switch -----------------------------------------


@pilot_test
async def test_keys_typed_with_a_pane_switch_go_to_the_new_pane():
    """``2 → → →`` moves the timeline's cursor three steps; the tree (the pane before)
    is not touched."""
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        tree, timeline = screen.allocation_tree, screen.timeline
        rows, step = tree.row_count(), timeline.step
        burst(app, "2", "home", "right", "right", "right")
        await pilot.pause()
        assert app.focused is timeline
        assert timeline.step == 3 == screen.step
        assert tree.row_count() == rows and not tree.expanded  # nothing expanded
        burst(app, "1", "G")
        await pilot.pause()
        assert tree.cursor == tree.row_count() - 1
        assert timeline.step == 3 and step is not None


@pilot_test
async def test_keys_typed_with_a_pane_switch_on_a_small_terminal():
    """One pane at a time: ``3`` shows the live set and ``G`` (typed at once) goes to
    its last row, not to the tree's."""
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await started(app, pilot)
        burst(app, "3", "G")
        await pilot.pause()
        live = screen.live
        assert screen.active == "live" and app.focused is live
        assert live.cursor == max(i for i in range(live.row_count()) if live.selectable(i))


# -- the last row of a long list, under the horizontal scrollbar --------------------------


async def _last_row_shown(pilot, screen: MainScreen, pane_key: str, pane: RowList) -> None:
    await pilot.press(pane_key, "G")
    await pilot.pause()
    if screen.size.width >= 120:  # two panes a row: a horizontal scrollbar in each
        assert pane.show_horizontal_scrollbar
    assert pane.cursor == max(i for i in range(pane.row_count()) if pane.selectable(i))
    assert cursor_on_screen(pane), (pane.id, pane.cursor, pane.scroll_offset)
    await pilot.press("g", "pagedown", "pagedown")
    await pilot.pause()
    assert cursor_on_screen(pane), (pane.id, pane.cursor, pane.scroll_offset)


@pilot_test
async def test_G_shows_the_last_row_above_the_scrollbar():
    for size in ((120, 40), (80, 24)):
        app = HlotopApp(sample(JAX_BIG))
        async with app.run_test(size=size) as pilot:
            screen = await started(app, pilot)
            await _last_row_shown(pilot, screen, "1", screen.allocation_tree)
            await pilot.press("2", "p", "3")  # a live set longer than the pane
            await pilot.pause()
            await _last_row_shown(pilot, screen, "3", screen.live)


@pilot_test
async def test_every_value_chosen_elsewhere_is_shown_in_the_tree_and_the_timeline():
    """A value chosen by search (or in another pane) is put on screen in the tree and
    the timeline, wherever it is in them: values from first to last, one after the
    other."""
    app = HlotopApp(sample(JAX_BIG))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        await pilot.press("2", "plus", "plus", "plus")  # zoomed in: a horizontal scrollbar
        await pilot.press("1")
        await pilot.pause()
        tree, timeline = screen.allocation_tree, screen.timeline
        assert tree.show_horizontal_scrollbar and timeline.show_horizontal_scrollbar
        values = screen.dump.analysis.values
        for info in values[:: max(1, len(values) // 150)] + values[-5:]:
            screen.select_value(info.value.id)
            if info.slot is not None:
                assert cursor_on_screen(tree), info.value.id
            if info.live is not None:
                assert timeline_row_on_screen(timeline), info.value.id


def timeline_row_on_screen(timeline: Timeline) -> bool:
    y = timeline.header_height + timeline.row - timeline.scroll_offset.y
    return timeline.header_height <= y < timeline.scrollable_content_region.height


def timeline_bar_on_screen(timeline: Timeline, start: int, end: int) -> bool:
    """Whether some column of the live range ``start``-``end`` is in the bars' view."""
    first, _ = timeline.col_of(start)
    _, last = timeline.col_of(end)
    x = timeline.scroll_offset.x
    return first < x + timeline.bar_w and last >= x


@pilot_test
async def test_a_value_found_by_search_on_a_small_terminal_is_on_screen_in_each_pane():
    """At 80x24 one pane shows at a time: a value chosen (by search, here) while the
    timeline has never been shown is on screen, its row and its bar, when the timeline
    is; and in the tree. The timeline showed its first rows instead (its scroll was
    dropped: a pane shown for the first time has no scrollbars yet)."""
    app = HlotopApp(sample(JAX_BIG))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await started(app, pilot)
        timeline, tree = screen.timeline, screen.allocation_tree
        assert timeline.size.height == 0  # never shown yet
        values = screen.dump.analysis.values
        far = next(i for i in values[len(values) // 2 :] if i.live is not None and i.slot)
        await pilot.press("slash", *far.value.name, "enter")
        await pilot.pause()
        assert screen.selected_value == far.value.id and screen.active == "detail"
        await pilot.press("2")
        await pilot.pause()
        assert timeline.rows[timeline.row].value.id == far.value.id
        assert timeline_row_on_screen(timeline), (timeline.row, timeline.scroll_offset)
        assert timeline_bar_on_screen(timeline, far.live.start, far.live.end)
        await pilot.press("1")
        await pilot.pause()
        assert cursor_on_screen(tree), (tree.cursor, tree.scroll_offset)


# -- a search opened while a big dump loads ---------------------------------------------


@pilot_test
async def test_a_search_opened_while_the_dump_loads_does_not_hold_the_load_up():
    """``/`` on the preview of a big dump: the whole dump is swapped in under the open
    search (which goes on in it), without waiting for the search to be closed."""
    path = sample(JAX_BIG)
    go = threading.Event()

    def slow_load():
        assert go.wait(30)
        return load(path, lazy=True)

    app = HlotopApp(path, open_dump=slow_load, open_preview=lambda: preview_of(path))
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(500):
            if "preview" in app.milestones:
                break
            await pilot.pause(0.01)
        main = app.screen
        assert isinstance(main, MainScreen) and main.dump.preview is not None
        await pilot.press("slash", *"fusion")
        search = app.screen
        assert isinstance(search, SearchScreen)
        go.set()
        for _ in range(500):
            if "painted" in app.milestones:
                break
            await pilot.pause(0.01)
        assert "painted" in app.milestones, "the load waited for the search to close"
        assert app.screen is search and main.dump.preview is None
        assert search.values is main.dump.analysis.values  # it searches the whole dump
        for _ in range(500):
            if search.complete:
                break
            await pilot.pause(0.02)
        await pilot.pause()
        assert search.matches and search.query_text == "fusion"
        chosen = search.matches[0].value.id
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is main and main.selected_value == chosen
        await app.wait_until_loaded()


def preview_of(path: str):
    """The first look the app would show at a big dump (this one is small)."""
    return preview(path, from_bytes=0)


# -- NO_COLOR: nothing in a grey too dark to read, nothing marked by colour alone -----------


def _luminance(color: Color) -> float:
    def channel(v: int) -> float:
        v = v / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = color.rgb
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast_of(style, background: Color, foreground: Color) -> float:
    """WCAG contrast of a segment drawn in ``style`` (a dim one counted at half)."""
    fg = Color.from_rich_color(style.color) if style.color else foreground
    bg = Color.from_rich_color(style.bgcolor) if style.bgcolor else background
    if style.reverse:
        fg, bg = bg, fg
    light, dark = sorted((_luminance(fg), _luminance(bg)), reverse=True)
    return (light + 0.05) / (dark + 0.05) * (0.5 if style.dim else 1.0)


def faint_text(app: HlotopApp, region: Region | None = None) -> list[str]:
    """What the screen (or ``region`` of it) shows (text, and the marks ◆ ▒ ▓ ░) at
    under 3:1."""
    variables = app.get_css_variables()
    background, foreground = Color.parse(variables["background"]), Color.parse("#e0e0e0")
    faint = []
    for y, strip in enumerate(screen_strips(app.screen)):
        x = 0
        for text, style, _ in strip:
            x, left = x + cell_len(text), x
            if region is not None and not region.contains(left, y):
                continue
            if style is None or not re.search(r"[A-Za-z0-9◆▒▓░]", text):
                continue
            ratio = contrast_of(style, background, foreground)
            if ratio < 3.0:
                faint.append(f"line {y}: {text.strip()!r} {ratio:.1f}:1 ({style})")
    return faint


def segments_with(app: HlotopApp, mark: str):
    return [
        (text, style)
        for strip in screen_strips(app.screen)
        for text, style, _ in strip
        if mark in text
    ]


@pytest.mark.parametrize(
    "relative, size, keys",
    [
        (TPU, (120, 40), ("enter", "2")),  # VMEM and SMEM values, XLA's peak
        (TPU, (80, 24), ("2",)),
        (TPU, (80, 24), ("3",)),
        ("seeds/000_aa093b3e4f73e23a.txt", (120, 40), ("3",)),  # a stack-trace tree
    ],
)
@pilot_test
async def test_under_no_color_every_pane_reads_without_colour(relative, size, keys, monkeypatch):
    """Textual draws each colour as a grey of its luminance under NO_COLOR: magenta
    (S(2) SMEM, its ▒ bars) and red (◆ XLA's peak) came out at 1.6:1. Every piece of
    text and every mark must stay at 3:1 or more (dim text counted at half)."""
    monkeypatch.setenv("NO_COLOR", "1")
    app = HlotopApp(sample(relative))
    async with app.run_test(size=size) as pilot:
        await started(app, pilot)
        await pilot.press(*keys)
        await pilot.pause()
        assert app.no_color
        assert faint_text(app) == []
        if relative == TPU and size == (120, 40):
            for mark in ("S(2) SMEM", "▒", "◆"):
                assert segments_with(app, mark), mark


@pilot_test
async def test_the_highlighted_search_match_is_marked_not_only_coloured(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("slash", *"fusion")
        await pilot.pause()
        search = app.screen
        assert isinstance(search, SearchScreen) and len(search.matches) == 3

        def marked() -> list[str]:
            """The matches listed with a marker."""
            box = search.query_one("#search-results").content_region
            lines = screen_lines(search)[box.y : box.bottom]
            return [line[box.x : box.right] for line in lines if "▶" in line[box.x : box.right]]

        assert len(marked()) == 1 and "41 fusion " in marked()[0]
        await pilot.press("down")
        await pilot.pause()
        assert len(marked()) == 1 and "34 fusion.10 " in marked()[0]
        # The dialog reads without colour (the main screen behind it is dimmed).
        assert faint_text(app, search.query_one("#search-body").region) == []


@pilot_test
async def test_each_search_match_is_one_line():
    """A match with a long op_name is cut at the dialog's edge, not wrapped onto a
    second line (which halved the matches shown)."""
    app = HlotopApp(sample(JAX_BIG))
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        await pilot.press("slash", *"log_softmax")
        search = app.screen
        assert isinstance(search, SearchScreen)
        for _ in range(200):
            if search.complete:
                break
            await pilot.pause(0.02)
        await pilot.pause()
        results = search.query_one("#search-results")
        assert results.option_count >= 3
        assert any(len(info.op_name or "") > 60 for info in search.matches)
        assert results.virtual_size.height == results.option_count


def test_the_header_keeps_the_programs_name_when_the_module_name_is_too_long():
    """At 80 columns the header has ~15 cells for the name: it showed
    ``module…tep.cpu``; now the pass, the backend, a TPU's ``.cl_NNN`` and then the
    ``module_NNNN.`` give way before the program's own name is cut."""
    from hlotop.ui.widgets.summary_bar import short_name

    cpu = "module_0034.jit_train_step.cpu_after_optimizations"
    tpu = "module_0000.jit_gpt_train_step.cl_933746096.after_optimizations"
    assert short_name(cpu, 60) == cpu
    assert short_name(cpu, 30) == "module_0034.jit_train_step"
    assert short_name(cpu, 15) == "jit_train_step"
    assert short_name(tpu, 40) == "module_0000.jit_gpt_train_step"
    assert short_name(tpu, 18) == "jit_gpt_train_step"
    # Then cut at the end, as ls and htop do (issue 34: "jit_g…n_step" read as a name).
    assert short_name(tpu, 12) == "jit_gpt_tra…"
    assert short_name("003_a3085531593bac68", 12) == "003_a308553…"  # no module_ to drop
