"""Worker processes and the signals that end hlotop, as real processes: the workers die
with their parent whatever kills it, SIGTERM and SIGHUP take the temporary files with
them and restore the browser's terminal, ctrl-c prints one line; and the ordered map
every worker runs under (hlotop.loading.workers) keeps its order when a worker dies."""

from __future__ import annotations

import fcntl
import json
import os
import select
import signal
import struct
import subprocess
import sys
import termios
import textwrap
import time
from pathlib import Path

import pytest

import hlotop
from conftest import ROOT, sample

# A split module of 11 000 records: --json formats them on worker processes.
SPLIT = (
    "jax/jax-0.10.2/transformer_big/module_0016.jit_transformer_train_step"
    ".cpu_after_optimizations-buffer-assignment.txt"
)
SMALL = "seeds/000_aa093b3e4f73e23a.txt"
WAIT = 10.0  # seconds a process is given to start or to end

two_cores = pytest.mark.skipif(
    len(os.sched_getaffinity(0)) < 2, reason="hlotop forks no workers on one core"
)


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            if int(fields[1]) == pid:
                out.append(int(entry))
    return out


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting to be reaped does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def _until(condition, seconds: float = WAIT) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def _env(tmp_path: Path) -> dict[str, str]:
    """The environment of an hlotop process: this hlotop, temporary files under
    ``tmp_path``."""
    code = Path(hlotop.__file__).parents[1]
    return dict(os.environ, TMPDIR=str(tmp_path), PYTHONPATH=str(code))


def _json_with_workers(tmp_path: Path) -> tuple[subprocess.Popen, list[int]]:
    """``hlotop --json`` of a split module, its output not read (so it stays in its
    writing, its record workers with it), and the pids of its workers once two run."""
    process = subprocess.Popen(
        [sys.executable, "-m", "hlotop", "--json", sample(SPLIT)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env=_env(tmp_path),
    )
    assert _until(lambda: len(_children(process.pid)) >= 2), "no workers started"
    assert _until(lambda: list(tmp_path.glob("hlotop-json-*")))
    return process, _children(process.pid)


@two_cores
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_take_the_json_workers_and_their_folder(tmp_path, signum):
    """timeout, kill, a closed SSH session: the workers (and the folder their chunks
    wait in) went with hlotop, and it ended as the signal ends a process."""
    process, workers = _json_with_workers(tmp_path)
    process.send_signal(signum)
    assert process.wait(WAIT) == -signum
    assert _until(lambda: not any(map(_alive, workers))), "workers left running"
    assert not list(tmp_path.glob("hlotop-json-*")), "a temporary folder was left"


@two_cores
def test_under_nohup_sighup_stays_ignored(tmp_path):
    """nohup ignores SIGHUP: hlotop and its workers go on and write the whole document
    when the terminal hangs up (the signal to the whole process group)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "hlotop", "--json", sample(SPLIT)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env=_env(tmp_path),
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN),
    )
    assert _until(lambda: len(_children(process.pid)) >= 2), "no workers started"
    os.killpg(process.pid, signal.SIGHUP)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert json.loads(out)["module"].startswith("module_0016.jit_transformer_train_step")


@two_cores
def test_json_workers_die_with_a_parent_killed_by_sigkill(tmp_path):
    """kill -9 (the kernel's out-of-memory killer): nothing of hlotop's runs, and the
    kernel kills its workers."""
    process, workers = _json_with_workers(tmp_path)
    process.kill()
    process.wait(WAIT)
    assert _until(lambda: not any(map(_alive, workers))), "workers outlived hlotop"


def test_the_read_ahead_worker_dies_with_its_parent(tmp_path):
    """The worker that reads a split module's parts ahead dies when the process that
    forked it is killed, even while it is reading (here: a part that never ends)."""
    script = textwrap.dedent(
        """
        import os, sys, time
        from hlotop.loading.ahead import MIN_BYTES, PartsAhead

        def endless(found):
            time.sleep(600)

        with PartsAhead(2) as ahead:
            ahead.start([("part", MIN_BYTES, endless, ())])
            print("started", flush=True)
            time.sleep(600)
        """
    )
    process = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, env=_env(tmp_path)
    )
    assert process.stdout is not None and process.stdout.readline() == b"started\n"
    (worker,) = _children(process.pid)
    process.kill()
    process.wait(WAIT)
    assert _until(lambda: not _alive(worker)), "the read-ahead worker outlived its parent"


def test_ctrl_c_while_reading_standard_input_prints_one_line(tmp_path):
    """ctrl-c (the terminal's SIGINT, to the whole process group) while hlotop waits
    for a dump on its standard input: one line, status 130, no traceback."""
    process = subprocess.Popen(
        [sys.executable, "-m", "hlotop", "--summary", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env=_env(tmp_path),
        start_new_session=True,
    )
    assert process.stdin is not None
    process.stdin.write(b"BufferAssignment:\n")  # and nothing more yet
    process.stdin.flush()
    time.sleep(1.5)  # the interpreter started and is reading
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=WAIT)
    assert process.returncode == 130
    assert err.decode() == "hlotop: interrupted\n"


def _pty_browser(signum: int, tmp_path: Path) -> tuple[bytes, list, list, int]:
    """The browser on a pseudo-terminal, sent ``signum`` once it is on screen: what it
    wrote after the signal, the terminal's modes before it started and after it ended,
    and its exit status."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    before = termios.tcgetattr(slave)
    env = dict(_env(tmp_path), TERM="xterm-256color")
    process = subprocess.Popen(
        [sys.executable, "-m", "hlotop", sample(SMALL)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )
    out = bytearray()

    def read(seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if select.select([master], [], [], 0.05)[0]:
                try:
                    out.extend(os.read(master, 1 << 16))
                except OSError:  # the terminal's other side closed
                    return

    try:
        assert _until(lambda: read(0.05) or b"\x1b[?1049h" in out), "the app never started"
        read(0.5)  # its first screen painted
        assert termios.tcgetattr(slave)[3] & termios.ICANON == 0, "not in raw mode"
        started = len(out)
        process.send_signal(signum)
        code = process.wait(WAIT)
        read(0.2)
        after = termios.tcgetattr(slave)
    finally:
        if process.poll() is None:
            process.kill()
        os.close(master)
        os.close(slave)
    return bytes(out[started:]), before, after, code


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_restore_the_browsers_terminal(tmp_path, signum):
    """The browser leaves as on q: the alternate screen left, the cursor shown, mouse
    reporting off, the terminal's modes as they were; then it ends by the signal."""
    written, before, after, code = _pty_browser(signum, tmp_path)
    for sequence in (b"\x1b[?1049l", b"\x1b[?25h", b"\x1b[?1000l", b"\x1b[?1003l"):
        assert sequence in written, sequence
    assert after == before
    assert code == -signum


# -- the ordered map, in this process ---------------------------------------------------


def _square_or_die(i: int) -> int:
    if i == 13 and os.getpid() != PARENT:
        os.kill(os.getpid(), signal.SIGKILL)
    return i * i


PARENT = os.getpid()


def test_an_item_that_kills_its_worker_is_lost_and_the_rest_come_in_order():
    from hlotop.loading.workers import OrderedMap

    with OrderedMap(_square_or_die, 40, 2, chunk=4, lost=lambda i, why: why) as results:
        out = list(results)
    assert [x for i, x in enumerate(out) if i != 13] == [i * i for i in range(40) if i != 13]
    assert "SIGKILL" in out[13]
