"""A dump's bytes as they come in, from a file or standard input, with bounds: the
first block is looked at before the rest is read, so a binary input is refused at
once; gzip input (``.gz``, or any that starts with gzip's magic bytes) is
decompressed as it is read; and text that cannot be a dump stops being read:

* no line that starts a dump or an out-of-memory message (:data:`DUMP_STARTS`,
  :func:`~hlotop.parse.oom.looks_like_oom`) in its first :data:`HEAD_LIMIT` bytes
  (``yes | hlotop -`` grew to 3.5 GB in 20 s);
* a line longer than :data:`LINE_LIMIT` bytes (``hlotop - < /dev/zero`` held 4.6 GB
  before it was refused as binary at its end; a text without line ends is read no
  further than this either).

A file's size is known, so a plain file is read whole once its first block passed;
a stream (stdin) or a decompressed file is read a block at a time under both bounds.
"""

from __future__ import annotations

import io
import zlib
from pathlib import Path
from typing import BinaryIO

from hlotop.loading.decode import looks_binary
from hlotop.loading.errors import LoadError
from hlotop.parse.allocations import TOTAL_PREFIX
from hlotop.parse.live_range import HEADER_PREFIX as LIVE_RANGE_PREFIX
from hlotop.parse.values import HEADER as USED_VALUES_HEADER
from hlotop.units import human_bytes

# How the files of a dump start, or a line of one (FORMATS.md): the buffer assignment,
# the records of a split module, its live ranges, its memory-usage report, and the
# wrapper --xla_dump_to=- writes around each dump file on stdout.
DUMP_STARTS = tuple(
    start.encode()
    for start in (
        "BufferAssignment:",
        TOTAL_PREFIX,
        USED_VALUES_HEADER,
        LIVE_RANGE_PREFIX,
        "Memory Space: ",
        "*** Begin ",
    )
)
LIVE_RANGE_START = LIVE_RANGE_PREFIX.encode()  # how the live-range block's header starts
HEAD_LIMIT = 64 << 20  # bytes read to find a dump's (or an OOM message's) first line
LINE_LIMIT = 64 << 20  # the longest line read (a 20 MB shape or op_name is one line)
SNIFF_BYTES = 8192  # the block looked at first
_BLOCK = 1 << 20
_GZIP_MAGIC = b"\x1f\x8b"


def read_file(path: Path) -> tuple[bytes, bool]:
    """The bytes of the dump file ``path`` and whether they were decompressed (gzip).
    Raises :class:`LoadError` with a one-line reason: the file cannot be read, is
    binary (said as soon as its first block is read), or is compressed and damaged,
    or, decompressed, is no dump (:func:`read_stream`'s bounds)."""
    try:
        with open(path, "rb") as f:
            first = f.read(SNIFF_BYTES)
            if first.startswith(_GZIP_MAGIC):
                return read_stream(f, str(path), first=first), True
            if looks_binary(first):
                raise LoadError(str(path), "a binary file, not a text dump")
            f.seek(0)  # read again whole: no copy of a 100 MB text to join two parts
            data = f.read()
    except FileNotFoundError:
        raise LoadError(str(path), "no such file") from None
    except PermissionError:
        raise LoadError(str(path), "permission denied") from None
    except IsADirectoryError:
        raise LoadError(str(path), "is a directory") from None
    except OSError as err:
        raise LoadError(str(path), err.strerror or str(err)) from None
    return data, False


def read_stream(
    stream: BinaryIO,
    label: str,
    *,
    first: bytes = b"",
    head_limit: int = HEAD_LIMIT,
    line_limit: int = LINE_LIMIT,
) -> bytes:
    """Everything ``stream`` gives (``first``: what was read of it already), read a
    block at a time, decompressed if it is gzip, and refused (:class:`LoadError`,
    ``label`` naming it) as soon as it is binary, has no line of a dump or an
    out-of-memory text in its first ``head_limit`` bytes, or a line longer than
    ``line_limit`` bytes, or when it cannot be read. Raises :class:`LoadError`."""
    try:
        first += _read_up_to(stream, SNIFF_BYTES - len(first))
    except OSError as err:
        raise LoadError(label, err.strerror or str(err)) from None
    compressed = first.startswith(_GZIP_MAGIC)
    if compressed:
        import gzip  # here: most dumps are not compressed

        stream = gzip.GzipFile(fileobj=_Prefixed(first, stream), mode="rb")  # type: ignore[assignment]
        try:
            first = _read_up_to(stream, SNIFF_BYTES)
        except (OSError, EOFError, zlib.error) as err:
            raise LoadError(label, f"compressed (gzip) but damaged: {err}") from None
    what = "decompressed, it is" if compressed else "it is"
    if looks_binary(first):
        raise LoadError(label, f"{what} a binary file, not a text dump")
    blocks = [first]
    size = len(first)
    found = first.startswith(DUMP_STARTS) or _has_dump_line(first)
    tail = first[-64:]  # a dump line cut in two by a block's end
    run = _line_run(first, 0)
    while True:
        try:
            block = stream.read(_BLOCK)
        except (EOFError, zlib.error) as err:  # gzip's; a pipe's OSError goes up
            raise LoadError(label, f"compressed (gzip) but damaged: {err}") from None
        except OSError as err:
            damaged = "compressed (gzip) but damaged: " if compressed else ""
            raise LoadError(label, damaged + (err.strerror or str(err))) from None
        if not block:
            break
        run = _line_run(block, run)
        if run > line_limit:
            raise LoadError(
                label,
                f"{what} no dump: a line of more than {human_bytes(line_limit)} "
                f"(read stopped at {human_bytes(size + len(block))})",
            )
        if not found:
            found = _has_dump_line(tail + block)
            tail = block[-64:]
        blocks.append(block)
        size += len(block)
        if not found and size >= head_limit:
            found = _looks_like_oom(b"".join(blocks))
            if not found:
                raise LoadError(
                    label,
                    f"{what} no dump: no 'BufferAssignment:', 'Used values:' or "
                    f"'HloLiveRange' line, nor an out-of-memory message, in its first "
                    f"{human_bytes(size)} (read stopped there)",
                )
    return blocks[0] if len(blocks) == 1 else b"".join(blocks)


def _read_up_to(stream: BinaryIO, n: int) -> bytes:
    """Up to ``n`` bytes of ``stream``: fewer only at its end (a pipe gives what it
    has, a read at a time)."""
    parts: list[bytes] = []
    while n > 0:
        part = stream.read(n)
        if not part:
            break
        parts.append(part)
        n -= len(part)
    return b"".join(parts)


def _line_run(block: bytes, run: int) -> int:
    """The length of the line still open after ``block``, when ``run`` bytes of it
    came before. A line wholly inside one block is shorter than the block, so shorter
    than the limit."""
    last = block.rfind(b"\n")
    return run + len(block) if last < 0 else len(block) - last - 1


def _has_dump_line(data: bytes) -> bool:
    """Whether a line of ``data`` after its first starts as a dump's lines do."""
    return any(b"\n" + start in data for start in DUMP_STARTS)


def _looks_like_oom(data: bytes) -> bool:
    from hlotop.parse.oom import looks_like_oom  # only for text that is no dump

    return looks_like_oom(data.decode("utf-8", errors="replace"))


class _Prefixed(io.RawIOBase):
    """``prefix``, then the rest of ``stream``: a stream whose first bytes were read
    to sniff it, whole again for a reader that starts at its beginning."""

    def __init__(self, prefix: bytes, stream: BinaryIO):
        super().__init__()
        self._prefix = prefix
        self._stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # a writable buffer, as RawIOBase.readinto takes
        view = memoryview(buffer).cast("B")
        if self._prefix:
            n = min(len(view), len(self._prefix))
            view[:n] = self._prefix[:n]
            self._prefix = self._prefix[n:]
            return n
        data = self._stream.read(len(view))
        view[: len(data)] = data
        return len(data)
