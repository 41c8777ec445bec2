"""The JSON Schema of every JSON document hlotop writes, each made from its one table
and shipped in the package beside this module as ``<document>.schema.json`` (a test
checks that each file is what its table makes, and validates the documents of the
sample dumps against it). :data:`DOCUMENTS` lists them: ``hlotop --json``'s table is
:mod:`hlotop.report.json_table`, the others' their ``*_table.py``.

After changing a table, write the files again with::

    python -m hlotop.report.json_schema --write
"""

from __future__ import annotations

import importlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hlotop.report.json_table import (
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
        "required": [key.name for key in kind.keys if not key.optional],
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


@dataclass(frozen=True, slots=True)
class Document:
    """A JSON document hlotop writes: its ``name`` (its schema is
    ``<name>.schema.json``), its ``title`` (the command that writes it), the module
    of its table (``table``: its ``attribute`` is the table of kinds) and the kind
    of its top object (``top``)."""

    name: str
    title: str
    table: str
    attribute: str = "KINDS"
    top: str = "document"

    @property
    def kinds(self) -> dict[str, Kind]:
        """The table (imported when asked: the tables import what they describe)."""
        return getattr(importlib.import_module(self.table), self.attribute)

    @property
    def schema_file(self) -> Path:
        return SCHEMA_FILE.with_name(f"{self.name}.schema.json")

    def schema(self) -> dict[str, Any]:
        """The document's JSON Schema (draft 2020-12)."""
        comment = (
            f"Generated from {self.table.replace('.', '/')}.py: "
            "python -m hlotop.report.json_schema --write"
        )
        return document_schema(self.kinds, self.top, self.title, comment)

    def schema_text(self) -> str:
        """:meth:`schema` as the shipped file holds it."""
        return json.dumps(self.schema(), indent=2, ensure_ascii=False) + "\n"


DOCUMENTS: dict[str, Document] = {
    d.name: d
    for d in (
        Document("hlotop", "hlotop --json", "hlotop.report.json_table"),
        Document("diff", "hlotop diff --json", "hlotop.report.diff_table"),
        Document("modules", "hlotop --json DIR", "hlotop.report.modules_table", "MODULES_KINDS"),
        Document(
            "modules-diff",
            "hlotop diff --json OLD_DIR NEW_DIR",
            "hlotop.report.modules_table",
            "MODULES_DIFF_KINDS",
        ),
        Document("oom", "hlotop --json LOG", "hlotop.report.oom_table"),
        Document("fit", "hlotop fit --json", "hlotop.report.fit_table"),
        Document("why", "hlotop why --json DUMP NAME", "hlotop.report.why_table", top="answer"),
        Document("why-live", "hlotop why --json DUMP", "hlotop.report.why_table", top="live"),
    )
}


def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the ``--json`` document."""
    return DOCUMENTS["hlotop"].schema()


def schema_text() -> str:
    """:func:`schema` as the shipped file holds it."""
    return DOCUMENTS["hlotop"].schema_text()


def main(argv: list[str] | None = None) -> int:
    """``--write``: write every document's schema file; else print ``--json``'s."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--write"]:
        for document in DOCUMENTS.values():
            document.schema_file.write_text(document.schema_text(), encoding="utf-8")
            print(f"wrote {document.schema_file}")
    else:
        sys.stdout.write(schema_text())
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
