"""Pane 3 grouped (``v``): the live set at the timeline's step as a tree of groups, one
level per grouping key (``phase,scope`` first), each level sorted by bytes, with the
group's bytes, share of the step's total, value count and a bar of that share (full:
the step's total); the values under the last level. Nodes below the threshold fold into
``N values below X``.

Grouping reads every value's op_name the first time (seconds at 100 MB), so it runs in
a thread worker; each grouping is kept (:class:`hlotop.ui.view_models.group_tree.Groupings`), and
one already made is shown at once. While a new one is made, the last one stays on
screen, its step in the title, and the summary says which step is coming.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from rich.text import Text
from textual import events
from textual.message import Message
from textual.worker import get_current_worker

from hlotop.analysis.grouping import ACCOUNTINGS, Grouping, narrowed
from hlotop.analysis.value_filter import Matches
from hlotop.model import ModuleDump
from hlotop.model.memory_space import space_names
from hlotop.report.text_fit import NAME_BREAKS, SCOPE_BREAKS, wrap
from hlotop.safe_text import drawn
from hlotop.ui.base.bindings import bindings
from hlotop.ui.base.host import host
from hlotop.ui.base.selection import SelectionOwner
from hlotop.ui.view_models.group_tree import (
    DEFAULT_THRESHOLD,
    PRESETS,
    THRESHOLDS,
    Groupings,
    GroupTree,
    Key,
    Node,
    export_csv,
)
from hlotop.ui.widgets.filter_bar import filter_note
from hlotop.ui.widgets.legend import peak_style, plain, space_style
from hlotop.ui.widgets.row_list import RowList
from hlotop.ui.widgets.tree_keys import TreeKeys
from hlotop.units import human_bytes, with_commas

SIZE_W = 9
COUNT_W = 6
_EIGHTHS = " ▏▎▍▌▋▊▉"
# Up to this many values in the dump, a grouping is made on the UI thread once the
# labeller is made (20 ms at 3k values); above, in a thread worker.
_AT_ONCE = 5000
# A notification's cells around its text: its severity bar, padding and a spare cell
# (its width is at most 90% of the screen: hlotop.tcss).
_TOAST_FRAME = 4


def bar(part: int, whole: int, width: int) -> str:
    """``part`` of ``whole`` as a bar of block characters ``width`` cells long (eighths
    of a cell at its end), padded with spaces."""
    eighths = round(8 * width * part / whole) if whole > 0 and part > 0 else 0
    eighths = max(eighths, 1) if part > 0 else 0
    full, rest = divmod(min(eighths, 8 * width), 8)
    text = "█" * full + (_EIGHTHS[rest] if rest else "")
    return text.ljust(width)


def share_text(part: int, total: int) -> str:
    return f"{100 * part / total:5.1f}%" if total else "    -%"


class GroupedView(RowList, TreeKeys):
    """The grouped live set: one row per open node (:class:`hlotop.ui.view_models.group_tree.Node`).

    Its dialogs (the icicle, the grouping-keys prompt) are screens, which a widget does
    not import (the ui's layers): it asks its screen for them with
    :class:`IcicleWanted` and :class:`KeysWanted`."""

    BINDINGS = bindings("grouped")

    class IcicleWanted(Message):
        """``i``: show ``grouping`` (the one drawn) as an icicle."""

        def __init__(self, grouping: Grouping):
            super().__init__()
            self.grouping = grouping

    class KeysWanted(Message):
        """``B``: prompt for grouping keys, ``current`` filled in; the screen hands
        the keys typed to :meth:`GroupedView.set_keys`."""

        def __init__(self, current: tuple[str, ...]):
            super().__init__()
            self.current = current

    def __init__(
        self,
        dump: ModuleDump,
        *,
        id: str | None = "grouped",
        owner: SelectionOwner | None = None,
        groupings: Groupings | None = None,
    ):
        super().__init__(id=id, classes="pane")
        self.dump = dump
        self.owner = owner
        self.groupings = groupings if groupings is not None else Groupings(dump)
        self.names = space_names(dump)
        self.step = dump.analysis.peak_step or 0
        self.keys: tuple[str, ...] = PRESETS[0]
        self.accounting = ACCOUNTINGS[0]
        self.threshold = DEFAULT_THRESHOLD
        self.active = False  # set by the screen: grouping only while the view is on
        self.group_tree: GroupTree | None = None
        self._whole: Grouping | None = None  # the grouping shown, before the filter
        self.matches: Matches | None = None  # the filter (f)
        self.by_name = False  # each level sorted by name (s), not by bytes
        self.rows: list[Node] = []
        self.expanded: set[Key] = set()
        self.selected: int | None = None  # the selected value, wherever it was chosen
        self.error: str | None = None
        self.last_export: Path | None = None  # the file e wrote last
        self._opened: set[tuple[str, ...]] = set()  # keys whose largest group was opened
        self._bar_w = 10
        self.border_title = "3 Grouped"
        self.border_subtitle = "b group by · t/T fold · u padded · v flat · e csv"

    # -- what is asked for ------------------------------------------------------------
    @property
    def wanted(self) -> tuple[int, tuple[str, ...], str]:
        return (self.step, self.keys, self.accounting)

    @property
    def pending(self) -> bool:
        """A grouping other than the one shown is being made."""
        g = self.group_tree.grouping if self.group_tree is not None else None
        return self._can_group() and (g is None or (g.step, g.keys, g.accounting) != self.wanted)

    @property
    def bar_w(self) -> int:
        """The width, in cells, of the bar column (6, 10 or 16 as the pane widens): each
        row's bar is its share of the step's total in that many cells."""
        return self._bar_w

    def _can_group(self) -> bool:
        return self.dump.preview is None and bool(self.dump.analysis.live_bytes)

    def set_active(self, active: bool) -> None:
        """The screen shows this view (True) or the flat live set (False)."""
        self.active = active
        if active:
            self.regroup()

    def set_step(self, step: int) -> None:
        """Follow the timeline's cursor to ``step``."""
        self.step = step
        if self.active:
            self.regroup()

    def set_keys(self, keys: tuple[str, ...]) -> None:
        self.keys = tuple(keys)
        self.regroup()

    def regroup(self) -> None:
        """Show the grouping of :attr:`wanted`: at once if it was made before, else
        made by a thread worker (the last one stays on screen meanwhile)."""
        if not self._can_group():
            self.group_tree, self.rows = None, []
            self._refresh_all()
            return
        found = self.groupings.cached(*self.wanted)
        if found is None and self.groupings.labelled and len(self.dump.analysis.values) <= _AT_ONCE:
            found = self.groupings.get(*self.wanted)  # milliseconds: in this key's frame
        if found is not None:
            self._show(found)
            return
        self._refresh_all()  # the summary says what is coming
        self.run_worker(
            partial(self._make, self.wanted),
            name="group",
            group="group",
            thread=True,
            exclusive=True,
        )

    def _make(self, wanted: tuple[int, tuple[str, ...], str]) -> None:
        """In a thread worker: the grouping of ``wanted``, handed to the UI thread."""
        worker = get_current_worker()
        cancelled = lambda: worker.is_cancelled  # noqa: E731
        host(self).yield_to_input(cancelled)  # the cursor held down: group where it stops
        if cancelled():
            return
        try:
            grouping = self.groupings.get(*wanted)
        except ValueError as err:
            if not cancelled():
                self.app.call_from_thread(self._failed, str(err))
            return
        if not cancelled():
            self.app.call_from_thread(self._arrived, grouping)

    def _arrived(self, grouping: Grouping) -> None:
        if (grouping.step, grouping.keys, grouping.accounting) == self.wanted:
            self._show(grouping)

    def _failed(self, error: str) -> None:
        self.error = error
        self._refresh_all()

    def action_icicle(self) -> None:
        """The grouping shown, as an icicle (the screen opens
        :class:`~hlotop.ui.screens.icicle.IcicleScreen`)."""
        shown = self.group_tree.grouping if self.group_tree is not None else None
        if shown is None or self.pending:
            self.notify("The grouping is still being made: i draws it once it is shown.")
            return
        self.post_message(self.IcicleWanted(shown))

    def export(self, step: int, grouped: bool, dump_path: str) -> None:
        """Write the live set at ``step`` as CSV, its groups (``grouped``) or its values,
        in a thread worker (grouping may read every op_name), and say where."""
        wanted = (step, self.keys, self.accounting)
        if self.groupings.cached(*wanted) is None:
            self.notify(f"Grouping the live set at step {step} to write it…", timeout=3)
        work = partial(export_csv, self.groupings, *wanted, grouped, dump_path)
        self.run_worker(partial(self._export, work), name="export", group="export", thread=True)

    def _export(self, work) -> None:
        """In a thread worker: ``work()``, then a notification."""
        worker = get_current_worker()
        try:
            path, rows = work()
        except (OSError, ValueError) as err:
            path, note = None, f"Not written: {err}"
        else:
            # The path on lines of its own, broken only after a / . _ or - (the
            # notification folded it mid-word): whole on one line where it fits.
            width = max(20, self.app.size.width * 9 // 10 - _TOAST_FRAME)
            note = f"{rows} written to\n{wrap(str(path), width, SCOPE_BREAKS, NAME_BREAKS)}"
        if not worker.is_cancelled:  # not the app closing
            self.last_export = path or self.last_export
            severity = "information" if path else "error"
            self.app.call_from_thread(
                self.notify, note, severity=severity, timeout=12, markup=False
            )

    # -- the tree -----------------------------------------------------------------------
    def _show(self, grouping: Grouping) -> None:
        """Draw ``grouping``; what was open stays open, the cursor on the same node."""
        here = self.rows[self.cursor].key if self.rows else None
        self.error = None
        self._whole = grouping
        if self.matches is not None:
            grouping = narrowed(grouping, self.matches.ids)
        self.group_tree = GroupTree(grouping, self.threshold, self.by_name)
        if grouping.keys not in self._opened and self.group_tree.roots:
            self._opened.add(grouping.keys)  # the largest group open, once per keys
            self.expanded.add(self.group_tree.roots[0].key)
        self._relist(here)

    def _relist(self, here: Key | None) -> None:
        """The rows again (after a node opened or closed, or a new tree), the cursor
        on the node ``here`` if it is shown, else on the selected value or its group."""
        self.rows = self.group_tree.visible(self.expanded) if self.group_tree is not None else []
        self._refresh_all()
        at = self._row_of(here) if here is not None else None
        if at is not None:
            self.place_cursor(at)
        elif self.selected is not None:
            self.show_value(self.selected)

    def _row_of(self, key: Key) -> int | None:
        for i, node in enumerate(self.rows):
            if node.key == key:
                return i
        return None

    def _refresh_all(self) -> None:
        self.rows_changed()
        self._update_title()

    def set_threshold(self, delta: int) -> None:
        """One step up (``delta`` 1) or down (-1) :data:`THRESHOLDS`."""
        at = min(range(len(THRESHOLDS)), key=lambda i: abs(THRESHOLDS[i] - self.threshold))
        self.threshold = THRESHOLDS[max(0, min(at + delta, len(THRESHOLDS) - 1))]
        if self._whole is not None:
            self._show(self._whole)

    # -- order and filter (s, f) ----------------------------------------------------------
    def cycle_sort(self) -> str:
        """Sort each level by name, or by bytes again (``s``); returns which."""
        self.by_name = not self.by_name
        if self._whole is not None:
            self._show(self._whole)
        return "name" if self.by_name else "bytes"

    def set_filter(self, matches: Matches | None) -> None:
        """Group only the values ``matches`` keeps (None: every value)."""
        self.matches = matches
        if self._whole is not None:
            self._show(self._whole)

    def _update_title(self) -> None:
        g = self.group_tree.grouping if self.group_tree is not None else None
        if g is None:
            self.border_title = "3 Grouped"
            return
        order = " · by name" if self.by_name else ""
        self.border_title = (
            f"3 Grouped · step {g.step} · {','.join(g.keys)} · "
            f"{g.accounting} {human_bytes(g.total_bytes)}{order}{filter_note(self.matches)}"
        )

    # -- RowList --------------------------------------------------------------------------
    def row_count(self) -> int:
        return len(self.rows)

    def pinned_lines(self) -> list[Text]:
        a = self.dump.analysis
        if self.dump.preview is not None:
            return [Text("live set: loading… (it comes with the live ranges)", style="italic")]
        if not a.live_bytes:
            return [Text("No live ranges in this dump: nothing to group per step.", style="dim")]
        if self.error is not None:
            return [Text(self.error, style="bold")]
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        tree = self.group_tree
        if tree is None:
            text.append(f"grouping the live set at step {self.step} by {','.join(self.keys)}…")
            if not self.groupings.labelled:
                text.append(" (reading every op_name, once)", style="dim")
            return [text]
        g = tree.grouping
        count = with_commas(sum(len(r.values) for r in g.rows))
        whole = self._whole
        if self.matches is not None and whole is not None:
            text.append(
                f"{count} of {with_commas(sum(len(r.values) for r in whole.rows))} values · "
            )
        else:
            text.append(f"{count} values · ")
        text.append(f"step {g.step}/{a.max_time}", style="bold")
        if g.step == a.peak_step:
            text.append(" ◆ XLA peak", style=peak_style(plain(self)))
        if self.pending:
            text.append(f" · grouping step {self.step}…", style="italic")
        elif tree.limit:
            text.append(f" · fold <{100 * tree.threshold:g}% {human_bytes(tree.limit)}")
        else:
            text.append(" · none folded")
        return [text]

    def header_lines(self) -> list[Text]:
        if self.group_tree is None:
            return []
        levels = " › ".join(self.group_tree.grouping.keys)
        return [
            Text(
                f"{'bytes':>{SIZE_W}} {'share':>6} {'values':>{COUNT_W}} "
                f"{'':<{self._bar_w}} {levels} › value",
                no_wrap=True,
                end="",
            )
        ]

    def content_width(self) -> int:
        return self._fixed_w() + max((self._tree_w(n) for n in self.rows), default=0)

    def _fixed_w(self) -> int:
        """The cells before the tree: bytes, share, count and bar columns."""
        return SIZE_W + 1 + 6 + 1 + COUNT_W + 1 + self._bar_w + 1

    @staticmethod
    def _tree_w(node: Node) -> int:
        info = node.info
        if info is None:
            return 2 * node.depth + 2 + len(node.label)
        return (
            2 * node.depth
            + 3
            + len(str(info.value.id))
            + len(node.label)
            + 2
            + len(info.shape or "?")
        )

    def render_row(self, index: int) -> Text:
        node = self.rows[index]
        tree = self.group_tree
        total = tree.total if tree is not None else 0
        flat = plain(self)
        text = Text(no_wrap=True, end="")
        text.append(f"{human_bytes(node.bytes):>{SIZE_W}}", style="bold")
        text.append(f" {share_text(node.bytes, total)} ")
        text.append(f"{node.count if node.opens else '':>{COUNT_W}} ", style="dim")
        info = node.info
        colour = space_style(info.color, flat) if info is not None else ("" if flat else "cyan")
        # Scaled to the step's total, as the share beside it: a group of 22% draws a
        # shorter bar than one of 61%, whatever its siblings.
        text.append(bar(node.bytes, total, self._bar_w), style=colour)
        text.append(" " + "  " * node.depth)
        if node.kind == "value" and info is not None:
            text.append("· ", style="dim")
            text.append(f"{info.value.id} {drawn(info.value.label)}", style=colour)
            text.append(f"  {drawn(info.shape or '?')}", style="dim italic")
            return text
        text.append("▾ " if node.key in self.expanded else "▸ ", style="dim")
        text.append(drawn(node.label), style="dim italic" if node.kind == "below" else "")
        return text

    def on_resize(self, event: events.Resize) -> None:
        width = self.size.width
        bar_w = 6 if width < 70 else 10 if width < 96 else 16
        if bar_w != self._bar_w:
            self._bar_w = bar_w
            self.rows_changed()
        super().on_resize(event)

    # -- selection ----------------------------------------------------------------------
    def current(self) -> Node | None:
        return self.rows[self.cursor] if self.rows else None

    def cursor_moved(self, index: int) -> None:
        node = self.current()
        if node is not None and node.info is not None:
            self.selected = node.info.value.id
            if self.owner is not None:
                self.owner.select_value(self.selected, self.id)

    def show_value(self, value_id: int | None) -> bool:
        """Put the cursor on ``value_id`` if its row is shown (no message); else on
        the nearest open node above it, not drawn as the selection. None: no value is
        selected."""
        self.selected = value_id
        if value_id is None or self.group_tree is None:
            self.hide_selection()
            return False
        for key in self.group_tree.lineage(value_id):
            at = self._row_of(key)
            if at is not None:
                self.place_cursor(at, center=True)
                if key[0] == "v":
                    return True
                break
        self.hide_selection()
        return False

    # -- actions ------------------------------------------------------------------------
    def action_activate(self) -> None:
        node = self.current()
        if node is None:
            return
        if node.opens:
            self.toggle_node(node, node.key not in self.expanded)
        elif node.info is not None and self.owner is not None:
            self.selected = node.info.value.id
            self.owner.select_value(self.selected, self.id, open_detail=True)

    def action_expand(self) -> None:
        self.expand_here()

    def action_collapse(self) -> None:
        self.collapse_here()

    def toggle_node(self, node: Node, open_: bool) -> None:
        if open_:
            self.expanded.add(node.key)
        else:
            self.expanded.discard(node.key)
        self._relist(node.key)

    def action_next_keys(self) -> None:
        """The next preset of :data:`PRESETS` (the first after typed keys)."""
        at = PRESETS.index(self.keys) + 1 if self.keys in PRESETS else 0
        self.set_keys(PRESETS[at % len(PRESETS)])

    def action_type_keys(self) -> None:
        """Ask for grouping keys (the screen opens
        :class:`~hlotop.ui.screens.group_keys.GroupKeysScreen`)."""
        self.post_message(self.KeysWanted(self.keys))

    def action_threshold(self, delta: int) -> None:
        self.set_threshold(delta)

    def action_toggle_accounting(self) -> None:
        at = ACCOUNTINGS.index(self.accounting)
        self.accounting = ACCOUNTINGS[(at + 1) % len(ACCOUNTINGS)]
        self.regroup()
