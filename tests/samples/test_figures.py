"""The figures users already have elsewhere: memory_analysis() against JAX's own record,
kinds and memory spaces against the allocation lines, the occupied curve against a
brute-force union of slices, XLA's peak figure, TPU padding, and the command line.
Expected figures come from memory_analysis.json and plain regexes over the dump text,
independently of hlotop's grammars and analysis."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from conftest import ROOT, SAMPLES
from hlotop import load
from hlotop.loading.loader import split_module_prefix
from sample_index import MODULES  # one entry file per module

# JAX's memory_analysis() sizes that the buffer assignment determines, in JAX's order
FIELDS = tuple(
    f"{host}{kind}_size_in_bytes"
    for host in ("", "host_")
    for kind in ("argument", "output", "alias", "temp")
)
GENERATED = sorted(p.parent for p in SAMPLES.glob("[ct]pu/*/memory_analysis.json"))
ALLOCATION = re.compile(r"^allocation (\d+): (?:0x[0-9a-f]+, )?size (\d+)(.*):$")
VALUE = re.compile(r"^ value: <\d+ (\S+)(?: \(phi\))? @\d+> \(size=(\d+),offset=(\d+)\): (.*)$")
LIVE = re.compile(r"^    (\S+\{[\d,]*\}):(\d+)-(\d+)$", re.M)
PEAK = re.compile(r"^  Live ranges at (\d+) \(peak\):$", re.M)
INSTRUCTION = re.compile(r"^ from instruction: ?%(\S+) = (.*)$", re.M)
HLO_TEXT = "after_optimizations.txt"  # the module's HLO text: <prefix>.txt
KINDS = ("parameter", "maybe-live-out", "constant", "thread-local", "preallocated-temp")
ELEMENT_BYTES = {"pred": 1, "s8": 1, "u8": 1, "bf16": 2, "f16": 2, "s16": 2, "u16": 2}
ELEMENT_BYTES |= {"f32": 4, "s32": 4, "u32": 4, "f64": 8, "s64": 8, "u64": 8, "token": 0}
SEED2 = SAMPLES / "seeds/002_c2e226da3172e77e.txt"
SEED3 = SAMPLES / "seeds/003_a3085531593bac68.txt"


def _id(path: Path) -> str:
    """A module's folder under sample_dumps/ (a seed's file name)."""
    rel = path.relative_to(SAMPLES)
    return str(rel.parent if path.name.endswith("-buffer-assignment.txt") else rel)


def _entry(folder: Path) -> Path:
    return next(folder.glob("*-buffer-assignment.txt"))


def _text(entry: Path) -> str:
    """The module's allocation lines, value records and live ranges, one string."""
    split = split_module_prefix(entry)
    text = entry.read_text()
    for suffix in ("-buffer-assignment-values.txt", "-live-range.txt") if split else ():
        sibling = entry.with_name(split[0] + suffix)
        if sibling.exists():
            text += "\n" + sibling.read_text()
    return text


def _allocations(text: str) -> list[dict]:
    """Each allocation line: index, size, colour, flags, its first kind (KINDS order), and
    its value lines as (name{index}, size, offset, shape)."""
    out: list[dict] = []
    for line in text.splitlines():
        if m := ALLOCATION.match(line):
            rest = re.sub(r"\|[^|]*\|", "", m.group(3))  # drop the shapes
            color = re.search(r", color (\d+)", rest)
            flags = [", parameter " in rest, "maybe-live-out" in rest or "output shape is" in rest]
            flags += [", constant" in rest, ", thread-local" in rest, True]
            x = {"index": int(m.group(1)), "size": int(m.group(2)), "values": []}
            x |= {"color": int(color.group(1)) if color else 0, "kind": KINDS[flags.index(True)]}
            out.append(x | {"parameter": flags[0], "live_out": flags[1]})
        elif (m := VALUE.match(line)) and out:
            name = m.group(1) if m.group(1).endswith("}") else m.group(1) + "{}"
            out[-1]["values"].append((name, int(m.group(2)), int(m.group(3)), m.group(4)))
    return out


def _xla_temp(allocs: list[dict]) -> int:
    """XLA's temp (IsPreallocatedTempBuffer: none of the other kinds), device memory."""
    return sum(x["size"] for x in allocs if x["kind"] == "preallocated-temp" and x["color"] != 5)


def _logical_bytes(shape: str) -> int:
    """ByteSizeOf(shape, pointer size 8): a tuple is its index table, 8 bytes an element."""
    if shape.startswith("("):
        depth, elements = 0, 0 if shape.startswith("()") else 1
        for ch in shape:
            depth += ch in "([{"
            depth -= ch in ")]}"
            elements += ch == "," and depth == 1
            if depth == 0:
                return 8 * elements
    m = re.match(r"(\w+)\[([\d,]*)\]", shape)
    return ELEMENT_BYTES[m.group(1)] * math.prod(int(d) for d in m.group(2).split(",") if d)


def _union(intervals: list[tuple[int, int]]) -> int:
    """Bytes covered by half-open [lo, hi) intervals, overlaps once."""
    total = covered = 0
    for lo, hi in sorted(intervals):
        if hi > covered:
            total += hi - max(lo, covered)
            covered = hi
    return total


def _copy_module(entry: Path, tmp_path: Path, keep) -> Path:
    """The module's files in tmp_path, each through ``keep`` (None leaves it out)."""
    prefix = split_module_prefix(entry)
    for f in entry.parent.glob(prefix[0] + "*") if prefix else [entry]:
        text = keep(f.name, f.read_text())
        if text is not None:
            (tmp_path / f.name).write_text(text)
    return tmp_path / entry.name


# 1. memory_analysis()


@pytest.mark.parametrize("with_hlo", [True, False], ids=["with-hlo-text", "without-hlo-text"])
@pytest.mark.parametrize("folder", GENERATED, ids=_id)
def test_memory_stats_are_jax_memory_analysis(folder, with_hlo, tmp_path):
    entry = _entry(folder)
    if not with_hlo:
        entry = _copy_module(entry, tmp_path, lambda n, t: None if n.endswith(HLO_TEXT) else t)
        assert not list(tmp_path.glob("*" + HLO_TEXT))
    a = load(entry).analysis
    jax = json.loads((folder / "memory_analysis.json").read_text())
    expected = {f: jax[f] for f in FIELDS}
    assert a.platform == jax["platform"]
    if jax["platform"] == "tpu":  # libtpu's temp is its own; hlotop's is XLA's rule
        expected["temp_size_in_bytes"] = _xla_temp(_allocations(entry.read_text()))
    assert a.memory_stats.as_dict() == expected
    source = "input_output_alias" if with_hlo else "parameter and maybe-live-out"
    assert a.memory_stats.alias_source == source
    if "donation" in folder.name:
        assert a.memory_stats.alias_size_in_bytes > 0


# 2. kinds


@pytest.mark.parametrize("entry", MODULES, ids=_id)
def test_kinds_count_each_allocation_once(entry):
    text = _text(entry)
    allocs = _allocations(text)
    if not allocs:
        pytest.skip("no allocations")
    total = int(re.search(r"^Total bytes used: (\d+)", text, re.M).group(1))
    a = load(entry).analysis
    sizes, counts = dict.fromkeys(KINDS, 0), dict.fromkeys(KINDS, 0)
    for x in allocs:
        sizes[x["kind"]] += x["size"]
        counts[x["kind"]] += 1
    assert sum(a.totals_by_kind.values()) == total
    assert sum(a.allocations_by_kind.values()) == len(allocs)
    assert (a.totals_by_kind, a.allocations_by_kind) == (sizes, counts)


# The attributes BufferAllocation::ToString prints, in its order, and the kind each is.
PRINTED_KINDS = (
    (", parameter ", "parameter"),
    (", output shape is ", "output"),
    (", constant", "constant"),
    (", thread-local", "thread-local"),
    (", maybe-live-out", "maybe-live-out"),
    (", preallocated-temp", "preallocated-temp"),
)


@pytest.mark.parametrize("entry", [*MODULES, SEED2, SEED3], ids=_id)
def test_each_allocation_has_the_kinds_its_line_prints_in_their_order(entry):
    printed = []
    for line in entry.read_text().splitlines():
        if m := ALLOCATION.match(line):
            rest = re.sub(r"\|[^|]*\|", "", m.group(3))  # the shapes
            printed.append(tuple(kind for text, kind in PRINTED_KINDS if text in rest))
    if not printed:
        pytest.skip("no allocations")
    assert [a.kinds for a in load(entry).allocations] == printed


@pytest.mark.parametrize("folder", ["tpu/v5e_1x1-donation", "cpu/donation"])
def test_a_donated_parameter_counts_once_under_parameter(folder):
    entry = _entry(SAMPLES / folder)
    allocs = _allocations(entry.read_text())
    assert any(x["parameter"] and x["live_out"] for x in allocs)
    a = load(entry).analysis
    params = [x["size"] for x in allocs if x["parameter"]]
    outs = [x["size"] for x in allocs if x["live_out"] and not x["parameter"]]
    kinds = (a.totals_by_kind, a.allocations_by_kind)
    assert [k["parameter"] for k in kinds] == [sum(params), len(params)]
    assert [k["maybe-live-out"] for k in kinds] == [sum(outs), len(outs)]


# 3. memory spaces


@pytest.mark.parametrize("entry", MODULES, ids=_id)
def test_memory_spaces_hold_their_occupied_bytes(entry):
    allocs = _allocations(entry.read_text())
    if not allocs:
        pytest.skip("no allocations")
    totals, counts = defaultdict(int), defaultdict(int)
    for x in allocs:
        totals[x["color"]] += x["size"]
        counts[x["color"]] += 1
    a = load(entry).analysis
    has_live_ranges = LIVE.search(_text(entry)) is not None
    assert [s.color for s in a.memory_spaces] == sorted(totals)
    for s in a.memory_spaces:
        assert (s.total_bytes, s.allocations) == (totals[s.color], counts[s.color])
        curve = a.occupied_bytes.get(s.color)
        if not has_live_ranges:
            assert (curve, s.peak_step, s.peak_bytes) == (None, None, 0)
            continue
        assert len(curve) == a.max_time + 1
        assert max(curve) == s.peak_bytes <= s.total_bytes
        assert curve.index(s.peak_bytes) == s.peak_step
        assert all(0 <= b <= s.total_bytes for b in curve)


def test_memory_spaces_are_named_by_xla_with_the_dump_label_beside():
    def spaces(folder):
        return {s.color: s for s in load(_entry(SAMPLES / "tpu" / folder)).analysis.memory_spaces}

    sync = spaces("v5e_2x2-transformer_sharded")[4]
    assert (sync.name, sync.dump_name) == ("sync flags", "host")
    host = spaces("v5e_1x1-host_offload")[5]
    assert (host.name, host.dump_name) == ("host", "cmem")
    for entry in [e for e in MODULES if _id(e).startswith("tpu/")]:
        a = load(entry).analysis
        hbm = a.memory_spaces[0]  # its total is the colour-0 allocations' (checked above)
        assert (a.platform, hbm.color, hbm.name, hbm.dump_name) == ("tpu", 0, "HBM", "default")
        everything = sum(s.total_bytes for s in a.memory_spaces)
        assert max(a.occupied_bytes[0]) <= hbm.total_bytes < everything, _id(entry)


# 4. the occupied curve against a brute-force union of slices


OCCUPIED = [SEED2, SEED3] + [
    _entry(SAMPLES / f)
    for f in ("jax/jax-0.10.2/mlp_train", "tpu/v5e_1x1-donation", "tpu/v5e_1x1-host_offload")
]


@pytest.mark.parametrize("entry", OCCUPIED, ids=_id)
def test_occupied_bytes_are_the_union_of_live_slices(entry):
    text = _text(entry)
    live = {m.group(1): (int(m.group(2)), int(m.group(3))) for m in LIVE.finditer(text)}
    header = int(re.search(r"^HloLiveRange \(max (\d+)\):$", text, re.M).group(1))
    last = max([header] + [end for _, end in live.values()])
    allocs = _allocations(text)
    expected = {x["color"]: [0] * (last + 1) for x in allocs}
    for step in range(last + 1):
        for x in allocs:
            slices = [
                (offset, offset + size)
                for name, size, offset, _ in x["values"]
                if name in live and live[name][0] <= step <= live[name][1]
            ]
            expected[x["color"]][step] += _union(slices)
    a = load(entry).analysis
    assert a.max_time == last and sorted(a.occupied_bytes) == sorted(expected)
    assert max(max(c) for c in expected.values()) > 0
    for color, union in expected.items():
        got = a.occupied_bytes[color]
        wrong = [(t, got[t], union[t]) for t in range(last + 1) if got[t] != union[t]]
        assert wrong == [], f"colour {color}: (step, hlotop, union of slices)"


# 5. XLA's peak figure


def _peak_list_sum(text: str) -> int:
    block = re.search(r"^  Live ranges at \d+ \(peak\):\n((?:    .*\n?)*)", text, re.M).group(1)
    return sum(int(n) for n in re.findall(r"^    \S+: (\d+) bytes", block, re.M))


def _drop_peak(name: str, text: str) -> str:
    """The text without XLA's printed peak (and the stack-trace block after it)."""
    return text.split("  Live ranges at ")[0]


def _sweep(text: str) -> tuple[int, int]:
    """XLA's peak sweep: each live range sized by its defining instruction's whole shape,
    a range counted from its start to one step past its end (starts before ends); the
    earliest step of the maximum and the maximum."""
    shapes: dict[str, str] = {}
    for m in INSTRUCTION.finditer(text):
        rest = m.group(2)
        shapes.setdefault(m.group(1), rest if rest.startswith("(") else rest.split(" ")[0])
    ranges = []
    for m in LIVE.finditer(text):
        size = _logical_bytes(shapes[m.group(1).split("{")[0]])
        ranges.append((int(m.group(2)), int(m.group(3)), size))
    last = max((end for _, end, _ in ranges), default=0) + 1
    usage = [sum(s for start, end, s in ranges if start <= t <= end + 1) for t in range(last + 1)]
    top = max(usage, default=0)
    return usage.index(top) if usage else 0, top


PEAKED = [e for e in MODULES if PEAK.search(_text(e))]


@pytest.mark.parametrize("entry", PEAKED, ids=_id)
def test_peak_bytes_are_the_sum_of_xla_list(entry):
    a = load(entry).analysis
    assert a.peak_bytes_source == "list"
    assert a.peak_bytes == _peak_list_sum(_text(entry))


def test_seed_003_peak_figures():
    a = load(SEED3).analysis
    assert (a.peak_step, a.peak_bytes, a.peak_logical_bytes) == (11, 239075356, 297795588)


@pytest.mark.parametrize("entry", PEAKED, ids=_id)
def test_peak_bytes_without_the_list_are_xla_sweep(entry, tmp_path):
    stripped = load(_copy_module(entry, tmp_path, _drop_peak)).analysis
    assert stripped.peak_bytes_source == "sweep"
    assert (stripped.peak_step, stripped.peak_bytes) == _sweep(_text(entry))


def test_on_a_v3_dump_the_sweep_without_the_list_is_the_list(tmp_path):
    # jax 0.6.2 mlp_train (V3): at its peak step 45 no tuple-shaped instruction is live
    # and no range ends at step 44, so the sweep's sizes and the list's are the same.
    entry = _entry(SAMPLES / "jax/jax-0.6.2/mlp_train")
    text = _text(entry)
    assert "(cumulative: " in text and PEAK.search(text).group(1) == "45"
    assert not re.search(r"^    \S+:\d+-44$", text, re.M)
    stripped = load(_copy_module(entry, tmp_path, _drop_peak))
    assert stripped.analysis.peak_bytes_source == "sweep"
    assert stripped.analysis.peak_bytes == _peak_list_sum(text) == 1031852


# 6. padding


def test_tpu_padding_is_slot_size_minus_the_largest_logical_size():
    allocs = _allocations(SEED3.read_text())
    largest: dict[tuple[int, int, int], int] = {}
    for x in allocs:
        for _, size, offset, shape in x["values"]:
            key = (x["index"], offset, size)
            largest[key] = max(largest.get(key, 0), _logical_bytes(shape))
    colour = {x["index"]: x["color"] for x in allocs}
    expected = defaultdict(int)
    for (index, _, size), logical in largest.items():
        expected[colour[index]] += size - logical
    spaces = {s.color: s for s in load(SEED3).analysis.memory_spaces}
    assert {c: s.padding_bytes for c, s in spaces.items()} == dict(expected)
    # p0.1 f32[]{:T(128)} takes 512 for 4, and so do add.27, x.25, y.26, all-reduce.28{1};
    # tuple index tables of 3, 3, 2 and 1 elements take 32-byte slots.
    p0 = next(i for i in load(SEED3).analysis.values if i.value.name == "p0.1")
    assert (p0.logical_bytes, p0.allocated_bytes, p0.padding_bytes) == (4, 512, 508)
    assert _logical_bytes("f32[]{:T(128)}") == 4 and largest[(6, 0, 512)] == 4
    assert spaces[0].padding_bytes == 5 * (512 - 4) + 2 * (32 - 24) + (32 - 16) + (32 - 8) == 2596
    assert spaces[1].padding_bytes == 0 and spaces[2].padding_bytes == 0


# 7. the command line

CLI_SAMPLES = ["tpu/v5e_2x2-transformer_sharded", "tpu/v5e_1x1-host_offload"]


def _run(*args: str) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "hlotop", *args], capture_output=True, cwd=ROOT, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.decode()


@pytest.mark.parametrize("folder", CLI_SAMPLES)
def test_cli_json_memory_stats_are_jax_figures(folder):
    entry = _entry(SAMPLES / folder)
    stats = json.loads(_run("--json", str(entry)))["analysis"]["memory_stats"]
    jax = json.loads((SAMPLES / folder / "memory_analysis.json").read_text())
    assert set(stats) == set(FIELDS) | {"alias_source", "peak_memory_in_bytes", "peak_memory_rule"}
    assert stats.pop("alias_source") == "input_output_alias"
    assert (stats.pop("peak_memory_in_bytes"), stats.pop("peak_memory_rule")) == (None, None)
    assert stats.pop("temp_size_in_bytes") == _xla_temp(_allocations(entry.read_text())) > 0
    assert stats == {f: jax[f] for f in FIELDS if f != "temp_size_in_bytes"}


@pytest.mark.parametrize("folder", CLI_SAMPLES)
def test_cli_summary_shows_memory_analysis_and_spaces(folder):
    text = _run("--summary", str(_entry(SAMPLES / folder)))
    assert "memory_analysis()" in text and "libtpu" in text
    for name in ("argument", "output", "alias", "temp"):
        assert re.search(rf"^{name}_size_in_bytes\s", text, re.M), name
    colours = {x["color"] for x in _allocations(_entry(SAMPLES / folder).read_text())}
    assert ("sync flags (color 4)" in text) == (4 in colours)
    assert ("host (color 5)" in text) == (5 in colours)
    assert 4 in colours or 5 in colours


# 4. jax 0.11: allocation lines with "page N", memory_analysis() with its peak

JAX_0_11 = sorted(p.parent for p in SAMPLES.glob("jax-0.11.2/*/memory_analysis.json"))


@pytest.mark.parametrize("folder", JAX_0_11, ids=_id)
def test_jax_0_11_dumps_read_every_allocation_and_jax_figures(folder):
    entry = next(folder.glob("module_*.jit_step.*-buffer-assignment.txt"))
    module = load(entry)
    allocs = _allocations(entry.read_text())
    assert [x.index for x in module.allocations] == [x["index"] for x in allocs]
    assert [x.size for x in module.allocations] == [x["size"] for x in allocs]
    pages = re.findall(r"^allocation \d+: size \d+, page (\d+),", entry.read_text(), re.M)
    assert len(pages) == len(allocs) > 0
    assert [x.page for x in module.allocations] == [int(p) for p in pages]
    assert not module.diagnostics
    jax = json.loads((folder / "memory_analysis.json").read_text())
    assert module.analysis.memory_stats.as_dict() == {f: jax[f] for f in FIELDS}


# JAX's peak_memory_in_bytes where memory_analysis.json has it (jax >= 0.10's record)
PEAKED_JAX = [
    p.parent
    for p in sorted(SAMPLES.glob("*/*/memory_analysis.json"))
    if "peak_memory_in_bytes" in json.loads(p.read_text())
]


@pytest.mark.parametrize("folder", PEAKED_JAX, ids=_id)
def test_peak_memory_in_bytes_is_jax_figure_by_xla_rule(folder):
    entry = next(folder.glob("module_*.jit_*step*-buffer-assignment.txt"))
    stats = load(entry).analysis.memory_stats
    jax = json.loads((folder / "memory_analysis.json").read_text())
    if "/tpu/" in str(folder):  # libtpu's own rule: not derivable from the dump
        assert (stats.peak_memory_in_bytes, stats.peak_memory_rule) == (None, None)
        return
    assert stats.peak_memory_in_bytes == jax["peak_memory_in_bytes"]
    # On CPU XLA's traces are cleared: the static allocations alone, which the
    # allocation lines give (each parameter/constant/live-out at its largest value).
    allocs = _allocations(entry.read_text())
    static = sum(
        max((v[1] for v in x["values"]), default=0)
        for x in allocs
        if x["parameter"] or x["live_out"] or x["kind"] == "constant"
    )
    if "cpu" in entry.name:
        assert stats.peak_memory_rule == "static"
        assert stats.peak_memory_in_bytes == static
    else:
        assert stats.peak_memory_rule == "static+temp"
        assert stats.peak_memory_in_bytes > static


def test_peak_memory_in_bytes_in_json_and_summary():
    folder = SAMPLES / "jax-0.11.2/h200_mlp"
    entry = next(folder.glob("module_*.jit_step.*-buffer-assignment.txt"))
    stats = json.loads(_run("--json", str(entry)))["analysis"]["memory_stats"]
    assert stats["peak_memory_in_bytes"] == 436_207_632
    assert stats["peak_memory_rule"] == "static+temp"
    assert re.search(
        r"^peak_memory_in_bytes\s+416\.00MiB\s.*GPU rule", _run("--summary", str(entry)), re.M
    )
    tpu = _run("--summary", str(_entry(SAMPLES / "tpu/v5e_1x1-donation")))
    assert re.search(r"^peak_memory_in_bytes\s+-\s+libtpu's own rule", tpu, re.M)


def test_diff_carries_peak_memory_in_bytes():
    cpu, gpu = (
        next((SAMPLES / "jax-0.11.2" / f).glob("module_*.jit_step.*-buffer-assignment.txt"))
        for f in ("cpu_step", "h200_mlp")
    )
    doc = json.loads(_run("diff", "--json", str(cpu), str(gpu)))
    old, new = doc["old"]["memory_stats"], doc["new"]["memory_stats"]
    assert (old["peak_memory_in_bytes"], new["peak_memory_in_bytes"]) == (6_815_760, 436_207_632)
    assert doc["delta"]["memory_stats"]["peak_memory_in_bytes"] == 436_207_632 - 6_815_760
    tpu = str(_entry(SAMPLES / "tpu/v5e_1x1-donation"))
    doc = json.loads(_run("diff", "--json", tpu, str(cpu)))
    assert "peak_memory_in_bytes" not in doc["delta"]["memory_stats"]  # TPU has none
