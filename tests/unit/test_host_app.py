"""Every hlotop App is a :class:`~hlotop.ui.base.host.HostApp`: the screens and widgets
reach the app only through that protocol (no ``getattr`` probing), so an App class that
lacked a member, or defined one with another signature, would fail a screen at run
time. Each App is made as its command makes it, from the sample dumps."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from rich.text import Text
from textual.app import App

import hlotop.ui.apps
from conftest import SAMPLES, SMALL, sample
from hlotop.model import ModuleDump
from hlotop.parse.oom import find_ooms
from hlotop.ui.apps.app import HlotopApp
from hlotop.ui.apps.diff_app import DiffApp
from hlotop.ui.apps.modules_app import ModulesApp
from hlotop.ui.apps.oom_app import OomApp
from hlotop.ui.apps.text_app import TextApp
from hlotop.ui.base.host import HostApp

OOM_TEXT = SAMPLES / "oom" / "gpu-jax-2024-peak-buffers.txt"
MEMBERS = sorted(name for name in vars(HostApp) if not name.startswith("_"))


def _apps() -> list[App]:
    reports = find_ooms(OOM_TEXT.read_text(), str(OOM_TEXT))
    return [
        HlotopApp(sample(SMALL), capacity=(16 << 30, "v5e")),
        ModulesApp(sample("dirs/jax-0.10.2-cpu-train")),
        OomApp(str(OOM_TEXT), reports),
        DiffApp(sample("cpu/gpt_loop"), sample("cpu/gpt_loop_batch16")),
        TextApp("breakdown", Text("one line")),
    ]


def _app_classes() -> set[type]:
    """Every App class defined in hlotop.ui.apps."""
    found = set()
    for info in pkgutil.iter_modules(hlotop.ui.apps.__path__, "hlotop.ui.apps."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, App) and value.__module__ == info.name:
                found.add(value)
    return found


def test_the_protocol_names_what_the_screens_read():
    assert MEMBERS == [
        "back_to_modules",
        "capacity",
        "exiting",
        "load_stage",
        "main_screen_started",
        "module",
        "no_color",
        "open_entry",
        "open_value",
        "source",
        "yield_to_input",
    ]


def test_every_app_class_is_checked_here():
    assert _app_classes() == {type(app) for app in _apps()}


def test_every_app_is_a_host_app_with_its_signatures():
    for app in _apps():
        name = type(app).__name__
        assert isinstance(app, HostApp), name
        for member in MEMBERS:
            wanted = inspect.getattr_static(HostApp, member)
            if isinstance(wanted, property):
                continue  # a value: its type is checked below
            given = inspect.signature(getattr(app, member))
            expected = inspect.signature(wanted.__get__(app))
            assert list(given.parameters) == list(expected.parameters), (name, member)
        assert isinstance(app.source, str), name
        assert app.capacity is None or (
            isinstance(app.capacity[0], int) and isinstance(app.capacity[1], str)
        ), name
        assert app.module is None or isinstance(app.module, ModuleDump), name
        assert isinstance(app.load_stage, str), name
        assert app.exiting is False, name
        assert isinstance(app.no_color, bool), name
        assert app.yield_to_input() == 0.0, name  # no key came: no wait


def test_the_apps_say_what_they_were_given():
    hlotop_app, modules_app, oom_app, diff_app, text_app = _apps()
    assert hlotop_app.source == sample(SMALL)
    assert hlotop_app.capacity == (16 << 30, "v5e")
    assert modules_app.source == sample("dirs/jax-0.10.2-cpu-train")
    assert oom_app.source == str(OOM_TEXT)  # no --dump: the text names itself
    assert diff_app.source == f"{sample('cpu/gpt_loop')} {sample('cpu/gpt_loop_batch16')}"
    assert (diff_app.capacity, diff_app.module, text_app.source) == (None, None, "")


def test_a_bare_textual_app_is_not_one():
    """The check above can fail: an App without hlotop's members is no HostApp."""
    assert not isinstance(App(), HostApp)
