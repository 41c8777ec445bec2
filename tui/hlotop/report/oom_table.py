"""The one table of ``hlotop --json LOG``'s document (the out-of-memory messages of an
error text), as :mod:`hlotop.report.json_table` is ``hlotop --json``'s. The document
(:func:`oom_json`) and its JSON Schema (``oom.schema.json``,
:mod:`hlotop.report.documents`) are both made from it.

A size is ``{text, bytes, exact, origin}`` (:class:`hlotop.model.oom.Size`: ``text`` as
printed, ``bytes`` exact only when ``exact``, else the printed figure read in binary
units) or null; each ``*_bytes`` is the size's bytes when they are exact, else null (a
rounded ``1.46G`` is never given as a count of bytes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, Any

from hlotop.analysis.oom_link import RULES, OomLink
from hlotop.model import OomReport
from hlotop.model.oom import OOM_FORMATS, Size
from hlotop.report.json_build import DocumentBuilder, write_document
from hlotop.report.json_table import Bool, Enum, Int, Key, Kind, List, Null, Number, Obj, Str

SIZES = ("capacity", "target", "used", "over", "requested")  # a report's sizes


@dataclass(frozen=True, slots=True)
class OomTexts:
    """The out-of-memory messages of one text: every report in the text's order, the
    most telling of them, each report's entries' values (``links[i][j]``, None where
    none; ``--dump``) and the linked module's name ("" without one)."""

    reports: Sequence[OomReport]
    most_telling: OomReport
    links: Sequence[Sequence[OomLink | None]] = ()
    module_name: str = ""

    def linked(self) -> list[tuple[OomReport, Sequence[OomLink | None]]]:
        """Each report with its entries' links."""
        return [
            (r, self.links[i] if i < len(self.links) else ()) for i, r in enumerate(self.reports)
        ]


def exact_bytes(size: Size | None) -> int | None:
    return size.bytes if size is not None and size.exact else None


NAMES: dict[str, Any] = {"exact_bytes": exact_bytes}


def _size_keys() -> tuple[Key, ...]:
    return tuple(
        Key(name, Null(Obj("size")), f"r.{name}", f"its {name} size, or null") for name in SIZES
    ) + tuple(
        Key(
            f"{name}_bytes", Null(Int()), f"exact_bytes(r.{name})", f"{name}'s exact bytes, or null"
        )
        for name in SIZES
    )


KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind(
            "document",
            "hlotop --json LOG: the out-of-memory messages of an error text.",
            (
                Key(
                    "oom",
                    Obj("report"),
                    "next(t for t in x.linked() if t[0] is x.most_telling)",
                    "the most telling message",
                ),
                Key(
                    "ooms", List(Obj("report")), "x.linked()", "every message, in the text's order"
                ),
            ),
        ),
        Kind(
            "report",
            "One out-of-memory message and what it says.",
            (
                Key("path", Str(), "r.path", "the text's path"),
                Key("line", Int(), "r.line", "the line the message starts on"),
                Key(
                    "repeats",
                    List(Int()),
                    "list(r.repeats)",
                    "the lines where the same message is printed again",
                ),
                Key("format", Enum(tuple(OOM_FORMATS)), "r.format", "which printer wrote it"),
                Key(
                    "memory_space",
                    Null(Str()),
                    "r.memory_space",
                    "the memory the text names (hbm, vmem, smem, device, host), or null",
                ),
                Key(
                    "headline",
                    Bool(),
                    "r.headline",
                    "whether the text holds its headline (else read from its other blocks)",
                ),
                Key("message", Str(), "r.message", "the headline from its first word, or ''"),
                Key("device", Null(Str()), "r.device", "the allocator or device, or null"),
                Key("program", Null(Str()), "r.program", "the program that failed, or null"),
                Key("blocks", List(Obj("block")), "r.blocks", "the blocks it was read from"),
                *_size_keys(),
                Key("stats", List(Obj("stat")), "r.stats", "the other lines of its tables"),
                Key(
                    "entries",
                    List(Obj("entry")),
                    "[(e, links[i] if i < len(links) else None) for i, e in enumerate(r.entries)]",
                    "the buffers it lists, in its order",
                ),
                Key(
                    "linked",
                    Null(Int()),
                    "sum(1 for link in links if link is not None) if module_name else None",
                    "how many entries --dump linked to a value (null without --dump)",
                ),
                Key(
                    "diagnostics",
                    List(Obj("diagnostic")),
                    "r.diagnostics",
                    "the message's lines that did not read",
                ),
            ),
            lets=(("r", "x[0]"), ("links", "x[1]")),
        ),
        Kind(
            "block",
            "A block of the text a report was read from.",
            (
                Key("kind", Str(), "x.kind", "what the block is"),
                Key("line", Int(), "x.line", "its first line"),
            ),
        ),
        Kind(
            "size",
            "A size as the text prints it.",
            (
                Key("text", Str(), "x.text", "as printed (or, derived, its formula)"),
                Key(
                    "bytes",
                    Int(),
                    "x.bytes",
                    "exact when exact, else the printed figure read in binary units",
                ),
                Key("exact", Bool(), "x.exact", "whether bytes is exact"),
                Key(
                    "origin",
                    Enum(("text", "shape", "derived")),
                    "x.origin",
                    "printed, fixed by the shape, or worked out by hlotop",
                ),
            ),
        ),
        Kind(
            "stat",
            "A line of a report's tables.",
            (
                Key("name", Str(), "x.name", "in the text's words"),
                Key("size", Null(Obj("size")), "x.size", "its size, or null"),
                Key("count", Null(Int()), "x.count", "its count (BFC's NumAllocs), or null"),
                Key("note", Str(), "x.note", "what the line says besides"),
                Key("line", Int(), "x.line", "its line"),
            ),
        ),
        Kind(
            "entry",
            "A buffer a report lists.",
            (
                Key("rank", Int(), "e.rank", "its place in the list, from 1"),
                Key("line", Int(), "e.line", "its first line"),
                Key("size", Obj("size"), "e.size", "its size"),
                Key("size_bytes", Null(Int()), "exact_bytes(e.size)", "its exact bytes, or null"),
                Key("unpadded", Null(Obj("size")), "e.unpadded", "its size unpadded, or null"),
                Key(
                    "unpadded_bytes",
                    Null(Int()),
                    "exact_bytes(e.unpadded)",
                    "its exact unpadded bytes, or null",
                ),
                Key("padding", Null(Obj("size")), "e.padding", "TPU's extra memory due to padding"),
                Key("expansion", Null(Number()), "e.expansion", "TPU's expansion factor, or null"),
                Key("shape", Null(Str()), "e.shape", "its shape as printed, or null"),
                Key(
                    "shape_bytes",
                    Null(Int()),
                    "e.shape_bytes",
                    "its shape's bytes without padding, or null",
                ),
                Key("op_name", Null(Str()), "e.op_name", "its op_name, or null"),
                Key("op_type", Null(Str()), "e.op_type", "its op_type, or null"),
                Key("source", Null(Str()), "e.source", "file:line of its Python source, or null"),
                Key("label", Null(Str()), "e.label", "its XLA label as printed, or null"),
                Key("instruction", Null(Str()), "e.instruction", "the instruction, or null"),
                Key("opcode", Null(Str()), "e.opcode", "its opcode, or null"),
                Key(
                    "allocation_type",
                    Null(Str()),
                    "e.allocation_type",
                    "TPU's allocation type, or null",
                ),
                Key(
                    "value",
                    Null(Obj("linked_value")),
                    "link",
                    "the dump's value --dump links it to, or null",
                ),
            ),
            lets=(("e", "x[0]"), ("link", "x[1]")),
        ),
        Kind(
            "linked_value",
            "The value of the --dump module an entry is linked to.",
            (
                Key("module", Str(), "module_name", "the module's name"),
                Key("id", Int(), "x.value.value.id", "the value's id"),
                Key("name", Str(), "x.value.value.label", "its name{ShapeIndex}"),
                Key("rule", Enum(RULES), "x.rule", "what linked it"),
            ),
        ),
        Kind(
            "diagnostic",
            "A line of the message that did not read.",
            (
                Key("line", Int(), "x.line", "the line"),
                Key("message", Str(), "x.message", "what was expected"),
            ),
        ),
    )
}
DOCUMENT = "document"
_BUILDER = DocumentBuilder(KINDS, "oom")


def oom_json(texts: OomTexts) -> dict[str, Any]:
    """The ``hlotop --json LOG`` document of ``texts`` (shape: :data:`KINDS`)."""
    return _BUILDER.build(DOCUMENT, texts, {**NAMES, "module_name": texts.module_name})


def write_oom_json(texts: OomTexts, out: IO[str]) -> None:
    """Write :func:`oom_json` to ``out``, newline-terminated."""
    write_document(oom_json(texts), out)
