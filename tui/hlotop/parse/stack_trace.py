"""Grammar of the ``Stack trace breakdown for peak usage`` tree (``hlo_stack_trace.cc``,
since 2025-07; FORMATS.md section 6). Labels are raw op_names that may contain any
character, so each line is read from the right, from its fixed numeric suffix."""

from __future__ import annotations

from array import array

from hlotop.model import Diagnostic, StackTrace, StackTraceNode
from hlotop.parse.line_form import Field, LineForm, Lit
from hlotop.parse.tokens import PERCENT_RE, Sink, percent_field, spaced_int_field

STACK_HEADER_PREFIX = "  Stack trace breakdown for peak usage: "
# "  Stack trace breakdown for peak usage: 41 943 040 bytes"
HEADER = LineForm(
    "stack trace header",
    Lit(STACK_HEADER_PREFIX),
    spaced_int_field("total"),
    Lit(" bytes"),
    make=lambda total: total,
)

_SUFFIX_RE = (
    rf" \((?:{PERCENT_RE})%, total: [\d ]+ bytes, current: [\d ]+ bytes, remaining: [\d ]+ bytes\)$"
)


def _node(prefix, label, percent, total, current, remaining, line) -> StackTraceNode:
    return StackTraceNode(label, percent, total, current, remaining, _depth(prefix), line)


# "    ├── jit(f)/dot (12.5%, total: 1 024 bytes, current: 512 bytes, remaining: 0 bytes)"
TREE_LINE = LineForm(
    "stack trace line",
    # "  " then either "  " (top level) or guides and a connector.
    Field("prefix", r"  (?:(?:    |│   )*(?:├── |└── )|  )", "tree indentation"),
    Field(
        "label",
        r".*(?=" + _SUFFIX_RE + ")",
        "a label followed by (pct%, total: ...)",
        # The longest text the suffix follows, as the lookahead finds it: 20 700 tree
        # lines at 46 MB in 39 ms instead of 54.
        fast=r".*",
    ),
    Lit(" ("),
    percent_field(),
    Lit("%, total: "),
    spaced_int_field("total"),
    Lit(" bytes, current: "),
    spaced_int_field("current"),
    Lit(" bytes, remaining: "),
    spaced_int_field("remaining"),
    Lit(" bytes)"),
    make=_node,
    context=("line",),
)


def _depth(prefix: str) -> int:
    """Top level: 4 characters. Depth d >= 1: "  " + d guides of 4 + a connector of 4."""
    return 0 if len(prefix) == 4 else (len(prefix) - 6) // 4


class StackTraceSection:
    """Reads the tree from its pre-order lines into columns (label, percent, total,
    current, remaining, depth, line number), each node under its parent found by
    indentation depth; the nodes are made when the tree is first read
    (:meth:`StackTrace.of_columns`)."""

    def __init__(self, sink: Sink):
        self.sink = sink
        self.seen = False
        self.total = 0
        self.columns: tuple[list, ...] = ([], [], [], [], [], [], [])
        self.parents = array("q")  # each node's parent's position, -1 for a root
        self._path: list[int] = []  # positions of the nodes from a root to the last
        # TREE_LINE's columns of a run being read (prefix, label, percent, total,
        # current, remaining, line number)
        self._run: tuple[list, ...] = ([], [], [], [], [], [], [])

    def feed_header(self, line: str, lineno: int) -> bool:
        """Read ``Stack trace breakdown for peak usage: N bytes``."""
        self.seen = True
        total = HEADER.read(self.sink, line, lineno)
        self.total = total or 0
        return True

    def feed(self, line: str, lineno: int) -> None:
        """Read one tree line and hang it under its parent by indentation depth."""
        node = TREE_LINE.read(self.sink, line, lineno, lineno)
        if node is not None:
            fields = (node.label, node.percent, node.total, node.current, node.remaining)
            for column, value in zip(self.columns, fields, strict=False):
                column.append(value)
            self._hang([node.depth], [node.line])

    def take_run(self, lines: list[str], i: int, stop: int, first_line: int) -> int:
        """Read the tree lines from ``lines[i]`` on (at most to ``lines[stop]``) by their
        one-match path, into the columns; the index of the first line not taken (see
        :meth:`hlotop.parse.live_range.LiveRangeSection.take_run`)."""
        run = self._run
        j = TREE_LINE.take_columns(lines, i, stop, first_line, run)
        if j > i:
            prefixes, *fields, numbers = run
            for column, values in zip(self.columns, fields, strict=False):
                column += values
            self._hang([_depth(p) for p in prefixes], numbers)
            for column in run:
                column.clear()
        return j

    def _hang(self, depths: list[int], lines: list[int]) -> None:
        """Add the depths of the nodes just read to the depth column and their parents'
        positions to ``parents``."""
        path, parents = self._path, self.parents
        at = len(parents)
        for k, (depth, line) in enumerate(zip(depths, lines, strict=True), at):
            del path[depth:]
            if depth == 0 or not path:
                if depth:
                    self.sink.warning(line, "stack trace node deeper than its parent allows")
                parents.append(-1)
            else:
                parents.append(path[-1])
            path.append(k)
        self.columns[5].extend(depths)
        self.columns[6].extend(lines)

    def finish(self) -> StackTrace | None:
        """The tree, or None when the dump has no stack-trace block (before 2025-07)."""
        if not self.seen:
            return None
        columns = tuple(
            array("q", column) if k >= 2 else column for k, column in enumerate(self.columns)
        )
        return StackTrace.of_columns(self.total, columns, self.parents)


class TreeApart:
    """The lines of a ``Stack trace breakdown`` tree set aside unread by the live-range
    reader (:class:`~hlotop.parse.dump.ReadHooks`' ``tree_apart``), to be read by
    :meth:`read` once the rest of the file is handed on: a worker process sends a big
    module's live ranges first and its tree (20 000 lines at 46 MB, 0.1 s) after,
    while the process that takes them works out the figures, none of which needs it.

    Each piece is the tree's lines as the reader met them (a header, or a run of
    lines), with where their diagnostics go among the file's: the number of
    diagnostics the file had when they were set aside."""

    def __init__(self) -> None:
        self.pieces: list[tuple[int, list[str], int]] = []  # (at, lines, first line)

    def put(self, at: int, lines: list[str], first_line: int) -> None:
        """Set ``lines`` aside (1-based ``first_line`` is that of ``lines[0]``), whose
        diagnostics go after the file's first ``at``."""
        self.pieces.append((at, lines, first_line))

    def read(self, path: str) -> tuple[StackTrace | None, list[tuple[int, list[Diagnostic]]]]:
        """The tree (None if no header was set aside) and its diagnostics: each
        piece's, with the place they go among the file's (``at``). The lines are read
        as the live-range reader would have read them in turn: each header by
        :meth:`StackTraceSection.feed_header`, the rest by its one-match path, else
        line by line. ``path`` names the file in diagnostics. Raises nothing."""
        section = StackTraceSection(Sink(path))
        found: list[tuple[int, list[Diagnostic]]] = []
        for at, lines, first_line in self.pieces:
            section.sink = Sink(path)
            j = 0
            while j < len(lines):
                if lines[j].startswith(STACK_HEADER_PREFIX):
                    section.feed_header(lines[j], first_line + j)
                    j += 1
                    continue
                taken = section.take_run(lines, j, len(lines), first_line)
                if taken == j:
                    section.feed(lines[j], first_line + j)
                    taken += 1
                j = taken
            if section.sink.diagnostics:
                found.append((at, section.sink.diagnostics))
        return section.finish(), found
