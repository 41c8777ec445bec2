"""The parsed dump, in XLA's own terms.

Plain dataclasses, read-only once made: filled by :mod:`hlotop.parse` and read by
:mod:`hlotop.analysis` and the views. Sizes and offsets are bytes (``int``); times are
schedule steps (``int``, an index into the flattened instruction sequence). The model
never imports the parser: the lazy records hold the grammar they were given.
"""

from hlotop.model.advice import ADVICE_BOUNDS, ADVICE_KINDS, Advice
from hlotop.model.allocation import (
    ALLOCATION_KINDS,
    KIND_CONSTANT,
    KIND_FIELDS,
    KIND_MAYBE_LIVE_OUT,
    KIND_OUTPUT,
    KIND_PARAMETER,
    KIND_PREALLOCATED_TEMP,
    KIND_THREAD_LOCAL,
    BufferAllocation,
    has_kind,
)
from hlotop.model.allocation_lines import (
    AllocationLines,
    AllocationsByIndex,
    AllocationsInOrder,
)
from hlotop.model.allocation_table import AllocationTable, ValueSlots
from hlotop.model.dump import ModuleDump, ParsedSections
from hlotop.model.dump_file import Diagnostic, DumpFile
from hlotop.model.figures import (
    Analysis,
    MemorySpace,
    MemoryStats,
    ValueInfo,
    ValuesById,
    source_of,
    stack_of,
)
from hlotop.model.live_range import (
    BufferLiveRange,
    HloLiveRange,
    LiveRanges,
    PeakEntries,
    PeakEntry,
    PeakUsage,
    StackTrace,
    StackTraceNode,
)
from hlotop.model.memory_report import (
    MemorySpaceReport,
    MemoryUsageReport,
    ReportAllocation,
    ReportRow,
)
from hlotop.model.module_text import EntryParameter, IoAlias, Sharding
from hlotop.model.on_first_read import CurveOnFirstRead, OnFirstRead
from hlotop.model.oom import OOM_FORMATS, OomEntry, OomReport
from hlotop.model.source import SourceFrame, StackFrameTable
from hlotop.model.used_values import ByteSource, RecordGrammar, UsedValues
from hlotop.model.value_table import ValueRows, ValueTable
from hlotop.model.values import (
    HloPosition,
    HloUse,
    HloValue,
    InstructionText,
    RecordTextReader,
    ShapeIndex,
    UsedValue,
    ValueSlot,
    format_shape_index,
    shape_of,
)

__all__ = [
    "ADVICE_BOUNDS",
    "ADVICE_KINDS",
    "Advice",
    "ALLOCATION_KINDS",
    "AllocationLines",
    "AllocationsByIndex",
    "AllocationsInOrder",
    "AllocationTable",
    "KIND_CONSTANT",
    "KIND_FIELDS",
    "KIND_MAYBE_LIVE_OUT",
    "KIND_OUTPUT",
    "KIND_PARAMETER",
    "KIND_PREALLOCATED_TEMP",
    "KIND_THREAD_LOCAL",
    "OOM_FORMATS",
    "Analysis",
    "BufferAllocation",
    "ByteSource",
    "BufferLiveRange",
    "CurveOnFirstRead",
    "Diagnostic",
    "DumpFile",
    "HloLiveRange",
    "HloPosition",
    "HloUse",
    "HloValue",
    "InstructionText",
    "IoAlias",
    "EntryParameter",
    "Sharding",
    "MemorySpace",
    "MemorySpaceReport",
    "MemoryStats",
    "MemoryUsageReport",
    "ModuleDump",
    "OnFirstRead",
    "OomEntry",
    "OomReport",
    "ParsedSections",
    "LiveRanges",
    "PeakEntries",
    "PeakEntry",
    "PeakUsage",
    "RecordGrammar",
    "RecordTextReader",
    "ReportAllocation",
    "ReportRow",
    "ShapeIndex",
    "SourceFrame",
    "StackFrameTable",
    "StackTrace",
    "StackTraceNode",
    "UsedValue",
    "UsedValues",
    "ValueInfo",
    "ValueRows",
    "ValueSlots",
    "ValueTable",
    "ValuesById",
    "ValueSlot",
    "format_shape_index",
    "has_kind",
    "shape_of",
    "source_of",
    "stack_of",
]
