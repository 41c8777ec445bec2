"""The one table of ``hlotop why --json``'s two documents, as :mod:`hlotop.report.
json_table` is ``hlotop --json``'s: about one value (``answer``: :func:`why_json`) and
about every value live at a step (``live``: :func:`live_json`, without NAME). The kinds
of a value's why (last use, reasons, defining instruction, live range) are
:data:`hlotop.report.json_table.WHY_KINDS`, shared with ``hlotop --json``'s values live
at the peak. Each document and its JSON Schema (``why.schema.json``, ``why-live.schema.json``;
:mod:`hlotop.report.documents`) are made from it.
"""

from __future__ import annotations

from typing import IO, Any

from hlotop.model import ALLOCATION_KINDS
from hlotop.report.json_build import DocumentBuilder, write_document
from hlotop.report.json_table import (
    SHAPE_INDEX,
    WHY_KINDS,
    WHY_REASONS,
    Bool,
    Enum,
    Int,
    Key,
    Kind,
    List,
    Null,
    Obj,
    Str,
)
from hlotop.report.why_report import LiveAnswer, WhyAnswer


def _shape_index(index: tuple[int, ...] | None) -> list[int] | None:
    return None if index is None else list(index)


NAMES: dict[str, Any] = {"shape_index": _shape_index}

_VALUE = (
    Key("id", Int(), "v.id", "the value's id"),
    Key("name", Str(), "v.name", "its defining instruction's name"),
    Key("shape_index", SHAPE_INDEX, "shape_index(v.shape_index)", "its ShapeIndex, or null"),
    Key("shape", Null(Str()), "info.shape", "its shape, or null"),
    Key("logical_bytes", Int(), "info.logical_bytes", "bytes of its shape"),
    Key("allocated_bytes", Int(), "info.allocated_bytes", "bytes it takes in its allocation"),
)
_LAST_USE = Key(
    "last_use",
    Null(Obj("last_use")),
    "facts.last_use",
    "its use with the latest step, or null",
)
_REASONS_DOC = WHY_REASONS

KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind(
            "answer",
            "hlotop why --json DUMP NAME: why one value is live at a step.",
            (
                Key("module", Str(), "x.module.name", "the module's name"),
                Key("value", Obj("value"), "x.info", "the value"),
                Key("defined_by", Obj("defined_by"), "x.defined", "its defining instruction"),
                Key(
                    "allocation",
                    Null(Obj("allocation")),
                    "x.info.slot",
                    "its slot in its allocation, or null",
                ),
                Key(
                    "live_range",
                    Null(Obj("value_live_range")),
                    "x.info.live",
                    "its printed live range, or null",
                ),
                Key("last_use", Null(Obj("last_use")), "x.facts.last_use", _LAST_USE.doc),
                Key(
                    "step",
                    Null(Int()),
                    "x.step",
                    "the step asked about (XLA's peak by default); null without live ranges",
                ),
                Key("step_is_peak", Bool(), "x.is_peak", "whether it is XLA's peak step"),
                Key("reasons", List(Obj("reason")), "x.reasons", _REASONS_DOC),
            ),
        ),
        Kind(
            "live",
            "hlotop why --json DUMP: every value live at a step, and why.",
            (
                Key("module", Str(), "x.module.name", "the module's name"),
                Key("step", Int(), "x.step", "the step (XLA's peak by default)"),
                Key("step_is_peak", Bool(), "x.is_peak", "whether it is XLA's peak step"),
                Key(
                    "values",
                    List(Obj("live_value")),
                    "x.values",
                    "the values live there, in XLA's peak-list order",
                ),
            ),
        ),
        Kind("value", "A value.", _VALUE, lets=(("info", "x"), ("v", "x.value"))),
        Kind(
            "live_value",
            "A value live at the step, its last use and why it is live.",
            (
                *_VALUE,
                _LAST_USE,
                Key("reasons", List(Obj("reason")), "x[1]", _REASONS_DOC),
            ),
            lets=(("facts", "x[0]"), ("info", "facts.info"), ("v", "info.value")),
        ),
        Kind(
            "allocation",
            "A value's slot in its allocation.",
            (
                Key("index", Int(), "x.allocation", "the allocation's index"),
                Key(
                    "kinds",
                    List(Enum(ALLOCATION_KINDS)),
                    "list(alloc.kinds) if alloc is not None else []",
                    "the allocation's kinds",
                ),
                Key("offset", Int(), "x.offset", "bytes from the allocation's start"),
                Key("size", Int(), "x.size", "bytes it takes"),
            ),
            lets=(("alloc", "allocation_of.get(x.allocation)"),),
        ),
        *WHY_KINDS,
    )
}


def why_json(a: WhyAnswer) -> dict[str, Any]:
    """The ``hlotop why --json DUMP NAME`` document (shape: :data:`KINDS` ``answer``)."""
    names = {**NAMES, "allocation_of": a.module.analysis.allocation_of}
    return _BUILDER.build("answer", a, names)


def live_json(answer: LiveAnswer) -> dict[str, Any]:
    """The ``hlotop why --json DUMP`` document (shape: :data:`KINDS` ``live``)."""
    return _BUILDER.build("live", answer, NAMES)


def write_json(doc: dict[str, Any], out: IO[str]) -> None:
    """Write ``doc`` (:func:`why_json` or :func:`live_json`) to ``out``, one line."""
    write_document(doc, out, compact=True)


_BUILDER = DocumentBuilder(KINDS, "why")
