"""What misled users who came from htop, less and pprof (issue 34), each checked as
the user met it: keys in, what the screen shows out."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from rich.console import Console
from test_ui_first_use import JAX_BIG, burst
from textual.widgets import Input

from conftest import ROOT, SAMPLES, sample
from hlotop.analysis.devices import parse_capacity
from hlotop.loading.loader import load
from hlotop.parse.oom import parse_oom
from hlotop.report.oom_report import render_oom
from hlotop.report.summary import print_summary
from hlotop.report.trailing_spaces import TrailingSpacesDropped
from hlotop.ui.apps.app import HlotopApp
from hlotop.ui.apps.modules_app import ModulesApp
from hlotop.ui.apps.text_app import TextApp
from hlotop.ui.base.textual_compat import screen_lines
from hlotop.ui.screens.diagnostics import DiagnosticsScreen
from hlotop.ui.screens.goto_step import GotoStepScreen
from hlotop.ui.screens.help import HelpScreen
from hlotop.ui.screens.loading import LoadingScreen
from hlotop.ui.screens.overview import OverviewScreen, figures_renderable
from hlotop.ui.widgets.diagnostic_list import DiagnosticList
from hlotop.ui.widgets.grouped_view import bar
from hlotop.ui.widgets.legend import space_fill
from hlotop.ui.widgets.rendered_text import RenderedText
from hlotop.ui.widgets.scroll_body import ScrollBody
from pilot import TPU, notes, pilot_test, plain, screen_text, started, widget_lines

# 188 values live at XLA's peak (step 262), 92 at step 100
GPT_LOOP = "cpu/gpt_loop/module_0004.jit_gpt_train_step.cpu_after_optimizations"
GPT_LOOP += "-buffer-assignment.txt"


# -- the peak breakdown after p ---------------------------------------------------------


@pilot_test
async def test_p_opens_the_peak_breakdown_at_its_largest_rows():
    """At step 100 the live set's cursor rests on its first row (3923), which the user
    never chose (the tree's allocation is the selection). ``p`` used to follow that
    value to its row at the peak (the 50th), scrolling the largest values away; the
    peak breakdown now opens at its top, nothing drawn as the selection."""
    app = HlotopApp(sample(GPT_LOOP))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await started(app, pilot)
        assert screen.selected_value is None  # allocation 235, 333 values
        await pilot.press("2", "colon", "1", "0", "0", "enter", "3")
        await pilot.pause()
        live = screen.live
        assert live.step == 100 and live.current_value().value.id == 3923
        await pilot.press("p")
        await pilot.pause()
        a = screen.dump.analysis
        assert live.step == a.peak_step == 262
        assert live.live.index_of(3923) == 49  # where the cursor used to go
        assert live.cursor == 0 and live.scroll_offset.y == 0
        assert live.current_value().value.id == a.peak_values[0].value.id
        assert not live.shows_selection and screen.selected_value is None


@pilot_test
async def test_a_value_the_user_chose_is_followed_to_the_peak():
    """A value chosen in the live set stays under the cursor at another step where it
    is live, and the list opens at the top at a step where it is not."""
    app = HlotopApp(sample(GPT_LOOP))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await started(app, pilot)
        await pilot.press("3", "j", "j", "j")
        await pilot.pause()
        live = screen.live
        chosen = live.current_value().value.id
        assert screen.selected_value == chosen == 3540  # the 4th row at the peak
        await pilot.press("2", "colon", "1", "0", "0", "enter", "3")
        await pilot.pause()
        assert live.live.index_of(chosen) is None  # not live at step 100
        assert live.cursor == 0 and live.scroll_offset.y == 0 and not live.shows_selection
        await pilot.press("p")
        await pilot.pause()
        assert live.cursor == 3 and live.current_value().value.id == chosen
        assert live.shows_selection


# -- the zoomed timeline ------------------------------------------------------------------


def _axis_ticks(timeline) -> list[tuple[int, int]]:
    """The step numbers the axis line shows, each with its column among the bars."""
    axis = timeline.render_line(timeline.curve_height + 2).text[timeline.label_w :]
    return [(int(m.group()), m.start()) for m in re.finditer(r"\d+", axis)]


@pilot_test
async def test_each_step_on_the_zoomed_axis_is_drawn_at_its_own_column():
    """Zoomed in twice at 120x40, the bars start at column 20 (step 160): the tick of
    step 150 began two columns to the left, and its last digit, drawn in the first
    column, read "step 0"; the tick of 350 at the right edge read "35". Every number
    on the axis is now a whole step number at its own column."""
    app = HlotopApp(sample(GPT_LOOP))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        await pilot.press("2", "plus", "plus")
        await pilot.pause()
        timeline = screen.timeline
        sx = timeline.scroll_offset.x
        assert timeline.zoom == (8, 1) and sx == 20
        ticks = _axis_ticks(timeline)
        assert [step for step, _ in ticks] == [200, 250, 300]
        for step, col in ticks:
            assert timeline.col_of(step)[0] - sx == col


@pilot_test
async def test_zoom_keys_typed_with_the_pane_switch_zoom_in():
    """``2 + +`` typed at once at 80x24: the timeline had no size yet when ``+`` came,
    the fitting zoom was worked out for one column and ``+ +`` zoomed out to 128 steps
    a column (four columns). They now zoom in two levels from the fitting one, with
    the step cursor's marker on screen."""
    app = HlotopApp(sample(GPT_LOOP))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await started(app, pilot)
        burst(app, "2", "plus", "plus")
        await pilot.pause()
        await pilot.pause()
        timeline = screen.timeline
        assert timeline.zoom_level == timeline.fit_level(timeline.bar_w) + 2
        assert timeline.zoom == (4, 1) and timeline.n_cols > timeline.bar_w
        marker = timeline.render_line(timeline.header_height - 1).text
        first, _ = timeline.col_of(timeline.step)
        assert marker[timeline.label_w + first - timeline.scroll_offset.x] == "▼"


@pilot_test
async def test_zooming_out_stops_at_the_whole_schedule():
    """On the TPU seed (16 steps), ``-`` from fit squeezed the schedule into 16, 8,
    4, then 2 columns of a 45-column pane; it now stays at fit and says so."""
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await started(app, pilot)
        await pilot.press("2")
        await pilot.pause()
        timeline = screen.timeline
        fit = timeline.n_cols
        assert timeline.zoom_level is None and fit == 32  # 2 columns a step
        await pilot.press("minus", "minus", "minus")
        await pilot.pause()
        assert timeline.zoom_level is None and timeline.n_cols == fit
        assert "whole schedule is shown" in notes(app)
        await pilot.press("plus", "minus")
        await pilot.pause()
        assert timeline.zoom_level is None and timeline.n_cols == fit


# -- the grouped view's bars -----------------------------------------------------------


@pilot_test
async def test_grouped_bars_are_shares_of_the_steps_total():
    """At gpt_loop's peak, grouped by phase,scope: forward holds 77.0% of the step,
    and its largest scope, GPT/Block_*/attn, 29.6%. Scaled to its largest sibling,
    that scope drew the same full bar as forward (and backward, 11.9%, a full bar
    beside argument's); each bar is now its row's share of the step's total."""
    app = HlotopApp(sample(GPT_LOOP))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        await pilot.press("v")
        await app.workers.wait_for_complete()
        await pilot.pause()
        view = screen.grouped_view
        total = view.group_tree.total
        width = view.bar_w
        start = len(f"{'':>9} {'':>6} {'':>6} ")
        bars = {}
        for i, node in enumerate(view.rows):
            drawn = view.render_row(i).plain[start : start + width]
            bars[node.label] = drawn.rstrip()
            assert drawn == bar(node.bytes, total, width)
        forward, attn = (
            next(n for n in view.rows if n.label == k) for k in ("forward", "GPT/Block_*/attn")
        )
        assert f"{100 * forward.bytes / total:.1f}" == "77.0"
        assert f"{100 * attn.bytes / total:.1f}" == "29.6"
        assert len(bars["GPT/Block_*/attn"]) < len(bars["forward"]) < width


# -- the param key -----------------------------------------------------------------------


@pilot_test
async def test_param_names_entry_parameters_without_an_op_name():
    """The TPU seed's entry parameters (p0.1 .. p4.10) have no op_name. Grouped by
    ``phase,param``, they are arguments by phase and were "(not a parameter)" by
    param; each is now its allocation line's "parameter N"."""
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        await pilot.press("v", "B")
        await pilot.pause()
        app.screen.query_one(Input).value = "phase,param"
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        view = screen.grouped_view
        argument = next(n for n in view.rows if n.label == "argument")
        if argument.key not in view.expanded:
            view.toggle_node(argument, True)
        await pilot.pause()
        params = [n.label for n in view.rows if n.depth == 1 and n.key[1] == "argument"]
        assert "(not a parameter)" not in params
        assert sorted(params) == [
            "parameter 0",
            "parameter 1",
            "parameter 2",
            "parameter 3",
            "parameter 4",
        ]
        other = next(n for n in view.rows if n.label == "other")
        view.toggle_node(other, True)
        await pilot.pause()
        assert [n.label for n in view.rows if n.depth == 1 and n.key[1] == "other"] == [
            "(not a parameter)"
        ]
        await pilot.pause()
        assert "▸ parameter 4" in screen_text(app)


# -- keys that did nothing ------------------------------------------------------------------


@pilot_test
@pytest.mark.parametrize(
    "key, screen_class", [("question_mark", HelpScreen), ("o", OverviewScreen)]
)
async def test_j_k_g_G_scroll_the_help_and_the_figures(key, screen_class):
    """As in less: j and k scroll a line, G to the end and g back to the top."""
    app = HlotopApp(sample(GPT_LOOP))
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        await pilot.press(key)
        await pilot.pause()
        assert isinstance(app.screen, screen_class)
        body = app.focused
        assert body is not None and body.screen is app.screen and body.max_scroll_y > 2
        await pilot.press("j", "j", "j")
        await pilot.pause()
        assert body.scroll_offset.y == 3
        await pilot.press("k")
        await pilot.pause()
        assert body.scroll_offset.y == 2
        await pilot.press("G")
        await pilot.pause()
        assert body.scroll_offset.y == body.max_scroll_y
        await pilot.press("g")
        await pilot.pause()
        assert body.scroll_offset.y == 0


@pilot_test
async def test_j_k_scroll_the_out_of_memory_text():
    path = SAMPLES / "oom" / "tpu-jax-2024-largest-program-allocations.txt"
    app = TextApp("out of memory", render_oom(parse_oom(path.read_text(), path.name)))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        body = app.query_one(ScrollBody)
        assert app.focused is body and body.max_scroll_y > 2
        await pilot.press("j", "j")
        await pilot.pause()
        assert body.scroll_offset.y == 2
        await pilot.press("k")
        await pilot.pause()
        assert body.scroll_offset.y == 1


@pilot_test
async def test_m_with_one_memory_space_says_so():
    """gpt_loop (the CPU) has one memory space: ``m`` changed nothing and said
    nothing; it now says the curve already shows the only one."""
    app = HlotopApp(sample(GPT_LOOP))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await started(app, pilot)
        assert list(screen.dump.analysis.occupied_bytes) == [0]
        await pilot.press("m")
        await pilot.pause()
        assert screen.timeline.space == 0
        assert "this dump's only memory space" in notes(app)


@pilot_test
async def test_a_step_past_the_last_is_refused_with_the_range():
    """``:`` 9999 on a schedule of steps 0..484 was clamped to 484 without a word (at
    484 already: nothing happened); the prompt now stays open and says the range."""
    app = HlotopApp(sample(GPT_LOOP))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await started(app, pilot)
        await pilot.press("2", "end", "colon", "9", "9", "9", "9", "enter")
        await pilot.pause()
        assert isinstance(app.screen, GotoStepScreen)
        assert "No step 9999: the schedule's steps are 0 to 484." in screen_text(app)
        field = app.screen.query_one(Input)
        field.value = "300"
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen and screen.timeline.step == 300


@pilot_test
async def test_ctrl_c_quits():
    """ctrl+c showed Textual's "press ctrl+q to quit" notice; it now quits, from the
    main screen as from a text box with nothing selected in it."""
    for keys in (("ctrl+c",), ("question_mark", "ctrl+c"), ("slash", "f", "u", "ctrl+c")):
        app = HlotopApp(sample(TPU))
        async with app.run_test(size=(80, 24)) as pilot:
            await started(app, pilot)
            await pilot.press(*keys)
            await pilot.pause()
            assert app.return_code == 0, keys
            assert "quit" not in notes(app)


@pilot_test
async def test_ctrl_c_copies_the_text_selected_in_a_text_box():
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        await pilot.press("slash", "f", "u")
        await pilot.pause()
        field = app.screen.query_one(Input)
        field.select_all()
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.return_code is None and app.clipboard == "fu"


@pilot_test
async def test_ctrl_c_quits_the_out_of_memory_text():
    path = SAMPLES / "oom" / "gpu-jax-2024-peak-buffers.txt"
    app = TextApp("out of memory", render_oom(parse_oom(path.read_text(), path.name)))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.return_code == 0


@pilot_test
async def test_the_command_palette_finds_export(tmp_path, monkeypatch):
    """ "export" found nothing (the entry read "Write the live set as CSV"); it now
    finds the entry, and Enter writes the CSV."""
    monkeypatch.setenv("HLOTOP_EXPORT_DIR", str(tmp_path))
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await started(app, pilot)
        await pilot.press("ctrl+p", *"export")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pilot.pause(0.2)
        assert app.screen is screen
        assert [p.suffix for p in tmp_path.iterdir()] == [".csv"]


MLP_ADAM = SAMPLES / "cpu" / "mlp_adam"
MLP_ADAM_PREFIX = "module_0000.jit_train_step.cpu_after_optimizations"


@pilot_test
async def test_enter_on_a_bad_line_of_a_report_alone_goes_to_its_allocation(tmp_path):
    """mlp_adam's memory-usage report (era B) read alone, the rule under its second
    table's column line (line 8) garbled: Enter said the diagnostic "concerns the whole file" and stayed
    (a report alone has no allocation of a buffer assignment to go to); it now puts
    pane 1's cursor on that table, the allocation the report lists there."""
    report = (MLP_ADAM / f"{MLP_ADAM_PREFIX}-memory-usage-report.txt").read_text().split("\n")
    assert report[6].startswith("  cumulative_size;") and report[7].startswith("  ---")
    report[7] = "garbage report line"
    path = tmp_path / f"{MLP_ADAM_PREFIX}-memory-usage-report.txt"
    path.write_text("\n".join(report))
    app = HlotopApp(str(path))
    async with app.run_test(size=(80, 24)) as pilot:
        main = await started(app, pilot)
        await pilot.press("d")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DiagnosticsScreen)
        row = next(i for i, d in enumerate(screen.diagnostics) if d.line == 8)
        screen.query_one(DiagnosticList).set_cursor(row, notify=True)
        await pilot.pause()
        assert "⏎ goes to default table 2 of the memory-usage report" in screen_text(app)
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is main and main.active == "allocations"
        tree = main.allocations_pane
        assert tree.cursor == 1 and tree.listings[1].number == 2


@pilot_test
async def test_enter_on_a_bad_line_of_the_hlo_text_says_there_is_nothing_there(tmp_path):
    """A line of the HLO text beside the dump (its stack frames) garbled: Enter said
    the diagnostic "concerns the whole file"; it names the line and why it leads
    nowhere, and the list stays open."""
    for f in MLP_ADAM.iterdir():
        shutil.copyfile(f, tmp_path / f.name)
    text = tmp_path / f"{MLP_ADAM_PREFIX}.txt"
    lines = text.read_text().split("\n")
    lines[4] = "   garbage in the module text"
    text.write_text("\n".join(lines))
    app = HlotopApp(str(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("d")
        await pilot.pause()
        screen = app.screen
        row = next(i for i, d in enumerate(screen.diagnostics) if d.path == str(text))
        assert screen.diagnostics[row].line == 5
        screen.query_one(DiagnosticList).set_cursor(row, notify=True)
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen
        said = f"Line 5 of {text.name} is near no allocation or value that was read"
        assert said in notes(app) and "whole file" not in notes(app)


# -- keys typed before the first paint ------------------------------------------------------


def held_load(path: str):
    """An app on ``path`` whose load waits for ``go.set()``, and that event: keys can
    be typed while its loading screen shows, however fast the machine."""
    go = threading.Event()

    def load_when_told():
        assert go.wait(30)
        return load(path, lazy=True)

    return HlotopApp(path, open_dump=load_when_told), go


@pilot_test
async def test_keys_typed_while_the_dump_loads_reach_the_main_screen():
    """``2 end`` typed as the browser starts, while the loading screen shows: the
    loading screen had no use for them and they were lost (the tree kept the focus,
    the step stayed at the peak). They now reach the main screen once it is there."""
    app, go = held_load(sample(GPT_LOOP))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("2", "end")
        assert isinstance(app.screen, LoadingScreen)
        go.set()
        screen = await started(app, pilot)
        await pilot.pause()
        assert screen.active == "timeline" and app.focused is screen.timeline
        assert screen.timeline.step == screen.dump.analysis.max_time == 484


@pilot_test
async def test_q_while_the_dump_loads_still_quits_at_once():
    """The keys kept for the main screen are not the app's own: q quits at once."""
    app, go = held_load(sample(GPT_LOOP))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("2", "q")
        await pilot.pause()
        assert app.return_code == 0 and isinstance(app.screen, LoadingScreen)
        go.set()


# -- 80x24 ---------------------------------------------------------------------------------


@pilot_test
async def test_names_are_cut_at_their_end():
    """At 80 columns the header has 13 cells for the seed's name: it read
    ``003_a…3bac68``, two names' ends joined; it is now cut at its end, as ls and
    htop cut."""
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        header = screen_lines(app.screen)[0]
        assert header.startswith(" 003_a3085531… │ total 286.05MiB │")


@pilot_test
async def test_lines_cut_at_80_columns_end_in_an_ellipsis():
    """The TPU gpt_loop at 80x24 with ``--capacity v5e``: the header, the timeline's
    step and capacity lines, the live set's summary and the status bar are longer
    than the screen; each was cut at the edge ("· HBM", "capacity 16.00"), read as
    whole. Each now ends in "…" left of its pane's scrollbar."""
    path = sample("tpu/v5e_1x1-gpt_loop")
    app = HlotopApp(path, capacity=(16 * 2**30, "v5e"))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await started(app, pilot)
        header, status = screen_lines(app.screen)[0], screen_lines(app.screen)[-2]
        assert header.rstrip().endswith("headroom 15.99GiB …")
        assert status.rstrip().endswith("◆ XLA peak ·…")
        timeline = screen.timeline
        await pilot.press("2")
        await pilot.pause()
        width = timeline.scrollable_content_region.width
        step, peaks = (timeline.render_line(y).text for y in (0, 1))
        assert step[:width].endswith("HBM…") and not step[width:].strip()
        assert peaks[:width].endswith("capacity 16.0…")
        await pilot.press("3")
        await pilot.pause()
        live = screen.live
        summary = live.render_line(0).text
        assert summary[: live.scrollable_content_region.width].endswith("allocat…")


@pilot_test
@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
async def test_the_export_notification_breaks_its_path_only_between_words(size, monkeypatch):
    """``e`` at 80x24 said ``188 values written to /tmp/…/hlotop-module_0004.j`` /
    ``it_gpt_train_step…``: the notification, 40 cells wide, folded the path inside
    its words. The path now has lines of its own, broken only after a / . _ or -, each
    drawn whole; at 160 columns it is one line, to copy."""
    with tempfile.TemporaryDirectory(prefix="hx") as folder:  # /tmp/hx…: a short path
        monkeypatch.setenv("HLOTOP_EXPORT_DIR", folder)
        app = HlotopApp(sample(GPT_LOOP))
        async with app.run_test(size=size, notifications=True) as pilot:
            await started(app, pilot)
            await pilot.press("e")
            await app.workers.wait_for_complete()
            await pilot.pause(0.3)
            message = notes(app).split("\n")
            start = message.index("188 values written to")
            lines = message[start + 1 :]
            (written,) = Path(folder).iterdir()
            assert "".join(lines) == str(written)
            assert all(line[-1] in "/._-" for line in lines[:-1])
            shown = screen_text(app)
            assert all(line in shown for line in lines)
            assert len(lines) == (1 if size == (160, 50) else 2)


@pilot_test
async def test_an_op_name_in_the_detail_is_broken_after_a_slash():
    """Value 3668's op_name at 80x24 was folded inside ``bqhd,bkh`` / ``d->bhqk``; it
    is now broken after a ``/`` of its name scope."""
    app = HlotopApp(sample(GPT_LOOP))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await started(app, pilot)
        screen.select_value(3668, open_detail=True)
        await pilot.pause()
        await pilot.press(*"jjjjjjjj")  # the op_name's row is the 15th
        await pilot.pause()
        op_name = screen.dump.analysis.by_id[3668].used.instruction.op_name
        assert (
            op_name
            == "jit(gpt_train_step)/transpose(jvp(GPT))/Block_2/attn/bqhd,bkhd->bhqk/dot_general"
        )
        lines = [line.rstrip() for line in widget_lines(screen.detail)]
        at = next(i for i, line in enumerate(lines) if line.startswith("op_name "))
        assert lines[at : at + 2] == [
            "op_name      jit(gpt_train_step)/transpose(jvp(GPT))/",
            "             Block_2/attn/bqhd,bkhd->bhqk/dot_general",
        ]


@pilot_test
async def test_the_padded_values_are_named_whole_at_80_columns():
    """The figures (``o``, and ``--summary``) of the TPU gpt_loop list the most padded
    values; at 80 columns three of them read ``reduce_sum.4…``, one cut name for
    reduce_sum.423, .424 and .425. Each is now whole (a long name wraps after . _ -,
    a shape at its commas and braces)."""
    app = HlotopApp(sample("tpu/v5e_1x1-gpt_loop"))
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        await pilot.press("o")
        await pilot.pause()
        screen = app.screen
        width = screen.query_one(RenderedText).line_width
        assert width < 80
        shown = plain(figures_renderable(screen.dump), width=width)  # as the screen draws it
        table = shown[shown.index("Most padding") :]
        assert "…" not in table
        for n in (423, 424, 425):  # wrapped after "reduce_" in the modal's 66 cells
            assert re.search(rf"HBM +reduce_ .*\n +sum\.{n} ", table)


@pilot_test
async def test_the_modules_view_shows_the_column_it_is_sorted_by():
    """At 80x24 the modules view leaves out five columns, temp among them: ``s`` to
    "by temp" sorted the rows by a column not on screen. The sort column stays
    (another gives way), its title underlined."""
    app = ModulesApp(sample("dirs/jax-0.10.2-cpu-train"))
    async with app.run_test(size=(80, 24)) as pilot:
        await app.wait_until_ranked()
        await pilot.pause()
        modules = app.screen.list
        assert "temp" in modules.hidden and modules.sort == "peak"
        await pilot.press("s", "s", "s")
        await pilot.pause()
        assert modules.sort == "temp"
        (header,) = modules.header_lines()
        assert "temp" not in modules.hidden and "temp" in header.plain.split()
        underlined = [
            header.plain[span.start : span.end].strip()
            for span in header.spans
            if "underline" in str(span.style)
        ]
        assert underlined == ["temp"]
        assert "    temp " in screen_text(app)


def test_diff_summary_keeps_an_arrow_on_one_line():
    """``hlotop diff --summary`` at 80 columns wrapped the scope
    ``bhqk,bkhd->bqhd`` (an einsum) as ``bhqk,bkhd-`` / ``>bqhd``: a name breaks
    after ``-``, but not inside ``->``."""
    run = subprocess.run(
        [sys.executable, "-m", "hlotop", "diff", "--summary"]
        + [str(SAMPLES / "cpu" / x) for x in ("transformer_loop", "transformer_scan")],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "80", "PYTHONPATH": str(ROOT / "tui")},
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.split("\n")
    assert not [
        a
        for a, b in zip(lines, lines[1:], strict=False)
        if a.rstrip().endswith("-") and b.strip().startswith(">")
    ]
    assert re.search(r"^forward +bhqk,bkhd->bqhd +1\.00MiB", run.stdout, re.M)


# -- piped reports ------------------------------------------------------------------------


def test_a_piped_summary_has_no_trailing_spaces():
    """``hlotop --summary`` into a pipe: Rich padded every table row to the console's
    160 columns (a line of gpt_loop's report ended in 90 spaces). The lines are the
    same less those spaces."""
    path = str(SAMPLES / "cpu" / "gpt_loop")
    run = subprocess.run(
        [sys.executable, "-m", "hlotop", "--summary", path],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "tui")},
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert not [line for line in run.stdout.split("\n") if line.endswith(" ")]
    padded = io.StringIO()
    print_summary(load(path), Console(file=padded, width=160, highlight=False, emoji=False))
    lines = padded.getvalue().split("\n")
    assert max(len(line) - len(line.rstrip(" ")) for line in lines) > 80  # as it was
    assert run.stdout.split("\n") == [line.rstrip(" ") for line in lines]


def test_trailing_spaces_are_dropped_across_writes_and_kept_inside_lines():
    out = io.StringIO()
    stream = TrailingSpacesDropped(out)
    stream.write("a  b   ")
    stream.write("\nc \x1b[0m\n  d ")
    assert out.getvalue() == "a  b\nc\x1b[0m\n  d"
    stream.flush()
    assert out.getvalue() == "a  b\nc\x1b[0m\n  d "


@pilot_test
async def test_every_pane_writes_thousands_with_commas():
    """jax 0.10.2's transformer_big: the header said ``in 1 254 allocations`` and the
    stack-trace heading ``8 207 632 bytes`` (spaces) beside the figures' ``(8,207,632
    B)`` and the detail's ``1048576 bytes`` (none). Every pane now writes 1,254."""
    app = HlotopApp(sample(JAX_BIG))
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await started(app, pilot)
        dump = screen.dump
        count = len(dump.allocations)
        assert count == 1254
        text = screen_text(app)
        assert f"in {count:,} allocations" in text
        assert not re.search(r"\d \d{3}\b", text)  # no number spaced
        detail = "\n".join(widget_lines(screen.detail))
        assert re.search(r"^size +\d{1,3}(,\d{3})+ bytes", detail, re.M)
        live = screen.live
        heading = next(
            live.render_row(i).plain
            for i in range(live.row_count())
            if live.row(i).kind == "text" and "Stack-trace" in live.render_row(i).plain
        )
        total = dump.live_range.stack_trace.total
        assert heading.startswith(f"Stack-trace breakdown for peak usage (XLA): {total:,} bytes")
        assert total == 8207632


@pilot_test
async def test_each_memory_space_has_its_own_fill():
    """host_offload uses S(5) (host) and S(6): both were drawn ``░`` in the legend
    and the timeline, told apart by colour alone. Each space of XLA's 0-7 now has its
    own fill."""
    app = HlotopApp(sample("tpu/v5e_1x1-host_offload"))
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await started(app, pilot)
        legend = screen_lines(app.screen)[1]
        fills = re.findall(r"(\S)\1 (?:HBM|S\(\d\))", legend)
        assert fills == ["█", "▓", "▒", "▄", "░"]  # HBM, S(1), S(2), S(5), S(6)
        assert len({space_fill(c) for c in range(8)}) == 8
        timeline = screen.timeline
        host = next(i for i, info in enumerate(timeline.rows) if info.color == 5)
        timeline.set_row(host)
        await pilot.pause()
        assert "▄" in "".join(widget_lines(timeline))


@pytest.mark.parametrize(
    "capacity, dump, warned",
    [
        (
            "v5e",
            "cpu/gpt_loop",
            "tpu-v5e is a TPU's memory, but this program was compiled for the CPU",
        ),
        (
            "h100",
            "tpu/v5e_1x1-gpt_loop",
            "h100-80gb is a GPU's memory, but this program was compiled for a TPU",
        ),
        ("v5e", "tpu/v5e_1x1-gpt_loop", None),
        ("16GiB", "cpu/gpt_loop", None),
    ],
)
def test_a_capacity_of_another_kind_of_device_is_warned_of(capacity, dump, warned):
    """``--summary --capacity v5e`` on a CPU dump said its headroom against a TPU's
    HBM and nothing more; a preset of another kind than the dump's platform is now
    warned of (a size, or a preset of the dump's kind, is not)."""
    run = subprocess.run(
        [sys.executable, "-m", "hlotop", "--summary", "--capacity", capacity, str(SAMPLES / dump)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "tui")},
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert "Capacity " in run.stdout
    if warned:
        assert f"Warning: --capacity {warned}" in run.stdout
    else:
        assert "Warning: --capacity" not in run.stdout


@pilot_test
async def test_the_browser_warns_of_a_capacity_of_another_kind_of_device():
    app = HlotopApp(sample("cpu/gpt_loop"), capacity=parse_capacity("v5e"))
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        assert "tpu-v5e is a TPU's memory, but this program was compiled for the CPU" in notes(app)
