"""Which files a module was read from, and what could not be read in them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """A line hlotop could not use, or a problem with the dump as a whole.

    ``line`` is 1-based; 0 means the problem concerns the whole file.
    ``severity`` is ``"error"`` (a line was skipped) or ``"warning"``.
    """

    path: str
    line: int
    message: str
    severity: str = "error"

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.severity}: {self.message}"


@dataclass(frozen=True, slots=True)
class DumpFile:
    path: str
    kind: str  # "combined", "buffer-assignment", "values", "live-range",
    # "memory-usage-report", or "module-text" (read only for its stack frames)
