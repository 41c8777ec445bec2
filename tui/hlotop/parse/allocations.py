"""Grammar of the ``BufferAssignment:`` section (``BufferAllocation::ToShortString`` and
``BufferAllocation::ToString``; FORMATS.md sections 3.2-3.3)."""

from __future__ import annotations

from parsy import Parser, alt, regex, seq, string

from hlotop.model import BufferAllocation, HloValue, ValueSlot
from hlotop.parse.tokens import (
    KNOWN_INDEXES,
    VALUE_REF_RE,
    LineGrammar,
    Sink,
    human_bytes_token,
    index_of,
    rest_of_line,
    value_from_groups,
    value_ref,
)
from hlotop.shapes.grammar import integer, shape_index

_shape_text = regex(r"[^|]*").desc("a shape")

# Attributes in the fixed order XLA prints them; each yields a (field, value) pair.
_parameter = seq(
    string(", parameter ") >> integer,
    (string(", shape |") >> _shape_text << string("|")).optional(),
    string(" at ShapeIndex ") >> shape_index,
).combine(lambda p, s, i: [("parameter", p), ("parameter_shape", s), ("parameter_shape_index", i)])

_attribute = alt(
    (string(", color ") >> integer).map(lambda c: [("color", c)]),
    _parameter,
    (string(", output shape is |") >> _shape_text << string("|")).map(
        lambda s: [("output_shape", s)]
    ),
    string(", constant").result([("is_constant", True)]),
    string(", thread-local").result([("is_thread_local", True)]),
    string(", maybe-live-out").result([("maybe_live_out", True)]),
    string(", preallocated-temp").result([("is_preallocated_temp", True)]),
).desc(
    "an allocation attribute (color, parameter, output shape, constant, thread-local, "
    "maybe-live-out, preallocated-temp)"
)


def allocation_line(size: Parser) -> Parser:
    """``allocation N: [0xPTR, ]size S[, attributes]:`` with ``size`` read by ``size``
    (plain bytes in the dump, human-readable in the memory-usage report).
    Yields ``(index, pointer, size, attributes dict)``."""
    return seq(
        string("allocation ") >> integer << string(": "),
        (regex(r"0x[0-9a-fA-F]+|\(nil\)|[0-9a-fA-F]+(?=, size)") << string(", ")).optional(),
        string("size ") >> size,
        _attribute.many().map(lambda groups: dict(kv for g in groups for kv in g)),
    ) << string(":").desc("':' ending the allocation line")


_FLAGS = ("is_constant", "is_thread_local", "maybe_live_out", "is_preallocated_temp")


def _allocation_from_groups(
    index, pointer, size, color, param, param_shape, param_index, output, *flags
):
    attrs: dict = {}
    if color is not None:
        attrs["color"] = int(color)
    if param is not None:
        attrs.update(
            parameter=int(param),
            parameter_shape=param_shape,
            parameter_shape_index=index_of(param_index),
        )
    if output is not None:
        attrs["output_shape"] = output
    attrs.update((name, True) for name, flag in zip(_FLAGS, flags, strict=False) if flag)
    return [int(index), pointer, int(size), attrs]


def _head_of(index: int, pointer: str | None, size: int, attrs: dict) -> tuple:
    """The fields of a :class:`BufferAllocation` before its values, in its order, from
    what :data:`ALLOCATION_LINE` yields."""
    return (
        index,
        size,
        attrs.get("color", 0),
        attrs.get("parameter"),
        attrs.get("parameter_shape"),
        attrs.get("parameter_shape_index"),
        attrs.get("output_shape"),
        *(attrs.get(flag, False) for flag in _FLAGS),
        pointer,
    )


def _head_from_groups(
    index,
    pointer,
    size,
    color,
    param,
    param_shape,
    param_index,
    output,
    constant,
    thread_local,
    live_out,
    temp,
) -> tuple:
    """:func:`_head_of` straight from the groups of :data:`ALLOCATION_LINE`'s pattern."""
    if param is None:
        param_shape = param_index = None
    else:
        param = int(param)
        param_index = index_of(param_index)
    return (
        int(index),
        int(size),
        0 if color is None else int(color),
        param,
        param_shape,
        param_index,
        output,
        constant is not None,
        thread_local is not None,
        live_out is not None,
        temp is not None,
        pointer,
    )


ALLOCATION_LINE = LineGrammar(
    allocation_line(integer),
    r"allocation (\d+): (?:(0x[0-9a-fA-F]+|\(nil\)), )?size (\d+)(?:, color (\d+))?"
    r"(?:, parameter (\d+)(?:, shape \|([^|]*)\|)? at ShapeIndex \{([\d,]*)\})?"
    r"(?:, output shape is \|([^|]*)\|)?(, constant)?(, thread-local)?"
    r"(, maybe-live-out)?(, preallocated-temp)?:\Z",
    _allocation_from_groups,
)
REPORT_ALLOCATION_LINE = allocation_line(human_bytes_token)

# " value: <id name @c> (size=S,offset=O): shape"
VALUE_LINE = LineGrammar(
    seq(
        string(" value: ") >> value_ref,
        string(" (size=") >> integer,
        string(",offset=") >> integer << string("): "),
        rest_of_line,
    ),
    rf" value: {VALUE_REF_RE} \(size=(\d+),offset=(\d+)\): (.*)\Z",
    lambda i, n, x, p, c, size, offset, shape: [
        value_from_groups(i, n, x, p, c),
        int(size),
        int(offset),
        shape,
    ],
)

# Before 2019-09: "  <value text> [offset,size]: shape"
LEGACY_VALUE_LINE = seq(
    regex(r"\s+") >> value_ref,
    regex(r".*? \[") >> integer,
    string(",") >> integer << string("]: "),
    rest_of_line,
)

_VALUE_RE = VALUE_LINE.pattern
_ALLOCATION_RE = ALLOCATION_LINE.pattern

REUSED_HEADER = " reused by buffers of a different color:"
REUSED_LINE = seq(string("  value: ") >> value_ref, string(" (color=") >> integer << string(")"))


class AllocationSection:
    """Reads allocation blocks line by line; ``feed`` says whether a line was its own."""

    def __init__(self, sink: Sink):
        self.sink = sink
        self.allocations: list[BufferAllocation] = []
        self._head: tuple | None = None  # the open allocation's fields (_head_of)
        self._line = 0  # its line
        self._slots: list[ValueSlot] = []
        self._reused: list = []
        self._broken = False  # the current allocation line was reported as unreadable

    def _close(self) -> None:
        if self._head is not None:
            self.allocations.append(
                BufferAllocation(*self._head, tuple(self._slots), tuple(self._reused), self._line)
            )
        self._head, self._slots, self._reused = None, [], []

    def _open(self, head: tuple, lineno: int) -> None:
        self._close()
        self._head, self._line, self._broken = head, lineno, False

    def take_run(self, lines: list[str], i: int, stop: int, first_line: int) -> int:
        """Read the ordinary allocation and value lines from ``lines[i]`` on (at most up
        to ``lines[stop]``), each by its one-match path; ``first_line`` is the 1-based
        line number of ``lines[0]``. Returns the index of the first line not taken
        (``i`` if none was), which goes through :meth:`feed` and the section reader's
        dispatch. Most lines of a big dump come here, hence the inlining."""
        match_value = _VALUE_RE.match
        match_allocation = _ALLOCATION_RE.match
        indexes = KNOWN_INDEXES
        slots = self._slots
        current = self._head[0] if self._head is not None else None
        j = i
        while j < stop:
            line = lines[j]
            m = match_value(line)
            if m is not None:
                if current is None:
                    break
                vid, vname, index, phi, color, size, offset, shape = m.groups()
                if index is not None:
                    index = indexes[index] if index in indexes else index_of(index)
                slots.append(
                    ValueSlot(
                        HloValue(
                            int(vid),
                            vname,
                            index,
                            phi is not None,
                            None if color is None else int(color),
                        ),
                        current,
                        int(offset),
                        int(size),
                        shape,
                        first_line + j,
                    )
                )
            else:
                m = match_allocation(line)
                if m is None:
                    break
                head = _head_from_groups(*m.groups())
                self._open(head, first_line + j)
                current = head[0]
                slots = self._slots
            j += 1
        return j

    def feed(self, line: str, lineno: int) -> bool:
        """Read one line (1-based ``lineno``) of ``BufferAssignment:``; True if it was an
        allocation-section line (read, or reported as unreadable), False if not ours."""
        if line.startswith("allocation "):
            self._close()
            self._broken = True  # until it is read
            parsed = self.sink.parse(ALLOCATION_LINE, line, lineno, "allocation line")
            if parsed is not None:
                self._open(_head_of(*parsed), lineno)
            return True
        if line.startswith(" value: "):
            parsed = self.sink.parse(VALUE_LINE, line, lineno, "value line")
            if parsed is not None:
                self._add_slot(parsed, lineno)
            return True
        if line == REUSED_HEADER:
            return True
        if line.startswith("  value: "):
            parsed = self.sink.parse(REUSED_LINE, line, lineno, "cross-color reuse line")
            if parsed is not None and self._head is not None:
                self._reused.append(tuple(parsed))
            return True
        if line.startswith("  <") and "]: " in line:
            parsed = self.sink.parse(LEGACY_VALUE_LINE, line, lineno, "value line (pre-2019)")
            if parsed is not None:
                value, offset, size, shape_text = parsed
                self._add_slot((value, size, offset, shape_text), lineno)
            return True
        return False

    def _add_slot(self, parsed, lineno: int) -> None:
        value, size, offset, shape_text = parsed
        if self._head is None:
            if self._broken:
                return  # its allocation line was already reported
            self.sink.error(
                lineno,
                "value line outside an allocation: expected 'allocation N: size S:' before it",
            )
            return
        self._slots.append(ValueSlot(value, self._head[0], offset, size, shape_text, lineno))

    def finish(self) -> list[BufferAllocation]:
        """The allocations read, in dump order."""
        self._close()
        return self.allocations
