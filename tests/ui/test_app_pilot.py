"""Pilot tests of the terminal UI on real dumps: keys in, state and screen text out."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import ROOT, SEEDS, exit_after_load, sample
from hlotop.analysis.analyze import live_set
from hlotop.analysis.search import find_values
from hlotop.loading.loader import LoadError, load
from hlotop.ui.apps.app import HlotopApp
from hlotop.ui.base.bindings import SCOPES
from hlotop.ui.screens.diagnostics import DiagnosticsScreen
from hlotop.ui.screens.help import HelpScreen, help_text
from hlotop.ui.screens.loading import LoadingScreen
from hlotop.ui.screens.main import MainScreen
from hlotop.ui.screens.search import SearchScreen
from hlotop.ui.view_models.steps import LiveIndex, StepIndex
from hlotop.ui.widgets.allocation_tree import AllocationTree
from hlotop.ui.widgets.live_set import LiveSet
from hlotop.ui.widgets.rendered_text import RenderedText
from hlotop.ui.widgets.status_bar import StatusBar
from hlotop.ui.widgets.summary_bar import SummaryBar
from hlotop.ui.widgets.timeline import Timeline
from hlotop.ui.widgets.value_detail import ValueDetail
from hlotop.units import human_bytes
from pilot import CPU_TRACE, TPU, pilot_test, plain, screen_text, started, widget_lines


@pilot_test
async def test_opens_on_the_allocation_tree_largest_first():
    dump = load(sample(TPU))
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        tree = screen.allocation_tree
        assert app.focused is tree
        largest = max(dump.allocations, key=lambda a: a.size)
        assert tree.current()[0].index == largest.index == 12
        # Allocation 12 holds 4 values: it is shown, and no single value is selected.
        assert screen.detail.allocation == 12 and screen.selected_value is None
        assert not screen.timeline.row_selected and not screen.live.shows_selection
        text = screen_text(app)
        assert dump.name in text
        assert human_bytes(dump.total_bytes_used) in text  # 286.05MiB
        assert "S(1) VMEM" in text and "S(2) SMEM" in text
        assert "0 diagnostics" in text


@pilot_test
async def test_tab_and_digits_move_between_panes():
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        order = [AllocationTree, Timeline, LiveSet, ValueDetail]
        for expected in order[1:] + order[:1]:
            await pilot.press("tab")
            await pilot.pause()
            assert isinstance(app.focused, expected)
        await pilot.press("shift+tab")
        await pilot.pause()
        assert isinstance(app.focused, ValueDetail)
        await pilot.press("2")
        await pilot.pause()
        assert isinstance(app.focused, Timeline) and screen.active == "timeline"


@pilot_test
async def test_small_terminal_shows_one_pane_at_a_time():
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await started(app, pilot)
        assert screen.compact
        panes = {w.id: w for w in screen.query(".pane")}
        assert [p for p, w in panes.items() if w.display] == ["allocations"]
        await pilot.press("tab")
        await pilot.pause()
        assert [p for p, w in panes.items() if w.display] == ["timeline"]
        assert app.focused is panes["timeline"]
        assert "[2 Timeline]" in screen_text(app)
        await pilot.resize_terminal(160, 50)
        await pilot.pause()
        assert not screen.compact
        assert all(w.display for w in panes.values())


@pilot_test
async def test_expand_and_collapse_an_allocation():
    dump = load(sample(TPU))
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        tree = screen.allocation_tree
        alloc12 = dump.analysis.allocation_of[12]
        before = tree.row_count()
        await pilot.press("enter")
        await pilot.pause()
        assert tree.row_count() == before + len(alloc12.values) == before + 4
        shown = "\n".join(widget_lines(tree))
        for i, slot in enumerate(alloc12.values, 1):
            assert slot.value.label in shown
            assert f"@{slot.offset}" in tree.render_row(i).plain
            assert tree.render_row(i).plain.endswith(slot.shape)  # off screen: scroll right
        await pilot.press("down")
        await pilot.pause()
        first = alloc12.values[0].value.id
        assert screen.selected_value == first
        await pilot.press("left")  # on a value: back to its allocation, collapsed
        await pilot.pause()
        assert tree.row_count() == before and tree.current() == (alloc12, None)
        await pilot.press("right")
        await pilot.pause()
        assert tree.row_count() == before + 4


@pilot_test
async def test_timeline_cursor_shows_the_live_set_at_each_step():
    dump = load(sample(TPU))
    a = dump.analysis
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        await pilot.press("2", "home")
        await pilot.pause()
        timeline, live = screen.timeline, screen.live
        for step in range(a.max_time + 1):
            assert timeline.step == step == screen.step
            ids = [i.value.id for i in live.live]
            assert ids == [i.value.id for i in live_set(a.values, step)]
            assert sum(i.logical_bytes for i in live.live) == a.live_bytes[step]
            status = screen.query_one(StatusBar).step_text.plain
            assert f"step {step}/{a.max_time}" in status
            assert f"{len(ids)} values · {human_bytes(a.live_bytes[step])} logical" in status
            assert f"HBM {human_bytes(a.occupied_bytes[0][step])} occupied" in status
            assert widget_lines(timeline)[0].strip().startswith(f"step {step}/")
            await pilot.press("right")
            await pilot.pause()
        assert timeline.step == a.max_time  # stops at the end
        await pilot.press("h")
        await pilot.pause()
        assert timeline.step == a.max_time - 1


@pilot_test
async def test_p_jumps_to_the_peak():
    dump = load(sample(TPU))
    a = dump.analysis
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        await pilot.press("2", "home")
        await pilot.pause()
        assert screen.timeline.step == 0
        await pilot.press("p")
        await pilot.pause()
        assert screen.timeline.step == a.peak_step == 11
        assert [i.value.id for i in screen.live.live] == [i.value.id for i in a.peak_values]
        assert "Peak breakdown" in screen.live.border_title
        assert "XLA peak" in widget_lines(screen.timeline)[0]


@pilot_test
async def test_m_p_and_colon_move_between_spaces_and_steps():
    """On the TPU seed: the curve starts on HBM (colour 0); ``m`` moves it to VMEM and
    ``P`` to VMEM's fullest step (7: 86.00MiB occupied, its whole allocation); the
    peaks line says XLA's peak (228.00MiB at 11) and the curve's maximum; ``:`` 3
    Enter goes to step 3, a non-number leaves the prompt open and esc closes it."""
    a = load(sample(TPU)).analysis
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        timeline = screen.timeline
        assert timeline.space == 0 and timeline.curve == a.occupied_bytes[0]
        await pilot.press("2", "m")
        await pilot.pause()
        assert timeline.space == 1 and timeline.curve == a.occupied_bytes[1]
        await pilot.press("P")
        await pilot.pause()
        assert timeline.step == timeline.curve_peak_step == 7
        assert max(a.occupied_bytes[1]) == a.memory_spaces[1].peak_bytes == 90177536
        said = "◆ XLA's peak 228.00MiB at 11 · ▲ VMEM occupied 86.00MiB at 7"
        assert timeline.peaks_text().plain == said
        assert widget_lines(timeline)[1].startswith(said[:50])  # drawn under the step
        assert "VMEM 86.00MiB occupied" in screen.query_one(StatusBar).step_text.plain
        await pilot.press("m", "m")  # SMEM, then back to HBM
        await pilot.pause()
        assert timeline.space == 0
        await pilot.press("colon")
        await pilot.pause()
        await pilot.press("3", "enter")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen) and timeline.step == screen.step == 3
        await pilot.press("colon", "x", "enter")
        await pilot.pause()
        assert not isinstance(app.screen, MainScreen)  # "Type a step number."
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen) and timeline.step == 3


@pilot_test
async def test_o_shows_the_figures():
    """``o`` opens the figures: XLA's peak, JAX's memory_analysis() sizes and the
    memory spaces, with the TPU temp note; esc closes it."""
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("o")
        await pilot.pause()
        text = screen_text(app)
        for shown in (
            "XLA's peak        228.00MiB",
            "argument_size_in_bytes  184.00MiB",
            "temp_size_in_bytes       86.05MiB",
            "libtpu",
            "VMEM (color 1)",
        ):
            assert shown in text, shown
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


@pilot_test
async def test_search_finds_fusion_12_and_selects_it_everywhere():
    dump = load(sample(TPU))
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        await pilot.press("slash")
        await pilot.pause()
        assert isinstance(app.screen, SearchScreen)
        await pilot.press(*"fusion.12")
        await pilot.pause()
        assert [i.value.label for i in app.screen.matches] == ["fusion.12"]
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen
        info = next(v for v in dump.analysis.values if v.value.label == "fusion.12")
        assert screen.selected_value == info.value.id == 36
        assert screen.allocation_tree.current()[1].value.id == 36  # expanded to it
        assert screen.timeline.rows[screen.timeline.row].value.id == 36
        assert screen.detail.value_id == 36
        live = screen.live
        assert live.current_value().value.id == 36  # live at the peak step 11


@pilot_test
async def test_search_escape_closes_without_selecting():
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        before = screen.selected_value
        await pilot.press("slash", "p", "escape")
        await pilot.pause()
        assert app.screen is screen and screen.selected_value == before


def test_find_values_matches_name_op_name_and_id():
    values = load(sample(CPU_TRACE)).analysis.values
    assert [i.value.label for i in find_values(values, "ARGS[0]")] == ["args_0_.1"]
    assert [i.value.id for i in find_values(values, "10")] == [10]
    assert len(find_values(values, "args")) == 3
    assert find_values(values, "  ") == []


@pilot_test
async def test_selection_in_the_timeline_follows_in_every_pane():
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        await pilot.press("2")
        await pilot.pause()
        timeline = screen.timeline
        for _ in range(8):
            await pilot.press("j")
        await pilot.pause()
        chosen = timeline.rows[timeline.row].value.id
        assert timeline.row == 8
        assert screen.selected_value == chosen
        assert screen.detail.value_id == chosen
        here = screen.allocation_tree.current()
        assert here[1] is not None and here[1].value.id == chosen
        assert str(timeline.rows[timeline.row].value) in screen.query_one(StatusBar).selection.plain


@pilot_test
async def test_selecting_in_the_tree_shows_it_in_detail_and_timeline():
    dump = load(sample(TPU))
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        await pilot.press("enter", "down", "down")  # allocation 12, its second value
        await pilot.pause()
        value_id = dump.analysis.allocation_of[12].values[1].value.id
        assert screen.selected_value == value_id
        assert screen.detail.value_id == value_id
        assert screen.timeline.rows[screen.timeline.row].value.id == value_id
        detail = plain(screen.detail.value_card(dump.analysis.by_id[value_id]))
        assert re.search(r"^allocation +12 · preallocated-temp", detail, re.M)
        assert re.search(r"^logical +[\d,]+ bytes", detail, re.M)


@pilot_test
async def test_help_lists_every_binding():
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(160, 50)) as pilot:
        await started(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        body = app.screen.query_one(RenderedText)
        assert body.text is help_text() and app.focused is body
        text = "\n".join(strip.text for strip in body.text.lines(app.console, 220))
        sections: dict[str, list[str]] = {}
        titles = {scope.title for scope in SCOPES}
        current = None
        for line in text.splitlines():
            if line.strip() in titles:
                current = sections.setdefault(line.strip(), [])
            elif current is not None:
                current.append(line.strip())
        assert set(sections) == titles
        for scope in SCOPES:
            for key in scope.keys:
                line = next(
                    (ln for ln in sections[scope.title] if ln.startswith(key.display + " ")), None
                )
                assert line is not None, key
                assert key.description in line and key.help.split()[0] in line
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


@pilot_test
async def test_sort_toggle_changes_the_first_row():
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        tree = screen.allocation_tree
        first_row = lambda: tree.row(0)[0].index  # noqa: E731
        assert first_row() == 12 and tree.by_size
        await pilot.press("s")
        await pilot.pause()
        assert first_row() == 0 and not tree.by_size
        assert tree.current()[0].index == 12  # the cursor stays on its allocation
        assert "by index" in tree.border_title
        await pilot.press("s")
        await pilot.pause()
        assert first_row() == 12


@pilot_test
async def test_zoom_keys_change_columns_per_step():
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        await pilot.press("2")
        await pilot.pause()
        timeline = screen.timeline
        before = timeline.n_cols
        await pilot.press("plus")
        await pilot.pause()
        assert timeline.n_cols > before
        await pilot.press("minus", "minus")  # never further out than the whole schedule
        await pilot.pause()
        assert timeline.n_cols == before and timeline.zoom_level is None
        await pilot.press("plus", "plus", "z")
        await pilot.pause()
        assert timeline.n_cols == before and timeline.zoom_level is None


@pilot_test
async def test_command_palette_jumps_to_the_peak():
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        await pilot.press("2", "home")
        await pilot.pause()
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"jump to the peak")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pilot.pause(0.2)
        assert app.screen is screen
        assert screen.timeline.step == 11


@pilot_test
async def test_stack_trace_tree_collapses_and_op_names_are_not_markup():
    dump = load(sample(CPU_TRACE))
    app = HlotopApp(sample(CPU_TRACE))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        await pilot.press("3")
        await pilot.pause()
        live = screen.live
        rows = live.row_count()
        shown = "\n".join(widget_lines(live))
        assert "Stack-trace breakdown" in shown and "args[0]" in shown
        root = next(i for i in range(rows) if live.row(i).kind == "node")
        live.set_cursor(root)
        await pilot.press("enter")
        await pilot.pause()
        assert live.row_count() == rows - len(dump.live_range.stack_trace.roots[0].children)
        await pilot.press("enter")
        await pilot.pause()
        assert live.row_count() == rows
        # The leaf args[0] stands for value 10 (op_name "args[0]"): selecting it selects 10.
        leaf = next(
            i
            for i in range(live.row_count())
            if live.row(i).kind == "node" and live.row(i).node.label == "args[0]"
        )
        await pilot.press(*["down"] * (leaf - root))
        await pilot.pause()
        assert screen.selected_value == 10
        detail = plain(screen.detail.value_card(dump.analysis.by_id[10]))
        assert "args[0]" in detail  # shown literally, not eaten as markup


@pytest.mark.parametrize("seed", SEEDS, ids=lambda p: p.name[:3])
@pilot_test
async def test_every_seed_opens_and_every_pane_renders(seed):
    app = HlotopApp(sample(f"seeds/{seed.name}"))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await started(app, pilot)
        for pane in ("1", "2", "3", "4"):
            await pilot.press(pane, "down", "enter")
            await pilot.pause()
        assert app.return_code is None
        assert screen.dump.name in screen_text(app) or "…" in screen_text(app)


@pilot_test
async def test_not_a_dump_exits_with_code_2(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello, this is not an XLA dump\n")
    app = HlotopApp(str(path))
    message = await exit_after_load(app)
    assert app.return_code == 2
    assert message.startswith(f"hlotop: error: {path}: not an XLA buffer-assignment dump")
    assert "\n" not in message and "Traceback" not in message


@pilot_test
async def test_missing_file_and_load_error_exit_with_code_2(tmp_path):
    def refuse():
        raise LoadError("some/dump.txt", "the file is empty")

    missing = tmp_path / "missing.txt"
    for app, expected in (
        (HlotopApp(str(missing)), f"hlotop: error: {missing}: no such file"),
        (HlotopApp("x", open_dump=refuse), "hlotop: error: some/dump.txt: the file is empty"),
    ):
        message = await exit_after_load(app)
        assert app.return_code == 2
        assert message.startswith(expected)


@pilot_test
async def test_a_bug_while_loading_exits_with_code_70_a_log_and_no_traceback(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))

    def broken():
        raise ValueError("boom")

    app = HlotopApp("x.txt", open_dump=broken)
    message = await exit_after_load(app)
    assert app.return_code == 70
    assert "internal error while loading: ValueError: boom" in message
    log = Path(message.rsplit("details in ", 1)[1])
    assert log.parent == tmp_path / "hlotop" and "boom" in log.read_text()


@pilot_test
async def test_open_dump_is_used_instead_of_load():
    dump = load(sample(TPU))
    app = HlotopApp("anything.txt", open_dump=lambda: dump)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        assert screen.dump is dump


JAX_BIG = (
    "jax/jax-0.10.2/transformer_big/module_0016.jit_transformer_train_step."
    "cpu_after_optimizations-buffer-assignment.txt"
)


@pytest.mark.parametrize(
    "relative", [f"seeds/{p.name}" for p in SEEDS] + [JAX_BIG], ids=lambda r: r.split("/")[1][:12]
)
def test_live_index_matches_live_set_at_every_step_either_way(relative):
    """The live set pane's incremental index agrees with analysis.live_set, walking
    forwards, backwards and jumping."""
    a = load(sample(relative)).analysis
    index = LiveIndex(StepIndex(a.values, a.max_time))
    steps = list(range(a.max_time + 1))
    order = steps + steps[::-1] + [a.max_time, 0, a.max_time // 2, a.max_time // 3]
    for step in order:
        got = index.at(step)
        assert [i.value.id for i in got] == [i.value.id for i in live_set(a.values, step)]
        assert sum(i.logical_bytes for i in got) == a.live_bytes[step]


@pilot_test
async def test_a_selection_folds_the_allocation_it_unfolded_but_not_the_users():
    dump = load(sample(TPU))
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        tree = screen.allocation_tree
        screen.select_value(31)  # in allocation 12
        assert tree.expanded == {12} and tree.current()[1].value.id == 31
        screen.select_value(44)  # in allocation 4: 12 was only unfolded for 31
        assert tree.expanded == {4} and tree.current()[1].value.id == 44
        await pilot.press("left", "up", "enter")  # fold 4; unfold the allocation above it
        await pilot.pause()
        alloc, slot = tree.row(tree.row_of(4))
        assert (alloc.index, slot) == (4, None)
        user = tree.current()[0].index
        assert user in tree.expanded  # unfolded by the user (Enter)
        screen.select_value(31)
        assert user in tree.expanded and 12 in tree.expanded
        rows = [tree.row(i) for i in range(tree.row_count())]
        for alloc in dump.allocations:  # rows are exactly the unfolded allocations' values
            at = tree.row_of(alloc.index)
            assert rows[at] == (alloc, None)
            if alloc.index in tree.expanded:
                assert [s for _, s in rows[at + 1 : at + 1 + len(alloc.values)]] == list(
                    alloc.values
                )


@pilot_test
async def test_no_color_keeps_every_pane_readable(monkeypatch):
    """Under NO_COLOR, Textual greys every colour: the memory spaces must still read as
    text (S(1) VMEM) and as distinct timeline fills, and the cursor as a gutter mark."""
    monkeypatch.setenv("NO_COLOR", "1")
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("enter", "2", "3", "4", "1")
        await pilot.pause()
        text = screen_text(app)
        assert "S(1) VMEM" in text and "S(2) SMEM" in text
        assert "▓" in text and "▒" in text and "█" in text
        assert "▶" in text  # the focused cursor row
        assert app.return_code is None


@pilot_test
async def test_a_value_without_live_range_is_not_shown_as_selected_where_it_is_absent():
    """x.25 is thread-local (no live range): the timeline and the live set must not
    keep highlighting the previously selected value as if it were the selection."""
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        screen.select_value(36)
        assert screen.timeline.row_selected and screen.live.shows_selection
        await pilot.press("slash", *"x.25", "enter")
        await pilot.pause()
        assert screen.selected_value == 4
        assert (
            screen.allocation_tree.current()[1].value.id == 4
            and screen.allocation_tree.shows_selection
        )
        assert not screen.timeline.row_selected and not screen.live.shows_selection
        assert not any(line.startswith(("▶", "›")) for line in widget_lines(screen.timeline))
        assert not any(line.startswith(("▶", "›")) for line in widget_lines(screen.live))
        assert "live range" in plain(screen.detail.value_card(screen.dump.analysis.by_id[4]))


@pilot_test
async def test_control_characters_in_dump_text_never_reach_the_terminal(tmp_path):
    """An op_name is CEscaped in the dump and unescaped by the parser: an ESC sequence
    (here an OSC title change) must show as visible \\x1b text, not act."""
    text = (
        open(sample(CPU_TRACE))
        .read()
        .replace('op_name="args[0]"', 'op_name="args[0]\\033]0;pwned\\007"')
    )
    path = tmp_path / "evil.txt"
    path.write_text(text)
    dump = load(str(path))
    assert "\x1b" in dump.analysis.by_id[10].op_name
    app = HlotopApp(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        screen.select_value(10)
        await pilot.press("3")
        await pilot.pause()
        shown = screen_text(app)
        card = plain(screen.detail.value_card(dump.analysis.by_id[10]))
        assert "\x1b" not in shown and "\x07" not in shown and "\x1b" not in card
        assert "args[0]\\x1b]0;pwned\\x07" in card


@pilot_test
async def test_mouse_clicks_select_rows_steps_and_tabs():
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        tree, timeline = screen.allocation_tree, screen.timeline
        # Offsets count the border: line 1 is the column header, line 2 row 0, ...
        await pilot.click(AllocationTree, offset=(5, 4))
        await pilot.pause()
        assert tree.cursor == 2 and tree.current()[0].index == 2  # 12, 1, 2 by size
        await pilot.click(Timeline, offset=(timeline.label_w + 5, timeline.header_height + 3))
        await pilot.pause()
        assert app.focused is timeline
        assert timeline.step == timeline.step_of(4) and timeline.row == 2
        assert screen.selected_value == timeline.rows[2].value.id
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await started(app, pilot)
        tabs = screen.query_one("#tabs")
        x = tabs.render().plain.index("3 Live set")
        await pilot.click("#tabs", offset=(x + 1, 0))  # + 1: the tab bar's left padding
        await pilot.pause()
        assert screen.active == "live" and isinstance(app.focused, LiveSet)


# -- opening big dumps: a lazy load, then every record read in the background -----------


@pytest.fixture(scope="module")
def ten_mb_dump(tmp_path_factory) -> str:
    """A ~12 MB combined dump (14 470 values) made by the benchmark suite's generator:
    big enough that the background pass takes a second or more."""
    out = tmp_path_factory.mktemp("bench")
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "make_dumps.py"),
            "--size-mb",
            "10",
            "--out",
            str(out),
        ],
        check=True,
        capture_output=True,
    )
    return str(out / "combined-10mb-buffer-assignment.txt")


def summary_text(app) -> str:
    return app.screen.query_one(SummaryBar).render().plain


@pilot_test
async def test_a_big_dump_opens_lazily_and_its_records_are_read_in_the_background(
    ten_mb_dump, monkeypatch
):
    import hlotop.ui.apps.app as app_module

    calls = []
    real_load = app_module.load

    def spy(path, **kwargs):
        calls.append(kwargs)
        return real_load(path, **kwargs)

    monkeypatch.setattr(app_module, "load", spy)
    app = HlotopApp(ten_mb_dump)
    async with app.run_test(size=(120, 40)) as pilot:
        while "painted" not in app.milestones:
            await asyncio.sleep(0.01)
        # The load gives way to keys and says what it reads (each stage reaches the
        # app: the last one is shown); its head was shown first.
        stage = calls[0].pop("stage") if len(calls) == 1 else None
        assert calls == [{"lazy": True, "pause": app.yield_to_input}] and callable(stage)
        assert app.load_stage == "analysing"  # the last stage of the load
        assert app.milestones["preview"] < app.milestones["painted"]
        assert isinstance(app.screen, MainScreen) and not app.dump.records_read
        status = app.screen.query_one(StatusBar)
        while status.progress is None and not app.dump.records_read:
            await asyncio.sleep(0.01)
        await pilot.pause()
        if not app.dump.records_read:  # it reports every 1024 records
            done, total, _ = status.progress
            assert 0 < done < total == len(app.dump.used_values)
            assert "reading value records" in screen_text(app)
            assert " diagnostics so far" in summary_text(app)  # the count is not final
        await app.wait_until_loaded()
        await pilot.pause()
        assert app.dump.records_read and status.progress is None
        assert "reading" not in screen_text(app)
        n = len(app.dump.diagnostics)
        assert f" {n} diagnostic{'s' if n != 1 else ''}" in summary_text(app)
        assert "so far" not in summary_text(app)
        assert "records" in app.milestones
        await pilot.press("q")
    assert app.return_code == 0


@pilot_test
async def test_a_bad_record_line_is_found_by_the_background_pass(tmp_path):
    lines = open(sample(TPU)).read().split("\n")
    at = lines.index(" uses:") + 1  # the first record's uses, before its entries
    lines.insert(at, "this is not a record line")
    path = tmp_path / "bad-record.txt"
    path.write_text("\n".join(lines))
    app = HlotopApp(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await app.wait_until_loaded()
        await pilot.pause()
        assert app.dump.records_read and len(app.dump.diagnostics) == 1
        assert " 1 diagnostic, 1 error (d)" in summary_text(app)
        await pilot.press("d")
        await pilot.pause()
        assert isinstance(app.screen, DiagnosticsScreen)
        listed = screen_text(app)
        assert f"{path}:{at + 1}" in listed and "this is not a record line" in listed


@pilot_test
async def test_q_during_the_background_pass_exits_at_once(ten_mb_dump, monkeypatch):
    from hlotop.loading.loader import ModuleDump

    returned = threading.Event()
    real_read = ModuleDump.read_records

    def read_records(self, progress=None):
        try:
            real_read(self, progress)
        finally:
            returned.set()

    monkeypatch.setattr(ModuleDump, "read_records", read_records)
    app = HlotopApp(ten_mb_dump)
    async with app.run_test(size=(80, 24)) as pilot:
        while "painted" not in app.milestones:  # the whole dump, after its preview
            await asyncio.sleep(0.01)
        status = app.screen.query_one(StatusBar)
        while status.progress is None:  # the pass has reported
            await asyncio.sleep(0.01)
        assert not app.dump.records_read
        await pilot.press("q")
    assert app.return_code == 0
    # The pass stops at its next progress report (every 1024 records), part-way: not
    # at the end of the dump (a wall-clock bound here failed on a busy machine).
    assert await asyncio.to_thread(returned.wait, 5)
    assert not app.dump.records_read  # stopped part-way; a later call starts over


@pilot_test
async def test_q_during_the_first_load_exits_at_once(monkeypatch):
    """The lazy load cannot be stopped half-way: its thread is left behind and the app
    ends without waiting for it."""
    release = threading.Event()

    def slow_load():
        release.wait(10)
        return load(sample(TPU))

    app = HlotopApp("slow.txt", open_dump=slow_load)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, LoadingScreen)
        assert "Loading slow.txt" in screen_text(app)
        started = time.perf_counter()
        await pilot.press("q")
    assert time.perf_counter() - started < 1.0
    assert app.return_code == 0 and app.dump is None
    release.set()


@pilot_test
async def test_search_on_a_big_dump_runs_in_a_worker_and_agrees_with_find_values(ten_mb_dump):
    """Above 2000 values the search reads op_names in a thread worker, filling the list
    in; its final matches are find_values' (same ranking), and keys keep working."""
    app = HlotopApp(ten_mb_dump)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        values = app.dump.analysis.values
        for query in ("fusion.1",):
            await pilot.press("slash", *query)
            screen = app.screen
            assert isinstance(screen, SearchScreen)
            while screen.searching:
                await asyncio.sleep(0.02)
            await pilot.pause()
            expected = find_values(values, query)
            assert expected and [i.value.id for i in screen.matches] == [
                i.value.id for i in expected
            ]
            label = str(screen.query_one("#search-count").render())
            assert label.startswith(f"{len(expected):,} match") and "so far" not in label
            await pilot.press("escape")
            await pilot.pause()


def test_the_pass_and_the_panes_read_records_at_once(ten_mb_dump):
    """The background pass and the UI thread both parse records (the panes read
    op_names): the records collection is safe to read from both at once, with no lock
    or patch of the app's (an eviction from its cache raced with another raised
    KeyError, which stopped the pass within seconds whenever keys were pressed)."""
    dump = load(ten_mb_dump, lazy=True)
    failed: list[BaseException] = []

    def read():
        try:
            dump.read_records()
        except BaseException as err:  # noqa: BLE001 - asserted below
            failed.append(err)

    worker = threading.Thread(target=read)
    worker.start()
    values = dump.analysis.values
    step = 0
    while worker.is_alive():
        step = (step + 7919) % len(values)
        _ = values[step].op_name  # the panes' way in: a record parsed on the UI thread
    worker.join()
    assert not failed and dump.records_read


@pilot_test
async def test_the_status_bar_cuts_the_step_before_the_selection():
    """At 80 columns while a big dump loads, the selection ("values: loading…"), the
    step and what is loading do not fit: the step is cut first, then left out, and the
    selection is never cut inside (its own ellipsis got a second one: "loading……")."""
    from rich.text import Text
    from textual.app import App

    class Bar(App):
        def compose(self):
            yield StatusBar()

    app = Bar()
    async with app.run_test(size=(80, 3)) as pilot:
        bar = app.query_one(StatusBar)
        selection = "▶ allocation 2 4.00MiB, values: loading…"
        bar.selection = Text(selection)
        bar.set_step_text(Text("step 26668/54347 broadcast_multiply_fusion ◆ XLA peak"))
        bar.set_note("analysing… 2 s")
        await pilot.pause()
        line = bar.render().plain
        assert line.startswith(selection + " │ step 26668/")
        assert line.split(" │ ")[1].endswith("…")  # the step, cut
        assert line.endswith(" │ analysing… 2 s") and len(line) == 80
        bar.set_note("reading all 43.95MiB: analysing… 2 s")  # as in the browser at 80x24
        await pilot.pause()
        line = bar.render().plain
        assert line.startswith(selection + " ") and "step" not in line and "……" not in line
        assert line.endswith(" │ reading all 43.95MiB: analysing… 2 s") and len(line) == 80
        bar.set_note(None)  # loaded: the step has the whole width, cut with an ellipsis
        line = bar.render().plain
        assert line.endswith(" │ step 26668/54347 broadcast_multiply_…") and len(line) == 80


@pilot_test
async def test_an_allocation_card_shows_the_page_jax_0_11_prints():
    path = sample(
        "jax-0.11.2/cpu_step/module_0008.jit_step.cpu_after_optimizations-buffer-assignment.txt"
    )
    app = HlotopApp(path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        alloc = app.dump.analysis.allocation_of[1]
        card = plain(screen.detail.allocation_card(alloc))
        assert re.search(r"^page +0 *$", card, re.M)
        assert re.search(r"^size +2,097,152 bytes \(2\.00MiB\)", card, re.M)
    seed = HlotopApp(sample(TPU))  # a dump that prints no page has no page row
    async with seed.run_test(size=(120, 40)) as pilot:
        screen = await started(seed, pilot)
        card = plain(screen.detail.allocation_card(seed.dump.analysis.allocation_of[12]))
        assert "page" not in card
