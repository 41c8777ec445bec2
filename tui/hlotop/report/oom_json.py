"""``hlotop --json LOG``: the out-of-memory messages of an error text as JSON.

``{oom: REPORT, ooms: [REPORT, ...]}``: ``ooms`` every message in the text's order,
``oom`` the most telling of them (:func:`hlotop.parse.oom.primary`). A REPORT is
``{path, line, repeats, format, memory_space, headline, message, device, program,
blocks: [{kind, line}], capacity, target, used, over, requested, capacity_bytes,
target_bytes, used_bytes, over_bytes, requested_bytes, stats: [{name, size, count,
note, line}], entries: [ENTRY], linked, diagnostics: [{line, message}]}``
(``diagnostics``: the report's lines that did not read).

A size is ``{text, bytes, exact, origin}`` (:class:`hlotop.model.oom.Size`: ``text``
as printed, ``bytes`` exact only when ``exact``, else the printed figure read in
binary units; ``origin`` ``text``, ``shape`` or ``derived``) or null; each ``*_bytes``
is the size's bytes when they are exact, else null (a rounded ``1.46G`` is never
given as a count of bytes). An ENTRY is ``{rank, line, size, size_bytes, unpadded,
unpadded_bytes, padding, expansion, shape, shape_bytes, op_name, op_type, source,
label, instruction, opcode, allocation_type, value}``; ``value`` is ``{module, id,
name, rule}`` when ``--dump`` links it, else null; ``linked`` how many entries
``--dump`` linked (null without one).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import IO, Any

from hlotop.analysis.oom_link import OomLink
from hlotop.model import OomEntry, OomReport
from hlotop.model.oom import Size


def size_json(size: Size | None) -> dict[str, Any] | None:
    if size is None:
        return None
    return {"text": size.text, "bytes": size.bytes, "exact": size.exact, "origin": size.origin}


def exact_bytes(size: Size | None) -> int | None:
    return size.bytes if size is not None and size.exact else None


def _entry_json(entry: OomEntry, link: OomLink | None, module_name: str) -> dict[str, Any]:
    return {
        "rank": entry.rank,
        "line": entry.line,
        "size": size_json(entry.size),
        "size_bytes": exact_bytes(entry.size),
        "unpadded": size_json(entry.unpadded),
        "unpadded_bytes": exact_bytes(entry.unpadded),
        "padding": size_json(entry.padding),
        "expansion": entry.expansion,
        "shape": entry.shape,
        "shape_bytes": entry.shape_bytes,
        "op_name": entry.op_name,
        "op_type": entry.op_type,
        "source": entry.source,
        "label": entry.label,
        "instruction": entry.instruction,
        "opcode": entry.opcode,
        "allocation_type": entry.allocation_type,
        "value": None
        if link is None
        else {
            "module": module_name,
            "id": link.value.value.id,
            "name": link.value.value.label,
            "rule": link.rule,
        },
    }


def report_json(
    report: OomReport, links: Sequence[OomLink | None] = (), module_name: str = ""
) -> dict[str, Any]:
    """One report as a JSON-ready dict (shape in the module's docstring)."""
    doc: dict[str, Any] = {
        "path": report.path,
        "line": report.line,
        "repeats": list(report.repeats),
        "format": report.format,
        "memory_space": report.memory_space,
        "headline": report.headline,
        "message": report.message,
        "device": report.device,
        "program": report.program,
        "blocks": [{"kind": b.kind, "line": b.line} for b in report.blocks],
    }
    for name in ("capacity", "target", "used", "over", "requested"):
        doc[name] = size_json(getattr(report, name))
    for name in ("capacity", "target", "used", "over", "requested"):
        doc[f"{name}_bytes"] = exact_bytes(getattr(report, name))
    doc["stats"] = [
        {
            "name": f.name,
            "size": size_json(f.size),
            "count": f.count,
            "note": f.note,
            "line": f.line,
        }
        for f in report.stats
    ]
    doc["entries"] = [
        _entry_json(e, links[i] if i < len(links) else None, module_name)
        for i, e in enumerate(report.entries)
    ]
    doc["linked"] = sum(1 for link in links if link is not None) if module_name else None
    doc["diagnostics"] = [{"line": d.line, "message": d.message} for d in report.diagnostics]
    return doc


def oom_json(
    reports: Sequence[OomReport],
    most_telling: OomReport,
    links: Sequence[Sequence[OomLink | None]] = (),
    module_name: str = "",
) -> dict[str, Any]:
    """All ``reports`` of a text, ``most_telling`` among them, as a JSON-ready dict;
    ``links[i]`` are report i's entries' values (``--dump``)."""
    docs = [
        report_json(r, links[i] if i < len(links) else (), module_name)
        for i, r in enumerate(reports)
    ]
    index = next(i for i, r in enumerate(reports) if r is most_telling)
    return {"oom": docs[index], "ooms": docs}


def write_oom_json(doc: dict[str, Any], out: IO[str]) -> None:
    json.dump(doc, out)
    out.write("\n")
