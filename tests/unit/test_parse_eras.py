"""Every line form of FORMATS.md, made by rewriting a real seed dump into the text an
older (or newer) XLA printed, must give the same figures as the seed itself."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from conftest import sample
from hlotop import load
from hlotop.loading.loader import load_bytes
from hlotop.model import HloUse

SEED0 = sample("seeds/000_aa093b3e4f73e23a.txt")
SEED3 = sample("seeds/003_a3085531593bac68.txt")


def _text(path: str) -> str:
    return Path(path).read_text()


def _figures(m):
    return (
        [
            (a.index, a.size, a.color, a.kinds, [(s.value.id, s.offset, s.size) for s in a.values])
            for a in m.allocations
        ],
        m.total_bytes_used,
        [(r.value.id, r.positions, r.uses) for r in m.used_values],
        m.analysis.peak_step,
        m.analysis.peak_bytes,
        m.analysis.live_bytes,
    )


def _load_text(tmp_path: Path, text: str, name: str = "dump-buffer-assignment.txt"):
    path = tmp_path / name
    path.write_text(text)
    return load(path)


@pytest.mark.parametrize("seed", [SEED0, SEED3])
def test_pre_2022_allocation_pointer(tmp_path, seed):
    text = re.sub(r"^(allocation \d+: )", r"\g<1>0x7fb2bfd3ac00, ", _text(seed), flags=re.M)
    m = _load_text(tmp_path, text)
    assert m.diagnostics == []
    assert m.allocations[0].pointer == "0x7fb2bfd3ac00"
    assert _figures(m) == _figures(load(seed))


def test_pre_2019_12_parameter_without_shape_and_no_output_shape(tmp_path):
    text = re.sub(r", shape \|[^|]*\| at ShapeIndex", " at ShapeIndex", _text(SEED0))
    text = re.sub(r", output shape is \|[^|]*\|", "", text)
    m = _load_text(tmp_path, text)
    assert m.diagnostics == []
    assert m.allocations[1].parameter == 0 and m.allocations[1].parameter_shape is None
    assert m.allocations[0].kinds == ("maybe-live-out",)
    assert m.total_bytes_used == 41943040


def test_pre_2021_08_total_without_human_size(tmp_path):
    text = _text(SEED0).replace(
        "Total bytes used: 41943040 (40.00MiB)", "Total bytes used: 41943040"
    )
    m = _load_text(tmp_path, text)
    assert m.diagnostics == [] and m.total_bytes_used == 41943040


def test_2021_to_2024_from_instruction_without_space(tmp_path):
    text = _text(SEED3).replace(" from instruction: %", " from instruction:%")
    m = _load_text(tmp_path, text)
    assert m.diagnostics == []
    assert all(r.instruction.name == r.value.name for r in m.used_values)
    assert _figures(m) == _figures(load(SEED3))


def test_pre_2021_09_no_from_instruction_lines(tmp_path):
    text = (
        "\n".join(ln for ln in _text(SEED3).splitlines() if not ln.startswith(" from instruction:"))
        + "\n"
    )
    m = _load_text(tmp_path, text)
    assert m.diagnostics == []
    assert all(r.instruction is None for r in m.used_values)
    # Without instruction shapes the tuple sizes come from the {} values' own lines,
    # and XLA's peak step is still found.
    assert m.analysis.peak_step == 11


def test_pre_2021_04_no_live_range(tmp_path):
    # Before 2021-04 no live ranges, and so (2021-08) no size in parentheses after the
    # total: with one, a combined dump without live ranges was cut short.
    text = _text(SEED0).split("\n\nHloLiveRange")[0] + "\n"
    text = re.sub(r"(Total bytes used: \d+) \(.*\)", r"\1", text)
    m = _load_text(tmp_path, text)
    assert m.diagnostics == []
    assert m.live_range is None and m.analysis.peak_step is None
    assert len(m.used_values) == 4


def test_v2_peak_lines(tmp_path):
    head, _, _ = _text(SEED0).partition("  Stack trace breakdown")
    text = re.sub(r" \(cumulative: \d+ bytes\)", "", head)
    m = _load_text(tmp_path, text)
    assert m.diagnostics == []
    assert m.live_range.peak.variant == "V2"
    assert m.live_range.stack_trace is None
    assert m.analysis.peak_step == 3


def test_2026_none_uses_and_cross_color_reuse(tmp_path):
    text = _text(SEED0).replace(
        " uses:\n from instruction: %concat", " uses:\n  (none)\n from instruction: %concat"
    )
    text = text.replace(
        " value: <11 concatenate_convert_fusion @0> (size=20971520,offset=0): bf16[4,1280,2048]{2,1,0}\n",
        " value: <11 concatenate_convert_fusion @0> (size=20971520,offset=0): bf16[4,1280,2048]{2,1,0}\n"
        " reused by buffers of a different color:\n  value: <12 copy.7 @1> (color=1)\n",
    )
    m = _load_text(tmp_path, text)
    assert m.diagnostics == []
    assert m.used_values[-1].uses == ()
    ((value, color),) = m.allocations[0].reused_by
    assert (value.id, value.name, color) == (12, "copy.7", 1)


def test_uses_not_initialized_and_phi(tmp_path):
    text = _text(SEED0).replace(
        "<8 args_2_.1 @0>\n positions:\n  args_2_.1\n uses:\n  concatenate_convert_fusion, operand 0\n",
        "<8 args_2_.1 (phi) @0>\n positions:\n  args_2_.1\n uses are not initialized yet.\n",
    )
    m = _load_text(tmp_path, text)
    assert m.diagnostics == []
    rec = m.used_values[0]
    assert rec.value.is_phi and rec.uses is None


def test_peak_lines_removed_still_gives_xla_step(tmp_path):
    for seed, step in (
        (SEED0, 3),
        (SEED3, 11),
        (sample("seeds/002_c2e226da3172e77e.txt"), 7),
        (sample("seeds/004_e0d5fae9bf2de249.txt"), 14),
    ):
        text = _text(seed).split("  Live ranges at")[0]
        m = _load_text(tmp_path, text)
        assert m.live_range.peak is None
        assert m.analysis.peak_step == step


def _split(text: str) -> dict[str, str]:
    """Write a combined dump the way XLA since 2026-04 splits it."""
    ba, rest = text.split("\n\nTotal bytes used:", 1)
    values, live = rest.split("\n\n\nHloLiveRange", 1)
    return {
        "-buffer-assignment.txt": ba + "\n",
        "-buffer-assignment-values.txt": "\nTotal bytes used:" + values + "\n",
        "-live-range.txt": "HloLiveRange" + live,
    }


@pytest.mark.parametrize(
    "opened", ["-buffer-assignment.txt", "-buffer-assignment-values.txt", "-live-range.txt"]
)
def test_split_module_opens_whole_from_any_file(tmp_path, opened):
    prefix = "module_0001.jit_f.cpu_after_optimizations"
    for suffix, body in _split(_text(SEED0)).items():
        (tmp_path / (prefix + suffix)).write_text(body)
    m = load(tmp_path / (prefix + opened))
    assert m.name == prefix and m.layout == "split"
    assert {f.kind for f in m.files} == {"buffer-assignment", "values", "live-range"}
    assert _figures(m) == _figures(load(SEED0))
    # The memory-usage report is the only missing sibling: one warning, no error.
    assert [(d.severity, "memory-usage-report" in d.message) for d in m.diagnostics] == [
        ("warning", True)
    ]


def test_split_module_missing_values_is_a_warning(tmp_path):
    prefix = "module_0002.jit_g.cpu_after_optimizations"
    parts = _split(_text(SEED0))
    (tmp_path / (prefix + "-buffer-assignment.txt")).write_text(parts["-buffer-assignment.txt"])
    (tmp_path / (prefix + "-live-range.txt")).write_text(parts["-live-range.txt"])
    m = load(tmp_path / (prefix + "-buffer-assignment.txt"))
    assert len(m.allocations) == 4 and len(m.used_values) == 0
    assert m.analysis.peak_step == 3  # sizes come from the allocations' value lines
    missing = [d.message for d in m.diagnostics if d.message.startswith("sibling file not found")]
    assert len(missing) == 2 and all(d.severity == "warning" for d in m.diagnostics)
    assert "-buffer-assignment-values.txt" in missing[0]
    assert "-memory-usage-report.txt" in missing[1]


def test_live_range_not_available(tmp_path):
    prefix = "module_0003.jit_h.cpu_after_optimizations"
    parts = _split(_text(SEED0))
    parts["-live-range.txt"] = "HloLiveRange not available (finalized or constructed from proto)"
    for suffix, body in parts.items():
        (tmp_path / (prefix + suffix)).write_text(body)
    m = load(tmp_path / (prefix + "-buffer-assignment.txt"))
    assert m.live_range is None and m.analysis.peak_step is None
    assert [d for d in m.diagnostics if d.severity == "error"] == []


def test_stdin_and_dump_to_stdout_markers():
    data = Path(SEED3).read_bytes()
    wrapped = (
        b"*** Begin module_0001.x-buffer-assignment.txt ***\n"
        + data
        + b"\n*** End module_0001.x-buffer-assignment.txt ***\n"
    )
    for blob in (data, wrapped):
        m = load("-", stdin=io.TextIOWrapper(io.BytesIO(blob)))
        assert m.diagnostics == []
        assert _figures(m) == _figures(load(SEED3))


def test_dump_to_stdout_keeps_only_buffer_assignment_files():
    """--xla_dump_to=- writes the HLO text too; only our files' blocks are read."""
    hlo = (
        b"*** Begin module_0001.jit_f.cpu_after_optimizations.txt ***\n"
        b"HloModule jit_f\n\nENTRY %main.1 {\n  ROOT %p = f32[] parameter(0)\n}\n"
        b"*** End module_0001.jit_f.cpu_after_optimizations.txt ***\n"
    )
    ba = (
        b"*** Begin module_0001.jit_f.cpu_after_optimizations-buffer-assignment.txt ***\n"
        + Path(SEED3).read_bytes()
        + b"*** End module_0001.jit_f.cpu_after_optimizations-buffer-assignment.txt ***\n"
    )
    m = load_bytes(hlo + ba + hlo)
    assert m.diagnostics == []
    assert _figures(m) == _figures(load(SEED3))


def test_crlf_gives_identical_results():
    data = Path(SEED3).read_bytes()
    m = load_bytes(data.replace(b"\n", b"\r\n"))
    assert m.diagnostics == []
    assert _figures(m) == _figures(load(SEED3))


def test_cr_alone_line_ends_give_identical_results():
    data = Path(SEED3).read_bytes()
    m = load_bytes(data.replace(b"\n", b"\r"))
    assert m.diagnostics == []
    assert _figures(m) == _figures(load(SEED3))


def test_lazy_records_defer_their_diagnostics(tmp_path):
    lines = _text(SEED3).splitlines(keepends=True)
    at = lines.index(" uses:\n", lines.index("<33 p4.10 @0>\n"))
    lines.insert(at + 1, "  this is not a use\n")
    path = tmp_path / "x-buffer-assignment.txt"
    path.write_text("".join(lines))
    lazy = load(path, lazy=True)
    assert lazy.diagnostics == [] and not lazy.records_read
    assert lazy.analysis.peak_step == 11
    rec = lazy.analysis.by_id[33].used  # parsed on demand, the bad line skipped
    assert rec.uses == (HloUse("fusion.10", 1),)
    progress = []
    lazy.read_records(lambda done, total: progress.append((done, total)))
    assert [(d.line, d.severity) for d in lazy.diagnostics] == [(at + 2, "error")]
    assert "use" in lazy.diagnostics[0].message
    assert progress[-1] == (21, 21)
    full = load(path)
    assert [(d.line, d.message) for d in full.diagnostics] == [
        (d.line, d.message) for d in lazy.diagnostics
    ]
