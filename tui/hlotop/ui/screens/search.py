"""Search for a value by name or op_name (case-insensitive substring).

On a small dump the search (:func:`hlotop.analysis.search.find_values`) runs as the query is
typed. On a big one it runs in a thread worker, because an op_name is only known once
its value record is parsed (~0.1 ms each, seconds for 100k values): names and ids are
matched first, then only the values whose raw record text holds the query have their
op_names read, largest first, in batches; the list fills in as they come, and a new
query stops the old search.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option
from textual.worker import Worker, get_current_worker

from hlotop.analysis.search import find_values
from hlotop.model import UsedValues, ValueInfo
from hlotop.safe_text import printable
from hlotop.ui.base.bindings import bindings
from hlotop.ui.base.host import host
from hlotop.ui.view_models.spaces import space_label
from hlotop.ui.widgets.legend import plain, space_style
from hlotop.units import human_bytes, with_commas

MAX_RESULTS = 200
_IN_WORKER_ABOVE = 2000  # values: above, a search may parse too many records to wait for
_DEBOUNCE_ABOVE = 20000  # values: wait until typing pauses
_BATCH = 512  # op_names read between two looks at the query and two list updates


def _names_match(info: ValueInfo, q: str) -> bool:
    """Whether find_values would match ``info`` by its name or id (ranks 0-2), which
    needs no record."""
    return q in info.value.label.lower() or str(info.value.id) == q


def _text_hits(values: Sequence[ValueInfo], q: str, cancelled) -> list[ValueInfo]:
    """The values whose record text holds ``q`` (case-insensitive): those whose op_name
    may. Records not kept as text (a small dump read whole): every value."""
    records = values[0].records if values else None
    if not isinstance(records, UsedValues):
        return list(values)
    wanted = set(records.find_text(q, cancelled))
    return [v for v in values if v.value.id in wanted]


def _records_problem(values: Sequence[ValueInfo]) -> str | None:
    """Why the values' records could not be read back from their file, if so."""
    records = values[0].records if values else None
    return records.problem if isinstance(records, UsedValues) else None


class _Results(OptionList, can_focus=False):
    """The matches; the input keeps the focus, ↑/↓ move the highlight, which is marked
    ``▶`` as well as by its colour (a grey like the others' under ``NO_COLOR``)."""

    def __init__(self, *, id: str | None = None):
        super().__init__(id=id)
        self._bodies: list[Text] = []  # each match's prompt, without the marker
        self._marked: int | None = None

    def show(self, matches: list[tuple[str, Text]], highlighted: int | None) -> None:
        """List ``matches`` (option id, prompt), ``highlighted`` highlighted (or none)."""
        self._bodies, self._marked = [], None  # nothing to unmark as they go
        self.clear_options()
        self._bodies = [body for _, body in matches]
        self.add_options(Option(self._prompt(body, False), id=i) for i, body in matches)
        self.highlighted = highlighted
        self._mark(self.highlighted)

    @staticmethod
    def _prompt(body: Text, marked: bool) -> Text:
        prompt = Text("▶ " if marked else "  ", style="bold", no_wrap=True, overflow="ellipsis")
        prompt.append_text(body)
        return prompt

    def watch_highlighted(self, highlighted: int | None) -> None:
        super().watch_highlighted(highlighted)
        self._mark(highlighted)

    def _mark(self, index: int | None) -> None:
        if index == self._marked:
            return
        for i, marked in ((self._marked, False), (index, True)):
            if i is not None and i < min(len(self._bodies), self.option_count):
                self.replace_option_prompt_at_index(i, self._prompt(self._bodies[i], marked))
        self._marked = index


class SearchScreen(ModalScreen["int | None"]):
    """Dismisses with the chosen value's id, or None. ``query``: the last search's,
    shown selected (typing replaces it) with its matches, ``chosen`` (its value chosen
    last) highlighted."""

    BINDINGS = bindings("search")

    def __init__(
        self, values: Sequence[ValueInfo], names=None, query: str = "", chosen: int | None = None
    ):
        super().__init__()
        self.values = values
        self.names = names
        self.query_text = query
        self._remembered: str | None = query or None  # until a key is typed
        self._chosen = chosen  # the value the last search chose
        self.matches: list[ValueInfo] = []
        self._timer: Timer | None = None
        self._worker: Worker | None = None
        self._choose_when_done = False

    def compose(self) -> ComposeResult:
        with Vertical(id="search-body", classes="modal-body") as body:
            body.border_title = "Search values · name or op_name · ⏎ select · esc close"
            yield Input(
                value=self.query_text,
                placeholder="/ e.g. fusion.12 or args[0]",
                id="search-input",
                compact=True,
            )
            yield _Results(id="search-results")
            yield Label("", id="search-count", markup=False)

    AUTO_FOCUS = "#search-input"

    def on_mount(self) -> None:
        self._update(self.query_text)

    def set_values(self, values: Sequence[ValueInfo]) -> None:
        """Search ``values`` from now on (the whole dump, once it has replaced its
        preview), the query typed so far again."""
        self.values = values
        if self.is_attached:
            self._update(self.query_one(Input).value)

    @property
    def complete(self) -> bool:
        """Whether :attr:`matches` are all the query's (no search still running)."""
        return self._worker is None or self._worker.is_finished

    @property
    def searching(self) -> bool:
        """Whether the query typed is still to be searched (on a big dump the search
        waits for typing to pause) or its search is still running: the count then says
        "so far", or shows the last query's."""
        return self._timer is not None or not self.complete

    def on_key(self, event: events.Key) -> None:
        """Keys typed right after ``/``, before the input has the focus, still count;
        the first replaces the last search's query, as it would once selected."""
        field = self.query_one(Input)
        if not field.has_focus and event.is_printable and event.character:
            event.stop()
            field.select_on_focus = False  # the focus must not select what is typed
            self.set_focus(field)
            if field.value == self._remembered:
                field.value = ""
            self._remembered = None
            field.insert_text_at_cursor(event.character)

    def on_input_changed(self, event: Input.Changed) -> None:
        if len(self.values) < _DEBOUNCE_ABOVE:
            self._update(event.value)
            return
        # A big dump: wait until typing pauses rather than search on every key.
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(0.15, lambda: self._update(event.value))

    def _update(self, query: str) -> None:
        self._timer = None
        self.query_text = query
        if len(self.values) <= _IN_WORKER_ABOVE or not query.strip():
            if self._worker is not None:
                self._worker.cancel()
                self._worker = None
            matches = find_values(self.values, query)
            problem = _records_problem(self.values) if query.strip() else None
            self._show(query, matches, True, f"op_names not read: {problem}" if problem else "")
            return
        self._show(query, [], done=False)
        self._worker = self.run_worker(
            partial(self._search, query), name="search", group="search", thread=True, exclusive=True
        )

    def _search(self, query: str) -> None:
        """Runs in a thread worker: names and ids, then op_names, shown as they come."""
        worker = get_current_worker()
        cancelled = lambda: worker.is_cancelled  # noqa: E731
        q = query.strip().lower()
        names = [v for v in self.values if _names_match(v, q)]
        matches = find_values(names, query)  # ranks 0-2, no record read
        self._post(worker, query, matches, False, "reading op_names")
        others = [v for v in self.values if not _names_match(v, q)]
        candidates = _text_hits(others, q, cancelled)
        problem = _records_problem(others)
        if problem is not None:  # the records' file changed or went: names only
            self._post(worker, query, matches, True, f"op_names not read: {problem}")
            return
        # find_values orders op_name matches by logical bytes, then id: batches taken
        # in that order keep it.
        candidates.sort(key=lambda v: (-v.logical_bytes, v.value.id))
        pause = host(self).yield_to_input
        for start in range(0, len(candidates), _BATCH):
            pause(cancelled)  # keys first (typing a new query cancels this one)
            if cancelled():
                return
            matches = matches + find_values(candidates[start : start + _BATCH], query)
            done = min(start + _BATCH, len(candidates))
            self._post(
                worker,
                query,
                matches,
                done == len(candidates),
                ""
                if done == len(candidates)
                else f"reading op_names {with_commas(done)}/{with_commas(len(candidates))}",
            )
        if not candidates:
            self._post(worker, query, matches, True)

    def _post(
        self, worker: Worker, query: str, matches: list[ValueInfo], done: bool, note: str = ""
    ) -> None:
        if not worker.is_cancelled:
            self.app.call_from_thread(self._show, query, matches, done, note)

    def _show(self, query: str, matches: list[ValueInfo], done: bool, note: str = "") -> None:
        if query != self.query_text or not self.is_attached:
            return  # an older search's result
        shown = [o.id for o in self.query_one(_Results).options[:MAX_RESULTS]]
        self.matches = matches
        results = self.query_one(_Results)
        if [str(i.value.id) for i in matches[:MAX_RESULTS]] != shown:
            highlighted = results.highlighted
            shown_now = matches[:MAX_RESULTS]
            if self._chosen is not None and query == self._remembered:
                # The last search again: its match chosen last highlighted.
                ids = [i.value.id for i in shown_now]
                highlighted = ids.index(self._chosen) if self._chosen in ids else highlighted
            results.show(
                [(str(info.value.id), self._prompt(info)) for info in shown_now],
                min(highlighted or 0, len(shown_now) - 1) if shown_now else None,
            )
        count = len(matches)
        more = f" (first {MAX_RESULTS} shown)" if count > MAX_RESULTS else ""
        searching = f" · {note}" if done and note else ""
        searching = searching if done else f" so far · {note or 'searching'} …"
        self.query_one("#search-count", Label).update(
            f"{with_commas(count)} match{'es' if count != 1 else ''}{more}{searching}"
            if query.strip()
            else "type part of a value name (fusion.12) or of an op_name (args[0])"
        )
        if done and self._choose_when_done:
            self.action_choose()

    def _prompt(self, info: ValueInfo) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f"{info.value.id:>6} ", style="dim")
        space = space_style(info.color, plain(self))
        text.append(printable(info.value.label), style=f"bold {space}")
        text.append(f"  {human_bytes(info.logical_bytes)}  ")
        text.append(space_label(info.color, self.names), style=space)
        op_name = info.op_name
        if op_name:
            text.append(f"  {printable(op_name)}", style="dim")
        return text

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_choose()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is not None:
            self.dismiss(int(event.option.id))

    def action_choose(self) -> None:
        if self._timer is not None:  # Enter before the pause: search now
            self._timer.stop()
            self._update(self.query_one(Input).value)
        results = self.query_one(_Results)
        chosen = (
            results.get_option_at_index(results.highlighted).id
            if results.highlighted is not None and self.matches
            else None
        )
        if chosen is not None:
            self.dismiss(int(chosen))
        elif self._worker is not None and self._worker.is_running:
            self._choose_when_done = True  # Enter before any match: take the first

    def action_results_down(self) -> None:
        self.query_one(_Results).action_cursor_down()

    def action_results_up(self) -> None:
        self.query_one(_Results).action_cursor_up()

    def action_close(self) -> None:
        self.dismiss(None)
