"""hlotop LOG: out-of-memory texts on the command line (figures equal to the parser's
and to the text's), linked to a dump with --dump; --capacity against a module."""

from __future__ import annotations

import json
import re

import pytest

from conftest import SAMPLES, hlotop
from hlotop import load
from hlotop.parse.oom import find_ooms, parse_oom, primary
from hlotop.units import human_bytes

OOM = SAMPLES / "oom"
TEXTS = sorted([*OOM.glob("*.txt"), *OOM.glob("*.log")])
GPT_TPU = SAMPLES / "tpu" / "v5e_1x1-gpt_loop"
FIGURES = ("capacity", "target", "used", "over", "requested")


def size_doc(size):
    if size is None:
        return None
    return {"text": size.text, "bytes": size.bytes, "exact": size.exact, "origin": size.origin}


@pytest.mark.parametrize("path", TEXTS, ids=lambda p: p.name)
def test_every_oom_sample_opens_with_its_figures(path):
    """Every message of every sample, in --json (each figure as printed, its bytes
    given as bytes only when exact) and in --summary."""
    reports = find_ooms(path.read_text(), str(path))
    assert reports
    doc = json.loads(hlotop("--json", str(path)).stdout)
    assert len(doc["ooms"]) == len(reports)
    for report, d in zip(reports, doc["ooms"], strict=True):
        assert (d["format"], d["memory_space"], d["line"]) == (
            report.format,
            report.memory_space,
            report.line,
        )
        for name in FIGURES:
            size = getattr(report, name)
            assert d[name] == size_doc(size)
            assert d[f"{name}_bytes"] == (size.bytes if size is not None and size.exact else None)
        assert [e["size"] for e in d["entries"]] == [size_doc(e.size) for e in report.entries]
        assert [e["line"] for e in d["entries"]] == [e.line for e in report.entries]
    assert doc["oom"] == doc["ooms"][reports.index(primary(reports))]
    summary = hlotop("--summary", str(path))
    assert summary.returncode == 0, summary.stderr
    out = summary.stdout.decode()
    for report in reports:
        assert re.search(rf"^(\d+\. )?Out of memory +{re.escape(report.format)}(:| *$)", out, re.M)
    assert len(re.findall(r"^(?:\d+\. )?Out of memory  ", out, re.M)) == len(reports)


def test_the_tpu_text_reads_as_printed():
    """tpu-jax-2024: 'Used 30.21G of 15.48G hbm. Exceeded hbm capacity by 14.73G.':
    shown as printed, never as a count of bytes worked out from the rounded figure."""
    out = hlotop(
        "--summary", str(OOM / "tpu-jax-2024-largest-program-allocations.txt")
    ).stdout.decode()
    for shown in (
        "Capacity",
        "15.48G",
        "Used",
        "30.21G",
        "Over by",
        "14.73G",
        "bf16[256000,3072]",
        "By scope",
    ):
        assert shown in out, shown
    assert f"{round(15.48 * 2**30):,}" not in out and f"{round(30.21 * 2**30):,}" not in out


def test_stdin_and_a_text_that_is_no_oom():
    text = (OOM / "gpu-jax-2024-peak-buffers.txt").read_bytes()
    doc = json.loads(hlotop("--json", "-", stdin=text).stdout)
    assert doc["oom"]["format"] == parse_oom(text.decode(), "-").format
    seed = (SAMPLES / "seeds" / "003_a3085531593bac68.txt").read_bytes()
    dump = hlotop("--summary", "-", stdin=seed)  # a dump on stdin still opens
    assert dump.returncode == 0 and "286.05MiB" in dump.stdout.decode()
    refused = hlotop("--summary", "README.md")
    assert refused.returncode == 2 and refused.stderr.decode().count("\n") == 1


def test_capacity_headroom_and_excess():
    # On TPU the need is that of HBM (colour 0) alone: arguments + outputs - aliased +
    # temp there; VMEM and SMEM are on-chip memories a device's HBM does not hold.
    module = load(GPT_TPU)
    hbm = [a for a in module.allocations if a.color == 0]
    need = sum(a.size for a in hbm if not (a.is_constant or a.is_thread_local))
    assert need == 11964928
    fits = json.loads(hlotop("--json", "--capacity", "v5e", str(GPT_TPU)).stdout)["capacity"]
    assert fits["required_bytes"] == need and fits["capacity_bytes"] == 16 << 30
    assert fits["headroom_bytes"] == (16 << 30) - need and fits["shed"] == []
    over = json.loads(hlotop("--json", "--capacity", "8MiB", str(GPT_TPU)).stdout)["capacity"]
    assert over["headroom_bytes"] == (8 << 20) - need < 0
    assert over["shed"] and over["shed_bytes"] >= need - (8 << 20)
    text = " ".join(hlotop("--summary", "--capacity", "8MiB", str(GPT_TPU)).stdout.decode().split())
    assert f"needs at least {human_bytes(need)} (argument + output - alias + temp, HBM)" in text
    assert f"over by {human_bytes(need - (8 << 20))}" in text
    bad = hlotop("--summary", "--capacity", "lots", str(GPT_TPU))
    assert bad.returncode == 2 and "not a size" in bad.stderr.decode()


def test_the_buffer_table_leaves_out_the_columns_no_buffer_of_the_text_fills(monkeypatch):
    """A GPU text prints no unpadded size, expansion or allocation type: those columns
    are left out, and the room goes to the op_names (at 200 columns beside the shape's
    bytes, none is cut). A type every buffer has (TF1's HLO temp) is said
    once, in the heading."""
    from hlotop.report.oom_report import entry_columns

    gpu = parse_oom((OOM / "gpu-jax-2024-peak-buffers.txt").read_text(), "gpu")
    assert entry_columns(gpu.entries) == [
        "size",
        "shape bytes",
        "shape",
        "op_name",
        "instruction",
    ]
    tf1 = parse_oom((OOM / "tpu-tf1-2019-largest-program-allocations.txt").read_text(), "tf1")
    assert entry_columns(tf1.entries) == [
        "size",
        "shape bytes",
        "unpadded",
        "x",
        "shape",
        "op_name",
        "instruction",
    ]
    jax = parse_oom((OOM / "tpu-jax-2024-largest-program-allocations.txt").read_text(), "jax")
    assert entry_columns(jax.entries) == [
        "size",
        "shape bytes",
        "unpadded",
        "shape",
        "op_name",
        "instruction",
        "type",
    ]
    monkeypatch.setenv("COLUMNS", "200")
    out = hlotop("--summary", str(OOM / "gpu-jax-2024-peak-buffers.txt")).stdout.decode()
    header = next(line for line in out.splitlines() if line.lstrip().startswith("#"))
    assert header.split() == [
        "#",
        "size",
        "shape",
        "bytes",
        "shape",
        "op_name",
        "instruction",
    ]
    assert "llm.compute_logits/Model/embedder.decode/" in out
    # the op_name's [params] are text, not Rich markup: they were dropped before
    assert "dot_general[dimension_numbers=(((2,), (0,)), ((), ())) precision=None" in out
    out = hlotop("--summary", str(OOM / "tpu-tf1-2019-largest-program-allocations.txt"))
    assert "20 buffers listed, ≈3.88GiB in all, all HLO temp" in out.stdout.decode()


def test_a_line_that_does_not_read_is_said_with_its_line(tmp_path):
    """--json and --summary name the file's line of a report's line that did not read."""
    text = (OOM / "tpu-tf1-2019-largest-program-allocations.txt").read_text()
    path = tmp_path / "oom.txt"
    path.write_text(text.replace("Unpadded size: 40.50M", "Unpadded size: forty"))
    doc = json.loads(hlotop("--json", str(path)).stdout)["oom"]
    (diagnostic,) = doc["diagnostics"]
    assert diagnostic["line"] == 26 and "unpadded size: column 16" in diagnostic["message"]
    out = hlotop("--summary", str(path)).stdout.decode()
    assert "Not read" in out and "line 26: unpadded size" in " ".join(out.split())
