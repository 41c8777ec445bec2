"""Tokens shared by the section grammars, and the diagnostics sink they report to."""

from __future__ import annotations

from dataclasses import dataclass, field

from parsy import Parser, ParseError, eof, regex, seq, string

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


# The same value reference as one regular expression, for single-token line grammars.
NAME_RE = r"[^\s{}<>:,]+"
VALUE_REF_RE = rf"<(\d+) ({NAME_RE})(\{{[\d,]*\}})?( \(phi\))?(?: @(\d+))?>"


def value_from_groups(vid: str, vname: str, index: str | None, phi: str | None,
                      color: str | None) -> HloValue:
    """An HloValue from the five groups of :data:`VALUE_REF_RE`."""
    return HloValue(int(vid), vname, index_of(index), phi is not None,
                    int(color) if color is not None else None)


# <id name{index} (phi) @color>  (HloValue::ToShortString, since 2019-09)
value_ref: Parser = seq(
    string("<") >> integer,
    string(" ") >> name,
    shape_index.optional(),
    string(" (phi)").optional(),
    (string(" @") >> integer).optional(),
).combine(_make_value) << string(">").desc("'>' closing the value")


def index_of(text: str | None) -> tuple[int, ...] | None:
    """The digits of a ShapeIndex match (``"0,1"`` or ``"{0,1}"``) as a tuple; None stays None."""
    if text is None:
        return None
    text = text.strip("{}")
    return tuple(int(i) for i in text.split(",")) if text else ()


@dataclass(frozen=True)
class LineGrammar:
    """The grammar of one kind of line.

    ``fine`` is the grammar proper, built from small tokens; it decides what a line
    means and, when a line does not fit, which column and token were expected.
    ``fast`` is a single-regex token for the common shape of the line, giving the same
    value in one match (a dump has millions of lines). A line ``fast`` rejects goes
    to ``fine``, so ``fast`` can only make reading quicker, never change its result.
    """

    fine: Parser
    fast: Parser | None = None
    _whole: Parser = field(init=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "_whole", self.fine << eof)


class Sink:
    """Collects the diagnostics of one file. ``line`` numbers are 1-based."""

    def __init__(self, path: str, diagnostics: list[Diagnostic] | None = None):
        self.path = path
        self.diagnostics = diagnostics if diagnostics is not None else []

    def error(self, line: int, message: str) -> None:
        self.diagnostics.append(Diagnostic(self.path, line, message, "error"))

    def warning(self, line: int, message: str) -> None:
        self.diagnostics.append(Diagnostic(self.path, line, message, "warning"))

    def parse(self, grammar: Parser | LineGrammar, text: str, line: int, what: str):
        """Read the whole of ``text`` with ``grammar``; on failure record a diagnostic
        naming the column and what was expected, and return None."""
        if isinstance(grammar, LineGrammar):
            if grammar.fast is not None:
                result = grammar.fast(text, 0)
                if result.status:
                    return result.value
            parser = grammar._whole
        else:
            parser = grammar << eof
        try:
            return parser.parse_partial(text)[0]
        except ParseError as err:
            expected = " or ".join(sorted(err.expected))
            found = text[err.index:err.index + 24]
            found = repr(found) if found else "the end of the line"
            self.error(line, f"{what}: column {err.index + 1}: expected {expected}, found {found}")
            return None
