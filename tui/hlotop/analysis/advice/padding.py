"""Padding advice in the advice list: the values live at XLA's peak whose TPU tiling
pads their slots most (:mod:`hlotop.analysis.padding_advice` says which dimension pads
and to what)."""

from __future__ import annotations

from hlotop.analysis.padding_advice import most_padded_advice
from hlotop.model import Advice, ModuleDump
from hlotop.units import human_bytes

LISTED = 10  # padded values listed at most


def padding_advice(module: ModuleDump) -> list[Advice]:
    """One :class:`~hlotop.model.Advice` per value live at XLA's peak step with tiling
    padding, at most :data:`LISTED`, most padding first: the saving is its padding
    bytes (slot size minus logical size), an upper bound on what a shape aligned to the
    tile, or a smaller one, gives back. [] without a peak or padding. Raises nothing."""
    a = module.analysis
    if a.peak_step is None:
        return []
    out = []
    for advice in most_padded_advice(a.peak_values, LISTED):
        if advice.value_id is None or advice.padding_bytes <= 0:
            continue
        reasons = tuple(cause.reason for cause in advice.causes)
        out.append(
            Advice(
                kind="padding",
                title=f"{advice.label}: {human_bytes(advice.padding_bytes)} of tiling "
                f"padding ({advice.shape} takes {human_bytes(advice.allocated_bytes)} for "
                f"{human_bytes(advice.logical_bytes)})",
                saving_bytes=advice.padding_bytes,
                bound="upper_bound",
                step=a.peak_step,
                values=(advice.value_id,),
                groups=(advice.tiling,),
                evidence=reasons
                or (f"its slot is {advice.allocated_bytes} bytes under {advice.tiling}",),
                fix=f"pad or reshape so the tiled dimensions are multiples of the tile "
                f"({advice.tiling}): e.g. {advice.aligned_shape} fills the same slot",
            )
        )
    return out
