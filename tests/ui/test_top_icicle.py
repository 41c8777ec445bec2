"""pprof's top and an icicle of the grouped live set (``--summary --top [N]``,
``--summary --icicle``), from its tree of frames (analysis/group_stacks.py), on the
GPT train step of a v5e (sample_dumps/tpu/v5e_1x1-gpt_loop) at XLA's peak."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console
from test_grouped_view import grouped

from conftest import SAMPLES, hlotop
from hlotop import load
from hlotop.analysis.group_stacks import frames_of, stack_tree, top_nodes
from hlotop.analysis.grouping import group_live_set
from hlotop.analysis.labels import Labeller
from hlotop.cli import top_without_number
from hlotop.report.export import write_folded
from hlotop.report.top_text import Icicle, bar_width, icicle_lines, top_table
from pilot import pilot_test, screen_text

GPT = SAMPLES / "tpu" / "v5e_1x1-gpt_loop"


@pytest.fixture(scope="module")
def gpt():
    return load(GPT)


def test_frames_split_a_scope_at_its_slashes_and_keep_other_keys_whole():
    assert frames_of(("scope", "phase"), ("GPT/wte", "forward")) == (
        ("GPT", 0),
        ("wte", 0),
        ("forward", 1),
    )
    assert frames_of(("source",), ("/home/u/train.py:12",)) == (("/home/u/train.py:12", 0),)


@pytest.mark.parametrize("keys", [("scope",), ("phase", "scope"), ("opcode",)])
def test_flat_and_cum_add_up_as_pprofs_do(gpt, keys):
    grouping = group_live_set(gpt, keys)
    root = stack_tree(grouping)
    nodes = top_nodes(root)
    assert root.cum == grouping.total_bytes == gpt.analysis.peak_bytes  # logical at the peak
    assert root.flat + sum(n.flat for n in nodes) == root.cum
    for node in root.walk():  # cum: its own and its children's
        assert node.cum == node.flat + sum(c.cum for c in node.children)
        assert node.values == (
            sum(len(r.values) for r in grouping.rows if _under(grouping, r, node.frames))
        )
    flats = [n.flat for n in nodes]
    assert flats == sorted(flats, reverse=True)


def _under(grouping, row, frames) -> bool:
    return tuple(f for f, _ in frames_of(grouping.keys, row.key))[: len(frames)] == frames


def test_the_tree_is_the_folded_exports_stacks(gpt):
    """Every stack of --export folded is a node whose flat bytes are the line's."""
    grouping = group_live_set(gpt, ("scope",))
    out = io.StringIO()
    write_folded(grouping, Labeller(gpt), out, ("scope",))
    folded = out.getvalue()
    stacks = {
        line.rsplit(" ", 1)[0]: int(line.rsplit(" ", 1)[1]) for line in folded.split("\n")[:-1]
    }
    nodes = {";".join(n.frames): n.flat for n in top_nodes(stack_tree(grouping)) if n.flat}
    # the folded text writes a space as _ (GPT's scopes have none but "(top level)")
    assert {k.replace(" ", "_"): v for k, v in nodes.items()} == stacks


def test_top_lists_the_scopes_of_most_own_bytes_with_pprofs_columns(gpt):
    grouping = group_live_set(gpt, ("scope",))
    console = Console(file=io.StringIO(), width=100, no_color=True)
    console.print(top_table(grouping, 4))
    out = console.file.getvalue()
    assert "Showing 4 of 32 nodes, accounting for 12.38MiB, 53.2% of 23.26MiB total" in out
    lines = out.splitlines()
    head = next(
        i
        for i, line in enumerate(lines)
        if line.split()[:5] == ["flat", "flat%", "sum%", "cum", "cum%"]
    )
    rows = [line.split() for line in lines[head + 1 : head + 5]]
    assert [r[-1] for r in rows] == [
        "GPT/Block_*/mlp/c_proj",
        "GPT/Block_*/mlp/c_fc",
        "opt_state/mu",
        "opt_state/nu",
    ]
    assert [r[2] for r in rows] == ["16.1%", "29.0%", "41.1%", "53.2%"]  # sum%: running flat%
    # attn: 2.00MiB of its own, 3.75MiB with its einsums and projections under it
    full = Console(file=io.StringIO(), width=100, no_color=True)
    full.print(top_table(grouping, 100))
    attn = next(
        line
        for line in full.file.getvalue().splitlines()
        if line.rstrip().endswith("GPT/Block_*/attn")
    )
    assert attn.split()[:5] == ["2.00MiB", "8.6%", "80.4%", "3.75MiB", "16.1%"]
    assert "100.0%" in full.file.getvalue().splitlines()[-1].split()[2]  # sum% ends at the total


def test_icicle_bars_nest_and_fit_80_columns(gpt):
    grouping = group_live_set(gpt, ("scope",))
    root = stack_tree(grouping)
    lines, left_out = icicle_lines(root, 80, plain=True)
    bars = bar_width(80)
    spans = {}
    for line in lines:
        assert line.text.cell_len <= 80 or len(line.node.label) > 20
        bar = line.text.plain[:bars]
        full = [i for i, c in enumerate(bar) if c == "█"]
        spans[line.node.frames] = (full[0], full[-1] + 1)
        assert full == list(range(full[0], full[-1] + 1))  # one run of full cells
        parent = line.node.frames[:-1]
        if line.node.frames:
            lo, hi = spans[parent]  # drawn before it, and around it
            assert lo <= full[0] and full[-1] < hi
    assert lines[0].text.plain[:bars] == "█" * bars  # the whole step
    drawn = {line.node for line in lines}
    assert not drawn & set(left_out)
    assert len(drawn) + len(left_out) == len(root.walk())
    for node in left_out:  # each narrower than a cell, or under one that is
        assert node.cum * bars < root.cum * 1.5 or any(
            node.frames[: len(n.frames)] == n.frames and n.cum * bars < root.cum * 1.5
            for n in left_out
        )


def test_summary_top_and_icicle_on_the_command_line():
    top = hlotop("--summary", "--top", str(GPT))  # --top without N names the dump
    assert top.returncode == 0, top.stderr
    text = top.stdout.decode()
    assert "Live set at step 367 by scope: top 10" in text
    assert "Showing 10 of 32 nodes" in text and "Largest values" not in text
    grouped = hlotop("--summary", "--group-by", "phase,scope", "--top", "3", str(GPT))
    assert "by phase, scope: top 3" in grouped.stdout.decode()
    icicle = hlotop("--summary", "--icicle", str(GPT)).stdout.decode()
    assert "23.26MiB as an icicle" in icicle
    assert re.search(r"█+ +23\.26MiB 100\.0%  \(all\)", icicle)
    refused = hlotop("--top", "3", str(GPT))
    assert refused.returncode == 2 and "--summary" in refused.stderr.decode()


def test_top_without_a_number_takes_pprofs_ten():
    from hlotop.cli import DEFAULT_TOP
    from hlotop.report import top_text

    assert DEFAULT_TOP == top_text.DEFAULT_TOP == 10  # the command's copy (for --help)
    assert top_without_number(["--summary", "--top", "d.txt"]) == ["--summary", "--top=10", "d.txt"]
    assert top_without_number(["--summary", "--top", "5", "d"]) == ["--summary", "--top", "5", "d"]
    assert top_without_number(["--top"]) == ["--top=10"]
    assert top_without_number(["--", "--top"]) == ["--", "--top"]


def test_the_icicle_renderable_is_cut_to_the_console(gpt):
    grouping = group_live_set(gpt, ("scope",))
    console = Console(file=io.StringIO(), width=60, no_color=True)
    console.print(Icicle(grouping))
    out = console.file.getvalue().splitlines()
    assert all(len(line) <= 60 for line in out)
    assert re.fullmatch(r"\d+ nodes narrower than a cell not drawn \(.*\)", out[-1])


@pilot_test
async def test_i_on_the_grouped_view_draws_its_grouping_as_an_icicle():
    """80x24 and 200x50: i opens the icicle of the grouping the pane shows (phase,scope
    at the peak), its rows the report's icicle lines at the screen's width; the cursor's
    node is named above them; esc closes it."""
    from hlotop.ui.apps.app import HlotopApp
    from hlotop.ui.screens.icicle import IcicleScreen
    from hlotop.ui.widgets.icicle_view import IcicleView

    for size in ((80, 24), (200, 50)):
        app = HlotopApp(str(GPT))
        async with app.run_test(size=size) as pilot:
            await grouped(app, pilot)
            shown = app.screen.grouped_view.group_tree.grouping
            await pilot.press("i")
            await pilot.pause()
            assert isinstance(app.screen, IcicleScreen)
            view = app.screen.query_one(IcicleView)
            assert view.grouping is shown and shown.keys == ("phase", "scope")
            expected, _ = icicle_lines(stack_tree(shown), view.size.width - 1, plain=False)
            assert [line.text.plain for line in view.lines] == [e.text.plain for e in expected]
            assert bar_width(view.size.width - 1) == (38 if size[0] == 80 else 98)
            text = screen_text(app)
            assert "(all)  flat 0B 0.0% · cum 23.26MiB 100.0% · 150 values" in text
            await pilot.press("down", "down")
            assert view.node.name() == "forward ; GPT"
            assert "forward ; GPT  flat 0B" in screen_text(app)
            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(app.screen, IcicleScreen)
