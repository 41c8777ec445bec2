"""What every section reader of a dump file is: the one interface the section reader
(:func:`hlotop.parse.dump.parse_text`) drives, whichever section's lines come.

A section starts at its header line (the table :data:`hlotop.parse.dump.HEADERS`
says which header opens which reader) and runs until the next header. Its reader is
handed those lines in order: first as many as it takes in one go by their one-match
path (:meth:`Section.take_run`, where a big dump's lines are read), then the line that
stopped the run (:meth:`Section.feed`: read, reported, or refused as not its own).
When the file ends, :meth:`Section.finish` gives what it read as fields of
:class:`~hlotop.model.ParsedSections`.

A new section is one class with these members, one row of ``HEADERS``, and its field of
``ParsedSections``.
"""

from __future__ import annotations

from typing import Any, Protocol


class Section(Protocol):
    """A reader of one section of a dump file (see the module's docstring)."""

    @property
    def stage(self) -> str | None:
        """What a loader's ``stage`` hook is told while this section is read
        (``"allocations"``: the hook hears ``"allocations 45%"``), or None."""
        ...

    @property
    def expects(self) -> str:
        """Its lines in words, for the diagnostic of a line it refuses (``"expected
        <expects>"``)."""
        ...

    def take_run(self, lines: list[str], i: int, stop: int, first_line: int) -> int:
        """Read the ordinary lines from ``lines[i]`` on, at most up to ``lines[stop]``,
        by their one-match path; ``first_line`` is the 1-based line number of
        ``lines[0]``. Returns the index of the first line not taken (``i`` if none
        was), which then goes to :meth:`feed`."""
        ...

    def feed(self, line: str, lineno: int, next_line: str | None) -> bool:
        """Read one line (1-based ``lineno``; ``next_line`` the line after it, None at
        the end of the text). True if it was this section's (read, or reported as
        unreadable), False if not: it is then reported as unexpected."""
        ...

    def finish(self) -> dict[str, Any]:
        """What was read, as fields of :class:`~hlotop.model.ParsedSections` by name.
        May report problems only the whole section shows (its sink's diagnostics)."""
        ...
