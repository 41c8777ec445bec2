"""A dump file's bytes read back from disk a range at a time: what the ``Used values``
records are read from once they are indexed (:meth:`hlotop.model.UsedValues.release_text`),
so a big dump's records, most of its text, are not held in memory while it is open.

The file is only ever read. It is opened for each read of a :data:`CHUNK`-sized,
aligned piece (the last few pieces are kept: records are mostly read near each other)
and checked to be the file that was indexed (same inode, size and modification time);
if it is not, or it cannot be read, reads raise ``OSError`` with a one-line reason that
leads with what happened ("changed on disk since it was opened ...") and ends with the
file, for a pane too narrow for the whole line.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

CHUNK = 1 << 20  # bytes read at once, at multiples of it
_KEPT = 4  # pieces kept


class FileBytes:
    """The bytes of the file at ``path`` as they are now (its identity is taken here:
    make this before reading the file the index is made from). Any thread may read.
    Implements :class:`hlotop.model.ByteSource`."""

    def __init__(self, path: Path | str):
        self.path = str(path)
        st = os.stat(self.path)
        self._identity = _identity(st)
        self.size = st.st_size
        self._lock = threading.Lock()
        self._pieces: dict[int, bytes] = {}  # piece number -> its bytes, oldest first

    def __getstate__(self) -> dict:
        """What goes to another process: the file and its identity, not the pieces."""
        return {"path": self.path, "_identity": self._identity, "size": self.size}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
        self._pieces = {}

    def read(self, start: int, end: int) -> bytes:
        """The bytes ``[start, end)`` (clipped to the file). Raises ``OSError``."""
        start, end = max(start, 0), min(end, self.size)
        if end <= start:
            return b""
        first, last = start // CHUNK, (end - 1) // CHUNK
        if last - first > 1:  # a long range (a text search's piece): not kept
            return self._pread(start, end - start)
        with self._lock:
            pieces = [self._piece(k) for k in range(first, last + 1)]
        data = pieces[0] if len(pieces) == 1 else b"".join(pieces)
        base = first * CHUNK
        return data[start - base : end - base]

    def count(self, sub: bytes, start: int, end: int) -> int:
        """How often ``sub`` occurs in the bytes ``[start, end)``. Raises ``OSError``."""
        start, end = max(start, 0), min(end, self.size)
        if end <= start:
            return 0
        k = start // CHUNK
        if (end - 1) // CHUNK == k:  # within one piece: counted where it lies
            with self._lock:
                piece = self._piece(k)
            return piece.count(sub, start - k * CHUNK, end - k * CHUNK)
        return self.read(start, end).count(sub)

    def _piece(self, k: int) -> bytes:
        """Piece ``k``, read now unless kept (the caller holds the lock)."""
        piece = self._pieces.pop(k, None)
        if piece is None:
            piece = self._pread(k * CHUNK, min(CHUNK, self.size - k * CHUNK))
            while len(self._pieces) >= _KEPT:
                self._pieces.pop(next(iter(self._pieces)))
        self._pieces[k] = piece  # now the newest
        return piece

    def _pread(self, offset: int, size: int) -> bytes:
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            raise OSError(
                "deleted or moved since it was opened: open it again to read its value "
                f"records ({self.path})"
            ) from None
        except OSError as err:
            raise OSError(f"{self.path}: {err.strerror or err}") from None
        try:
            if _identity(os.fstat(fd)) != self._identity:
                raise OSError(
                    "changed on disk since it was opened: open it again to read its "
                    f"value records ({self.path})"
                )
            data = os.pread(fd, size, offset)
        finally:
            os.close(fd)
        if len(data) != size:
            raise OSError(f"shorter than when it was opened ({self.path})")
        return data


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
