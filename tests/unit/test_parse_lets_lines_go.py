"""parse_text lets go of the lines it has read (hlotop.parse.dump): a dump of small
allocations has ~4 lines an allocation, whose line objects, held until the whole file
was read, were the browser's and --summary's peak memory with the allocations made of
them. Read on a real dump made big by the benchmark suite's generator."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from hlotop.parse.dump import ReadHooks, parse_text

ROOT = Path(__file__).parents[2]


def test_the_lines_read_are_let_go_at_each_pause_and_the_result_is_the_same(tmp_path):
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "make_dumps.py"),
            "--size-mb",
            "1",
            "--out",
            str(tmp_path),
        ],
        check=True,
        capture_output=True,
    )
    path = tmp_path / "combined-1mb-buffer-assignment.txt"
    text = path.read_text()
    seen = []

    def pause() -> None:  # where the parser gives way: what it still holds of its lines
        frame = sys._getframe(1)
        while "lines" not in frame.f_locals or "i" not in frame.f_locals:
            frame = frame.f_back  # the reader's loop, above the progress hook
        lines, i = frame.f_locals["lines"], frame.f_locals["i"]
        seen.append((i, sum(line != "" for line in lines[:i])))

    paused = parse_text(str(path), text, [], ReadHooks(pause=pause))
    plain = parse_text(str(path), text, [])
    # (the lazy records table compares by identity: its length and ids here)
    assert replace(paused, used_values=None) == replace(plain, used_values=None)
    assert list(paused.used_values.ids) == list(plain.used_values.ids)
    assert len(plain.allocations) > 1000
    late = [(i, held) for i, held in seen if i >= 4096]
    assert late and all(held <= 1 for _, held in late), seen
