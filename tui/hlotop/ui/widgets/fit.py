"""One line of Rich text fitted to a width, with an ellipsis where it is cut.

Textual renders a widget's Rich ``Text`` without its ``overflow="ellipsis"`` (it
becomes Textual content, cropped at the widget's edge), and a Line API widget crops
its strips: a line cut there reads as whole ("· defa", "capacity 16.00"). Each
one-line widget fits its text with :func:`fitted` first.
"""

from __future__ import annotations

from rich.text import Text


def fitted(text: Text, width: int) -> Text:
    """``text`` if it fits in ``width`` cells; else a copy cut to ``width`` cells, its
    last one an ellipsis (``…``)."""
    if text.cell_len <= width:
        return text
    cut = text.copy()
    cut.truncate(max(width, 0), overflow="ellipsis")
    return cut
