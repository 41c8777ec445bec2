"""Hostile input and a hostile system, met by the ``hlotop`` process itself (issue 32):
standard input without end, binary or without a dump line; compressed dumps; an export
of crafted text to a terminal or a pipe; a full disk and ``ulimit -f``; a folder that
cannot be read, and a folder of runs. Each runs the real command (``python -m hlotop``)
in a subprocess, bounded by a timeout where the input has no end."""

from __future__ import annotations

import ctypes
import gzip
import os
import pty
import resource
import select
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, SAMPLES, hlotop

SEED2 = SAMPLES / "seeds" / "002_c2e226da3172e77e.txt"
SEED3 = SAMPLES / "seeds" / "003_a3085531593bac68.txt"
SPLIT = SAMPLES / "jax" / "jax-0.10.2" / "mlp_train"
COMMAND = [sys.executable, "-m", "hlotop"]
BOUND = 120  # seconds: the old code read these inputs until it was killed


def _endless(code: str) -> subprocess.Popen:
    """A process writing to a pipe without end (``yes``), whose read end is its
    ``stdout``."""
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)


def _fed_by(writer: subprocess.Popen, *args: str) -> subprocess.CompletedProcess:
    """``hlotop ARGS`` reading ``writer``'s output; the writer is stopped after."""
    try:
        return subprocess.run(
            [*COMMAND, *args],
            stdin=writer.stdout,
            capture_output=True,
            cwd=ROOT,
            timeout=BOUND,
        )
    finally:
        writer.kill()
        writer.wait()
        assert writer.stdout is not None
        writer.stdout.close()


def _one_line(out: subprocess.CompletedProcess) -> str:
    err = out.stderr.decode()
    assert err.count("\n") == 1 and "Traceback" not in err and "internal error" not in err, err
    return err


def test_yes_on_standard_input_is_refused_after_its_first_megabytes():
    """``yes | hlotop -`` grew to 3.5 GB in 20 s: no line of it starts a dump."""
    writer = _endless("import sys\nwhile True: sys.stdout.buffer.write(b'y\\n' * 65536)")
    out = _fed_by(writer, "--summary", "-")
    assert out.returncode == 2 and out.stdout == b""
    err = _one_line(out)
    assert err.startswith("hlotop: error: <stdin>: it is no dump: no 'BufferAssignment:'")
    assert "in its first 64" in err and "(read stopped there)" in err


def test_dev_zero_on_standard_input_is_refused_at_its_first_block():
    """``hlotop - < /dev/zero`` held 4.6 GB and was refused as binary only at its end
    (here: never, /dev/zero has none)."""
    with open("/dev/zero", "rb") as zero:
        out = subprocess.run(
            [*COMMAND, "--summary", "-"], stdin=zero, capture_output=True, cwd=ROOT, timeout=BOUND
        )
    assert out.returncode == 2
    assert _one_line(out) == "hlotop: error: <stdin>: it is a binary file, not a text dump\n"


def test_a_line_without_end_after_a_dump_is_refused():
    """A dump's first line, then one line that never ends: read up to the line limit."""
    writer = _endless(
        "import sys\n"
        "sys.stdout.buffer.write(b'BufferAssignment:\\n')\n"
        "while True: sys.stdout.buffer.write(b'x' * 65536)"
    )
    out = _fed_by(writer, "--summary", "-")
    assert out.returncode == 2
    assert "it is no dump: a line of more than 64.00MiB" in _one_line(out)


def test_a_dump_on_standard_input_still_opens():
    out = hlotop("--summary", "-", stdin=SEED3.read_bytes())
    assert out.returncode == 0 and b"286.05MiB" in out.stdout


def test_gzip_dumps_are_read_from_a_file_a_split_module_and_standard_input(tmp_path):
    """A ``.gz`` dump was "a binary file"; gzip is in Python's standard library."""
    plain = hlotop("--json", str(SEED3)).stdout
    packed = tmp_path / "seed3.txt.gz"
    packed.write_bytes(gzip.compress(SEED3.read_bytes()))
    for args, stdin in (((str(packed),), None), (("-",), packed.read_bytes())):
        out = hlotop("--json", *args, stdin=stdin)
        assert out.returncode == 0, out.stderr
        assert b'"total_bytes_used":299944008' in out.stdout
        assert out.stdout.count(b'"peak_bytes"') == plain.count(b'"peak_bytes"')
    split = tmp_path / "split"
    split.mkdir()
    for f in SPLIT.iterdir():
        target = split / (f.name + ".gz" if f.name.endswith("-live-range.txt") else f.name)
        target.write_bytes(
            gzip.compress(f.read_bytes()) if target.suffix == ".gz" else f.read_bytes()
        )
    whole = hlotop("--summary", str(next(SPLIT.glob("*-buffer-assignment.txt"))))
    out = hlotop("--summary", str(next(split.glob("*-buffer-assignment.txt"))))
    assert out.returncode == 0 and b"-live-range.txt.gz" in out.stdout
    figures = out.stdout[out.stdout.index(b"Total bytes used") :]
    assert figures == whole.stdout[whole.stdout.index(b"Total bytes used") :]


def test_a_compressed_file_of_zeros_or_cut_short_is_refused_at_once(tmp_path):
    zeros = tmp_path / "zeros.txt.gz"
    zeros.write_bytes(gzip.compress(bytes(50 << 20)))  # 50 MB of NULs in 50 kB
    out = hlotop("--summary", str(zeros))
    assert out.returncode == 2
    assert "decompressed, it is a binary file" in _one_line(out)
    cut = tmp_path / "cut.txt.gz"
    cut.write_bytes(gzip.compress(SEED3.read_bytes())[:800])
    out = hlotop("--summary", str(cut))
    assert out.returncode == 2 and "compressed (gzip) but damaged" in _one_line(out)


HOSTILE = r"\x1b]0;owned\x07\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\tX\nY"  # CEscaped


def _hostile_dump(tmp_path: Path) -> Path:
    """Seed 2 with an op_name that sets the window title, writes the clipboard (OSC 52),
    clears the screen and holds a tab and a newline (XLA CEscapes op_names)."""
    path = tmp_path / "evil.txt"
    path.write_text(SEED2.read_text().replace('op_name="args[2]"', f'op_name="{HOSTILE}"'))
    return path


@pytest.mark.parametrize("fmt", ["csv", "tsv", "folded"])
def test_an_export_to_a_pipe_escapes_control_characters_and_keeps_the_rest(tmp_path, fmt):
    out = hlotop("--export", fmt, str(_hostile_dump(tmp_path)))
    assert out.returncode == 0
    text = out.stdout.decode()
    assert not any(ord(c) < 32 and c not in "\t\n" or 0x7F <= ord(c) <= 0x9F for c in text)
    escaped = "\\x1b]0;owned\\x07\\x1b]52;c;cm0gLXJmIH4=\\x07\\x1b[2J\\tX\\nY"
    assert (escaped.replace(";", ",") if fmt == "folded" else escaped) in text  # ; splits frames
    rows = text.splitlines()
    if fmt == "tsv":  # no tab or newline of the label splits a row
        assert {len(row.split("\t")) for row in rows} == {len(rows[0].split("\t"))}
    if fmt == "folded":
        assert all(row.rsplit(" ", 1)[1].isdigit() for row in rows)


def test_an_export_to_a_terminal_sends_no_control_sequence(tmp_path):
    path = _hostile_dump(tmp_path)
    primary, secondary = pty.openpty()
    try:
        proc = subprocess.Popen(
            [*COMMAND, "--export", "csv", str(path)],
            stdout=secondary,
            stderr=subprocess.PIPE,
            cwd=ROOT,
        )
        os.close(secondary)
        got = b""
        while True:
            ready, _, _ = select.select([primary], [], [], BOUND)
            if not ready:
                break
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # the terminal's other end closed
                break
            if not chunk:
                break
            got += chunk
        assert proc.wait(timeout=BOUND) == 0
    finally:
        os.close(primary)
    assert b"owned" in got
    assert b"\x1b" not in got and b"\x07" not in got


def test_a_full_disk_is_said_and_exits_1():
    """``> /dev/full`` was an internal error (exit 70) with a crash log."""
    for args in (("--summary",), ("--json",), ("--export", "csv")):
        with open("/dev/full", "w") as full:
            out = subprocess.run(
                [*COMMAND, *args, str(SEED3)],
                stdout=full,
                stderr=subprocess.PIPE,
                cwd=ROOT,
                timeout=BOUND,
            )
        assert out.returncode == 1, args
        assert out.stderr.decode() == (
            "hlotop: error: standard output: No space left on device; the output is incomplete\n"
        )


def _file_size_limit(limit: int):
    def set_it() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return set_it


def test_output_cut_by_ulimit_f_is_not_exit_0(tmp_path):
    """Under ``ulimit -f`` the report was cut at the limit and hlotop exited 0: Python
    dropped the rest of a short write without a word."""
    for args in (("--summary",), ("--json",)):
        target = tmp_path / "out.txt"
        with open(target, "wb") as f:
            out = subprocess.run(
                [*COMMAND, *args, str(SEED3)],
                stdout=f,
                stderr=subprocess.PIPE,
                cwd=ROOT,
                timeout=BOUND,
                preexec_fn=_file_size_limit(1024),
            )
        assert out.returncode == 1, args
        assert out.stderr.decode() == (
            "hlotop: error: standard output: File too large; the output is incomplete\n"
        )
        assert target.stat().st_size == 1024


def _no_dac_override() -> None:
    """For a child of root: drop the capabilities that read any folder, so that a
    folder's permissions apply to it (``prctl(PR_CAPBSET_DROP)``: from the next
    ``exec`` on)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        libc.prctl(24, capability, 0, 0, 0)  # PR_CAPBSET_DROP


def test_a_folder_that_cannot_be_read_says_permission_denied(tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir()
    shutil.copy(SEED3, folder / "m-buffer-assignment.txt")
    folder.chmod(0o700)
    if os.geteuid() == 0:
        os.chown(folder, 65534, 65534)  # someone else's, then
    else:
        folder.chmod(0)
    try:
        out = subprocess.run(
            [*COMMAND, "--summary", str(folder)],
            capture_output=True,
            cwd=ROOT,
            timeout=BOUND,
            preexec_fn=_no_dac_override if os.geteuid() == 0 else None,
        )
    finally:
        folder.chmod(0o700)
    assert out.returncode == 2
    assert _one_line(out) == f"hlotop: error: {folder}: permission denied\n"


def test_a_folder_of_runs_names_the_subfolders_with_dumps(tmp_path):
    """A folder of runs is listed, each module by its run (tests/test_directory_runs.py);
    what opens one module (hlotop why, diff's one module) names the subfolders."""
    from hlotop.loading.discover import resolve
    from hlotop.loading.errors import LoadError

    runs = tmp_path / "runs"
    for name in ("run_a", "run_b"):
        shutil.copytree(SPLIT, runs / name)
    (runs / "logs").mkdir()
    out = hlotop("--summary", str(runs))
    assert out.returncode == 0 and "2 modules" in out.stdout.decode()
    with pytest.raises(LoadError) as err:
        resolve(runs)
    assert str(err.value) == (
        f"{runs}: no *-buffer-assignment.txt dump in this directory; "
        "2 of its subfolders run_a/, run_b/ hold dumps: name one"
    )
