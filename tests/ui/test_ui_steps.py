"""The live set at a step (hlotop.ui.view_models.steps), as the timeline moves: the same
values as analysis.live_set, in XLA's order, at a cost that depends on what changes
between two steps and on the rows drawn, never on how many values are live (issue 9:
one step took 90-190 ms on a 45 MB real dump, whose steps each hold 12 000-20 000
live values)."""

from __future__ import annotations

import random

from conftest import BIG, sample
from hlotop.analysis.analyze import live_set
from hlotop.model import BufferLiveRange, HloValue, ValueInfo
from hlotop.ui.apps.app import HlotopApp
from hlotop.ui.view_models.steps import IdIndex, LiveIndex, LiveRows, StepIndex
from hlotop.ui.widgets.row_list import Row
from pilot import TPU, pilot_test, started


def _values(n_long: int, n_short: int, max_time: int, seed: int = 7) -> list[ValueInfo]:
    """``n_long`` values live over the whole schedule (parameters, optimizer state)
    and ``n_short`` live a few steps each, with repeated sizes and names (ties in
    XLA's order)."""
    rng = random.Random(seed)
    out = []
    for i in range(n_long + n_short):
        if i < n_long:
            start, end = 0, max_time
        else:
            start = rng.randrange(max_time)
            end = min(max_time, start + rng.randrange(4))
        name = f"v{rng.randrange(50)}"
        info = ValueInfo(HloValue(i, name, (rng.randrange(3),) if i % 5 == 0 else None))
        info.live = BufferLiveRange(name, (), start, end)
        info.logical_bytes = rng.choice((4, 256, 4096, 1 << 20))
        out.append(info)
    return out


def _ids(rows) -> list[int]:
    return [i.value.id for i in rows]


def test_the_live_set_at_every_step_moving_and_jumping_is_analysis_live_set():
    values = _values(300, 3000, 400)
    index = LiveIndex(StepIndex(values, 400))
    rng = random.Random(1)
    steps = list(range(401)) + list(range(400, -1, -1))
    steps += [rng.randrange(401) for _ in range(200)] + [0, 400, 200, 199, 201, 0]
    for step in steps:
        rows = index.at(step)
        expected = live_set(values, step)
        assert _ids(rows) == _ids(expected), step
        assert rows.logical_bytes == sum(i.logical_bytes for i in expected)
        assert rows.allocated_bytes == sum(i.allocated_bytes for i in expected)
        running = 0
        for n, info in enumerate(expected[:50]):
            running += info.logical_bytes
            assert rows.cumulative(n) == running
            assert rows.index_of(info.value.id) == n
        assert rows.index_of(-12345) is None


def test_the_peak_list_as_rows():
    values = _values(5, 20, 10)
    rows = LiveRows.of(values)
    assert list(rows) == values and rows[2:4] == values[2:4]
    assert rows.index_of(values[7].value.id) == 7
    assert rows.cumulative(len(values) - 1) == rows.logical_bytes


class _Counting(list):
    """A list that counts the items read from it."""

    reads = 0

    def __getitem__(self, i):
        _Counting.reads += 1
        return super().__getitem__(i)


def test_a_step_reads_only_what_changes_and_the_rows_drawn():
    """20 000 values live at every step: a step, the summary (count, bytes), the
    selected row's place and 30 rows drawn with their shares read a few dozen
    values, not 20 000."""
    values = _values(20_000, 2_000, 2_000)
    index = LiveIndex(StepIndex(values, 2_000))
    index.by_rank = _Counting(index.by_rank)
    rows = index.at(1_000)
    selected = rows[500].value.id
    for step in range(1_001, 1_101):
        _Counting.reads = 0
        rows = index.at(step)
        summary = (len(rows), rows.logical_bytes, rows.allocated_bytes)
        at = rows.index_of(selected)
        drawn = [(info.value.id, rows.cumulative(n)) for n, info in enumerate(rows[:30])]
        assert summary[0] >= 20_000 and at is not None and len(drawn) == 30
        assert _Counting.reads <= 40, (step, _Counting.reads)


@pilot_test
async def test_the_live_sets_rows_are_drawn_as_their_text_renders():
    """The live set draws a value's row from parts kept per value (row_segments): the
    same segments, styles and all, as its whole row's Text (render_row), at every step,
    rows with padding (allocated > logical) among them."""
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        live = screen.live
        padded = 0
        for step in range(screen.dump.analysis.max_time + 1):
            screen.timeline.set_step(step)
            for i in range(len(live.live)):
                fast = live.row_segments(i)
                slow = Row.of(app.console, live.render_row(i))
                assert fast == slow, (step, i)
                padded += bool(live.live[i].padding_bytes)
        assert padded


def test_the_id_index_answers_as_the_dict_it_replaces():
    """Value id -> position: the same answers as a dict of the ids, for ids in any
    order, synthetic (negative) ones, and ids it does not hold."""
    rng = random.Random(9)
    ids = rng.sample(range(5000), 700) + [-1, -7, -3]
    rng.shuffle(ids)
    index = IdIndex(ids)
    as_dict = {vid: i for i, vid in enumerate(ids)}
    for vid in range(-10, 5100):
        assert index.get(vid) == as_dict.get(vid)
        assert (vid in index) == (vid in as_dict)
    assert len(index) == len(as_dict) and list(index.keys()) == ids
    assert index[ids[5]] == 5
    assert IdIndex([]).get(0) is None


@pilot_test
async def test_the_live_set_keeps_its_stack_trace_rows_while_the_step_stays():
    """Shown again at the same step (the screen does so when it starts), the live set
    keeps the rows of XLA's stack-trace tree it laid out (thousands of nodes in a big
    dump); at another step and back, and after a node is collapsed, they are laid out
    again: the same rows, or the tree less that node's children."""
    app = HlotopApp(sample(BIG))  # jax 0.10.2: XLA prints the stack-trace tree
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        live = screen.live
        peak = screen.dump.analysis.peak_step
        assert live.step == peak and screen.dump.live_range.stack_trace is not None
        tail = live.tail
        nodes = [r.node for r in tail if r.kind == "node"]
        assert len(nodes) > 3
        live.set_step(peak)
        assert live.tail is tail  # kept, not laid out again
        live.set_step(peak - 1)
        assert not any(r.kind == "node" for r in live.tail)  # the tree is for the peak
        live.set_step(peak)
        assert live.tail is not tail
        assert [(r.kind, r.node, r.parent) for r in live.tail] == [
            (r.kind, r.node, r.parent) for r in tail
        ]
        opened = next(n for n in nodes if n.children and id(n) not in live.collapsed)
        shown = [r.node for r in live.tail]
        assert any(c in shown for c in opened.children)
        live.set_cursor(len(live.live) + shown.index(opened))
        live.action_collapse()  # the key: left on an unfolded node
        assert id(opened) in live.collapsed
        shown = [r.node for r in live.tail if r.kind == "node"]
        assert opened in shown and not any(c in shown for c in opened.children)


@pilot_test
async def test_the_live_set_keeps_its_stack_trace_rows_when_sorted_or_filtered():
    """Sorting or filtering the live set changes its value rows only: XLA's
    stack-trace tree after them is kept (77 000 nodes at 46 MB, 40 ms a key to lay out
    again), and left on a node still goes to its parent's row, wherever the value rows
    now end."""
    app = HlotopApp(sample(BIG))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        live = screen.live
        tail = live.tail
        await pilot.press("3", "s")
        assert live.order != "size" and live.tail is tail
        whole = len(live.live)
        await pilot.press("f", *"fusion", "enter")
        await pilot.pause()
        assert live.matches is not None and 0 < len(live.live) < whole
        assert live.tail is tail
        leaf = next(
            i
            for i, r in enumerate(tail)
            if r.kind == "node" and r.parent >= 0 and not r.node.children
        )
        live.set_cursor(len(live.live) + leaf)
        live.action_collapse()  # the key: left on a leaf goes to its parent
        assert live.cursor == len(live.live) + tail[leaf].parent
        assert live.row(live.cursor).node is tail[tail[leaf].parent].node
        assert tail[leaf].node in tail[tail[leaf].parent].node.children
