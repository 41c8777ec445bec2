"""Each line kind has a single-regex fast token and the fine-grained grammar; the
fast token may only speed reading up, so on every line of every sample dump where it
matches, the fine grammar must give exactly the same value."""

from __future__ import annotations

from pathlib import Path

import pytest
from parsy import ParseError, eof

from conftest import SAMPLES
from hlotop.parse import allocations, live_range, values
from hlotop.parse.dump import split_lines

GRAMMARS = {
    "allocation": allocations.ALLOCATION_LINE,
    "value": allocations.VALUE_LINE,
    "record head": values.RECORD_HEAD,
    "position": values.POSITION_LINE,
    "use": values.USE_LINE,
    "sequence": live_range.SEQUENCE_LINE,
    "buffer": live_range.BUFFER_LINE,
    "peak": live_range.PEAK_LINE,
}
DUMPS = sorted(p for p in SAMPLES.rglob("*.txt") if "memory-usage-report" not in p.name)


@pytest.mark.parametrize("kind", GRAMMARS)
def test_fast_token_agrees_with_the_grammar(kind):
    grammar = GRAMMARS[kind]
    whole = grammar.fine << eof
    matched = 0
    for path in DUMPS:
        for line in split_lines(Path(path).read_text()):
            fast = grammar.fast(line, 0)
            if not fast.status:
                continue
            matched += 1
            try:
                fine = whole.parse(line)
            except ParseError as err:  # pragma: no cover - the assertion reports it
                pytest.fail(
                    f"{path.name}: fast token accepted what the grammar rejects: {line!r} ({err})"
                )
            assert fast.value == fine, line
    assert matched > 0


def test_metadata_fast_token_agrees_with_the_grammar():
    from hlotop.parse.instruction import METADATA

    whole = METADATA.fine
    matched = 0
    for path in DUMPS:
        for line in split_lines(Path(path).read_text()):
            at = line.find("metadata={")
            if at < 0 or "from instruction:" not in line:
                continue
            fast = METADATA.fast(line, at)
            assert fast.status, line
            matched += 1
            assert fast.value == whole.parse_partial(line[at:])[0], line
    assert matched > 1000


def test_metadata_unescapes_c_escapes():
    from hlotop.parse.instruction import parse_instruction_text

    text = (
        r'%p = f32[] parameter(0), metadata={op_name="state[\'count\'] \"q\" \x1b]0;t\x07" '
        r'source_file="/a b.py" source_line=7 stack_frame_id=3}'
    )
    info = parse_instruction_text(text)
    assert info.op_name == "state['count'] \"q\" \x1b]0;t\x07"
    assert (info.source_file, info.source_line, info.stack_frame_id) == ("/a b.py", 7, 3)


def test_allocation_head_from_the_pattern_agrees_with_the_grammar():
    whole = allocations.ALLOCATION_LINE.fine << eof
    matched = 0
    for path in DUMPS:
        for line in split_lines(Path(path).read_text()):
            m = allocations.ALLOCATION_LINE.pattern.match(line)
            if m is None:
                continue
            matched += 1
            assert allocations._head_from_groups(*m.groups()) == allocations._head_of(
                *whole.parse(line)
            ), line
    assert matched > 100


BUFFER_ASSIGNMENTS = [
    p
    for p in DUMPS
    if p.name.endswith(("-buffer-assignment.txt", "-live-range.txt")) or p.parent.name == "seeds"
]


@pytest.mark.parametrize("path", BUFFER_ASSIGNMENTS, ids=lambda p: p.name)
def test_runs_read_like_line_by_line(path, monkeypatch):
    """The sections' inlined run readers (take_run) only make reading quicker: with them
    turned off, every line goes through feed() and the model is the same."""
    from hlotop.parse.dump import parse_text

    text = Path(path).read_text()
    fast_diags: list = []
    fast = parse_text(str(path), text, fast_diags)
    monkeypatch.setattr(allocations.AllocationSection, "take_run", lambda self, lines, i, *a: i)
    monkeypatch.setattr(live_range.LiveRangeSection, "take_run", lambda self, lines, i, *a: i)
    slow_diags: list = []
    slow = parse_text(str(path), text, slow_diags)
    assert fast.allocations == slow.allocations
    assert fast.live_range == slow.live_range
    assert fast_diags == slow_diags
    assert fast.allocations or fast.live_range.buffers


def test_whole_record_token_reads_like_the_line_grammar(monkeypatch):
    """A record read in one match keeps its position and use lines as printed; they
    must read back as the line grammar reads them, and print as XLA printed them."""
    import re

    from hlotop import load
    from hlotop.model import UsedValues
    from hlotop.parse import records as records_module

    fast_taken = 0
    for path in BUFFER_ASSIGNMENTS + [p for p in DUMPS if p.name.endswith("-values.txt")]:
        table = load(path, lazy=True).used_values
        if not isinstance(table, UsedValues):
            continue

        def read(n, table=table):
            return records_module.RECORDS.read(table.text_of(n), table.line_of(n), table.path, None)

        with monkeypatch.context() as m:
            m.setattr(records_module, "RECORD", re.compile(r"(?!)"))  # never matches
            slow = [read(n) for n in range(len(table))]
        for n, expected in enumerate(slow):
            fast = read(n)
            fast_taken += fast is not None and fast._positions_text is not None
            assert fast == expected, (path.name, n)
            if fast is not None:
                assert fast.position_texts() == [str(p) for p in expected.positions]
                assert fast.use_texts() == (
                    None if expected.uses is None else [str(u) for u in expected.uses]
                )
    assert fast_taken > 1000


def test_instruction_shape_tokens_agree_with_the_shape_grammar():
    """The instruction's shape is taken by one match when it is an array or a tuple of
    arrays; the shape grammar must read exactly the same span."""
    from hlotop.parse import instruction
    from hlotop.shapes.grammar import parse_shape_prefix

    tuples = 0
    for path in DUMPS:
        for line in split_lines(Path(path).read_text()):
            at = line.find("from instruction: ")
            head = instruction._HEAD.match(line, at + 18) if at >= 0 else None
            if head is None:
                continue
            rest = line[head.end() :]
            m = instruction._ARRAY_SHAPE.match(rest) or instruction._FLAT_TUPLE_SHAPE.match(rest)
            if m is None:
                continue
            tuples += m.group(0).startswith("(")
            _, remainder = parse_shape_prefix(rest)
            assert m.group(0) == rest[: len(rest) - len(remainder)], line
    assert tuples > 10


ASCII_DUMPS = [
    p
    for p in BUFFER_ASSIGNMENTS + [p for p in DUMPS if p.name.endswith("-values.txt")]
    if p.read_bytes().isascii()
]


@pytest.mark.parametrize("path", ASCII_DUMPS, ids=lambda p: p.name)
def test_an_ascii_dump_read_as_bytes_reads_like_its_text(path):
    """An ASCII dump is parsed from its bytes (only what is read line by line, and each
    record when read, is decoded): the model and the diagnostics, a damaged record's
    included, are those of the decoded text."""
    from hlotop.parse.dump import parse_text

    data = Path(path).read_bytes()
    first = data.find(b"\n positions:\n")
    if first >= 0:  # damage a record: its diagnostics come from the line grammar
        data = data[:first] + b"\n positions:\n  bad{x\n" + data[first + 13 :]
    as_text: list = []
    as_bytes: list = []
    text = parse_text(str(path), data.decode(), as_text)
    raw = parse_text(str(path), data, as_bytes)
    assert raw.allocations == text.allocations and raw.live_range == text.live_range
    assert isinstance(raw.used_values, tuple) or raw.used_values.text is data
    records_text: list = []
    records_bytes: list = []
    if not isinstance(raw.used_values, tuple):
        assert list(raw.used_values.checked(records_bytes)) == list(
            text.used_values.checked(records_text)
        )
        assert records_bytes == records_text and (first < 0 or records_bytes)
        assert raw.used_values.line_of(len(raw.used_values) - 1) == text.used_values.line_of(
            len(text.used_values) - 1
        )
    assert as_bytes == as_text


def test_long_scans_in_pieces_find_what_one_scan_finds(monkeypatch):
    """The records' end, line counts and line ends are found SCAN characters at a time
    (so that a browser's keys never wait long); pieces as small as a few characters
    give what one scan of the whole text gives."""
    from hlotop.loading import loader
    from hlotop.parse import dump, scan

    path = next(
        p
        for p in BUFFER_ASSIGNMENTS
        if p.name.endswith("-buffer-assignment.txt") and "0.4.31" in str(p)
    )
    data = Path(path).read_bytes()
    text = data.decode()
    whole = dump._cut_records(str(path), text)
    assert whole[0] is not None
    for piece in (3, 7, 64):
        monkeypatch.setattr(scan, "SCAN", piece)
        pieces = dump._cut_records(str(path), text)
        assert (pieces[0].begin, pieces[0].end, pieces[0].first_line, pieces[0].end_line) == (
            whole[0].begin,
            whole[0].end,
            whole[0].first_line,
            whole[0].end_line,
        )
        assert pieces[1] == whole[1]
        for source in (text, data, text + "no line end", text + "\r\n\n"):
            assert dump._lines(source) == dump.split_lines(
                source.decode() if isinstance(source, bytes) else source
            )
        assert scan.count_lines(text, 5, len(text) - 5) == text.count("\n", 5, len(text) - 5)
        assert scan.contains(data, b"\n positions:\n") and not scan.contains(data, b"\r\n")
        assert scan.contains(data.replace(b"\n", b"\r\n"), b"\r\n")
        assert loader.read_text(str(path), data, []) is data
