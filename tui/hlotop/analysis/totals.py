"""Totals over the allocations: bytes and counts by kind, bytes by memory space."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from operator import attrgetter

from hlotop.model import KIND_FIELDS, BufferAllocation, has_kind


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
