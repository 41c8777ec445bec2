"""A long run of records formatted by worker processes and handed back in order, on the
standard library's process pool (:class:`hlotop.loading.workers.OrderedMap`).

The records are cut into chunks of :data:`CHUNK`; each worker (a forked copy of this
process: it shares the loaded dump copy-on-write, nothing of it is pickled) formats a
chunk to text, writes it to a file of its own in a temporary folder and returns the
diagnostics its records gave, and the caller takes the chunks in dump order (each file
read, then deleted), so what it writes is exactly what one process would write. Written
to a stream with a file descriptor (:meth:`OrderedChunks.write_to`: ``--json`` to a
file or a pipe), a chunk goes from its file to the output by the kernel
(``os.sendfile``), never through this process: at 108 MB, 220 MB of chunks took this
process 0.36 s to read and write again, and 0.18 s so. The
workers start while the dump is still being read and run ahead of the caller: their
text waits in those files, not in the caller's memory (65 MB of it at 108 MB). If the
pool cannot start, the chunks are formatted here; a worker killed on the way has its
chunks formatted again by others (one it kills alone too, here); a worker that fails
(a full disk, say) has the chunks not yet handed back formatted here. The folder is
removed when the chunks are closed, or if this process is ended by SIGTERM or SIGHUP
(:func:`hlotop.loading.workers.stop_with_signals`).

How many workers there may be is the caller's to say (:func:`hlotop.process.report_workers`
decides it for the ``hlotop`` command: forking is only safe in a process that runs no
threads); with 0 everything is done here.
"""

from __future__ import annotations

import codecs
import errno
import os
from collections.abc import Callable, Iterator
from functools import partial
from typing import IO, Any, NamedTuple, Protocol

from hlotop.loading.workers import OrderedMap, remove_folder, temporary_folder

CHUNK = 1024  # records a worker formats at a time
NICENESS = 10  # added to a worker's nice value (os.nice): it yields to the caller


class Records(Protocol):
    """The lazy records collection (:class:`hlotop.model.UsedValues`), as used here."""

    def __len__(self) -> int: ...

    def checked(self, diagnostics: list, first: int = 0, stop: int | None = None) -> Iterator: ...


Format = Callable[[Any, Any], str]  # (record, context) -> its JSON text
Chunk = tuple[str, list]  # the chunk's records as comma-separated text, their diagnostics


def format_chunk(records: Records, fmt: Format, ctx: Any, number: int, chunk: int = CHUNK) -> Chunk:
    """Chunk ``number`` of ``records`` (records ``number * chunk`` up to the next chunk's),
    each parsed once and formatted by ``fmt(record, ctx)``, comma-separated, with the
    diagnostics of those records in dump order (and, with chunk 0, of the text before
    the first record)."""
    found: list = []
    text = ",".join(
        [fmt(r, ctx) for r in records.checked(found, number * chunk, (number + 1) * chunk)]
    )
    return text, found


# The records are formatted ahead of the caller, which reads the rest of the dump
# meanwhile (with a worker of its own for the live ranges): on two cores, four
# processes at one priority slowed that reading by half. At a lower priority (NICENESS)
# the workers take the cores those leave idle, and the caller waits less in all
# (--json at 46 MB: 2.81 -> 2.44 s, at 108 MB: 5.80 -> 4.79 s, medians in turn).


def _work(records: Records, fmt: Format, ctx: Any, chunk: int, folder: str, number: int) -> _File:
    """In a worker: format chunk ``number`` into its file in ``folder``; return the
    file and the chunk's diagnostics."""
    text, found = format_chunk(records, fmt, ctx, number, chunk)
    path = os.path.join(folder, f"{number}.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return _File(path, os.path.getsize(path), found)


def _text(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _take(path: str) -> str:
    text = _text(path)
    os.unlink(path)
    return text


class _File(NamedTuple):
    """A chunk a worker wrote: its file, its size in bytes and its diagnostics."""

    path: str
    size: int
    found: list


def sendable_descriptor(out: IO[str]) -> int | None:
    """The file descriptor under ``out`` (a text stream such as ``sys.stdout``) that
    chunk files may be copied to byte for byte, or None: ``out`` has none (a
    ``StringIO``), or encodes text other than as UTF-8 or ASCII, of which the chunks'
    ASCII JSON is the same bytes."""
    try:
        fd = out.fileno()
        encoding = codecs.lookup(getattr(out, "encoding", None) or "").name
    except (AttributeError, OSError, LookupError, ValueError):
        return None
    return fd if encoding in ("utf-8", "ascii") else None


def _send(piece: _File, fd: int) -> None:
    """Copy the chunk file to ``fd`` by ``os.sendfile`` (where the system cannot send to
    that kind of file, the rest is read and written). Raises ``OSError`` as a write to
    ``fd`` would."""
    with open(piece.path, "rb") as f:
        sent = 0
        try:
            while sent < piece.size:
                n = os.sendfile(fd, f.fileno(), sent, piece.size - sent)
                if n == 0:
                    break
                sent += n
        except OSError as err:
            if err.errno not in _CANNOT_SEND:
                raise
        if sent < piece.size:
            f.seek(sent)
            while block := f.read(1 << 20):
                view = memoryview(block)
                while view:
                    view = view[os.write(fd, view) :]


# sendfile's refusals of a kind of file (not a failed write): then plain writes.
_CANNOT_SEND = {errno.EINVAL, errno.ENOSYS, errno.ENOTSOCK, errno.EOPNOTSUPP}


class OrderedChunks:
    """Every chunk of ``records``, formatted by up to ``workers`` processes (started
    at once, so they work while the caller writes something else) and iterated in
    dump order. Use it as a context manager, or :meth:`close` it: the workers are
    stopped there."""

    def __init__(
        self, records: Records, fmt: Format, ctx: Any, workers: int, chunk: int | None = None
    ):
        chunk = CHUNK if chunk is None else chunk
        self.records, self.fmt, self.ctx, self.chunk = records, fmt, ctx, chunk
        self.count = -(-len(records) // chunk)
        self._map: OrderedMap[_File | Chunk] | None = None
        self._folder: str | None = None  # where the workers leave their chunks
        self.parallel = False  # whether worker processes were started
        workers = min(workers, self.count)
        if workers < 1:
            return
        try:
            self._folder = temporary_folder("hlotop-json-")
        except OSError:  # nowhere to put them: done here
            return
        self._map = OrderedMap(
            partial(_work, records, fmt, ctx, chunk, self._folder),
            self.count,
            workers,
            nice=NICENESS,
            here=self._here,
        )
        self.parallel = self._map.parallel
        if not self.parallel:
            self.close()

    @property
    def folder(self) -> str | None:
        """The temporary folder the workers leave their chunks in, one file a chunk
        (``N.json``, deleted as the chunk is taken), until :meth:`close` removes it;
        None when no worker was started or once closed."""
        return self._folder

    def _here(self, number: int) -> Chunk:
        return format_chunk(self.records, self.fmt, self.ctx, number, self.chunk)

    def __iter__(self) -> Iterator[Chunk]:
        for piece in self._pieces():
            if isinstance(piece, _File):
                yield _take(piece.path), piece.found
            else:
                yield piece

    def write_to(self, out: IO[str]) -> list:
        """Write every chunk to ``out``, comma-separated, in dump order (what
        iterating and writing each text would write); return their diagnostics, in
        dump order. A chunk a worker left in its file goes from the file to ``out``'s
        file descriptor by the kernel (``os.sendfile``) when ``out`` has one: its text
        (ASCII, as every formatter writes JSON) is never read into this process, which
        writes the rest of the document meanwhile. Raises what writing to ``out``
        raises."""
        fd = sendable_descriptor(out)
        found_all: list = []
        wrote = False
        for piece in self._pieces():
            if not isinstance(piece, _File):
                text, found = piece
                found_all += found
                if text:
                    out.write("," + text if wrote else text)
                    wrote = True
                continue
            found_all += piece.found
            if piece.size:
                if wrote:
                    out.write(",")
                if fd is None:
                    out.write(_text(piece.path))
                else:
                    out.flush()
                    _send(piece, fd)
                wrote = True
            os.unlink(piece.path)
        return found_all

    def _pieces(self) -> Iterator[_File | Chunk]:
        """Each chunk in dump order: the file a worker wrote it to (taken: the caller
        deletes it), or its text formatted here with its diagnostics."""
        done = 0
        chunks = self._map
        if chunks is not None:
            try:
                for piece in chunks:
                    yield piece
                    done += 1
            except Exception:  # noqa: BLE001 - a worker failed: the rest here
                pass
            finally:
                self.close(kill=True)
        for number in range(done, self.count):
            yield self._here(number)

    def close(self, kill: bool = False) -> None:
        """Stop the workers (each finishes the chunk it is on; with ``kill`` at once)
        and remove their folder. Raises nothing."""
        chunks, self._map = self._map, None
        if chunks is not None:
            chunks.close(kill=kill)
        folder, self._folder = self._folder, None
        if folder is not None:
            remove_folder(folder)

    def __enter__(self) -> OrderedChunks:
        return self

    def __exit__(self, kind: object, *exc: object) -> None:
        self.close(kill=kind is not None)
