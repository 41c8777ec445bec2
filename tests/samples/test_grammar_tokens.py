"""Each line form is defined once (hlotop.parse.line_form) and read two ways: one regular
expression with a generated builder (the fast path) and a parsy grammar (the fine path,
which also says what a rejected line lacked). The fast path may only speed reading up,
so on every line of every sample dump where it matches, the fine grammar must give
exactly the same object."""

from __future__ import annotations

from pathlib import Path

import pytest
from parsy import ParseError

from conftest import swept
from hlotop.parse import allocations, live_range, memory_report, stack_trace, values
from hlotop.parse.dump import split_lines
from hlotop.parse.line_form import _group_names

FORMS = {
    "allocation": allocations.ALLOCATION_HEAD,
    "value": allocations.VALUE_LINE,
    "value (pre-2019)": allocations.LEGACY_VALUE_LINE,
    "cross-color reuse": allocations.REUSED_LINE,
    "record head": values.RECORD_HEAD,
    "position": values.POSITION_LINE,
    "use": values.USE_LINE,
    "sequence": live_range.SEQUENCE_LINE,
    "buffer": live_range.BUFFER_LINE,
    "peak": live_range.PEAK_LINE,
    "stack trace": stack_trace.TREE_LINE,
    "report allocation": allocations.REPORT_ALLOCATION_LINE,
    "report row": memory_report.TABLE_ROW,
    "report list row": memory_report.LIST_ROW,
    "total": allocations.TOTAL_LINE,
    "live range header": live_range.HEADER,
    "peak header": live_range.PEAK_HEADER,
    "stack trace header": stack_trace.HEADER,
    "memory space header": memory_report.SPACE_HEADER,
    "memory space total": memory_report.SPACE_TOTAL_LINE,
    "rest line": memory_report.REST_LINE,
}
# How the section reader hands a form its line: a report's rows without their tab, its
# "The rest ..." lines without their indentation.
_AS_READ = {"report row": lambda line: line.lstrip("	"), "rest line": str.strip}
DUMPS = sorted(p for p in swept("*.txt") if "memory-usage-report" not in p.name)
REPORTS = sorted(p for p in swept("*-memory-usage-report.txt"))


@pytest.mark.parametrize("kind", FORMS)
def test_fast_path_agrees_with_the_fine_grammar(kind):
    form = FORMS[kind]
    context = tuple(range(7, 7 + len(form.context)))  # an allocation, a line number
    matched = 0
    for path in DUMPS + REPORTS:
        for line in split_lines(Path(path).read_text()):
            line = _AS_READ.get(kind, str)(line)
            m = form.match(line)
            if m is None:
                continue
            matched += 1
            try:
                fine = form.read_fine(line, *context)
            except ParseError as err:  # pragma: no cover - the assertion reports it
                pytest.fail(
                    f"{path.name}: fast path took what the grammar rejects: {line!r} ({err})"
                )
            assert form.build(m, *context) == fine, line
    assert matched > 0 or kind in ("value (pre-2019)", "cross-color reuse")


@pytest.mark.parametrize("kind", FORMS)
def test_a_pass_keeping_some_fields_matches_the_same_lines_and_reads_them_alike(kind):
    """``body_keeping`` is the fast path with groups for the named fields only (the
    first look takes an allocation line's index, size and colour so): on every line of
    the samples it matches exactly where the fast path matches, and its groups hold
    the text of those fields that the fast path's do."""
    import re

    form = FORMS[kind]
    fields = _group_names(form.parts)  # the fast path's group of each, in order
    kept = [f for f in fields[:: max(1, len(fields) // 2)][:3] if fields.count(f) == 1]
    lean = re.compile(form.body_keeping(*kept) + r"\Z")
    assert kept and lean.groups == len(kept)
    whole = {name: fields.index(name) for name in kept}
    matched = 0
    for path in DUMPS + REPORTS:
        for line in split_lines(Path(path).read_text()):
            line = _AS_READ.get(kind, str)(line)
            m, k = form.match(line), lean.match(line)
            assert (m is None) == (k is None), line
            if m is not None and k is not None:
                matched += 1
                assert k.groups() == tuple(m.groups()[whole[name]] for name in kept), line
    assert matched > 0 or kind in ("value (pre-2019)", "cross-color reuse")
    with pytest.raises(ValueError, match="no field 'nonesuch'"):
        form.body_keeping("nonesuch")


@pytest.mark.parametrize(
    ("kind", "line", "expected"),
    [
        ("allocation", "allocation 3: size 4, color 1, maybe-live-out:", None),
        ("allocation", "allocation 3: size lots:", "column 20: expected a byte count"),
        ("value", " value: <5 p{0,1} (phi) @2> (size=8,offset=16): f32[2]", None),
        ("value", " value: <5 p{0,} @2> (size=8,offset=16): f32[2]", "column 13: expected"),
        ("value (pre-2019)", "  <5 p @0> hlo [16,8]: f32[2]", None),
        ("cross-color reuse", "  value: <9 q @1> (color=1)", None),
        ("peak", "    q: 12 bytes", None),
        ("use", "  dot.1, operand x", "column 18: expected an operand number"),
        ("total", "Total bytes used: 12", None),
        ("total", "Total bytes used: 12 (12 B)", "column 23: expected '(size)' after the total"),
        ("peak header", "  Live ranges at x (peak):", "column 18: expected a schedule step"),
        ("memory space total", "Total bytes: 8245148 (7.86MiB)", None),
        (  # a label that holds a suffix of its own: the longest label, both ways
            "stack trace",
            "    f (1.0%, total: 1 bytes, current: 1 bytes, remaining: 1 bytes) g"
            " (2.0%, total: 2 bytes, current: 0 bytes, remaining: 0 bytes)",
            None,
        ),
    ],
)
def test_both_paths_read_constructed_lines_alike_and_say_what_a_bad_one_lacked(
    kind, line, expected
):
    """Lines the samples do not hold: a phi value with an index and a colour, the
    pre-2019 value line and the 2026 cross-colour reuse line, and damaged lines, whose
    diagnostic names the column and what was expected there."""
    from hlotop.parse.tokens import Sink

    form = FORMS[kind]
    context = tuple(range(7, 7 + len(form.context)))
    sink = Sink("x.txt")
    read = form.read(sink, line, 3, *context)
    if expected is None:
        assert sink.diagnostics == [] and read == form.read_fine(line, *context)
        assert form.match(line) is not None
    else:
        assert read is None and form.match(line) is None
        assert [d.line for d in sink.diagnostics] == [3]
        assert expected in sink.diagnostics[0].message, sink.diagnostics[0].message


def _metadata_blocks():
    """Every sample's from-instruction line with a metadata block, and where it starts."""
    for path in DUMPS:
        for line in split_lines(Path(path).read_text()):
            at = line.find("metadata={")
            if at >= 0 and "from instruction:" in line:
                yield line, at


def test_metadata_fast_token_agrees_with_the_grammar():
    from hlotop.parse.instruction import METADATA

    whole = METADATA.fine
    matched = 0
    for line, at in _metadata_blocks():
        fast = METADATA.fast(line, at)
        assert fast.status, line
        matched += 1
        assert fast.value == whole.parse_partial(line[at:])[0], line
    assert matched > 1000


# Metadata blocks the one-match shortcut must read as the block's grammar does, or leave
# to it: other fields, other orders, repeats, escapes, bare values with no space after
# them, spaces before the brace, empty values, no fields.
_METADATA_BLOCKS = [
    'metadata={op_name="jit(f)/dot" stack_frame_id=11}',
    'metadata={op_type="dot" op_name="a/b" source_file="x.py" source_line=7}',
    'metadata={op_type="dot" op_name="a/b" source_file="x.py" source_line=7 stack_frame_id=3}',
    'metadata={op_name="a" op_name="b"}',
    'metadata={op_name="b" op_type="a"}',
    'metadata={op_name="a\\"q\\"" stack_frame_id=2}',
    "metadata={op_name=\"params[\\'w\\']\"}",
    'metadata={op_name="a" source_line=5stack_frame_id=3}',
    "metadata={source_line=5 stack_frame_id=3}",
    "metadata={source_line=x5 stack_frame_id=}",
    'metadata={op_name="a" }',
    "metadata={stack_frame_id=3 }",
    'metadata={op_name="" op_type=""}',
    'metadata={op_name="a"op_type="b"}',
    'metadata={op_type="a"op_name="b"}',
    "metadata={}",
    'metadata={op_name="a" deduplicated_name="fusion.3" stack_frame_id=4}',
    'metadata={op_type=bare op_name="a"}',
    'metadata={op_name="a" scheduling_name="s"}',
    'metadata={op_name="unclosed}',
    'metadata={op_name="a" source_line=12 source_end_line=14}',
]


def _fields_by_the_grammar(text: str, at: int) -> tuple:
    from hlotop.parse.instruction import _READ_FIELDS, read_metadata

    meta = read_metadata(text, at)
    return tuple(meta.get(name) for name in _READ_FIELDS)


@pytest.mark.parametrize("block", _METADATA_BLOCKS)
def test_common_metadata_reads_as_the_block_grammar(block):
    from hlotop.parse.instruction import read_metadata_fields

    text = f"%x = f32[] add(%a, %b), {block}"
    at = text.index("metadata={")
    assert read_metadata_fields(text, at) == _fields_by_the_grammar(text, at)


def test_common_metadata_reads_every_sample_as_the_block_grammar():
    from hlotop.parse.instruction import _COMMON_METADATA, read_metadata_fields

    shortcut = 0
    for line, at in _metadata_blocks():
        shortcut += _COMMON_METADATA.match(line, at) is not None
        assert read_metadata_fields(line, at) == _fields_by_the_grammar(line, at), line
    assert shortcut > 1000


def test_metadata_unescapes_c_escapes():
    from hlotop.parse.instruction import parse_instruction_text

    text = (
        r'%p = f32[] parameter(0), metadata={op_name="state[\'count\'] \"q\" \x1b]0;t\x07" '
        r'source_file="/a b.py" source_line=7 stack_frame_id=3}'
    )
    info = parse_instruction_text(text)
    assert info.op_name == "state['count'] \"q\" \x1b]0;t\x07"
    assert (info.source_file, info.source_line, info.stack_frame_id) == ("/a b.py", 7, 3)


@pytest.mark.parametrize(
    ("escaped", "text"),
    [
        (r"params[\'params\'][\'h_0\']", "params['params']['h_0']"),  # quotes only
        (r"say \"hi\" and \'bye\'", "say \"hi\" and 'bye'"),
        (r"a\\\'b", "a\\'b"),  # an escaped backslash before an escaped quote
        (r"a\\'", "a\\'"),  # an escaped backslash, then a bare quote
        (r"\'\x1b\'", "'\x1b'"),  # quotes and another escape
        (r"tab\there", "tab\there"),
        ("plain", "plain"),
    ],
)
def test_unescape_reads_absl_c_escapes_with_or_without_the_quotes_shortcut(escaped, text):
    """A text whose every backslash escapes a quote (pytree paths in op_names) is read
    by plain replacement; any other is read escape by escape: both as CUnescape does."""
    from hlotop.parse.instruction import _ESCAPE, _unescape_one, unescape

    assert unescape(escaped) == text == _ESCAPE.sub(_unescape_one, escaped)


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
        monkeypatch.setattr(scan, "PIECE", piece)
        pieces = dump._cut_records(str(path), text)
        assert (pieces[0].begin, pieces[0].end, pieces[0].first_line, pieces[0].end_line) == (
            whole[0].begin,
            whole[0].end,
            whole[0].first_line,
            whole[0].end_line,
        )
        assert pieces[1] == whole[1]
        for source in (text, data, text + "no line end", text + "\r\n\n"):
            chunk = dump.Chunk(1, source, 0, len(source))
            assert [line for lines, *_ in chunk.pieces() for line in lines] == dump.split_lines(
                source.decode() if isinstance(source, bytes) else source
            )
        assert scan.count_lines(text, 5, len(text) - 5) == text.count("\n", 5, len(text) - 5)
        assert scan.contains(data, b"\n positions:\n") and not scan.contains(data, b"\r\n")
        assert scan.contains(data.replace(b"\n", b"\r\n"), b"\r\n")
        assert loader.read_text(str(path), data, []) is data
        # Text that is not ASCII is decoded a piece at a time, as in one call; an
        # undecodable byte is found at the same place (and its line reported).
        accented = data.replace(b"positions:", "positions\u00e9:".encode())
        assert scan.decode_utf8(accented) == accented.decode()
        assert "".join(scan.pieces(text)) == text and "".join(scan.pieces(text, 1)) == text
        broken = accented[:5000] + b"\xff" + accented[5000:]
        with pytest.raises(UnicodeDecodeError) as err:
            scan.decode_utf8(broken)
        assert (err.value.start, err.value.end) == (5000, 5001)
        assert scan.decode_utf8(broken, "replace") == broken.decode("utf-8", "replace")
        found: list = []
        assert loader.read_text(str(path), broken, found) == broken.decode("utf-8", "replace")
        assert [d.line for d in found] == [broken.count(b"\n", 0, 5000) + 1]


def test_shapes_read_by_the_shortcuts_as_by_the_grammar():
    """parse_shape reads plain arrays by one match and splits tuples into their elements:
    on every shape of every sample (value lines, parameters, outputs, defining
    instructions), it gives what the character-level grammar gives, or fails where
    it fails."""
    from hlotop import load

    texts: set[str] = set()
    for path in DUMPS:
        if not path.name.endswith(("-buffer-assignment.txt", ".txt")) or "live-range" in path.name:
            continue
        try:
            m = load(path)
        except Exception:  # noqa: BLE001 - module texts and siblings are not dumps
            continue
        for a in m.allocations:
            texts.update(s.shape for s in a.values)
            texts.update(t for t in (a.parameter_shape, a.output_shape) if t)
        texts.update(
            r.instruction.shape for r in m.used_values if r.instruction and r.instruction.shape
        )
    tuples = sum(_reads_as_the_grammar(text) and text.startswith("(") for text in texts)
    assert tuples > 10 and len(texts) > 100


def _reads_as_the_grammar(text: str) -> bool:
    """parse_shape gives what the character-level grammar gives, or fails where it
    fails. True if the text is a shape."""
    from hlotop.shapes.grammar import parse_shape, shape

    try:
        expected = shape.parse(text)
    except ParseError:
        with pytest.raises(ParseError):
            parse_shape(text)
        return False
    assert parse_shape(text) == expected, text
    return True


@pytest.mark.parametrize(
    "text",
    [
        "()",
        "(f32[8,128]{1,0:T(8,128)S(1)}, /*index=1*/u32[], s32[4]{0})",
        "(f32[1], (f32[2], u32[]), pred[])",  # a tuple inside
        "((f32[2], u32[]))",
        "(b((f32[1], f32[2])), s32[])",  # a buffer of a tuple
        "(b(f32[4]{0}), f32[2]{0:T(2)(1)})",
        "(f32[1]], [u32[])",  # brackets that count right but close before they open
        "(f32[1}, u32[]])",
        "(f32[1], u32[)",
    ],
)
def test_a_tuple_is_split_into_its_elements_as_the_grammar_reads_it(text):
    _reads_as_the_grammar(text)


def test_a_column_of_shape_indexes_reads_as_one_text_at_a_time():
    """index_values (a column at once, by a look-up of texts read before) gives
    index_of of each text, for the common ones, for more distinct ones than it keeps,
    and for each again once it has stopped keeping new ones."""
    from hlotop.parse.tokens import _KEPT_INDEXES, index_of, index_values

    texts = ["{}", "", "{0}", "3", "{0,1}", "0,1"]
    texts += [f"{{{k},{k + 1}}}" for k in range(_KEPT_INDEXES + 10)]
    assert list(index_values(texts)) == [index_of(t) for t in texts]
    assert list(index_values(texts[::-1])) == [index_of(t) for t in texts[::-1]]
    assert list(index_values(["{0,1,2}"])) == [(0, 1, 2)]
