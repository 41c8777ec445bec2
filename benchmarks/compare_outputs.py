"""A check, not part of hlotop: whether two trees of hlotop write the same outputs, byte
for byte, on every buffer-assignment file of ``sample_dumps/`` (or the dumps given).

Each dump is run through ``--summary``, ``--json``, ``--export csv``, ``--export
folded``, ``--json --advise --group-by phase,scope --capacity 1GiB`` and ``--summary
--advise --group-by scope``; with ``--commands``, also ``diff``, ``fit``, ``why``, a
directory's ``--summary`` and ``--json`` and every OOM text of ``sample_dumps/oom``.
Standard output, standard error and the exit status of each are compared; the ones
that differ are listed, and the exit status is 1 if any does.

    python benchmarks/compare_outputs.py --other /path/to/other/checkout/tui
    python benchmarks/compare_outputs.py --other OTHER/tui /tmp/big-buffer-assignment.txt

A change that keeps hlotop's outputs (a faster or smaller model) is checked so against
the commit before it (``git worktree add`` or ``git archive ... tui | tar -x``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_dumps"
MODES = {
    "summary": ["--summary"],
    "json": ["--json"],
    "csv": ["--export", "csv"],
    "folded": ["--export", "folded"],
    "json-advise": ["--json", "--advise", "--group-by", "phase,scope", "--capacity", "1GiB"],
    "summary-advise": ["--summary", "--advise", "--group-by", "scope"],
}


def commands() -> dict[str, list[str]]:
    """The other commands' runs on the samples (name -> arguments)."""

    def batch(case: str) -> str:
        return str(next((SAMPLES / "proof" / "batch" / case).glob("*-buffer-assignment.txt")))

    runs = {
        "diff": ["diff", batch("cpu-b2"), batch("cpu-b4")],
        "diff-json": ["diff", "--json", batch("cpu-b2"), batch("cpu-b8")],
        "diff-grouped": ["diff", "--group-by", "scope", batch("cpu-b4"), batch("cpu-b8")],
        "diff-tpu": ["diff", batch("v5e_1x1-b2"), batch("v5e_1x1-b4")],
        "diff-dirs": [
            "diff",
            *(str(SAMPLES / "proof" / "batch" / c) for c in ("cpu-b2", "cpu-b12")),
        ],
        "fit": ["fit", *(batch(f"cpu-b{n}") for n in (2, 4, 8, 16))],
        "fit-json": [
            "fit",
            "--json",
            "--capacity",
            "1GiB",
            *(batch(f"cpu-b{n}") for n in (2, 4, 8)),
        ],
        "why": ["why", batch("cpu-b4")],
        "why-json": ["why", "--json", batch("cpu-b4")],
        "why-tpu": ["why", batch("v5e_1x1-b4")],
        "directory": ["--summary", str(SAMPLES / "dirs" / "jax-0.10.2-cpu-train")],
        "directory-json": ["--json", str(SAMPLES / "dirs" / "jax-0.10.2-cpu-train")],
    }
    for text in sorted((SAMPLES / "oom").iterdir()):
        if text.suffix in (".txt", ".log"):
            runs[f"oom {text.name}"] = ["--summary", str(text)]
            runs[f"oom-json {text.name}"] = ["--json", str(text)]
    return runs


def output(tui: str, args: list[str]) -> bytes:
    """What ``python -m hlotop ARGS`` writes with the package in ``tui``, and its status."""
    env = dict(os.environ, PYTHONPATH=tui, COLUMNS="120")
    done = subprocess.run(
        [sys.executable, "-m", "hlotop", *args], capture_output=True, env=env, cwd="/"
    )
    return (
        done.stdout + b"\n--stderr--\n" + done.stderr + f"\n--status {done.returncode}\n".encode()
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dumps", nargs="*", help="dumps to run (default: sample_dumps/)")
    parser.add_argument("--other", required=True, help="the other tree's tui/ folder")
    parser.add_argument("--commands", action="store_true", help="also the other commands")
    parser.add_argument("--jobs", type=int, default=2, help="runs at once")
    args = parser.parse_args()
    dumps = args.dumps or sorted(map(str, SAMPLES.rglob("*buffer-assignment*.txt")))
    runs = {f"{mode} {dump}": [*flags, dump] for dump in dumps for mode, flags in MODES.items()}
    if args.commands:
        runs.update(commands())
    mine = str(ROOT / "tui")

    def same(item: tuple[str, list[str]]) -> str | None:
        name, run = item
        return None if output(mine, run) == output(args.other, run) else name

    with ThreadPoolExecutor(args.jobs) as pool:
        differ = [name for name in pool.map(same, runs.items()) if name is not None]
    for name in differ:
        print(f"differs: {name}")
    print(f"{len(runs) - len(differ)} of {len(runs)} runs write the same")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
