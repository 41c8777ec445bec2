"""The live set at a step, grouped: by scope, phase, source line, opcode, shape, dtype,
kind, memory space or parameter path, stacked (``scope,opcode``), with the bytes of
each group adding up to the step's total under the chosen accounting."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Container, Sequence
from dataclasses import dataclass, field

from hlotop.analysis.labels import GROUP_KEYS, Labeller
from hlotop.analysis.peak import live_set
from hlotop.analysis.scope import ScopeRule
from hlotop.model import ModuleDump, UsedValues, ValueInfo

__all__ = [  # GROUP_KEYS (hlotop.analysis.labels): the keys a live set is grouped by
    "ACCOUNTINGS",
    "GROUP_KEYS",
    "GroupRow",
    "Grouping",
    "counted_bytes",
    "group_live_set",
    "narrowed",
    "parse_keys",
]
ACCOUNTINGS = ("logical", "occupied")


def parse_keys(text: str) -> tuple[str, ...]:
    """``"scope,opcode"`` -> ``("scope", "opcode")``. Raises ValueError naming an
    unknown key and the known ones."""
    keys = tuple(k.strip() for k in text.split(",") if k.strip())
    unknown = [k for k in keys if k not in GROUP_KEYS]
    if unknown or not keys:
        said = f"unknown group key {unknown[0]!r}" if unknown else "no group key given"
        raise ValueError(f"{said} (the keys: {', '.join(GROUP_KEYS)})") from None
    return keys


@dataclass(frozen=True, slots=True)
class GroupRow:
    """One group: its key (one part per grouping key), its bytes and its values."""

    key: tuple[str, ...]
    bytes: int
    values: tuple[ValueInfo, ...]


@dataclass(frozen=True, slots=True)
class Grouping:
    """The live set at ``step`` grouped by ``keys``: rows sorted by bytes (largest
    first, then key), whose bytes add up to ``total_bytes``. ``accounting`` says which
    bytes are summed: ``logical`` (each value at its own shape, padding ignored, values
    sharing a buffer each counted) or ``occupied`` (allocation bytes in use, padding
    included, shared bytes once: each value counts the bytes of its slot no value
    before it in XLA's order already covers)."""

    step: int
    keys: tuple[str, ...]
    accounting: str
    total_bytes: int
    rows: tuple[GroupRow, ...]
    bytes_of: dict[int, int] = field(default_factory=dict)  # value id -> bytes counted


def counted_bytes(values: Sequence[ValueInfo], accounting: str) -> dict[int, int]:
    """Bytes each value counts for (value id -> bytes) under ``accounting`` (one of
    :data:`ACCOUNTINGS`); ``values`` in XLA's peak-list order. ``occupied``: each value
    counts the bytes of its slot that no value before it covers, so the sum is the
    allocation space in use; a value with no slot counts 0. Raises ValueError for an
    unknown accounting."""
    if accounting == "logical":
        return {i.value.id: i.logical_bytes for i in values}
    if accounting != "occupied":
        raise ValueError(f"unknown accounting {accounting!r} (one of {', '.join(ACCOUNTINGS)})")
    covered: dict[int, list[tuple[int, int]]] = defaultdict(list)  # allocation -> spans
    out: dict[int, int] = {}
    for info in values:
        slot = info.slot
        if slot is None:
            out[info.value.id] = 0
            continue
        start, stop = slot.offset, slot.offset + slot.size
        spans = covered[slot.allocation]
        new = stop - start
        for a, b in spans:  # few per allocation at a step; shared slots are the rule
            new -= max(0, min(b, stop) - max(a, start))
        out[info.value.id] = max(new, 0)
        if new > 0:
            spans.append((start, stop))
            _merge(spans)
    return out


def _merge(spans: list[tuple[int, int]]) -> None:
    spans.sort()
    merged = [spans[0]]
    for a, b in spans[1:]:
        if a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    spans[:] = merged


def group_live_set(
    module: ModuleDump,
    keys: Sequence[str],
    step: int | None = None,
    accounting: str = "logical",
    *,
    fold: bool = True,
    rules: Sequence[ScopeRule] = (),
    labeller: Labeller | None = None,
) -> Grouping:
    """Group the values live at ``step`` (default: XLA's peak step) by ``keys`` (each
    in :data:`GROUP_KEYS`); ``fold``: layer indices to ``*``; ``rules``: the user's
    scope rewrites. Values whose key is unknown go to a named group (``(no op_name)``,
    ``(unknown)``), never dropped. Raises ValueError for an unknown key or accounting,
    or when the module has no live ranges (no steps), or when its value records cannot
    be read back from the dump file (it changed or went since it was opened)."""
    a = module.analysis
    if step is None:
        step = a.peak_step
    if step is None:
        raise ValueError("the dump has no live ranges, so no live set to group")
    if not 0 <= step <= a.max_time:
        raise ValueError(f"step {step} is outside the schedule (0..{a.max_time})")
    for key in keys:
        if key not in GROUP_KEYS:
            raise ValueError(f"unknown group key {key!r}")
    labeller = labeller or Labeller(module, fold, rules)
    values = live_set(a.values, step)
    labeller.read_records(values)  # each record once, in dump order
    records = module.sections.used_values
    if isinstance(records, UsedValues) and records.problem is not None:
        # The records are read back from the dump file, which changed or went: every
        # value would be "(no op_name)".
        raise ValueError(f"the dump {records.problem}")
    bytes_of = counted_bytes(values, accounting)
    groups: dict[tuple[str, ...], list[ValueInfo]] = defaultdict(list)
    for info in values:
        groups[tuple(labeller.label(info, k) for k in keys)].append(info)
    rows = [
        GroupRow(key, sum(bytes_of[i.value.id] for i in members), tuple(members))
        for key, members in groups.items()
    ]
    rows.sort(key=lambda r: (-r.bytes, r.key))
    return Grouping(step, tuple(keys), accounting, sum(bytes_of.values()), tuple(rows), bytes_of)


def narrowed(grouping: Grouping, keep: Container[int]) -> Grouping:
    """``grouping`` with only the values whose ids are in ``keep`` (a filter's matches):
    each group keeps those of its values, with the bytes they count for in
    ``grouping`` (:func:`counted_bytes`), and goes when it keeps none; rows sorted as
    :func:`group_live_set` sorts them, ``total_bytes`` their sum. The step, keys and
    accounting stay. O(values of the grouping)."""
    counted = grouping.bytes_of
    rows = []
    for row in grouping.rows:
        kept = tuple(i for i in row.values if i.value.id in keep)
        if kept:
            rows.append(GroupRow(row.key, sum(counted[i.value.id] for i in kept), kept))
    rows.sort(key=lambda r: (-r.bytes, r.key))
    bytes_of = {i.value.id: counted[i.value.id] for r in rows for i in r.values}
    return Grouping(
        grouping.step,
        grouping.keys,
        grouping.accounting,
        sum(r.bytes for r in rows),
        tuple(rows),
        bytes_of,
    )
