"""Where an unexpected error goes: a log file with the traceback, never the screen.

The file is written under ``$XDG_STATE_HOME/hlotop`` (default ``~/.local/state/hlotop``),
or the system temporary folder when that cannot be written; never beside a dump.
Files are written atomically (a temporary file renamed into place).
"""

from __future__ import annotations

import os
import tempfile
import time
import traceback
from pathlib import Path

from hlotop.version import __version__


def _log_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return Path(base) / "hlotop"


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a reader sees the old file or the whole new
    one, never a part. Raises ``OSError``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix="." + path.name + ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_crash_log(error: BaseException, context: str = "") -> Path | None:
    """Write ``error``'s traceback (and ``context``, e.g. the command line) to a new
    log file; return its path, or None if no folder could be written."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    text = f"hlotop {__version__} crashed at {stamp}\n{context}\n\n" + "".join(
        traceback.format_exception(error)
    )
    for folder in (_log_dir(), Path(tempfile.gettempdir()) / "hlotop"):
        path = folder / f"crash-{stamp}-{os.getpid()}.log"
        try:
            write_atomically(path, text)
            return path
        except OSError:
            continue
    return None
