"""A scrolling body of text (the help, the figures, an out-of-memory text) that takes
the keys a pager does: ``j``/``k`` a line, ``g``/``G`` the ends, as well as the arrows,
pgup/pgdn and home/end of Textual's ``VerticalScroll``."""

from __future__ import annotations

from textual.containers import VerticalScroll

from hlotop.ui.base.bindings import bindings


class ScrollBody(VerticalScroll):
    """A ``VerticalScroll`` with the keys of the ``scroll`` scope (:mod:`hlotop.ui.base.bindings`)."""

    BINDINGS = bindings("scroll")
