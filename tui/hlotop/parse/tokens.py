"""Tokens shared by the section grammars, and the diagnostics sink they report to."""

from __future__ import annotations

from parsy import Parser, ParseError, regex, seq, string

from hlotop.model import Diagnostic, HloValue
from hlotop.parse.shapes import integer, shape_index

# NameUniquer names are [A-Za-z0-9_.-]; be tolerant of anything that cannot be a
# delimiter in the lines that carry names (space, braces, angle brackets, colon, comma).
name = regex(r"[^\s{}<>:,]+").desc("an instruction name")
rest_of_line = regex(r".*").desc("text")
spaced_int = regex(r"\d{1,3}(?: \d{3})*|\d+").map(lambda s: int(s.replace(" ", ""))).desc(
    "a byte count like 41 943 040")
human_bytes_token = regex(r"-?(\d+(\.\d+)?)(B|KiB|MiB|GiB|TiB|PiB|EiB)").desc(
    "a size like 36.0KiB")


def _make_value(vid, vname, index, phi, color) -> HloValue:
    return HloValue(vid, vname, index, phi is not None, color)


# <id name{index} (phi) @color>  (HloValue::ToShortString, since 2019-09)
value_ref: Parser = seq(
    string("<") >> integer,
    string(" ") >> name,
    shape_index.optional(),
    string(" (phi)").optional(),
    (string(" @") >> integer).optional(),
).combine(_make_value) << string(">").desc("'>' closing the value")


class Sink:
    """Collects the diagnostics of one file. ``line`` numbers are 1-based."""

    def __init__(self, path: str, diagnostics: list[Diagnostic] | None = None):
        self.path = path
        self.diagnostics = diagnostics if diagnostics is not None else []

    def error(self, line: int, message: str) -> None:
        self.diagnostics.append(Diagnostic(self.path, line, message, "error"))

    def warning(self, line: int, message: str) -> None:
        self.diagnostics.append(Diagnostic(self.path, line, message, "warning"))

    def parse(self, parser: Parser, text: str, line: int, what: str):
        """Run ``parser`` over the whole of ``text``; on failure record a diagnostic
        naming the column and what was expected, and return None."""
        try:
            return parser.parse(text)
        except ParseError as err:
            expected = " or ".join(sorted(err.expected))
            found = text[err.index:err.index + 24]
            found = repr(found) if found else "the end of the line"
            self.error(line, f"{what}: column {err.index + 1}: expected {expected}, found {found}")
            return None
