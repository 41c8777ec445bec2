"""Memory spaces (XLA "colors"): what each is called, and the one colour each has in
every view.

``color N`` on an allocation, ``@N`` on a value and ``S(N)`` in a layout all name the
same memory space. The names come from XLA's own constants, by platform:

* every backend: 0 ``Layout::kDefaultMemorySpace`` and 5 ``Layout::kHostMemorySpace``
  (``xla/layout.h``). 0 is the device's main memory: HBM on TPU and GPU. 5 is host
  memory: JAX's ``memory_analysis()`` counts it in its ``host_*`` figures
  (``CompiledMemoryStats::PopulateBufferStatsFromAllocations``,
  ``xla/pjrt/compiled_memory_stats.cc``).
* TPU: 1 ``Layout::kGenericFastMemorySpace``, the core's VMEM (``xla/layout.h``); 2 the
  scalar memory (SMEM) that ``u32[]{:S(2)}`` flags live in; 4 the ``s32[2]{0:S(4)}``
  sync flags of async collectives. libtpu is closed source: 2 and 4 are named by what
  the dumps hold there, not by a public constant.
* GPU: 1 ``kCollectiveMemorySpaceColor`` (NCCL user buffers of collectives) and 2
  ``kTempBufferMemorySpaceColor`` (``xla/service/gpu/gpu_memory_space_assignment.h``).

The 2026 memory-usage report prints a name of its own for each colour (0 default,
1 vmem, 2 smem, 3 hbm, 4 host, 5 cmem): on TPU its ``host`` is the sync flags and its
``cmem`` the host memory. hlotop shows that label beside XLA's name, never instead.

Styles are Rich colour names from the 16-colour palette, so they stay distinct on a
16-colour terminal and degrade to plain text under ``NO_COLOR``, where the space's
short tag (``HBM``, ``S(1)``) still says which is which.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PLATFORMS = ("tpu", "gpu", "cpu", "unknown")

HOST_MEMORY_SPACE = 5  # Layout::kHostMemorySpace, xla/layout.h

_COMMON = {0: "default", HOST_MEMORY_SPACE: "host"}
_BY_PLATFORM: dict[str, dict[int, str]] = {
    "tpu": {0: "HBM", 1: "VMEM", 2: "SMEM", 4: "sync flags"},
    "gpu": {0: "HBM", 1: "collective", 2: "temp"},
}
_STYLES = {
    0: "blue",
    1: "green",
    2: "magenta",
    3: "cyan",
    4: "bright_red",
    5: "yellow",
    6: "bright_yellow",
}
_FALLBACK_STYLES = ("red", "bright_cyan", "bright_magenta", "bright_green")


def xla_space_name(color: int, platform: str = "unknown") -> str:
    """XLA's name for memory space ``color`` on ``platform`` (one of :data:`PLATFORMS`):
    ``(1, "tpu")`` -> ``"VMEM"``, ``(5, any)`` -> ``"host"``, a colour XLA names nowhere
    -> ``"S(7)"``. Raises nothing."""
    own = _BY_PLATFORM.get(platform, {})
    if color in own:
        return own[color]
    return _COMMON.get(color, f"S({color})")


def space_name(color: int, names: Mapping[int, str] | None = None) -> str:
    """The name of memory space ``color`` in a module: its entry in ``names`` (from
    :func:`space_names`), else the platform-free name (``"default"``, ``"host"``,
    ``"S(7)"``)."""
    if names and color in names:
        return names[color]
    return xla_space_name(color)


def space_names(module: Any) -> dict[int, str]:
    """XLA's name for each memory space of a :class:`~hlotop.model.ModuleDump` (by its
    platform), ``{color: name}``; ``{}`` for None."""
    if module is None:
        return {}
    return {s.color: s.name for s in module.analysis.memory_spaces}


def space_tag(color: int) -> str:
    """How XLA writes the space in a layout: ``""`` for 0, else ``"S(n)"``."""
    return f"S({color})" if color else ""


def space_style(color: int) -> str:
    """The Rich style (a colour name) of memory space ``color``; stable per colour."""
    if color in _STYLES:
        return _STYLES[color]
    return _FALLBACK_STYLES[color % len(_FALLBACK_STYLES)]


def report_space_names(report: Any) -> dict[int, str]:
    """The label the dump's memory-usage report (era B) gives each colour, e.g.
    ``{1: "vmem", 5: "cmem"}``; empty for other reports or None."""
    if report is None:
        return {}
    return {s.color: s.name for s in report.memory_spaces}
