"""Each line kind has a single-regex fast token and the fine-grained grammar; the
fast token may only speed reading up, so on every line of every sample dump where it
matches, the fine grammar must give exactly the same value."""

from __future__ import annotations

from pathlib import Path

import pytest
from parsy import ParseError, eof

from hlotop.parse import allocations, live_range, values
from hlotop.parse.dump import split_lines

from conftest import SAMPLES

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
                pytest.fail(f"{path.name}: fast token accepted what the grammar rejects: {line!r} ({err})")
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

    text = (r'%p = f32[] parameter(0), metadata={op_name="state[\'count\'] \"q\" \x1b]0;t\x07" '
            r'source_file="/a b.py" source_line=7 stack_frame_id=3}')
    info = parse_instruction_text(text)
    assert info.op_name == "state['count'] \"q\" \x1b]0;t\x07"
    assert (info.source_file, info.source_line, info.stack_frame_id) == ("/a b.py", 7, 3)
