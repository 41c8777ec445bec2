"""Real GPU dumps from public repositories (sample_dumps/gpu/, PyTorch/XLA on an sm_8.0
GPU): they are the upstream files byte for byte, and they open with no diagnostic and
with the figures they print. Expected figures are read from the dump text with plain
string operations, not with hlotop's grammars."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, SAMPLES
from hlotop import load

GPU = SAMPLES / "gpu"
MANIFEST = json.loads((GPU / "manifest.json").read_text(encoding="utf-8"))
DUMPS = sorted(MANIFEST["dumps"])


def _entry(name: str) -> Path:
    (path,) = (GPU / name).glob("*-buffer-assignment.txt")
    return path


def _git_blob(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def test_every_dump_directory_is_in_the_manifest():
    on_disk = sorted(p.name for p in GPU.iterdir() if p.is_dir())
    assert on_disk == DUMPS and len(DUMPS) >= 2


@pytest.mark.parametrize("name", DUMPS)
def test_files_are_the_upstream_files_byte_for_byte(name):
    entry = MANIFEST["dumps"][name]
    assert entry["licence"] == "Apache-2.0" and len(entry["commit"]) == 40
    listed = {f["name"]: f for f in entry["files"]}
    assert sorted(listed) == sorted(p.name for p in (GPU / name).iterdir())
    for file_name, info in listed.items():
        data = (GPU / name / file_name).read_bytes()
        assert (len(data), _git_blob(data)) == (info["bytes"], info["git_blob"]), file_name
        assert info["source_path"].endswith("/" + file_name)
        assert "sm_8.0_gpu_after_optimizations" in file_name


@pytest.mark.parametrize("name", DUMPS)
def test_opens_clean_with_the_dumps_own_figures(name):
    path = _entry(name)
    text = path.read_text()
    report_text = path.with_name(
        path.name.replace("-buffer-assignment.txt", "-memory-usage-report.txt")
    ).read_text()
    m = load(path)
    assert [str(d) for d in m.diagnostics] == []
    assert [f.kind for f in m.files] == ["combined", "memory-usage-report"]
    sizes = [int(s) for s in re.findall(r"^allocation \d+: size (\d+)", text, re.M)]
    total = int(re.search(r"^Total bytes used: (\d+) ", text, re.M).group(1))
    assert [a.size for a in m.allocations] == sizes
    assert m.total_bytes_used == total == sum(sizes)
    assert len(m.used_values) == text.count("\n positions:\n")
    assert {v.value.color for a in m.allocations for v in a.values} == {0}
    peak = int(re.search(r"^  Live ranges at (\d+) \(peak\):$", text, re.M).group(1))
    assert m.live_range.peak.time == m.analysis.peak_step == peak
    assert m.live_range.peak.variant == "V1"
    # The report (era A) lists every allocation once, with XLA's total.
    report = m.memory_usage_report
    assert (report.era, report.total_bytes) == ("A", total)
    assert len(report.allocations) == len(sizes) == report_text.count("; allocation ")


def test_shared_workspaces_are_counted_as_xla_prints_them():
    """module_0016: three cuBLAS workspaces at offset 0 of allocation 3, printed
    ``3×s8[4194304]`` by the report; the values are in the allocation's value lines."""
    m = load(_entry("vllm-torchxla-a100-m0016"))
    alloc = m.allocations[3]
    workspaces = [v for v in alloc.values if v.shape == "s8[4194304]{0}"]
    assert [(v.value.name, v.value.shape_index, v.offset) for v in workspaces] == [
        ("custom-call.3.0", (1,), 0),
        ("custom-call.4.0", (1,), 0),
        ("custom-call.5.0", (1,), 0),
    ]
    (table,) = [a for a in m.memory_usage_report.allocations if a.index == 3]
    (row,) = table.rows
    assert (row.offset, row.used_by_n_values) == (0, 5)
    assert row.shapes == ((1, "f32[16,8,128]"), (1, "bf16[1,4233,16,8,128]"), (3, "s8[4194304]"))
    # The torch_xla metadata: op_type/op_name and the Python source line.
    record = next(r for r in m.used_values if r.value.name == "gemm_fusion_dot.29.0")
    instruction = record.instruction
    assert (instruction.opcode, instruction.op_type, instruction.op_name) == (
        "fusion",
        "aten__mm",
        "aten__mm",
    )
    assert (instruction.source_file, instruction.source_line) == (
        "/usr/local/lib/python3.10/site-packages/torch/_ops.py",
        756,
    )


@pytest.mark.parametrize("name", DUMPS)
def test_cli_strict_summary_and_json(name):
    path = str(_entry(name).relative_to(ROOT))
    strict = subprocess.run(
        [sys.executable, "-m", "hlotop", "--strict", "--summary", path],
        capture_output=True,
        cwd=ROOT,
        timeout=60,
    )
    assert strict.returncode == 0, strict.stderr
    assert "diagnostic" not in strict.stdout.decode()
    out = subprocess.run(
        [sys.executable, "-m", "hlotop", "--json", path], capture_output=True, cwd=ROOT, timeout=60
    )
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["diagnostics"] == [] and doc["layout"] == "combined"
    assert doc["total_bytes_used"] == sum(a["size"] for a in doc["allocations"])
