"""``hlotop --json``: the parsed model and its analysis as one JSON document, written as
:mod:`hlotop.report.json_table` says (schema: ``hlotop.schema.json`` beside this file,
and README.md).

The document is streamed a key at a time and its records a batch at a time (the
whole document of a 100 MB dump held at once took 800 MB); on a big dump the records
are formatted by worker processes when the caller allows them
(:mod:`hlotop.report.parallel`). Dump text is passed through unchanged: JSON escapes
what needs it.
"""

from __future__ import annotations

from itertools import islice
from json.encoder import encode_basestring_ascii
from typing import IO, Any

from hlotop.analysis.capacity import Fit
from hlotop.analysis.grouping import Grouping
from hlotop.model import Advice, ModuleDump
from hlotop.model.memory_space import space_names
from hlotop.report.json_table import DOCUMENT, KINDS, Context, List, Null, Obj, Type
from hlotop.report.json_text import FORMATTERS, KEY_FORMATTERS, STREAMED_ITEMS
from hlotop.report.parallel import OrderedChunks
from hlotop.report.peak_why import PeakWhy

BATCH = 1024  # records (or allocations) written at once by this process
RECORDS = "used_values"  # the document's key of the records
DIAGNOSTICS = "diagnostics"  # its key of the diagnostics, the records' among them
# From this many unread records on, workers format them: measured quicker from 2 894
# records (a 2 MB dump, 0.36 -> 0.30 s) up, now that they yield to this process.
PARALLEL_RECORDS = 2_000


def context(
    module: ModuleDump,
    groups: Grouping | None = None,
    fit: Fit | None = None,
    advice: list[Advice] | None = None,
) -> Context:
    """What the formatters need besides the model's objects; with ``advice``
    (``--advise``), why each value live at the peak is
    (:class:`~hlotop.report.peak_why.PeakWhy`). Not without it: about 70 us a value,
    1.4 s and 115 MB more for the 20 258 values live at the peak of the 46 MB GPT
    train step (``--json`` 1.55 -> 2.93 s)."""
    return Context(
        frames=module.sections.stack_frames,
        names=space_names(module),
        groups=groups,
        fit=fit,
        advice=advice,
        why=PeakWhy(module) if advice is not None else None,
    )


class RecordsAhead:
    """Worker processes that start on a big dump's records as soon as they are indexed,
    while the rest of the dump is read (most of the loading time): pass :meth:`start`
    to :func:`hlotop.loading.loader.load` as ``on_records``, then this object to
    :func:`write_json`; :meth:`close` it in any case. ``workers``: as for
    :func:`write_json`."""

    def __init__(self, workers: int):
        self.workers = workers
        self.records: Any = None
        self.chunks: OrderedChunks | None = None

    def start(self, records: Any, frames: Any) -> None:
        """Start the workers on ``records`` (the first records only, and only if they
        are worth it); ``frames``: the module's stack frames, or None. Raises nothing."""
        if self.records is None:
            self.records = records
            # The records' formatter needs only the stack frames of the context.
            self.chunks = _record_chunks(records, Context(frames=frames), self.workers)

    def take(self, module: ModuleDump) -> OrderedChunks | None:
        """The chunks, if they are ``module``'s unread records."""
        if self.chunks is None or self.records is not module.used_values:
            return None
        return None if module.records_read else self.chunks

    def close(self) -> None:
        """Stop the workers if they still run. Raises nothing."""
        if self.chunks is not None:
            self.chunks.close()


def write_json(
    module: ModuleDump,
    out: IO[str],
    workers: int = 0,
    ahead: RecordsAhead | None = None,
    groups: Grouping | None = None,
    fit: Fit | None = None,
    advice: list[Advice] | None = None,
) -> None:
    """Write the JSON document of ``module`` (a :class:`~hlotop.model.ModuleDump`) to
    ``out``, newline-terminated. Its records are read once, as they are written, and
    their diagnostics are in the document's ``diagnostics``. ``workers``: how many
    worker processes may format the records of a big dump (0: none; forking is the
    caller's decision, see :func:`hlotop.process.report_workers`), or ``ahead``, those
    started while the dump was read; the document is the same either way. ``groups``:
    the live set grouped (``--group-by``), written as ``groups`` (else null); ``fit``:
    the module against ``--capacity``, written as ``capacity`` (else null); ``advice``:
    the ranked advice (``--advise``), written as ``advice`` (else null)."""
    ctx = context(module, groups, fit, advice)
    values = KEY_FORMATTERS[DOCUMENT]
    chunks = ahead.take(module) if ahead is not None else None
    if chunks is None and not module.records_read:
        chunks = _record_chunks(module.used_values, ctx, workers)
    try:
        separator = "{"
        made: dict[str, str] = {}  # keys after the records, made while workers format them
        for key in KINDS[DOCUMENT].keys:
            # Each key is written as soon as it is made: the text of a big dump's
            # allocations or live ranges is not held until the end.
            if not key.streamed:
                text = made.pop(key.name, None)
                if text is None:
                    text = values[key.name](module, ctx)
                out.write(f'{separator}"{key.name}":{text}')
            elif key.name == RECORDS and chunks is not None:  # from the workers
                out.write(f'{separator}"{key.name}":[')
                made = _after_records(module, ctx)
                _write_chunks(module, chunks, out)
                out.write("]")
            else:
                out.write(f'{separator}"{key.name}":')
                value, t = STREAMED_ITEMS[DOCUMENT][key.name]
                _write_streamed(t, value(module, ctx), ctx, out)
            separator = ","
        out.write("}\n")
    finally:
        if chunks is not None:
            chunks.close()


def _record_chunks(records: Any, ctx: Context, workers: int) -> OrderedChunks | None:
    """The chunks of unread ``records`` (the lazy collection: what the table's
    ``checked_records()`` gives one by one), formatted by up to ``workers`` processes
    that start now, if there are enough records to be worth it; else None."""
    if workers < 1 or not hasattr(records, "checked"):
        return None
    if len(records) < PARALLEL_RECORDS:
        return None
    chunks = OrderedChunks(records, FORMATTERS["used_value"], ctx, workers)
    return chunks if chunks.parallel else None


def _after_records(module: ModuleDump, ctx: Context) -> dict[str, str]:
    """The text of the keys after the records but the diagnostics (which the records
    add to), made before the records are taken from the workers: the workers run at a
    lower priority (:mod:`hlotop.report.parallel`) and may still be on the last chunks
    when this process gets there, which would otherwise wait."""
    keys = KINDS[DOCUMENT].keys
    after = keys[[key.name for key in keys].index(RECORDS) + 1 :]
    values = KEY_FORMATTERS[DOCUMENT]
    return {
        key.name: values[key.name](module, ctx)
        for key in after
        if not key.streamed and key.name != DIAGNOSTICS
    }


def _write_chunks(module: ModuleDump, chunks: OrderedChunks, out: IO[str]) -> None:
    module.take_record_diagnostics(chunks.write_to(out))


def _write_streamed(t: Type, value: Any, ctx: Context, out: IO[str]) -> None:
    """The value of a streamed key of type ``t``: a list written a batch at a time, or
    an object (or null) of a kind written key by key (its own streamed keys so too:
    the 10^6 live ranges of a big dump are never held as text, nor as objects)."""
    if isinstance(t, Null):
        if value is None:
            out.write("null")
            return
        t = t.of
    if isinstance(t, Obj):
        separator = "{"
        values = KEY_FORMATTERS[t.kind]
        for key in KINDS[t.kind].keys:
            out.write(f'{separator}"{key.name}":')
            if key.streamed:
                get, of = STREAMED_ITEMS[t.kind][key.name]
                _write_streamed(of, get(value, ctx), ctx, out)
            else:
                out.write(values[key.name](value, ctx))
            separator = ","
        out.write("}")
        return
    assert isinstance(t, List)
    out.write("[")
    item = t.of
    if isinstance(item, Obj):
        _write_batches(value, FORMATTERS[item.kind], ctx, out)
    else:  # strings, a batch at a time
        items = iter(value)
        separator = ""
        while batch := list(islice(items, BATCH)):
            out.write(separator + ",".join(map(encode_basestring_ascii, batch)))
            separator = ","
    out.write("]")


def _write_batches(items, fmt, ctx: Context, out: IO[str]) -> None:
    """``items`` formatted by ``fmt`` and written here, :data:`BATCH` at a time,
    comma-separated."""
    batch: list[str] = []
    separator = ""
    for item in items:
        batch.append(fmt(item, ctx))
        if len(batch) == BATCH:
            out.write(separator + ",".join(batch))
            separator = ","
            batch.clear()
    if batch:
        out.write(separator + ",".join(batch))
