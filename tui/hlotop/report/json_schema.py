"""The JSON Schema of ``hlotop --json``, made from the one table
(:mod:`hlotop.report.json_table`) and shipped in the package as ``hlotop.schema.json``
beside this module (a test checks that the file is what the table makes).

After changing the table, write the file again with::

    python -m hlotop.report.json_schema --write
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from hlotop.report.json_table import (
    DOCUMENT,
    KINDS,
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

SCHEMA_FILE = Path(__file__).with_name("hlotop.schema.json")
DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _type(t: Type) -> dict[str, Any]:
    if isinstance(t, Int):
        return {"type": "integer"}
    if isinstance(t, Str):
        return {"type": "string"}
    if isinstance(t, Bool):
        return {"type": "boolean"}
    if isinstance(t, Number):
        return {"type": "number"}
    if isinstance(t, Enum):
        return {"enum": list(t.values)}
    if isinstance(t, Obj):
        return {"$ref": f"#/$defs/{t.kind}"}
    if isinstance(t, List):
        return {"type": "array", "items": _type(t.of)}
    if isinstance(t, Map):
        out: dict[str, Any] = {"type": "object"}
        if t.keys is not None:
            out["propertyNames"] = _type(t.keys)
        if t.pattern is not None:
            out["propertyNames"] = {"pattern": t.pattern}
        out["additionalProperties"] = _type(t.of)
        return out
    if isinstance(t, Null):
        inner = _type(t.of)
        if set(inner) == {"type"}:
            return {"type": [inner["type"], "null"]}
        if set(inner) == {"enum"}:
            return {"enum": [*inner["enum"], None]}
        return {"anyOf": [inner, {"type": "null"}]}
    raise TypeError(t)  # pragma: no cover


def _object(kind: Kind) -> dict[str, Any]:
    return {
        "type": "object",
        "description": kind.doc,
        "properties": {key.name: {**_type(key.type), "description": key.doc} for key in kind.keys},
        "required": [key.name for key in kind.keys],
        "additionalProperties": False,
    }


def document_schema(
    kinds: dict[str, Kind], document: str, title: str, comment: str
) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a document made from a table of ``kinds``
    (:class:`~hlotop.report.json_table.Kind` by name) whose top object is of the kind
    ``document``, the others under ``$defs``."""
    return {
        "$schema": DIALECT,
        "title": title,
        "$comment": comment,
        **_object(kinds[document]),
        "$defs": {name: _object(kind) for name, kind in kinds.items() if name != document},
    }


def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the ``--json`` document."""
    return document_schema(
        KINDS,
        DOCUMENT,
        "hlotop --json",
        "Generated from hlotop/report/json_table.py: python -m hlotop.report.json_schema --write",
    )


def schema_text() -> str:
    """:func:`schema` as the shipped file holds it."""
    return json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``--write``: write :data:`SCHEMA_FILE`; else print the schema."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--write"]:
        SCHEMA_FILE.write_text(schema_text(), encoding="utf-8")
        print(f"wrote {SCHEMA_FILE}")
    else:
        sys.stdout.write(schema_text())
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
