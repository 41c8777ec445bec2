"""How far a program is from fitting its device: the device bytes it needs against a
capacity, the headroom or the excess, and the fewest values live at XLA's peak whose
bytes would cover the excess.

The need is XLA's own lower bound for running an executable
(``CompiledMemoryStats``, ``xla/pjrt/compiled_memory_stats.h``: "the memory needed to
run an executable is at least generated_code + argument + output - alias + temp"),
from the dump's ``memory_analysis()`` device sizes (on TPU, of its HBM alone); the
generated code is not in the dump, so it is left out (the need shown is a lower bound).

Which temp: off TPU, ``memory_analysis()``'s ``temp_size_in_bytes`` as XLA works it out
from the allocations (every memory space but host memory). On TPU, the temp of HBM
alone (colour 0, XLA's default memory space): the dump's other device memory spaces
(VMEM, colour 1, the TensorCore's on-chip vector memory; SMEM, colour 2; the sync
flags and colour 6) hold preallocated temp allocations too, which the dump's
``memory_analysis()`` temp counts but a chip's HBM does not hold. On the v5e GPT scan
sample that is 53.17 MiB of VMEM in a 54.67 MiB temp, leaving 1.50 MiB of HBM. libtpu's
own ``temp_size_in_bytes`` (``memory_analysis.json`` beside the TPU samples) is neither:
0 on 8 of the 12 samples, 0.8 to 1.6 MB above the HBM temp on the other 4; it comes from
libtpu's metadata, not the dump, so hlotop cannot give it.
"""

from __future__ import annotations

from dataclasses import dataclass

from hlotop.analysis.grouping import counted_bytes
from hlotop.analysis.memory_stats import is_host, is_preallocated_temp, memory_stats
from hlotop.analysis.peak import live_set
from hlotop.model import ModuleDump, ValueInfo
from hlotop.model.memory_space import xla_space_name


@dataclass(frozen=True, slots=True)
class Need:
    """What a module needs on its device, in bytes (see the module's docstring)."""

    bytes: int  # argument + output - alias + temp, of ``memory``
    memory: str  # which memory is counted: "device", or "HBM" on TPU
    temp_bytes: int  # the temp in ``bytes``
    # On TPU: the preallocated temp of each other device memory space (XLA's name,
    # bytes), which memory_analysis()'s temp counts and the need leaves out; else ().
    temp_left_out: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class Fit:
    """A module against a capacity, in bytes."""

    capacity_bytes: int
    label: str  # what the capacity is (a device preset, a size, an OOM text's figure)
    required_bytes: int  # argument + output - alias + temp, device memory
    shed: tuple[ValueInfo, ...]  # the fewest peak values covering the excess, largest first
    shed_bytes: int  # their occupied bytes
    memory: str = "device"  # which memory is counted: "device", or "HBM" on TPU
    temp_bytes: int = 0  # the temp in required_bytes (Need.temp_bytes)
    temp_left_out: tuple[tuple[str, int], ...] = ()  # Need.temp_left_out

    @property
    def temp_left_out_bytes(self) -> int:
        """The temp of the memory spaces the need leaves out (on TPU), added up."""
        return sum(size for _, size in self.temp_left_out)

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


def need_of(module: ModuleDump) -> Need | None:
    """Argument + output - alias + temp device bytes (``memory_analysis()``'s rule),
    which temp, and on TPU the temp of the memory spaces left out; None without
    allocations. On TPU only the default memory space (colour 0, HBM) counts: VMEM,
    SMEM and the sync flags are memories of their own on the chip, which
    ``memory_analysis()`` adds to its device figures but a device's HBM does not hold."""
    a = module.analysis
    left_out: dict[int, int] = {}  # colour -> bytes
    if a.platform == "tpu":
        stats = memory_stats(
            [x for x in module.allocations if x.color == 0], module.sections.input_output_alias
        )
        for x in module.allocations:
            if x.color != 0 and not is_host(x) and is_preallocated_temp(x):
                left_out[x.color] = left_out.get(x.color, 0) + x.size
    else:
        stats = a.memory_stats
    if stats is None:
        return None
    need = (
        stats.argument_size_in_bytes
        + stats.output_size_in_bytes
        - stats.alias_size_in_bytes
        + stats.temp_size_in_bytes
    )
    memory = "HBM" if a.platform == "tpu" else "device"
    spaces = tuple((xla_space_name(c, "tpu"), left_out[c]) for c in sorted(left_out))
    return Need(need, memory, stats.temp_size_in_bytes, spaces)


def required_bytes(module: ModuleDump) -> int | None:
    """:func:`need_of`'s bytes: argument + output - alias + temp, on TPU of HBM alone;
    None without allocations."""
    need = need_of(module)
    return None if need is None else need.bytes


def fit(module: ModuleDump, capacity_bytes: int, label: str = "") -> Fit | None:
    """``module`` against ``capacity_bytes``; when over, the fewest values live at
    XLA's peak step (not in host memory) whose occupied bytes add up to the excess,
    largest first (removing those values' bytes, or making the allocations they live in
    that much smaller, is what it would take). None without allocations."""
    found = need_of(module)
    if found is None:
        return None
    shed: list[ValueInfo] = []
    shed_bytes = 0
    over = found.bytes - capacity_bytes
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
    return Fit(
        capacity_bytes,
        label,
        found.bytes,
        tuple(shed),
        shed_bytes,
        found.memory,
        found.temp_bytes,
        found.temp_left_out,
    )
