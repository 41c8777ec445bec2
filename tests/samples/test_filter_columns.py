"""The browser's filter (``f``) read from columns, on every sample: the records' one
scan for their instruction texts, every allocation's kinds from the table's columns,
and a whole filter index over the dump's tables match what reading each record,
allocation and value gives."""

from __future__ import annotations

import pytest

from conftest import SAMPLES
from hlotop.analysis.value_filter import FilterIndex, ValueFilter
from hlotop.loading.loader import load
from hlotop.model import UsedValues
from hlotop.model.allocation import kinds_text
from hlotop.model.memory_space import space_names
from hlotop.parse.instruction import instruction_op_name
from sample_index import MODULES

WORDS = ["fusion", "param", "op_name:jit", "op_name:dot", "kind:parameter", "space:s(1)"]
WORDS += ["shape:f32", "name:copy", "kind:(no allocation)", "maybe-live-out", "x"]


def _id(path) -> str:
    return str(path.relative_to(SAMPLES))


@pytest.mark.parametrize("entry", MODULES, ids=_id)
def test_the_records_scan_gives_each_records_own_instruction_and_op_name(entry):
    records = load(entry, lazy=True).sections.used_values
    if not isinstance(records, UsedValues) or not len(records):
        pytest.skip("no value records")
    texts = records.instruction_texts()
    assert texts is not None and len(texts) == len(records)
    for number, text in enumerate(texts):
        record = records.record(number)
        if text is None:
            continue  # the record is read instead
        assert record is not None and record.instruction_text is not None, number
        assert text.lstrip(" ") == record.instruction_text.lstrip(" "), number
        instruction = record.instruction
        assert instruction_op_name(text) == (instruction.op_name if instruction else None)
    # A well-formed dump's records are all vouched for; only damaged ones are read.
    assert sum(t is not None for t in texts) >= 0.9 * len(texts)


@pytest.mark.parametrize("entry", MODULES, ids=_id)
def test_every_allocations_kinds_read_from_the_columns(entry):
    table = load(entry).allocations
    assert table.kinds_texts() == [kinds_text(alloc) for alloc in table]


@pytest.mark.parametrize("entry", MODULES, ids=_id)
def test_a_filter_over_the_tables_keeps_what_one_over_each_value_keeps(entry):
    dump = load(entry, lazy=True)
    a = dump.analysis
    names = space_names(dump)
    tables = FilterIndex(a.values, a.allocation_of, names, dump.sections.used_values)
    tables.parse_at_once = 0  # the records' scan for every op_name, as on a big dump
    one_by_one = FilterIndex(list(a.values), dict(a.allocation_of.items()), names)
    for word in WORDS:
        flt = ValueFilter.parse(word)
        assert tables.matching(flt).ids == one_by_one.matching(flt).ids, word
