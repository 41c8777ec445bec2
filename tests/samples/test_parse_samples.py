"""Every dump in sample_dumps/ (the seeds and the real JAX dumps of every era) opens
with no diagnostic and with the figures the dump itself states. The expected figures
are read with plain string operations, independently of hlotop's grammars."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import SAMPLES
from hlotop import load
from hlotop.loading.loader import split_module_prefix
from sample_index import MODULES


def _oracle(entry: Path) -> dict:
    """Figures read from the module's files without hlotop's parser."""
    split = split_module_prefix(entry)
    text = entry.read_text()
    if split is not None:
        for suffix in ("-buffer-assignment-values.txt", "-live-range.txt"):
            sibling = entry.with_name(split[0] + suffix)
            if sibling.exists():
                text += "\n" + sibling.read_text()
    lines = text.splitlines()
    total = re.search(r"^Total bytes used: (\d+)", text, re.M)
    sizes = [
        int(m.group(1))
        for m in re.finditer(r"^allocation \d+: (?:0x[0-9a-f]+, )?size (\d+)", text, re.M)
    ]
    peak = re.search(r"^  Live ranges at (\d+) \(peak\):$", text, re.M)
    entries = 0
    if peak:
        at = lines.index(peak.group(0)) + 1
        while at < len(lines) and lines[at].startswith("    "):
            entries += 1
            at += 1
    return {
        "allocations": len(sizes),
        "allocated": sum(sizes),
        "total": int(total.group(1)) if total else None,
        "peak": int(peak.group(1)) if peak else None,
        "entries": entries,
        "records": lines.count(" positions:"),  # one per record, glued or not
    }


def test_there_are_samples_of_every_layout():
    names = [p.name for p in MODULES]
    assert len([n for n in names if n.endswith("-buffer-assignment.txt")]) >= 5
    assert len(list(SAMPLES.rglob("*-buffer-assignment-values.txt"))) >= 1


@pytest.mark.parametrize("entry", MODULES, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_sample_opens_with_its_own_figures(entry):
    m = load(entry)
    expected = _oracle(entry)
    assert [str(d) for d in m.diagnostics] == []
    assert len(m.allocations) == expected["allocations"]
    assert sum(a.size for a in m.allocations) == expected["allocated"]
    assert m.total_bytes_used == expected["total"] == expected["allocated"]
    assert len(m.used_values) == expected["records"]
    if expected["peak"] is not None:
        assert m.live_range.peak.time == expected["peak"]
        assert m.analysis.peak_step == expected["peak"]
        assert len(m.live_range.peak.entries) == expected["entries"]
    # Every value lies inside its allocation, and every live range joins a value.
    for alloc in m.allocations:
        for slot in alloc.values:
            assert 0 <= slot.offset and slot.offset + slot.size <= alloc.size
    assert all(info.value.id >= 0 for info in m.analysis.values)


@pytest.mark.parametrize("entry", MODULES, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_sample_peak_is_found_without_its_peak_lines(entry, tmp_path):
    """XLA's peak step is computed, not copied: drop the printed peak and compare."""
    m = load(entry)
    if m.live_range is None or m.live_range.peak is None:
        pytest.skip("no live ranges in this dump")
    split = split_module_prefix(entry)
    if split is None:
        files = {entry.name: entry.read_text()}
    else:
        files = {f.with_name(f.name).name: f.read_text() for f in entry.parent.glob(split[0] + "*")}
    for name, text in files.items():
        if "  Live ranges at " in text:
            text = text.split("  Live ranges at ")[0]
        (tmp_path / name).write_text(text)
    stripped = load(tmp_path / entry.name)
    assert stripped.live_range.peak is None
    assert stripped.analysis.peak_step == m.live_range.peak.time


@pytest.mark.parametrize("entry", MODULES, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_peak_lines_and_report_rows_keep_the_line_they_were_printed_at(entry):
    """The diagnostics screen leads from a line to what is printed there: each peak
    entry, report allocation and report row names its own line (1-based)."""
    m = load(entry)
    text_of = {f.kind: Path(f.path).read_text().splitlines() for f in m.files}
    peak = m.live_range.peak if m.live_range is not None else None
    if peak is not None:
        lines = text_of.get("live-range", text_of.get("combined"))
        for e in peak.entries:
            index = "" if e.shape_index is None else "{" + ",".join(map(str, e.shape_index)) + "}"
            assert lines[e.line - 1].startswith(f"    {e.name}{index}: {e.bytes} bytes"), e
    report = m.memory_usage_report
    if report is None:
        return
    lines = text_of["memory-usage-report"]
    tables = list(report.allocations) + [t for s in report.memory_spaces for t in s.allocations]
    assert tables
    for table in tables:
        if report.era == "A":
            assert lines[table.line - 1] == table.summary
            assert lines[table.list_line - 1].endswith("; " + table.summary)
        else:
            assert lines[table.line - 1].strip().startswith("cumulative_size;")
            assert table.list_line == 0
        for row in table.rows:
            assert f"; {row.offset:>12}; {row.used_by_n_values:>16}; " in lines[row.line - 1], row


@pytest.mark.parametrize("entry", MODULES, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_allocations_values_records_and_live_ranges_keep_their_line(entry):
    """Every allocation, value line, value record and live range names the 1-based line
    it was printed on, however it was read (a run of lines, one record on its own, or
    the first and last records counted from either end of the section)."""
    m = load(entry, lazy=True)
    text_of = {f.kind: Path(f.path).read_text().splitlines() for f in m.files}
    lines = text_of.get("buffer-assignment", text_of.get("combined"))
    for alloc in m.allocations:
        assert lines[alloc.line - 1].startswith(f"allocation {alloc.index}: "), alloc.line
        for slot in alloc.values:
            assert lines[slot.line - 1].startswith(f" value: <{slot.value.id} "), slot.line
    records = m.used_values
    if len(records):
        record_lines = text_of.get("values", text_of.get("combined"))
        last = len(records) - 1
        ends = [records.line_of(0), records.line_of(last)]  # before any checkpoint exists
        assert ends == [records[0].line, records[last].line]
        for r in records:
            assert f"<{r.value.id} " in record_lines[r.line - 1], r.line
    if m.live_range is not None:
        live_lines = text_of.get("live-range", text_of.get("combined"))
        for rng in m.live_range.buffers:
            assert live_lines[rng.line - 1].startswith(f"    {rng.name}{{"), rng.line


def test_records_read_from_two_threads_at_once_are_the_records_read_from_one():
    """The records are one collection shared by the browser's UI thread and its
    background pass: read from both at once (its index, line numbers and cache made
    under its own lock), every record is the one a single reader gets."""
    import threading

    entry = next(p for p in MODULES if "transformer_big" in str(p) and "0.9.2" in str(p))
    expected = [(r.value, r.line, r.instruction_text) for r in load(entry).used_values]
    assert len(expected) > 1000
    table = load(entry, lazy=True).used_values
    failures: list[BaseException] = []
    results: dict[str, list] = {}

    def reader(name: str, numbers) -> None:
        try:
            got = []
            for n in numbers:
                r = table.get(table.ids[n]) if name == "by id" else table.record(n)
                got.append((r.value, r.line, r.instruction_text))
            results[name] = got
        except BaseException as err:  # noqa: BLE001 - reported by the assertion below
            failures.append(err)

    count = len(expected)
    threads = [
        threading.Thread(target=reader, args=("in order", range(count))),
        threading.Thread(target=reader, args=("by id", range(count))),
    ]
    for t in threads:
        t.start()
    diagnostics: list = []
    checked = [(r.value, r.line, r.instruction_text) for r in table.checked(diagnostics)]
    for t in threads:
        t.join()
    assert not failures
    assert results["in order"] == results["by id"] == checked == expected
    assert diagnostics == []


def test_loading_says_what_it_reads():
    """load(stage=...) hears each file as it is read, how far into the allocations and
    the live ranges the reading is, and the analysis (the browser shows it)."""
    entry = next(p for p in MODULES if "transformer_big" in str(p) and "0.10.2" in str(p))
    stages: list[str] = []
    load(entry, lazy=True, stage=stages.append)
    read = [s[len("reading ") :] for s in stages if s.startswith("reading ")]
    assert read[0].endswith("-buffer-assignment-values.txt")  # its records go first
    siblings = entry.parent.glob(entry.name.split("-buffer-assignment")[0] + "-*.txt")
    assert sorted(read) == sorted(p.name for p in siblings)
    percents = [int(s.split()[-1][:-1]) for s in stages if s.startswith("allocations ")]
    assert percents and percents == sorted(percents) and all(0 <= p < 100 for p in percents)
    assert any(s.startswith("live ranges ") for s in stages)
    assert stages[-1] == "analysing"
