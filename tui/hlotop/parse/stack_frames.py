"""Grammar of the stack-frame tables at the head of a module's HLO text
(``HloModule::ToString`` since jax 0.9: ``FileNames``, ``FunctionNames``,
``FileLocations``, ``StackFrames``).

From jax 0.9 on the instruction metadata in a buffer-assignment dump carries
``stack_frame_id=N`` instead of ``source_file``/``source_line``; these tables, in the
sibling ``<module>.<backend>_after_optimizations.txt``, turn the id into a Python stack.
Only the head of that file is read: the tables end where the first computation begins
(a 162 MB text of jax 0.4.35, whose computations start without ``%``, was read whole).
"""

from __future__ import annotations

from collections.abc import Iterable

from hlotop.model import SourceFrame, StackFrameTable
from hlotop.parse.line_form import Field, LineForm, Lit
from hlotop.parse.tokens import Sink, int_field


def _unquote(text: str) -> str:
    """A quoted name's text: the quotes off, its C escapes undone."""
    body = text[1:-1]
    return body.encode().decode("unicode_escape") if "\\" in body else body


def _fields(text: str) -> dict[str, int]:
    """``{file_name_id=1 line=12}`` -> ``{"file_name_id": 1, "line": 12}``."""
    return {key: int(value) for key, value in (f.split("=") for f in text[1:-1].split())}


def _table_line(what: str, value: Field) -> LineForm:
    """A table's line: an id, a space, then ``value``; read as ``(id, value)``."""
    return LineForm(
        what,
        int_field("id", "an id"),
        Lit(" "),
        value,
        make=lambda id, **value: (id, *value.values()),
    )


# `12 "train.py"` under FileNames and FunctionNames
NAME_LINE = _table_line(
    "stack-frame name", Field("name", r'"(?:[^"\\]|\\.)*"', "a quoted name", _unquote)
)
# `3 {file_name_id=1 function_name_id=2 line=12}` under FileLocations and StackFrames
ENTRY_LINE = _table_line(
    "stack-frame entry",
    Field("fields", r"\{[a-z_]+=\d+(?: [a-z_]+=\d+)*\}", "{key=N ...}", _fields),
)


def parse_stack_frames(path: str, lines: Iterable[str], sink: Sink) -> StackFrameTable | None:
    """Read the tables from the first lines of a module's HLO text.

    ``lines`` are the file's lines without newlines; reading stops at the first
    computation (a line starting with ``%`` or ``ENTRY``, or ending with ``{``: older
    XLA prints names without ``%``). Returns None when the file
    has no ``StackFrames`` table (jax < 0.9). Unreadable table lines become diagnostics.
    """
    # FileNames and FunctionNames: id -> name; FileLocations and StackFrames: id -> fields
    names: dict[str, dict[int, str]] = {"FileNames": {}, "FunctionNames": {}}
    entries: dict[str, dict[int, dict[str, int]]] = {"FileLocations": {}, "StackFrames": {}}
    current: dict[int, str] | dict[int, dict[str, int]] | None = None
    for lineno, line in enumerate(lines, 1):
        if line.startswith(("%", "ENTRY")) or line.endswith("{"):
            break  # a computation: the tables are over (jax < 0.9 prints no "%")
        if line in names:
            current, form = names[line], NAME_LINE
            continue
        if line in entries:
            current, form = entries[line], ENTRY_LINE
            continue
        if not line or current is None:
            continue
        parsed = form.read(sink, line, lineno)
        if parsed is not None:
            current[parsed[0]] = parsed[1]
    if not entries["StackFrames"]:
        return None
    file_names, function_names = names["FileNames"], names["FunctionNames"]
    locations = {}
    for lid, f in entries["FileLocations"].items():
        locations[lid] = SourceFrame(
            file=file_names.get(f.get("file_name_id", -1), "?"),  # ids are never negative
            function=function_names.get(f.get("function_name_id", -1), "?"),
            line=f.get("line", 0),
            column=f.get("column"),
        )
    frames = {}
    for fid, f in entries["StackFrames"].items():
        # XLA prints the parent as its id + 1; 1 means no parent (checked against the
        # Python stacks of real jax 0.10 dumps).
        frames[fid] = (f.get("file_location_id", 0), f.get("parent_frame_id", 1) - 1)
    return StackFrameTable(path, locations, frames)
