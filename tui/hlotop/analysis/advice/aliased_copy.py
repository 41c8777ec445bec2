"""Donation advice, "aliased but copied": a donated entry parameter that XLA still copies,
because the program reads its old value after the output that reuses its buffer is
written.

Why XLA copies (``xla/service/copy_insertion.cc``): for every parameter an output aliases
(``input_output_alias``), ``AddCopiesForAliasedInputOutputs`` deep-copies the parameter
(its users read the copy) and the root's aliased outputs, then
``RemoveUnnecessaryCopies`` takes out each copy whose removal leaves no two values of one
buffer live at once. Where the old value is read after the aliased output is written
into the parameter's buffer (``y = x.at[i].set(v)`` returned in ``x``'s place, and
``x`` read after the update), the two interfere: the copy of the parameter stays, and
the old value lives in a buffer of its own. The donation then saves nothing: that
buffer is as big as the parameter.

What the dump says: the parameter's allocation (``parameter P ... at ShapeIndex {i}``,
aliased by the HLO text's ``input_output_alias`` or, without it, maybe-live-out too);
the parameter value's uses (its record's ``uses:``) naming an instruction whose opcode
is ``copy`` (the copy's own record), whose value has the parameter's shape and layout
and lies in another allocation. A copy to another layout or memory space (``S(n)``) is
not this one, nor an asynchronous ``copy-start`` (a prefetch by memory-space
assignment). The saving is the copies' allocated bytes live at XLA's peak step, by
jitted argument (an estimate: the same program without the late read needs no such
buffer, as ``sample_dumps/proof/aliased_copy`` shows on CPU and TPU). The evidence says,
for each copy, what reads it and the parameter last (``hlotop why``'s last use).

Not only a program's own late read keeps such a copy: the CPU backend's dumps of plain
train steps (``sample_dumps/jax/*/mlp_train``, ``transformer_big``, ``proof/*/cpu-*``)
keep copies of donated weights. In ``mlp_train`` the backward pass reads each weight to
pass the gradient to the layer below, and the weight's own update does not depend on
that read, so nothing orders the read before the write; that copy insertion kept the
copy for that reason is inferred (the dump shows the copy and the reads, not XLA's
ordering). The TPU dumps of the same train steps show no such copy. The advice says
what the dump shows either way; its fix names the late read."""

from __future__ import annotations

from collections import defaultdict

from hlotop.analysis.labels import Labeller
from hlotop.analysis.scope import pytree_path
from hlotop.analysis.why import last_use
from hlotop.analysis.why_index import WhyIndex
from hlotop.model import Advice, BufferAllocation, ModuleDump, ValueInfo
from hlotop.units import human_bytes


def aliased_copy_advice(module: ModuleDump, labeller: Labeller) -> list[Advice]:
    """One :class:`~hlotop.model.Advice` (kind ``donation``) per jitted argument (the
    first part of the parameters' pytree paths) whose donated entry parameters have a
    ``copy`` (same shape and layout, another allocation) live at XLA's peak step: the
    saving is those copies' allocated bytes, largest first. None without live ranges.
    Raises nothing."""
    a = module.analysis
    step = a.peak_step
    if step is None:
        return []
    index = WhyIndex(module)
    found: dict[str, list[tuple[str, BufferAllocation, ValueInfo, ValueInfo]]] = defaultdict(list)
    for alloc in module.allocations:
        if alloc.parameter is None:
            continue
        for slot in alloc.values:
            info = a.by_id.get(slot.value.id)
            param = index.parameter(info) if info is not None else None
            if info is None or param is None or not param.donated:
                continue
            for copy in _copies(info, alloc, index):
                live = copy.live
                if live is not None and live.start <= step <= live.end:
                    path = _path(labeller, info) or f"parameter {alloc.parameter}"
                    found[path.split("/")[0]].append((path, alloc, info, copy))
    out = [
        _advice(module, labeller, index, argument, rows, step) for argument, rows in found.items()
    ]
    out.sort(key=lambda x: (-x.saving_bytes, x.title))
    return out


def _copies(param: ValueInfo, alloc: BufferAllocation, index: WhyIndex) -> list[ValueInfo]:
    """The values of ``copy`` instructions that read entry parameter value ``param``
    (its record's uses), of its shape and layout, outside its allocation ``alloc``."""
    used = param.used
    found = []
    for text in (used.use_texts() or []) if used is not None else []:
        name = text.split(", operand ", 1)[0]
        copy = index.first_value(name)
        if copy is None or index.opcode(name) != "copy" or copy.shape != param.shape:
            continue
        if copy.slot is None or copy.slot.allocation == alloc.index:
            continue
        found.append(copy)
    return found


def _path(labeller: Labeller, info: ValueInfo, fold: bool = False) -> str | None:
    """An entry parameter's pytree path from its ``op_name`` (folded: layer indices as
    ``*``); None without one."""
    op_name = labeller.origin(info)[0]
    return pytree_path(op_name, fold=fold) if op_name else None


def _advice(
    module: ModuleDump,
    labeller: Labeller,
    index: WhyIndex,
    argument: str,
    rows: list[tuple[str, BufferAllocation, ValueInfo, ValueInfo]],
    step: int,
) -> Advice:
    """The advice for ``argument``'s copies ``rows`` (path, the parameter's
    allocation, the parameter's value, the copy's value), largest first."""
    rows.sort(key=lambda r: (-r[3].allocated_bytes, r[1].parameter or 0))
    saving = sum(copy.allocated_bytes for _, _, _, copy in rows)
    evidence = [_evidence(module, index, *row, step) for row in rows]
    groups: dict[str, None] = {}
    for _, _, param, _ in rows:
        groups.setdefault(_path(labeller, param, fold=True) or "(no op_name)", None)
    many = f"{len(rows)} of its donated buffers are" if len(rows) > 1 else "a donated buffer is"
    return Advice(
        kind="donation",
        title=f"{argument} is donated but {many} still copied ({human_bytes(saving)} at "
        "the peak): the old value is read after its buffer may be reused",
        saving_bytes=saving,
        bound="estimate",
        step=step,
        values=tuple(copy.value.id for _, _, _, copy in rows),
        groups=tuple(groups),
        evidence=tuple(evidence),
        fix=f"read what is needed of the old {argument} before it is updated, so that "
        "the update depends on every read of it (or compute it from the updated "
        "value); while a read of the old value may come after the update, XLA keeps a "
        "copy of it and the donation saves nothing there",
    )


def _evidence(
    module: ModuleDump,
    index: WhyIndex,
    path: str,
    alloc: BufferAllocation,
    param: ValueInfo,
    copy: ValueInfo,
    step: int,
) -> str:
    """One line of what the dump says of ``copy``, a copy of ``param``."""
    where = module.analysis.allocation_of.get(copy.slot.allocation) if copy.slot else None
    kinds = ", ".join(where.kinds) if where is not None and where.kinds else "temp"
    span = f"steps {copy.live.start}-{copy.live.end}" if copy.live is not None else "?"
    said = [
        f"parameter {alloc.parameter} ({path}, {param.shape}) is donated (an output is "
        f"aliased to allocation {alloc.index}), yet {copy.value.name} copies it into "
        f"allocation {copy.slot.allocation if copy.slot else '?'} ({kinds}): "
        f"{human_bytes(copy.allocated_bytes)}, live {span}, XLA's peak step {step} among them"
    ]
    for who, use in (
        (copy.value.name, last_use(copy, index)),
        ("the parameter", last_use(param, index)),
    ):
        if use is not None:
            said.append(f"{who} is read last by {use.instruction} at step {use.step}")
    return "; ".join(said)
