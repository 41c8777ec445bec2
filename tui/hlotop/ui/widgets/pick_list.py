"""A row list whose rows are picked: it posts ``Highlighted`` when its cursor moves and
``Chosen`` on Enter (the ``jump`` action), each carrying the row's index. The
diagnostics and the advice lists are such lists; each nests its own subclasses of the
two messages, so their handlers are named for the list (``on_advice_list_chosen``)."""

from __future__ import annotations

from textual.message import Message

from hlotop.ui.widgets.row_list import RowList


class PickList(RowList):
    """:class:`RowList` with the two messages of a list whose rows lead somewhere."""

    class Highlighted(Message):
        """The cursor moved to row ``index``."""

        def __init__(self, index: int):
            super().__init__()
            self.index = index

    class Chosen(Message):
        """Enter on row ``index``."""

        def __init__(self, index: int):
            super().__init__()
            self.index = index

    def cursor_moved(self, index: int) -> None:
        self.post_message(self.Highlighted(index))

    # -- actions (bound in bindings.py) ---------------------------------------------
    def action_jump(self) -> None:
        if self.row_count():
            self.post_message(self.Chosen(self.cursor))
