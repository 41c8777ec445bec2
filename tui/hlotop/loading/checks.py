"""Warnings about a dump as a whole: files cut short (``truncated: ...``), a split
module's siblings that were not found, a memory-usage report opened without its buffer
assignment, and figures that disagree with each other."""

from __future__ import annotations

from pathlib import Path

from hlotop.loading.discover import SPLIT_SUFFIXES, split_module_prefix
from hlotop.model import (
    Analysis,
    Diagnostic,
    DumpFile,
    MemoryUsageReport,
    ParsedSections,
    UsedValues,
)
from hlotop.model.allocation_lines import allocated_bytes
from hlotop.units import human_bytes


def check_truncation(
    path: str,
    parsed: ParsedSections,
    kind: str,
    diagnostics: list[Diagnostic],
    *,
    stdin: bool = False,
) -> None:
    """Warnings (``truncated: ...``) for a file whose sections stop where a whole dump
    would go on: what was read before the cut is kept. ``kind`` as in :class:`DumpFile`;
    ``stdin``: the text came on standard input, so it has no name to find siblings by
    (allocations alone are then a jax >= 0.10 ``-buffer-assignment.txt`` as likely as a
    combined dump cut short, and the warning says so instead)."""

    said = len(diagnostics)

    def cut(message: str, line: int = 0) -> None:
        diagnostics.append(Diagnostic(path, line, "truncated: " + message, "warning"))

    if kind == "combined" and parsed.saw_buffer_assignment:
        if stdin and only_allocations(parsed):
            diagnostics.append(Diagnostic(path, 0, STDIN_ALLOCATIONS_ONLY, "warning"))
        elif parsed.total_bytes_used is None:
            cut("the file ends before 'Total bytes used': only the allocations were read")
        elif not parsed.saw_used_values:
            cut("no 'Used values:' section after 'Total bytes used'")
    records = parsed.used_values
    if isinstance(records, UsedValues) and len(records) > 1:
        first, last = records.record(0), records.record(len(records) - 1)
        if (
            first is not None
            and last is not None
            and first.instruction_text is not None
            and last.instruction_text is None
        ):
            cut(
                f"the last value record ({last.value}) stops before its 'from instruction' line",
                last.line,
            )
    live = parsed.live_range
    if live is not None:
        if len(live.instruction_sequence) < live.max_time:
            cut(
                f"the schedule lists {len(live.instruction_sequence)} of the "
                f"{live.max_time} steps of 'HloLiveRange (max {live.max_time})'",
                live.line,
            )
        elif live.instruction_sequence and not live.buffers:
            cut("no 'BufferLiveRange:' lines after the instruction sequence", live.line)
        elif live.instruction_sequence and live.peak is None:
            cut(
                "no 'Live ranges at N (peak):' list after the live ranges (XLA prints "
                "one after them, since 2021-04), so the last live ranges may be lost "
                "and XLA's peak is not shown",
                live.line,
            )
    elif (
        kind == "combined"
        and parsed.total_bytes_sized
        and parsed.saw_used_values
        and not parsed.live_range_unavailable
        and len(diagnostics) == said  # not cut inside its last record
    ):
        cut(
            "no 'HloLiveRange' block after the value records: XLA has appended one to "
            "every combined dump since 2021-04, before its 'Total bytes used' line gave "
            "the size in parentheses (2021-08), so the schedule, the live ranges and "
            "XLA's peak are not shown"
        )


# Standard input holding only a 'BufferAssignment:' section (hlotop - < X-buffer-assignment.txt).
STDIN_ALLOCATIONS_ONLY = (
    "only allocations ('BufferAssignment:') on standard input: a jax >= 0.10 dump keeps "
    "'Total bytes used' and the value records in its -buffer-assignment-values.txt and "
    "the live ranges in its -live-range.txt, sibling files that standard input cannot "
    "name, so they are not shown; open the -buffer-assignment.txt by its path to read "
    "them (if this is an older, combined dump, it was cut short)"
)


def only_allocations(parsed: ParsedSections) -> bool:
    """True when ``parsed`` (one file's sections) is a ``BufferAssignment:`` section
    (``BufferAssignment::ToString``) and nothing else: all a jax >= 0.10
    ``-buffer-assignment.txt`` holds (FORMATS.md 1)."""
    return (
        parsed.saw_buffer_assignment
        and parsed.total_bytes_used is None
        and not parsed.saw_used_values
        and parsed.live_range is None
        and not parsed.live_range_unavailable
        and parsed.memory_usage_report is None
    )


# What each file of a split module holds (FORMATS.md 1), and so what is not shown
# without it. XLA writes the values and live-range files only with
# --xla_dump_buffer_assignment_analysis (on by default).
_HOLDS = {
    "buffer-assignment": "the allocations ('BufferAssignment:') in its {file}, so no "
    "allocation is shown",
    "values": "'Total bytes used' and the value records (positions, uses, defining "
    "instructions) in its {file}, so they are not shown",
    "live-range": "the schedule, every value's live range and XLA's peak in its {file}, "
    "so the timeline and the peak are not shown",
    "memory-usage-report": "XLA's memory-usage report in its {file}, so it is not shown",
}
_ANALYSIS_FLAG = " (XLA writes it unless --xla_dump_buffer_assignment_analysis=false)"


def check_siblings(
    path: Path,
    files: list[DumpFile],
    diagnostics: list[Diagnostic],
    report: MemoryUsageReport | None = None,
) -> None:
    """Warnings for the files of a split module (FORMATS.md 1) that were not found
    beside ``path`` (the file opened), one per missing file, at its path, line 0;
    nothing when the module is a combined dump. ``files`` are the files read, with
    their kinds. A memory-usage report read with no file of its buffer assignment
    (``report``: what it holds) gets one warning instead, at its own path, whatever
    its name (:func:`report_alone`). Raises nothing."""
    if any(f.kind == "combined" for f in files):
        return
    split = split_module_prefix(path)
    have = {f.kind for f in files} - {"module-text"}
    if have == {"memory-usage-report"} and report is not None:
        if split is None:
            why = (
                "its name is not XLA's (<module>-memory-usage-report.txt), so no sibling "
                "file can be found by it"
            )
            message = report_alone(report, why)
        else:
            assignment = split[0] + "-buffer-assignment.txt"
            why = ASSIGNMENT_NOT_FOUND if report.era == "A" else SPLIT_NOT_FOUND
            message = report_alone(report, why, assignment)
        diagnostics.append(Diagnostic(files[0].path, 0, message, "warning"))
        return
    if split is None:
        return
    prefix = split[0]
    for suffix, kind in SPLIT_SUFFIXES.items():
        if kind in have:
            continue
        missing = path.with_name(prefix + suffix)
        flag = _ANALYSIS_FLAG if kind in ("values", "live-range") else ""
        holds = _HOLDS[kind].format(file=suffix)
        diagnostics.append(
            Diagnostic(
                str(missing),
                0,
                f"sibling file not found: a jax >= 0.10 dump keeps {holds}{flag}",
                "warning",
            )
        )


# What a report alone misses (FORMATS.md 1): an era-A report (jax 0.4.35 .. 0.9.1) comes
# with a combined -buffer-assignment.txt; an era-B one (jax >= 0.9.2) from jax 0.10 on
# with the split module's three files.
ASSIGNMENT_NOT_FOUND = "the module's -buffer-assignment.txt was not found beside it"
SPLIT_NOT_FOUND = (
    "the module's -buffer-assignment.txt (and, from jax 0.10, its "
    "-buffer-assignment-values.txt and -live-range.txt) was not found beside it"
)
STDIN_REPORT = "standard input names no file, so the report's sibling files cannot be found"


def report_alone(report: MemoryUsageReport, why: str, assignment: str | None = None) -> str:
    """The warning for a memory-usage report read without its buffer assignment
    (``why`` says why that was not found; ``assignment``: the name of the file to open
    instead, if known): what is missing and what that costs, and what the report
    holds, as read from ``BufferAssignment::MemoryUsageReport``'s text (FORMATS.md 7):
    its allocation count and total in bytes (:attr:`MemoryUsageReport.total`: era A
    its ``Total bytes used``; era B the sum of its memory spaces' totals, the same
    figure). Raises nothing."""
    count = report.listed()
    spaces = len(report.memory_spaces)
    where = f" in {spaces} memory spaces" if spaces > 1 else ""
    holds = f"{count} allocation{'' if count == 1 else 's'}{where}"
    total = report.total
    if total is not None:
        holds += f" and a total of {human_bytes(total)} ({total} bytes)"
    see = f" (open {assignment} to see them)" if assignment else ""
    return (
        f"memory-usage report without its buffer assignment ({why}): only the "
        "report's total and the allocations it lists are shown; no value, live range or "
        "schedule, hence no XLA peak step or peak bytes and no memory_analysis() "
        f"figures{see}; the report lists {holds}"
    )


def check_consistency(
    path: str, sections: ParsedSections, analysis: Analysis, diagnostics: list[Diagnostic]
) -> None:
    """Warnings for figures that disagree with each other."""
    total = sections.total_bytes_used
    allocations = sections.allocations
    allocated = allocated_bytes(allocations)
    # (No allocation under a 'BufferAssignment:' header, and a total above 0: the
    # allocations were cut off.)
    if (
        total is not None
        and (sections.allocations or sections.saw_buffer_assignment)
        and total != allocated
    ):
        diagnostics.append(
            Diagnostic(
                path,
                0,
                f"'Total bytes used: {total}' but the allocations add up to {allocated} bytes",
                "warning",
            )
        )
    live = sections.live_range
    if (
        live is not None
        and live.peak is not None
        and analysis.peak_step is not None
        and live.peak.time != analysis.peak_step
    ):
        diagnostics.append(
            Diagnostic(
                path,
                live.peak.line,
                f"XLA printed the peak at step "
                f"{live.peak.time}; hlotop computes "
                f"step {analysis.peak_step}",
                "warning",
            )
        )
