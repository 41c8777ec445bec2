"""The parsed dump, in XLA's own terms.

Plain dataclasses, read-only once made: filled by :mod:`hlotop.parse` and read by
:mod:`hlotop.analysis.analyze` and the views. Sizes and offsets are bytes (``int``); times are
schedule steps (``int``, an index into the flattened instruction sequence). A
``ShapeIndex`` is a tuple of ints; ``None`` where XLA prints no index (the defining
instruction's shape is not a tuple).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

ShapeIndex = tuple[int, ...]

# Allocation kinds, named as XLA's BufferAllocation::ToShortString prints them.
KIND_PARAMETER = "parameter"
KIND_OUTPUT = "output"
KIND_CONSTANT = "constant"
KIND_THREAD_LOCAL = "thread-local"
KIND_MAYBE_LIVE_OUT = "maybe-live-out"
KIND_PREALLOCATED_TEMP = "preallocated-temp"
ALLOCATION_KINDS = (
    KIND_PARAMETER,
    KIND_OUTPUT,
    KIND_CONSTANT,
    KIND_THREAD_LOCAL,
    KIND_MAYBE_LIVE_OUT,
    KIND_PREALLOCATED_TEMP,
)


def model_record(cls):
    """A slotted, hashable dataclass for the kinds a big dump has hundreds of thousands
    of (one per allocation, value line, record part, live range). Read-only by
    convention rather than ``frozen=True``: a frozen dataclass's ``__init__`` sets each
    field through ``object.__setattr__``, which made building a 100 MB dump's model
    6x slower (1.7 us against 0.26 us a value)."""
    return dataclass(slots=True, unsafe_hash=True)(cls)


def format_shape_index(index: ShapeIndex | None) -> str:
    """``(0, 1)`` -> ``"{0,1}"``; ``()`` -> ``"{}"``; ``None`` -> ``""``."""
    if index is None:
        return ""
    return "{" + ",".join(str(i) for i in index) + "}"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """A line hlotop could not use, or a problem with the dump as a whole.

    ``line`` is 1-based; 0 means the problem concerns the whole file.
    ``severity`` is ``"error"`` (a line was skipped) or ``"warning"``.
    """

    path: str
    line: int
    message: str
    severity: str = "error"

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.severity}: {self.message}"


@model_record
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


@model_record
class ValueSlot:
    """One ``value:`` line of an allocation: where a value lives in it."""

    value: HloValue
    allocation: int
    offset: int
    size: int
    shape: str  # with layout, e.g. "f32[8,128]{1,0:T(8,128)S(1)}"
    line: int


@model_record
class BufferAllocation:
    """One ``allocation N: size S, ...:`` block (``BufferAllocation::ToString``)."""

    index: int
    size: int
    color: int = 0
    parameter: int | None = None
    parameter_shape: str | None = None  # without layout; "<unknown shape>" possible
    parameter_shape_index: ShapeIndex | None = None
    output_shape: str | None = None
    is_constant: bool = False
    is_thread_local: bool = False
    maybe_live_out: bool = False
    is_preallocated_temp: bool = False
    pointer: str | None = None  # pre-2022 dumps print the allocation's address
    values: tuple[ValueSlot, ...] = ()
    reused_by: tuple[tuple[HloValue, int], ...] = ()  # (value, its color), since 2026-06
    line: int = 0

    @property
    def kinds(self) -> tuple[str, ...]:
        """The allocation's kinds in XLA's attribute order."""
        out = []
        if self.parameter is not None:
            out.append(KIND_PARAMETER)
        if self.output_shape is not None:
            out.append(KIND_OUTPUT)
        if self.is_constant:
            out.append(KIND_CONSTANT)
        if self.is_thread_local:
            out.append(KIND_THREAD_LOCAL)
        if self.maybe_live_out:
            out.append(KIND_MAYBE_LIVE_OUT)
        if self.is_preallocated_temp:
            out.append(KIND_PREALLOCATED_TEMP)
        return tuple(out)


@model_record
class HloPosition:
    """Where a value appears: an instruction output, at an index if it is a tuple."""

    instruction: str
    shape_index: ShapeIndex | None = None

    def __str__(self) -> str:
        idx = format_shape_index(self.shape_index)
        return f"{self.instruction} {idx}" if idx else self.instruction


@model_record
class HloUse:
    """An instruction operand that reads a value."""

    instruction: str
    operand_number: int
    operand_index: ShapeIndex | None = None

    def __str__(self) -> str:
        idx = format_shape_index(self.operand_index)
        return f"{self.instruction}, operand {self.operand_number}" + (f" {idx}" if idx else "")


@model_record
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


@cache
def _instruction_reader():
    """The reader of from-instruction text (hlotop.parse imports this module, so it is
    looked up on first use, once)."""
    from hlotop.parse.instruction import parse_instruction_text

    return parse_instruction_text


class UsedValue:
    """One record of the ``Used values:`` section (``HloValue::ToString``).

    ``positions`` and ``uses`` (None: "uses are not initialized yet.") are tuples of
    :class:`HloPosition` and :class:`HloUse`. A record read by its one-match path
    (:meth:`printed`) keeps those lines as printed and makes the objects on first use:
    ``--json`` writes them back as text, and most records are never looked at.
    """

    __slots__ = (
        "value",
        "instruction_text",
        "line",
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
    ):
        self.value = value
        self._positions: tuple[HloPosition, ...] | None = positions
        self._uses: tuple[HloUse, ...] | None = uses
        self.instruction_text = instruction_text  # None before 2021-09 (no such line)
        self.line = line
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
    ) -> UsedValue:
        """A record whose position and use lines (each ``"  ...\n"``; the uses may be
        ``"  (none)\n"``) were already checked against their grammar, kept as text."""
        record = object.__new__(cls)  # no __init__: one per record of --json
        record.value, record.instruction_text, record.line = value, instruction_text, line
        record._positions = record._uses = None
        record._positions_text, record._uses_text = positions_text, uses_text
        return record

    @property
    def positions(self) -> tuple[HloPosition, ...]:
        if self._positions is None:
            from hlotop.parse.values import positions_of

            self._positions = positions_of(self._positions_text)
        return self._positions

    @property
    def uses(self) -> tuple[HloUse, ...] | None:
        if self._uses is None and self._uses_text is not None:
            from hlotop.parse.values import uses_of

            self._uses = uses_of(self._uses_text)
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
        if self.instruction_text is None:
            return None
        return _instruction_reader()(self.instruction_text)


@model_record
class BufferLiveRange:
    """``name{index}:start-end``: the value is live from step start to end inclusive."""

    name: str
    shape_index: ShapeIndex
    start: int
    end: int
    line: int = 0

    @property
    def key(self) -> tuple[str, ShapeIndex]:
        return (self.name, self.shape_index)


@dataclass(frozen=True, slots=True)
class PeakEntry:
    """One line under ``Live ranges at N (peak):``."""

    name: str
    shape_index: ShapeIndex | None  # None in V1 (2021-04 .. 2025-04) lines
    bytes: int
    cumulative: int | None = None  # V3+ only
    line: int = 0  # 1-based, in the file that holds the HloLiveRange block


@dataclass(frozen=True, slots=True)
class PeakUsage:
    """XLA's printed peak: the step and the values it listed as live there."""

    time: int
    entries: tuple[PeakEntry, ...]
    variant: str  # "V1".."V4", see FORMATS.md section 5
    line: int = 0


@dataclass(slots=True)
class StackTraceNode:
    """A node of the ``Stack trace breakdown for peak usage`` tree (bytes)."""

    label: str
    percent: float
    total: int
    current: int
    remaining: int
    depth: int
    line: int = 0
    children: list[StackTraceNode] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class StackTrace:
    total: int
    roots: tuple[StackTraceNode, ...]


@dataclass(frozen=True, slots=True)
class HloLiveRange:
    """``HloLiveRange::ToString``: the schedule and each value's live range."""

    max_time: int
    instruction_sequence: tuple[str, ...]
    buffers: tuple[BufferLiveRange, ...]
    peak: PeakUsage | None
    stack_trace: StackTrace | None
    line: int = 0


@dataclass(frozen=True, slots=True)
class ReportRow:
    """A row of a memory-usage-report table: the values at one offset of an allocation."""

    cumulative_size: str  # human-readable, as printed
    percent: float
    size: str
    offset: int
    used_by_n_values: int
    shapes: tuple[tuple[int, str], ...]  # (count, shape without layout)
    line: int = 0  # 1-based, in the report's file


@dataclass(frozen=True, slots=True)
class ReportAllocation:
    """An allocation as the memory-usage report lists it (sizes are approximate bytes,
    read back from XLA's human-readable text). Era B tables name no allocation:
    ``index`` -1, ``size`` 0, ``summary`` ""."""

    index: int
    size: int
    summary: str  # the allocation line as printed
    rows: tuple[ReportRow, ...] = ()
    hidden_rows: int = 0  # "The rest N values are less than ..."
    line: int = 0  # 1-based: its header under "...with their values:" (era A), or its
    # table's column line (era B); 0 if the report has neither
    list_line: int = 0  # 1-based: its row under "Allocations sorted by size:" (era A)


@dataclass(frozen=True, slots=True)
class MemorySpaceReport:
    name: str
    color: int
    total_bytes: int
    allocations: tuple[ReportAllocation, ...]


@dataclass(frozen=True, slots=True)
class MemoryUsageReport:
    """``BufferAssignment::MemoryUsageReport``: era ``"A"`` (2024-10..2026-03) lists
    allocations; era ``"B"`` (2026-03 on) groups them by memory space."""

    era: str
    total_bytes: int | None
    allocations: tuple[ReportAllocation, ...] = ()
    hidden_allocations: int = 0
    memory_spaces: tuple[MemorySpaceReport, ...] = ()


@dataclass(frozen=True, slots=True)
class DumpFile:
    path: str
    kind: str  # "combined", "buffer-assignment", "values", "live-range",
    # "memory-usage-report", or "module-text" (read only for its stack frames)


@dataclass(frozen=True, slots=True)
class ParsedSections:
    """What the parser read out of one or more files of a module."""

    allocations: tuple[BufferAllocation, ...] = ()
    total_bytes_used: int | None = None
    used_values: tuple[UsedValue, ...] = ()
    live_range: HloLiveRange | None = None
    live_range_unavailable: bool = False
    memory_usage_report: MemoryUsageReport | None = None
    stack_frames: StackFrameTable | None = None
    saw_buffer_assignment: bool = False
    saw_used_values: bool = False
