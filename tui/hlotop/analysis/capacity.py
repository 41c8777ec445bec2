"""How far a program is from fitting its device: the device bytes it needs against a
capacity, the headroom or the excess, and the fewest values live at XLA's peak whose
bytes would cover the excess.

The need is XLA's own lower bound for running an executable
(``CompiledMemoryStats``, ``xla/pjrt/compiled_memory_stats.h``: "the memory needed to
run an executable is at least generated_code + argument + output - alias + temp"),
from the dump's ``memory_analysis()`` device sizes (on TPU, of its HBM alone); the
generated code is not in the dump, so it is left out (the need shown is a lower bound).
"""

from __future__ import annotations

from dataclasses import dataclass

from hlotop.analysis.grouping import counted_bytes
from hlotop.analysis.memory_stats import memory_stats
from hlotop.analysis.peak import live_set
from hlotop.model import ModuleDump, ValueInfo


@dataclass(frozen=True, slots=True)
class Fit:
    """A module against a capacity, in bytes."""

    capacity_bytes: int
    label: str  # what the capacity is (a device preset, a size, an OOM text's figure)
    required_bytes: int  # argument + output - alias + temp, device memory
    shed: tuple[ValueInfo, ...]  # the fewest peak values covering the excess, largest first
    shed_bytes: int  # their occupied bytes
    memory: str = "device"  # which memory is counted: "device", or "HBM" on TPU

    @property
    def headroom_bytes(self) -> int:
        """Capacity minus need; negative when over."""
        return self.capacity_bytes - self.required_bytes

    @property
    def over_bytes(self) -> int:
        return max(0, -self.headroom_bytes)

    @property
    def fits(self) -> bool:
        return self.headroom_bytes >= 0


def required_bytes(module: ModuleDump) -> int | None:
    """Argument + output - alias + temp device bytes (``memory_analysis()``'s rule), or
    None without allocations. On TPU only the default memory space (colour 0, HBM)
    counts: VMEM, SMEM and the sync flags are on-chip memories of their own, which
    ``memory_analysis()`` adds to its device figures but a device's HBM does not hold."""
    a = module.analysis
    if a.platform == "tpu":
        stats = memory_stats(
            [x for x in module.allocations if x.color == 0], module.sections.input_output_alias
        )
    else:
        stats = a.memory_stats
    if stats is None:
        return None
    return (
        stats.argument_size_in_bytes
        + stats.output_size_in_bytes
        - stats.alias_size_in_bytes
        + stats.temp_size_in_bytes
    )


def fit(module: ModuleDump, capacity_bytes: int, label: str = "") -> Fit | None:
    """``module`` against ``capacity_bytes``; when over, the fewest values live at
    XLA's peak step (not in host memory) whose occupied bytes add up to the excess,
    largest first (removing those values' bytes, or making the allocations they live in
    that much smaller, is what it would take). None without allocations."""
    need = required_bytes(module)
    if need is None:
        return None
    shed: list[ValueInfo] = []
    shed_bytes = 0
    over = need - capacity_bytes
    a = module.analysis
    if over > 0 and a.peak_step is not None:
        counted_colors = (lambda c: c == 0) if a.platform == "tpu" else (lambda c: c != 5)
        values = [i for i in live_set(a.values, a.peak_step) if counted_colors(i.color)]
        counted = counted_bytes(values, "occupied")
        for info in sorted(values, key=lambda i: -counted[i.value.id]):
            if shed_bytes >= over or not counted[info.value.id]:
                break
            shed.append(info)
            shed_bytes += counted[info.value.id]
    memory = "HBM" if a.platform == "tpu" else "device"
    return Fit(capacity_bytes, label, need, tuple(shed), shed_bytes, memory)
