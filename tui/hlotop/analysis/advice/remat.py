"""The remat lens: what the forward pass saves for the backward pass, live at the peak.

A value is saved for backward when its defining instruction is in the forward pass
(``jvp(`` in its ``op_name`` without ``transpose(``: :func:`hlotop.analysis.scope.
phase_of`) and the instruction at the last step of its live range, the use that ends
it, is in the backward pass (``transpose(jvp(``). XLA's live range of a value ends at
its last use in the flattened schedule (``HloLiveRange``), so that instruction is the
``InstructionSequence``'s at the range's end step. Rematerialising (``jax.checkpoint``,
``flax.linen.remat``) the scope that made such values recomputes them in the backward
pass instead of keeping them. The saving is how far the program's peak falls when they
are live nowhere (:func:`peak_drop`: another step may become the peak), at most their
bytes, counting only the values a remat of that scope would take off the peak
(:func:`left_saved`): not one the backward pass uses at or before the peak step
(recomputed, it would be live there all the same), nor one the backward pass of
another scope uses (that scope's backward still needs it saved: a block's output, the
residual stream, read by the next LayerNorm's backward). It is an upper bound: the
recomputation needs buffers of its own, and the remat's inputs are saved in its place.
On the proof pair (``sample_dumps/proof/remat``, TPU v5e) the bound is 1.09 times XLA's
peak drop for ``GPT/Block_*/attn`` and 2.0 times for ``GPT/Block_*/mlp`` (without the
two rules: 1.18 and 3.7 times)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from itertools import accumulate

from hlotop.analysis.labels import Labeller
from hlotop.analysis.scope import scope_of
from hlotop.model import Advice, ModuleDump, ValueInfo
from hlotop.units import human_bytes

FORWARD, BACKWARD = "forward", "backward"


def last_use_phase(module: ModuleDump, labeller: Labeller, info: ValueInfo) -> str | None:
    """The phase of the instruction at the end step of ``info``'s live range (its last
    use): the phase of the value that instruction defines; None when the schedule or
    that value is not in the dump."""
    live = module.live_range
    if info.live is None or live is None:
        return None
    sequence = live.instruction_sequence
    end = info.live.end
    if not 0 <= end < len(sequence):
        return None
    name = sequence[end]
    user = labeller.value_named(name) if name else None
    return labeller.phase(user) if user is not None else None


def saved_for_backward(module: ModuleDump, labeller: Labeller) -> list[ValueInfo]:
    """The values live at XLA's peak step that the forward pass defined and the
    backward pass uses last, largest (allocated bytes) first. [] without a peak."""
    a = module.analysis
    if a.peak_step is None:
        return []
    found = [
        info
        for info in a.peak_values
        if labeller.phase(info) == FORWARD and last_use_phase(module, labeller, info) == BACKWARD
    ]
    found.sort(key=lambda i: (-i.allocated_bytes, i.value.id))
    return found


def peak_drop(
    curve: Sequence[int],
    removed: Sequence[ValueInfo],
    recomputed_from: dict[int, int] | None = None,
) -> int:
    """How far the maximum of ``curve`` (logical bytes live at each step, the values'
    own shapes: :attr:`~hlotop.model.Analysis.live_bytes`) falls when the ``removed``
    values are live nowhere: the old maximum less the new one, wherever that is (the
    peak moves to another step when the values were live only around this one). With
    ``recomputed_from`` (value id -> step), each such value is live again from that
    step (where the backward pass first uses it) to the end of its range, as if
    recomputed there. 0 for an empty curve."""
    if not curve:
        return 0
    last = len(curve) - 1
    diff = [0] * (len(curve) + 1)

    def add(start: int, end: int, size: int) -> None:
        start, end = max(start, 0), min(end, last)
        if start <= end:
            diff[start] += size
            diff[end + 1] -= size

    for info in removed:
        live = info.live
        if live is None:
            continue
        add(live.start, live.end, -info.logical_bytes)
        again = (recomputed_from or {}).get(info.value.id)
        if again is not None:
            add(again, live.end, info.logical_bytes)
    change = list(accumulate(diff))
    return max(curve) - max(c + d for c, d in zip(curve, change, strict=False))


def first_backward_use(module: ModuleDump, labeller: Labeller, info: ValueInfo) -> int | None:
    """The schedule step of the first instruction of the backward pass that uses
    ``info`` (its record's uses, each at its instruction's step), or None."""
    live, used = module.live_range, info.used
    if live is None or used is None or not used.uses:
        return None
    steps = labeller.steps()
    found = [
        steps[use.instruction]
        for use in used.uses
        if use.instruction in steps
        and (user := labeller.value_named(use.instruction)) is not None
        and labeller.phase(user) == BACKWARD
    ]
    return min(found, default=None)


def left_saved(
    module: ModuleDump, labeller: Labeller, group: str, infos: Sequence[ValueInfo]
) -> dict[int, str]:
    """Of ``infos`` (saved for backward at the peak, grouped under ``group``: a scope by
    :func:`remat_group`, or a source line where they have none), those a remat of that
    group would leave live at the peak, by value id, each with why: its first backward
    use is at or before XLA's peak step (so a recomputed copy would be made before the
    peak and, read by the same later uses, live at it: this assumes the recompile keeps
    the backward pass's order, as the proof pairs do), or the backward pass of another
    scope uses it (its uses' instructions, each grouped as the values are; only where
    ``group`` and the use's are both named scopes)."""
    step = module.analysis.peak_step
    out: dict[int, str] = {}
    for info in infos:
        first = first_backward_use(module, labeller, info)
        if step is not None and first is not None and first <= step:
            out[info.value.id] = f"used by the backward pass at step {first}, by the peak"
            continue
        used = info.used
        others = set()
        named = remat_group(scope_of(labeller.origin(info)[0], True, labeller.rules)) == group
        for use in (used.uses or ()) if used is not None and named and group else ():
            user = labeller.value_named(use.instruction)
            if user is None or labeller.phase(user) != BACKWARD:
                continue
            other = remat_group(scope_of(labeller.origin(user)[0], True, labeller.rules))
            if other and other != group:
                others.add(other)
        if others:
            out[info.value.id] = "used by the backward pass of " + ", ".join(sorted(others))
    return out


def remat_group(scope: str | None) -> str:
    """The scope a value's remat advice groups it under: its scope cut one part below
    the first folded layer (``GPT/Block_*/mlp/c_fc`` -> ``GPT/Block_*/mlp``), where a
    ``jax.checkpoint`` around each layer's sub-module would go; the whole scope when it
    has no layer; ``""`` for none."""
    if not scope:
        return ""
    parts = scope.split("/")
    for i, part in enumerate(parts):
        if "*" in part:
            return "/".join(parts[: i + 2])
    return scope


def remat_advice(module: ModuleDump, labeller: Labeller) -> list[Advice]:
    """One :class:`~hlotop.model.Advice` per scope (layer indices folded, so all
    layers' ``Block_*/attn`` is one) whose values are saved for backward at XLA's peak
    (:func:`saved_for_backward`): the saving is an upper bound, those values' allocated
    bytes. Largest first. Raises nothing."""
    a = module.analysis
    by_scope: dict[str, list[ValueInfo]] = defaultdict(list)
    layers: dict[str, set[str]] = defaultdict(set)
    for info in saved_for_backward(module, labeller):
        op_name = labeller.origin(info)[0]
        scope = remat_group(scope_of(op_name, True, labeller.rules))
        # the layer it is in: the unfolded scope cut where the group is (Block_3/mlp)
        unfolded = "/".join((scope_of(op_name, False) or "").split("/")[: scope.count("/") + 1])
        if not scope:  # no named scope (plain functions): the user's source line
            scope = labeller.label(info, "source")
        by_scope[scope].append(info)
        layers[scope].add(unfolded)
    out = []
    curve = a.live_bytes
    for scope, infos in by_scope.items():
        held = sum(i.allocated_bytes for i in infos)
        left = left_saved(module, labeller, scope, infos)
        taken = [i for i in infos if i.value.id not in left]
        saving = min(sum(i.allocated_bytes for i in taken), peak_drop(curve, taken))
        again = {
            i.value.id: step
            for i in taken
            if (step := first_backward_use(module, labeller, i)) is not None
        }
        estimate = peak_drop(curve, taken, again)
        n = len(layers[scope])
        over = f" over {n} {'layers' if scope.count('*') == 1 else 'instances'}" if n > 1 else ""
        out.append(
            Advice(
                kind="remat",
                title=f"{scope}: {human_bytes(held)} saved for backward{over} at the "
                f"peak; rematerialising it lowers the peak by at most {human_bytes(saving)}",
                saving_bytes=saving,
                bound="upper_bound",
                step=a.peak_step,
                values=tuple(i.value.id for i in infos),
                groups=(scope,),
                evidence=(
                    f"recomputed where the backward pass first uses them, they would lower "
                    f"the peak by about {human_bytes(estimate)}",
                )
                + _left_out(infos, left)
                + tuple(
                    f"{i.value.name}{_index(i)} ({human_bytes(i.allocated_bytes)}): defined "
                    f"in the forward pass at step {i.live.start if i.live else '?'}, last "
                    f"used in the backward pass at step {i.live.end if i.live else '?'}"
                    for i in infos[:8]
                ),
                fix=f"wrap the code of {scope or 'the model'} in jax.checkpoint (flax: "
                "nn.remat), or save less with a checkpoint policy "
                "(jax.checkpoint_policies)",
            )
        )
    return out


def _left_out(infos: Sequence[ValueInfo], left: dict[int, str]) -> tuple[str, ...]:
    """The evidence line of the values left out of the bound, if any: how many, their
    bytes, and why (the first few)."""
    out = [i for i in infos if i.value.id in left]
    if not out:
        return ()
    size = human_bytes(sum(i.allocated_bytes for i in out))
    said = "; ".join(f"{i.value.name}{_index(i)} {left[i.value.id]}" for i in out[:4])
    more = f"; and {len(out) - 4} more" if len(out) > 4 else ""
    return (
        f"left out of the bound, {len(out)} value{'s' if len(out) > 1 else ''} ({size}) "
        "a remat of it would leave "
        f"live at the peak: {said}{more}",
    )


def _index(info: ValueInfo) -> str:
    index = info.value.shape_index
    return "{" + ",".join(map(str, index)) + "}" if index else ""
