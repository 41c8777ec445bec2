"""Everything the dump says about each value, joined across its sections (allocation
value lines, ``Used values`` records, live ranges), and each value's sizes in bytes:
logical (``ShapeUtil::ByteSizeOf`` of its shape, padding ignored), allocated (its
slot, padding included) and the size XLA's peak sweep gives it (its defining
instruction's shape)."""

from __future__ import annotations

from collections.abc import Iterable

from hlotop.model import (
    Diagnostic,
    HloLiveRange,
    HloValue,
    ParsedSections,
    ShapeIndex,
    UsedValue,
    UsedValues,
    ValueInfo,
    shape_of,
)
from hlotop.shapes import POINTER_BYTES, subshape


def instruction_shapes(
    used_values: Iterable[UsedValue], names: set[str] | None = None
) -> dict[str, str]:
    """Map instruction name -> its whole shape text, from the from-instruction lines
    (only for the instructions in ``names``, when given: each parse has a cost)."""
    out: dict[str, str] = {}
    for record in used_values:
        vname = record.value.name
        if (
            vname in out
            or record.instruction_text is None
            or (names is not None and vname not in names)
        ):
            continue
        instr = record.instruction
        if instr is not None and instr.shape:
            out[vname] = instr.shape
    return out


def _logical(shape_text: str | None, index: ShapeIndex = ()) -> int | None:
    if not shape_text:
        return None
    shape = shape_of(shape_text)
    if shape is None:
        return None
    sub = subshape(shape, index)
    return sub.logical_bytes() if sub is not None else None


def _memory_space(shape_text: str | None) -> int | None:
    shape = shape_of(shape_text) if shape_text else None
    return shape.memory_space if shape is not None else None


def join_values(
    sections: ParsedSections, diagnostics: list[Diagnostic] | None = None, path: str = ""
) -> list[ValueInfo]:
    """Join allocation value lines, Used-values records and live ranges by value.

    Values are matched by id across allocations and records, and by
    (instruction name, ShapeIndex) with the live ranges. A live range that matches no
    value becomes a synthetic value with a negative id. Returns ValueInfo sorted by id.
    Problems are appended to ``diagnostics`` (if given) as warnings.
    """
    return ValuesBeforeLiveRanges(sections).join(sections.live_range, diagnostics, path)


class ValuesBeforeLiveRanges:
    """The first half of :func:`join_values`, which needs no live ranges: every value
    of the allocation lines and the records, each sized (logical and sweep bytes) and
    coloured. A loader that reads the live ranges on another core makes it while it
    waits for them, then calls :meth:`join` once.

    ``sections``: the allocations, the ``Used values`` records and the stack frames
    (its live ranges are not read here). Raises nothing."""

    def __init__(self, sections: ParsedSections):
        self.stack_frames = frames = sections.stack_frames
        table = sections.used_values
        records: UsedValues[str] | UsedValues[bytes] | dict[int, UsedValue]
        if isinstance(table, UsedValues):
            records = table
        else:
            records = {r.value.id: r for r in table}
        infos: dict[int, ValueInfo] = {}
        for alloc in sections.allocations:
            color = alloc.color
            for slot in alloc.values:
                infos[slot.value.id] = ValueInfo(
                    slot.value, slot, records, None, slot.shape, 0, 0, color, frames
                )
        if isinstance(records, UsedValues):
            ids = records.ids
            if not infos.keys() >= set(ids):  # values with a record but no allocation line
                for number, vid in enumerate(ids):
                    if vid not in infos:
                        infos[vid] = ValueInfo(records.head(number), records=records, frames=frames)
        else:
            for vid, record in records.items():
                if vid not in infos:
                    infos[vid] = ValueInfo(record.value, records=records, frames=frames)
        # The sweep needs the whole shape of tuple-shaped instructions: the value at {}
        # prints it; otherwise read it from the from-instruction text. Values with no
        # allocation line need their own shape from there too.
        # Values are joined with live ranges by (name, ShapeIndex): HloValue.key and
        # BufferLiveRange.key, inlined (a big dump has 10^5 of each), and a value that is
        # its instruction's whole output (most) by its name alone, with no key to build.
        shapes_of: dict[str, str] = {}
        whole: dict[str, ValueInfo] = {}  # name -> the value at ShapeIndex {} (or none)
        by_key: dict[tuple[str, ShapeIndex], ValueInfo] = {}  # the others
        for info in infos.values():
            v = info.value
            index = v.shape_index
            if not index:
                whole[v.name] = info
                if index is not None and info.shape:
                    shapes_of.setdefault(v.name, info.shape)
            else:
                by_key[v.name, index] = info
        wanted = {
            i.value.name
            for i in infos.values()
            if (i.value.shape_index is not None or i.shape is None)
            and i.value.name not in shapes_of
        }
        if wanted:
            wanted_records = (info.used for info in infos.values() if info.value.name in wanted)
            shapes_of.update(
                instruction_shapes((r for r in wanted_records if r is not None), wanted)
            )
        logical_of = _LogicalBytes()
        for info in infos.values():
            v = info.value
            text = info.shape
            if text is not None and v.shape_index is None:
                # The common case of _size_value, inlined: a value line gives the shape
                # of a value that is its instruction's whole output.
                info.logical_bytes = info.sweep_bytes = logical_of[text] or 0
                if v.color is not None:
                    info.color = v.color
                elif info.slot is None:
                    info.color = _memory_space(text) or 0
            else:
                _size_value(info, shapes_of, logical_of)
        self.infos, self._whole, self._by_key = infos, whole, by_key
        self._shapes_of, self._logical_of = shapes_of, logical_of
        self._joined = False

    def join(
        self, live: HloLiveRange | None, diagnostics: list[Diagnostic] | None = None, path: str = ""
    ) -> list[ValueInfo]:
        """Join the live ranges ``live`` to the values (once: this object is spent after
        it), as :func:`join_values` does. Returns ValueInfo sorted by id. Raises
        RuntimeError if called a second time."""
        if self._joined:
            raise RuntimeError("the values were joined to live ranges already")
        self._joined = True
        infos, whole, by_key = self.infos, self._whole, self._by_key
        next_synthetic = -1
        for rng in live.buffers if live else ():
            index = rng.shape_index
            joined = by_key.get((rng.name, index)) if index else whole.get(rng.name)
            if joined is None:
                joined = ValueInfo(
                    HloValue(next_synthetic, rng.name, index or None), frames=self.stack_frames
                )
                _size_value(joined, self._shapes_of, self._logical_of)
                infos[next_synthetic] = joined
                if index:
                    by_key[rng.name, index] = joined
                else:
                    whole[rng.name] = joined
                next_synthetic -= 1
            joined.live = rng
        missing_sizes = [
            info.value.label
            for info in infos.values()
            if info.live is not None and info.sweep_bytes == 0 and info.shape is None
        ]
        if missing_sizes and diagnostics is not None:
            shown = ", ".join(missing_sizes[:5]) + (" ..." if len(missing_sizes) > 5 else "")
            diagnostics.append(
                Diagnostic(
                    path,
                    0,
                    f"no shape known for {len(missing_sizes)} "
                    f"live value(s) ({shown}); they count 0 bytes",
                    "warning",
                )
            )
        return [infos[vid] for vid in sorted(infos)]


class _LogicalBytes(dict):
    """Shape text (or None) -> :func:`_logical` of it, each text worked out once: a big
    dump repeats a few hundred shapes over 10^5 values."""

    def __missing__(self, text: str | None) -> int | None:
        self[text] = logical = _logical(text)
        return logical


def _size_value(info: ValueInfo, shapes_of: dict[str, str], logical_of: _LogicalBytes) -> None:
    """Set ``info``'s logical and sweep bytes (and its colour if no allocation line
    gives it)."""
    v = info.value
    instr_shape = shapes_of.get(v.name)
    if info.shape is None and instr_shape is not None:
        shape = shape_of(instr_shape)
        sub = subshape(shape, v.shape_index or ()) if shape is not None else None
        if sub is not None:
            info.shape = str(sub)
        info.logical_bytes = sub.logical_bytes() if sub is not None else 0
    else:
        info.logical_bytes = logical_of[info.shape] or 0
    if v.shape_index is None:  # the defining instruction is not a tuple
        info.sweep_bytes = info.logical_bytes
    else:
        whole = logical_of[instr_shape]
        info.sweep_bytes = (
            whole
            if whole is not None
            else POINTER_BYTES * ((v.shape_index[0] + 1) if v.shape_index else 1)
        )
    if v.color is not None:
        info.color = v.color
    elif info.slot is None:
        info.color = _memory_space(info.shape) or 0
