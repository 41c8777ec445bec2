"""``hlotop why DUMP NAME``: a value, its allocation, live range and last use, and why
it is live at a step, as text (its JSON: :mod:`hlotop.report.why_table`); and the
wording of a reason and of a last use, which the browser's detail card shares."""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Group
from rich.text import Text

from hlotop.analysis.peak import live_set
from hlotop.analysis.why import (
    DefinedBy,
    LastUse,
    Reason,
    ValueFacts,
    defined_by,
    reasons_at,
    value_facts,
)
from hlotop.analysis.why_index import WhyIndex
from hlotop.model import ModuleDump, ValueInfo, format_shape_index
from hlotop.safe_text import printable
from hlotop.units import human_bytes


def step_name(index: WhyIndex, step: int) -> str:
    """The instruction at ``step``, or ``(end of program)`` at ``max``."""
    seq = index.sequence
    return seq[step] if 0 <= step < len(seq) else "(end of program)"


def reason_text(reason: Reason, step: int, live: tuple[int, int] | None = None) -> str:
    """One line saying ``reason`` (a reason at schedule ``step``); ``live``: the value's
    range (start, end), for ``not-live`` and ``live-range``."""
    kind = reason.kind
    if kind == "defined-here":
        return f"defined here: {reason.instruction} starts its live range at step {reason.step}"
    if kind == "used-later":
        if reason.step == step:
            return f"used at this step by {reason.instruction}"
        return f"used later by {reason.instruction} at step {reason.step}"
    if kind == "held-later":
        return (
            f"held by {reason.instruction} at step {reason.step} (no use left: a later "
            "position, e.g. a tuple element, keeps it live)"
        )
    if kind == "loop-carried":
        at = f" (step {reason.step})" if reason.step is not None else ""
        return f"carried by {reason.instruction}{at}: part of that loop's state"
    if kind == "entry-parameter":
        where = f"entry parameter {reason.parameter} {format_shape_index(reason.parameter_index)}"
        how = (
            "from the HLO text's input_output_alias"
            if reason.donation_source == "input_output_alias"
            else "inferred: its allocation is also maybe-live-out"
        )
        if reason.donated:
            return f"{where}, donated ({how}): its buffer is free after its last use"
        return f"{where}, not donated ({how}): XLA keeps it live to the end of the program"
    if kind == "output":
        return "an output: live out of the program, to its end"
    if kind == "shares-buffer":
        return (
            f"shares its buffer with <{reason.other_id} {reason.other_name}>, live here too "
            "(overlapping slices of one allocation)"
        )
    span = f" (steps {live[0]}-{live[1]})" if live is not None else ""
    if kind == "not-live":
        return f"not live at step {step}{span}"
    return f"within its printed live range{span}; the dump says no more"


def last_use_text(last: LastUse | None) -> str:
    """``add.3, operand 1 at step 40 · op_name ... · backward``, and whether that step
    ends the live range; ``(none)`` without one."""
    if last is None:
        return "(none: no use at a step of the schedule)"
    index = format_shape_index(last.operand_index)
    text = f"{last.instruction}, operand {last.operand}{' ' + index if index else ''}"
    text += f" at step {last.step}"
    if last.op_name:
        text += f" · {last.op_name}"
    text += f" · {last.phase}"
    if not last.ends_live_range:
        text += " · not where its live range ends"
    return text


@dataclass(frozen=True, slots=True)
class WhyAnswer:
    """What ``hlotop why`` says about one value: its facts, the step asked about
    (None without live ranges), whether that is XLA's peak, and the reasons there."""

    module: ModuleDump
    info: ValueInfo
    facts: ValueFacts
    defined: DefinedBy
    step: int | None
    is_peak: bool
    reasons: list[Reason]


def answer(module: ModuleDump, info: ValueInfo, step: int | None, index: WhyIndex) -> WhyAnswer:
    """The answer about ``info`` at ``step`` (default: XLA's peak step)."""
    peak = module.analysis.peak_step
    at = peak if step is None else step
    facts = value_facts(info, index)
    reasons = reasons_at(facts, at) if at is not None else []
    return WhyAnswer(module, info, facts, defined_by(info, index), at, at == peak, reasons)


def render_why(a: WhyAnswer, index: WhyIndex) -> Group:
    """The answer as text: the value's facts a line each, then the reasons at the
    step."""
    info = a.info
    rows: list[tuple[str, str]] = []
    size = human_bytes(info.allocated_bytes)
    rows.append(("value", f"{info.value}  {info.shape or '?'}  ({size})"))
    d = a.defined
    rows.append(
        (
            "defined by",
            f"{d.instruction} ({d.opcode or '?'}) · {d.op_name or '(no op_name)'} · {d.phase}",
        )
    )
    slot = info.slot
    if slot is not None:
        alloc = a.module.analysis.allocation_of.get(slot.allocation)
        where = f"{slot.allocation}"
        if alloc is not None:
            where += f" · {', '.join(alloc.kinds)} · {human_bytes(alloc.size)}"
        rows.append(("allocation", where + f" · offset {slot.offset}, {slot.size} bytes"))
    else:
        rows.append(("allocation", "(no allocation line names it)"))
    live = info.live
    if live is not None:
        rows.append(
            (
                "live range",
                f"steps {live.start}-{live.end}: {step_name(index, live.start)} → "
                f"{step_name(index, live.end)}",
            )
        )
    else:
        rows.append(("live range", "(none printed)"))
    rows.append(("last use", last_use_text(a.facts.last_use)))
    width = max(len(label) for label, _ in rows) + 2
    parts = [Text(printable(f"hlotop why · {a.module.name}"), style="bold")]
    for label, value in rows:
        parts.append(Text.assemble((label.ljust(width), "dim"), printable(value)))
    if a.step is None:
        parts.append(Text("No live ranges in this dump: no step to ask about.", style="dim"))
        return Group(*parts)
    peak = " (XLA's peak)" if a.is_peak else ""
    head = f"At step {a.step}{peak}, {step_name(index, a.step)}:"
    parts.append(Text(printable(head), style="bold"))
    span = (live.start, live.end) if live is not None else None
    for reason in a.reasons:
        parts.append(Text(printable(f"  · {reason_text(reason, a.step, span)}")))
    return Group(*parts)


# -- every value live at a step --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LiveAnswer:
    """``hlotop why DUMP`` (no NAME): every value live at ``step``, in XLA's peak-list
    order (logical bytes descending, then name and index), each with its facts and
    the reasons there."""

    module: ModuleDump
    step: int
    is_peak: bool
    values: list[tuple[ValueFacts, list[Reason]]]


def live_answer(module: ModuleDump, step: int | None, index: WhyIndex) -> LiveAnswer | None:
    """The values live at ``step`` (default: XLA's peak step) and why; None without
    live ranges. Their records are read in dump order (value ids)."""
    peak = module.analysis.peak_step
    at = peak if step is None else step
    if at is None or module.live_range is None:
        return None
    live = live_set(module.analysis.values, at)
    facts = {i.value.id: value_facts(i, index) for i in sorted(live, key=lambda i: i.value.id)}
    values = [(facts[i.value.id], reasons_at(facts[i.value.id], at)) for i in live]
    return LiveAnswer(module, at, at == peak, values)


def _reason_short(reason: Reason) -> str:
    """A reason in a few words, for a table row."""
    kind = reason.kind
    if kind in ("used-later", "held-later"):
        verb = "used by" if kind == "used-later" else "held by"
        return f"{verb} {reason.instruction} @{reason.step}"
    if kind == "loop-carried":
        return f"{reason.instruction}'s state"
    if kind == "entry-parameter":
        return f"parameter {reason.parameter}, {'donated' if reason.donated else 'not donated'}"
    if kind == "shares-buffer":
        return f"shares with <{reason.other_id} {reason.other_name}>"
    if kind == "defined-here":
        return "defined here"
    return {"output": "output", "live-range": "its live range"}.get(kind, kind)


def render_live(answer: LiveAnswer, index: WhyIndex) -> Group:
    """Every value live at the step, a line each: its allocated bytes, its name, its
    last use and the reasons, in a few words."""
    peak = " (XLA's peak)" if answer.is_peak else ""
    parts = [
        Text(printable(f"hlotop why · {answer.module.name}"), style="bold"),
        Text(
            printable(
                f"{len(answer.values)} values live at step {answer.step}{peak}, "
                f"{step_name(index, answer.step)}: allocated bytes, value, last use, why"
            ),
            style="dim",
        ),
    ]
    for facts, reasons in answer.values:
        info, last = facts.info, facts.last_use
        used = f"{last.instruction} @{last.step}" if last is not None else "(no use)"
        why = "; ".join(_reason_short(r) for r in reasons)
        line = f"{human_bytes(info.allocated_bytes):>10}  {info.value.label}  last {used}  · {why}"
        parts.append(Text(printable(line)))
    return Group(*parts)
