"""The section reader's header table (hlotop.parse.dump.HEADERS): which line opens which
section reader, what a header line that stands alone gives, and what is said of a line
no section takes. Real seed dumps, with sections repeated, moved or cut."""

from __future__ import annotations

from pathlib import Path

from conftest import sample
from hlotop.parse.dump import HEADERS, parse_text
from hlotop.parse.section import Section

SEED0 = Path(sample("seeds/000_aa093b3e4f73e23a.txt")).read_text()
REPORT = Path(
    sample(
        "jax/jax-0.7.2/mlp_train/"
        "module_0001.jit_train_step.cpu_after_optimizations-memory-usage-report.txt"
    )
)


def _parse(text: str):
    diagnostics: list = []
    return parse_text("t.txt", text, diagnostics), diagnostics


def _block(text: str, header: str) -> str:
    """The lines of ``text`` from the one that starts with ``header`` to the end."""
    return text[text.index("\n" + header) + 1 :]


def test_a_seed_reads_every_section_and_its_total_line():
    parsed, diagnostics = _parse(SEED0)
    assert diagnostics == []
    assert parsed.saw_buffer_assignment and parsed.saw_used_values
    assert len(parsed.allocations) == 4 and len(parsed.used_values) == 4
    assert parsed.total_bytes_used == 41943040 and parsed.total_bytes_sized
    assert parsed.live_range is not None and parsed.live_range.max_time == 4
    assert parsed.live_range.stack_trace is not None
    assert parsed.memory_usage_report is None


def test_a_total_without_its_size_is_read_and_said_unsized():
    parsed, diagnostics = _parse(SEED0.replace("41943040 (40.00MiB)", "41943040"))
    assert diagnostics == []
    assert parsed.total_bytes_used == 41943040 and not parsed.total_bytes_sized


def test_a_second_live_range_block_is_said_and_the_first_kept():
    live = _block(SEED0, "HloLiveRange (max ")
    second = live.replace("(max 4)", "(max 9)").replace("Live ranges at 3", "Live ranges at 1")
    parsed, diagnostics = _parse(SEED0 + second)
    at = SEED0.count("\n") + 1
    assert [(d.line, d.severity, d.message) for d in diagnostics][0] == (
        at,
        "warning",
        "a second HloLiveRange block; using the first",
    )
    assert parsed.live_range.max_time == 4 and parsed.live_range.peak.time == 3
    # Its lines are outside any section then: each said once, by the header table.
    assert all("expected a section header" in d.message for d in diagnostics[1:])
    assert len(diagnostics) == second.count("\n")


def test_a_second_used_values_section_is_said_and_the_first_kept():
    values = SEED0[SEED0.index("Used values:") : SEED0.index("HloLiveRange")]
    parsed, diagnostics = _parse(SEED0 + values.replace("<8 args_2_.1", "<99 extra"))
    first = SEED0.count("\n") + 2  # the second section's first record
    assert [(d.line, d.message) for d in diagnostics] == [
        (first, "a second 'Used values:' section; using the first")
    ]
    assert [r.value.id for r in parsed.used_values] == [8, 9, 10, 11]


def test_a_line_outside_any_section_names_the_headers():
    parsed, diagnostics = _parse("stray line\n" + SEED0)
    assert [(d.line, d.message) for d in diagnostics] == [
        (
            1,
            "unexpected line 'stray line': expected a section header ('BufferAssignment:', "
            "'Total bytes used:', 'Used values:', 'HloLiveRange', 'Memory Space:')",
        )
    ]
    assert len(parsed.allocations) == 4
    named = [h.named for h in HEADERS if h.named]
    assert named == ["BufferAssignment:", "Total bytes used:", "Used values:"] + [
        "HloLiveRange",
        "Memory Space:",
    ]


def test_a_line_a_section_refuses_names_that_sections_lines():
    text = SEED0.replace("allocation 2: size", "alocation 2: size")
    _, diagnostics = _parse(text)
    assert diagnostics[0].message.startswith("unexpected line 'alocation 2: size")
    assert diagnostics[0].message.endswith(
        "expected an allocation line 'allocation N: size S, ...:' or ' value: <...>'"
    )


def test_live_ranges_not_available_is_said_and_the_section_goes_on():
    at = SEED0.index("  Live ranges at")
    text = SEED0[:at] + "HloLiveRange not available (finalized)\n" + SEED0[at:]
    parsed, diagnostics = _parse(text)
    assert diagnostics == []
    assert parsed.live_range_unavailable and parsed.live_range.peak.time == 3


def test_a_report_opens_on_its_total_and_takes_its_own_total_lines():
    text = REPORT.read_text()
    parsed, diagnostics = _parse(text)
    assert diagnostics == []
    report = parsed.memory_usage_report
    assert report is not None and report.era == "A" and report.total_bytes == 917336
    assert parsed.total_bytes_used is None  # the report's total, not the module's line
    # A second 'Total bytes used' inside the report is no header: it goes to the report,
    # whose last table refuses it; nothing else changes.
    again, diagnostics = _parse(text + "Total bytes used: 5 (5B)\n")
    assert [d.message for d in diagnostics] == [
        "memory report table row: column 1: expected a size like 36.0KiB, "
        "found 'Total bytes used: 5 (5B)'"
    ]
    assert again.total_bytes_used is None and again.memory_usage_report == report


def test_each_header_opens_a_reader_of_the_one_interface(monkeypatch):
    """Every reader the table opens has the members of Section (mypy checks their types)."""
    from hlotop.parse import dump

    opened = []
    real = dump._Reading.reader

    def spy(self, kind, make):
        opened.append(real(self, kind, make))
        return opened[-1]

    monkeypatch.setattr(dump._Reading, "reader", spy)
    for text in (SEED0, REPORT.read_text()):
        _parse(text)
    assert {type(r).__name__ for r in opened} == {
        "AllocationSection",
        "UsedValuesSection",
        "LiveRangeSection",
        "MemoryReportSection",
    }
    members = [m for m in dir(Section) if not m.startswith("_")]
    assert sorted(members) == ["expects", "feed", "finish", "stage", "take_run"]
    for reader in opened:
        assert all(hasattr(reader, m) for m in members), reader
