"""A memory space's label, the same in every pane, the legend and the reports' columns
(how it is drawn, its colour and fill, is :mod:`hlotop.ui.widgets.legend`'s)."""

from __future__ import annotations

from collections.abc import Mapping

from hlotop.model.memory_space import space_name, space_tag


def space_label(color: int, names: Mapping[int, str] | None = None) -> str:
    """``"default"`` for space 0, ``"S(1) VMEM"`` for 1, ``"S(7)"`` for an unnamed 7
    (``names``: the dump's space names, :func:`hlotop.model.memory_space.space_names`)."""
    tag = space_tag(color)
    name = space_name(color, names)
    return name if not tag or name == tag else f"{tag} {name}"
