"""What shows while the dump loads in a thread worker."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Center, Middle
from textual.screen import Screen
from textual.widgets import Label, LoadingIndicator


class LoadingScreen(Screen):
    """A loading indicator with the file's name (never its absolute path)."""

    def __init__(self, label: str):
        super().__init__(id="loading")
        self.label = label

    def compose(self) -> ComposeResult:
        with Middle():
            with Center():
                yield Label(f"Loading {self.label} …", id="loading-label", markup=False)
            yield LoadingIndicator()
