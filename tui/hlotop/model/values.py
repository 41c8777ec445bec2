"""Values and their records, in XLA's own terms (``HloValue``, ``HloPosition``, ``HloUse``).

Sizes are bytes (``int``). A ``ShapeIndex`` is a tuple of ints; ``None`` where XLA
prints no index (the defining instruction's shape is not a tuple). The kinds a big dump
has hundreds of thousands of are slotted, hashable dataclasses, read-only by convention
rather than ``frozen=True``: a frozen dataclass's ``__init__`` sets each field through
``object.__setattr__``, which made building a 100 MB dump's model 6x slower (1.7 us
against 0.26 us a value).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from hlotop.shapes import Shape, shape_of

ShapeIndex = tuple[int, ...]


def format_shape_index(index: ShapeIndex | None) -> str:
    """``(0, 1)`` -> ``"{0,1}"``; ``()`` -> ``"{}"``; ``None`` -> ``""``."""
    if index is None:
        return ""
    return "{" + ",".join(str(i) for i in index) + "}"


@dataclass(slots=True, unsafe_hash=True)
class HloValue:
    """A value (logical buffer), as ``HloValue::ToShortString`` prints it:
    ``<id name{index} (phi) @color>``."""

    id: int
    name: str
    shape_index: ShapeIndex | None
    is_phi: bool = False
    color: int | None = None

    @property
    def key(self) -> tuple[str, ShapeIndex]:
        """(instruction name, index) as the live-range section names it."""
        return (self.name, self.shape_index or ())

    @property
    def label(self) -> str:
        return self.name + format_shape_index(self.shape_index)

    def __str__(self) -> str:
        phi = " (phi)" if self.is_phi else ""
        color = "" if self.color is None else f" @{self.color}"
        return f"<{self.id} {self.label}{phi}{color}>"


@dataclass(slots=True, unsafe_hash=True)
class ValueSlot:
    """One ``value:`` line of an allocation: where a value lives in it."""

    value: HloValue
    allocation: int
    offset: int
    size: int
    shape: str  # with layout, e.g. "f32[8,128]{1,0:T(8,128)S(1)}"
    line: int

    @property
    def parsed_shape(self) -> Shape | None:
        """:attr:`shape` read once per distinct text (None if it does not read)."""
        return shape_of(self.shape)


@dataclass(slots=True, unsafe_hash=True)
class HloPosition:
    """Where a value appears: an instruction output, at an index if it is a tuple."""

    instruction: str
    shape_index: ShapeIndex | None = None

    def __str__(self) -> str:
        idx = format_shape_index(self.shape_index)
        return f"{self.instruction} {idx}" if idx else self.instruction


@dataclass(slots=True, unsafe_hash=True)
class HloUse:
    """An instruction operand that reads a value."""

    instruction: str
    operand_number: int
    operand_index: ShapeIndex | None = None

    def __str__(self) -> str:
        idx = format_shape_index(self.operand_index)
        return f"{self.instruction}, operand {self.operand_number}" + (f" {idx}" if idx else "")


@dataclass(slots=True, unsafe_hash=True)
class InstructionText:
    """What hlotop reads out of a ``from instruction:`` line (HloInstruction::ToString).

    The rest of the text stays opaque in ``text``.
    """

    text: str
    name: str | None = None
    shape: str | None = None  # the instruction's whole shape, with layout
    opcode: str | None = None
    op_type: str | None = None
    op_name: str | None = None
    source_file: str | None = None
    source_line: int | None = None
    stack_frame_id: int | None = None  # jax >= 0.9, instead of source_file/line


class RecordTextReader(Protocol):
    """What turns the text a record keeps into model objects, on first use: the
    parser's grammar for position, use and from-instruction lines
    (:data:`hlotop.parse.values.RECORD_TEXT`). The model only holds it."""

    def positions(self, block: str) -> tuple[HloPosition, ...]:
        """The positions in a block of ``"  name {i}\n"`` lines."""
        ...

    def uses(self, block: str) -> tuple[HloUse, ...]:
        """The uses in a block of ``"  name, operand N {i}\n"`` lines (or ``"  (none)\n"``)."""
        ...

    def instruction(self, text: str) -> InstructionText:
        """What hlotop reads out of a ``from instruction:`` text."""
        ...


class UsedValue:
    """One record of the ``Used values:`` section (``HloValue::ToString``).

    ``positions`` and ``uses`` (None: "uses are not initialized yet.") are tuples of
    :class:`HloPosition` and :class:`HloUse`. A record read by its one-match path
    (:meth:`printed`) keeps those lines as printed and makes the objects on first use,
    with ``reader``: ``--json`` writes them back as text, and most records are never
    looked at. The defining instruction is read from its text the same way.
    """

    __slots__ = (
        "value",
        "instruction_text",
        "line",
        "reader",
        "_positions",
        "_uses",
        "_positions_text",
        "_uses_text",
    )

    def __init__(
        self,
        value: HloValue,
        positions: tuple[HloPosition, ...],
        uses: tuple[HloUse, ...] | None,
        instruction_text: str | None,
        line: int,
        reader: RecordTextReader | None = None,
    ):
        self.value = value
        self._positions: tuple[HloPosition, ...] | None = positions
        self._uses: tuple[HloUse, ...] | None = uses
        self.instruction_text = instruction_text  # None before 2021-09 (no such line)
        self.line = line
        self.reader = reader
        self._positions_text: str | None = None
        self._uses_text: str | None = None

    @classmethod
    def printed(
        cls,
        value: HloValue,
        positions_text: str,
        uses_text: str,
        instruction_text: str | None,
        line: int,
        reader: RecordTextReader,
    ) -> UsedValue:
        """A record whose position and use lines (each ``"  ...\n"``; the uses may be
        ``"  (none)\n"``) were already checked against their grammar, kept as text."""
        record = object.__new__(cls)  # no __init__: one per record of --json
        record.value, record.instruction_text, record.line = value, instruction_text, line
        record.reader = reader
        record._positions = record._uses = None
        record._positions_text, record._uses_text = positions_text, uses_text
        return record

    @property
    def positions(self) -> tuple[HloPosition, ...]:
        if self._positions is None:
            assert self.reader is not None and self._positions_text is not None
            self._positions = self.reader.positions(self._positions_text)
        return self._positions

    @property
    def uses(self) -> tuple[HloUse, ...] | None:
        if self._uses is None and self._uses_text is not None:
            assert self.reader is not None
            self._uses = self.reader.uses(self._uses_text)
        return self._uses

    def position_texts(self) -> list[str]:
        """The positions as XLA printed them (``str`` of each): ``["tuple.1 {0}"]``."""
        if self._positions_text is not None:
            return self._positions_text[2:-1].split("\n  ")
        return [str(p) for p in self.positions]

    def use_texts(self) -> list[str] | None:
        """The uses as XLA printed them (``str`` of each), None if not initialised."""
        if self._uses_text is not None:
            return [] if self._uses_text == "  (none)\n" else self._uses_text[2:-1].split("\n  ")
        return None if self.uses is None else [str(u) for u in self.uses]

    def _key(self) -> tuple:
        return (self.value, self.positions, self.uses, self.instruction_text, self.line)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, UsedValue):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"UsedValue(value={self.value!r}, positions={self.positions!r}, "
            f"uses={self.uses!r}, instruction_text={self.instruction_text!r}, "
            f"line={self.line!r})"
        )

    @property
    def instruction(self) -> InstructionText | None:
        """The defining instruction, read from its text on first use (cached): most
        records of a big dump are never looked at, so they are never parsed."""
        if self.instruction_text is None or self.reader is None:
            return None
        return self.reader.instruction(self.instruction_text)
