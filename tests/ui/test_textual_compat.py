"""Private Textual API is used in one module only (hlotop.ui.base.textual_compat), where each
use says why: a Textual upgrade is checked there, and nowhere else."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import textwrap
from functools import cache
from pathlib import Path

import textual
from textual.app import App
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widget import Widget

from conftest import ROOT

UI = ROOT / "tui" / "hlotop" / "ui"
COMPAT = UI / "base" / "textual_compat.py"


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


@cache
def _textual_private_names() -> frozenset[str]:
    """Every ``_name`` anywhere in Textual: functions, classes, attributes assigned."""
    names: set[str] = set()
    for path in Path(textual.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
    return frozenset(n for n in names if _is_private(n))


@cache
def _private_names_of(cls: type) -> frozenset[str]:
    """The private names a Textual class and its Textual bases define or assign."""
    names: set[str] = set()
    for base in cls.__mro__:
        if not base.__module__.startswith("textual"):
            continue
        names.update(n for n in vars(base) if _is_private(n))
        try:
            source = textwrap.dedent(inspect.getsource(base))
        except (OSError, TypeError):
            continue
        names.update(re.findall(r"self\.(_[a-z]\w*)\s*(?::[^=]+)?=", source))
    return frozenset(names)


def _ui_modules():
    for path in sorted(UI.rglob("*.py")):
        if path == COMPAT:
            continue
        parts = path.relative_to(ROOT / "tui").with_suffix("").parts
        yield path, ".".join(p for p in parts if p != "__init__")


def test_no_private_textual_module_or_attribute_outside_textual_compat():
    """No ``from textual._x import``, and no ``something._name`` (other than ``self``)
    where ``_name`` is a private name of Textual's."""
    private = _textual_private_names()
    found = []
    for path, _ in _ui_modules():
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text)):
            module = getattr(node, "module", None) if isinstance(node, ast.ImportFrom) else None
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if any(re.search(r"(^|\.)_(?!_)", m) for m in [module or "", *names]):
                found.append(f"{path.name}:{node.lineno} imports a private module")
            if (
                isinstance(node, ast.Attribute)
                and node.attr in private
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
                # the standard library's own names (os._exit) are not Textual's
                and not (isinstance(node.value, ast.Name) and node.value.id in ("os", "sys"))
            ):
                found.append(f"{path.name}:{node.lineno} uses .{node.attr}")
        for m in re.finditer(r"getattr\([^,]+,\s*[\"'](_\w+)[\"']", text):
            if m.group(1) in private:
                found.append(f"{path.name}: getattr(..., {m.group(1)!r})")
    assert not found, "private Textual API outside textual_compat.py:\n" + "\n".join(found)


def test_no_widget_or_screen_reads_or_overrides_a_private_textual_name_of_its_own():
    """``self._name`` in a class that is (or is mixed into) a Textual class must be the
    class's own name, not one of Textual's (read, assigned or overridden)."""
    mixin_bases = _private_names_of(App) | _private_names_of(Screen) | _private_names_of(Widget)
    found = []
    for path, module_name in _ui_modules():
        module = importlib.import_module(module_name)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            cls = getattr(module, node.name)
            textual_class = issubclass(cls, DOMNode) or any(
                b.__module__.startswith("textual") for b in cls.__mro__[1:]
            )
            theirs = _private_names_of(cls) if textual_class else mixin_bases
            used = {
                n.attr
                for n in ast.walk(node)
                if isinstance(n, ast.Attribute)
                and isinstance(n.value, ast.Name)
                and n.value.id == "self"
            }
            defined = {
                n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            }
            for name in sorted((used | defined) & theirs):
                found.append(f"{path.name}: {node.name} uses Textual's {name}")
    assert not found, "private Textual API outside textual_compat.py:\n" + "\n".join(found)


def test_every_use_in_textual_compat_says_why():
    tree = ast.parse(COMPAT.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            doc = ast.get_docstring(node) or ""
            assert "Why private:" in doc, node.name
