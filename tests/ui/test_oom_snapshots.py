"""Screen snapshots (SVG, in snapshots/) of an out-of-memory text in the browser
(``hlotop LOG`` at a terminal): each message's figures as printed, its buffers and
groups, at 80x24 and large."""

from __future__ import annotations

from conftest import SAMPLES
from hlotop.parse.oom import find_ooms, primary
from hlotop.report.oom_report import render_ooms
from hlotop.ui.text_app import TextApp

TPU_OOM = SAMPLES / "oom" / "tpu-jax-2024-largest-program-allocations.txt"
GPU_OOM = SAMPLES / "oom" / "gpu-jax-2024-peak-buffers.txt"
H200_OOM = SAMPLES / "oom" / "jax-0.11.2-h200-combined_oom.log"


def app(path) -> TextApp:
    """The screen ``hlotop LOG`` opens (cli.commands.oom_command)."""
    reports = find_ooms(path.read_text(), path.name)
    assert reports
    return TextApp(f"out of memory · {path.name}", render_ooms(reports, (), "", primary(reports)))


def test_small_terminal_tpu_oom(snap_compare):
    """80x24: the TPU compile text's capacity (15.48G), used (30.21G) and excess
    (14.73G) as printed, and its usage table."""
    assert snap_compare(app(TPU_OOM), terminal_size=(80, 24))


def test_large_terminal_gpu_oom(snap_compare):
    """160x50: the three messages of the GPU job's log (the remat pass's target, the
    BFC allocator's request 'rounded to 17528956160', the runtime's report), the
    peak buffers each with its exact bytes by its shape and its line."""
    assert snap_compare(app(GPU_OOM), terminal_size=(160, 50))


def test_small_terminal_every_message_of_a_log(snap_compare):
    """80x24: the jax 0.11.2 H200 log's three messages, each with its line: the
    scheduler's base limit, the remat pass's target (not a capacity), the BFC
    allocator's request of 149.01GiB (rounded to 160000000000) with its runtime error."""
    assert snap_compare(app(H200_OOM), terminal_size=(80, 24))


def test_capacity_on_the_timeline(snap_compare):
    """120x40, --capacity 8MiB on the v5e GPT train step (HBM needs 11.41MiB): the
    header says 'over by 3.41MiB of 8.00MiB'; the timeline's HBM curve is in the peak's
    colour where it is above 8MiB, and the line above it counts the steps over."""
    from hlotop.ui.app import HlotopApp

    path = SAMPLES / "tpu" / "v5e_1x1-gpt_loop"

    async def run(pilot) -> None:
        await pilot.app.wait_until_loaded()
        await pilot.pause()
        await pilot.press("2")
        await pilot.pause()

    app = HlotopApp(str(path), capacity=(8 << 20, "8MiB"))
    assert snap_compare(app, terminal_size=(120, 40), run_before=run)
