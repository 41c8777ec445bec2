"""Grammar of the stack-frame tables at the head of a module's HLO text
(``HloModule::ToString`` since jax 0.9: ``FileNames``, ``FunctionNames``,
``FileLocations``, ``StackFrames``).

From jax 0.9 on the instruction metadata in a buffer-assignment dump carries
``stack_frame_id=N`` instead of ``source_file``/``source_line``; these tables, in the
sibling ``<module>.<backend>_after_optimizations.txt``, turn the id into a Python stack.
Only the head of that file is read: the tables end where the first computation begins.
"""

from __future__ import annotations

from collections.abc import Iterable

from parsy import regex, seq, string

from hlotop.model import SourceFrame, StackFrameTable
from hlotop.parse.tokens import LineGrammar, Sink
from hlotop.shapes.grammar import integer

_escaped = (
    regex(r'"((?:[^"\\]|\\.)*)"', group=1)
    .map(lambda s: s.encode().decode("unicode_escape") if "\\" in s else s)
    .desc("a quoted name")
)
NAME_LINE = LineGrammar(seq(integer << string(" "), _escaped))
_fields = (
    (
        string("{")
        >> seq(regex(r"[a-z_]+") << string("="), integer).sep_by(string(" "))
        << string("}")
    )
    .map(dict)
    .desc("{key=N ...}")
)
ENTRY_LINE = LineGrammar(seq(integer << string(" "), _fields))


def parse_stack_frames(path: str, lines: Iterable[str], sink: Sink) -> StackFrameTable | None:
    """Read the tables from the first lines of a module's HLO text.

    ``lines`` are the file's lines without newlines; reading stops at the first
    computation (a line starting with ``%`` or ``ENTRY``). Returns None when the file
    has no ``StackFrames`` table (jax < 0.9). Unreadable table lines become diagnostics.
    """
    # FileNames and FunctionNames: id -> name; FileLocations and StackFrames: id -> fields
    names: dict[str, dict[int, str]] = {"FileNames": {}, "FunctionNames": {}}
    entries: dict[str, dict[int, dict[str, int]]] = {"FileLocations": {}, "StackFrames": {}}
    current: dict[int, str] | dict[int, dict[str, int]] | None = None
    for lineno, line in enumerate(lines, 1):
        if line.startswith(("%", "ENTRY")):
            break
        if line in names:
            current, grammar = names[line], NAME_LINE
            kind = line
            continue
        if line in entries:
            current, grammar = entries[line], ENTRY_LINE
            kind = line
            continue
        if not line or current is None:
            continue
        parsed = sink.parse(grammar, line, lineno, f"{kind} entry")
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
