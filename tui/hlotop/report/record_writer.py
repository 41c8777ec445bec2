"""``--json``'s value records, written by this process and, on a big dump, a forked
second one (:mod:`hlotop.report.forked`): the records are cut into chunks that this process
takes from the front and the child from the back until they meet."""

from __future__ import annotations

from typing import IO

from hlotop.loading.loader import gc_paused
from hlotop.model import Diagnostic
from hlotop.parse.records import RecordTable
from hlotop.report import forked
from hlotop.report.json_text import used_value_json

BATCH = 1024  # records written at once
PARALLEL_RECORDS = 20_000  # from this many records on, two processes write them
CHUNK = 512  # records the two processes take at a time


class RecordWriter:
    """``--json``'s value records, written by this process and a forked second one
    (:mod:`hlotop.report.forked`): the records are cut into chunks that this process takes
    from the front and the child from the back until they meet. The child may start
    as soon as a big dump's records are indexed, while this process reads the rest of
    the dump: pass :meth:`start` to :func:`hlotop.loading.loader.load` as ``on_records`` and
    this object to :func:`write_json`; :meth:`close` it in any case."""

    def __init__(self):
        self.table: RecordTable | None = None
        self.child: forked.Child | None = None
        self.chunks: forked.Chunks | None = None

    def start(self, table: RecordTable, frames) -> None:
        """Fork the child for ``table`` (the first table only, and only from
        :data:`PARALLEL_RECORDS` records on); ``frames``: the module's
        :class:`~hlotop.model.StackFrameTable`, or None. Raises nothing."""
        if self.table is not None or len(table) < PARALLEL_RECORDS:
            return
        self.table = table
        chunks = forked.Chunks(-(-len(table) // CHUNK))
        self.child = forked.start(lambda out: _write_from_the_back(table, frames, chunks, out))
        if self.child is None:
            chunks.close()
        else:
            self.chunks = chunks

    def write(self, table: RecordTable, frames, out: IO[str], found: list[Diagnostic]) -> None:
        """Write every record of ``table`` (comma-separated), with the child if it
        runs; their diagnostics, in dump order, are added to ``found``."""
        if self.child is None or self.table is not table:
            write_batches((used_value_json(r, frames) for r in table.checked(found)), out)
            return
        wrote = False
        for chunk in self.chunks.front():
            text = _chunk_json(table, frames, chunk, found)
            if text:
                out.write("," + text if wrote else text)
                wrote = True
        theirs = self.child.wait()
        if theirs is None:  # the child failed: the rest is written here instead
            rest = self.chunks.taken_from_front() * CHUNK
            write_batches(
                (used_value_json(r, frames) for r in table.checked(found, rest)),
                out,
                "," if wrote else "",
            )
            return
        for _, offset, length, diagnostics in sorted(theirs):  # dump order
            if length:
                text = self.child.read(offset, length).decode("ascii")
                out.write("," + text if wrote else text)
                wrote = True
            found.extend(Diagnostic(*d) for d in diagnostics)

    def close(self) -> None:
        """Stop the child if it still runs. Raises nothing."""
        if self.child is not None:
            self.child.close()
        if self.chunks is not None:
            self.chunks.close()


def _chunk_json(table: RecordTable, frames, chunk: int, found: list[Diagnostic]) -> str:
    records = table.checked(found, chunk * CHUNK, (chunk + 1) * CHUNK)
    return ",".join([used_value_json(r, frames) for r in records])


def _write_from_the_back(table: RecordTable, frames, chunks, out: IO[bytes]) -> list:
    """The child's work: chunks from the back, each written as ASCII JSON; returns
    ``[chunk, offset, length, diagnostics]`` for each."""
    done = []
    offset = 0
    with gc_paused():
        for chunk in chunks.back():
            mine: list[Diagnostic] = []
            data = _chunk_json(table, frames, chunk, mine).encode("ascii")
            out.write(data)
            done.append(
                [chunk, offset, len(data), [[d.path, d.line, d.message, d.severity] for d in mine]]
            )
            offset += len(data)
    return done


def write_batches(texts, out: IO[str], before: str = "") -> bool:
    """Write ``texts`` comma-separated, a batch at a time, after ``before`` if any is
    written. Returns whether any was."""
    batch: list[str] = []
    separator = before  # before the next batch
    wrote = False
    for text in texts:
        batch.append(text)
        if len(batch) == BATCH:
            out.write(separator + ",".join(batch))
            separator, wrote = ",", True
            batch.clear()
    if batch:
        out.write(separator + ",".join(batch))
        wrote = True
    return wrote
