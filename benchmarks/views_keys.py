"""Key latency of the views issue 34 added, headless, timed as ``app_probe.py`` times
the browser's keys (from the key reaching the app to the end of the frame that shows
it, rendered to escape sequences): the OOM browser on the text with the most buffers
(sample_dumps/oom/tpu-tf1-2019-largest-program-allocations.txt, 20) and on the GPU
log (15 buffers, three messages), at 80x24 and 200x50; the icicle of the grouped view
on the largest sample dump; the modules view of a folder of twelve runs.

Run: ``PYTHONPATH=tui python benchmarks/views_keys.py``; prints each key's median and
its largest time over its presses, in milliseconds.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from app_probe import _Frames, _key  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_dumps"
TF1 = SAMPLES / "oom" / "tpu-tf1-2019-largest-program-allocations.txt"
GPU = SAMPLES / "oom" / "gpu-jax-2024-peak-buffers.txt"
BIG = SAMPLES / "jax" / "jax-0.9.2" / "transformer_big"
RUNS = SAMPLES / "tpu"


def _line(name: str, times: list[float]) -> str:
    return f"  {name:<34} median {statistics.median(times):6.1f} ms   max {max(times):6.1f} ms"


async def _timed(app, frames, keys: list[str]) -> list[float]:
    out = []
    for key in keys:
        out.append(await _key(app, frames, key))
        await asyncio.sleep(0.02)
    return out


async def oom(path: Path, size: tuple[int, int]) -> None:
    from hlotop.parse.oom import find_ooms, primary
    from hlotop.ui.apps.oom_app import OomApp

    reports = find_ooms(path.read_text(), str(path))
    app = OomApp(str(path), reports, (), None, reports.index(primary(reports)))
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        frames = _Frames(app)
        print(f"{path.name} at {size[0]}x{size[1]}")
        print(_line("down (cursor, 20 presses)", await _timed(app, frames, ["down"] * 20)))
        print(_line("s (sort, 9 presses)", await _timed(app, frames, ["s"] * 9)))
        print(_line("b (group, 9 presses)", await _timed(app, frames, ["b"] * 9)))
        await _timed(app, frames, ["b", "home"])  # grouped by scope, on its first group
        print(_line("enter on a group (10 presses)", await _timed(app, frames, ["enter"] * 10)))
        await _timed(app, frames, ["b", "b"])
        await _key(app, frames, "slash")
        print(_line("typing a filter (8 letters)", await _timed(app, frames, list("tpuv3tpu"))))
        await _timed(app, frames, ["escape"])
        if len(reports) > 1:
            print(_line("m (next message, 9 presses)", await _timed(app, frames, ["m"] * 9)))
        whole = []
        for _ in range(5):
            whole.append(await _key(app, frames, "o"))
            await _key(app, frames, "escape")
        print(_line("o (the whole text, 5 presses)", whole))


async def icicle(path: Path, size: tuple[int, int]) -> None:
    from hlotop.ui.apps.app import HlotopApp

    app = HlotopApp(str(path))
    async with app.run_test(size=size) as pilot:
        await app.wait_until_loaded()
        await pilot.press("v")
        await app.workers.wait_for_complete()
        await pilot.pause()
        frames = _Frames(app)
        print(f"icicle of {path.name} at {size[0]}x{size[1]}")
        opened = []
        for _ in range(5):
            opened.append(await _key(app, frames, "i"))
            await _key(app, frames, "escape")
        print(_line("i (open the icicle, 5 presses)", opened))
        await _key(app, frames, "i")
        print(_line("down in the icicle (20 presses)", await _timed(app, frames, ["down"] * 20)))


async def runs(size: tuple[int, int]) -> None:
    from hlotop.loading.directory import list_run_modules
    from hlotop.ui.apps.modules_app import ModulesApp

    app = ModulesApp(str(RUNS), list_run_modules(RUNS))
    async with app.run_test(size=size) as pilot:
        await app.wait_until_ranked()
        await app.wait_until_filled()
        await pilot.pause()
        frames = _Frames(app)
        print(f"modules view of {RUNS.name}/ (12 runs) at {size[0]}x{size[1]}")
        print(_line("down (20 presses)", await _timed(app, frames, ["down"] * 20)))
        print(_line("s (sort, 8 presses)", await _timed(app, frames, ["s"] * 8)))


async def main() -> None:
    for size in ((80, 24), (200, 50)):
        await oom(TF1, size)
        await oom(GPU, size)
        await icicle(BIG, size)
        await runs(size)


if __name__ == "__main__":
    asyncio.run(main())
