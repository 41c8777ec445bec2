"""A JSON document built as dicts from its table of kinds (:class:`~hlotop.report.
json_table.Kind`), the same table its JSON Schema is made from
(:func:`hlotop.report.json_schema.document_schema`): every JSON document but
``hlotop --json``'s, whose records are written as text straight from the model
(:mod:`hlotop.report.json_text`).

A key's ``get`` is a Python expression over ``x`` (the object of that kind), the names
the kind's ``lets`` bind (each computed once per object, in order) and the names the
document is built with. An ``optional`` key is left out of its object where its value
is null.
"""

from __future__ import annotations

import json
from typing import IO, Any

from hlotop.report.json_table import Kind, List, Map, Null, Obj, Type


class DocumentBuilder:
    """Builds the dicts of a document from ``kinds`` (by name), each key's expression
    and each ``let`` compiled once."""

    def __init__(self, kinds: dict[str, Kind], label: str):
        self.kinds = kinds
        self.lets = {
            kind.name: [
                (name, compile(expr, f"<{label} {kind.name} let {name}>", "eval"))
                for name, expr in kind.lets
            ]
            for kind in kinds.values()
        }
        self.code = {
            (kind.name, key.name): compile(key.get, f"<{label} {kind.name}.{key.name}>", "eval")
            for kind in kinds.values()
            for key in kind.keys
        }

    def build(self, kind: str, x: object, names: dict[str, Any]) -> dict[str, Any]:
        """The object of ``kind`` made of ``x``: each key's value, in the table's order
        (an ``optional`` one only where it is not null)."""
        scope = {**names, "x": x}
        for name, code in self.lets[kind]:
            scope[name] = eval(code, scope)  # noqa: S307 - the table's own expressions
        out: dict[str, Any] = {}
        for key in self.kinds[kind].keys:
            value = eval(self.code[kind, key.name], scope)  # noqa: S307
            if value is None and key.optional:
                continue
            out[key.name] = self.value(key.type, value, names)
        return out

    def value(self, t: Type, v: Any, names: dict[str, Any]) -> Any:
        """``v`` as a JSON value of type ``t`` (objects built, lists and maps made)."""
        if isinstance(t, Null):
            return None if v is None else self.value(t.of, v, names)
        if isinstance(t, Obj):
            return self.build(t.kind, v, names)
        if isinstance(t, List):
            return [self.value(t.of, e, names) for e in v]
        if isinstance(t, Map):
            return {k: self.value(t.of, e, names) for k, e in v.items()}
        return v


def write_document(doc: dict[str, Any], out: IO[str], *, compact: bool = False) -> None:
    """Write ``doc`` to ``out`` as one line of JSON, newline-terminated; ``compact``:
    without spaces after the separators."""
    json.dump(doc, out, separators=(",", ":") if compact else None)
    out.write("\n")
