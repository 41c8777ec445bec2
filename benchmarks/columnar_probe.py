"""A measurement, not part of hlotop: how fast ``--summary`` could be on a split module
if hlotop made no object per value line, value and live range (the columnar model that
README.md's "Where this stands" discusses).

It reads the module as ``--summary`` does, in two processes: a forked worker indexes the
value records and reads the live-range file (schedule, live ranges, peak list,
stack-trace tree) into columns by one ``findall`` each, and sends them back; this
process reads the HLO text's aliases, the allocation and value lines (one ``findall``
into columns), the memory-usage report's rows, sizes every value by its shape, joins
the live ranges to the values, and works out XLA's peak step, the live-bytes curve, the
occupied bytes of each memory space (hlotop's own span functions) and the live set at
the peak (the occupied bytes as hlotop.analysis.occupancy.occupied_bytes_per_step
works them out, on columns). It prints when each step ended (seconds from the start)
and the peak step, which must be hlotop's. It leaves out what ``--summary`` also does (the kinds, padding
and memory_analysis() tables, the records' op_names, diagnostics, printing), so it is a
lower bound for such a design.

    python benchmarks/columnar_probe.py benchmarks/real/gpt-256l-unrolled

Its bound misled: the columnar model was built at 93e366d (branch ``columnar``, whose
``COLUMNAR.md`` has the figures) and took ``--summary`` at 46 MB only about 10% down,
not to the probe's 1.6×, because hlotop does what the probe leaves out and a column
costs about what an object's slot costs in CPython. Kept so that the figures quoted in
README.md can be reproduced.
"""

from __future__ import annotations

import gc
import os
import pickle
import re
import sys
import time
from array import array
from pathlib import Path

T0 = time.perf_counter()
MARKS: list[tuple[str, float]] = []

SEQUENCE = re.compile(r"^    (\d+):(\S+)$", re.M)
BUFFER = re.compile(r"^    ([^\s{}:]+)\{([\d,]*)\}:(\d+)-(\d+)$", re.M)
PEAK = re.compile(
    r"^    ([^\s{}:]+)(\{[\d,]*\})?: (\d+) bytes(?: \(cumulative: (\d+) bytes\))?$", re.M
)
TREE = re.compile(
    r"^(\s*[│├└─ ]*)(\S.*?) \(([\d.]+)%, total: ([\d ]+) bytes, current: ([\d ]+) bytes, "
    r"remaining: ([\d ]+) bytes\)$",
    re.M,
)
ALLOCATION = r"^allocation (\d+): size (\d+)(.*):$"
VALUE = (
    r"^ value: <(\d+) ([^\s{}<>:,]+)(\{[\d,]*\})?( \(phi\))?(?: @(\d+))?> "
    r"\(size=(\d+),offset=(\d+)\): (.*)$"
)
COLOR = re.compile(r", color (\d+)")
ALIAS = re.compile(r"\{([\d,]*)\}: \((\d+), \{([\d,]*)\}, (may|must)-alias\)")
REPORT_ROW = re.compile(
    r"^\s+([\d.]+\w+)\(\s*(\d+)%\);\s+([\d.]+\w+);\s+(\d+);\s+(\d+); (.*)$", re.M
)


def mark(name: str) -> None:
    MARKS.append((name, time.perf_counter() - T0))


def files(folder: Path) -> dict[str, Path]:
    ba = next(folder.glob("*-buffer-assignment.txt"))
    return {
        "allocations": ba,
        "values": next(folder.glob("*-buffer-assignment-values.txt")),
        "live": next(folder.glob("*-live-range.txt")),
        "report": next(folder.glob("*-memory-usage-report.txt")),
        "hlo": ba.with_name(ba.name.replace("-buffer-assignment.txt", ".txt")),
    }


def worker(paths: dict[str, Path], out: int) -> None:
    """The forked worker: the records' index, then the live-range file as columns."""
    from hlotop.parse.records import _RECORD_START_BYTES

    data = paths["values"].read_bytes()
    starts, ids = array("q"), array("q")
    for m in _RECORD_START_BYTES.finditer(data):
        starts.append(m.start())
        ids.append(int(m.group(1)))
    del data
    text = paths["live"].read_text()
    a = text.index("  BufferLiveRange:")
    b = text.index("  Live ranges at")
    c = text.index("  Stack trace breakdown")
    sequence = [sys.intern(name) for _, name in SEQUENCE.findall(text, 0, a)]
    names, indexes, first, last = zip(*BUFFER.findall(text, a, b), strict=True)
    peak = PEAK.findall(text, b, c)
    tree = TREE.findall(text, c)
    payload = (
        "\n".join(sequence),
        list(map(sys.intern, names)),
        list(indexes),
        array("q", map(int, first)),
        array("q", map(int, last)),
        [p[0] for p in peak],
        array("q", [int(p[2]) for p in peak]),
        ([t[1] for t in tree], array("q", [int(t[3].replace(" ", "")) for t in tree])),
        ids,
        starts,
    )
    with os.fdopen(out, "wb") as f:
        f.write(pickle.dumps(payload, pickle.HIGHEST_PROTOCOL))
    os._exit(0)


class Values:
    """The value lines as columns, with the allocations' indexes and colours."""

    def __init__(self, text: str):
        rows = re.findall(f"{ALLOCATION}|{VALUE}", text, re.M)
        index, size, attributes = [], [], []
        ids, names, shape_indexes, colors, sizes, offsets, shapes, allocs = (
            [],
            [],
            [],
            [],
            [],
            [],
            [],
            [],
        )
        current = -1
        for g in rows:
            if g[0]:
                current = int(g[0])
                index.append(current)
                size.append(g[1])
                attributes.append(g[2])
            else:
                ids.append(g[3])
                names.append(g[4])
                shape_indexes.append(g[5])
                colors.append(g[7])
                sizes.append(g[8])
                offsets.append(g[9])
                shapes.append(g[10])
                allocs.append(current)
        self.ids = array("q", map(int, ids))
        self.names = list(map(sys.intern, names))
        self.shape_indexes = shape_indexes
        self.sizes = array("q", map(int, sizes))
        self.offsets = array("q", map(int, offsets))
        self.shapes = list(map(sys.intern, shapes))
        self.allocs = array("q", allocs)
        self.alloc_index = array("q", index)
        self.alloc_size = array("q", map(int, size))
        self.alloc_color = array(
            "q", [int(m.group(1)) if (m := COLOR.search(t)) else 0 for t in attributes]
        )
        self.printed_colors = colors


def main(folder: Path) -> None:
    gc.disable()
    paths = files(folder)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        worker(paths, write_end)
    os.close(write_end)
    mark("forked")
    import rich.console  # noqa: F401 - what printing would import
    import rich.table  # noqa: F401

    from hlotop.analysis.occupancy import _merged, add_spans
    from hlotop.analysis.peak import running_sums, xla_peak_step
    from hlotop.shapes import shape_of

    mark("imports")
    with open(paths["hlo"]) as f:
        aliases = ALIAS.findall(f.readline())
    mark(f"HLO head ({len(aliases)} aliases)")
    v = Values(paths["allocations"].read_text())
    n = len(v.ids)
    mark(f"allocations ({len(v.alloc_index)} allocations, {n} value lines)")
    rows = REPORT_ROW.findall(paths["report"].read_text())
    mark(f"report ({len(rows)} rows)")
    logical_of = {}
    for text in set(v.shapes):
        shape = shape_of(text)
        logical_of[text] = shape.logical_bytes() if shape is not None else 0
    logical = array("q", map(logical_of.__getitem__, v.shapes))
    color_of_alloc = dict(zip(v.alloc_index, v.alloc_color, strict=True))
    totals: dict[int, int] = {}
    for color, size in zip(v.alloc_color, v.alloc_size, strict=True):
        totals[color] = totals.get(color, 0) + size
    keyed = list(zip(v.names, v.shape_indexes, strict=True))
    whole = {name: k for k, (name, i) in enumerate(keyed) if not i or i == "{}"}
    by_key = {(name, i.strip("{}")): k for k, (name, i) in enumerate(keyed) if i and i != "{}"}
    mark("before live ranges")
    with os.fdopen(read_end, "rb") as f:
        data = f.read()
    os.waitpid(pid, 0)
    mark("worker done")
    sequence, l_names, l_indexes, l_first, l_last, *_ = pickle.loads(data)
    steps = sequence.split("\n")
    mark("taken")
    start, end = array("q", [-1]) * n, array("q", [-1]) * n
    for name, i, first, last in zip(l_names, l_indexes, l_first, l_last, strict=True):
        k = by_key.get((name, i)) if i else whole.get(name)
        if k is not None:
            start[k], end[k] = first, last
    max_time = max(len(steps) - 1, max(l_last))
    mark("joined")
    live = [k for k in range(n) if start[k] >= 0]
    peak_step, _ = xla_peak_step((start[k], end[k], logical[k]) for k in live)
    diff = [0] * (max_time + 2)
    for k in live:
        diff[start[k]] += logical[k]
        diff[end[k] + 1] -= logical[k]
    diff.pop()
    running_sums(diff)
    mark("peak step and live-bytes curve")
    slices: dict[tuple[int, int, int], list[int]] = {}
    for k in live:
        if v.sizes[k] > 0:
            key = (v.allocs[k], v.offsets[k], v.offsets[k] + v.sizes[k])
            taken = slices.get(key)
            if taken is None:
                slices[key] = [start[k], end[k]]
            else:
                taken += (start[k], end[k])
    spans_of: dict[int, list[tuple[int, int, int, int]]] = {}
    for (alloc, offset, stop), taken in slices.items():
        spans = spans_of.setdefault(alloc, [])
        if len(taken) == 2:
            spans.append((offset, stop, taken[0], taken[1]))
        else:
            spans += _merged(offset, stop, taken)
    diffs = {color: [0] * (max_time + 2) for color in set(v.alloc_color)}
    for alloc, spans in spans_of.items():
        add_spans(spans, diffs[color_of_alloc[alloc]])
    for into in diffs.values():
        running_sums(into[:-1])
    mark("occupied bytes")
    at_peak = [k for k in live if start[k] <= peak_step <= end[k]]
    at_peak.sort(key=lambda k: (-logical[k], v.names[k], v.shape_indexes[k]))
    mark(f"live set at the peak ({len(at_peak)} values)")
    for name, t in MARKS:
        print(f"{t:6.3f} {name}")
    print(f"peak step {peak_step}; {n} values, {len(live)} with a live range")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
