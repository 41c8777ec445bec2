"""Damaged numbers the parser cannot check, and paths that are not dump files: each gets
the dump (with a diagnostic) or a one-line refusal, never a crash or a hang."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT, sample
from hlotop import load
from hlotop.cli import main

SEED3 = Path(sample("seeds/003_a3085531593bac68.txt"))  # HloLiveRange (max 15), peak at 11


def _refusal(capsys, *args) -> str:
    assert main(list(args)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


def test_a_huge_schedule_end_in_a_file_cut_inside_its_schedule(tmp_path, capsys):
    """The sequence is cut short, so the header cannot be checked against it: the
    curve is sized by what is listed, not by the damaged number (it ran out of memory:
    exit 70)."""
    text = SEED3.read_text().replace("HloLiveRange (max 15):", f"HloLiveRange (max {10**14}):")
    cut = text.index("    8:")  # inside the instruction sequence
    path = tmp_path / "cut.txt"
    path.write_text(text[:cut])
    assert main(["--summary", str(path)]) == 0
    m = load(path)
    assert m.analysis.max_time < 2000 and len(m.analysis.live_bytes) == m.analysis.max_time + 1
    assert any("far beyond the 8 steps" in d.message for d in m.diagnostics)


def test_a_value_id_beyond_64_bits_is_reported_not_a_crash(tmp_path, capsys):
    text = SEED3.read_text()
    lines = text.split("\n")
    first = lines.index("Used values:") + 1
    for at in (first, lines.index(" positions:", first + 2) - 1):  # the first, the second
        damaged = list(lines)
        vid = damaged[at][1:].split(" ", 1)[0]
        damaged[at] = damaged[at].replace(f"<{vid} ", f"<{3 * 10**22} ", 1)
        path = tmp_path / f"huge-id-{at}.txt"
        path.write_text("\n".join(damaged))
        assert main(["--strict", "--summary", str(path)]) == 1  # opens, with diagnostics
        m = load(path)
        assert [d.line for d in m.diagnostics] == [at + 1]
        assert "out of range" in m.diagnostics[0].message


def test_a_fifo_a_device_and_a_symlink_loop_are_refused(tmp_path, capsys):
    fifo = tmp_path / "dump-buffer-assignment.txt"
    os.mkfifo(fifo)
    assert "not a regular file" in _refusal(capsys, "--summary", str(fifo))
    assert "not a regular file" in _refusal(capsys, "--summary", "/dev/zero")
    loop = tmp_path / "loop.txt"
    loop.symlink_to(loop)
    assert "symbolic link that leads nowhere" in _refusal(capsys, "--summary", str(loop))
    long = tmp_path / ("x" * 5000)
    assert "too long" in _refusal(capsys, "--summary", str(long)).lower()


def test_a_directory_listing_a_hostile_file_name_has_no_control_codes(tmp_path):
    folder = tmp_path / "evildir"
    folder.mkdir()
    (folder / "m\x1b]0;pwned\x07-buffer-assignment.txt").write_text(SEED3.read_text())
    (folder / "small-buffer-assignment.txt").write_text(SEED3.read_text())
    out = subprocess.run(
        [sys.executable, "-m", "hlotop", "--summary", str(folder)],
        capture_output=True,
        cwd=ROOT,
        timeout=60,
    )
    # A directory of modules is ranked (it used to be refused): the hostile name is
    # shown escaped, never as control codes.
    assert out.returncode == 0, out.stderr
    assert b"\x1b" not in out.stdout and b"\x07" not in out.stdout
    assert b"2 modules" in out.stdout and b"m\\x1b]0;pwned\\x07" in out.stdout
