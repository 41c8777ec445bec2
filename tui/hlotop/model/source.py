"""Where an instruction came from: Python frames (jax >= 0.9 stack-frame tables)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SourceFrame:
    """One Python frame: where an instruction came from."""

    file: str
    function: str
    line: int
    column: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line} ({self.function})"


@dataclass(frozen=True, slots=True)
class StackFrameTable:
    """The stack-frame tables of a module's HLO text (jax >= 0.9): ``stack_frame_id``
    -> frames, innermost first."""

    path: str
    locations: dict[int, SourceFrame]
    frames: dict[int, tuple[int, int]]  # id -> (location id, parent id or 0)

    def stack(self, frame_id: int) -> tuple[SourceFrame, ...]:
        """The Python stack of ``frame_id``, innermost frame first; () if unknown."""
        out: list[SourceFrame] = []
        seen: set[int] = set()
        while frame_id in self.frames and frame_id not in seen:
            seen.add(frame_id)
            location, parent = self.frames[frame_id]
            if location in self.locations:
                out.append(self.locations[location])
            frame_id = parent
        return tuple(out)
