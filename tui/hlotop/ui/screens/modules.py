"""The modules view: every module of a dump directory, ranked by XLA's peak.

The screen shows at once, saying it is reading the modules; the app ranks them in a
thread (:func:`hlotop.loading.directory.rank_modules`: each module's first look) and
hands the figures over (:meth:`ModulesScreen.show_ranking`), then loads the modules one
at a time in the background, largest first, and hands each one's sparkline and need
over (:meth:`ModulesScreen.fill`). Enter opens the row's module in the main screen
(the app does: :meth:`hlotop.ui.apps.modules_app.ModulesApp.open_entry`).
"""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Input, Static

from hlotop.loading.directory import ModuleEntry, ModuleFigures, platform_ranks
from hlotop.report.modules_report import REPORT_ONLY
from hlotop.ui.base.bindings import keys
from hlotop.ui.base.host import host
from hlotop.ui.widgets.key_bar import KeyBar
from hlotop.ui.widgets.modules_header import ModulesHeader
from hlotop.ui.widgets.modules_list import SCREEN_ACTIONS, SORTS, ModuleRow, ModulesList, need_of


def module_rows(figures: list[ModuleFigures]) -> list[ModuleRow]:
    """One row per program compiled alike (the same fingerprint), in ``figures``' order
    (XLA's peak first, within each platform), numbered from 1 within each platform; each
    row names all its modules. A report-only module's row says so where the sparkline
    goes (it has no live ranges)."""
    members: dict[str, list[str]] = {}
    for f in figures:
        if f.fingerprint:
            members.setdefault(f.fingerprint, []).append(f.entry.name)
    rows: list[ModuleRow] = []
    seen: set[str] = set()
    for f in figures:
        if f.fingerprint in seen:
            continue
        if f.fingerprint:
            seen.add(f.fingerprint)
        names = (
            tuple(members.get(f.fingerprint, [f.entry.name])) if f.fingerprint else (f.entry.name,)
        )
        rows.append(ModuleRow(0, f, names, need_of(f)))
        if f.error:
            rows[-1].note = "unreadable"
        elif f.entry.report_only:
            rows[-1].note = REPORT_ONLY
    for row, rank in zip(rows, platform_ranks([r.figures for r in rows]), strict=True):
        row.rank = rank
    return rows


class ModulesScreen(Screen):
    BINDINGS = [
        k.binding() for k in keys("modules") if k.action in SCREEN_ACTIONS - {"back_to_modules"}
    ]

    def __init__(self, directory: str, count: int, capacity: tuple[int, str] | None = None):
        super().__init__(id="modules-view")
        self.directory = directory
        name = Path(directory).name or Path(directory).resolve().name or directory
        self.header = ModulesHeader(name, count, capacity)
        self.list = ModulesList(capacity)
        self.list.waiting = f"reading {count} modules…" if count else "reading the modules…"
        self.capacity = capacity
        self.rows: list[ModuleRow] = []
        self._by_path: dict[Path, ModuleRow] = {}

    def compose(self) -> ComposeResult:
        yield self.header
        filter_box = Input(placeholder="filter by name", id="modules-filter")
        filter_box.display = False
        yield filter_box
        self.list.border_title = "Modules"
        self.list.border_subtitle = "⏎ open · s sort · / filter"
        yield self.list
        status = Static("", id="modules-status", markup=False)
        status.display = False
        yield status
        yield KeyBar()

    def on_mount(self) -> None:
        self.list.focus()

    # -- what the app hands over -------------------------------------------------------
    def show_progress(self, done: int, total: int) -> None:
        self.header.show(progress=(done, total))
        self.list.waiting = f"reading {total} modules… {done}/{total}"
        self.list.refresh()

    def show_ranking(self, figures: list[ModuleFigures]) -> None:
        self.rows = module_rows(figures)
        self._by_path = {r.figures.entry.path: r for r in self.rows}
        self.list.set_rows(self.rows)
        self._header_counts(figures=figures)
        self._hidden_columns()

    def fill(self, path: Path, spark: str | None, note: str | None, need: int | None) -> None:
        """The module at ``path`` was loaded: its sparkline (or why none) and its need."""
        row = self._by_path.get(path)
        if row is None:
            return
        row.spark, row.note = spark, note
        if need is not None:
            row.need = need
        self.list.row_changed(row)
        self._header_counts()

    def set_status(self, text: str) -> None:
        """One line under the list (none when ``text`` is empty)."""
        status = self.query_one("#modules-status", Static)
        status.update(text)
        status.display = bool(text)

    def _header_counts(self, **more) -> None:
        over = pending = None
        if self.capacity is not None:
            over = sum(1 for r in self.rows if r.need is not None and r.need > self.capacity[0])
            pending = sum(1 for r in self.rows if r.need is None and not r.filled)
        self.header.show(
            rows=len(self.rows),
            sort=self.list.sort,
            filter=self.list.filter,
            shown=len(self.list.shown),
            over=over,
            pending=pending,
            **more,
        )

    def _hidden_columns(self) -> None:
        hidden = self.list.hidden
        note = (
            f"{len(hidden)} column{'s' if len(hidden) > 1 else ''} hidden (narrow)"
            if hidden
            else ""
        )
        self.list.border_subtitle = " · ".join(x for x in (note, "⏎ open · s sort · / filter") if x)

    def on_resize(self) -> None:
        self.call_after_refresh(self._hidden_columns)

    # -- actions (bound in bindings.py) ----------------------------------------------
    def current_entry(self) -> ModuleEntry | None:
        row = self.list.current()
        return row.figures.entry if row is not None else None

    def action_open_module(self) -> None:
        entry = self.current_entry()
        if entry is not None:
            host(self).open_entry(entry)

    def action_cycle_sort(self) -> None:
        self.list.set_sort(SORTS[(SORTS.index(self.list.sort) + 1) % len(SORTS)])
        self._header_counts()

    def action_filter(self) -> None:
        box = self.query_one("#modules-filter", Input)
        box.display = True
        self.set_focus(box)  # now: the keys typed straight after "/" land in it

    def action_clear_filter(self) -> None:
        box = self.query_one("#modules-filter", Input)
        if not box.display and not self.list.filter:
            return
        box.value = ""
        box.display = False
        self.list.set_filter("")
        self._header_counts()
        self.set_focus(self.list)

    def on_input_changed(self, event: Input.Changed) -> None:
        self.list.set_filter(event.value)
        self._header_counts()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if not event.value:
            event.input.display = False
        self.set_focus(self.list)
