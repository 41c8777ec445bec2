"""Make large, realistic buffer-assignment dumps by scaling a real one.

The source module's allocations, value records and live ranges are repeated K times,
as K consecutive blocks of the same program: block k renumbers allocation indices,
parameter numbers and value ids, renames every instruction (``name`` -> ``name.rk``,
including the ``%name`` references in instruction text) and shifts every schedule step
by k * (source max). The peak lines are recomputed for the scaled schedule with XLA's
rule, so hlotop's computed peak can be checked against them.

Usage::

    python benchmarks/make_dumps.py --size-mb 10 100 500 --out /tmp/hlotop-bench
    python benchmarks/make_dumps.py --source sample_dumps/jax/.../X-buffer-assignment.txt ...

Writes ``combined-<N>mb-buffer-assignment.txt`` and a split module
``module_9<N>.scaled.cpu_after_optimizations-*.txt`` per size.

``--small-allocations N`` (one or more counts) writes instead, per count, a combined dump
of N small allocations of one value each (``small-<N>-buffer-assignment.txt``,
:func:`write_small`): the shape of a program of many small buffers, whose per-allocation
costs a scaled copy of a big module hides.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tui"))

from hlotop import load  # noqa: E402
from hlotop.analysis.analyze import xla_peak_step  # noqa: E402
from hlotop.loading.loader import split_module_prefix  # noqa: E402
from hlotop.parse.dump import split_lines  # noqa: E402

DEFAULT_SOURCE = next(
    (ROOT / "sample_dumps" / "jax" / "jax-0.10.2" / "transformer_big").glob(
        "*-buffer-assignment.txt"
    ),
    None,
)

_REF = re.compile(r"<(\d+) ([^\s{}<>:,]+)")
_PERCENT_NAME = re.compile(r"%([A-Za-z_][\w.\-]*)")
_ALLOC = re.compile(r"^allocation (\d+):")
_PARAM = re.compile(r", parameter (\d+)")
_ENTRY = re.compile(r"^  ([^\s{}<>:,]+)(.*)$")
_SEQ = re.compile(r"^    (\d+):(\S+)$")
_BUF = re.compile(r"^    ([^\s{}<>:,]+)(\{[\d,]*\}):(\d+)-(\d+)$")


class Source:
    """The pieces of the source module's text, split by section."""

    def __init__(self, entry: Path):
        split = split_module_prefix(entry)
        texts = [entry.read_text()]
        if split is not None:
            for suffix in ("-buffer-assignment-values.txt", "-live-range.txt"):
                sibling = entry.with_name(split[0] + suffix)
                if sibling.exists():
                    texts.append(sibling.read_text())
        lines = split_lines("\n".join(texts))
        self.allocations: list[str] = []
        self.records: list[str] = []
        self.sequence: list[str] = []
        self.buffers: list[str] = []
        part = None
        for line in lines:
            if line == "BufferAssignment:":
                part = self.allocations
            elif line == "Used values:":
                part = self.records
            elif line == "  InstructionSequence:":
                part = self.sequence
            elif line == "  BufferLiveRange:":
                part = self.buffers
            elif line.startswith(("  Live ranges at", "HloLiveRange", "Total bytes used")):
                part = None
            elif part is not None and line:
                part.append(line)
        module = load(entry)
        self.max_time = module.live_range.max_time
        self.n_allocations = len(module.allocations)
        self.id_span = max(i.value.id for i in module.analysis.values) + 1
        self.n_params = 1 + max(
            (a.parameter for a in module.allocations if a.parameter is not None), default=-1
        )
        self.total = sum(a.size for a in module.allocations)
        self.infos = [i for i in module.analysis.values if i.live is not None]
        self.bytes_per_block = sum(
            len(x) + 1 for x in self.allocations + self.records + self.sequence + self.buffers
        )


def _renamer(k: int):
    if k == 0:
        return lambda name: name
    return lambda name: f"{name}.r{k}"


def block(src: Source, k: int) -> tuple[list[str], list[str], list[str], list[str]]:
    """The four parts of block ``k``: allocation lines, records, sequence, buffers."""
    rename = _renamer(k)
    dv, da, dp, dt = k * src.id_span, k * src.n_allocations, k * src.n_params, k * src.max_time

    def ref(m: re.Match) -> str:
        return f"<{int(m.group(1)) + dv} {rename(m.group(2))}"

    allocs = []
    for line in src.allocations:
        if line.startswith("allocation "):
            line = _ALLOC.sub(lambda m: f"allocation {int(m.group(1)) + da}:", line)
            line = _PARAM.sub(lambda m: f", parameter {int(m.group(1)) + dp}", line)
        else:
            line = _REF.sub(ref, line)
        allocs.append(line)
    records = []
    for line in src.records:
        if line.startswith("<"):
            line = _REF.sub(ref, line)
        elif line.startswith(" from instruction:"):
            line = _PERCENT_NAME.sub(lambda m: "%" + rename(m.group(1)), line)
        elif line.startswith("  ") and line != "  (none)":
            m = _ENTRY.match(line)
            line = f"  {rename(m.group(1))}{m.group(2)}"
        records.append(line)
    sequence = [
        f"    {int(m.group(1)) + dt}:{rename(m.group(2))}" for m in map(_SEQ.match, src.sequence)
    ]
    buffers = [
        f"    {rename(m.group(1))}{m.group(2)}:{int(m.group(3)) + dt}-{int(m.group(4)) + dt}"
        for m in map(_BUF.match, src.buffers)
    ]
    return allocs, records, sequence, buffers


def peak_lines(src: Source, k_blocks: int) -> list[str]:
    """``Live ranges at N (peak):`` and V3 lines for the scaled schedule."""
    ranges = []
    for k in range(k_blocks):
        dt = k * src.max_time
        ranges += [(i.live.start + dt, i.live.end + dt, i.sweep_bytes) for i in src.infos]
    step, _ = xla_peak_step(ranges)
    live = []
    for k in range(k_blocks):
        dt, rename = k * src.max_time, _renamer(k)
        for i in src.infos:
            if i.live.start + dt <= step <= i.live.end + dt:
                live.append((i.logical_bytes, rename(i.value.name), i.value.shape_index or ()))
    live.sort(key=lambda t: (-t[0], t[1], t[2]))
    out, total = [f"  Live ranges at {step} (peak):"], 0
    for size, name, index in live:
        total += size
        out.append(
            f"    {name}{{{','.join(map(str, index))}}}: {size} bytes (cumulative: {total} bytes)"
        )
    return out


def write_scaled(src: Source, k_blocks: int, out_dir: Path, tag: str) -> list[Path]:
    """Write the combined file and the split module for ``k_blocks`` blocks."""
    combined = out_dir / f"combined-{tag}-buffer-assignment.txt"
    prefix = out_dir / f"module_9{tag}.scaled.cpu_after_optimizations"
    split = {
        s: Path(f"{prefix}{s}")
        for s in ("-buffer-assignment.txt", "-buffer-assignment-values.txt", "-live-range.txt")
    }
    total = src.total * k_blocks
    with (
        open(combined, "w") as comb,
        open(split["-buffer-assignment.txt"], "w") as ba,
        open(split["-buffer-assignment-values.txt"], "w") as vals,
        open(split["-live-range.txt"], "w") as live,
    ):
        for f in (comb, ba):
            f.write("BufferAssignment:\n")
        for k in range(k_blocks):
            text = "\n".join(block(src, k)[0]) + "\n"
            comb.write(text)
            ba.write(text)
        head = f"\nTotal bytes used: {total}\n\nUsed values:\n"
        comb.write(head)
        vals.write(head)
        for k in range(k_blocks):
            text = "\n".join(block(src, k)[1]) + "\n"
            comb.write(text)
            vals.write(text)
        comb.write("\n\n")
        lr = [f"HloLiveRange (max {src.max_time * k_blocks}):", "  InstructionSequence:"]
        parts = [block(src, k) for k in range(k_blocks)]  # sequence and buffers are small
        lr += [line for p in parts for line in p[2]]
        lr.append("  BufferLiveRange:")
        lr += [line for p in parts for line in p[3]]
        lr += peak_lines(src, k_blocks)
        text = "\n".join(lr) + "\n"
        comb.write(text)
        live.write(text)
    return [combined, split["-buffer-assignment.txt"]]


def _small_lines(n: int) -> tuple[list[str], int, list[tuple[int, int, int, str, int]]]:
    """The allocation lines of :func:`write_small`'s dump, its last step and each value's
    ``(start, end, bytes, name, elements)``. Every 8th allocation is an entry parameter
    (live over the whole schedule), the rest thread-local fusion outputs, each defined
    at its own step and used by the next two; the line forms are those of a real jax
    0.10.2 CPU dump (``sample_dumps/dirs/jax-0.10.2-cpu-train``)."""
    lines, values = ["BufferAssignment:"], []
    n_params = (n + 7) // 8
    last = n - n_params + 1
    step = 0
    for i in range(n):
        elements = 1 << (i % 7 + 2)  # 4..256 elements of f32: 16 B..1 KiB
        size = 4 * elements
        if i % 8 == 0:
            p = i // 8
            name = f"param.{p}"
            lines.append(
                f"allocation {i}: size {size}, parameter {p}, shape |f32[{elements}]| "
                "at ShapeIndex {}:"
            )
            start, end = 0, last
        else:
            step += 1
            name = f"add_multiply_fusion.{i}"
            lines.append(f"allocation {i}: size {size}, thread-local:")
            start, end = step, min(step + 2, last)
        lines.append(f" value: <{i} {name} @0> (size={size},offset=0): f32[{elements}]{{0}}")
        values.append((start, end, size, name, elements))
    return lines, last, values


def write_small(n: int, out_dir: Path, records: bool = True) -> Path:
    """Write ``small-<n>-buffer-assignment.txt``, a combined dump of ``n`` small
    allocations of one value each (see :func:`_small_lines`), with its value records,
    schedule, live ranges and peak lines (the peak by XLA's rule); ~550 bytes an
    allocation. Without ``records``: ``lean-<n>-buffer-assignment.txt``, the same with an
    empty ``Used values:`` section, ~200 bytes an allocation (hlotop reads records on
    demand, so its memory is about the same, and the ratio to the file 2.7 times)."""
    path = out_dir / f"{'small' if records else 'lean'}-{n}-buffer-assignment.txt"
    allocs, last, values = _small_lines(n)
    total = sum(v[2] for v in values)
    by_step = {v[0]: v[3] for v in values if v[0] > 0}
    params = [v for v in values if v[0] == 0]
    with open(path, "w") as f:
        f.write("\n".join(allocs) + "\n")
        f.write(f"\nTotal bytes used: {total}\n\nUsed values:\n")
        for i, (start, _, _, name, elements) in enumerate(values if records else ()):
            users = [by_step[s] for s in (start + 1, start + 2) if s in by_step]
            if start == 0:
                users = [by_step[1 + (i // 8) % max(1, len(by_step))]] if by_step else []
                op = f'parameter({i // 8}), metadata={{op_name="params[{i // 8}]"}}'
            else:
                prev = by_step.get(start - 1, params[0][3])
                op = (
                    f"fusion(%{prev}), kind=kLoop, calls=%fused_computation.{i}, "
                    f'metadata={{op_name="jit(step)/add" stack_frame_id={i % 97}}}'
                )
            f.write(f"<{i} {name} @0>\n positions:\n  {name}\n uses:\n")
            f.write("".join(f"  {u}, operand 0\n" for u in users) or "  (none)\n")
            f.write(f" from instruction: %{name} = f32[{elements}]{{0}} {op}\n")
        f.write(f"\n\nHloLiveRange (max {last}):\n  InstructionSequence:\n")
        f.write("".join(f"    {s}:{by_step[s]}\n" for s in sorted(by_step)))
        f.write("  BufferLiveRange:\n")
        f.write("".join(f"    {v[3]}{{}}:{v[0]}-{v[1]}\n" for v in values))
        step, _ = xla_peak_step([(v[0], v[1], v[2]) for v in values])
        live = sorted(
            ((v[2], v[3]) for v in values if v[0] <= step <= v[1]), key=lambda t: (-t[0], t[1])
        )
        f.write(f"  Live ranges at {step} (peak):\n")
        cumulative = 0
        for size, name in live:
            cumulative += size
            f.write(f"    {name}{{}}: {size} bytes (cumulative: {cumulative} bytes)\n")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--source",
        type=Path,
        default=DEFAULT_SOURCE,
        help="a real module to scale (default: the 0.10.2 transformer_big)",
    )
    parser.add_argument("--size-mb", type=int, nargs="+", default=[10, 100, 500])
    parser.add_argument(
        "--small-allocations",
        type=int,
        nargs="+",
        metavar="N",
        help="instead: a combined dump of N small allocations of one value each, per N",
    )
    parser.add_argument(
        "--without-records",
        action="store_true",
        help="with --small-allocations: leave the value records out (lean-<N>-...)",
    )
    parser.add_argument("--out", type=Path, default=Path("/tmp/hlotop-bench"))
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.small_allocations:
        for n in args.small_allocations:
            path = write_small(n, args.out, records=not args.without_records)
            print(f"{n} small allocations: {path.name} {path.stat().st_size / 1e6:.1f} MB")
        return 0
    src = Source(args.source)
    for mb in args.size_mb:
        k_blocks = max(1, round(mb * 1e6 / src.bytes_per_block))
        paths = write_scaled(src, k_blocks, args.out, f"{mb}mb")
        sizes = ", ".join(f"{p.name} {p.stat().st_size / 1e6:.1f} MB" for p in paths)
        print(f"{mb} MB: {k_blocks} blocks: {sizes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
