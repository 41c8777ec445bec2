"""One selection path (issue 9): the main screen owns the selection and the panes call
it (hlotop.ui.base.selection.SelectionOwner), within the key's handler: every key draws
one frame, with every pane showing the choice."""

from __future__ import annotations

from textual.app import App

from conftest import sample
from hlotop import load
from hlotop.ui.apps.app import HlotopApp
from hlotop.ui.base import messages
from hlotop.ui.base.selection import SelectionOwner
from hlotop.ui.base.textual_compat import FrameCounter
from hlotop.ui.widgets.allocation_tree import AllocationTree
from hlotop.ui.widgets.live_set import LiveSet
from hlotop.ui.widgets.timeline import Timeline
from pilot import TPU, pilot_test, started


class Recorder:
    """A SelectionOwner that writes down what it is told."""

    def __init__(self):
        self.calls: list[tuple] = []

    def select_value(self, value_id, origin=None, *, open_detail=False):
        self.calls.append(("value", value_id, origin, open_detail))

    def highlight_allocation(self, index, origin=None, *, open_detail=False):
        self.calls.append(("allocation", index, origin, open_detail))

    def step_changed(self, step):
        self.calls.append(("step", step))


class _OnePane(App):
    """One pane alone; ``capacity`` is the one HostApp member these panes read (the
    timeline's --capacity line)."""

    capacity = None

    def __init__(self, pane):
        super().__init__()
        self.pane = pane

    def compose(self):
        yield self.pane


@pilot_test
async def test_each_pane_tells_its_owner():
    dump = load(sample(TPU))
    assert isinstance(Recorder(), SelectionOwner)
    for pane, keys, expected in (
        (
            AllocationTree,  # 12 holds four values, 1 one
            ("down", "up"),
            [("value", 33, "allocations", False), ("allocation", 12, "allocations", False)],
        ),
        (Timeline, ("right", "down"), [("step", 12), ("value", 33, "timeline", False)]),
        (LiveSet, ("down", "enter"), [("value", 37, "live", False), ("value", 37, "live", True)]),
    ):
        owner = Recorder()
        widget = pane(dump, owner=owner)
        app = _OnePane(widget)
        async with app.run_test(size=(100, 30)) as pilot:
            widget.focus()
            await pilot.press(*keys)
            await pilot.pause()
        assert owner.calls[: len(expected)] == expected, pane.__name__


def test_a_selection_is_no_message():
    """No message class carries a selection: there is one path, the owner's methods."""
    names = {n for n, v in vars(messages).items() if isinstance(v, type)}
    assert not names & {"ValueSelected", "AllocationHighlighted", "StepChanged"}
    assert not hasattr(messages, "announce")


@pilot_test
async def test_every_key_draws_one_frame_with_every_pane_updated():
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        await pilot.press("2")
        await pilot.pause()
        counter = FrameCounter(app)
        timeline = screen.timeline
        for key in ("right", "left", "j", "j", "k"):
            before = counter.frames
            await pilot.press(key)
            await pilot.pause()
            assert counter.frames - before == 1, key
            assert screen.step == timeline.step == screen.live.step
            if key in "jk":
                chosen = timeline.rows[timeline.row].value.id
                assert screen.selected_value == chosen == screen.detail.value_id


@pilot_test
async def test_a_key_that_moves_the_focus_draws_one_frame():
    """``tab``, ``f`` and the filter bar's esc and enter move the focus and lay the
    screen out again: one frame each, no second one for scrollbars that did not
    change (a second frame came one or two frame periods later: 45-65 ms a key on
    the 46 MB benchmark dump instead of 10-20; ui/base/textual_compat.py,
    SteadyScrollView). The bar's first opening lays its widgets out for the first
    time, and is left out."""
    app = HlotopApp(sample(TPU))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        await pilot.press("2", "f", "escape")
        await pilot.pause()
        counter = FrameCounter(app)
        for pane, key in (("2", "tab"), ("2", "f"), ("", "escape"), ("3", "f"), ("", "enter")):
            if pane:  # not while the bar is open: it would be typed
                await pilot.press(pane)
                await pilot.pause()
            before = counter.frames
            await pilot.press(key)
            await pilot.pause(0.1)  # a second frame would come within two periods
            assert counter.frames - before == 1, (pane, key)
        assert screen.focused is screen.live
