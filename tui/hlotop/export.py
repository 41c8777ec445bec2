"""``hlotop --json``: the parsed model and its analysis as JSON (schema in README.md).

Bytes are ints, steps are ints, ShapeIndexes are lists of ints (``null`` where XLA
prints no index). Dump text is passed through unchanged: JSON escapes what needs it.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii
from typing import IO, Any

from hlotop import __version__, forked
from hlotop.loader import LoadError, ModuleDump, gc_paused, read_stack_frames, resolve
from hlotop.memory_space import space_name, space_names
from hlotop.model import Diagnostic, StackTraceNode
from hlotop.parse.records import RecordTable


def _index(index) -> list[int] | None:
    return None if index is None else list(index)


def _tree(node: StackTraceNode) -> dict[str, Any]:
    return {"label": node.label, "percent": node.percent, "total": node.total,
            "current": node.current, "remaining": node.remaining,
            "children": [_tree(c) for c in node.children]}


def to_dict(module: ModuleDump) -> dict[str, Any]:
    """The JSON document for ``module`` as plain dicts and lists. Raises nothing."""
    head = _head(module)
    frames = module.sections.stack_frames
    used_values = [_used_value(r, frames) for r in module.checked_records()]
    return {**head, "used_values": used_values, **_tail(module)}


def _head(module: ModuleDump) -> dict[str, Any]:
    """The document's keys before ``used_values``."""
    names = space_names(module.memory_usage_report)
    allocations = [{
        "index": x.index,
        "size": x.size,
        "color": x.color,
        "memory_space": space_name(x.color, names),
        "kinds": list(x.kinds),
        "parameter": None if x.parameter is None else {
            "number": x.parameter, "shape": x.parameter_shape,
            "shape_index": _index(x.parameter_shape_index)},
        "output_shape": x.output_shape,
        "values": [{"id": s.value.id, "name": s.value.name,
                    "shape_index": _index(s.value.shape_index), "phi": s.value.is_phi,
                    "color": s.value.color, "offset": s.offset, "size": s.size,
                    "shape": s.shape} for s in x.values],
    } for x in module.allocations]
    return {**_about(module), "allocations": allocations,
            "total_bytes_used": module.total_bytes_used}


def _about(module: ModuleDump) -> dict[str, Any]:
    """The document's first keys: which hlotop read which files."""
    return {
        "hlotop_version": __version__,
        "module": module.name,
        "layout": module.layout,
        "files": [{"path": f.path, "kind": f.kind} for f in module.files],
    }


def _head_json(module: ModuleDump, dumps) -> str:
    """``_head(module)`` as compact JSON text, without its closing brace; the
    allocations and their values (one per value line: 10^5 in a big dump) written
    directly, as the records are."""
    names = space_names(module.memory_usage_report)
    allocations = ",".join(_allocation_json(x, names) for x in module.allocations)
    return (dumps(_about(module))[:-1] + f',"allocations":[{allocations}],'
            f'"total_bytes_used":{_number(module.total_bytes_used)}')


def _allocation_json(x, names) -> str:
    parameter = "null" if x.parameter is None else (
        f'{{"number":{x.parameter},"shape":{_optional(x.parameter_shape)},'
        f'"shape_index":{_optional_numbers(x.parameter_shape_index)}}}')
    values = ",".join(
        f'{{"id":{s.value.id},"name":{_string(s.value.name)},'
        f'"shape_index":{_optional_numbers(s.value.shape_index)},'
        f'"phi":{"true" if s.value.is_phi else "false"},"color":{_number(s.value.color)},'
        f'"offset":{s.offset},"size":{s.size},"shape":{_string(s.shape)}}}'
        for s in x.values)
    return (f'{{"index":{x.index},"size":{x.size},"color":{x.color},'
            f'"memory_space":{_string(space_name(x.color, names))},'
            f'"kinds":{_strings(x.kinds)},"parameter":{parameter},'
            f'"output_shape":{_optional(x.output_shape)},"values":[{values}]}}')


def _used_value(r, frames) -> dict[str, Any]:
    """One ``Used values`` record (a :class:`~hlotop.model.UsedValue`)."""
    instr = r.instruction
    stack = frames.stack(instr.stack_frame_id) if (
        frames is not None and instr is not None and instr.stack_frame_id is not None) else ()
    source = None
    if instr and instr.source_file:
        source = {"file": instr.source_file, "line": instr.source_line}
    elif stack:
        source = {"file": stack[0].file, "line": stack[0].line}
    return {
        "id": r.value.id, "name": r.value.name, "shape_index": _index(r.value.shape_index),
        "positions": r.position_texts(),
        "uses": r.use_texts(),
        "instruction": instr.name if instr else None,
        "opcode": instr.opcode if instr else None,
        "instruction_shape": instr.shape if instr else None,
        "op_name": instr.op_name if instr else None,
        "source": source,
        "stack": [{"file": f.file, "line": f.line, "function": f.function} for f in stack],
    }


_UNREAD = object()  # stack frames not passed: read them
_string = encode_basestring_ascii  # a JSON string, as json.dumps writes it (C)


def _strings(items) -> str:
    return "[" + ",".join(map(_string, items)) + "]"


def _used_value_json(r, frames) -> str:
    """``_used_value(r, frames)`` as compact JSON text, written directly: the encoder's
    cost per object was most of ``--json``'s time on a big dump (130 000 records)."""
    instr = r.instruction
    stack = frames.stack(instr.stack_frame_id) if (
        frames is not None and instr is not None and instr.stack_frame_id is not None) else ()
    value = r.value
    uses = r.use_texts()
    if instr is None:
        described = '"instruction":null,"opcode":null,"instruction_shape":null,"op_name":null'
        source = "null"
    else:
        described = (f'"instruction":{_optional(instr.name)},"opcode":{_optional(instr.opcode)},'
                     f'"instruction_shape":{_optional(instr.shape)},'
                     f'"op_name":{_optional(instr.op_name)}')
        source = "null"
        if instr.source_file:
            source = _source(instr.source_file, instr.source_line)
        elif stack:
            source = _source(stack[0].file, stack[0].line)
    frames_json = ",".join(f'{{"file":{_string(f.file)},"line":{_number(f.line)},'
                           f'"function":{_string(f.function)}}}' for f in stack)
    return (f'{{"id":{value.id},"name":{_string(value.name)},'
            f'"shape_index":{_optional_numbers(value.shape_index)},'
            f'"positions":{_strings(r.position_texts())},'
            f'"uses":{"null" if uses is None else _strings(uses)},'
            f'{described},"source":{source},"stack":[{frames_json}]}}')


def _optional(text: str | None) -> str:
    return "null" if text is None else _string(text)


def _number(n: int | None) -> str:
    return "null" if n is None else str(n)


def _optional_numbers(ns) -> str:
    return "null" if ns is None else "[" + ",".join(map(str, ns)) + "]"


def _source(file: str, line: int | None) -> str:
    return f'{{"file":{_string(file)},"line":{_number(line)}}}'


def _tail(module: ModuleDump) -> dict[str, Any]:
    """The document's keys after ``used_values``; its diagnostics are final once every
    record has been read."""
    a = module.analysis
    live = module.live_range
    live_range = None
    if live is not None:
        peak = live.peak
        live_range = {
            "max": live.max_time,
            "instruction_sequence": list(live.instruction_sequence),
            "buffers": [{"name": b.name, "shape_index": list(b.shape_index),
                         "start": b.start, "end": b.end} for b in live.buffers],
            "peak": None if peak is None else {
                "time": peak.time, "variant": peak.variant,
                "entries": [{"name": e.name, "shape_index": _index(e.shape_index),
                             "bytes": e.bytes, "cumulative": e.cumulative}
                            for e in peak.entries]},
        }
    stack = live.stack_trace if live is not None else None
    report = module.memory_usage_report
    return {
        "live_range": live_range,
        "stack_trace": None if stack is None else {
            "total": stack.total, "tree": [_tree(n) for n in stack.roots]},
        "memory_usage_report": None if report is None else _report(report),
        "analysis": {
            "peak_step": a.peak_step,
            "peak_bytes": a.peak_bytes,
            "peak_occupied_bytes": a.peak_occupied_bytes,
            "peak_values": [{"id": v.value.id, "name": v.value.name,
                             "shape_index": _index(v.value.shape_index),
                             "logical_bytes": v.logical_bytes,
                             "allocated_bytes": v.allocated_bytes} for v in a.peak_values],
            "live_bytes": a.live_bytes,
            "totals_by_kind": a.totals_by_kind,
            "totals_by_memory_space": {str(c): b for c, b in a.totals_by_color.items()},
        },
        "diagnostics": [{"path": d.path, "line": d.line, "message": d.message,
                         "severity": d.severity} for d in module.diagnostics],
    }


def _report(report) -> dict[str, Any]:
    def alloc(x):
        return {"index": x.index, "size": x.size, "summary": x.summary,
                "hidden_rows": x.hidden_rows,
                "rows": [{"cumulative_size": r.cumulative_size, "percent": r.percent,
                          "size": r.size, "offset": r.offset,
                          "used_by_n_values": r.used_by_n_values,
                          "shapes": [{"count": c, "shape": s} for c, s in r.shapes]}
                         for r in x.rows]}

    return {
        "era": report.era,
        "total_bytes": report.total_bytes,
        "allocations": [alloc(x) for x in report.allocations],
        "hidden_allocations": report.hidden_allocations,
        "memory_spaces": [{"name": s.name, "color": s.color, "total_bytes": s.total_bytes,
                           "allocations": [alloc(x) for x in s.allocations]}
                          for s in report.memory_spaces],
    }


class RecordWriter:
    """``--json``'s value records, written by this process and a forked second one
    (:mod:`hlotop.forked`): the records are cut into chunks that this process takes
    from the front and the child from the back until they meet. The child may start
    as soon as a big dump's records are indexed, while this process reads the rest of
    the dump: pass :meth:`start` to :func:`hlotop.loader.load` as ``on_records`` and
    this object to :func:`write_json`; :meth:`close` it in any case."""

    def __init__(self, path: str | None = None):
        self.path = path
        self.table: RecordTable | None = None
        self.child: forked.Child | None = None
        self.chunks: forked.Chunks | None = None

    def start(self, table: RecordTable, frames=_UNREAD) -> None:
        """Fork the child for ``table`` (the first table only, and only from
        :data:`PARALLEL_RECORDS` records on). ``frames``: the module's stack frames,
        read from beside :attr:`path` if not given. Raises nothing."""
        if self.table is not None or len(table) < PARALLEL_RECORDS:
            return
        if frames is _UNREAD:
            try:
                frames = read_stack_frames(resolve(self.path), [])
            except LoadError:
                return
        self.table = table
        chunks = forked.Chunks(-(-len(table) // _CHUNK))
        self.child = forked.start(lambda out: _write_from_the_back(table, frames, chunks, out))
        if self.child is None:
            chunks.close()
        else:
            self.chunks = chunks

    def write(self, table: RecordTable, frames, out: IO[str], found: list[Diagnostic]) -> None:
        """Write every record of ``table`` (comma-separated), with the child if it
        runs; their diagnostics, in dump order, are added to ``found``."""
        if self.child is None or self.table is not table:
            _write_batches((_used_value_json(r, frames) for r in table.checked(found)), out)
            return
        wrote = False
        for chunk in self.chunks.front():
            text = _chunk_json(table, frames, chunk, found)
            if text:
                out.write("," + text if wrote else text)
                wrote = True
        theirs = self.child.wait()
        if theirs is None:  # the child failed: the rest is written here instead
            rest = self.chunks.taken_from_front() * _CHUNK
            _write_batches((_used_value_json(r, frames) for r in table.checked(found, rest)),
                           out, "," if wrote else "")
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
    records = table.checked(found, chunk * _CHUNK, (chunk + 1) * _CHUNK)
    return ",".join([_used_value_json(r, frames) for r in records])


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
            done.append([chunk, offset, len(data),
                         [[d.path, d.line, d.message, d.severity] for d in mine]])
            offset += len(data)
    return done


def write_json(module: ModuleDump, out: IO[str], records: RecordWriter | None = None
               ) -> None:
    """Write the JSON document for ``module`` to ``out``, newline-terminated: the same
    document as :func:`to_dict`, streamed a batch of records at a time (the whole
    document of a 100 MB dump held at once took 800 MB). A big dump's records are
    written by two processes: with ``records``' child if it runs for these records,
    else with one forked now."""
    dumps = json.JSONEncoder(separators=(",", ":")).encode  # the C encoder, no indent
    frames = module.sections.stack_frames
    table = module.used_values
    mine = RecordWriter() if records is None else records
    try:
        if not module.records_read and isinstance(table, RecordTable):
            mine.start(table, frames)
        with gc_paused():  # millions of objects and no cycles
            out.write(_head_json(module, dumps) + ',"used_values":[')
            if module.records_read or not isinstance(table, RecordTable):
                _write_batches((_used_value_json(r, frames) for r in table), out)
            else:
                found: list[Diagnostic] = []
                mine.write(table, frames, out, found)
                module.take_record_diagnostics(found)
            out.write("]," + dumps(_tail(module))[1:] + "\n")
    finally:
        if records is None:
            mine.close()


def _write_batches(texts, out: IO[str], before: str = "") -> bool:
    """Write ``texts`` comma-separated, a batch at a time, after ``before`` if any is
    written. Returns whether any was."""
    batch: list[str] = []
    separator = before  # before the next batch
    wrote = False
    for text in texts:
        batch.append(text)
        if len(batch) == _BATCH:
            out.write(separator + ",".join(batch))
            separator, wrote = ",", True
            batch.clear()
    if batch:
        out.write(separator + ",".join(batch))
        wrote = True
    return wrote


_BATCH = 1024  # records written at once
PARALLEL_RECORDS = 20_000  # from this many records on, two processes write them
_CHUNK = 512  # records the two processes take at a time
