"""What shows while the dump loads: its name and size, the stage, and the time so far."""

from __future__ import annotations

from time import perf_counter

from textual.app import ComposeResult
from textual.containers import Center, Middle
from textual.screen import Screen
from textual.widgets import Label, LoadingIndicator


class LoadingScreen(Screen):
    """A loading indicator with the file's name (never its absolute path) and size,
    the stage the load is in (:meth:`set_stage`) and the seconds it has taken."""

    def __init__(self, name: str, size: str | None = None):
        super().__init__(id="loading")
        self.file_label = name + (f" ({size})" if size else "")
        self.stage = "reading the dump and indexing its value records"
        self._started = perf_counter()

    def compose(self) -> ComposeResult:
        with Middle():
            with Center():
                yield Label(f"Loading {self.file_label}", id="loading-label", markup=False)
            with Center():
                yield Label(self._stage_text(), id="loading-stage", markup=False)
            yield LoadingIndicator()

    def on_mount(self) -> None:
        self.set_interval(0.5, self._tick)

    def _stage_text(self) -> str:
        seconds = perf_counter() - self._started
        return f"{self.stage} …" + (f" {seconds:.0f} s" if seconds >= 1 else "")

    def _tick(self) -> None:
        self.query_one("#loading-stage", Label).update(self._stage_text())

    def set_stage(self, stage: str) -> None:
        self.stage = stage
        if self.is_mounted:
            self._tick()
