"""A compiled module's buffer assignment as read: the sections of its files
(:class:`ParsedSections`) and the whole module with its figures (:class:`ModuleDump`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from hlotop.model.allocation import BufferAllocation
from hlotop.model.allocation_lines import AllocationLines
from hlotop.model.allocation_table import AllocationTable
from hlotop.model.dump_file import Diagnostic, DumpFile
from hlotop.model.figures import Analysis
from hlotop.model.live_range import HloLiveRange
from hlotop.model.memory_report import MemoryUsageReport
from hlotop.model.module_text import EntryParameter, IoAlias
from hlotop.model.source import StackFrameTable
from hlotop.model.used_values import UsedValues
from hlotop.model.values import InstructionText, UsedValue


@dataclass(frozen=True, slots=True)
class ParsedSections:
    """What the parser read out of one or more files of a module."""

    # An AllocationTable (given a tuple of allocations, their table), or a first look's
    # AllocationLines
    allocations: Sequence[BufferAllocation] = ()
    total_bytes_used: int | None = None
    # Lazy when read from a file (its text a str, or bytes when it is all ASCII).
    used_values: UsedValues[str] | UsedValues[bytes] | tuple[UsedValue, ...] = ()
    live_range: HloLiveRange | None = None
    live_range_unavailable: bool = False
    memory_usage_report: MemoryUsageReport | None = None
    stack_frames: StackFrameTable | None = None
    # The entry's input_output_alias from the module's HLO text beside the dump; None
    # when that text was not read (an empty tuple: read, and nothing aliases).
    input_output_alias: tuple[IoAlias, ...] | None = None
    # Reads the metadata of the computations in that HLO text on first call
    # ({computation: (op_name, stack_frame_id)}); None without the text.
    called_metadata: Callable[[], Mapping[str, tuple[str, int | None]]] | None = None
    # Reads the ENTRY computation's parameters of that HLO text on first call (their
    # per-device shapes, shardings and op_names); None without the text.
    entry_parameters: Callable[[], tuple[EntryParameter, ...]] | None = None
    saw_buffer_assignment: bool = False
    saw_used_values: bool = False
    # The 'Total bytes used' line gave the size in parentheses too, "N (286.05MiB)":
    # XLA since 2021-08-09, whose combined dumps all end with an HloLiveRange block
    # (FORMATS.md 11).
    total_bytes_sized: bool = False

    def __post_init__(self) -> None:
        # Allocations given as objects are kept as columns, as the parser keeps them.
        if isinstance(self.allocations, (tuple, list)):
            object.__setattr__(self, "allocations", AllocationTable.of(self.allocations))


@dataclass(slots=True)
class ModuleDump:
    """One compiled module's buffer assignment, from one or several files, with the
    figures :func:`hlotop.analysis.analyze` derived from it."""

    name: str
    files: tuple[DumpFile, ...]
    sections: ParsedSections
    diagnostics: list[Diagnostic]
    analysis: Analysis
    records_read: bool = False
    # (bytes read, bytes in the module's files) while this is only the first look at a
    # big dump (hlotop.loading.preview), shown while the whole of it loads; None after.
    preview: tuple[int, int] | None = None

    @property
    def allocations(self) -> Sequence[BufferAllocation]:
        """The allocations in index order."""
        return self.sections.allocations

    @property
    def reading_allocations(self) -> bool:
        """Whether this is a first look whose allocations are still their lines (an
        :class:`~hlotop.model.AllocationLines`): their kinds' totals and JAX's
        ``memory_analysis()`` figures are not worked out yet."""
        return isinstance(self.sections.allocations, AllocationLines)

    @property
    def total_bytes_used(self) -> int | None:
        """``Total bytes used`` (bytes), or None if the dump has none."""
        return self.sections.total_bytes_used

    @property
    def used_values(self) -> UsedValues[str] | UsedValues[bytes] | tuple[UsedValue, ...]:
        """The ``Used values`` records: a sequence, parsed on demand."""
        return self.sections.used_values

    @property
    def live_range(self) -> HloLiveRange | None:
        """The ``HloLiveRange`` block, or None (before 2021-04, or not dumped)."""
        return self.sections.live_range

    @property
    def memory_usage_report(self) -> MemoryUsageReport | None:
        """The ``-memory-usage-report.txt`` contents, or None."""
        return self.sections.memory_usage_report

    @property
    def layout(self) -> str:
        """``"combined"`` (one ``-buffer-assignment.txt`` with every section, before
        2026-04), ``"split"`` (2026-04 on: the sections in sibling files) or
        ``"report-only"`` (a ``-memory-usage-report.txt`` and no file of the buffer
        assignment: no allocation line, value record or live range was read)."""
        kinds = {f.kind for f in self.files} - {"module-text"}
        if "combined" in kinds:
            return "combined"
        return "report-only" if kinds == {"memory-usage-report"} else "split"

    @property
    def report_only(self) -> bool:
        """Whether all the module has is its memory-usage report (:attr:`layout`)."""
        return self.layout == "report-only"

    def read_records(self, progress: Callable[[int, int], bool | None] | None = None) -> None:
        """Parse every ``Used values`` record once, adding what cannot be read to
        :attr:`diagnostics`. ``progress(done, total)`` (records) is called every 1024
        records; if it returns True, reading stops and can be started again later.
        Safe to call from a worker thread; once complete, further calls do nothing."""
        if self.records_read:
            return
        table = self.sections.used_values
        if isinstance(table, UsedValues):
            found: list[Diagnostic] = []
            done = table.parse_all(found, progress)
            if done < len(table):
                return  # stopped: its diagnostics are dropped, a later call starts over
            self.diagnostics.extend(found)
        self.records_read = True

    def take_record_diagnostics(self, diagnostics: list[Diagnostic]) -> None:
        """Take what an earlier complete pass over these same files found
        (:mod:`hlotop.loading.record_cache`) instead of reading every record again:
        adds it to :attr:`diagnostics` and sets :attr:`records_read`. Does nothing once
        read."""
        if not self.records_read:
            self.diagnostics.extend(diagnostics)
            self.records_read = True

    def defining_instructions(self) -> dict[int, InstructionText | None]:
        """Each recorded value's defining instruction (value id -> its record's
        ``from instruction:`` line read), from one pass over the records in dump order
        (:meth:`checked_records`): for a caller that needs every value's (an OOM
        text's links, a diff), where a record at a time, at random, goes back to the
        file for each. Memory: one small object a record."""
        return {r.value.id: r.instruction for r in self.checked_records()}

    def checked_records(self) -> Iterator[UsedValue]:
        """Every ``Used values`` record, each parsed once, in dump order; when the
        iteration completes, their diagnostics have been added and
        :attr:`records_read` is set. For a single pass over big dumps (``--json``)."""
        table = self.sections.used_values
        if self.records_read or not isinstance(table, UsedValues):
            yield from table
            return
        found: list[Diagnostic] = []
        yield from table.checked(found)
        self.diagnostics.extend(found)
        self.records_read = True
