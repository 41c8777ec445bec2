"""Memory analysis of a parsed dump: pure functions over :mod:`hlotop.model`.

Two sizes matter for every value, and hlotop keeps them apart:

* **logical bytes**: ``ShapeUtil::ByteSizeOf(value shape, 8)``, tiling padding
  ignored. XLA's printed peak lists (V2+) and the stack-trace totals use these.
* **allocated bytes**: the ``size=`` of the value's slot in its allocation, which
  includes TPU tiling padding (``f32[]{:T(128)}`` takes 512 bytes for 4 logical).

XLA picks the peak step with a third: the *defining instruction's* shape (a tuple
instruction counts 8 bytes per element), see :func:`xla_peak_step`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from itertools import accumulate
from operator import attrgetter

from hlotop.model import (
    KIND_FIELDS,
    Analysis,
    BufferAllocation,
    Diagnostic,
    HloValue,
    ParsedSections,
    ShapeIndex,
    UsedValue,
    UsedValues,
    ValueInfo,
    has_kind,
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
        if instr.shape:
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
    records = sections.used_values
    if not isinstance(records, UsedValues):
        records = {r.value.id: r for r in records}
    frames = sections.stack_frames
    infos: dict[int, ValueInfo] = {}
    for alloc in sections.allocations:
        color = alloc.color
        for slot in alloc.values:
            infos[slot.value.id] = ValueInfo(
                slot.value, slot, records, None, slot.shape, 0, 0, color, frames
            )
    if isinstance(records, UsedValues):
        for number, vid in enumerate(records.ids):
            if vid not in infos:  # a value with a record but no allocation line
                infos[vid] = ValueInfo(records.head(number), records=records, frames=frames)
    else:
        for vid, record in records.items():
            if vid not in infos:
                infos[vid] = ValueInfo(record.value, records=records, frames=frames)
    # The sweep needs the whole shape of tuple-shaped instructions: the value at {}
    # prints it; otherwise read it from the from-instruction text. Values with no
    # allocation line need their own shape from there too.
    shapes_of: dict[str, str] = {}
    for info in infos.values():
        v = info.value
        if v.shape_index == () and info.shape:
            shapes_of.setdefault(v.name, info.shape)
    wanted = {
        i.value.name
        for i in infos.values()
        if (i.value.shape_index is not None or i.shape is None) and i.value.name not in shapes_of
    }
    if wanted:
        wanted_records = (info.used for info in infos.values() if info.value.name in wanted)
        shapes_of.update(instruction_shapes((r for r in wanted_records if r is not None), wanted))
    # HloValue.key and BufferLiveRange.key, inlined: a big dump has 10^5 of each.
    by_key = {(i.value.name, i.value.shape_index or ()): i for i in infos.values()}
    next_synthetic = -1
    live = sections.live_range
    for rng in live.buffers if live else ():
        key = (rng.name, rng.shape_index)
        info = by_key.get(key)
        if info is None:
            info = ValueInfo(
                HloValue(next_synthetic, rng.name, rng.shape_index or None), frames=frames
            )
            infos[next_synthetic] = by_key[key] = info
            next_synthetic -= 1
        info.live = rng
    missing_sizes = []
    logical_of = _LogicalBytes()
    for info in infos.values():
        v = info.value
        text = info.shape
        if text is not None and v.shape_index is None:
            # The common case of _size_value, inlined: a value line gives the shape of a
            # value that is its instruction's whole output.
            info.logical_bytes = info.sweep_bytes = logical_of[text] or 0
            if v.color is not None:
                info.color = v.color
            elif info.slot is None:
                info.color = _memory_space(text) or 0
        else:
            _size_value(info, shapes_of, logical_of)
        if info.live is not None and info.sweep_bytes == 0 and info.shape is None:
            missing_sizes.append(v.label)
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
    return sorted(infos.values(), key=lambda i: i.value.id)


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


def xla_peak_step(ranges: Iterable[tuple[int, int, int]]) -> tuple[int, int]:
    """XLA's peak moment (``HloLiveRange::ComputePeakMemoryMoment``).

    ``ranges`` are ``(start, end, bytes)`` with inclusive steps and the defining
    instruction's ByteSizeOf. Events at ``start`` (+) and ``end + 1`` (-) are swept in
    (time, is_end) order, so starts at a step count before ends at that step; the
    earliest strict maximum wins, 0 if there is none. Returns ``(step, bytes at the
    sweep's maximum)``. Raises nothing.
    """
    starts: dict[int, int] = {}
    ends: dict[int, int] = {}
    starts_get, ends_get = starts.get, ends.get
    for start, end, size in ranges:
        starts[start] = starts_get(start, 0) + size
        ends[end + 1] = ends_get(end + 1, 0) + size
    usage = peak = peak_time = 0
    for t in sorted(starts.keys() | ends.keys()):
        usage += starts_get(t, 0)
        if usage > peak:
            peak, peak_time = usage, t
        usage -= ends_get(t, 0)
    return peak_time, peak


def live_bytes_per_step(infos: Iterable[ValueInfo], max_time: int) -> list[int]:
    """Logical bytes of the values live at each step 0..max_time (``start <= t <= end``).

    Returns a list of ``max_time + 1`` ints. Raises nothing.
    """
    diff = [0] * (max_time + 2)
    for info in infos:
        live = info.live
        if live is None:
            continue
        start, end = live.start, live.end
        if start < 0 or end > max_time:  # only in damaged dumps: clamp to the schedule
            start = min(max(start, 0), max_time + 1)
            end = min(max(end, -1), max_time)
        if end < start:
            continue
        diff[start] += info.logical_bytes
        diff[end + 1] -= info.logical_bytes
    diff.pop()
    return list(accumulate(diff))


def live_set(infos: Iterable[ValueInfo], step: int) -> list[ValueInfo]:
    """Values live at ``step``, in XLA's peak-list order: logical bytes descending,
    then instruction name, then ShapeIndex."""
    live = [i for i in infos if i.is_live_at(step)]
    live.sort(key=lambda i: (-i.logical_bytes, i.value.name, i.value.shape_index or ()))
    return live


def occupied_bytes(infos: Iterable[ValueInfo]) -> int:
    """Bytes of allocation space the values occupy: the union of their slots'
    ``[offset, offset + size)`` ranges in each allocation, padding included.

    Unlike a sum of logical bytes (XLA's peak figure), values that share a slice of an
    allocation (a donated parameter and the output aliasing it, a bitcast) count once.
    Values with no allocation line count their logical bytes. Raises nothing.
    """
    by_alloc: dict[int, list[tuple[int, int]]] = defaultdict(list)
    loose = 0
    for info in infos:
        if info.slot is None:
            loose += info.logical_bytes
        else:
            by_alloc[info.slot.allocation].append(
                (info.slot.offset, info.slot.offset + info.slot.size)
            )
    total = loose
    for ranges in by_alloc.values():
        ranges.sort()
        cur_start, cur_end = ranges[0]
        for start, end in ranges[1:]:
            if start > cur_end:
                total += cur_end - cur_start
                cur_start, cur_end = start, end
            else:
                cur_end = max(cur_end, end)
        total += cur_end - cur_start
    return total


def kind_totals(allocations: Sequence[BufferAllocation]) -> tuple[dict[str, int], dict[str, int]]:
    """Bytes, and the number, of the allocations of each kind (an allocation with
    several kinds counts in each); every kind in :data:`ALLOCATION_KINDS` present."""
    size: dict[str, int] = {}
    count: dict[str, int] = {}
    for kind, name in KIND_FIELDS:  # a pass a kind: no tuple of kinds per allocation
        get = attrgetter(name)
        sizes = [a.size for a in allocations if has_kind(get(a))]
        size[kind], count[kind] = sum(sizes), len(sizes)
    return size, count


def totals_by_color(allocations: Sequence[BufferAllocation]) -> dict[int, int]:
    """Bytes of the allocations of each memory space (color), colors ascending."""
    out: dict[int, int] = defaultdict(int)
    for alloc in allocations:
        out[alloc.color] += alloc.size
    return dict(sorted(out.items()))


def analyze(
    sections: ParsedSections, diagnostics: list[Diagnostic] | None = None, path: str = ""
) -> Analysis:
    """Derive every figure hlotop shows from the parsed sections. Raises nothing."""
    infos = join_values(sections, diagnostics, path)
    live = sections.live_range
    max_time = live.max_time if live else 0
    if live is not None:
        max_time = max([max_time] + [r.end for r in live.buffers])
        # A schedule has a step per instruction; a damaged header or range end far
        # beyond what is listed would size the curve (and the timeline) by it.
        plausible = 4 * (len(live.instruction_sequence) + len(live.buffers)) + 1024
        if max_time > plausible:
            if diagnostics is not None:
                diagnostics.append(
                    Diagnostic(
                        path,
                        live.line,
                        f"the schedule ends at step "
                        f"{max_time}, far beyond the "
                        f"{len(live.instruction_sequence)} steps and "
                        f"{len(live.buffers)} live ranges listed; steps "
                        f"after {plausible} are not shown",
                        "warning",
                    )
                )
            max_time = plausible
    live_infos = [i for i in infos if i.live is not None]
    curve = live_bytes_per_step(live_infos, max_time) if live else []
    peak_step = peak_bytes = None
    peak_values: list[ValueInfo] = []
    if live is not None:
        peak_step, _ = xla_peak_step((i.live.start, i.live.end, i.sweep_bytes) for i in live_infos)
        peak_values = live_set(live_infos, peak_step)
        peak_bytes = sum(i.logical_bytes for i in peak_values)
    by_kind = kind_totals(sections.allocations)
    return Analysis(
        values=infos,
        by_id={i.value.id: i for i in infos},
        max_time=max_time,
        live_bytes=curve,
        peak_step=peak_step,
        peak_bytes=peak_bytes or 0,
        peak_values=peak_values,
        peak_occupied_bytes=occupied_bytes(peak_values),
        totals_by_kind=by_kind[0],
        allocations_by_kind=by_kind[1],
        totals_by_color=totals_by_color(sections.allocations),
        allocation_of={a.index: a for a in sections.allocations},
    )
