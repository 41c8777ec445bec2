"""Screen snapshots (SVG, in snapshots/) of hlotop on the seed dumps.

Each test waits for the dump to be loaded and every record read before any key is
pressed, so the screenshot is of the main screen, never of the loading indicator or of
the background pass's progress. Update with
``pytest tests/test_app_snapshots.py --snapshot-update`` and look at the SVGs.
"""

from __future__ import annotations

from textual.widgets import Input

from conftest import ROOT, sample
from hlotop.ui.apps.app import HlotopApp
from hlotop.ui.apps.diff_app import DiffApp

TPU = "seeds/003_a3085531593bac68.txt"  # VMEM S(1) and SMEM S(2), peak at step 11
TPU_OLD = "seeds/004_e0d5fae9bf2de249.txt"  # tiling padding, 1.26GiB
CPU_TRACE = "seeds/000_aa093b3e4f73e23a.txt"  # stack-trace breakdown


def app(relative: str) -> HlotopApp:
    return HlotopApp(sample(relative))


async def loaded(pilot) -> None:
    """The main screen, once the background pass has read every record: no progress
    line, and the final diagnostics count."""
    await pilot.app.wait_until_loaded()
    await pilot.pause()


def then(*keys: str):
    """A run_before that waits for the dump, presses ``keys`` and settles."""

    async def run(pilot) -> None:
        await loaded(pilot)
        for key in keys:
            await pilot.press(key)
            await pilot.pause()

    return run


def test_small_terminal_allocation_tree(snap_compare):
    """80x24, one pane at a time: the allocation tree, largest first, allocation 12
    (VMEM) expanded to its four values."""
    assert snap_compare(app(TPU), terminal_size=(80, 24), run_before=then("enter"))


def test_small_terminal_timeline(snap_compare):
    """80x24 timeline: live-bytes curve, peak at step 11, cursor moved to step 8, the
    row of copy-start.1{0} (VMEM, ▓) selected."""
    assert snap_compare(
        app(TPU), terminal_size=(80, 24), run_before=then("2", "left", "left", "left", *["j"] * 9)
    )


def test_small_terminal_timeline_vmem_curve_at_its_maximum(snap_compare):
    """80x24 timeline: ``m`` draws VMEM's occupied bytes (86.00MiB at most, never above
    the space's allocation), ``P`` moves the cursor to that maximum (▲, step 7), and the
    line under the step says both XLA's peak (◆ 228.00MiB at 11) and the curve's."""
    assert snap_compare(app(TPU), terminal_size=(80, 24), run_before=then("2", "m", "P"))


def test_small_terminal_figures(snap_compare):
    """80x24 figures screen (``o``): XLA's peak and hlotop's two measures, then JAX's
    memory_analysis() sizes with the TPU temp note."""
    assert snap_compare(app(TPU), terminal_size=(80, 24), run_before=then("o"))


def test_large_terminal_figures_on_a_tpu_program_with_host_offload(snap_compare):
    """160x50 figures screen of a real v5e program with host offload: host memory (5,
    the report's "cmem") in the host_* column, every memory space with its label,
    occupied peak and padding, and the most padded values with their tiling."""
    target = "tpu/v5e_1x1-host_offload"
    assert snap_compare(app(target), terminal_size=(160, 50), run_before=then("o"))


def test_small_terminal_peak_breakdown_with_stack_trace(snap_compare):
    """80x24 live set at the peak (step 3) with XLA's stack-trace tree."""
    assert snap_compare(app(CPU_TRACE), terminal_size=(80, 24), run_before=then("3"))


def test_value_detail_with_padding(snap_compare):
    """Detail of copy.3 (seed 004): allocated 325.00MiB vs logical 320.62MiB, its
    tiling, live range and the conv op_name with [ ] brackets shown literally."""
    assert snap_compare(app(TPU_OLD), terminal_size=(100, 30), run_before=then("3", "enter"))


def test_help_screen(snap_compare):
    assert snap_compare(app(TPU), terminal_size=(100, 40), run_before=then("question_mark"))


def test_search(snap_compare):
    """The search box after typing "fusion": three matches, largest first, the first
    highlighted and marked ▶ (not by its colour alone)."""

    async def run(pilot) -> None:
        await loaded(pilot)
        await pilot.press("slash", *"fusion")
        pilot.app.screen.query_one(Input).cursor_blink = False
        await pilot.pause()

    assert snap_compare(app(TPU), terminal_size=(80, 24), run_before=run)


def test_large_terminal_tpu_colours(snap_compare):
    """160x50, panes side by side; seed 003 with allocations 12 (S(1) VMEM) and 11
    (S(2) SMEM) expanded: the same colours in the tree, timeline, live set and legend."""
    keys = ("enter", "end", "enter")  # expand 12 (largest), then 11 (smallest, last)
    assert snap_compare(app(TPU), terminal_size=(160, 50), run_before=then(*keys))


def test_very_large_terminal(snap_compare):
    """200x60 on seed 004, with the timeline zoomed in one level."""
    assert snap_compare(app(TPU_OLD), terminal_size=(200, 60), run_before=then("2", "plus", "1"))


def test_search_result_selected_everywhere(snap_compare):
    """120x40: after searching fusion.12 every pane shows it selected."""

    async def run(pilot) -> None:
        await loaded(pilot)
        await pilot.press("slash", *"fusion.12", "enter")
        await pilot.pause()

    assert snap_compare(app(TPU), terminal_size=(120, 40), run_before=run)


def _damaged_copy(tmp_path, monkeypatch, seed: str, name: str, edit) -> HlotopApp:
    """A copy of a seed dump changed by ``edit(text) -> text``, opened by a path
    relative to the working folder (tmp_path), so no absolute path is on screen."""
    text = (ROOT / "sample_dumps" / seed).read_text()
    (tmp_path / name).write_text(edit(text))
    monkeypatch.chdir(tmp_path)
    return HlotopApp(name)


def _insert_garbage(text: str) -> str:
    lines = text.split("\n")
    lines.insert(
        lines.index("allocation 10: size 49184, preallocated-temp:") + 1,
        "garbage under allocation 10",
    )
    at = lines.index("<29 p3.6 @0>") + 2
    lines.insert(at, "garbage [bold red]markup[/] \x1b]0;title\x07")
    lines.insert(0, "# a line nobody expected")
    return "\n".join(lines).rstrip("\n")  # and no final newline: reported as cut short


def test_diagnostics_screen_on_a_damaged_dump(snap_compare, tmp_path, monkeypatch):
    """Seed 003 with three unreadable lines and no final newline: one row each, in
    line order; the third highlighted (inside the record of p3.6, holding markup and
    an OSC sequence, both shown as text), with its full message and where ⏎ goes."""
    app = _damaged_copy(tmp_path, monkeypatch, TPU, "damaged.txt", _insert_garbage)
    assert snap_compare(app, terminal_size=(100, 30), run_before=then("d", "down", "down"))


MARKUP_OP_NAME = "[bold red]x[/] s[0].mu['params']"


def test_markup_bearing_op_name_shown_literally(snap_compare, tmp_path, monkeypatch):
    """Seed 002 with the op_name args[2] made Rich markup and a pytree label, in its
    value's metadata and in XLA's stack-trace breakdown: the value's detail and the
    peak breakdown show the brackets as they are, nothing in bold red."""

    def edit(text: str) -> str:
        assert text.count("args[2]") == 2
        return text.replace("args[2]", MARKUP_OP_NAME)

    app = _damaged_copy(tmp_path, monkeypatch, "seeds/002_c2e226da3172e77e.txt", "markup.txt", edit)
    assert snap_compare(app, terminal_size=(120, 40), run_before=then("slash", *"args_2_", "enter"))


def grouped_then(*keys: str):
    """A run_before that waits for the dump, turns pane 3 grouped (``v``), presses
    ``keys`` and waits for every grouping (made in thread workers)."""

    async def run(pilot) -> None:
        await loaded(pilot)
        for key in ("v", *keys):
            await pilot.press(key)
            await pilot.app.workers.wait_for_complete()
            await pilot.pause()

    return run


def test_small_terminal_grouped_live_set(snap_compare):
    """80x24, the grouped view of a real CPU train step at XLA's peak (step 167), by
    phase,scope: forward (open from the start) closed, argument opened to its
    scopes; the nodes under 1% of the step's total folded into "N values below X"."""
    keys = ("home", "left", "down", "right")
    assert snap_compare(
        app("cpu/transformer_loop"), terminal_size=(80, 24), run_before=grouped_then(*keys)
    )


def test_large_terminal_grouped_live_set_by_kind_and_space(snap_compare):
    """160x50, the TPU seed grouped by kind,space (b twice) in occupied bytes (u):
    parameter (open from the start) and preallocated-temp open to their values, in
    their memory space's colour (HBM, S(1) VMEM); the first VMEM value selected, so
    the timeline's row and the detail show it too."""
    # parameter › HBM open: 5 values; then preallocated-temp › VMEM open, its first value
    keys = "b b u home right right down down down down down down right right right down".split()
    assert snap_compare(app(TPU), terminal_size=(160, 50), run_before=grouped_then(*keys))


def diff_then(*keys: str):
    """A run_before for the diff browser: wait for both compiles to be compared, press
    ``keys`` (waiting for any regrouping) and settle."""

    async def run(pilot) -> None:
        await pilot.app.wait_until_loaded()
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
            await pilot.app.workers.wait_for_complete()
            await pilot.pause()

    return run


def test_diff_small_terminal_groups(snap_compare):
    """80x24 diff browser of the GPT train step at batch 8 (OLD) and 16 (NEW): the
    headline (total +84.8%, XLA's peak +84.5%), the groups tab by phase,scope with
    forward (the largest change) open and GPT/Block_*/attn opened to its grown values,
    each with its change class and the key that matched it; the first one selected."""
    app = DiffApp(sample("cpu/gpt_loop"), sample("cpu/gpt_loop_batch16"))
    keys = ("2", "down", "right", "down")
    assert snap_compare(app, terminal_size=(80, 24), run_before=diff_then(*keys))


def test_diff_large_terminal_remat(snap_compare):
    """160x50 diff browser of a TPU transformer step without and with remat: every
    pane; the figures (XLA's peak step moved 160 -> 338, VMEM -33.4%), backward flagged
    "new, large", forward's (top level) opened and its first value (left peak, matched
    by op_name) in the detail, OLD and NEW side by side; the HBM curves with the
    cursor where they differ most."""
    app = DiffApp(sample("tpu/v5e_1x1-transformer_loop"), sample("tpu/v5e_1x1-transformer_remat"))
    assert snap_compare(app, terminal_size=(160, 50), run_before=diff_then("down", "right", "down"))


def modules_then(*keys: str):
    """A run_before for the modules view: waits for the ranking and for every row's
    module to be loaded (the sparklines), presses ``keys`` and settles."""

    async def run(pilot) -> None:
        await pilot.app.wait_until_ranked()
        await pilot.app.wait_until_filled()
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
            await pilot.pause()

    return run


def test_small_terminal_modules_view(snap_compare):
    """80x24, ``hlotop DIR`` on the 19-module jax 0.10.2 CPU run: the ranked rows (the
    two jit_convert_element_type modules as one row ×2), the figures across modules,
    the occupied-bytes sparklines; the columns that do not fit are counted on the
    border."""
    from hlotop.ui.apps.modules_app import ModulesApp

    app = ModulesApp(sample("dirs/jax-0.10.2-cpu-train"))
    assert snap_compare(app, terminal_size=(80, 24), run_before=modules_then())


def test_large_terminal_modules_view_with_capacity(snap_compare):
    """160x50, the same run against a 4MiB capacity: every column, the capacity line
    (2 modules over: the train step and jit__normal, by 780 bytes) and each row's
    headroom or excess, sorted by temp (s s s), the cursor on the eighth row."""
    from hlotop.ui.apps.modules_app import ModulesApp

    app = ModulesApp(sample("dirs/jax-0.10.2-cpu-train"), capacity=(4 << 20, "4MiB"))
    keys = ("s", "s", "s", "down", "down")
    assert snap_compare(app, terminal_size=(160, 50), run_before=modules_then(*keys))
