"""Pilot tests of pane 3's grouped view (``v``) on real dumps: the tree's bytes are
the grouping's, the threshold folds, keys regroup, a value chosen in it is selected
everywhere, the accounting toggles, and ``e`` writes the pane as CSV."""

from __future__ import annotations

import csv
import os
import shutil
from pathlib import Path

import pytest
from test_ui_first_use import faint_text
from textual.widgets import Input

from conftest import SAMPLES, sample
from hlotop.analysis.grouping import Grouping, GroupRow, group_live_set
from hlotop.loading.loader import load
from hlotop.ui.apps.app import HlotopApp
from hlotop.ui.screens.group_keys import GroupKeysScreen
from hlotop.ui.view_models.group_tree import PRESETS, GroupTree, Node
from hlotop.ui.widgets.grouped_view import GroupedView, bar
from hlotop.ui.widgets.live_set import LiveSet
from hlotop.units import human_bytes
from pilot import TPU, pilot_test, screen_text, started, widget_lines

LOOP = "cpu/transformer_loop"  # a real JAX train step on the CPU, split layout, peak 167


async def grouped(app: HlotopApp, pilot, *keys: str):
    """The main screen with the grouped view on (``v``), ``keys`` pressed, every
    grouping made."""
    screen = await started(app, pilot)
    await pilot.press("v", *keys)
    await settle(app, pilot)
    return screen


async def settle(app: HlotopApp, pilot) -> None:
    await app.workers.wait_for_complete()
    await pilot.pause()


def node_row(view: GroupedView, label: str) -> int:
    return next(i for i, n in enumerate(view.rows) if n.label == label)


@pilot_test
async def test_v_swaps_pane_3_between_flat_and_grouped():
    app = HlotopApp(sample(LOOP))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await grouped(app, pilot)
        view = screen.grouped_view
        assert screen.grouped and view.display and not screen.live.display
        assert app.focused is view and screen.active == "live"
        assert view.border_title == "3 Grouped · step 167 · phase,scope · logical 49.89MiB"
        assert "3 Grouped" in screen_text(app) and "3 Peak breakdown" not in screen_text(app)
        await pilot.press("1", "3")  # pane 3 is the grouped view
        await pilot.pause()
        assert app.focused is view
        await pilot.press("v")
        await pilot.pause()
        assert not screen.grouped and not view.display and app.focused is screen.live
        assert isinstance(app.focused, LiveSet)


@pilot_test
async def test_the_tree_bytes_are_the_groupings():
    dump = load(sample(LOOP))
    expected = group_live_set(dump, ("phase", "scope"), 167)
    app = HlotopApp(sample(LOOP))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await grouped(app, pilot, "T", "T")  # fold nothing
        view = screen.grouped_view
        assert view.threshold == 0.0 and "none folded" in view.pinned_lines()[0].plain
        tops = [n for n in view.rows if n.depth == 0]
        by_phase: dict[str, int] = {}
        for row in expected.rows:
            by_phase[row.key[0]] = by_phase.get(row.key[0], 0) + row.bytes
        assert [(n.label, n.bytes) for n in tops] == sorted(
            by_phase.items(), key=lambda kv: (-kv[1], kv[0])
        )
        assert sum(n.bytes for n in tops) == expected.total_bytes == view.group_tree.total
        # The largest phase is open: its scopes are the grouping's rows.
        first = tops[0]
        assert first.key in view.expanded
        scopes = [n for n in view.rows if n.depth == 1]
        assert [(first.label, n.label, n.bytes) for n in scopes] == [
            (*r.key, r.bytes) for r in expected.rows if r.key[0] == first.label
        ]
        lines = widget_lines(view)
        assert any(human_bytes(first.bytes) in ln and first.label in ln for ln in lines)
        assert any(f"{100 * first.bytes / expected.total_bytes:5.1f}%" in ln for ln in lines)


def check_folds(tree: GroupTree) -> list[list[Node]]:
    """Check every level of ``tree`` (opening every node): each adds up to its parent,
    is sorted by bytes, and folds its nodes under the limit into one node, where two
    or more are and not all. Returns the paths (lists of nodes from the top) of the
    nodes that fold."""
    folds: list[list[Node]] = []

    def level(nodes: list[Node], whole: int, path: list[Node]) -> None:
        assert sum(n.bytes for n in nodes) == whole
        kept = [n for n in nodes if n.kind != "below"]
        assert [n.bytes for n in kept] == sorted((n.bytes for n in kept), reverse=True)
        small = [n for n in kept if n.bytes < tree.limit]
        assert len(small) <= 1 or len(small) == len(kept), [n.label for n in small]
        for node in nodes:
            if node.kind == "below":
                folds.append([*path, node])
                assert len(node.folded) >= 2 and node is nodes[-1]
                assert all(n.bytes < tree.limit for n in node.folded)
                assert node.count == sum(n.count for n in node.folded)
                groups = len(node.folded)
                assert node.label == f"{node.count} values below {human_bytes(tree.limit)}" + (
                    "" if node.folded[0].kind == "value" else f" ({groups} groups)"
                )
            if node.opens:
                level(tree.children(node), node.bytes, [*path, node])

    level(tree.roots, tree.total, [])
    return folds


@pilot_test
async def test_nodes_under_the_threshold_fold_into_one_that_opens():
    dump = load(sample(LOOP))
    grouping = group_live_set(dump, ("phase", "scope"), 167)
    app = HlotopApp(sample(LOOP))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await grouped(app, pilot)
        view = screen.grouped_view
        limit = int(0.01 * grouping.total_bytes)  # 1%, the default
        assert view.group_tree.limit == limit and view.group_tree.total == grouping.total_bytes
        assert f"fold <1% {human_bytes(limit)}" in view.pinned_lines()[0].plain
        folds = check_folds(view.group_tree)
        assert folds  # a real train step has small groups and values
        # Open the way to a folding node whose parents are groups, then open it.
        path = next(p for p in folds if all(n.kind == "group" for n in p[:-1]))
        for parent in path[:-1]:
            if parent.key not in view.expanded:
                view.set_cursor(view.rows.index(parent))
                await pilot.press("right")
                await pilot.pause()
        node = path[-1]
        view.set_cursor(view.rows.index(node))
        await pilot.press("enter")
        await pilot.pause()
        at = view.rows.index(node)
        assert view.rows[at + 1 : at + 1 + len(node.folded)] == node.folded
        assert all(n.depth == node.depth + 1 for n in node.folded)
        assert any(f"▾ {node.label[:12]}" in line for line in widget_lines(view))
        for key, share in (("t", 0.05), ("T", 0.01), ("T", 0.001), ("T", 0.0), ("T", 0.0)):
            await pilot.press(key)
            await pilot.pause()
            assert view.threshold == share and view.group_tree.limit == int(
                share * grouping.total_bytes
            )
            check_folds(view.group_tree)
        assert "none folded" in view.pinned_lines()[0].plain
        assert not [n for n in view.rows if n.kind == "below"]


@pilot_test
async def test_a_value_opened_in_the_tree_is_selected_everywhere():
    """TPU seed at 80x24 (tabs): in the largest group (open from the start), open its
    scope and go to its first value: the timeline's row and the detail show it; ⏎
    opens the detail tab."""
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await grouped(app, pilot)
        view = screen.grouped_view
        assert screen.compact and "[3 Grouped]" in screen_text(app)
        view.set_cursor(0)
        top = view.current()
        assert top.kind == "group" and top.key in view.expanded  # the largest, open
        await pilot.press("right")  # open already: to its first scope
        await pilot.pause()
        assert view.current().kind == "group" and view.current().depth == 1
        await pilot.press("right", "down")  # open it, to its first value
        await pilot.pause()
        node = view.current()
        assert node.kind == "value" and node.info is not None
        chosen = node.info.value.id
        # Moving onto a value selects it everywhere already.
        assert screen.selected_value == chosen == screen.detail.value_id
        assert screen.timeline.rows[screen.timeline.row].value.id == chosen
        await pilot.press("enter")
        await pilot.pause()
        assert screen.active == "detail"
        await pilot.press("escape", "left")  # back to pane 3, then to the value's group
        await pilot.pause()
        assert screen.active == "live" and view.current().kind == "group"
        # Chosen elsewhere: the cursor goes to the value's row, if it is shown.
        other = view.rows[view.cursor + 2].info
        assert other is not None
        screen.select_value(other.value.id)
        assert view.current().info is other and view.shows_selection


@pilot_test
async def test_u_counts_occupied_bytes():
    dump = load(sample(TPU))
    logical = group_live_set(dump, ("phase", "scope"), 11, "logical")
    occupied = group_live_set(dump, ("phase", "scope"), 11, "occupied")
    assert occupied.total_bytes != logical.total_bytes  # p0.1: 4 bytes in a 512-byte slot
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await grouped(app, pilot)
        view = screen.grouped_view
        assert view.group_tree.total == logical.total_bytes
        await pilot.press("u")
        await settle(app, pilot)
        assert view.accounting == "occupied"
        assert view.group_tree.total == occupied.total_bytes
        assert sum(n.bytes for n in view.rows if n.depth == 0) == occupied.total_bytes
        assert view.border_title.endswith(f"occupied {human_bytes(occupied.total_bytes)}")


@pilot_test
async def test_it_follows_the_timeline_and_b_and_B_regroup():
    dump = load(sample(LOOP))
    app = HlotopApp(sample(LOOP))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await grouped(app, pilot)
        view = screen.grouped_view
        await pilot.press("2", "left", "left")
        await settle(app, pilot)
        expected = group_live_set(dump, ("phase", "scope"), 165)
        assert view.group_tree.grouping.step == 165
        assert view.group_tree.total == expected.total_bytes
        assert "step 165" in view.border_title
        await pilot.press("3", "b")
        await settle(app, pilot)
        assert view.keys == PRESETS[1] == ("scope", "opcode")
        await pilot.press("B")
        await pilot.pause()
        assert isinstance(app.screen, GroupKeysScreen)
        field = app.screen.query_one(Input)
        field.value = "kind,nonsense"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, GroupKeysScreen)  # an unknown key: stays, says so
        assert "nonsense" in screen_text(app)
        field.value = "kind, space"
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.screen is screen and view.keys == ("kind", "space")
        by_kind = group_live_set(dump, ("kind", "space"), 165)
        assert [n.label for n in view.rows if n.depth == 0][0] == by_kind.rows[0].key[0]


@pilot_test
async def test_e_writes_the_pane_as_csv_whose_rows_add_up(tmp_path, monkeypatch):
    monkeypatch.setenv("HLOTOP_EXPORT_DIR", str(tmp_path))
    dump = load(sample(LOOP))
    total = group_live_set(dump, ("phase", "scope"), 167).total_bytes
    app = HlotopApp(sample(LOOP))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await grouped(app, pilot, "e")
        path = screen.grouped_view.last_export
        assert path is not None and path.parent == tmp_path
        assert path.name == f"hlotop-{dump.name}-step167-phase-scope-logical.csv"
        rows = list(csv.DictReader(path.open()))
        assert rows[0].keys() >= {"phase", "scope", "bytes", "share", "values"}
        assert sum(int(r["bytes"]) for r in rows) == total
        assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary left
        await pilot.press("v", "e")  # flat: one row a value
        await settle(app, pilot)
        flat = screen.grouped_view.last_export
        assert flat is not None and flat.name.endswith("-step167-values-logical.csv")
        values = list(csv.DictReader(flat.open()))
        assert len(values) == len(screen.live.live)
        assert sum(int(r["bytes"]) for r in values) == total


@pilot_test
async def test_e_never_writes_into_the_dumps_folder(tmp_path, monkeypatch):
    """Opened as ``.`` from inside the dump's folder, with no HLOTOP_EXPORT_DIR: the
    file goes to ~/hlotop-exports."""
    folder = Path(sample(LOOP)).resolve()
    monkeypatch.delenv("HLOTOP_EXPORT_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(folder)
    before = sorted(os.listdir(folder))
    app = HlotopApp(".")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await grouped(app, pilot, "e")
        path = screen.grouped_view.last_export
        assert path is not None and path.parent == tmp_path / "hlotop-exports"
    assert sorted(os.listdir(folder)) == before


@pilot_test
async def test_grouped_view_reads_without_colour(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await grouped(app, pilot, "right", "down", "right")
        assert app.no_color
        view = screen.grouped_view
        assert faint_text(app, view.region) == []
        text = "\n".join(widget_lines(view))
        assert "▾" in text and "█" in text and "▶" in text


def test_bars_and_the_fold_rule():
    assert bar(1, 1, 4) == "████" and bar(0, 1, 4) == "    "
    assert bar(1, 16, 4) == "▎   " and bar(1, 10**9, 4) == "▏   "  # never invisible
    values = load(sample(LOOP)).analysis.values[:6]

    def tree(*rows: tuple[str, int], threshold: float = 0.01) -> GroupTree:
        group_rows = tuple(
            GroupRow((label,), size, (values[i],)) for i, (label, size) in enumerate(rows)
        )
        total = sum(size for _, size in rows)
        bytes_of = {r.values[0].value.id: r.bytes for r in group_rows}
        return GroupTree(Grouping(0, ("scope",), "logical", total, group_rows, bytes_of), threshold)

    # One node under 1% stands for itself; two fold into one, last.
    assert [n.label for n in tree(("a", 900), ("b", 95), ("c", 5)).roots] == ["a", "b", "c"]
    folded = tree(("a", 900), ("b", 91), ("c", 5), ("d", 4))
    assert [n.label for n in folded.roots] == ["a", "b", "2 values below 10B (2 groups)"]
    assert [n.label for n in folded.roots[-1].folded] == ["c", "d"]
    # All under the threshold: none folds (opening a group must show something).
    assert [n.label for n in tree(("a", 4), ("b", 3), threshold=0.9).roots] == ["a", "b"]
    below = check_folds(folded)
    assert [[n.label for n in p] for p in below] == [["2 values below 10B (2 groups)"]]
    # A value's lineage: itself, then the nodes that may hold it, up to the top.
    lineage = folded.lineage(values[2].value.id)
    assert lineage == [("v", values[2].value.id), ("below", "c"), ("g", "c"), ("below",)]


@pilot_test
async def test_an_exported_file_takes_the_users_umask(tmp_path, monkeypatch):
    """It was 0600 whatever the umask (the temporary file's mode, renamed into place)."""
    monkeypatch.setenv("HLOTOP_EXPORT_DIR", str(tmp_path))
    before = os.umask(0o022)
    try:
        app = HlotopApp(sample(TPU))
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await grouped(app, pilot, "e")
            path = screen.grouped_view.last_export
            assert path is not None and path.stat().st_mode & 0o777 == 0o644
        os.umask(0o027)
        app = HlotopApp(sample(TPU))
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await grouped(app, pilot, "v", "e")
            path = screen.grouped_view.last_export
            assert path is not None and path.stat().st_mode & 0o777 == 0o640
    finally:
        os.umask(before)


BIG_SPLIT = "jax/jax-0.10.2/transformer_big"  # 1.8 MB of value records


@pilot_test
async def test_a_dump_replaced_while_open_is_said_in_the_grouped_view_and_its_export(
    tmp_path, monkeypatch
):
    """The records are read back from the dump file; once it was replaced (or deleted)
    every value grouped as "(no op_name)", on screen and in the CSV, with no warning.
    (Pieces of 4 kB, not 1 MB: this dump is small enough to stay in the kept pieces.)"""
    import hlotop.loading.file_bytes as file_bytes

    monkeypatch.setattr(file_bytes, "CHUNK", 4096)
    monkeypatch.setenv("HLOTOP_EXPORT_DIR", str(tmp_path / "out"))
    folder = tmp_path / "dump"
    shutil.copytree(SAMPLES / BIG_SPLIT, folder)
    values = next(folder.glob("*-values.txt"))
    app = HlotopApp(str(next(folder.glob("*-buffer-assignment.txt"))))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        replacement = values.with_name("new")
        replacement.write_bytes(values.read_bytes())
        os.replace(replacement, values)  # as a new run writes it
        await pilot.press("v")
        await settle(app, pilot)
        view = screen.grouped_view
        assert view.error == (
            "the dump changed on disk since it was opened: open it again to read its value "
            f"records ({values})"
        )
        assert "the dump changed on disk since it was opened" in screen_text(app)
        await pilot.press("e")
        await settle(app, pilot)
        assert view.last_export is None and not (tmp_path / "out").exists()
    with pytest.raises(ValueError, match="changed on disk"):
        group_live_set(app.module, ("phase", "scope"))
