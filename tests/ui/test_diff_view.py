"""Pilot tests of the diff browser (``hlotop diff OLD NEW`` on a terminal) on real pairs
of compiles: what it shows is held to the analysis (``analysis.diff``), computed here
on its own from the same files."""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path

import pytest
from textual.widgets import Input

from conftest import exit_after_load, sample
from hlotop.analysis.diff import CLASSES, diff_modules
from hlotop.analysis.grouping import group_live_set
from hlotop.loading.loader import load
from hlotop.report.diff_report import percent, resample, signed
from hlotop.ui.apps.diff_app import DiffApp
from hlotop.ui.base.textual_compat import screen_lines
from hlotop.ui.screens.diff import DiffScreen
from hlotop.ui.screens.diff_help import DiffHelpScreen
from hlotop.ui.view_models.diff_data import column_steps
from hlotop.units import human_bytes

GPT = ("cpu/gpt_loop", "cpu/gpt_loop_batch16")  # batch 8 vs 16: everything grows
TPU = ("tpu/v5e_1x1-transformer_loop", "tpu/v5e_1x1-transformer_remat")  # remat: shrinks
PAIRS = pytest.mark.parametrize("pair", [GPT, TPU], ids=["gpt-batch", "tpu-remat"])


def pilot_test(fn):
    """Run an async test with asyncio.run (no pytest-asyncio in the environment)."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        return asyncio.run(fn(*args, **kwargs))

    return run


@functools.cache
def analysis(old: str, new: str, keys: tuple[str, ...] = ("phase", "scope")):
    """The modules and their diff, made without the browser."""
    a, b = load(sample(old), lazy=True), load(sample(new), lazy=True)
    return a, b, diff_modules(a, b, keys)


def app_of(pair) -> DiffApp:
    return DiffApp(sample(pair[0]), sample(pair[1]))


async def started(app: DiffApp, pilot) -> DiffScreen:
    await app.wait_until_loaded()
    await pilot.pause()
    assert isinstance(app.screen, DiffScreen)
    return app.screen


async def press(pilot, *keys: str) -> None:
    for key in keys:
        await pilot.press(key)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def text(app) -> str:
    return "\n".join(screen_lines(app.screen))


@PAIRS
@pytest.mark.parametrize("size", [(160, 50), (120, 40)], ids=["160x50", "120x40"])
@pilot_test
async def test_headline_figures_are_the_analysis(pair, size):
    """At 120x40 the figures pane is 58 columns: the percentages give way, then the
    figures' names; the numbers are whole (they were cut to 6.05G… at 120x40 on two
    real 46 and 108 MB dumps)."""
    _, _, diff = analysis(*pair)
    app = app_of(pair)
    async with app.run_test(size=size) as pilot:
        await started(app, pilot)
        lines = screen_lines(app.screen)
        figures = {
            "Total bytes used": (diff.old.total_bytes, diff.new.total_bytes),
            "XLA's peak": (diff.old.peak_bytes, diff.new.peak_bytes),
            **{k: (v, diff.new.memory_stats[k]) for k, v in diff.old.memory_stats.items()},
            **{
                f"{name} occupied peak": (v, diff.new.space_peaks[name])
                for name, v in diff.old.space_peaks.items()
            },
        }
        for label, (old, new) in figures.items():
            if label.startswith("host_") and not old and not new:
                continue  # one line says they are 0B on both sides
            row = next(line for line in lines if line.startswith(f"│ {label} "))
            cells = row[len(label) + 2 :].split("│")[0].split()
            assert cells[:3] == [human_bytes(old), human_bytes(new), signed(new - old)], label
            if new != old and size == (160, 50):
                assert cells[3] == f"({percent(old, new)})"
        step = next(line for line in lines if line.startswith("│ XLA's peak step "))
        assert step.split()[4:6] == [str(diff.old.peak_step), str(diff.new.peak_step)]
        # The headline bar: the change of the total and of XLA's peak.
        head = lines[1]
        for old, new in figures["Total bytes used"], figures["XLA's peak"]:
            assert f"{human_bytes(old)} → {human_bytes(new)}" in head
            assert f"{signed(new - old)} ({percent(old, new)})" in head


@PAIRS
@pilot_test
async def test_tree_rows_are_the_diff_groups(pair):
    _, _, diff = analysis(*pair)
    app = app_of(pair)
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await started(app, pilot)
        pane = screen.groups_pane
        roots = pane.group_tree.roots
        # One level per key: each phase sums its groups, largest absolute change first.
        phases = {g.key[0] for g in diff.groups}
        assert [n.label for n in roots] == sorted(
            phases,
            key=lambda p: (
                -abs(sum(g.delta_bytes for g in diff.groups if g.key[0] == p)),
                p,
            ),
        )
        for node in roots:
            under = [g for g in diff.groups if g.key[0] == node.label]
            assert (node.old, node.new) == (
                sum(g.old_bytes for g in under),
                sum(g.new_bytes for g in under),
            )
        # Every phase open: the second level is diff.groups, each level by |change|.
        pane.expanded |= {n.key for n in roots}
        pane.rows = pane.group_tree.visible(pane.expanded)
        leaves = [(n.key[1:], n.old, n.new) for n in pane.rows if n.depth == 1]
        assert sorted(leaves) == sorted((g.key, g.old_bytes, g.new_bytes) for g in diff.groups)
        for node in roots:
            level = [abs(n.delta) for n in pane.group_tree.children(node)]
            assert level == sorted(level, reverse=True)
        # b to a single key (source, the fourth preset): the top rows are diff.groups in
        # order (the largest opens to its values).
        await press(pilot, "b", "b", "b")
        assert pane.keys == ("source",)
        _, _, by_source = analysis(*pair, keys=("source",))
        assert [(n.label, n.old, n.new) for n in pane.rows if n.depth == 0] == [
            (g.key[0], g.old_bytes, g.new_bytes) for g in by_source.groups
        ]
        assert "Groups by source" in text(app)


@pilot_test
async def test_new_large_groups_are_flagged_and_typed_keys_regroup():
    old, new, diff = analysis(*TPU)
    app = app_of(TPU)
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await started(app, pilot)
        pane = screen.groups_pane
        flagged = {n.label for n in pane.group_tree.roots if n.large_new}
        assert "backward" in flagged  # remat's backward pass: only in NEW, 8.80MiB
        assert all(
            not n.old and n.new >= 0.01 * diff.new.peak_bytes for n in pane.rows if n.large_new
        )
        assert "backward  new, large" in text(app)
        await press(pilot, "B")
        app.screen.query_one(Input).value = "kind,space"
        await press(pilot, "enter")
        assert pane.keys == ("kind", "space")
        _, _, by_kind = analysis(*TPU, keys=("kind", "space"))
        for node in pane.group_tree.roots:
            under = [g for g in by_kind.groups if g.key[0] == node.label]
            assert node.new == sum(g.new_bytes for g in under)


@PAIRS
@pilot_test
async def test_expanding_a_group_lists_its_values(pair):
    old, new, diff = analysis(*pair)
    app = app_of(pair)
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await started(app, pilot)
        pane = screen.groups_pane
        # The largest change is open at the start; its first group opens to values.
        await press(pilot, "down", "right")
        group = pane.rows[1]
        key = group.key[1:]
        values = [n for n in pane.rows if n.change is not None]
        assert values and all(n.key[1:-1] == key for n in values)
        # They are the values live at either side's peak in this group ...
        changes = screen.data.changes
        before = {r.key: r for r in group_live_set(old, diff.keys).rows}.get(key)
        after = {r.key: r for r in group_live_set(new, diff.keys).rows}.get(key)
        olds = {i.value.id for i in before.values} if before else set()
        news = {i.value.id for i in after.values} if after else set()
        expected = {
            i
            for i, c in enumerate(changes)
            if (c.old is not None and c.old.value.id in olds)
            or (c.new is not None and c.new.value.id in news)
        }
        assert {n.change for n in values} == expected
        # ... adding up to the group, largest change first, each with its class.
        assert (sum(n.old for n in values), sum(n.new for n in values)) == (group.old, group.new)
        deltas = [abs(n.delta) for n in values]
        assert deltas == sorted(deltas, reverse=True)
        shown = text(app)
        first = changes[values[0].change]
        assert first.change in shown and (first.matched_by or "") in shown
        # Moving onto a value shows it in the detail.
        await press(pilot, "down")
        assert screen.detail.change == values[0].change


@PAIRS
@pilot_test
async def test_class_filter(pair):
    _, _, diff = analysis(*pair)
    app = app_of(pair)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await started(app, pilot)
        values = screen.values
        await press(pilot, "4")
        assert values.filter == "all" and len(values.shown) == len(diff.changes)
        deltas = [abs(diff.changes[i].delta_bytes) for i in values.shown]
        assert deltas == sorted(deltas, reverse=True)
        seen = []
        for _ in range(len(CLASSES) + 1):
            await press(pilot, "c")
            if values.filter == "all":
                break
            seen.append(values.filter)
            assert len(values.shown) == diff.count(values.filter) > 0
            assert {diff.changes[i].change for i in values.shown} == {values.filter}
            assert f"4 Values · {values.filter} ({diff.count(values.filter)})" in text(app)
        assert seen == [k for k in CLASSES if diff.count(k)]


@PAIRS
@pilot_test
async def test_timeline_cursor_shows_the_resampled_curves(pair):
    old, new, _ = analysis(*pair)
    app = app_of(pair)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        timeline = screen.timeline
        width = timeline.columns
        assert width == timeline.content_region.width - 4
        a = resample(old.analysis.occupied_bytes[0], width)
        b = resample(new.analysis.occupied_bytes[0], width)
        assert (timeline.old, timeline.new) == (a, b)
        gaps = [abs(y - x) for x, y in zip(a, b, strict=True)]
        assert timeline.col == gaps.index(max(gaps))  # it starts where they differ most
        await press(pilot, "3", "home", "right", "right", "l")
        for moves in ((), ("right",) * 7, ("end",), ("left", "h")):
            await press(pilot, *moves)
            col = timeline.col
            (o0, o1, ob), (n0, n1, nb) = timeline.at_cursor()
            assert (ob, nb) == (a[col], b[col])
            assert (o0, o1) == column_steps(len(old.analysis.occupied_bytes[0]), width, col)
            assert (n0, n1) == column_steps(len(new.analysis.occupied_bytes[0]), width, col)
            assert max(old.analysis.occupied_bytes[0][o0 : o1 + 1]) == ob
            readout = next(
                line for line in screen_lines(app.screen) if "▼ " in line and "%" in line
            )
            assert human_bytes(ob) in readout and human_bytes(nb) in readout
            assert signed(nb - ob) in readout
        assert timeline.col == width - 3


@pilot_test
async def test_selecting_a_value_shows_both_sides():
    _, _, diff = analysis(*TPU)
    app = app_of(TPU)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await started(app, pilot)
        # added, removed, entered peak: matched pairs (its 3 "shrunk" pairs were values
        # of other shapes paired by scope or position, bf16[8,128,512] with
        # bf16[8,128,128]: now removed and added)
        await press(pilot, "4", "c", "c", "c")
        assert screen.values.filter == "entered peak"
        await press(pilot, "enter")
        assert screen.active == "detail"  # a small terminal shows the detail pane
        change = diff.changes[screen.detail.change]
        assert change.change == "entered peak" and change.old and change.new
        shown = text(app)
        assert "5 Detail · entered peak · matched by " + change.matched_by in shown
        for info in (change.old, change.new):
            assert str(info.value) in shown
            assert human_bytes(info.allocated_bytes) in shown
            assert f"steps {info.live.start}-{info.live.end}" in shown
        await press(pilot, "escape")
        assert screen.active == "values"


@pilot_test
async def test_a_dump_against_itself_shows_no_change():
    app = DiffApp(sample(GPT[0]), sample(GPT[0]))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await started(app, pilot)
        assert "no change: the same figures, every value matched unchanged" in text(app)
        data = screen.data
        assert data.unchanged and set(data.counts) == {"unchanged"}
        assert all(n.delta == 0 for n in screen.groups_pane.rows)
        await press(pilot, "4", "c")
        assert screen.values.filter == "unchanged"  # the only class there is


@pilot_test
async def test_help_lists_the_diff_keys_and_a_bad_side_exits_2(tmp_path):
    app = app_of(GPT)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        await press(pilot, "question_mark")
        assert isinstance(app.screen, DiffHelpScreen)
        shown = text(app)
        assert "Diff browser" in shown and "Allocation tree" not in shown
    junk = tmp_path / "not-a-dump.txt"
    junk.write_text("hello\n")
    app = DiffApp(sample(GPT[0]), str(junk))
    async with app.run_test(size=(80, 24)) as pilot:
        await app.wait_until_loaded()
        await pilot.pause()
    assert app.return_code == 2


@pilot_test
async def test_a_bug_while_comparing_exits_70_with_a_log_and_no_traceback(tmp_path, monkeypatch):
    # The diff app opens its compiles as the browser opens a dump
    # (hlotop.ui.apps.background_load): a bug is one line naming where it happened and the
    # crash log that holds the traceback.
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))

    def broken(stage):
        stage("reading both compiles")
        raise KeyError("boom")

    app = DiffApp("old.txt", "new.txt", open_diff=broken)
    message = await exit_after_load(app)
    assert app.return_code == 70
    assert message.startswith("hlotop: error: internal error while comparing: KeyError: 'boom' at ")
    assert "test_diff_view.py:" in message and "Traceback" not in message
    log = Path(message.rsplit("details in ", 1)[1])
    assert log.parent == tmp_path / "hlotop" and "boom" in log.read_text()
