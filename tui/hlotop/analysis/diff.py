"""Two compiles of one program compared: their figures side by side, their values
matched without ids or instruction names (both change between compiles), and the
change by group.

Values are matched in rounds, each on a key that survives a recompile better than the
next (FEATURES.md: how pprof, Bloaty and ``hlo_diff`` match):

1. ``op_name``: the op_name path (:func:`hlotop.analysis.scope.op_path`: primitive
   parameters, the jitted function and JAX <= 0.6's ``jit(main)`` left out) + the
   opcode + the tuple index + the shape without layout; then, among the values left,
   the same with the shape's element type and rank only, where both sides have as
   many values of that key (the same instructions, each at another shape: a batch
   size changed, ``f32[8,128]`` and ``f32[16,128]``; where the counts differ, XLA
   computed that op another way, and pairing in order paired an ``f32[2,64]`` partial
   sum with an ``f32[128,64]`` gradient). This is the one way two values of different
   shapes are paired; each such pair is marked (:attr:`ValueChange.reshaped`) and
   shown with both shapes;
2. ``scope``: the scope (:func:`hlotop.analysis.scope.scope_of`, layer indices kept;
   not the top level, which names no part of the program) + the shape without layout;
3. ``source``: the user's source line + the shape without layout;
4. ``position``: the same opcode and shape without layout, and the nearest relative
   position in the schedule (the first step over the schedule's length), at most
   :data:`POSITION_TOLERANCE` apart.

``scope`` and ``source`` are tried with the opcode first: one scope or line of code
makes many values of one shape, and the same instruction is the likelier match. A
value's scope, source line or place in the schedule says little of which value it
is: paired by them, an ``f32[1,4,1]`` "grew +700%" into an ``f32[4,8,128,4]`` (a guess
shown as a fact), so they pair only values of one shape; values of different shapes
that are not one instruction are ``removed`` and ``added``.

Within a key, values pair up in schedule order. A value left over is ``added`` (only
in NEW) or ``removed`` (only in OLD).
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hlotop.analysis.grouping import Grouping, group_live_set
from hlotop.analysis.labels import Labeller
from hlotop.analysis.scope import op_path, scope_of, user_frame
from hlotop.model import ModuleDump, ValueInfo, shape_of
from hlotop.shapes import ArrayShape, plain_shape_text

MATCH_KEYS = ("op_name", "scope", "source", "position")
POSITION_TOLERANCE = 0.02  # of the schedule's length
CLASSES = ("added", "removed", "grown", "shrunk", "entered peak", "left peak", "unchanged")


@dataclass(frozen=True, slots=True)
class Side:
    """One compile's figures, in bytes and steps."""

    module: ModuleDump
    total_bytes: int
    peak_step: int | None
    peak_bytes: int  # XLA's peak figure
    memory_stats: dict[str, int]  # memory_analysis() sizes, JAX's names ({} if none)
    space_peaks: dict[str, int]  # memory space name -> its occupied peak


@dataclass(frozen=True, slots=True)
class ValueChange:
    """A value of OLD and its match in NEW (either None when it has none)."""

    old: ValueInfo | None
    new: ValueInfo | None
    matched_by: str | None  # one of MATCH_KEYS; None for added/removed
    change: str  # one of CLASSES

    @property
    def reshaped(self) -> bool:
        """Whether both sides are there and their shapes (without layout) differ: one
        instruction (the ``op_name`` round) at two shapes."""
        if self.old is None or self.new is None:
            return False
        return plain_shape(self.old) != plain_shape(self.new)

    @property
    def delta_bytes(self) -> int:
        """NEW's allocated bytes minus OLD's (a missing side counts 0)."""
        new = self.new.allocated_bytes if self.new is not None else 0
        old = self.old.allocated_bytes if self.old is not None else 0
        return new - old


@dataclass(frozen=True, slots=True)
class GroupDelta:
    """A group's bytes live at each side's peak step and the change."""

    key: tuple[str, ...]
    old_bytes: int
    new_bytes: int
    in_old: bool = True  # whether OLD's live set has the group (its bytes may be 0)

    @property
    def delta_bytes(self) -> int:
        return self.new_bytes - self.old_bytes


@dataclass(frozen=True, slots=True)
class ModuleDiff:
    old: Side
    new: Side
    changes: tuple[ValueChange, ...]  # matched first (by key order), then added, removed
    keys: tuple[str, ...]  # the grouping keys of ``groups``
    groups: tuple[GroupDelta, ...]  # sorted by the absolute change, largest first
    accounting: str

    def count(self, change: str) -> int:
        return sum(1 for c in self.changes if c.change == change)


def side_of(module: ModuleDump) -> Side:
    """The figures of one compile (see :class:`Side`)."""
    a = module.analysis
    total = module.total_bytes_used
    if total is None:
        total = sum(x.size for x in module.allocations)
    stats: dict[str, int] = {}
    if a.memory_stats is not None:
        stats = a.memory_stats.as_dict()
        if a.memory_stats.peak_memory_in_bytes is not None:  # CPU and GPU (jax >= 0.11)
            stats["peak_memory_in_bytes"] = a.memory_stats.peak_memory_in_bytes
    return Side(
        module,
        total,
        a.peak_step,
        a.peak_bytes,
        stats,
        {s.name: s.peak_bytes for s in a.memory_spaces},
    )


def plain_shape(info: ValueInfo) -> str:
    """``info``'s shape without its layout and tuple index comments
    (``f32[8,128]{1,0}`` -> ``f32[8,128]``); ``?`` when the dump gives none."""
    return plain_shape_text(info.shape) if info.shape else "?"


def _dtype_rank(info: ValueInfo) -> tuple[str, int]:
    shape = shape_of(info.shape) if info.shape else None
    if isinstance(shape, ArrayShape):
        return shape.element_type, len(shape.dims)
    return ("tuple" if shape is not None else "?"), -1


def _position(info: ValueInfo, max_time: int) -> float:
    live = info.live
    return live.start / max_time if live is not None and max_time else 0.0


Key = Callable[[ValueInfo], tuple | None]  # a value's key in a round; None: it has none
# How the values of one key pair: in schedule order; in order where both sides have as
# many; each with the nearest in the schedule (within POSITION_TOLERANCE).
IN_ORDER, ONE_TO_ONE, NEAREST = "in order", "one to one", "nearest"


def _rounds(labeller: Labeller) -> list[tuple[str, Key, str]]:
    """The rounds of matching in order (the module's docstring), each ``(its key's
    name, a value's key, how the values of one key pair)``: ``op_name`` twice (its
    shape, then its rank), ``scope`` and ``source`` twice (with the opcode, then
    without: one scope or line of code makes many values of one shape, and the same
    opcode is the likelier match; a new XLA may fuse it, hence the second)."""

    def opcode(info: ValueInfo) -> str:
        return labeller.opcode(info) or "?"

    def instruction(info: ValueInfo):
        op_name = labeller.origin(info)[0]
        if not op_name:
            return None
        return (op_path(op_name), opcode(info), info.value.shape_index)

    def by_op_name(info: ValueInfo):
        path = instruction(info)
        return None if path is None else (*path, plain_shape(info))

    def by_op_name_at_any_shape(info: ValueInfo):
        path = instruction(info)
        return None if path is None else (*path, *_dtype_rank(info))

    def by_scope(info: ValueInfo):
        scope = scope_of(labeller.origin(info)[0], fold=False)
        # the top ("", no scope under the jitted function) names no part of the program
        return (scope, plain_shape(info)) if scope else None

    def by_source(info: ValueInfo):
        frame = user_frame(labeller.origin(info)[1])
        where = f"{frame.file}:{frame.line}" if frame is not None else labeller.source(info)
        return None if where is None else (where, plain_shape(info))

    def same_opcode(key: Key) -> Key:
        def keyed(info: ValueInfo):
            found = key(info)
            return None if found is None else (*found, opcode(info))

        return keyed

    def by_kind(info: ValueInfo):
        return (opcode(info), plain_shape(info))

    return [
        ("op_name", by_op_name, IN_ORDER),
        ("op_name", by_op_name_at_any_shape, ONE_TO_ONE),
        ("scope", same_opcode(by_scope), IN_ORDER),
        ("scope", by_scope, IN_ORDER),
        ("source", same_opcode(by_source), IN_ORDER),
        ("source", by_source, IN_ORDER),
        ("position", by_kind, NEAREST),
    ]


def match_values(
    old: ModuleDump, new: ModuleDump, old_labeller: Labeller, new_labeller: Labeller
) -> list[tuple[ValueInfo | None, ValueInfo | None, str | None]]:
    """Pair the values of ``old`` and ``new`` (those with an allocation slot or a live
    range) by the rounds of :data:`MATCH_KEYS` (the module's docstring); returns
    ``(old, new, key)`` for each pair, then ``(None, new, None)`` for each value only in NEW and ``(old, None,
    None)`` for each only in OLD. Raises nothing."""
    left = [i for i in old.analysis.values if i.slot is not None or i.live is not None]
    right = [i for i in new.analysis.values if i.slot is not None or i.live is not None]
    old_max, new_max = old.analysis.max_time, new.analysis.max_time
    rounds = zip(_rounds(old_labeller), _rounds(new_labeller), strict=True)
    pairs: list[tuple[ValueInfo | None, ValueInfo | None, str | None]] = []
    for (name, old_key, rule), (_, new_key, _) in rounds:
        by_key: dict[tuple, list[ValueInfo]] = defaultdict(list)
        for info in right:
            key = new_key(info)
            if key is not None:
                by_key[key].append(info)
        for bucket in by_key.values():
            bucket.sort(key=lambda i: (_position(i, new_max), i.value.id))
        # the position round: each bucket's positions beside it (found by bisection)
        positions = (
            {key: [_position(i, new_max) for i in bucket] for key, bucket in by_key.items()}
            if rule == NEAREST
            else {}
        )
        old_keys = [(info, old_key(info)) for info in left]
        if rule == ONE_TO_ONE:  # only keys with as many values on each side
            counts = Counter(key for _, key in old_keys if key is not None)
            by_key = defaultdict(list, {k: b for k, b in by_key.items() if counts.get(k) == len(b)})
        taken: set[int] = set()
        unmatched_old = []
        for info, key in sorted(old_keys, key=lambda t: (_position(t[0], old_max), t[0].value.id)):
            candidates = by_key.get(key) if key is not None else None
            if key is None or not candidates:
                unmatched_old.append(info)
                continue
            if rule == NEAREST:  # the nearest in the schedule, if near enough
                here = _position(info, old_max)
                where = positions[key]
                at = bisect_left(where, here)
                near = [j for j in (at - 1, at) if 0 <= j < len(candidates)]
                j = min(near, key=lambda j: abs(where[j] - here))
                if abs(where[j] - here) > POSITION_TOLERANCE:
                    unmatched_old.append(info)
                    continue
                best = candidates.pop(j)
                where.pop(j)
            else:
                best = candidates.pop(0)
            taken.add(id(best))
            pairs.append((info, best, name))
        left = unmatched_old
        right = [i for i in right if id(i) not in taken]
    pairs += [(None, info, None) for info in right]
    pairs += [(info, None, None) for info in left]
    return pairs


def _classify(
    old: ValueInfo | None, new: ValueInfo | None, old_peak: int | None, new_peak: int | None
) -> str:
    if old is None:
        return "added"
    if new is None:
        return "removed"
    if new.allocated_bytes > old.allocated_bytes:
        return "grown"
    if new.allocated_bytes < old.allocated_bytes:
        return "shrunk"
    was = old_peak is not None and old.is_live_at(old_peak)
    now = new_peak is not None and new.is_live_at(new_peak)
    if now and not was:
        return "entered peak"
    if was and not now:
        return "left peak"
    return "unchanged"


def group_deltas(old: Grouping, new: Grouping) -> list[GroupDelta]:
    """Each group of either side's live set (same keys) with its bytes on both sides
    (0 on a side without it, :attr:`GroupDelta.in_old` saying whether OLD has it),
    sorted by the absolute change, largest first, then key."""
    before = {row.key: row.bytes for row in old.rows}
    after = {row.key: row.bytes for row in new.rows}
    out = [
        GroupDelta(k, before.get(k, 0), after.get(k, 0), k in before)
        for k in before.keys() | after.keys()
    ]
    out.sort(key=lambda g: (-abs(g.delta_bytes), g.key))
    return out


def diff_modules(
    old: ModuleDump,
    new: ModuleDump,
    keys: Sequence[str] = ("phase", "scope"),
    accounting: str = "logical",
) -> ModuleDiff:
    """Compare two compiles: their figures, their values matched (see the module's
    docstring) and classified, and their live sets at their own peaks grouped by
    ``keys`` with the change per group. Raises ValueError for an unknown key or
    accounting."""
    old_labeller, new_labeller = Labeller(old), Labeller(new)
    for labeller in (old_labeller, new_labeller):  # every value is labelled: one pass
        labeller.read_records()
    old_peak, new_peak = old.analysis.peak_step, new.analysis.peak_step
    changes = [
        ValueChange(a, b, key, _classify(a, b, old_peak, new_peak))
        for a, b, key in match_values(old, new, old_labeller, new_labeller)
    ]
    groups: list[GroupDelta] = []
    if old_peak is not None and new_peak is not None:
        groups = group_deltas(
            group_live_set(old, keys, accounting=accounting, labeller=old_labeller),
            group_live_set(new, keys, accounting=accounting, labeller=new_labeller),
        )
    return ModuleDiff(
        side_of(old), side_of(new), tuple(changes), tuple(keys), tuple(groups), accounting
    )
