"""→ and ← in a tree shown as a row list (the grouped live set, the diff's groups)."""

from __future__ import annotations

from typing import Any


class TreeKeys:
    """For a :class:`~hlotop.ui.widgets.row_list.RowList` whose rows are tree nodes
    (``key``, ``depth``, ``opens``), the open ones' keys in ``expanded``; the widget
    gives ``toggle_node(node, open_)``. Put it after ``RowList`` among the bases."""

    def expand_here(self) -> None:
        """Open the group under the cursor; if it is open, step to its first child."""
        view: Any = self
        node = view.current()
        if node is not None and node.opens and node.key not in view.expanded:
            view.toggle_node(node, True)
        elif node is not None and node.opens:
            view.set_cursor(view.cursor + 1, notify=True)

    def collapse_here(self) -> None:
        """Close the group under the cursor; if it is closed (or a leaf), go to the
        group it is under."""
        view: Any = self
        node = view.current()
        if node is None:
            return
        if node.opens and node.key in view.expanded:
            view.toggle_node(node, False)
            return
        for i in range(view.cursor - 1, -1, -1):
            if view.rows[i].depth < node.depth:
                view.set_cursor(i, notify=True, direction=-1)
                return
