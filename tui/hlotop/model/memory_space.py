"""Memory spaces (XLA "colors"): their names and the one colour each has in every view.

``color N`` on an allocation, ``@N`` on a value and ``S(N)`` in a layout all name the
same memory space. 0 is the default space (HBM on TPU and GPU); on TPU, 1 VMEM, 2 SMEM (sync flags); 5 is host memory
(``Layout::kHostMemorySpace``) and 6 unpinned host. The 2026 memory-usage report
prints its own names; when a dump has them, :func:`space_names` prefers those.

Styles are Rich colour names from the 16-colour palette, so they stay distinct on a
16-colour terminal and degrade to plain text under ``NO_COLOR``, where the space's
short tag (``HBM``, ``S(1)``) still says which is which.
"""

from __future__ import annotations

from collections.abc import Mapping

_NAMES = {0: "default", 1: "VMEM", 2: "SMEM", 5: "host", 6: "host-unpinned"}
_STYLES = {
    0: "blue",
    1: "green",
    2: "magenta",
    3: "cyan",
    4: "yellow",
    5: "yellow",
    6: "bright_yellow",
}
_FALLBACK_STYLES = ("red", "bright_cyan", "bright_magenta", "bright_green")


def space_name(color: int, names: Mapping[int, str] | None = None) -> str:
    """A short name for memory space ``color``: ``0`` -> ``"default"`` (HBM), ``1`` -> ``"VMEM"``,
    unknown ``7`` -> ``"S(7)"``. ``names`` (from the dump's own report) win."""
    if names and color in names:
        return names[color]
    return _NAMES.get(color, f"S({color})")


def space_tag(color: int) -> str:
    """How XLA writes the space in a layout: ``""`` for 0, else ``"S(n)"``."""
    return f"S({color})" if color else ""


def space_style(color: int) -> str:
    """The Rich style (a colour name) of memory space ``color``; stable per colour."""
    if color in _STYLES:
        return _STYLES[color]
    return _FALLBACK_STYLES[color % len(_FALLBACK_STYLES)]


def space_names(report) -> dict[int, str]:
    """Names the dump's memory-usage report (era B) gives each colour, e.g. {1: "vmem"};
    empty for other reports or None."""
    if report is None:
        return {}
    return {s.color: s.name for s in report.memory_spaces}
