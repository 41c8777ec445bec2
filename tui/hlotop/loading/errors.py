"""Input that cannot be opened as a dump."""

from __future__ import annotations


class LoadError(Exception):
    """The input cannot be opened as a dump. ``str()`` is ``"<path>: <reason>"``."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason
