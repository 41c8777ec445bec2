"""Why a value is live: its last use, and the reasons it is live at a schedule step.

How XLA gets a live range (``HloLiveRange``, ``xla/hlo/utils/hlo_live_range.cc``; the
dump prints its ``ToString``). The dumps show it run module-scoped on the entry
computation (``HloLiveRange::Run``'s default; a while's condition and body stand in the
sequence just before the while, as in ``sample_dumps/cpu/transformer_scan``).
``FlattenSchedule`` walks the entry's sequence and, before a ``call``
or ``conditional``, inserts the sequences of the computations it calls, and before a
``while`` its condition's then its body's (an async op's wrapped computation too);
each instruction gets the next step of that flattened sequence, which the dump prints
as ``InstructionSequence``. Fusion and thread-local computations (a reduce's
``to_apply``) are not flattened: the uses a record lists are of the fusion instruction
itself (its operand N), never of an instruction inside it. So every use whose
instruction is in the sequence has a step of its own, a use in a while body its body
instruction's; a use whose instruction is not there has none, and the dump does not
say which instruction calls its computation (the HLO text would). Then, for each
value defined by an instruction of the sequence (``CalculateBufferStartEndMap``):

* it starts at its instruction's step; a parameter at its computation's first step;
* it ends at the latest of: its instruction's step (a computation's root: the
  computation's end), its other positions' steps (a root position: that computation's
  end), and its uses' steps (``GetLastUsageTime``), where a use by a ``call`` is
  skipped (the callee's instructions were flattened) and a use by a ``while`` counts
  at the step of the body's parameter, not the while's own;
* an entry parameter that no output aliases (not donated) lives to the end
  (``max``), whatever its uses;
* finally ``NormalizeAliasedBuffers``: of the values that share one buffer, sorted by
  (start, end, id), each one's end is cut to the next one's start and the next one's
  end extended to cover it.

What the dump lets hlotop recover: each value's uses and positions (its ``Used
values`` record), the step of each instruction (the sequence), the printed range, the
allocation slices (its ``value:`` lines) and, from the record of a value an
instruction defines, that instruction's opcode and metadata. It does not print the
HloBuffers, nor the while body's parameter, so :func:`last_use` gives the use with the
latest step *as the dump orders them* (each at its own instruction's step) and says
whether that step is where the printed range ends (``ends_live_range``); where it is
not, the reasons (:func:`why_live`) show what the dump offers instead: an entry
parameter, an output, a loop's state, a later position, another value sharing the
slice. Which of those XLA's rule used is inference, and the names say so.

Pure functions over :mod:`hlotop.model` with a :class:`~hlotop.analysis.why_index.
WhyIndex` for the look-ups; wording is the views'.
"""

from __future__ import annotations

from dataclasses import dataclass

from hlotop.analysis.scope import phase_of
from hlotop.analysis.why_index import Parameter, WhyIndex
from hlotop.model import InstructionText, ShapeIndex, UsedValue, ValueInfo, stack_of

REASON_KINDS = (
    "defined-here",
    "used-later",
    "held-later",
    "loop-carried",
    "entry-parameter",
    "output",
    "shares-buffer",
    "live-range",
    "not-live",
)


@dataclass(frozen=True, slots=True)
class LastUse:
    """The use of a value with the latest step.

    ``instruction``, ``operand`` and ``operand_index`` are the record's use line as
    printed (``name, operand N {i}``); ``step`` is that instruction's step in the dump's
    ``InstructionSequence``. ``op_name`` and ``opcode`` are the instruction's own, read
    from the ``from instruction:`` line of a value it defines (None where it defines
    none with a record, or XLA dropped its metadata, as of many fusions); ``phase`` is
    hlotop's (:func:`hlotop.analysis.scope.phase_of` of that op_name and its Python
    stack; not the grouping's, which also reads a fusion's called computation in the
    HLO text and says ``update`` after the backward pass, at the cost of a pass over
    the records). ``ends_live_range``: whether ``step`` is the printed live range's last
    step; where it is not, something else set the end (see the module's docstring)."""

    instruction: str
    operand: int
    operand_index: ShapeIndex | None
    step: int
    op_name: str | None
    opcode: str | None
    phase: str
    ends_live_range: bool


@dataclass(frozen=True, slots=True)
class Reason:
    """One reason a value is live at a step (or that it is not). ``kind`` is one of
    :data:`REASON_KINDS`; the fields each needs, None elsewhere:

    * ``defined-here``: the step is the first of its live range; ``instruction`` its
      defining instruction, ``step`` the range's start (a parameter's is its
      computation's first step, not the parameter's own);
    * ``used-later``: ``instruction`` and ``step`` of its next use at or after the
      step (the record's use; the sequence's step);
    * ``held-later``: no use is left, but ``instruction`` (at ``step``) holds it as a
      later position (a tuple element, a while's state): XLA keeps a value live to its
      last position;
    * ``loop-carried``: a ``while`` (``instruction``, at ``step``) defines it or holds
      it, or takes it as its initial state (its positions' and uses' opcodes, read from
      the instructions' records);
    * ``entry-parameter``: it is entry parameter ``parameter`` at ``parameter_index``;
      ``donated`` (exact from the HLO text's input_output_alias where
      ``donation_source`` is ``"input_output_alias"``, inferred from its allocation
      being maybe-live-out otherwise). XLA keeps a parameter that is not donated live
      to the end;
    * ``output``: it is live out of the program (maybe-live-out allocation, live
      range to the end);
    * ``shares-buffer``: value ``other_id`` (``other_name``, its ``name{index}``),
      whose slot overlaps this one's bytes in the same allocation, is live at the step
      too (the dump shows the slices and ranges; that XLA made them one buffer, whose
      values' ranges it joins, is inferred);
    * ``live-range``: none of the above: live by its printed range alone (a root of a
      called computation lives to that computation's end, a use by a while counts at
      its body's start: the dump does not show those);
    * ``not-live``: the step is outside its live range (or it has none).
    """

    kind: str
    instruction: str | None = None
    step: int | None = None
    parameter: int | None = None
    parameter_index: ShapeIndex | None = None
    donated: bool | None = None
    donation_source: str | None = None
    other_id: int | None = None
    other_name: str | None = None


@dataclass(frozen=True, slots=True)
class ValueFacts:
    """What the reasons at any step are read from, worked out once per value
    (:func:`value_facts`): its uses and later positions with their steps (instruction
    names, as the record prints them), its last use, whether it is an entry parameter
    or an output, the whiles that carry it and the values sharing its slice."""

    info: ValueInfo
    uses: tuple[tuple[int, str], ...]  # (step, instruction), by step; unscheduled left out
    positions: tuple[tuple[int, str], ...]  # the other positions likewise
    last_use: LastUse | None
    parameter: Parameter | None
    output: bool
    loops: tuple[tuple[str, int | None], ...]  # (while, its step), first seen first
    sharers: tuple[ValueInfo, ...]


def value_facts(info: ValueInfo, index: WhyIndex) -> ValueFacts:
    """The facts about ``info`` (a value of ``index``'s module) the reasons need.
    Reads its record, and the records of the instructions it names that may be whiles
    or are its last use (each once per index). Raises nothing."""
    return _facts(info, info.used, index)


def _facts(info: ValueInfo, used: UsedValue | None, index: WhyIndex) -> ValueFacts:
    """:func:`value_facts`, ``used`` being ``info``'s record (read once by the caller:
    each read of ``info.used`` looks it up again)."""
    return _facts_of(_scan(info, used, index), index)


# What a value's record says, its last use not yet looked up: (info, its record's
# instruction, read or not, uses, positions, (step, use line) of its last use, loops).
_Scan = tuple[
    ValueInfo,
    "InstructionText | None",
    bool,
    tuple[tuple[int, str], ...],
    tuple[tuple[int, str], ...],
    "tuple[int, str] | None",
    tuple[tuple[str, int | None], ...],
]


def _scan(info: ValueInfo, used: UsedValue | None, index: WhyIndex) -> _Scan:
    """The uses and positions of ``info`` (its record ``used``) at their steps, the
    latest use (the first printed of those at one step) and the whiles among the
    instructions they name."""
    use_texts = (used.use_texts() or []) if used is not None else []
    position_texts = used.position_texts() if used is not None else []
    steps = index.steps()
    uses: list[tuple[int, str]] = []
    last: tuple[int, str] | None = None  # (step, use line) of the latest, first printed
    for text in use_texts:
        name = text.split(", operand ", 1)[0]
        step = steps.get(name)
        if step is not None:
            uses.append((step, name))
            if last is None or step > last[0]:
                last = (step, text)
    positions: list[tuple[int, str]] = []
    own = info.value.name
    for text in position_texts:
        name = text.split(" ", 1)[0]
        step = steps.get(name)
        if step is not None and name != own:
            positions.append((step, name))
    uses.sort(key=lambda su: su[0])  # stable: the record's order among equal steps
    positions.sort(key=lambda sp: sp[0])
    loops: dict[str, int | None] = {}
    phis, is_while = index.phi_names(), index.is_while
    for name in (own, *(n for _, n in positions), *(n for _, n in uses)):
        if name in phis and name not in loops and is_while(name):
            loops[name] = steps.get(name)
    instr = used.instruction if used is not None else None
    return (
        info,
        instr,
        used is not None,
        tuple(uses),
        tuple(positions),
        last,
        tuple(loops.items()),
    )


def _facts_of(scan: _Scan, index: WhyIndex) -> ValueFacts:
    """The :class:`ValueFacts` of a value's :func:`_scan`: its last use's instruction
    looked up, its parameter, output and sharers."""
    info, instr, read, uses, positions, last, loops = scan
    return ValueFacts(
        info=info,
        uses=uses,
        positions=positions,
        last_use=None if last is None else _last_use(info, *last, index),
        parameter=index.parameter(info, instr, read),
        output=index.is_output(info),
        loops=loops,
        sharers=tuple(index.sharers(info)),
    )


def last_use(info: ValueInfo, index: WhyIndex) -> LastUse | None:
    """The use of ``info`` (its record's) whose instruction comes latest in the dump's
    schedule, the first printed of those at one step; None when it has no record, no
    uses, or none at a step (see the module's docstring for what XLA counts and what
    the dump shows). ``index``: :class:`WhyIndex` of its module. Raises nothing."""
    return value_facts(info, index).last_use


def _last_use(info: ValueInfo, step: int, text: str, index: WhyIndex) -> LastUse:
    """The :class:`LastUse` of use line ``text`` (``name, operand N {i}``, as the
    record prints it and its grammar checked it), at ``step``."""
    name, rest = text.split(", operand ", 1)
    number, _, brace = rest.partition(" ")
    operand_index = tuple(int(i) for i in brace.strip("{}").split(",") if i) if brace else None
    instr = index.instruction(name)
    op_name = instr.op_name if instr is not None else None
    stack = stack_of(instr, index.module.sections.stack_frames)
    return LastUse(
        instruction=name,
        operand=int(number),
        operand_index=operand_index,
        step=step,
        op_name=op_name,
        opcode=instr.opcode if instr is not None else None,
        phase=phase_of(op_name, False, stack),
        ends_live_range=info.live is not None and info.live.end == step,
    )


def why_live(info: ValueInfo, step: int, index: WhyIndex) -> list[Reason]:
    """The reasons ``info`` is live at schedule ``step``, in the order of
    :data:`REASON_KINDS` (several may hold); ``[Reason("not-live")]`` when the step is
    outside its printed live range or it has none. ``index``: :class:`WhyIndex` of its
    module. Raises nothing."""
    return reasons_at(value_facts(info, index), step)


def reasons_at(facts: ValueFacts, step: int) -> list[Reason]:
    """:func:`why_live` from facts already worked out (:func:`value_facts`): a filter
    over them, cheap enough for every move of a cursor."""
    info = facts.info
    live = info.live
    if live is None or not live.start <= step <= live.end:
        return [Reason("not-live")]
    reasons: list[Reason] = []
    if step == live.start:
        reasons.append(Reason("defined-here", instruction=info.value.name, step=live.start))
    later = next(((s, u) for s, u in facts.uses if s >= step), None)
    if later is not None:
        reasons.append(Reason("used-later", instruction=later[1], step=later[0]))
    else:
        held = next(((s, p) for s, p in facts.positions if s >= step), None)
        if held is not None:
            reasons.append(Reason("held-later", instruction=held[1], step=held[0]))
    for name, at in facts.loops:
        reasons.append(Reason("loop-carried", instruction=name, step=at))
    p = facts.parameter
    if p is not None:
        reasons.append(
            Reason(
                "entry-parameter",
                parameter=p.number,
                parameter_index=p.index,
                donated=p.donated,
                donation_source=p.donation_source,
            )
        )
    if facts.output and (p is None or p.donated):
        reasons.append(Reason("output"))
    for other in facts.sharers:
        r = other.live
        if r is not None and r.start <= step <= r.end:
            reasons.append(
                Reason("shares-buffer", other_id=other.value.id, other_name=other.value.label)
            )
    if not reasons:
        reasons.append(Reason("live-range"))
    return reasons


@dataclass(frozen=True, slots=True)
class DefinedBy:
    """A value's defining instruction as its record's ``from instruction:`` line
    prints it (``instruction``, ``opcode``, ``op_name``: the dump's; None where the
    record has no such line, as before 2021-09, or no metadata) and hlotop's ``phase``
    of it (:func:`hlotop.analysis.scope.phase_of` of its own metadata, as for
    :class:`LastUse`: ``argument`` for an entry parameter)."""

    instruction: str
    opcode: str | None
    op_name: str | None
    phase: str


def defined_by(info: ValueInfo, index: WhyIndex) -> DefinedBy:
    """``info``'s defining instruction, its op_name and phase. Raises nothing."""
    used = info.used
    instr = used.instruction if used is not None else None
    return _defined_by(info, instr, index.parameter(info, instr, used is not None), index)


def _defined_by(
    info: ValueInfo, instr: InstructionText | None, parameter: Parameter | None, index: WhyIndex
) -> DefinedBy:
    """:func:`defined_by` of ``info`` whose record's instruction is ``instr`` and
    which is entry parameter ``parameter`` (or None)."""
    op_name = instr.op_name if instr is not None else None
    stack = stack_of(instr, index.module.sections.stack_frames)
    return DefinedBy(
        instruction=(instr.name if instr is not None else None) or info.value.name,
        opcode=instr.opcode if instr is not None else None,
        op_name=op_name,
        phase=phase_of(op_name, parameter is not None, stack),
    )


@dataclass(frozen=True, slots=True)
class ValueWhy:
    """What :func:`why_at` says about one value: its defining instruction, its last
    use (:attr:`ValueFacts.last_use`) and the reasons it is live at the step asked
    about. Small and free of the model, so that a worker process can hand it back."""

    defined: DefinedBy
    last_use: LastUse | None
    reasons: list[Reason]


def why_at(infos: list[ValueInfo], step: int, index: WhyIndex) -> dict[int, ValueWhy]:
    """:func:`value_facts`, :func:`defined_by` and :func:`reasons_at` ``step`` of each
    of ``infos`` (values of ``index``'s module), by value id: what ``hlotop why DUMP
    NAME --step step`` says of each, for many values at once (``--json``'s values
    live at the peak). In one pass over their records in dump order (value ids), then
    one over the records of their last uses' instructions, in dump order too: read in
    order, a big dump's records come from the window of the file read last, where
    in any order each costs a read of its own (the 8 260 last uses of 12 320 values
    live at the peak of a 45 MB dump: 0.10 s in order, 0.62 s value by value).
    Raises nothing."""
    scans = []
    for info in sorted(infos, key=lambda i: i.value.id):
        scans.append(_scan(info, info.used, index))
    index.read_instructions({s[5][1].split(", operand ", 1)[0] for s in scans if s[5]})
    out: dict[int, ValueWhy] = {}
    for scan in scans:
        facts = _facts_of(scan, index)
        info = scan[0]
        defined = _defined_by(info, scan[1], facts.parameter, index)
        out[info.value.id] = ValueWhy(defined, facts.last_use, reasons_at(facts, step))
    return out
