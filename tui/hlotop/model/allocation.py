"""Allocations (``BufferAllocation::ToString``) and their kinds, in XLA's terms."""

from __future__ import annotations

from dataclasses import dataclass, field

from hlotop.model.values import HloValue, ShapeIndex, ValueSlot, format_shape_index

# Allocation kinds, named as XLA's BufferAllocation::ToShortString prints them.
KIND_PARAMETER = "parameter"
KIND_OUTPUT = "output"
KIND_CONSTANT = "constant"
KIND_THREAD_LOCAL = "thread-local"
KIND_MAYBE_LIVE_OUT = "maybe-live-out"
KIND_PREALLOCATED_TEMP = "preallocated-temp"
# Each kind, in XLA's attribute order, with the BufferAllocation field that says it
# (the allocation has the kind when the field is neither None nor False).
KIND_FIELDS = (
    (KIND_PARAMETER, "parameter"),
    (KIND_OUTPUT, "output_shape"),
    (KIND_CONSTANT, "is_constant"),
    (KIND_THREAD_LOCAL, "is_thread_local"),
    (KIND_MAYBE_LIVE_OUT, "maybe_live_out"),
    (KIND_PREALLOCATED_TEMP, "is_preallocated_temp"),
)
ALLOCATION_KINDS = tuple(kind for kind, _ in KIND_FIELDS)


def has_kind(field_value: object) -> bool:
    """Whether a :data:`KIND_FIELDS` field's value gives the kind (parameter 0 does)."""
    return field_value is not None and field_value is not False


# Whether an allocation has each kind (KIND_FIELDS' order) -> its kinds.
_KINDS_OF: dict[tuple[bool, ...], tuple[str, ...]] = {}


@dataclass(slots=True, unsafe_hash=True)
class BufferAllocation:
    """One ``allocation N: size S, ...:`` block (``BufferAllocation::ToString``)."""

    index: int
    size: int
    # ``page N`` (jax >= 0.11's XLA): BufferAllocation::page_id, the page of a multi-page
    # buffer assignment (a module config's page_size_kib; 0 with one page); None: unprinted
    page: int | None = None
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
    # Where it was read (1-based; 0: not known, or not yet: AllocationLines): not part of
    # what the allocation is, so two reads of it compare (and hash) equal.
    line: int = field(default=0, compare=False)

    @property
    def kinds(self) -> tuple[str, ...]:
        """The allocation's kinds in XLA's attribute order."""
        # has_kind of each KIND_FIELDS field, written out: --json and the tree ask it of
        # every allocation (10^5), and a dump has a handful of combinations.
        has = (
            self.parameter is not None,
            self.output_shape is not None,
            self.is_constant is not False,
            self.is_thread_local is not False,
            self.maybe_live_out is not False,
            self.is_preallocated_temp is not False,
        )
        kinds = _KINDS_OF.get(has)
        if kinds is None:
            kinds = _KINDS_OF[has] = tuple(
                k for (k, _), yes in zip(KIND_FIELDS, has, strict=True) if yes
            )
        return kinds


def kinds_text(alloc: BufferAllocation) -> str:
    """``"parameter 4, maybe-live-out"``: the allocation's kinds in XLA's order, with the
    parameter number (and its ShapeIndex when it is not ``{}``)."""
    out = []
    for kind in alloc.kinds:
        if kind == "parameter":
            idx = format_shape_index(alloc.parameter_shape_index)
            out.append(
                f"parameter {alloc.parameter}" + (f" {idx}" if idx not in ("", "{}") else "")
            )
        else:
            out.append(kind)
    return ", ".join(out)
