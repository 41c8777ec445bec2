"""The buffers an out-of-memory report lists (:class:`~hlotop.model.oom.OomEntry`),
sorted, filtered and grouped as the OOM browser lists them and the text report groups
them.

* sorts: ``size`` (the largest first, as XLA prints them; ties in the text's order),
  ``op_name`` and ``shape`` (alphabetical; entries without one last);
* groups: ``scope`` (the entry's ``op_name`` as the grouped view reads a value's:
  :func:`~hlotop.analysis.scope.scope_of`, layer indices folded; ``(no op_name)``,
  ``(top level)``) and ``shape`` (as printed; ``?`` when the text prints none), the
  groups of most bytes first;
* the filter: words, each of which some field of the entry holds (case ignored), or
  ``field:word`` for one field: ``op_name``, ``shape``, ``label`` (the XLA label and
  the instruction read from it), ``source``, ``type`` (the allocation type),
  ``value`` (the value of the dump it was linked to).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hlotop.analysis.labels import NO_OP_NAME, TOP_SCOPE
from hlotop.analysis.oom_link import OomLink
from hlotop.analysis.scope import scope_of
from hlotop.model.oom import OomEntry

SORTS = ("size", "op_name", "shape")
GROUPS = ("scope", "shape")
FIELDS = ("op_name", "shape", "label", "source", "type", "value")
NO_SHAPE = "?"


def group_label(entry: OomEntry, key: str) -> str:
    """``entry``'s group under ``key`` (one of :data:`GROUPS`). Raises ValueError for
    another key."""
    if key == "scope":
        scope = scope_of(entry.op_name)
        return NO_OP_NAME if scope is None else scope or TOP_SCOPE
    if key == "shape":
        return entry.shape or NO_SHAPE
    raise ValueError(f"unknown OOM group key {key!r} (one of {', '.join(GROUPS)})")


def _fields(entry: OomEntry, link: OomLink | None) -> dict[str, str]:
    label = " ".join(x for x in (entry.label, entry.instruction, entry.opcode) if x)
    return {
        "op_name": entry.op_name or "",
        "shape": entry.shape or "",
        "label": label,
        "source": entry.source or "",
        "type": entry.allocation_type or "",
        "value": link.value.value.label if link is not None else "",
    }


def entry_matches(entry: OomEntry, link: OomLink | None, text: str) -> bool:
    """Whether ``entry`` (linked to ``link``, or None) passes the filter ``text`` (see
    the module's docstring); every entry passes an empty one. An unknown ``field:``
    is a word like any other."""
    words = text.casefold().split()
    if not words:
        return True
    fields = {k: v.casefold() for k, v in _fields(entry, link).items()}
    for word in words:
        name, colon, rest = word.partition(":")
        if colon and name in fields:
            if rest not in fields[name]:
                return False
        elif not any(word in v for v in fields.values()):
            return False
    return True


def _sort_key(sort: str, entries: Sequence[OomEntry]):
    if sort == "size":
        return lambda i: (-entries[i].size_bytes, i)
    if sort == "op_name":
        return lambda i: (not entries[i].op_name, entries[i].op_name or "", i)
    if sort == "shape":
        return lambda i: (not entries[i].shape, entries[i].shape or "", i)
    raise ValueError(f"unknown OOM sort {sort!r} (one of {', '.join(SORTS)})")


def sorted_entries(entries: Sequence[OomEntry], sort: str, indexes: Sequence[int]) -> list[int]:
    """``indexes`` (into ``entries``) in ``sort``'s order (one of :data:`SORTS`).
    Raises ValueError for another sort."""
    return sorted(indexes, key=_sort_key(sort, entries))


@dataclass(frozen=True, slots=True)
class EntryGroup:
    """The entries (indexes into the report's) of one group, in the sort's order;
    ``bytes`` their sizes' sum, ``exact`` whether every size is exact."""

    label: str
    members: tuple[int, ...]
    bytes: int
    exact: bool


def group_entries(
    entries: Sequence[OomEntry], key: str, indexes: Sequence[int], sort: str = "size"
) -> list[EntryGroup]:
    """``indexes`` (into ``entries``) grouped by ``key`` (:func:`group_label`): the
    groups of most bytes first (then by label), each group's entries in ``sort``'s
    order. Raises ValueError for an unknown key or sort."""
    found: dict[str, list[int]] = {}
    for i in indexes:
        found.setdefault(group_label(entries[i], key), []).append(i)
    groups = [
        EntryGroup(
            label,
            tuple(sorted_entries(entries, sort, members)),
            sum(entries[i].size_bytes for i in members),
            all(entries[i].size.exact for i in members),
        )
        for label, members in found.items()
    ]
    groups.sort(key=lambda g: (-g.bytes, g.label))
    return groups
