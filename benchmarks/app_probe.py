"""Measure the browser on one dump, headless through Textual's Pilot; print JSON.

Run by ``benchmarks/run.py`` in a fresh process per dump::

    python benchmarks/app_probe.py DUMP [--moves 200]

Reports seconds to the first painted main screen, seconds until every value record is
read, and per-key latencies (press + repaint) in milliseconds: cursor moves in the
allocation tree and the timeline while the records are still being read, and again once
everything is loaded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tui"))

from hlotop.app import HlotopApp  # noqa: E402

SIZE = (120, 40)


def _ready(app) -> bool:
    return type(app.screen).__name__ == "MainScreen"


def _loaded(app) -> bool:
    module = getattr(app, "module", None)
    return module is not None and getattr(module, "records_read", True)


async def _presses(pilot, keys: list[str], stop=None) -> list[float]:
    out = []
    for key in keys:
        if stop is not None and stop():
            break
        t = time.perf_counter()
        await pilot.press(key)
        await pilot.pause()
        out.append((time.perf_counter() - t) * 1000)
    return out


async def probe(path: str, moves: int) -> dict:
    start = time.perf_counter()
    app = HlotopApp(path)
    async with app.run_test(size=SIZE) as pilot:
        while not _ready(app):
            await asyncio.sleep(0.002)
        await pilot.pause()
        first = time.perf_counter() - start
        await pilot.press("1")
        keys = ["down", "up"] * (moves // 2)
        during = await _presses(pilot, keys, stop=lambda: _loaded(app))
        while not _loaded(app):
            await asyncio.sleep(0.005)
        loaded = time.perf_counter() - start
        await pilot.press("1", "home")
        idle = await _presses(pilot, ["down"] * moves)
        await pilot.press("2", "home")
        idle += await _presses(pilot, ["right"] * moves)
        await pilot.press("q")
    return {"first_screen_s": first, "loaded_s": loaded, "keys_loading_ms": during,
            "keys_idle_ms": idle}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dump")
    parser.add_argument("--moves", type=int, default=200)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(probe(args.dump, args.moves))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
