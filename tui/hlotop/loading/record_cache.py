"""What reading every value record of a dump found, kept for the next time it is opened.

Reading every ``Used values`` record (FORMATS.md 3.5-3.6) is the longest part of opening
a big dump (most of a minute at 500 MB), and all it adds to the browser is the
diagnostics of the records that cannot be read: the records themselves are parsed on
demand. So once a pass has read them all, its diagnostics are written to
``$XDG_CACHE_HOME/hlotop`` (default ``~/.cache/hlotop``), never beside the dump, keyed
by every file of the module (absolute path, size, modification time) and hlotop's
version; re-opening the unchanged dump takes them from there and skips the pass. The
cache is a convenience: a file that cannot be read or written is ignored, and the cache
is written atomically (JSON, never code: nothing in it is executed).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from hlotop.atomic_write import write_atomically
from hlotop.model import Diagnostic, ModuleDump
from hlotop.version import __version__

_SCHEMA = 1


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/hlotop``, by default ``~/.cache/hlotop``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hlotop"


def _identity(dump: ModuleDump) -> list | None:
    """(absolute path, size in bytes, mtime in ns) of each file of the module, or None
    for input that has no files to compare (standard input)."""
    out = []
    for f in dump.files:
        try:
            st = os.stat(f.path)
        except OSError:
            return None
        out.append([os.path.abspath(f.path), st.st_size, st.st_mtime_ns])
    return out or None


def _path(identity: list) -> Path:
    digest = hashlib.sha256(json.dumps([__version__, identity]).encode()).hexdigest()
    return cache_dir() / f"records-{digest[:32]}.json"


def cached_record_diagnostics(dump: ModuleDump) -> list[Diagnostic] | None:
    """The diagnostics a complete records pass found in this same dump before (files
    unchanged, same hlotop version), or None if there is no such entry."""
    identity = _identity(dump)
    if identity is None:
        return None
    try:
        entry = json.loads(_path(identity).read_text(encoding="utf-8"))
        if entry.get("schema") != _SCHEMA or entry.get("files") != identity:
            return None
        return [
            Diagnostic(d["path"], int(d["line"]), d["message"], d["severity"])
            for d in entry["diagnostics"]
        ]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def store_record_diagnostics(dump: ModuleDump, diagnostics: list[Diagnostic]) -> None:
    """Remember what a complete records pass over ``dump`` found (possibly nothing).
    Ignores a cache that cannot be written."""
    identity = _identity(dump)
    if identity is None:
        return
    entry = {
        "schema": _SCHEMA,
        "hlotop": __version__,
        "files": identity,
        "diagnostics": [
            {"path": d.path, "line": d.line, "message": d.message, "severity": d.severity}
            for d in diagnostics
        ],
    }
    try:
        write_atomically(_path(identity), json.dumps(entry), mode=0o600)
    except OSError:
        pass
