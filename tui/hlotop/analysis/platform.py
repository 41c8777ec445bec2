"""Which backend compiled a module: from its file name, else from its layouts."""

from __future__ import annotations

import re
from collections.abc import Sequence

from hlotop.model import AllocationTable, BufferAllocation

# XLA's dump names: "<module>.cpu_after_optimizations-…", "<module>.sm_8.0_gpu_after_…"
# (GPU, with the compute capability), "<module>.cl_<N>.after_optimizations-…" (TPU's
# compile log number).
_BY_NAME = (
    ("cpu", re.compile(r"\.cpu_after_optimizations")),
    ("gpu", re.compile(r"gpu_after_optimizations|\.sm_\d|\.rocm_")),
    ("tpu", re.compile(r"\.cl_\d+\.after_optimizations|tpu", re.IGNORECASE)),
)


def platform_of(path: str, allocations: Sequence[BufferAllocation]) -> str:
    """``"tpu"``, ``"gpu"``, ``"cpu"`` or ``"unknown"`` for the module whose file is
    ``path``: by XLA's file name when it says, else ``"tpu"`` when a value's layout has
    TPU tiles (``T(8,128)``), else ``"unknown"``. Raises nothing."""
    name = path.rsplit("/", 1)[-1]
    for platform, pattern in _BY_NAME:
        if pattern.search(name):
            return platform
    shapes = AllocationTable.of(allocations).slots.shapes
    if any(":T(" in shape for shape in set(shapes)):  # a few hundred distinct
        return "tpu"
    return "unknown"
