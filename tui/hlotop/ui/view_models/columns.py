"""Column widths of the row lists, worked out from the rows' texts (off the UI thread
where a list is long: :class:`~hlotop.ui.view_models.tree_layout.TreeLayout`)."""

from __future__ import annotations

from collections.abc import Iterable


def longest(lengths: Iterable[int], cap: int, least: int = 0) -> int:
    """The largest of ``lengths`` (cells; at least ``least``), stopping at ``cap``: a
    column that is never wider than ``cap`` need not look at every row of a big dump."""
    best = least
    for n in lengths:
        if n > best:
            best = n
            if best >= cap:
                return cap
    return best
