"""A value's source on this machine: where its ``file:line`` is, and the lines around it
that the detail pane shows (bounded reads, never a FIFO or a device)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from conftest import ROOT, sample
from hlotop.loading.loader import load
from hlotop.loading.source_lines import resolve_source, source_lines, split_location
from hlotop.ui.widgets.source_block import source_block

GPT = "tpu/v5e_1x1-gpt_loop"  # source_file="scripts/generate_tpu_dumps.py", this repo's


def test_split_location():
    assert split_location("scripts/x.py:1209") == ("scripts/x.py", 1209)
    assert split_location("x.py") == ("x.py", None)
    assert split_location("C:/x.py:7") == ("C:/x.py", 7)
    assert split_location("odd:name") == ("odd:name", None)


def test_a_relative_source_is_found_under_the_dump_folders_or_the_current_one(
    tmp_path, monkeypatch
):
    dump = load(sample(GPT))
    info = next(v for v in dump.analysis.values if v.value.label == "reduce_max.5")
    assert info.source == "scripts/generate_tpu_dumps.py:1209"
    file, line = split_location(info.source)
    near = [str(Path(f.path).resolve()) for f in dump.files]  # before the chdir
    script = ROOT / "scripts" / "generate_tpu_dumps.py"
    monkeypatch.chdir(tmp_path)  # not here: found above the dump's folder (the repo)
    monkeypatch.setattr(sys, "path", [])
    assert resolve_source(file, near) == script.resolve()
    assert resolve_source(file, []) is None
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "generate_tpu_dumps.py").write_text("x = 1\n")
    assert resolve_source(file, near) == tmp_path / "scripts" / "generate_tpu_dumps.py"
    read = source_lines(script, line)
    assert read is not None and read.first == 1207 and len(read.lines) == 5
    assert "jax.nn.softmax" in read.lines[2]
    assert read.numbered()[2][0] == 1209


def test_an_absolute_or_library_source_is_looked_for_as_is_and_on_sys_path(tmp_path, monkeypatch):
    lib = tmp_path / "site"
    (lib / "flax" / "linen").mkdir(parents=True)
    (lib / "flax" / "linen" / "normalization.py").write_text("a\nb\nc\n")
    monkeypatch.setattr(sys, "path", [str(lib)])
    assert resolve_source("flax/linen/normalization.py") == lib / "flax/linen/normalization.py"
    absolute = str(lib / "flax/linen/normalization.py")
    assert resolve_source(absolute) == Path(absolute)
    assert resolve_source(str(tmp_path / "gone.py")) is None
    assert resolve_source("bad\x00name.py") is None


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_a_device_or_a_line_past_the_end_is_never_read(tmp_path):
    fifo = tmp_path / "x.py"
    os.mkfifo(fifo)
    assert resolve_source(str(fifo)) is None  # opening it would block
    assert source_lines(fifo, 1) is None
    if Path("/dev/zero").exists():
        assert resolve_source("/dev/zero") is None and source_lines(Path("/dev/zero"), 1) is None
    short = tmp_path / "short.py"
    short.write_text("one\ntwo\n")
    assert source_lines(short, 3) is None and source_lines(short, 0) is None
    read = source_lines(short, 2)
    assert read is not None and read.lines == ("one", "two")


def test_a_changed_file_is_read_again(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("old\n")
    assert source_lines(path, 1).lines == ("old",)
    path.write_text("newer line\n")
    os.utime(path, ns=(1, 1))
    assert source_lines(path, 1).lines == ("newer line",)


def test_the_detail_block_marks_the_line_and_escapes_control_characters(tmp_path, monkeypatch):
    dump = load(sample(GPT))
    info = next(v for v in dump.analysis.values if v.value.label == "reduce_max.5")
    monkeypatch.chdir(ROOT)
    block = [getattr(part, "plain", "") for part in source_block(info, [])]
    assert block[1] == f"source on this machine: {ROOT / 'scripts' / 'generate_tpu_dumps.py'}"
    marked = [line for line in block if line.startswith("▶")]
    assert marked == [
        "▶ 1209  a = jax.nn.softmax(jnp.where(causal, s, -1e9), axis=-1).astype(bf16)"
    ]
    # A file holding an escape sequence: shown as text, never sent to the terminal.
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "generate_tpu_dumps.py").write_text(
        "\n" * 1208 + "\tx = '\x1b]0;pwned\x07'\n"
    )
    monkeypatch.chdir(tmp_path)
    block = [getattr(part, "plain", "") for part in source_block(info, [])]
    assert "▶ 1209  x = '\\x1b]0;pwned\\x07'" in block
    assert not any("\x1b" in line for line in block)
    other = next(v for v in dump.analysis.values if not v.source)
    assert source_block(other, []) == []
