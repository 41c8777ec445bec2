"""Measure the browser on one dump, headless through Textual's Pilot; print JSON.

Run by ``benchmarks/run.py`` in a fresh process per dump::

    python benchmarks/app_probe.py DUMP [--moves 200]

Reports seconds to the first painted main screen, seconds until every value record is
read (not counting the time loading stood aside for the key presses), and per-key
latencies in milliseconds: cursor moves in the allocation tree and the
timeline while the records are still being read, and again once everything is loaded.

A key's latency is the time from the key reaching the app (as the terminal driver hands
it over) to the end of the frame that shows its effect, turned into the escape sequences
a real terminal would be sent (the headless driver skips that step; the probe does it).
It is measured inside the event loop, polling every half millisecond, and not with
``Pilot.press``: that sleeps at least 20 ms three times per key to see the app idle,
which alone is over 60 ms a key even on an empty app.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tui"))

from textual import events  # noqa: E402
from textual._compositor import CompositorUpdate  # noqa: E402

from hlotop.ui.app import HlotopApp  # noqa: E402

SIZE = (120, 40)


def _ready(app) -> bool:
    return type(app.screen).__name__ == "MainScreen"


def _loaded(app) -> bool:
    module = getattr(app, "module", None)
    return module is not None and getattr(module, "records_read", True)


class _Frames:
    """Times the end of every frame the app composes, after rendering it to terminal
    escape sequences as a real driver would."""

    def __init__(self, app):
        self.app = app
        self.last = 0.0
        display = app._display

        def timed_display(screen, renderable):
            if isinstance(renderable, CompositorUpdate):
                renderable.render_segments(app.console)
            display(screen, renderable)
            self.last = time.perf_counter()

        app._display = timed_display


def _settled(app) -> bool:
    """No message waiting anywhere on the screen and no repaint pending."""
    screen = app.screen
    if (
        not app._message_queue.empty()
        or screen._dirty_widgets
        or screen._layout_required
        or screen._repaint_required
        or screen._scroll_required
    ):
        return False
    return all(node._message_queue.empty() for node in screen.walk_children(with_self=True))


async def _key(app, frames: _Frames, key: str) -> float:
    """Milliseconds from handing ``key`` to the app until its frame is out."""
    event = events.Key(key, None)
    event.set_sender(app)
    start = time.perf_counter()
    app._driver.send_message(event)
    quiet = 0
    while quiet < 3:  # settled on three looks in a row (1.5 ms)
        await asyncio.sleep(0.0005)
        quiet = quiet + 1 if _settled(app) else 0
    return (max(frames.last, start) - start) * 1000


async def _presses(app, frames: _Frames, keys: list[str], stop=None) -> list[float]:
    out = []
    for key in keys:
        if stop is not None and stop():
            break
        out.append(await _key(app, frames, key))
        await asyncio.sleep(0.02)  # a fast typist's pace, and lets the screen settle
    return out


async def probe(path: str, moves: int) -> dict:
    start = time.perf_counter()
    app = HlotopApp(path)
    created = time.perf_counter() - start
    async with app.run_test(size=SIZE) as pilot:
        # The app marks the first painted main screen (the preview of a big dump, or
        # the whole of a small one). Not Pilot.pause(): it waits for the process to
        # look idle, which it does not while the rest of a big dump loads.
        while not {"preview", "painted"} & app.milestones.keys():
            await asyncio.sleep(0.002)
        first = min(app.milestones.get(k, 1e9) for k in ("preview", "painted")) + created
        frames = _Frames(app)
        await _key(app, frames, "1")  # not Pilot.press: as above
        keys = ["down", "up"] * (moves // 2)
        during = await _presses(app, frames, keys, stop=lambda: _loaded(app))
        while not _loaded(app):
            await asyncio.sleep(0.005)
        # Loading stands aside while keys come in (HlotopApp.yield_to_input): the time
        # it waited for the presses above is not loading time.
        loaded = time.perf_counter() - start - app._waited
        await pilot.press("1", "home")
        idle = await _presses(app, frames, ["down"] * moves)
        await pilot.press("2", "home")
        idle += await _presses(app, frames, ["right"] * moves)
        await pilot.press("q")
    return {
        "first_screen_s": first,
        "loaded_s": loaded,
        "keys_loading_ms": during,
        "keys_idle_ms": idle,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dump")
    parser.add_argument("--moves", type=int, default=200)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(probe(args.dump, args.moves))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
