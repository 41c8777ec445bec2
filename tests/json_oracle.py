"""The ``--json`` document built as plain dicts and lists, written by hand key by key
from the model: the oracle the writer (generated from hlotop.report.json_table, and
writing text directly) is compared with, byte for byte, through
``json.dumps(to_dict(module), separators=(",", ":"))``. It is what hlotop wrote before
the table existed; keep it independent of the table (it must not import it)."""

from __future__ import annotations

import json
from typing import Any

from hlotop.model import StackTraceNode
from hlotop.model.memory_space import space_name, space_names
from hlotop.version import __version__


def _finite(x: float) -> float | None:
    """A percentage as JSON holds it: NaN (XLA's ``-nan%``) is null."""
    return x if x == x and x not in (float("inf"), float("-inf")) else None


def dumps(module) -> str:
    """The document as ``hlotop --json`` must write it."""
    return json.dumps(to_dict(module), separators=(",", ":")) + "\n"


def _index(index) -> list[int] | None:
    return None if index is None else list(index)


def _tree(node: StackTraceNode) -> dict[str, Any]:
    return {
        "label": node.label,
        "percent": _finite(node.percent),
        "total": node.total,
        "current": node.current,
        "remaining": node.remaining,
        "children": [_tree(c) for c in node.children],
    }


def to_dict(module) -> dict[str, Any]:
    """The JSON document for ``module`` as plain dicts and lists."""
    head = _head(module)
    frames = module.sections.stack_frames
    used_values = [_used_value(r, frames) for r in module.checked_records()]
    return {**head, "used_values": used_values, **_tail(module)}


def _head(module) -> dict[str, Any]:
    names = space_names(module)
    allocations = [
        {
            "index": x.index,
            "size": x.size,
            "page": x.page,
            "color": x.color,
            "memory_space": space_name(x.color, names),
            "kinds": list(x.kinds),
            "parameter": None
            if x.parameter is None
            else {
                "number": x.parameter,
                "shape": x.parameter_shape,
                "shape_index": _index(x.parameter_shape_index),
            },
            "output_shape": x.output_shape,
            "values": [
                {
                    "id": s.value.id,
                    "name": s.value.name,
                    "shape_index": _index(s.value.shape_index),
                    "phi": s.value.is_phi,
                    "color": s.value.color,
                    "offset": s.offset,
                    "size": s.size,
                    "shape": s.shape,
                }
                for s in x.values
            ],
        }
        for x in module.allocations
    ]
    return {
        "hlotop_version": __version__,
        "module": module.name,
        "layout": module.layout,
        "files": [{"path": f.path, "kind": f.kind} for f in module.files],
        "allocations": allocations,
        "total_bytes_used": module.total_bytes_used,
    }


def _used_value(r, frames) -> dict[str, Any]:
    instr = r.instruction
    stack = (
        frames.stack(instr.stack_frame_id)
        if (frames is not None and instr is not None and instr.stack_frame_id is not None)
        else ()
    )
    source = None
    if instr and instr.source_file:
        source = {"file": instr.source_file, "line": instr.source_line}
    elif stack:
        source = {"file": stack[0].file, "line": stack[0].line}
    return {
        "id": r.value.id,
        "name": r.value.name,
        "shape_index": _index(r.value.shape_index),
        "positions": r.position_texts(),
        "uses": r.use_texts(),
        "instruction": instr.name if instr else None,
        "opcode": instr.opcode if instr else None,
        "instruction_shape": instr.shape if instr else None,
        "op_name": instr.op_name if instr else None,
        "source": source,
        "stack": [{"file": f.file, "line": f.line, "function": f.function} for f in stack],
    }


def _tail(module) -> dict[str, Any]:
    a = module.analysis
    live = module.live_range
    live_range = None
    if live is not None:
        peak = live.peak
        live_range = {
            "max": live.max_time,
            "instruction_sequence": list(live.instruction_sequence),
            "buffers": [
                {"name": b.name, "shape_index": list(b.shape_index), "start": b.start, "end": b.end}
                for b in live.buffers
            ],
            "peak": None
            if peak is None
            else {
                "time": peak.time,
                "variant": peak.variant,
                "entries": [
                    {
                        "name": e.name,
                        "shape_index": _index(e.shape_index),
                        "bytes": e.bytes,
                        "cumulative": e.cumulative,
                    }
                    for e in peak.entries
                ],
            },
        }
    stack = live.stack_trace if live is not None else None
    report = module.memory_usage_report
    return {
        "live_range": live_range,
        "stack_trace": None
        if stack is None
        else {"total": stack.total, "tree": [_tree(n) for n in stack.roots]},
        "memory_usage_report": None if report is None else _report(report),
        "analysis": {
            "platform": a.platform,
            "peak_step": a.peak_step,
            # Without live ranges there is no peak: its figures are null, not 0.
            "peak_bytes": None if a.peak_step is None else a.peak_bytes,
            "peak_bytes_source": a.peak_bytes_source,
            "peak_logical_bytes": None if a.peak_step is None else a.peak_logical_bytes,
            "peak_occupied_bytes": None if a.peak_step is None else a.peak_occupied_bytes,
            "peak_values": [_peak_value(v) for v in a.peak_values],
            "memory_stats": None
            if a.memory_stats is None
            else {
                **a.memory_stats.as_dict(),
                "alias_source": a.memory_stats.alias_source,
                "peak_memory_in_bytes": a.memory_stats.peak_memory_in_bytes,
                "peak_memory_rule": a.memory_stats.peak_memory_rule,
            },
            "memory_spaces": [
                {
                    "color": s.color,
                    "name": s.name,
                    "dump_name": s.dump_name,
                    "total_bytes": s.total_bytes,
                    "allocations": s.allocations,
                    "peak_step": s.peak_step,
                    "peak_bytes": s.peak_bytes,
                    "padding_bytes": s.padding_bytes,
                }
                for s in a.memory_spaces
            ],
            "live_bytes": list(a.live_bytes),
            "occupied_bytes": {str(c): list(curve) for c, curve in a.occupied_bytes.items()},
            "totals_by_kind": a.totals_by_kind,
            "allocations_by_kind": a.allocations_by_kind,
            "totals_by_memory_space": {str(c): b for c, b in a.totals_by_color.items()},
        },
        "groups": None,
        "capacity": None,
        "advice": None,
        "diagnostics": [
            {"path": d.path, "line": d.line, "message": d.message, "severity": d.severity}
            for d in module.diagnostics
        ],
    }


def _peak_value(v) -> dict[str, Any]:
    """A value live at the peak, with its live range; its defining instruction, last
    use and reasons are --advise's (tests/unit/test_why.py holds them to ``hlotop
    why``), null without it."""
    return {
        "id": v.value.id,
        "name": v.value.name,
        "shape_index": _index(v.value.shape_index),
        "logical_bytes": v.logical_bytes,
        "allocated_bytes": v.allocated_bytes,
        "defined_by": None,
        "live_range": {"start": v.live.start, "end": v.live.end},
        "last_use": None,
        "reasons": None,
    }


def _report(report) -> dict[str, Any]:
    def alloc(x):
        return {
            "index": x.index,
            "size": x.size,
            "summary": x.summary,
            "hidden_rows": x.hidden_rows,
            "rows": [
                {
                    "cumulative_size": r.cumulative_size,
                    "percent": _finite(r.percent),
                    "size": r.size,
                    "offset": r.offset,
                    "used_by_n_values": r.used_by_n_values,
                    "shapes": [{"count": c, "shape": s} for c, s in r.shapes],
                }
                for r in x.rows
            ],
        }

    return {
        "era": report.era,
        # Era B prints a total per memory space: the report's is their sum.
        "total_bytes": sum(s.total_bytes for s in report.memory_spaces)
        if report.era == "B" and report.memory_spaces
        else report.total_bytes,
        "allocations": [alloc(x) for x in report.allocations],
        "hidden_allocations": report.hidden_allocations,
        "memory_spaces": [
            {
                "name": s.name,
                "color": s.color,
                "total_bytes": s.total_bytes,
                "allocations": [alloc(x) for x in s.allocations],
            }
            for s in report.memory_spaces
        ],
    }
