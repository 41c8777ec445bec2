"""The filter (f) and the orders (s) of the browser's lists, on real dumps: which values a
filter keeps, by each field, and the orders a list can be sorted in."""

from __future__ import annotations

from array import array

import pytest

from conftest import sample
from hlotop.analysis.grouping import group_live_set, narrowed
from hlotop.analysis.peak import live_set
from hlotop.analysis.value_filter import FilterIndex, ValueFilter
from hlotop.analysis.value_order import ORDERS, ValueOrder, ValueOrders, natural
from hlotop.loading.loader import load
from hlotop.model.memory_space import space_names
from hlotop.model.value_table import ValueRows, ValueTable, keeping, value_ids

TPU = "seeds/003_a3085531593bac68.txt"  # S(1) VMEM, S(2) SMEM, parameters 0-4
GPT = "tpu/v5e_1x1-gpt_loop"  # op_names and source lines (jit(gpt_train_step)/...)


def index_of(dump) -> FilterIndex:
    a = dump.analysis
    return FilterIndex(a.values, a.allocation_of, space_names(dump), dump.sections.used_values)


def ids(index: FilterIndex, text: str) -> set[int]:
    flt = ValueFilter.parse(text)
    assert flt is not None
    matches = index.matching(flt)
    assert matches is not None
    return set(matches.ids)


def test_parse_reads_fields_and_plain_words():
    flt = ValueFilter.parse("  op_name:Attn fusion SHAPE:bf16 1,0:T(8 space: ")
    assert flt is not None and flt.text == "op_name:Attn fusion SHAPE:bf16 1,0:T(8 space:"
    assert [(t.field, t.needle) for t in flt.terms] == [
        ("op_name", "attn"),
        (None, "fusion"),
        ("shape", "bf16"),
        (None, "1,0:t(8"),  # "1,0" is no field: the word is plain text (a layout)
    ]  # "space:" alone (still being typed) is no word yet
    assert ValueFilter.parse("") is None and ValueFilter.parse("  kind: ") is None


def test_each_field_keeps_the_values_the_dump_says_have_it():
    dump = load(sample(TPU))
    a = dump.analysis
    index = index_of(dump)
    every = {v.value.id for v in a.values}
    assert (
        ids(index, "space:vmem")
        == {v.value.id for v in a.values if v.color == 1}
        == {31, 36, 39, 41}
    )
    assert ids(index, "space:smem") == {32, 40}
    assert ids(index, "space:hbm") == every - {31, 32, 36, 39, 40, 41}
    params = {
        v.value.id
        for v in a.values
        if v.slot is not None and a.allocation_of[v.slot.allocation].parameter is not None
    }
    assert ids(index, "kind:param") == params == {29, 33, 35, 37, 42}
    assert ids(index, "kind:thread-local") == {4, 5, 6}
    assert ids(index, "name:fusion") == {34, 36, 41}
    assert ids(index, "name:copy-start.1{") == {30, 31, 32}
    assert ids(index, "shape:3584,4096") == {33, 35}
    assert ids(index, "shape:u32") == {30, 32, 38, 40}  # a tuple's shape holds its parts
    # A plain word matches any field; every word must match.
    assert ids(index, "fusion space:vmem") == {36, 41}
    # "S(1)": the space of 31, 36, 39 and 41, and a part of the tuple shapes of 30, 38.
    in_vmem = {v.value.id for v in a.values if v.color == 1 or "S(1)" in (v.shape or "")}
    assert ids(index, "s(1)") == in_vmem == {30, 31, 36, 38, 39, 41}
    assert ids(index, "no-such-text") == set()


def test_op_name_words_match_the_op_name_a_big_dump_keeps_as_text():
    """A lazily loaded dump keeps its records as text: only those holding the word are
    parsed, and the matches are those of every op_name read."""
    eager, lazy = load(sample(GPT)), load(sample(GPT), lazy=True)
    expected = {v.value.id for v in eager.analysis.values if "dot_general" in (v.op_name or "")}
    assert len(expected) > 100
    assert ids(index_of(eager), "op_name:dot_general") == expected
    assert ids(index_of(lazy), "op_name:DOT_general") == expected
    attn = {v.value.id for v in eager.analysis.values if "Block_1/attn" in (v.op_name or "")}
    assert ids(index_of(lazy), "op_name:block_1/attn") == attn
    assert ids(index_of(lazy), "block_1/attn") >= attn  # op_name is one of the fields


def test_a_filter_typed_a_key_at_a_time_matches_as_one_typed_at_once():
    """Each key narrows the matches of the text before it: the same as worked out anew."""
    dump = load(sample(GPT), lazy=True)
    typing = index_of(dump)
    for text in ("op_name:block_1/attn", "fusion s(1)", "fus kind:temp shape:bf16"):
        for end in range(1, len(text) + 1):
            flt = ValueFilter.parse(text[:end])
            if flt is None:
                continue
            assert typing.matching(flt).ids == index_of(dump).matching(flt).ids, text[:end]
    # Deleting back widens them again.
    assert ids(typing, "fus") == ids(index_of(dump), "fus")


def test_a_cancelled_filter_gives_nothing_and_is_not_kept():
    dump = load(sample(GPT), lazy=True)
    index = index_of(dump)
    flt = ValueFilter.parse("op_name:transpose")
    assert flt is not None
    assert index.matching(flt, cancelled=lambda: True) is None
    matches = index.matching(flt)
    assert matches is not None and len(matches) > 0


def test_an_allocation_is_kept_by_its_values_or_its_own_fields():
    dump = load(sample(TPU))
    a = dump.analysis
    index = index_of(dump)
    flt = ValueFilter.parse("name:fusion.12")
    matches = index.matching(flt)
    kept = {alloc.index for alloc in dump.allocations if matches.keeps_allocation(alloc)}
    assert kept == {a.by_id[36].slot.allocation} == {12}
    empty = [alloc for alloc in dump.allocations if not alloc.values]
    for alloc in empty:  # no value: its space and kinds decide
        space = ValueFilter.parse("space:hbm")
        assert index.matching(space).keeps_allocation(alloc) == (alloc.color == 0)


@pytest.mark.parametrize(
    ("path", "text"),
    [(TPU, "name:fusion.12"), (TPU, "space:hbm"), (GPT, "op_name:attn"), (GPT, "param")],
)
def test_an_allocation_table_keeps_the_rows_each_allocation_would(path, text):
    """The tree's filter read from the table's columns (``kept_rows``: one pass over
    its value lines' ids) keeps the allocations ``keeps_allocation`` keeps one by one."""
    dump = load(sample(path))
    table = dump.allocations
    matches = index_of(dump).matching(ValueFilter.parse(text))
    one_by_one = {k for k, alloc in enumerate(table) if matches.keeps_allocation(alloc)}
    assert one_by_one and one_by_one != set(range(len(table)))
    assert matches.kept_rows(table) == one_by_one


def test_a_narrowed_grouping_keeps_the_matching_values_and_their_bytes():
    dump = load(sample(GPT))
    grouping = group_live_set(dump, ("phase", "scope"))
    keep = ids(index_of(dump), "op_name:attn")
    small = narrowed(grouping, keep)
    values = [i for r in small.rows for i in r.values]
    assert values and {i.value.id for i in values} == keep & {
        i.value.id for r in grouping.rows for i in r.values
    }
    assert small.total_bytes == sum(grouping.bytes_of[i.value.id] for i in values)
    assert [r.bytes for r in small.rows] == sorted((r.bytes for r in small.rows), reverse=True)
    assert (small.step, small.keys, small.accounting) == (
        grouping.step,
        grouping.keys,
        grouping.accounting,
    )


# -- orders -------------------------------------------------------------------------------


def test_natural_order_puts_numbers_in_order():
    names = ["fusion.12", "fusion.2", "fusion", "copy-start.1{0}", "fusion.2{1}"]
    assert sorted(names, key=natural) == [
        "copy-start.1{0}",
        "fusion",
        "fusion.2",
        "fusion.2{1}",
        "fusion.12",
    ]


@pytest.mark.parametrize("order", ORDERS)
def test_each_order_sorts_any_subset_as_a_sort_of_it_would(order):
    dump = load(sample(GPT))
    a = dump.analysis
    ranking = ValueOrder(a.values, order)
    step_values = live_set(a.values, a.peak_step)
    got = ranking.sort(step_values)
    assert sorted(got, key=lambda i: i.value.id) == sorted(step_values, key=lambda i: i.value.id)
    if order == "size":  # XLA's peak-list order
        assert got == step_values
    key = {
        "size": lambda i: -i.logical_bytes,
        "start": lambda i: i.live.start,
        "end": lambda i: i.live.end,
        "name": lambda i: natural(i.value.label),
        "space": lambda i: i.color,
    }[order]
    assert [key(i) for i in got] == sorted(key(i) for i in got)


def test_a_tables_rows_are_kept_and_sorted_from_their_columns_as_values_would_be():
    """``keeping``, ``value_ids`` and an order's ``sort`` read a table's rows from its
    id column (no value made) and give what a pass over the values gives."""
    a = load(sample(GPT)).analysis
    table = a.values
    assert isinstance(table, ValueTable)
    rows = ValueRows(table, array("q", range(len(table) - 1, -1, -7)))
    listed = list(rows)
    keep = ids(index_of(load(sample(GPT))), "op_name:attn")
    kept = keeping(rows, keep)
    assert isinstance(kept, ValueRows)
    assert list(kept) == keeping(listed, keep) == [v for v in listed if v.value_id in keep]
    assert 0 < len(kept) < len(rows)
    assert list(value_ids(rows)) == list(value_ids(listed)) == [v.value_id for v in listed]
    for order in ORDERS:
        ranking = ValueOrder(table, order)
        by_columns = ranking.sort(rows)
        assert isinstance(by_columns, ValueRows)
        assert list(by_columns) == ranking.sort(listed) == sorted(listed, key=ranking.rank)


def test_value_orders_are_ranked_once_and_shared_whoever_asks_first():
    """The timeline and the live set share one ranking per order (``s``): a worker may
    rank them all ahead of the key (``warm``); what it ranks is what ``get`` returns,
    and equals a ranking made on its own."""
    a = load(sample(GPT)).analysis
    orders = ValueOrders(a.values)
    paused: list[int] = []
    orders.warm(pause=lambda: paused.append(1))
    assert len(paused) == len(ORDERS)
    for order in ORDERS:
        ranked = orders.get(order)
        assert orders.get(order) is ranked  # made once
        alone = ValueOrder(a.values, order)
        assert ranked.sort(a.values) == alone.sort(a.values)
    stopped = ValueOrders(a.values)
    stopped.warm(stop=lambda: True)
    assert stopped.ranked() == ()
    assert orders.ranked() == ORDERS
