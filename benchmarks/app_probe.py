"""Measure the browser on one dump, headless through Textual's Pilot; print JSON.

Run by ``benchmarks/run.py`` in a fresh process per dump::

    python benchmarks/app_probe.py DUMP [--moves 200] [--first-only]

Reports seconds to the first *truthful* screen (below), seconds to the first painted main
screen of any kind (``preview_s``: a big dump's preview, which may show only the
allocations printed in its head), seconds until every value record is
read (not counting the time loading stood aside for the key presses), and per-key
latencies in milliseconds: cursor moves in the allocation tree and the
timeline while the records are still being read, and again once everything is loaded.

A key's latency is the time from the key reaching the app (as the terminal driver hands
it over) to the end of the frame that shows its effect, turned into the escape sequences
a real terminal would be sent (the headless driver skips that step; the probe does it).
It is measured inside the event loop, polling every half millisecond, and not with
``Pilot.press``: that sleeps at least 20 ms three times per key to see the app idle,
which alone is over 60 ms a key even on an empty app.

A first screen only counts once the allocation tree shows every allocation of the dump
sorted by size, with the true total: the tree of the main screen must have as many
allocations as the dump, and its first row must be the dump's largest allocation (both
read from the dump's allocation lines before the app starts). The time is the app's
``"allocations"`` milestone (a main screen showing every allocation was painted) when
the app has one and the tree bears it out; otherwise that of the painted screen (its
``"preview"`` or ``"painted"`` milestone) on which the probe sees the tree right, or
the moment it sees it. The output says which (``first_screen_by``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tui"))

from textual import events  # noqa: E402
from textual._compositor import CompositorUpdate  # noqa: E402

from hlotop.process import give_back_big_buffers  # noqa: E402
from hlotop.ui.apps.app import HlotopApp  # noqa: E402
from hlotop.ui.widgets.allocation_tree import AllocationTree  # noqa: E402

SIZE = (120, 40)


_ALLOCATION = re.compile(rb"^allocation (\d+): (?:0x[0-9a-f]+, )?size (\d+)")


def expected_allocations(path: str) -> tuple[int, int, int]:
    """(number of allocations, index and size of the first row the allocation tree
    must show: the largest, the lowest index among equals), read from the dump's
    allocation lines a line at a time (the probe's peak RSS stays the app's)."""
    count, best = 0, (-1, 0)  # (size, -index)
    with open(path, "rb") as f:
        for line in f:
            if line.startswith(b"allocation "):
                m = _ALLOCATION.match(line)
                if m:
                    count += 1
                    best = max(best, (int(m.group(2)), -int(m.group(1))))
            elif line.startswith((b"Used values:", b"Total bytes used", b"HloLiveRange")):
                break  # the combined layout: the allocations are over
    return count, -best[1], best[0]


def _tree_ok(app, expected: tuple[int, int, int]) -> bool | None:
    """Whether the allocation tree of the main screen shown holds every allocation by
    size, the largest first (None: no main screen with a tree yet)."""
    screen = app.screen
    if type(screen).__name__ != "MainScreen":
        return None
    try:
        tree = screen.query_one(AllocationTree)
    except Exception:  # noqa: BLE001 - not mounted yet, or being replaced
        return None
    order = tree._order
    count, index, size = expected
    if not tree.by_size or len(order) != count:
        return False
    return not order or (order[0].index, order[0].size) == (index, size)


def _painted(app) -> str | None:
    """The milestone of the painted main screen shown: "painted" (the whole dump),
    "preview" (its first look), or None (not painted yet)."""
    screen = app.screen
    if type(screen).__name__ != "MainScreen":
        return None
    milestone = "painted" if screen.dump.preview is None else "preview"
    return milestone if milestone in app.milestones else None


async def first_truthful(app, expected: tuple[int, int, int]) -> tuple[float | None, str]:
    """Seconds since the app was made to its first truthful screen, and how it was
    found. The app's "allocations" milestone is checked against the tree; a milestone
    the tree does not bear out yet is replaced by the time the probe sees it does. A
    painted screen of the whole dump whose tree is wrong is reported (None) a second
    after it is seen, rather than waited on for ever."""
    wrong_since = None
    while True:
        ok = _tree_ok(app, expected)
        if "allocations" in app.milestones:
            if ok:
                return app.milestones["allocations"], "the app's allocations milestone (checked)"
            mark = "the probe, later than the app's allocations milestone (its tree was wrong)"
        else:
            mark = None
        milestone = _painted(app)
        if ok and milestone is not None:
            if mark is not None:
                return time.perf_counter() - app._started, mark
            return app.milestones[milestone], f"the probe's check of the tree ({milestone})"
        if milestone == "painted" and ok is False:
            wrong_since = wrong_since or time.perf_counter()
            if time.perf_counter() - wrong_since > 1.0:
                return None, "never: the whole dump's tree lacks allocations or its largest first"
        await asyncio.sleep(0.002)


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


async def probe(path: str, moves: int, first_only: bool = False) -> dict:
    expected = expected_allocations(path)
    start = time.perf_counter()
    app = HlotopApp(path)
    created = time.perf_counter() - start
    async with app.run_test(size=SIZE) as pilot:
        # The app marks the first painted main screen (the preview of a big dump, or
        # the whole of a small one). Not Pilot.pause(): it waits for the process to
        # look idle, which it does not while the rest of a big dump loads.
        while not {"preview", "painted"} & app.milestones.keys():
            await asyncio.sleep(0.002)
        preview = min(app.milestones.get(k, 1e9) for k in ("preview", "painted")) + created
        # The first truthful screen: every allocation, the largest first.
        first, by = await first_truthful(app, expected)
        first = first + created if first is not None else None
        if first_only:
            return {"first_screen_s": first, "first_screen_by": by, "preview_s": preview}
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
        tree = await _presses(app, frames, ["down"] * moves)
        await pilot.press("2", "home")
        timeline = await _presses(app, frames, ["right"] * moves)
        await pilot.press("q")
    return {
        "first_screen_s": first,
        "first_screen_by": by,
        "preview_s": preview,
        "allocations": expected[0],
        "loaded_s": loaded,
        "keys_loading_ms": during,
        "keys_idle_ms": tree + timeline,
        "keys_tree_ms": tree,
        "keys_timeline_ms": timeline,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dump")
    parser.add_argument("--moves", type=int, default=200)
    parser.add_argument(
        "--first-only",
        action="store_true",
        help="measure the first screens only, and stop there (not waiting for the load)",
    )
    args = parser.parse_args()
    give_back_big_buffers()  # the process policy of the hlotop command (hlotop.cli.run)
    print(json.dumps(asyncio.run(probe(args.dump, args.moves, args.first_only))), flush=True)
    if args.first_only:
        os._exit(0)  # the load thread is not waited for
    return 0


if __name__ == "__main__":
    sys.exit(main())
