"""hlotop LOG: out-of-memory texts on the command line (figures equal to the parser's
and to the text's), linked to a dump with --dump; --capacity against a module."""

from __future__ import annotations

import json
import re

import pytest

from conftest import SAMPLES, hlotop
from hlotop import load
from hlotop.parse.oom import parse_oom
from hlotop.units import human_bytes

OOM = SAMPLES / "oom"
TEXTS = sorted(OOM.glob("*.txt"))
GPT_TPU = SAMPLES / "tpu" / "v5e_1x1-gpt_loop"


@pytest.mark.parametrize("path", TEXTS, ids=lambda p: p.name)
def test_every_oom_sample_opens_with_its_figures(path):
    report = parse_oom(path.read_text(), str(path))
    assert report is not None
    doc = json.loads(hlotop("--json", str(path)).stdout)["oom"]
    assert (doc["format"], doc["memory_space"]) == (report.format, report.memory_space)
    assert (doc["capacity_bytes"], doc["used_bytes"], doc["over_bytes"]) == (
        report.capacity_bytes,
        report.used_bytes,
        report.over_bytes,
    )
    assert [e["size_bytes"] for e in doc["entries"]] == [e.size_bytes for e in report.entries]
    summary = hlotop("--summary", str(path))
    assert summary.returncode == 0, summary.stderr
    assert re.search(rf"^Out of memory +{re.escape(report.format)}:", summary.stdout.decode(), re.M)


def test_the_tpu_text_reads_as_printed():
    """tpu-jax-2024: 'Used 30.21G of 15.48G hbm. Exceeded hbm capacity by 14.73G.'"""
    out = hlotop(
        "--summary", str(OOM / "tpu-jax-2024-largest-program-allocations.txt")
    ).stdout.decode()
    for shown in (
        "Capacity",
        "15.48GiB",
        "Used",
        "30.21GiB",
        "Over by",
        "14.73GiB",
        "bf16[256000,3072]",
        "By scope",
    ):
        assert shown in out, shown


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
    are left out, and the room goes to the op_names (one is no longer cut at 160). A
    type every buffer has (TF1's HLO temp) is said once, in the heading."""
    from hlotop.report.oom_report import entry_columns

    gpu = parse_oom((OOM / "gpu-jax-2024-peak-buffers.txt").read_text(), "gpu")
    assert entry_columns(gpu.entries) == ["size", "shape", "op_name", "instruction"]
    tf1 = parse_oom((OOM / "tpu-tf1-2019-largest-program-allocations.txt").read_text(), "tf1")
    assert entry_columns(tf1.entries) == [
        "size",
        "unpadded",
        "x",
        "shape",
        "op_name",
        "instruction",
    ]
    jax = parse_oom((OOM / "tpu-jax-2024-largest-program-allocations.txt").read_text(), "jax")
    assert entry_columns(jax.entries) == [
        "size",
        "unpadded",
        "shape",
        "op_name",
        "instruction",
        "type",
    ]
    monkeypatch.setenv("COLUMNS", "160")
    out = hlotop("--summary", str(OOM / "gpu-jax-2024-peak-buffers.txt")).stdout.decode()
    header = next(line for line in out.splitlines() if line.lstrip().startswith("#"))
    assert header.split() == ["#", "size", "shape", "op_name", "instruction"]
    assert "llm.compute_logits/Model/embedder.decode/" in out
    # the op_name's [params] are text, not Rich markup: they were dropped before
    assert "dot_general[dimension_numbers=(((2,), (0,)), ((), ())) precision=None" in out
    out = hlotop("--summary", str(OOM / "tpu-tf1-2019-largest-program-allocations.txt"))
    assert "20 buffers listed, 3.88GiB in all, all HLO temp" in out.stdout.decode()
