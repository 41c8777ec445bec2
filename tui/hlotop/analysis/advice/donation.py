"""Donation advice: entry parameters whose buffer an output of the same shape and layout
could take over (``jax.jit(..., donate_argnums=..., donate_argnames=...)``).

What the dump says: an entry parameter's allocation (``allocation N: ..., parameter P,
shape |...| at ShapeIndex {...}``) and whether an output aliases it (the
``input_output_alias`` of the HLO text beside the dump, else the allocation being
maybe-live-out too); each output's allocation (maybe-live-out, not a parameter) and the
value it holds at the end of the program. XLA can alias a donated parameter with an
output only when both have the same shape and layout
(``HloInputOutputAliasConfig``, checked in ``xla/service/hlo_input_output_alias_config.cc``).
Donating removes the output's own buffer: the saving is that output's size, on every
step where it is live. It is an upper bound: where an output is computed while its
parameter is still read, XLA keeps it in a temp buffer until it can be written over the
parameter, and the peak drops by less (seen on TPU and CPU). On the proof pairs
(``sample_dumps/proof/donation``, TPU v5e) JAX's peak falls by 66% and 73% of it and
hlotop's HBM occupied peak by it within 1%; the donated programs' temp grows by the
rest, which nothing in the undonated dump foretells (docs/usage.md, the advice
section)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from hlotop.analysis.labels import Labeller
from hlotop.analysis.scope import pytree_path
from hlotop.model import Advice, BufferAllocation, ModuleDump, ValueInfo
from hlotop.units import human_bytes


def _aliased_parameters(module: ModuleDump) -> set[tuple[int, tuple[int, ...]]]:
    """(parameter number, ShapeIndex) of the entry parameters an output aliases."""
    aliases = module.sections.input_output_alias
    if aliases is not None:
        return {(a.parameter, tuple(a.parameter_index)) for a in aliases}
    return {
        (x.parameter, tuple(x.parameter_shape_index or ()))
        for x in module.allocations
        if x.parameter is not None and x.maybe_live_out
    }


def _held_value(alloc: BufferAllocation, infos: dict[int, ValueInfo], end: int) -> ValueInfo | None:
    """The value an allocation holds at the end of the program (live to ``end``), else
    its largest; None if it has none."""
    held = [infos[s.value.id] for s in alloc.values if s.value.id in infos]
    if not held:
        return None
    last = [i for i in held if i.live is not None and i.live.end >= end]
    return max(last or held, key=lambda i: (i.allocated_bytes, -i.value.id))


def _outputs(
    module: ModuleDump, infos: dict[int, ValueInfo]
) -> dict[str, list[tuple[BufferAllocation, ValueInfo]]]:
    """The outputs no parameter is aliased with, by their value's shape with layout."""
    end = module.analysis.max_time
    out: dict[str, list[tuple[BufferAllocation, ValueInfo]]] = defaultdict(list)
    for alloc in module.allocations:
        if not alloc.maybe_live_out or alloc.parameter is not None:
            continue
        held = _held_value(alloc, infos, end)
        if held is None or held.shape is None or held.shape.startswith("("):
            continue  # a tuple's index table is not donatable
        out[held.shape].append((alloc, held))
    return out


def donation_advice(module: ModuleDump, labeller: Labeller) -> list[Advice]:
    """One :class:`~hlotop.model.Advice` per jitted argument (the first part of the
    parameters' pytree paths, JAX's ``op_name`` of an entry parameter) whose
    parameters are not donated and match outputs of the same shape and layout that no
    parameter is aliased with: the saving is those outputs' bytes (an upper bound),
    largest first. Parameters of a shape with fewer free outputs than parameters are
    matched largest first, then by parameter number; the evidence says so. Raises
    nothing."""
    a = module.analysis
    infos = {i.value.id: i for i in a.values}
    aliased = _aliased_parameters(module)
    outputs = _outputs(module, infos)
    candidates: dict[str, list[tuple[BufferAllocation, ValueInfo]]] = defaultdict(list)
    for alloc in module.allocations:
        if alloc.parameter is None:
            continue
        if (alloc.parameter, tuple(alloc.parameter_shape_index or ())) in aliased:
            continue
        held = _held_value(alloc, infos, -1)
        if held is None or held.shape is None or held.shape not in outputs:
            continue
        candidates[held.shape].append((alloc, held))
    by_argument: dict[str, list[tuple[str, BufferAllocation, int, ValueInfo]]] = defaultdict(list)
    evidence: dict[str, list[str]] = defaultdict(list)
    for shape, params in candidates.items():
        free = sorted(outputs[shape], key=lambda p: (-p[0].size, p[0].index))
        params.sort(key=lambda p: (-p[0].size, p[0].parameter or 0))
        matched = params[: len(free)]
        for (alloc, held), (out_alloc, _) in zip(matched, free, strict=False):
            path = _path(labeller, held) or f"parameter {alloc.parameter}"
            argument = path.split("/")[0]
            by_argument[argument].append((path, alloc, out_alloc.size, held))
            evidence[argument].append(
                f"parameter {alloc.parameter} ({path}, {shape}) is not donated; output "
                f"allocation {out_alloc.index} of the same shape and layout is not aliased"
            )
        if len(params) > len(free):
            names = ", ".join(_path(labeller, h) or f"parameter {x.parameter}" for x, h in params)
            for argument in {(_path(labeller, h) or "").split("/")[0] for _, h in matched}:
                evidence[argument].append(
                    f"{len(free)} free output(s) of {shape} for {len(params)} parameters "
                    f"({names}): matched largest first"
                )
    out = []
    for argument, rows in by_argument.items():
        saving = sum(size for _, _, size, _ in rows)
        rows.sort(key=lambda r: (-r[2], r[1].parameter or 0))
        groups = _groups(labeller, (h for _, _, _, h in rows))
        out.append(
            Advice(
                kind="donation",
                title=f"donate {argument} ({human_bytes(saving)}): {len(rows)} of its "
                "buffers match outputs of the same shape and layout",
                saving_bytes=saving,
                bound="upper_bound",
                step=None,
                values=tuple(h.value.id for _, _, _, h in rows),
                groups=groups,
                evidence=tuple(evidence[argument]),
                fix=f"jax.jit(f, donate_argnames=({argument!r},)), or its index in "
                "donate_argnums; then do not read the donated array after the call",
            )
        )
    return out


def _path(labeller: Labeller, info: ValueInfo, fold: bool = False) -> str | None:
    """An entry parameter's pytree path (``opt_state/0/mu/Block_3/w``; layer indices
    folded to ``*`` when ``fold``), from its ``op_name``; None without one."""
    op_name = labeller.origin(info)[0]
    return pytree_path(op_name, fold=fold) if op_name else None


def _groups(labeller: Labeller, infos: Iterable[ValueInfo]) -> tuple[str, ...]:
    """The distinct folded paths of ``infos``, in first-seen order."""
    seen: dict[str, None] = {}
    for info in infos:
        seen.setdefault(_path(labeller, info, fold=True) or "(no op_name)", None)
    return tuple(seen)
