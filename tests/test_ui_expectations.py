"""What misled users who came from htop, less and pprof (issue 34), each checked as
the user met it: keys in, what the screen shows out."""

from __future__ import annotations

from conftest import sample
from hlotop.ui.app import HlotopApp
from test_app_pilot import pilot_test, started

GPT_LOOP = "cpu/gpt_loop/module_0004.jit_gpt_train_step.cpu_after_optimizations-buffer-assignment.txt"  # 188 values live at XLA's peak (step 262), 92 at step 100


# -- the peak breakdown after p ---------------------------------------------------------


@pilot_test
async def test_p_opens_the_peak_breakdown_at_its_largest_rows():
    """At step 100 the live set's cursor rests on its first row (3923), which the user
    never chose (the tree's allocation is the selection). ``p`` used to follow that
    value to its row at the peak (the 50th), scrolling the largest values away; the
    peak breakdown now opens at its top, nothing drawn as the selection."""
    app = HlotopApp(sample(GPT_LOOP))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await started(app, pilot)
        assert screen.selected_value is None  # allocation 235, 333 values
        await pilot.press("2", "colon", "1", "0", "0", "enter", "3")
        await pilot.pause()
        live = screen.live
        assert live.step == 100 and live.current_value().value.id == 3923
        await pilot.press("p")
        await pilot.pause()
        a = screen.dump.analysis
        assert live.step == a.peak_step == 262
        assert live.live.index_of(3923) == 49  # where the cursor used to go
        assert live.cursor == 0 and live.scroll_offset.y == 0
        assert live.current_value().value.id == a.peak_values[0].value.id
        assert not live.shows_selection and screen.selected_value is None


@pilot_test
async def test_a_value_the_user_chose_is_followed_to_the_peak():
    """A value chosen in the live set stays under the cursor at another step where it
    is live, and the list opens at the top at a step where it is not."""
    app = HlotopApp(sample(GPT_LOOP))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await started(app, pilot)
        await pilot.press("3", "j", "j", "j")
        await pilot.pause()
        live = screen.live
        chosen = live.current_value().value.id
        assert screen.selected_value == chosen == 3540  # the 4th row at the peak
        await pilot.press("2", "colon", "1", "0", "0", "enter", "3")
        await pilot.pause()
        assert live.live.index_of(chosen) is None  # not live at step 100
        assert live.cursor == 0 and live.scroll_offset.y == 0 and not live.shows_selection
        await pilot.press("p")
        await pilot.pause()
        assert live.cursor == 3 and live.current_value().value.id == chosen
        assert live.shows_selection
