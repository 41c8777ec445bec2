"""Pilot tests of the out-of-memory browser (``hlotop LOG`` at a terminal): a message's
buffers as a list sorted by size, op_name or shape, filtered as you type, grouped by
scope or shape; m for the next message, o for the whole text; and with --dump, Enter
on a buffer opens the module with its value selected, backspace comes back.

The texts are real ones (sample_dumps/oom). No real text lists buffers of a dump we
have, so the linked tests write one: libtpu's "Largest program allocations" form
(as tpu-jax-2024-largest-program-allocations.txt prints it) naming the six largest
values live at the peak of the v5e GPT train step (sample_dumps/tpu/v5e_1x1-gpt_loop),
and one buffer that is not in it."""

from __future__ import annotations

import pytest
from test_modules_view import until

from conftest import SAMPLES
from hlotop import load
from hlotop.analysis.oom_entries import entry_matches, group_entries, group_label
from hlotop.analysis.oom_link import OomLinker
from hlotop.model import ModuleDump
from hlotop.parse.oom import find_ooms, primary
from hlotop.ui.apps.oom_app import OomApp, OomMainScreen
from hlotop.ui.base.textual_compat import screen_lines
from hlotop.ui.screens.oom import OomScreen, OomTextScreen
from hlotop.ui.widgets.oom_list import OomList
from pilot import notes, pilot_test

OOM = SAMPLES / "oom"
GPU = OOM / "gpu-jax-2024-peak-buffers.txt"  # 3 messages, the third lists 15 buffers
TF1 = OOM / "tpu-tf1-2019-largest-program-allocations.txt"  # 20 buffers, padded
GPT = SAMPLES / "tpu" / "v5e_1x1-gpt_loop"


def app_of(path, module: ModuleDump | None = None, text: str | None = None) -> OomApp:
    """The app ``hlotop PATH [--dump DUMP]`` opens (cli.commands.oom_command)."""
    reports = find_ooms(text if text is not None else path.read_text(), str(path))
    links = []
    if module is not None:
        linker = OomLinker(module)
        links = [[linker.find(e) for e in r.entries] for r in reports]
    return OomApp(str(path), reports, links, module, reports.index(primary(reports)))


def text_of(app) -> str:
    return "\n".join(screen_lines(app.screen))


def listed(app) -> list[int]:
    """The ranks of the buffers on the list's rows (None for a group's row)."""
    lst = app.screen.query_one(OomList)
    entries = app.screen.report.entries
    return [entries[r.entry].rank if r.entry is not None else None for r in lst.rows]


@pilot_test
async def test_the_error_message_lists_its_buffers_sorted_by_size_op_name_shape():
    app = app_of(GPU)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, OomScreen) and app.screen.index == 2  # the error
        text = text_of(app)
        assert "Message 3 of 3" in text and "17528955952 bytes  (16.32GiB)" in text
        assert "Buffers · 15 listed, 19.92GiB · by size" in text
        assert listed(app) == list(range(1, 16))  # as XLA prints them: the largest first
        assert "Buffer 1  4.50GiB  = 4,831,838,208 B by its shape  line 24" in text
        entries = app.screen.report.entries
        await pilot.press("s")  # op_name: those with one first, alphabetical
        named = [e for e in entries if e.op_name]
        assert listed(app)[: len(named)] == [
            e.rank for e in sorted(named, key=lambda e: (e.op_name, e.rank))
        ]
        assert "by op_name" in text_of(app)
        await pilot.press("s")
        assert [entries[r - 1].shape for r in listed(app)] == sorted(e.shape for e in entries)
        await pilot.press("s")
        assert listed(app) == list(range(1, 16))


@pilot_test
async def test_b_groups_by_scope_then_shape_and_enter_closes_a_group():
    app = app_of(GPU)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        entries = app.screen.report.entries
        await pilot.press("b")
        lst = app.screen.query_one(OomList)
        groups = group_entries(entries, "scope", range(len(entries)))
        assert (
            [r.group.label for r in lst.rows if r.group]
            == [g.label for g in groups]
            == [
                "(top level)",  # jit(update_fn)/jit(main)/sub: nothing left but the primitive
                "(no op_name)",
                "Model/llm.compute_logits/Model/embedder.decode",
            ]
        )
        assert [g.bytes for g in groups] == [
            sum(e.size_bytes for e in entries if group_label(e, "scope") == g.label) for g in groups
        ]
        assert lst.rows[lst.cursor].entry == 0  # the cursor stays on buffer 1
        await pilot.press("home")
        assert "▾ (top level)" in text_of(app) and "10 buffers" in text_of(app)
        await pilot.press("enter")  # close the first group
        shown = [r.entry for r in lst.rows if r.entry is not None]
        assert shown == [*groups[1].members, *groups[2].members] and len(lst.rows) == 3 + 5
        await pilot.press("enter")
        assert len(lst.rows) == 3 + len(entries)
        await pilot.press("b")
        assert "grouped by shape" in text_of(app)
        assert lst.rows[0].group.label == "f32[18,2,2048,16384]" and lst.rows[0].group.bytes == (
            2 * 4831838208
        )
        await pilot.press("b")
        assert all(r.group is None for r in lst.rows)


@pilot_test
async def test_slash_filters_as_you_type_and_esc_clears_then_quits():
    app = app_of(GPU)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        entries = app.screen.report.entries
        await pilot.press("slash", *"custom")  # the XLA label of buffer 6
        assert listed(app) == [6]
        assert "1 match 'custom'" in text_of(app)
        await pilot.press("enter")  # back in the list, the filter kept
        assert isinstance(app.focused, OomList) and listed(app) == [6]
        await pilot.press("escape")
        assert listed(app) == list(range(1, 16))
        await pilot.press("slash", *"op_name:sub shape:2048")
        expected = [e.rank for e in entries if entry_matches(e, None, "op_name:sub shape:2048")]
        assert listed(app) == expected == [2, 4, 5, 11, 12]
        await pilot.press("escape")  # in the box: cleared
        assert listed(app) == list(range(1, 16))
        await pilot.press("escape")  # nothing to clear: leave
        await pilot.pause()
        assert app.exiting


@pilot_test
async def test_m_shows_each_message_and_o_the_whole_text():
    app = app_of(GPU)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("m")  # the remat pass's message: no buffers, its figures whole
        assert app.screen.index == 0
        text = text_of(app)
        assert "Message 1 of 3" in text and "Target (below)  12.25GiB" in text
        assert "It lists no buffers; m shows the next message." in text
        assert "original" in text  # its table's other line, shown when nothing is listed
        assert not app.screen.query_one(OomList).display
        await pilot.press("m", "m")
        assert app.screen.index == 2 and app.screen.query_one(OomList).display
        await pilot.press("o")
        await pilot.pause()
        assert isinstance(app.screen, OomTextScreen)
        assert "3 out-of-memory messages in" in text_of(app)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, OomScreen)
        await pilot.press("enter")  # no --dump: said so
        await pilot.pause()
        assert "No dump to open: give the module these buffers belong to, --dump DUMP." in notes(
            app
        )


@pilot_test
async def test_a_padded_tpu_text_details_each_buffer():
    app = app_of(TF1)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        report = app.screen.report
        assert len(report.entries) == 20 and listed(app) == [e.rank for e in report.entries]
        first = report.entries[0]
        text = text_of(app)
        assert f"unpadded {first.unpadded.text}" in text
        assert f"×{first.expansion:.2f}" in text and f"type {first.allocation_type}" in text


# ---- linked to a dump: Enter opens the value --------------------------------------------
def _mib(n: int) -> str:
    return f"{n / (1 << 20):.2f}M"


@pytest.fixture(scope="module")
def gpt() -> ModuleDump:
    return load(str(GPT), lazy=True)


@pytest.fixture
def gpt_oom(tmp_path, gpt):
    """A TPU compile OOM text listing the GPT step's six largest values at its peak (in
    libtpu's form) and a seventh buffer the dump does not have; (path, value ids)."""
    a = gpt.analysis
    instructions = gpt.defining_instructions()
    values = a.peak_values[:6]
    lines = [
        "XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of "
        f"memory in memory space hbm. Used {_mib(a.peak_bytes)} of 16.00M hbm. Exceeded hbm "
        f"capacity by {_mib(a.peak_bytes - (16 << 20))}.",
        "",
        "  Largest program allocations in hbm:",
        "",
    ]
    for n, v in enumerate(values, 1):
        op = instructions[v.value.id]
        lines += [
            f"  {n}. Size: {_mib(v.allocated_bytes)}",
            f'     Operator: op_name="{op.op_name}" source_file="gpt.py" source_line={n}',
            f"     Shape: {v.shape}",
            f"     Unpadded size: {_mib(v.logical_bytes)}",
            f"     XLA label: {v.value.name} = {op.opcode}(...)",
            "     Allocation type: HLO temp",
            "     ==========================",
            "",
        ]
    lines += [
        "  7. Size: 1.00M",
        '     Operator: op_name="jit(gpt_train_step)/elsewhere"',
        "     Shape: f32[512,512]{1,0:T(8,128)}",
        "     XLA label: fusion.99999 = fusion(...)",
        "     Allocation type: HLO temp",
        "     ==========================",
    ]
    path = tmp_path / "gpt-oom.txt"
    path.write_text("\n".join(lines) + "\n")
    return path, [v.value.id for v in values]


@pilot_test
async def test_enter_opens_the_linked_value_in_the_dump_and_backspace_comes_back(gpt, gpt_oom):
    path, ids = gpt_oom
    app = app_of(path, gpt)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        text = text_of(app)
        assert "6 linked to module_0000.jit_gpt_train_step" in text
        assert "fusion.437" in text and "value" in text
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, OomMainScreen))
        main = app.screen
        await until(pilot, lambda: main.selected_value == ids[0])
        assert "backspace Buffers" in text_of(app)  # the footer says where it goes
        assert gpt.analysis.by_id[ids[0]].value.name in text_of(app)  # in the detail
        await pilot.press("backspace")
        await until(pilot, lambda: isinstance(app.screen, OomScreen))
        assert app.screen.query_one(OomList).cursor == 0
        await pilot.press("down", "enter")  # the module's screen was kept: at once
        await pilot.pause()
        assert app.screen is main and main.selected_value == ids[1]
        await pilot.press("backspace")
        await pilot.pause()
        await pilot.press("end", "enter")  # buffer 7: not in the dump
        await pilot.pause()
        assert isinstance(app.screen, OomScreen)
        assert "This buffer names no value of module_0000.jit_gpt_train_step" in notes(app)


def test_the_filter_reads_words_and_field_words_of_each_buffer():
    (report,) = [r for r in find_ooms(GPU.read_text(), "g") if r.entries]
    six = report.entries[5]  # custom-call, the embedder's dot_general
    assert entry_matches(six, None, "CUSTOM embedder")  # case ignored, every word
    assert entry_matches(six, None, "label:custom op_name:decode shape:257152")
    assert not entry_matches(six, None, "op_name:custom")  # custom is in its label only
    assert not entry_matches(six, None, "custom missing")
    assert entry_matches(six, None, "  ")  # no words: every buffer
    assert entry_matches(six, None, "nofield:x") is False  # an unknown field is a word
    assert group_label(six, "scope") == "Model/llm.compute_logits/Model/embedder.decode"
    assert group_label(report.entries[0], "scope") == "(no op_name)"
    assert group_label(report.entries[0], "shape") == "f32[18,2,2048,16384]"
    with pytest.raises(ValueError):
        group_label(six, "opcode")
