"""``--json``'s objects written as compact JSON text directly, by formatters compiled
from the one table (:mod:`hlotop.report.json_table`).

Building dicts for the encoder cost most of ``--json``'s time on a 100 MB dump (10^5
records and as many allocation values), so each kind of object gets a function that
reads its keys' values from the model and returns its text in one f-string, the way a
hand-written formatter would; the functions are generated once, at import, from the
table (as :mod:`dataclasses` generates ``__init__``). The text is what
``json.dumps(..., separators=(",", ":"))`` writes for the same values (ASCII, strings
escaped by the encoder's own C function); a test compares the two on every sample.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from json.encoder import encode_basestring_ascii
from typing import Any

from hlotop.report.json_table import (
    KINDS,
    NAMES,
    Bool,
    Enum,
    Int,
    Kind,
    List,
    Map,
    Null,
    Number,
    Obj,
    Str,
    Type,
)

Formatter = Callable[[object, object], str]  # (object, Context) -> JSON text


def number_json(v: float | int) -> str:
    """A JSON number as the encoder writes it; ``null`` for NaN and the infinities,
    which JSON has no number for (XLA prints ``-nan%`` for an empty module's share)."""
    if v.__class__ is float:
        return float.__repr__(v) if math.isfinite(v) else "null"
    return int.__repr__(v)


class _Compiler:
    """Python source for the formatters of every kind of :data:`KINDS`."""

    def __init__(self, kinds: dict[str, Kind]):
        self.kinds = kinds
        self.source: list[str] = []
        self.helpers: dict[Type, str] = {}

    def text(self, t: Type, e: str) -> str:
        """An expression for the JSON text of ``e`` (a plain name) of type ``t``."""
        if isinstance(t, Int):
            return f"str({e})"
        if isinstance(t, (Str, Enum)):
            return f"_string({e})"
        if isinstance(t, Bool):
            return f'("true" if {e} else "false")'
        if isinstance(t, Number):
            return f"_number({e})"
        if isinstance(t, Obj):
            return f"{_name(t.kind)}({e}, ctx)"
        # Written out where used, not called: a call costs more than the test, and a
        # record or an allocation value has several of them (10^5 of each in a dump).
        if isinstance(t, Null):
            return f'("null" if {e} is None else {self.text(t.of, e)})'
        if isinstance(t, List) and isinstance(t.of, (Str, Enum)):
            return f'("[" + ",".join(map(_string, {e})) + "]")'
        if isinstance(t, List) and isinstance(t.of, Int):
            return f'("[" + ",".join(map(str, {e})) + "]")'
        return f"{self.helper(t)}({e}, ctx)"

    def helper(self, t: List | Map) -> str:
        """The name of a function ``(value, ctx) -> text`` for a list of objects or a
        map."""
        if t in self.helpers:
            return self.helpers[t]
        name = self.helpers[t] = f"_{type(t).__name__.lower()}_{len(self.helpers)}"
        if isinstance(t, List):
            body = f'"[" + ",".join([{self.text(t.of, "i")} for i in v]) + "]"'
        elif isinstance(t, Map):
            item = f'_string(str(k)) + ":" + {self.text(t.of, "w")}'
            body = f'"{{" + ",".join([{item} for k, w in v.items()]) + "}}"'
        else:  # pragma: no cover - the table's types are all above
            raise TypeError(t)
        self.source += [f"def {name}(v, ctx):", f"    return {body}", ""]
        return name

    def kind(self, kind: Kind) -> None:
        """``_json_<kind>(x, ctx)``: the object's text; or, for a kind with a streamed
        key (the document, written key by key), ``_json_<kind>__<key>(x, ctx)`` for
        each other key: that key's value alone, and ``_get_json_<kind>__<key>(x, ctx)``
        for a streamed key: its items, to be written one by one."""
        lets = [f"    {name} = {expression}" for name, expression in kind.lets]
        by_key = any(key.streamed for key in kind.keys)
        parts: list[str] = []
        body = list(lets)
        for n, key in enumerate(kind.keys):
            if not key.name.isidentifier():
                raise ValueError(f"{kind.name}: key {key.name!r} is not a plain name")
            if key.optional and (by_key or key.same_text_for is not None):
                raise ValueError(f"{kind.name}: optional key {key.name!r} in a streamed kind")
            if by_key and key.streamed:
                if not _streamable(key.type, self.kinds):
                    raise ValueError(
                        f"{kind.name}: streamed key {key.name!r} is not a list of objects or "
                        "strings, nor an object of a kind with streamed keys"
                    )
                self.source += [
                    f"def _get{_name(kind.name)}__{key.name}(x, ctx):",
                    *lets,
                    f"    return {key.get}",
                    "",
                ]
                continue
            if by_key:
                self.source += [
                    f"def {_name(kind.name)}__{key.name}(x, ctx):",
                    *lets,
                    f"    _v = {key.get}",
                    f"    return {self.text(key.type, '_v')}",
                    "",
                ]
                continue
            if key.same_text_for is not None:  # the text made once for each value of it
                memo = f"({kind.name!r}, {key.name!r}, {key.same_text_for})"
                body += [
                    f"    _m{n} = {memo}",
                    f"    _{n} = ctx.texts.get(_m{n})",
                    f"    if _{n} is None:",
                    f"        _v = {key.get}",
                    f"        _{n} = ctx.texts[_m{n}] = {self.text(key.type, '_v')}",
                ]
                parts.append(("," if parts else "") + f'"{key.name}":{{_{n}}}')
                continue
            body.append(f"    _{n} = {key.get}")
            value = f"_{n}" if isinstance(key.type, Int) else self.text(key.type, f"_{n}")
            if key.optional:  # left out where null: its comma, key and value, or nothing
                if not parts:
                    raise ValueError(f"{kind.name}: its first key {key.name!r} is optional")
                body += [
                    f"    _o{n} = ''",
                    f"    if _{n} is not None:",
                    f"        _o{n} = f',\"{key.name}\":{{{value}}}'",
                ]
                parts.append(f"{{_o{n}}}")
                continue
            parts.append(("," if parts else "") + f'"{key.name}":{{{value}}}')
        if not by_key:
            self.source += [
                f"def {_name(kind.name)}(x, ctx):",
                *body,
                "    return f'{{" + "".join(parts) + "}}'",
                "",
            ]

    def compile(self) -> dict[str, object]:
        for kind in self.kinds.values():
            self.kind(kind)
        namespace: dict[str, object] = {
            **NAMES,
            "_string": encode_basestring_ascii,
            "_number": number_json,
        }
        exec(compile("\n".join(self.source), "<hlotop.report.json_text>", "exec"), namespace)
        return namespace


def _name(kind: str) -> str:
    return f"_json_{kind}"


def _streamable(t: Type, kinds: dict[str, Kind]) -> bool:
    """Whether a key of type ``t`` can be streamed: a list of objects or of strings
    (written a batch at a time), or an object (or null) of a kind with streamed keys
    (written key by key)."""
    if isinstance(t, List):
        return isinstance(t.of, (Obj, Str))
    if isinstance(t, Null):
        t = t.of
    return isinstance(t, Obj) and any(key.streamed for key in kinds[t.kind].keys)


_compiled = _Compiler(KINDS).compile()

FORMATTERS: dict[str, Formatter] = {
    name: _compiled[_name(name)]  # type: ignore[misc]
    for name in KINDS
    if _name(name) in _compiled
}
"""Kind name -> ``f(object, ctx)``: the object's JSON text (every kind but those
written key by key)."""

KEY_FORMATTERS: dict[str, dict[str, Formatter]] = {
    name: {
        key.name: _compiled[f"{_name(name)}__{key.name}"]  # type: ignore[misc]
        for key in kind.keys
        if not key.streamed
    }
    for name, kind in KINDS.items()
    if _name(name) not in _compiled
}
"""Kind name -> key -> ``f(object, ctx)``: that key's value as JSON text, for the kinds
written key by key (the document), but for their streamed keys."""

STREAMED_ITEMS: dict[str, dict[str, tuple[Callable[[object, object], Any], Type]]] = {
    name: {
        key.name: (_compiled[f"_get{_name(name)}__{key.name}"], key.type)  # type: ignore[misc]
        for key in kind.keys
        if key.streamed
    }
    for name, kind in KINDS.items()
    if _name(name) not in _compiled
}
"""Kind name -> streamed key -> (``f(object, ctx)``: that key's value, its type): a
list (of objects, each formatted with its kind's :data:`FORMATTERS`, or of strings)
written a batch at a time, or an object (or null) of a kind written key by key."""


def source() -> str:
    """The generated formatters' Python source (to read when debugging them)."""
    compiler = _Compiler(KINDS)
    compiler.compile()
    return "\n".join(compiler.source)
