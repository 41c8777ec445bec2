"""Finding values by name, id or op_name: the search behind ``/`` in the browser.

The op_name lives in each value's from-instruction metadata. Reading it means parsing
that text, so a search first keeps only the values whose raw text contains the query
(a C-speed substring test), then reads the op_name of those few through the grammar.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from hlotop.analysis.analyze import ValueInfo


def find_values(values: Sequence[ValueInfo], query: str) -> list[ValueInfo]:
    """Values whose label (``name{index}``) or op_name contains ``query`` (case-
    insensitive), or whose id is ``query``.

    Ranked: exact name or id, then names starting with the query, other name matches,
    then op_name matches; within each, largest logical bytes first, then id.
    Returns an empty list for an empty query. Raises nothing.
    """
    q = query.strip().lower()
    if not q:
        return []
    ranked = []
    for info in values:
        label = info.value.label.lower()
        if label == q or info.value.name.lower() == q or str(info.value.id) == q:
            rank = 0
        elif label.startswith(q):
            rank = 1
        elif q in label:
            rank = 2
        elif _op_name_contains(info, q):
            rank = 3
        else:
            continue
        ranked.append((rank, -info.logical_bytes, info.value.id, info))
    ranked.sort(key=lambda r: r[:3])
    return [r[3] for r in ranked]


def _op_name_contains(info: ValueInfo, q: str) -> bool:
    text = info.used.instruction_text if info.used is not None else None
    if not text or q not in text.lower():
        return False  # the op_name is part of the text: no match there, none in it
    op_name = info.op_name
    return op_name is not None and q in op_name.lower()


_REF_ID = re.compile(r"<(\d+) ")  # the id of a value as XLA prints it: <123 fusion.12{1} @0>


def values_named(values: Sequence[ValueInfo], text: str) -> list[ValueInfo]:
    """The values ``text`` names exactly: an id (``123``), a value as XLA prints it
    (``<123 fusion.12{1} @0>``, ``fusion.12{1}``), or an instruction (``fusion.12``:
    its values, by id; one unless its shape is a tuple). [] when none. Raises
    nothing."""
    q = text.strip()
    ref = _REF_ID.match(q)
    if q.isdigit() or ref is not None:  # instruction names start with a letter or _
        vid = int(q) if ref is None else int(ref.group(1))
        return [i for i in values if i.value.id == vid]
    exact = [i for i in values if i.value.label == q]
    if exact:
        return exact
    return [i for i in values if i.value.name == q]


def close_names(values: Sequence[ValueInfo], text: str, n: int = 5) -> list[str]:
    """Up to ``n`` value labels (``name{index}``) close to ``text``
    (:func:`difflib.get_close_matches`), among those of the same stem (the name up
    to its first ``.``, ``{`` or ``-``) when there are some, closest first."""
    q = text.strip()
    labels = sorted({i.value.label for i in values})
    stem = re.split(r"[.{\-]", q, maxsplit=1)[0]
    pool = [label for label in labels if stem and label.startswith(stem)] or labels
    return difflib.get_close_matches(q, pool, n=n, cutoff=0.5)
