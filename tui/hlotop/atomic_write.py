"""Writing a file so that a reader sees the old one or the whole new one, never a part:
through a temporary file in the same folder, renamed into place. The one writer of
every file hlotop writes (the browser's exports, crash logs).

A temporary file is made readable by its owner only (``mkstemp``); the file put in
place takes the mode a file made by ``open`` would have: ``0666`` less the user's
umask (``0644`` under the usual ``022``), unless the caller asks for another.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import suppress
from pathlib import Path


def write_atomically(path: Path, text: str, mode: int | None = None) -> Path:
    """Write ``text`` (UTF-8, line ends as given) to ``path``, its folder made if
    missing; the file's permission bits are ``mode``, or by default those a new file
    gets under the process's umask. Returns ``path``. Raises ``OSError`` (the folder
    cannot be written, the disk is full): then nothing is left behind."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fchmod(f.fileno(), 0o666 & ~umask() if mode is None else mode)
        os.replace(tmp, path)
        return path
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise


def umask() -> int:
    """The process's umask. Read from ``/proc/self/status`` where Linux gives it, so
    that no other thread ever runs under a changed one; else set and restored at
    once. Raises nothing."""
    with suppress(OSError, ValueError):
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
