"""A long fuzz run of hlotop's loader over mutations of the real sample dumps.

Runs the same properties as ``tests/test_fuzz.py`` (never raise; every inserted garbage
line reported at its line; untouched figures kept) with a large example budget, and
prints one result line per property and sample, then a summary line.

    .venv/bin/python scripts/fuzz.py --examples 2000
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tui")]

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from fuzzing import (  # noqa: E402
    CORPUS,
    apply,
    check_any_mutation,
    check_garbage,
    garbage_insertions,
    mutations,
    original,
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--examples", type=int, default=2000, help="examples per property and sample dump"
    )
    args = parser.parse_args()
    config = settings(
        max_examples=args.examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    failures, runs, start = 0, 0, time.perf_counter()
    for path in CORPUS:
        raw, _ = original(path)
        n_lines = raw.count(b"\n")

        @config
        @given(st.data())
        def garbage(data):
            check_garbage(path, data.draw(garbage_insertions(n_lines)))

        @config
        @given(st.data())
        def anything(data):
            muts = data.draw(st.lists(mutations(n_lines, len(raw)), min_size=1, max_size=4))
            check_any_mutation(apply(raw, muts)[0])

        for name, prop in (("garbage lines reported", garbage), ("any mutation", anything)):
            runs += 1
            try:
                prop()
                print(f"ok    {path.relative_to(ROOT)}: {name}: {args.examples} examples")
            except Exception as err:  # report and go on with the other properties
                failures += 1
                print(f"FAIL  {path.relative_to(ROOT)}: {name}: {err}")
    print(
        f"{runs - failures} passed, {failures} failed "
        f"({args.examples} examples each, {time.perf_counter() - start:.0f} s)"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
