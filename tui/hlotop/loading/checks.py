"""Warnings about a dump as a whole: files cut short (``truncated: ...``), a split
module's missing siblings, and figures that disagree with each other."""

from __future__ import annotations

from pathlib import Path

from hlotop.loading.discover import SPLIT_SUFFIXES, split_module_prefix
from hlotop.model import Analysis, Diagnostic, DumpFile, ParsedSections, UsedValues


def check_truncation(
    path: str, parsed: ParsedSections, kind: str, diagnostics: list[Diagnostic]
) -> None:
    """Warnings (``truncated: ...``) for a file whose sections stop where a whole dump
    would go on: what was read before the cut is kept. ``kind`` as in :class:`DumpFile`."""

    def cut(message: str, line: int = 0) -> None:
        diagnostics.append(Diagnostic(path, line, "truncated: " + message, "warning"))

    if kind == "combined" and parsed.saw_buffer_assignment:
        if parsed.total_bytes_used is None:
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


def check_siblings(path: Path, files: list[DumpFile], diagnostics: list[Diagnostic]) -> None:
    split = split_module_prefix(path)
    if split is None or any(f.kind == "combined" for f in files):
        return
    have = {f.kind for f in files}
    for suffix, kind in SPLIT_SUFFIXES.items():
        if kind not in have:
            diagnostics.append(
                Diagnostic(
                    str(path.with_name(split[0] + suffix)),
                    0,
                    f"truncated: missing sibling file of a split "
                    f"module ({kind}); what it holds is not shown",
                    "warning",
                )
            )


def check_consistency(
    path: str, sections: ParsedSections, analysis: Analysis, diagnostics: list[Diagnostic]
) -> None:
    """Warnings for figures that disagree with each other."""
    total = sections.total_bytes_used
    allocated = sum(a.size for a in sections.allocations)
    if total is not None and sections.allocations and total != allocated:
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
