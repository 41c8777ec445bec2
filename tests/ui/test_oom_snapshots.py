"""Screen snapshots (SVG, in snapshots/) of an out-of-memory text in the browser
(``hlotop LOG`` at a terminal): the most telling message's figures as printed and its
buffers as a list with the highlighted one in full, at 80x24 and large; the buffers
grouped by scope; a message without buffers, its figures whole."""

from __future__ import annotations

from conftest import SAMPLES
from hlotop.parse.oom import find_ooms, primary
from hlotop.ui.apps.oom_app import OomApp

TPU_OOM = SAMPLES / "oom" / "tpu-jax-2024-largest-program-allocations.txt"
GPU_OOM = SAMPLES / "oom" / "gpu-jax-2024-peak-buffers.txt"
H200_OOM = SAMPLES / "oom" / "jax-0.11.2-h200-combined_oom.log"


def app(path) -> OomApp:
    """The browser ``hlotop LOG`` opens (cli.commands.oom_command), without a dump."""
    reports = find_ooms(path.read_text(), path.name)
    assert reports
    return OomApp(path.name, reports, (), None, reports.index(primary(reports)))


def test_small_terminal_tpu_oom(snap_compare):
    """80x24: the TPU compile text's capacity (15.48G), used (30.21G) and excess
    (14.73G) as printed, its two buffers listed, the first in full (its op_name,
    source, unpadded size and allocation type)."""
    assert snap_compare(app(TPU_OOM), terminal_size=(80, 24))


def test_large_terminal_gpu_oom(snap_compare):
    """160x50: the GPU job's log opens on its runtime report (message 3 of 3: used,
    requested as printed), its 15 peak buffers listed by size with their op_names, the
    first with its exact bytes by its shape and its line."""
    assert snap_compare(app(GPU_OOM), terminal_size=(160, 50))


def test_large_terminal_gpu_oom_grouped_by_scope(snap_compare):
    """160x50, b: the buffers grouped by scope, each group's bytes, share and count."""
    assert snap_compare(app(GPU_OOM), terminal_size=(160, 50), press=["b"])


def test_small_terminal_every_message_of_a_log(snap_compare):
    """80x24: the jax 0.11.2 H200 log opens on its most telling message, the BFC
    allocator's request of 149.01GiB (rounded to 160000000000) with its runtime error;
    it lists no buffers, so its figures are shown whole (m shows the others)."""
    assert snap_compare(app(H200_OOM), terminal_size=(80, 24))


def test_capacity_on_the_timeline(snap_compare):
    """120x40, --capacity 8MiB on the v5e GPT train step (HBM needs 11.41MiB): the
    header says 'over by 3.41MiB of 8.00MiB'; the timeline's HBM curve is in the peak's
    colour where it is above 8MiB, and the line above it counts the steps over."""
    from hlotop.ui.apps.app import HlotopApp

    path = SAMPLES / "tpu" / "v5e_1x1-gpt_loop"

    async def run(pilot) -> None:
        await pilot.app.wait_until_loaded()
        await pilot.pause()
        await pilot.press("2")
        await pilot.pause()

    app = HlotopApp(str(path), capacity=(8 << 20, "8MiB"))
    assert snap_compare(app, terminal_size=(120, 40), run_before=run)
