"""Where an unexpected error goes: a log file with the traceback, never the screen.

The file is written under ``$XDG_STATE_HOME/hlotop`` (default ``~/.local/state/hlotop``),
or the system temporary folder when that cannot be written; never beside a dump.
Files are written atomically (a temporary file renamed into place), readable by their
owner only: a traceback may quote a dump's paths and text.
"""

from __future__ import annotations

import os
import tempfile
import time
import traceback
from pathlib import Path

from hlotop.atomic_write import write_atomically
from hlotop.version import __version__


def _log_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return Path(base) / "hlotop"


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
            write_atomically(path, text, mode=0o600)
            return path
        except OSError:
            continue
    return None
