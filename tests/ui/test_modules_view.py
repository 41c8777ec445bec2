"""Pilot tests of the modules view (``hlotop DIR``) on a real 19-module jax 0.10.2 run:
the ranking, sort, filter, rows of modules compiled alike, the sparklines filled in
the background, the capacity column, and opening a module and coming back."""

from __future__ import annotations

import asyncio
import functools
import shutil
import threading
from pathlib import Path

from conftest import sample
from hlotop.analysis.capacity import required_bytes
from hlotop.loading.directory import collapse_identical, list_modules, rank_modules
from hlotop.loading.loader import load
from hlotop.ui.apps import modules_app
from hlotop.ui.apps.modules_app import ModulesApp
from hlotop.ui.base.textual_compat import screen_lines
from hlotop.ui.screens.directory_module import DirectoryLoadingScreen, DirectoryMainScreen
from hlotop.ui.screens.modules import ModulesScreen
from hlotop.ui.widgets.modules_list import ModulesList, sparkline
from pilot import notifications

DIR = "dirs/jax-0.10.2-cpu-train"
TRAIN = "module_0034.jit_train_step.cpu_after_optimizations"


def pilot_test(fn):
    """Run an async test with asyncio.run (no pytest-asyncio in the environment)."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        return asyncio.run(fn(*args, **kwargs))

    return run


def screen_text(app) -> str:
    return "\n".join(screen_lines(app.screen))


def names(app) -> list[str]:
    return [r.figures.entry.name for r in app.screen.query_one(ModulesList).shown]


async def ranked(app, pilot) -> ModulesScreen:
    await app.wait_until_ranked()
    await pilot.pause()
    assert isinstance(app.screen, ModulesScreen)
    return app.screen


async def until(pilot, condition, seconds: float = 10.0) -> None:
    for _ in range(int(seconds / 0.02)):
        if condition():
            return
        await pilot.pause(0.02)
    raise AssertionError("timed out")


@pilot_test
async def test_the_list_is_rank_modules_order_with_the_figures_across_modules():
    directory = sample(DIR)
    expected = collapse_identical(rank_modules(list_modules(directory)))
    app = ModulesApp(directory)
    async with app.run_test(size=(160, 50)) as pilot:
        await ranked(app, pilot)
        assert names(app) == [f.entry.name for f, _ in expected]
        assert names(app)[0] == TRAIN
        text = screen_text(app)
        assert "19 modules in 18 rows" in text
        assert "Largest single program: 9.18MiB XLA peak, module_0034.jit_train_step" in text
        assert "Largest resident arguments and outputs: 9.18MiB" in text
        first = text.splitlines()[[i for i, t in enumerate(text.splitlines()) if "▶" in t][0]]
        for cell in ("9.18MiB", "4.62MiB", "4.56MiB", "836B", "43", "cpu"):
            assert cell in first


@pilot_test
async def test_the_view_paints_before_the_modules_are_read(monkeypatch):
    release = threading.Event()
    real = modules_app.rank_modules

    def slow(entries, mapper=None):
        release.wait(10)
        return real(entries, mapper)

    monkeypatch.setattr(modules_app, "rank_modules", slow)
    directory = sample(DIR)
    app = ModulesApp(directory, list_modules(directory))
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: "reading 19 modules…" in screen_text(app))
        release.set()
        await ranked(app, pilot)
        assert "reading" not in screen_text(app).splitlines()[0]


@pilot_test
async def test_s_sorts_by_peak_total_name_and_temp():
    app = ModulesApp(sample(DIR))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ranked(app, pilot)
        rows = list(screen.rows)

        def temp(r):
            return r.figures.memory_stats.temp_size_in_bytes

        expected = {
            "total": sorted(rows, key=lambda r: (-r.figures.total_bytes_used, r.rank)),
            "name": sorted(rows, key=lambda r: r.figures.entry.name),
            "temp": sorted(rows, key=lambda r: (-temp(r), r.rank)),
            "peak": rows,
        }
        for sort in ("total", "name", "temp", "peak"):
            await pilot.press("s")
            await pilot.pause()
            assert screen.list.sort == sort
            assert names(app) == [r.figures.entry.name for r in expected[sort]]
            title = "XLA peak" if sort == "peak" else sort
            assert f"by {title}" in screen_text(app)
        # the # column keeps the XLA-peak rank
        assert names(app)[0] == TRAIN


@pilot_test
async def test_slash_filters_by_name_as_you_type_and_esc_clears():
    app = ModulesApp(sample(DIR))
    async with app.run_test(size=(120, 40)) as pilot:
        await ranked(app, pilot)
        await pilot.press("slash", *"normal")
        await pilot.pause()
        assert names(app) == [
            "module_0012.jit__normal.cpu_after_optimizations",
            "module_0008.jit__normal.cpu_after_optimizations",
            "module_0016.jit__normal.cpu_after_optimizations",
        ]
        assert "filter 'normal': 3 shown" in screen_text(app)
        await pilot.press("enter", "down")  # back in the list, the filter kept
        await pilot.pause()
        assert isinstance(app.focused, ModulesList) and len(names(app)) == 3
        assert app.screen.list.current().figures.entry.name.startswith("module_0008")
        await pilot.press("escape")
        await pilot.pause()
        assert len(names(app)) == 18 and "filter" not in screen_text(app).splitlines()[0]
        # the cursor stays on the module it was on
        assert app.screen.list.current().figures.entry.name.startswith("module_0008")
        await pilot.press("slash", *"nothing-like-it")
        await pilot.pause()
        assert names(app) == [] and "no module name holds" in screen_text(app)


@pilot_test
async def test_modules_compiled_alike_are_one_row_with_a_count():
    app = ModulesApp(sample(DIR))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ranked(app, pilot)
        assert len(screen.rows) == 18
        (row,) = [r for r in screen.rows if r.count > 1]
        assert row.members == (
            "module_0020.jit_convert_element_type.cpu_after_optimizations",
            "module_0028.jit_convert_element_type.cpu_after_optimizations",
        )
        await pilot.press("slash", *"0028")  # either module's name finds the row
        await pilot.pause()
        assert [r.members for r in screen.list.shown] == [row.members]
        line = [t for t in screen_text(app).splitlines() if "jit_convert" in t][0]
        assert "×2" in line


@pilot_test
async def test_sparklines_and_needs_are_filled_in_from_each_module_largest_first():
    directory = sample(DIR)
    app = ModulesApp(directory)
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await ranked(app, pilot)
        await app.wait_until_filled()
        await pilot.pause()
        assert "filled" in app.milestones
        for row in screen.rows:
            module = load(row.figures.entry.path, lazy=True)
            assert row.spark == sparkline(module.analysis.occupied_bytes[0])
            assert len(row.spark) == 16
            assert row.need == required_bytes(module)
        train = screen.rows[0]
        assert train.spark in screen_text(app)
        assert train.figures.entry.path in app.kept  # kept for Enter


@pilot_test
async def test_enter_opens_module_0034_and_esc_or_backspace_comes_back():
    app = ModulesApp(sample(DIR))
    async with app.run_test(size=(120, 40)) as pilot:
        await ranked(app, pilot)
        await app.wait_until_filled()
        await pilot.press("enter")
        await app.wait_until_loaded()
        await pilot.pause()
        assert isinstance(app.screen, DirectoryMainScreen)
        path = app.screen.dump.files[0].path
        assert Path(path).name.startswith(TRAIN)
        assert app.screen.dump is app.kept[Path(app.source)]  # the background's, reused
        assert "module_0034" in screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ModulesScreen)
        await pilot.press("down", "down", "enter")
        await app.wait_until_loaded()
        await pilot.pause()
        assert app.screen.dump.name.startswith("module_0008")
        await pilot.press("backspace")
        await pilot.pause()
        assert isinstance(app.screen, ModulesScreen)
        assert app.screen.list.current().figures.entry.name.startswith("module_0008")
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


@pilot_test
async def test_enter_on_the_module_being_loaded_waits_for_that_load(monkeypatch):
    release = threading.Event()
    real = modules_app.load

    def slow(path, **kwargs):
        if Path(path).name.startswith(TRAIN):
            release.wait(10)
        return real(path, **kwargs)

    monkeypatch.setattr(modules_app, "load", slow)
    app = ModulesApp(sample(DIR))
    async with app.run_test(size=(120, 40)) as pilot:
        await ranked(app, pilot)
        await until(pilot, lambda: app.in_flight is not None)
        assert Path(app.in_flight).name.startswith(TRAIN)  # the largest, first
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, DirectoryLoadingScreen)
        release.set()
        await until(pilot, lambda: isinstance(app.screen, DirectoryMainScreen))
        assert app.screen.dump.name == TRAIN
        await app.wait_until_loaded()
        await pilot.press("backspace")
        await app.wait_until_filled()
        await pilot.pause()
        assert all(r.spark for r in app.screen.rows)


@pilot_test
async def test_a_module_that_cannot_be_read_keeps_the_list(tmp_path):
    source = Path(sample(DIR))
    for f in source.glob("module_0034.*"):
        shutil.copy(f, tmp_path / f.name)
    bad = tmp_path / "module_0099.jit_bad.cpu_after_optimizations-buffer-assignment.txt"
    bad.write_bytes(b"\x00\x01 not a dump\n")
    app = ModulesApp(str(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ranked(app, pilot)
        await app.wait_until_filled()
        await pilot.pause()
        assert [r.note for r in screen.rows] == [None, "unreadable"]
        await pilot.press("end", "enter")
        await until(pilot, lambda: isinstance(app.screen, ModulesScreen) and notifications(app))
        assert not app.exiting


@pilot_test
async def test_a_capacity_adds_each_modules_headroom_or_excess():
    app = ModulesApp(sample(DIR), capacity=(3 << 20, "3MiB"))
    async with app.run_test(size=(160, 50)) as pilot:
        await ranked(app, pilot)
        await app.wait_until_filled()
        await pilot.pause()
        lines = screen_text(app).splitlines()
        assert any("Capacity 3.00MiB against" in t and "2 over" in t for t in lines)
        assert "vs capacity" in "\n".join(lines)
        row = [t for t in lines if "jit_train_step" in t and "▶" in t][0]
        assert "over 6.18MiB" in row  # 9.18MiB needed
        row = [t for t in lines if "module_0036" in t][0]
        assert "room 1.17MiB" in row


@pilot_test
async def test_backspace_while_a_module_loads_returns_to_the_list(monkeypatch):
    release = threading.Event()
    real = modules_app.load

    def slow(path, **kwargs):
        if Path(path).name.startswith(TRAIN):
            release.wait(10)
        return real(path, **kwargs)

    monkeypatch.setattr(modules_app, "load", slow)
    app = ModulesApp(sample(DIR))
    async with app.run_test(size=(120, 40)) as pilot:
        await ranked(app, pilot)
        await until(pilot, lambda: app.in_flight is not None)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, DirectoryLoadingScreen)
        await pilot.press("backspace")
        await pilot.pause()
        assert isinstance(app.screen, ModulesScreen)
        release.set()
        await app.wait_until_filled()
        await pilot.pause()
        assert isinstance(app.screen, ModulesScreen)  # the load it waited for opens nothing
        assert app.screen.rows[0].spark


@pilot_test
async def test_a_tpu_modules_need_is_hbms_alone_from_its_first_look(tmp_path, monkeypatch):
    """A TPU module's need is that of HBM alone (VMEM and SMEM are on-chip), worked out
    from the first look's allocations: known before the module loads, and equal to
    what the whole load gives."""
    for folder, number in (("tpu/v5e_1x1-transformer_loop", "module_0000"), (DIR, "module_0034")):
        for f in Path(sample(folder)).glob(number + ".*"):
            shutil.copy(f, tmp_path / f.name.replace("module_0000.", "module_0001."))
    release = threading.Event()
    real = modules_app.load

    def slow(path, **kwargs):
        if "cl_" in Path(path).name:
            release.wait(10)
        return real(path, **kwargs)

    monkeypatch.setattr(modules_app, "load", slow)
    app = ModulesApp(str(tmp_path), capacity=(1 << 30, "1GiB"))
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await ranked(app, pilot)
        (tpu,) = [r for r in screen.rows if r.figures.entry.platform == "tpu"]
        whole = required_bytes(load(tpu.figures.entry.path, lazy=True))
        assert tpu.need == whole  # before its load: the first look says it
        s = tpu.figures.memory_stats
        device = (
            s.argument_size_in_bytes
            + s.output_size_in_bytes
            - s.alias_size_in_bytes
            + s.temp_size_in_bytes
        )
        assert whole < device  # VMEM and SMEM left out
        release.set()
        await app.wait_until_filled()
        await pilot.pause()
        assert tpu.need == whole
        assert (screen.header.over, screen.header.pending) == (0, 0)
        assert "every module" in screen_text(app)
