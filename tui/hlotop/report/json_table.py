"""The one table of ``hlotop --json``'s document: for each kind of object, its keys in
order, each with how its value is got from the model, its JSON type and what it means.

Two things are made from this table and nothing else:

* the writer (:mod:`hlotop.report.json_text` compiles one text formatter per kind, so
  that a 100 MB dump's 10^5 records and allocation values are written as text
  directly, never as dicts through the encoder), and
* the JSON Schema shipped in the package (:mod:`hlotop.report.json_schema`,
  ``hlotop.schema.json``; a test checks that the committed file is what the table
  makes, and validates every sample dump's ``--json`` against it).

README.md's schema table is written by hand from this one; a test checks that it names
exactly these keys.

A key's ``get`` is a Python expression over ``x`` (the object of that kind), the
names bound by the kind's ``lets`` (computed once per object, in order), ``ctx``
(:class:`Context`) and the helpers in :data:`NAMES`. Bytes and schedule steps are
ints; a ShapeIndex is a list of ints (``[]`` for ``{}``), or null where XLA prints none.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hlotop.analysis.grouping import ACCOUNTINGS, GROUP_KEYS
from hlotop.analysis.memory_stats import ALIAS_FROM_ALLOCATIONS, ALIAS_FROM_HLO, PEAK_RULES
from hlotop.analysis.scope import PHASES
from hlotop.analysis.totals import KIND_PRECEDENCE
from hlotop.analysis.why import REASON_KINDS
from hlotop.model import (
    ADVICE_BOUNDS,
    ADVICE_KINDS,
    ALLOCATION_KINDS,
    SourceFrame,
    StackFrameTable,
    stack_of,
)
from hlotop.model.figures import NO_LIVE_RANGES
from hlotop.model.memory_space import PLATFORMS, space_name
from hlotop.version import __version__

# --- JSON types -------------------------------------------------------------------


@dataclass(frozen=True)
class Int:
    """A JSON integer (bytes, steps, indexes)."""


@dataclass(frozen=True)
class Str:
    """A JSON string (dump text as printed)."""


@dataclass(frozen=True)
class Bool:
    """``true`` or ``false``."""


@dataclass(frozen=True)
class Number:
    """A JSON number (a percentage as XLA printed it)."""


@dataclass(frozen=True)
class Enum:
    """A string, one of ``values``."""

    values: tuple[str, ...]


@dataclass(frozen=True)
class Null:
    """``of``, or null."""

    of: Type


@dataclass(frozen=True)
class List:
    """A JSON array of ``of``."""

    of: Type


@dataclass(frozen=True)
class Obj:
    """An object of the kind named ``kind`` (a key of :data:`KINDS`)."""

    kind: str


@dataclass(frozen=True)
class Map:
    """An object from names to ``of``; its keys are ``keys`` (an :class:`Enum`) or match
    the regular expression ``pattern``."""

    of: Type
    keys: Enum | None = None
    pattern: str | None = None


Type = Int | Str | Bool | Number | Enum | Null | List | Obj | Map

SHAPE_INDEX = Null(List(Int()))  # XLA's ShapeIndex; null where it prints none


@dataclass(frozen=True)
class Key:
    """One key of an object: its JSON ``type``, the expression that ``get``s its value
    from the model, and what it means (``doc``, in the JSON Schema)."""

    name: str
    type: Type
    get: str
    doc: str
    # Written a batch at a time by the document writer (a list of objects or strings),
    # or key by key (an object whose kind has streamed keys, or null)
    streamed: bool = False
    # An expression (over the same names as ``get``): objects for which it is equal
    # have the same text for this key, made once per document and reused (a record's
    # Python stack is the same for every record of its stack_frame_id: 195 069 records
    # but 93 stacks, 60% of a 108 MB dump's --json text). None: made for each object.
    same_text_for: str | None = None
    # Left out of its object where its value is null; the schema does not require it.
    # Not the first key of its kind, nor one with same_text_for or of the document.
    optional: bool = False


@dataclass(frozen=True)
class Kind:
    """One kind of JSON object: its keys in document order."""

    name: str
    doc: str
    keys: tuple[Key, ...]
    lets: tuple[tuple[str, str], ...] = field(default=())  # (name, expression)


# --- what the getters may use -------------------------------------------------------


@dataclass(slots=True)
class Context:
    """What the getters need besides the object itself: the module's stack frames
    (:class:`~hlotop.model.StackFrameTable` or None) and its memory spaces' names
    (:func:`hlotop.model.memory_space.space_names`) and, with ``--group-by``, the
    grouped live set."""

    frames: StackFrameTable | None = None
    names: dict[int, str] = field(default_factory=dict)
    groups: object = None  # the grouped live set (hlotop.analysis.grouping.Grouping)
    fit: object = None  # the module against --capacity (hlotop.analysis.capacity.Fit)
    advice: object = None  # --advise: the ranked advice (a list of hlotop.model.Advice)
    # the texts of the keys with same_text_for: (kind, key, its value) -> JSON text
    texts: dict[tuple[str, str, object], str] = field(default_factory=dict)
    # stack_frame_id (None: none) -> its stack
    stacks: dict[int | None, tuple[SourceFrame, ...]] = field(default_factory=dict)
    # --advise: why each value live at the peak is: .of(info) ->
    # hlotop.analysis.why.ValueWhy (hlotop.report.peak_why.PeakWhy); None without it
    why: object = None

    def stack_of(self, instr) -> tuple[SourceFrame, ...]:
        """:func:`hlotop.model.stack_of` of ``instr`` through :attr:`frames`, each
        stack made once (its frames, innermost first; () if unknown)."""
        frame_id = None if instr is None else instr.stack_frame_id
        stack = self.stacks.get(frame_id)
        if stack is None:
            stack = self.stacks[frame_id] = stack_of(instr, self.frames)
        return stack


def source_of(instr, stack) -> tuple[str, int | None] | None:
    """``(file, line)`` of the Python source of a record's instruction: its metadata's
    ``source_file``/``source_line``, else the innermost frame of its ``stack``
    (:func:`hlotop.model.stack_of`, which the JSON writes beside it); or None."""
    if instr is None:
        return None
    if instr.source_file:
        return (instr.source_file, instr.source_line)
    if stack:
        return (stack[0].file, stack[0].line)
    return None


NAMES = {
    "VERSION": __version__,
    "space_name": space_name,
    "stack_of": stack_of,
    "source_of": source_of,
}

# --- a value's why: hlotop --json's values live at the peak and hlotop why's ---------

WHY_REASONS = "why it is live at the step (several may hold)"

WHY_KINDS: tuple[Kind, ...] = (
    Kind(
        "defined_by",
        "A value's defining instruction, as its record's 'from instruction:' line "
        "prints it (analysis.why.defined_by).",
        (
            Key("instruction", Str(), "x.instruction", "its name"),
            Key("opcode", Null(Str()), "x.opcode", "its opcode, or null"),
            Key("op_name", Null(Str()), "x.op_name", "its op_name, or null"),
            Key(
                "phase",
                Enum(PHASES),
                "x.phase",
                "hlotop's phase of it (its op_name and Python stack; argument for an "
                "entry parameter)",
            ),
        ),
    ),
    Kind(
        "value_live_range",
        "A value's printed live range: live from step start to step end, inclusive.",
        (
            Key("start", Int(), "x.start", "its first step"),
            Key("end", Int(), "x.end", "its last step"),
        ),
    ),
    Kind(
        "last_use",
        "The use of a value whose instruction comes latest in the dump's "
        "InstructionSequence (analysis.why.last_use).",
        (
            Key("instruction", Str(), "x.instruction", "the using instruction"),
            Key("operand", Int(), "x.operand", "the operand number"),
            Key(
                "operand_index",
                SHAPE_INDEX,
                "x.operand_index",
                "the operand's ShapeIndex, or null",
            ),
            Key(
                "op_name",
                Null(Str()),
                "x.op_name",
                "the instruction's op_name (from its own record), or null",
            ),
            Key("opcode", Null(Str()), "x.opcode", "its opcode, or null"),
            Key("phase", Enum(PHASES), "x.phase", "hlotop's phase of it"),
            Key("step", Int(), "x.step", "its step in the InstructionSequence"),
            Key(
                "ends_live_range",
                Bool(),
                "x.ends_live_range",
                "whether its step is the live range's last: where not, XLA ended it by "
                "another rule (an entry parameter or output to the end, a while's use "
                "at its body's start, a buffer shared with another value)",
            ),
        ),
    ),
    Kind(
        "reason",
        "One reason a value is live at a step (analysis.why.Reason), or that it is "
        "not; only the keys its kind uses are there.",
        (
            Key("kind", Enum(REASON_KINDS), "x.kind", "what the reason is"),
            Key(
                "instruction",
                Str(),
                "x.instruction",
                "defined-here: its instruction; used-later: its next use's; held-later: "
                "a later position's; loop-carried: the while",
                optional=True,
            ),
            Key(
                "step",
                Int(),
                "x.step",
                "that instruction's step (defined-here: the live range's start)",
                optional=True,
            ),
            Key(
                "parameter",
                Int(),
                "x.parameter",
                "entry-parameter: its number",
                optional=True,
            ),
            Key(
                "parameter_index",
                List(Int()),
                "x.parameter_index",
                "entry-parameter: its ShapeIndex",
                optional=True,
            ),
            Key(
                "donated",
                Bool(),
                "x.donated",
                "entry-parameter: whether an output aliases it (the caller donated it)",
                optional=True,
            ),
            Key(
                "donation_source",
                Enum((ALIAS_FROM_HLO, ALIAS_FROM_ALLOCATIONS)),
                "x.donation_source",
                "entry-parameter: what says so: input_output_alias (the HLO text: "
                "exact) or 'parameter and maybe-live-out' (its allocation: inferred)",
                optional=True,
            ),
            Key(
                "other_id",
                Int(),
                "x.other_id",
                "shares-buffer: the value live at the step in an overlapping slice",
                optional=True,
            ),
            Key(
                "other_name",
                Str(),
                "x.other_name",
                "shares-buffer: its name{ShapeIndex}",
                optional=True,
            ),
        ),
    ),
)
"""The kinds of a value's why, one definition for both documents that carry it:
``hlotop --json``'s ``peak_values`` and ``hlotop why --json``'s
(:mod:`hlotop.report.why_table`)."""

# --- the document -------------------------------------------------------------------

FILE_KINDS = (
    "combined",
    "buffer-assignment",
    "values",
    "live-range",
    "memory-usage-report",
    "module-text",
)

KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind(
            "document",
            "hlotop --json: an XLA buffer-assignment dump, parsed, and its memory analysis.",
            (
                Key("hlotop_version", Str(), "VERSION", "the hlotop that wrote this"),
                Key("module", Str(), "x.name", "the module's name, from the file name"),
                Key(
                    "layout",
                    Enum(("combined", "split", "report-only")),
                    "x.layout",
                    "the dump's layout: one file (before jax 0.10), sibling files (jax >= "
                    "0.10), or a memory-usage report with no file of its buffer assignment "
                    "(no allocation, value or live range read: see memory_usage_report)",
                ),
                Key("files", List(Obj("file")), "x.files", "the files the module was read from"),
                Key(
                    "allocations",
                    List(Obj("allocation")),
                    "x.allocations",
                    "the allocations, in index order",
                    streamed=True,
                ),
                Key(
                    "total_bytes_used",
                    Null(Int()),
                    "x.total_bytes_used",
                    "the dump's 'Total bytes used', or null",
                ),
                Key(
                    "used_values",
                    List(Obj("used_value")),
                    "x.checked_records()",
                    "the 'Used values' records, in dump order",
                    streamed=True,
                ),
                Key(
                    "live_range",
                    Null(Obj("live_range")),
                    "x.live_range",
                    "the HloLiveRange block (schedule, live ranges, peak), or null",
                    streamed=True,
                ),
                Key(
                    "stack_trace",
                    Null(Obj("stack_trace")),
                    "None if x.live_range is None else x.live_range.stack_trace",
                    "the 'Stack trace breakdown for peak usage', or null",
                ),
                Key(
                    "memory_usage_report",
                    Null(Obj("memory_usage_report")),
                    "x.memory_usage_report",
                    "the memory-usage report, or null",
                ),
                Key("analysis", Obj("analysis"), "x.analysis", "hlotop's memory analysis"),
                Key(
                    "groups",
                    Null(Obj("grouping")),
                    "ctx.groups",
                    "the live set at a step grouped (--group-by), or null",
                ),
                Key(
                    "capacity",
                    Null(Obj("fit")),
                    "ctx.fit",
                    "the program against a device's memory (--capacity), or null",
                ),
                Key(
                    "advice",
                    Null(List(Obj("advice"))),
                    "ctx.advice",
                    "what to change and the bytes it saves, largest first (--advise), or null",
                ),
                Key(
                    "diagnostics",
                    List(Obj("diagnostic")),
                    "x.diagnostics",
                    "what could not be read, and other warnings about the dump",
                ),
            ),
        ),
        Kind(
            "file",
            "A file of the module.",
            (
                Key("path", Str(), "x.path", "the file's path as given or found"),
                Key("kind", Enum(FILE_KINDS), "x.kind", "which part of the module it holds"),
            ),
        ),
        Kind(
            "allocation",
            "An allocation (BufferAllocation::ToString) with the values packed into it.",
            (
                Key("index", Int(), "x.index", "the allocation's index"),
                Key("size", Int(), "x.size", "bytes"),
                Key(
                    "page",
                    Null(Int()),
                    "x.page",
                    "its page (BufferAllocation::page_id, jax >= 0.11's XLA prints it: "
                    "the page of a multi-page buffer assignment, 0 with one page), or null",
                ),
                Key("color", Int(), "x.color", "the memory space's number (XLA's color)"),
                Key(
                    "memory_space",
                    Str(),
                    "space_name(x.color, ctx.names)",
                    "the memory space's name",
                ),
                Key(
                    "kinds",
                    List(Enum(ALLOCATION_KINDS)),
                    "x.kinds",
                    "its kinds, in XLA's attribute order",
                ),
                Key(
                    "parameter",
                    Null(Obj("parameter")),
                    "None if x.parameter is None else x",
                    "the entry parameter it holds, or null",
                ),
                Key(
                    "output_shape",
                    Null(Str()),
                    "x.output_shape",
                    "the output's shape if it holds the output, else null",
                ),
                Key(
                    "values",
                    List(Obj("value_slot")),
                    "x.values",
                    "the values packed into it, as its value lines list them",
                ),
            ),
        ),
        Kind(
            "parameter",
            "The entry parameter an allocation holds.",
            (
                Key("number", Int(), "x.parameter", "the parameter's number"),
                Key("shape", Null(Str()), "x.parameter_shape", "its shape, without layout"),
                Key("shape_index", SHAPE_INDEX, "x.parameter_shape_index", "the ShapeIndex"),
            ),
        ),
        Kind(
            "value_slot",
            "A value packed into an allocation (one value line).",
            (
                Key("id", Int(), "v.id", "the value's id"),
                Key("name", Str(), "v.name", "the defining instruction's name"),
                Key("shape_index", SHAPE_INDEX, "v.shape_index", "the value's ShapeIndex"),
                Key("phi", Bool(), "v.is_phi", "whether the value is a phi"),
                Key("color", Null(Int()), "v.color", "the value's color, or null"),
                Key("offset", Int(), "x.offset", "bytes from the allocation's start"),
                Key("size", Int(), "x.size", "bytes it takes, padding included"),
                Key("shape", Str(), "x.shape", "its shape, with layout"),
            ),
            lets=(("v", "x.value"),),
        ),
        Kind(
            "used_value",
            "A 'Used values' record (HloValue::ToString).",
            (
                Key("id", Int(), "v.id", "the value's id"),
                Key("name", Str(), "v.name", "the defining instruction's name"),
                Key("shape_index", SHAPE_INDEX, "v.shape_index", "the value's ShapeIndex"),
                Key(
                    "positions",
                    List(Str()),
                    "x.position_texts()",
                    'its positions, each "name {i}" or "name"',
                ),
                Key(
                    "uses",
                    Null(List(Str())),
                    "x.use_texts()",
                    'its uses, each "name, operand N {i}"; null where XLA printed them '
                    "uninitialised",
                ),
                Key(
                    "instruction",
                    Null(Str()),
                    "None if instr is None else instr.name",
                    "the defining instruction's name",
                ),
                Key(
                    "opcode",
                    Null(Str()),
                    "None if instr is None else instr.opcode",
                    "its opcode",
                ),
                Key(
                    "instruction_shape",
                    Null(Str()),
                    "None if instr is None else instr.shape",
                    "its whole shape, with layout",
                ),
                Key(
                    "op_name",
                    Null(Str()),
                    "None if instr is None else instr.op_name",
                    "its metadata's op_name",
                ),
                Key(
                    "source",
                    Null(Obj("source")),
                    "source_of(instr, stack)",
                    "the Python source that made it, or null",
                ),
                Key(
                    "stack",
                    List(Obj("frame")),
                    "stack",
                    "the Python stack that made it, innermost first, when the "
                    "instruction's stack_frame_id (jax >= 0.9) resolves through the "
                    "module's *_after_optimizations.txt beside the dump; else []",
                    same_text_for="None if instr is None else instr.stack_frame_id",
                ),
            ),
            lets=(
                ("v", "x.value"),
                ("instr", "x.instruction"),
                ("stack", "ctx.stack_of(instr)"),
            ),
        ),
        Kind(
            "source",
            "A source location: (file, line).",
            (
                Key("file", Str(), "x[0]", "the source file"),
                Key("line", Null(Int()), "x[1]", "the line, or null"),
            ),
        ),
        Kind(
            "frame",
            "A Python stack frame.",
            (
                Key("file", Str(), "x.file", "the source file"),
                Key("line", Int(), "x.line", "the line"),
                Key("function", Str(), "x.function", "the function"),
            ),
        ),
        Kind(
            "live_range",
            "HloLiveRange::ToString: the schedule and each value's live range.",
            (
                Key("max", Int(), "x.max_time", "the schedule's last step"),
                Key(
                    "instruction_sequence",
                    List(Str()),
                    "x.instruction_sequence",
                    "the instruction at each step",
                    streamed=True,
                ),
                Key(
                    "buffers",
                    List(Obj("buffer_live_range")),
                    "x.buffers",
                    "each value's live range",
                    streamed=True,
                ),
                Key("peak", Null(Obj("peak")), "x.peak", "XLA's printed peak, or null"),
            ),
        ),
        Kind(
            "buffer_live_range",
            "A value's live range: live from step start to step end, inclusive.",
            (
                Key("name", Str(), "x.name", "the value's defining instruction"),
                Key("shape_index", List(Int()), "x.shape_index", "the value's ShapeIndex"),
                Key("start", Int(), "x.start", "the first step it is live at"),
                Key("end", Int(), "x.end", "the last step it is live at"),
            ),
        ),
        Kind(
            "peak",
            "XLA's printed peak: its step and the values it lists live there.",
            (
                Key("time", Int(), "x.time", "the peak step"),
                Key(
                    "variant",
                    Enum(("V1", "V2", "V3", "V4")),
                    "x.variant",
                    "which form of peak lines (FORMATS.md section 5)",
                ),
                Key("entries", List(Obj("peak_entry")), "x.entries", "the values listed"),
            ),
        ),
        Kind(
            "peak_entry",
            "A line of XLA's peak list.",
            (
                Key("name", Str(), "x.name", "the value's defining instruction"),
                Key("shape_index", SHAPE_INDEX, "x.shape_index", "null in V1 lines"),
                Key("bytes", Int(), "x.bytes", "the value's bytes"),
                Key("cumulative", Null(Int()), "x.cumulative", "bytes so far (V3 on), or null"),
            ),
        ),
        Kind(
            "stack_trace",
            "The stack-trace breakdown of the peak.",
            (
                Key("total", Int(), "x.total", "bytes"),
                Key("tree", List(Obj("stack_trace_node")), "x.roots", "the tree's roots"),
            ),
        ),
        Kind(
            "stack_trace_node",
            "A node of the stack-trace breakdown.",
            (
                Key("label", Str(), "x.label", "the frame or instruction, as printed"),
                Key(
                    "percent",
                    Null(Number()),
                    "x.percent",
                    "its share of the peak, as printed; null for XLA's -nan",
                ),
                Key("total", Int(), "x.total", "bytes under it"),
                Key("current", Int(), "x.current", "bytes at it"),
                Key("remaining", Int(), "x.remaining", "bytes not yet listed"),
                Key("children", List(Obj("stack_trace_node")), "x.children", "its children"),
            ),
        ),
        Kind(
            "memory_usage_report",
            "BufferAssignment::MemoryUsageReport; sizes are XLA's rounded text read back.",
            (
                Key(
                    "era",
                    Enum(("A", "B")),
                    "x.era",
                    "A (2024-10 .. 2026-03) lists allocations; B groups them by memory space",
                ),
                Key(
                    "total_bytes",
                    Null(Int()),
                    "x.total",
                    "the report's total in bytes: era A its 'Total bytes used'; era B the "
                    "sum of its memory spaces' 'Total bytes', the same figure (XLA adds "
                    "every allocation into its colour's total); null if it prints neither",
                ),
                Key(
                    "allocations",
                    List(Obj("report_allocation")),
                    "x.allocations",
                    "the allocations listed (era A)",
                ),
                Key(
                    "hidden_allocations",
                    Int(),
                    "x.hidden_allocations",
                    "allocations the report leaves out",
                ),
                Key(
                    "memory_spaces",
                    List(Obj("memory_space_report")),
                    "x.memory_spaces",
                    "the memory spaces (era B)",
                ),
            ),
        ),
        Kind(
            "report_allocation",
            "An allocation as the memory-usage report lists it.",
            (
                Key("index", Int(), "x.index", "the allocation's index; -1 in era B tables"),
                Key("size", Int(), "x.size", "bytes, read back from the text; 0 in era B"),
                Key("summary", Str(), "x.summary", "the allocation line as printed"),
                Key("hidden_rows", Int(), "x.hidden_rows", "rows the report leaves out"),
                Key("rows", List(Obj("report_row")), "x.rows", "its table's rows"),
            ),
        ),
        Kind(
            "report_row",
            "A row of a memory-usage-report table: the values at one offset.",
            (
                Key("cumulative_size", Str(), "x.cumulative_size", "as printed"),
                Key("percent", Null(Number()), "x.percent", "as printed; null for XLA's -nan"),
                Key("size", Str(), "x.size", "as printed"),
                Key("offset", Int(), "x.offset", "bytes"),
                Key("used_by_n_values", Int(), "x.used_by_n_values", "how many values"),
                Key("shapes", List(Obj("report_shape")), "x.shapes", "their shapes"),
            ),
        ),
        Kind(
            "report_shape",
            "A shape in a memory-usage-report row and how many values have it.",
            (
                Key("count", Int(), "x[0]", "how many values"),
                Key("shape", Str(), "x[1]", "the shape, without layout"),
            ),
        ),
        Kind(
            "memory_space_report",
            "A memory space of an era-B memory-usage report.",
            (
                Key("name", Str(), "x.name", "its name"),
                Key("color", Int(), "x.color", "its number (XLA's color)"),
                Key("total_bytes", Int(), "x.total_bytes", "bytes"),
                Key(
                    "allocations",
                    List(Obj("report_allocation")),
                    "x.allocations",
                    "its allocation tables",
                ),
            ),
        ),
        Kind(
            "analysis",
            "hlotop's memory analysis: XLA's and JAX's figures worked out the way they "
            "work them out, and hlotop's own measures under names of their own.",
            (
                Key(
                    "platform",
                    Enum(PLATFORMS),
                    "x.platform",
                    "the backend, from XLA's file name or the layouts' TPU tiles",
                ),
                Key(
                    "peak_step",
                    Null(Int()),
                    "x.peak_step",
                    "XLA's peak step (HloLiveRange's sweep), or null without live ranges",
                ),
                Key(
                    "peak_bytes",
                    Null(Int()),
                    "None if x.peak_step is None else x.peak_bytes",
                    "XLA's peak figure: the sum of its printed list 'Live ranges at N "
                    "(peak)', or where the dump prints none its sweep's bytes at the peak "
                    "step (logical bytes; a value of a tuple-shaped instruction at the "
                    "whole instruction's size in V1 lists and in the sweep); null without "
                    "live ranges (peak_bytes_source says so)",
                ),
                Key(
                    "peak_bytes_source",
                    Enum(("list", "sweep", NO_LIVE_RANGES)),
                    "x.peak_bytes_source",
                    "where peak_bytes comes from: XLA's printed list, or its sweep; "
                    f"{NO_LIVE_RANGES}: the dump has no HloLiveRange (a memory-usage "
                    "report alone, a -buffer-assignment.txt without its -live-range.txt, a "
                    "dump from before 2021-04), so no peak step and no peak figure",
                ),
                Key(
                    "peak_logical_bytes",
                    Null(Int()),
                    "None if x.peak_step is None else x.peak_logical_bytes",
                    "hlotop's: logical bytes of the values live at the peak step, each at "
                    "its own shape, tiling padding ignored; null without live ranges",
                ),
                Key(
                    "peak_occupied_bytes",
                    Null(Int()),
                    "None if x.peak_step is None else x.peak_occupied_bytes",
                    "hlotop's: allocation bytes the values live at the peak step occupy, "
                    "padding included, shared slices once, all memory spaces; null without "
                    "live ranges",
                ),
                Key(
                    "peak_values",
                    List(Obj("peak_value")),
                    "x.peak_values",
                    "the values live at the peak, XLA's order",
                ),
                Key(
                    "memory_stats",
                    Null(Obj("memory_stats")),
                    "x.memory_stats",
                    "JAX's compiled.memory_analysis() sizes by XLA's rule, or null "
                    "without allocations",
                ),
                Key(
                    "memory_spaces",
                    List(Obj("memory_space")),
                    "x.memory_spaces",
                    "each memory space with an allocation, colors ascending",
                ),
                Key(
                    "live_bytes",
                    List(Int()),
                    "x.live_bytes",
                    "hlotop's: logical bytes of the values live at each step, all "
                    "memory spaces, each value counted",
                ),
                Key(
                    "occupied_bytes",
                    Map(List(Int()), pattern="^[0-9]+$"),
                    "x.occupied_bytes",
                    "hlotop's: occupied bytes of each memory space (its color, as a "
                    "string) at each step: slices in use, shared slices once, padding "
                    "included; never above the space's total_bytes",
                ),
                Key(
                    "totals_by_kind",
                    Map(Int(), keys=Enum(KIND_PRECEDENCE)),
                    "x.totals_by_kind",
                    "bytes by allocation kind, each allocation once under its first kind "
                    "in the order parameter, maybe-live-out, constant, thread-local, "
                    "preallocated-temp (memory_analysis's); they add up to the total",
                ),
                Key(
                    "allocations_by_kind",
                    Map(Int(), keys=Enum(KIND_PRECEDENCE)),
                    "x.allocations_by_kind",
                    "how many allocations of each kind, counted as totals_by_kind",
                ),
                Key(
                    "totals_by_memory_space",
                    Map(Int(), pattern="^[0-9]+$"),
                    "x.totals_by_color",
                    "bytes by memory space (its color, as a string)",
                ),
            ),
        ),
        Kind(
            "memory_stats",
            "compiled.memory_analysis()'s sizes with JAX's field names, in bytes, by "
            "CompiledMemoryStats::PopulateBufferStatsFromAllocations "
            "(xla/pjrt/compiled_memory_stats.cc): host = memory space 5, device = every "
            "other. Equal to JAX's on CPU and GPU; on TPU, temp_size_in_bytes is the "
            "dump's preallocated-temp allocations, where libtpu reports a figure of its "
            "own that includes compiler scratch.",
            tuple(
                Key(name, Int(), "x." + name, doc)
                for name, doc in (
                    ("argument_size_in_bytes", "entry-parameter allocations on the device"),
                    ("output_size_in_bytes", "maybe-live-out allocations on the device"),
                    ("alias_size_in_bytes", "device parameter allocations aliased with an output"),
                    (
                        "temp_size_in_bytes",
                        "device allocations neither parameter, maybe-live-out, constant "
                        "nor thread-local",
                    ),
                    ("host_argument_size_in_bytes", "as argument_size_in_bytes, host memory"),
                    ("host_output_size_in_bytes", "as output_size_in_bytes, host memory"),
                    ("host_alias_size_in_bytes", "as alias_size_in_bytes, host memory"),
                    ("host_temp_size_in_bytes", "as temp_size_in_bytes, host memory"),
                )
            )
            + (
                Key(
                    "alias_source",
                    Enum(("input_output_alias", "parameter and maybe-live-out")),
                    "x.alias_source",
                    "which parameters alias an output: the HLO module text's "
                    "input_output_alias, or (without that file) those also maybe-live-out",
                ),
                Key(
                    "peak_memory_in_bytes",
                    Null(Int()),
                    "x.peak_memory_in_bytes",
                    "jax >= 0.11's peak_memory_in_bytes by XLA's rule (ComputePeakMemory, "
                    "xla/service/buffer_assignment.cc): static allocations (parameter, "
                    "constant, maybe-live-out) at their largest value, plus on GPU the "
                    "temp heap's peak over the live ranges; null on TPU (libtpu's own "
                    "rule) and where it cannot be applied",
                ),
                Key(
                    "peak_memory_rule",
                    Null(Enum(PEAK_RULES)),
                    "x.peak_memory_rule",
                    "the form of the rule: 'static' (CPU, whose heap traces XLA clears) or "
                    "'static+temp' (GPU); null with peak_memory_in_bytes",
                ),
            ),
        ),
        Kind(
            "memory_space",
            "A memory space (XLA's color) and its figures.",
            (
                Key("color", Int(), "x.color", "its number (XLA's color, S(n) in layouts)"),
                Key(
                    "name",
                    Str(),
                    "x.name",
                    "XLA's name for it on this platform (README: memory spaces)",
                ),
                Key(
                    "dump_name",
                    Null(Str()),
                    "x.dump_name",
                    "the label the dump's memory-usage report gives it, or null",
                ),
                Key("total_bytes", Int(), "x.total_bytes", "the sizes of its allocations"),
                Key("allocations", Int(), "x.allocations", "how many allocations"),
                Key(
                    "peak_step",
                    Null(Int()),
                    "x.peak_step",
                    "the earliest step of its occupied bytes' maximum, or null",
                ),
                Key(
                    "peak_bytes",
                    Int(),
                    "x.peak_bytes",
                    "its occupied bytes at peak_step; never above total_bytes",
                ),
                Key(
                    "padding_bytes",
                    Int(),
                    "x.padding_bytes",
                    "tiling padding: its slices' sizes minus the logical bytes in them",
                ),
            ),
        ),
        Kind(
            "grouping",
            "The values live at one step, grouped by keys (hlotop --group-by).",
            (
                Key("step", Int(), "x.step", "the schedule step (XLA's peak by default)"),
                Key(
                    "keys",
                    List(Enum(GROUP_KEYS)),
                    "x.keys",
                    "the grouping keys, outermost first",
                ),
                Key(
                    "accounting",
                    Enum(ACCOUNTINGS),
                    "x.accounting",
                    "which bytes are summed: logical (each value at its shape, no "
                    "padding) or occupied (allocation bytes in use, shared bytes once)",
                ),
                Key("total_bytes", Int(), "x.total_bytes", "the rows' bytes added up"),
                Key("rows", List(Obj("group_row")), "x.rows", "the groups, largest first"),
            ),
        ),
        Kind(
            "fit",
            "A program against a capacity (hlotop --capacity), in bytes.",
            (
                Key("capacity_bytes", Int(), "x.capacity_bytes", "the device memory given"),
                Key("label", Str(), "x.label", "what the capacity is (a device, a size)"),
                Key(
                    "required_bytes",
                    Int(),
                    "x.required_bytes",
                    "argument + output - alias + temp device bytes (memory_analysis()): "
                    "XLA's lower bound for running it, less the generated code",
                ),
                Key(
                    "headroom_bytes",
                    Int(),
                    "x.headroom_bytes",
                    "capacity minus required; negative when over",
                ),
                Key(
                    "memory",
                    Enum(("device", "HBM")),
                    "x.memory",
                    "which memory required_bytes counts: device (every memory space but "
                    "host), or HBM on TPU (colour 0 alone)",
                ),
                Key(
                    "temp_bytes",
                    Int(),
                    "x.temp_bytes",
                    "the temp in required_bytes: memory_analysis()'s temp_size_in_bytes; "
                    "on TPU, HBM's preallocated temp alone",
                ),
                Key(
                    "temp_left_out",
                    Map(Int()),
                    "dict(x.temp_left_out)",
                    "on TPU, the preallocated temp of each device memory space other "
                    "than HBM (VMEM, SMEM, ...), by XLA's name: in the dump's "
                    "memory_analysis() temp, left out of required_bytes; {} elsewhere",
                ),
                Key(
                    "shed",
                    List(Int()),
                    "[i.value.id for i in x.shed]",
                    "when over: the ids of the fewest values live at XLA's peak whose "
                    "occupied bytes cover the excess, largest first",
                ),
                Key("shed_bytes", Int(), "x.shed_bytes", "their occupied bytes"),
            ),
        ),
        Kind(
            "advice",
            "A change to the program and the bytes it saves (hlotop.analysis.advice).",
            (
                Key("kind", Enum(ADVICE_KINDS), "x.kind", "what kind of change"),
                Key("title", Str(), "x.title", "one line: what to change and why"),
                Key("saving_bytes", Int(), "x.saving_bytes", "bytes saved, per device"),
                Key(
                    "bound",
                    Enum(ADVICE_BOUNDS),
                    "x.bound",
                    "estimate: what the change frees; upper_bound: at most this (XLA "
                    "may give the bytes to other buffers, or another step may peak)",
                ),
                Key(
                    "step",
                    Null(Int()),
                    "x.step",
                    "the schedule step the saving is measured at (XLA's peak), or null "
                    "when it holds at every step",
                ),
                Key("values", List(Int()), "list(x.values)", "the ids of its values"),
                Key("groups", List(Str()), "list(x.groups)", "the scopes or paths it names"),
                Key("evidence", List(Str()), "list(x.evidence)", "what the dump says"),
                Key("fix", Str(), "x.fix", "how to make the change in JAX"),
            ),
        ),
        Kind(
            "group_row",
            "A group of the live set.",
            (
                Key("key", List(Str()), "x.key", "its label for each grouping key"),
                Key("bytes", Int(), "x.bytes", "the bytes of its values"),
                Key("values", Int(), "len(x.values)", "how many values"),
            ),
        ),
        Kind(
            "peak_value",
            "A value live at the peak, and, with --advise, why it is live there (what "
            "hlotop why DUMP NAME says at the peak step; analysis.why).",
            (
                Key("id", Int(), "x.value.id", "the value's id"),
                Key("name", Str(), "x.value.name", "the defining instruction's name"),
                Key("shape_index", SHAPE_INDEX, "x.value.shape_index", "the value's ShapeIndex"),
                Key("logical_bytes", Int(), "x.logical_bytes", "bytes, tiling padding ignored"),
                Key(
                    "allocated_bytes",
                    Int(),
                    "x.allocated_bytes",
                    "bytes it takes in its allocation, padding included",
                ),
                Key(
                    "defined_by",
                    Null(Obj("defined_by")),
                    "None if why is None else why.defined",
                    "its defining instruction, op_name and phase (hlotop why's); null "
                    "without --advise",
                ),
                Key(
                    "live_range",
                    Obj("value_live_range"),
                    "x.live",
                    "its printed live range",
                ),
                Key(
                    "last_use",
                    Null(Obj("last_use")),
                    "None if why is None else why.last_use",
                    "its use with the latest step, or null (no record, no use, or none at "
                    "a step; without --advise)",
                ),
                Key(
                    "reasons",
                    Null(List(Obj("reason"))),
                    "None if why is None else why.reasons",
                    "why it is live at the peak step, as hlotop why DUMP NAME says; null "
                    "without --advise",
                ),
            ),
            lets=(("why", "None if ctx.why is None else ctx.why.of(x)"),),
        ),
        *WHY_KINDS,
        Kind(
            "diagnostic",
            "A line hlotop could not use, or a problem with the dump as a whole.",
            (
                Key("path", Str(), "x.path", "the file"),
                Key("line", Int(), "x.line", "1-based; 0 concerns the whole file"),
                Key("message", Str(), "x.message", "what was expected"),
                Key(
                    "severity",
                    Enum(("error", "warning")),
                    "x.severity",
                    "error: a line was skipped",
                ),
            ),
        ),
    )
}

DOCUMENT = "document"
