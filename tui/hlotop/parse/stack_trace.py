"""Grammar of the ``Stack trace breakdown for peak usage`` tree (``hlo_stack_trace.cc``,
since 2025-07; FORMATS.md section 6). Labels are raw op_names that may contain any
character, so each line is read from the right, from its fixed numeric suffix."""

from __future__ import annotations

from parsy import regex, seq, string

from hlotop.model import StackTrace, StackTraceNode
from hlotop.parse.tokens import Sink, spaced_int

STACK_HEADER_PREFIX = "  Stack trace breakdown for peak usage: "
HEADER = string(STACK_HEADER_PREFIX) >> spaced_int << string(" bytes")

# Prefix: "  " then either "  " (top level) or guides + a connector.
_prefix = regex(r"  (?:(?:    |│   )*(?:├── |└── )|  )").desc("tree indentation")
_suffix = seq(
    regex(r" \((\d+(?:\.\d+)?)%, total: ", group=1).map(float),
    spaced_int << string(" bytes, current: "),
    spaced_int << string(" bytes, remaining: "),
    spaced_int << string(" bytes)"),
)
_SUFFIX_RE = (
    r" \(\d+(?:\.\d+)?%, total: [\d ]+ bytes, current: [\d ]+ bytes, remaining: [\d ]+ bytes\)$"
)
TREE_LINE = seq(
    _prefix,
    regex(r".*(?=" + _SUFFIX_RE + ")").desc("a label followed by (pct%, total: ...)"),
    _suffix,
)


def _depth(prefix: str) -> int:
    """Top level: 4 characters. Depth d >= 1: "  " + d guides of 4 + a connector of 4."""
    return 0 if len(prefix) == 4 else (len(prefix) - 6) // 4


class StackTraceSection:
    """Builds the tree from pre-order lines, using each line's indentation depth."""

    def __init__(self, sink: Sink):
        self.sink = sink
        self.seen = False
        self.total = 0
        self.roots: list[StackTraceNode] = []
        self._path: list[StackTraceNode] = []

    def feed_header(self, line: str, lineno: int) -> bool:
        """Read ``Stack trace breakdown for peak usage: N bytes``."""
        self.seen = True
        total = self.sink.parse(HEADER, line, lineno, "stack trace header")
        self.total = total or 0
        return True

    def feed(self, line: str, lineno: int) -> None:
        """Read one tree line and hang it under its parent by indentation depth."""
        parsed = self.sink.parse(TREE_LINE, line, lineno, "stack trace line")
        if parsed is None:
            return
        prefix, label, (pct, total, current, remaining) = parsed
        depth = _depth(prefix)
        node = StackTraceNode(label, pct, total, current, remaining, depth, lineno)
        del self._path[depth:]
        if depth == 0 or not self._path:
            if depth:
                self.sink.warning(lineno, "stack trace node deeper than its parent allows")
            self.roots.append(node)
        else:
            self._path[-1].children.append(node)
        self._path.append(node)

    def finish(self) -> StackTrace | None:
        """The tree, or None when the dump has no stack-trace block (before 2025-07)."""
        return StackTrace(self.total, tuple(self.roots)) if self.seen else None
