"""Time the list keys (filter f, sort s, n/N, [ ], y) on one dump, headless through
Textual's Pilot; print a table of milliseconds per key (median, p90, max).

    python benchmarks/list_keys_probe.py [DUMP ...]   (default: the largest sample dumps)

A key's time runs from the key reaching the app until the end of the frame that shows
its effect, rendered to terminal escape sequences (as ``app_probe.py`` measures it:
its ``_key``). A filter on a dump of more than a few thousand values is worked out in a
thread worker; for those keys the time runs until its result is on screen too
("until shown"), the worker waited for.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tui"))
sys.path.insert(0, str(HERE))

from app_probe import _Frames, _key, _settled  # noqa: E402
from hlotop.ui.apps.app import HlotopApp  # noqa: E402

SIZE = (160, 50)
DEFAULT = [
    "sample_dumps/jax/jax-0.9.2/transformer_big",
    "sample_dumps/jax/jax-0.10.2/transformer_big",
    "sample_dumps/tpu/v5e_1x1-gpt_loop",
]


async def _shown(app, frames: _Frames, key: str) -> float:
    """Milliseconds from ``key`` until its effect is on screen, a thread worker's too."""
    start = time.perf_counter()
    await _key(app, frames, key)
    while getattr(getattr(app.screen, "lists", None), "matching", False):  # a filter's
        # worker starts once the typing pauses
        await asyncio.sleep(0.001)
    await app.workers.wait_for_complete()
    quiet = 0
    while quiet < 3:
        await asyncio.sleep(0.0005)
        quiet = quiet + 1 if _settled(app) else 0
    return (max(frames.last, start) - start) * 1000


async def probe(path: str) -> dict[str, list[float]]:
    app = HlotopApp(path)
    out: dict[str, list[float]] = {}

    async def keys(name: str, presses: list[str], until_shown: bool = False) -> None:
        for k in presses:
            ms = await (_shown if until_shown else _key)(app, frames, k)
            out.setdefault(name, []).append(ms)
            await asyncio.sleep(0.02)

    async with app.run_test(size=SIZE) as pilot:
        await app.wait_until_loaded()
        await pilot.pause()
        frames = _Frames(app)
        # The session's first filter: its last letter until the matches show (the
        # dump's fields and op_names are read for it, once a dump).
        await pilot.press("3", "f")
        for letter in "fusio":
            await _key(app, frames, letter)
        out["filter: first word of a session, until shown"] = [await _shown(app, frames, "n")]
        await pilot.press("escape")
        await app.workers.wait_for_complete()
        await pilot.pause()
        # The keys every pane had before, to compare with on the same machine and load.
        await pilot.press("1")
        await keys("(before) ↓ in the tree", ["down"] * 20)
        await pilot.press("2")
        await keys("(before) → in the timeline", ["right"] * 20)
        await keys("(before) ↓ a row in the timeline", ["down"] * 20)
        await keys("(before) / then esc", ["slash", "escape"] * 5)
        await keys("(before) tab (the focus moves)", ["tab"] * 8)
        for pane, word in (("3", "fusion"), ("2", "dot"), ("1", "param")):
            await pilot.press(pane)
            await keys("f (open the bar)", ["f"])
            await keys("filter: a typed key", list(word))
            await keys("filter: a typed key, until shown", ["backspace", word[-1]], True)
            await keys("filter: enter", ["enter"])
            await keys("s (sort)", ["s"] * 5)
            await keys("esc (clear the filter)", ["escape"], True)
        await pilot.press("v")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await keys("f (open the bar)", ["f"])
        await keys("filter: a typed key, until shown", list("attn"), True)
        await keys("filter: enter", ["enter"])
        await keys("s (sort)", ["s", "s"])
        await keys("esc (clear the filter)", ["escape"], True)
        await pilot.press("v", "slash")
        await pilot.press(*"fusion")
        await app.workers.wait_for_complete()
        await pilot.press("enter")
        await pilot.pause()
        await keys("n / N", ["n"] * 20 + ["N"] * 20)
        await keys("[ / ]", ["left_square_bracket", "right_square_bracket"] * 10)
        await keys("y, then esc", ["y", "escape"] * 5)
        # The other keys of issue 34's browser, and the screens it opens.
        await keys("p / P (peaks)", ["p", "P"] * 5)
        await keys(": 100 ⏎ (go to a step)", ["colon", "1", "0", "0", "enter"] * 3)
        await keys("o, then esc (figures)", ["o", "escape"] * 3)
        await keys("?, then esc (help)", ["question_mark", "escape"] * 3)
        await pilot.press("3")
        await keys("v (grouped / flat), until shown", ["v"] * 4, True)
        await pilot.press("v")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await keys("i, then esc (icicle)", ["i", "escape"] * 3, True)
        await pilot.press("q")
    return out


def main() -> int:
    paths = sys.argv[1:] or DEFAULT
    for path in paths:
        results = asyncio.run(probe(path))
        print(f"\n{path}")
        print(f"{'key':<36} {'n':>3} {'median':>7} {'p90':>7} {'max':>7}  (ms)")
        for name, times in results.items():
            ordered = sorted(times)
            p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
            print(
                f"{name:<36} {len(times):>3} {statistics.median(times):>7.1f} "
                f"{p90:>7.1f} {ordered[-1]:>7.1f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
