"""Pilot tests of the keys about the selected value and the last search, on real dumps:
``n``/``N`` and the remembered query, the step cursor moved into a chosen match's live
range, ``[``/``]`` (where the value is defined and dies), ``y`` (copy) and ``E`` (the
source in ``$EDITOR``), and the source lines in the detail."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

from textual.widgets import Input

from conftest import ROOT, sample
from hlotop.analysis.search import find_values
from hlotop.loading.loader import load
from hlotop.ui.apps.app import HlotopApp
from hlotop.ui.screens.copy import CopyScreen
from hlotop.ui.screens.search import SearchScreen
from pilot import TPU, notes, pilot_test, screen_text, started, widget_lines

GPT = "tpu/v5e_1x1-gpt_loop"  # op_names and source_file="scripts/generate_tpu_dumps.py"


async def search(app, pilot, query: str) -> None:
    await pilot.press("slash")
    await pilot.pause()
    await pilot.press(*query)
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.press("enter")
    await pilot.pause()


@pilot_test
async def test_a_chosen_match_moves_the_step_cursor_into_its_live_range():
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        assert screen.step == 11  # XLA's peak
        await search(app, pilot, "copy-start.1{2}")  # live 6-8, in S(2) SMEM
        assert screen.selected_value == 32
        assert screen.step == 8 == screen.timeline.step  # the nearest step of 6-8
        assert screen.live.current_value().value.id == 32 and screen.live.shows_selection
        await search(app, pilot, "p0.1")  # live 0-15: the cursor stays
        assert screen.selected_value == 42 and screen.step == 8


@pilot_test
async def test_n_and_N_walk_the_last_search_and_slash_remembers_it():
    dump = load(sample(GPT))
    expected = [i.value.id for i in find_values(dump.analysis.values, "Block_1/attn")]
    assert len(expected) > 3
    app = HlotopApp(sample(GPT))
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await started(app, pilot)
        await search(app, pilot, "Block_1/attn")
        assert screen.selected_value == expected[0]
        await pilot.press("n")
        await pilot.pause()
        assert screen.selected_value == expected[1]
        assert f"match 2/{len(expected)} of 'Block_1/attn'" in notes(app)
        info = dump.analysis.by_id[expected[1]]
        assert info.live.start <= screen.step <= info.live.end
        await pilot.press("N", "N")  # back to the first, then round to the last
        await pilot.pause()
        assert screen.selected_value == expected[-1]
        assert "(from the bottom)" in notes(app)
        await pilot.press("n")
        await pilot.pause()
        assert screen.selected_value == expected[0]
        # / opens on the last query, its last match highlighted; typing replaces it.
        await pilot.press("slash")
        await pilot.pause()
        field = app.screen.query_one(Input)
        assert isinstance(app.screen, SearchScreen) and field.value == "Block_1/attn"
        assert [i.value.id for i in app.screen.matches] == expected
        await pilot.press(*"fusion.19")
        await pilot.pause()
        assert field.value == "fusion.19"
        await pilot.press("escape")
        await pilot.pause()
        assert screen.value_keys.last.query == "fusion.19"  # closed on it: remembered


@pilot_test
async def test_n_before_any_search_says_so():
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        selected = screen.selected_value
        await pilot.press("n")
        await pilot.pause()
        assert "No search yet" in notes(app) and screen.selected_value == selected


@pilot_test
async def test_brackets_go_to_the_steps_where_the_value_is_defined_and_dies():
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        await search(app, pilot, "fusion.12")  # live 7-11
        assert screen.step == 11
        await pilot.press("left_square_bracket")
        await pilot.pause()
        assert screen.step == 7 == screen.timeline.step and screen.selected_value == 36
        assert screen.live.current_value().value.id == 36 and screen.live.shows_selection
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert screen.step == 11 and screen.selected_value == 36
        await search(app, pilot, "x.25")  # thread-local: no live range
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert screen.step == 11 and "has no live range" in notes(app)
        await pilot.press("1", "home")  # allocation 12: four values, none selected
        await pilot.pause()
        assert screen.selected_value is None
        await pilot.press("left_square_bracket")
        await pilot.pause()
        assert "Select a value" in notes(app)


@pilot_test
async def test_y_copies_the_chosen_field_of_the_selected_value():
    dump = load(sample(GPT))
    info = next(v for v in dump.analysis.values if v.value.label == "fusion.19")
    app = HlotopApp(sample(GPT))
    async with app.run_test(size=(160, 50)) as pilot:
        await started(app, pilot)
        await search(app, pilot, "fusion.19")
        await pilot.press("y")
        await pilot.pause()
        assert isinstance(app.screen, CopyScreen)
        text = screen_text(app)
        assert "o op_name  " + info.op_name in text and "l source   " + info.source in text
        await pilot.press("o")
        await pilot.pause()
        assert app.clipboard == info.op_name
        assert f"Copied the op_name: {info.op_name}" in notes(app)
        for key, field in (("n", "fusion.19"), ("s", info.shape), ("l", info.source)):
            await pilot.press("y", key)
            await pilot.pause()
            assert app.clipboard == field
        await pilot.press("y", "escape")
        await pilot.pause()
        assert app.clipboard == info.source and not isinstance(app.screen, CopyScreen)


def recording_editor(tmp_path: Path) -> tuple[str, Path]:
    """A script that writes its arguments to a file: ``$EDITOR`` in the tests."""
    record = tmp_path / "editor-args.json"
    script = tmp_path / "editor.py"
    script.write_text(
        f"import json, sys\nopen({str(record)!r}, 'w').write(json.dumps(sys.argv[1:]))\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return f"{sys.executable} {script} --wait", record


@pilot_test
async def test_E_opens_the_source_at_its_line_in_the_editor(tmp_path, monkeypatch):
    command, record = recording_editor(tmp_path)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", command)
    monkeypatch.chdir(ROOT)
    app = HlotopApp(sample(GPT))
    async with app.run_test(size=(160, 50)) as pilot:
        await started(app, pilot)
        await search(app, pilot, "reduce_max.5")  # scripts/generate_tpu_dumps.py:1209
        await pilot.press("E")
        await pilot.pause()
        args = json.loads(record.read_text())
        assert args == ["--wait", "+1209", str(ROOT / "scripts" / "generate_tpu_dumps.py")]
        assert "Not opened" not in notes(app)


@pilot_test
async def test_E_without_editor_file_or_source_says_why(tmp_path, monkeypatch):
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.chdir(ROOT)
    app = HlotopApp(sample(GPT))
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await started(app, pilot)
        await search(app, pilot, "reduce_max.5")
        await pilot.press("E")
        await pilot.pause()
        assert "Set $EDITOR (or $VISUAL) to open" in notes(app)
        assert "generate_tpu_dumps.py:1209" in notes(app)
        monkeypatch.setenv("EDITOR", "no-such-editor-hlotop")
        await pilot.press("E")
        await pilot.pause()
        assert "Not opened: no program 'no-such-editor-hlotop'" in notes(app)
        monkeypatch.setenv("EDITOR", f"{sys.executable} -c 'raise SystemExit(3)'")
        await pilot.press("E")
        await pilot.pause()
        assert "exited with status 3" in notes(app)
        monkeypatch.chdir(tmp_path)  # the script is nowhere to be found from here
        monkeypatch.setattr(sys, "path", [])
        screen.select_value(screen.selected_value)
        await pilot.press("E")
        await pilot.pause()
        assert "scripts/generate_tpu_dumps.py is not on this machine" in notes(app)
        await search(app, pilot, "reduce_sum.3")  # no source in its metadata
        await pilot.press("E")
        await pilot.pause()
        assert "has no source file:line" in notes(app)
    assert app.return_code in (None, 0)


@pilot_test
async def test_the_detail_shows_the_source_lines_when_the_file_is_here(monkeypatch):
    monkeypatch.chdir(ROOT)
    app = HlotopApp(sample(GPT))
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await started(app, pilot)
        await search(app, pilot, "reduce_max.5")
        await pilot.press("4", "end")
        await pilot.pause()
        lines = widget_lines(screen.detail)
        assert any(
            "source on this machine: " + str(ROOT / "scripts/generate_tpu_dumps.py") in line
            for line in lines
        )
        assert any(line.strip().startswith("▶ 1209  a = jax.nn.softmax(") for line in lines)
        assert any(line.strip().startswith("1208  s = jnp.einsum(") for line in lines)
    assert os.getcwd() == str(ROOT)
