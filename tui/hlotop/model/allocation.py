"""Allocations (``BufferAllocation::ToString``) and their kinds, in XLA's terms."""

from __future__ import annotations

from dataclasses import dataclass

from hlotop.model.values import HloValue, ShapeIndex, ValueSlot

# Allocation kinds, named as XLA's BufferAllocation::ToShortString prints them.
KIND_PARAMETER = "parameter"
KIND_OUTPUT = "output"
KIND_CONSTANT = "constant"
KIND_THREAD_LOCAL = "thread-local"
KIND_MAYBE_LIVE_OUT = "maybe-live-out"
KIND_PREALLOCATED_TEMP = "preallocated-temp"
ALLOCATION_KINDS = (
    KIND_PARAMETER,
    KIND_OUTPUT,
    KIND_CONSTANT,
    KIND_THREAD_LOCAL,
    KIND_MAYBE_LIVE_OUT,
    KIND_PREALLOCATED_TEMP,
)


@dataclass(slots=True, unsafe_hash=True)
class BufferAllocation:
    """One ``allocation N: size S, ...:`` block (``BufferAllocation::ToString``)."""

    index: int
    size: int
    color: int = 0
    parameter: int | None = None
    parameter_shape: str | None = None  # without layout; "<unknown shape>" possible
    parameter_shape_index: ShapeIndex | None = None
    output_shape: str | None = None
    is_constant: bool = False
    is_thread_local: bool = False
    maybe_live_out: bool = False
    is_preallocated_temp: bool = False
    pointer: str | None = None  # pre-2022 dumps print the allocation's address
    values: tuple[ValueSlot, ...] = ()
    reused_by: tuple[tuple[HloValue, int], ...] = ()  # (value, its color), since 2026-06
    line: int = 0

    @property
    def kinds(self) -> tuple[str, ...]:
        """The allocation's kinds in XLA's attribute order."""
        out = []
        if self.parameter is not None:
            out.append(KIND_PARAMETER)
        if self.output_shape is not None:
            out.append(KIND_OUTPUT)
        if self.is_constant:
            out.append(KIND_CONSTANT)
        if self.is_thread_local:
            out.append(KIND_THREAD_LOCAL)
        if self.maybe_live_out:
            out.append(KIND_MAYBE_LIVE_OUT)
        if self.is_preallocated_temp:
            out.append(KIND_PREALLOCATED_TEMP)
        return tuple(out)
