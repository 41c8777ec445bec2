"""Screen snapshots (SVG, in snapshots/) of an out-of-memory text in the browser
(``hlotop LOG`` at a terminal): its figures, buffers and groups, at 80x24 and large."""

from __future__ import annotations

from conftest import SAMPLES
from hlotop.parse.oom import parse_oom
from hlotop.report.oom_report import render_oom
from hlotop.ui.text_app import TextApp

TPU_OOM = SAMPLES / "oom" / "tpu-jax-2024-largest-program-allocations.txt"
GPU_OOM = SAMPLES / "oom" / "gpu-jax-2024-peak-buffers.txt"


def app(path) -> TextApp:
    report = parse_oom(path.read_text(), path.name)
    assert report is not None
    return TextApp(f"out of memory · {path.name}", render_oom(report))


def test_small_terminal_tpu_oom(snap_compare):
    """80x24: the TPU compile text's capacity (15.48GiB), used (30.21GiB) and excess."""
    assert snap_compare(app(TPU_OOM), terminal_size=(80, 24))


def test_large_terminal_gpu_oom(snap_compare):
    """160x50: the GPU runtime text's peak buffers and their groups by scope and shape."""
    assert snap_compare(app(GPU_OOM), terminal_size=(160, 50))


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
